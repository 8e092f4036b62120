"""The time a command may take, and where it went.

A `Deadline` is the whole command's time budget (`--time-budget`): every subprocess a
verification starts (nvcc, the reference, a candidate's run) gets a time limit no later
than the deadline, a wait for the GPU gives up at it, and the search starts no new
candidate after it. So the budget is a hard limit, not a hint checked between candidates.

A `Breakdown` adds up where the time went (reference, compile, run, wait, ...). A phase
nested in another is counted once, in the inner phase: the wait for the GPU inside a
reference timing is wait, not reference. Each thread keeps its own nesting. Work done
ahead on other threads (`quiet`) is not counted: the command's thread counts its wait for
that work when it takes the result."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator

Clock = Callable[[], float]


class OutOfTime(Exception):
    """The deadline passed before (or while) a piece of work could be done."""


def process_age() -> float:
    """Seconds since this process began (its interpreter's start and imports included), from
    the kernel's record of it; 0.0 where the system keeps none (not Linux)."""
    try:
        with open("/proc/self/stat", encoding="ascii") as stat:
            # the fields after the command's name, which may itself hold spaces and ')'
            fields = stat.read().rsplit(")", 1)[1].split()
        began = int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22: starttime, in ticks
        return max(0.0, time.clock_gettime(time.CLOCK_BOOTTIME) - began)
    except (OSError, ValueError, IndexError, AttributeError):
        return 0.0


class Deadline:
    """`seconds` from now on `clock` (None or 0: no limit), or from `started` (an instant
    on `clock`, earlier: a command's budget counts from its process's start)."""

    def __init__(
        self, seconds: float | None, clock: Clock = time.monotonic, started: float | None = None
    ):
        self.clock = clock
        self.seconds = seconds if seconds and seconds > 0 else None
        self.started = clock() if started is None else started
        self._budget: float | None = None  # a `sooner` deadline's: the whole budget

    @property
    def limited(self) -> bool:
        return self.seconds is not None

    def elapsed(self) -> float:
        return self.clock() - self.started

    def remaining(self) -> float | None:
        """Seconds left (never negative), None without a limit."""
        if self.seconds is None:
            return None
        return max(0.0, self.seconds - self.elapsed())

    @property
    def expired(self) -> bool:
        remaining = self.remaining()
        return remaining is not None and remaining <= 0.0

    def allows(self, seconds: float) -> bool:
        """Whether work expected to take `seconds` still fits."""
        remaining = self.remaining()
        return remaining is None or seconds < remaining

    def clamp(self, timeout: float) -> float:
        """`timeout`, cut to the time left; raises OutOfTime when none is."""
        remaining = self.remaining()
        if remaining is None:
            return timeout
        if remaining <= 0.0:
            raise OutOfTime(self.message())
        return min(timeout, remaining)

    def check(self) -> None:
        if self.expired:
            raise OutOfTime(self.message())

    def message(self) -> str:
        return f"the time budget of {self._budget or self.seconds:g} s is spent"

    def sooner(self, seconds: float) -> Deadline:
        """This deadline `seconds` earlier, on the same clock (the time after it is kept
        for later work); itself when it has no limit."""
        if self.seconds is None or seconds <= 0:
            return self
        early = Deadline(None, self.clock)
        early.seconds, early.started = max(1e-9, self.seconds - seconds), self.started
        early._budget = self._budget or self.seconds
        return early


UNLIMITED = Deadline(None)


class Breakdown:
    """Seconds per kind of work, each counted once (see the module's docstring)."""

    def __init__(self, clock: Clock = time.perf_counter):
        self.clock = clock
        self.seconds: dict[str, float] = {}
        self._guard = threading.Lock()
        self._local = threading.local()

    @contextlib.contextmanager
    def quiet(self) -> Iterator[None]:
        """This thread's phases are not counted while it lasts."""
        before = getattr(self._local, "quiet", False)
        self._local.quiet = True
        try:
            yield
        finally:
            self._local.quiet = before

    @contextlib.contextmanager
    def measure(self, kind: str) -> Iterator[None]:
        if getattr(self._local, "quiet", False):
            yield
            return
        stack: list[float] = self._stack()
        began = self.clock()
        stack.append(0.0)  # time of the phases nested in this one
        try:
            yield
        finally:
            nested = stack.pop()
            elapsed = self.clock() - began
            self.add(kind, elapsed - nested)
            if stack:
                stack[-1] += elapsed

    def add(self, kind: str, seconds: float) -> None:
        with self._guard:
            self.seconds[kind] = self.seconds.get(kind, 0.0) + seconds

    def get(self, kind: str) -> float:
        with self._guard:
            return self.seconds.get(kind, 0.0)

    def _stack(self) -> list[float]:
        stack = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
        return stack


__all__ = ["Breakdown", "Deadline", "OutOfTime", "UNLIMITED"]
