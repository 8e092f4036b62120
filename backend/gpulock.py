"""One GPU, shared by correctness runs and language models, exclusive for timings, and
handed out in the order it was asked for.

`make -j16`, `cudaify bench -j N` and `cudaify graph build --jobs N` verify programs in
parallel processes. Compiles may overlap freely. Runs on a GPU take one of two kinds of
hold, one queue per GPU in the cache folder:

- shared (`with lock.shared():`): a search candidate's correctness run (whose one-run time
  only ranks candidates for the finalists) and a local model's generation. Any number of
  shared holders run side by side: H100-class GPUs time-slice between processes, so
  candidates of 16 programs are checked at once instead of in one queue.
- exclusive (`with lock:`): every timing that gets reported (the reference's, a
  finalist's, the bandwidth probe, ncu replays). Nothing else runs on the GPU meanwhile.

Fairness: every hold takes a ticket, a file in the queue folder named by the time it
asked (CLOCK_MONOTONIC, one clock for every process of the machine), and keeps it until it
releases. An exclusive ticket is served when no earlier ticket is left; a shared one when
no earlier *exclusive* ticket is left. So holds are served first come, first served: a
process that releases and asks again queues behind everyone who asked meanwhile (flock
alone let one process re-take the GPU for minutes under `make -j16`), a stream of shared
holds cannot starve a timing, and a timing waits only for the holds asked before it.

A ticket is `flock`ed by its owner while it lives (it is locked before it is put in the
queue): a ticket nobody holds a lock on belongs to a process that died, and the next
waiter removes it, so a killed cudaify never leaves a GPU locked.

Each thread takes its own hold, and a thread may nest holds: shared inside exclusive is a
no-op, exclusive inside shared is a bug (two such threads would wait on each other
forever) and raises. A wait can have a limit (`acquire(timeout=...)`: TimeoutError), and
one that lasts longer than WAIT_NOTICE seconds is said on the log, with the holds ahead."""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

log = logging.getLogger("cudaify")

POLL = 0.005  # seconds between looks at the queue
LIVENESS_EVERY = 1.0  # seconds between checks for tickets of dead processes
WAIT_NOTICE = 2.0  # a wait longer than this is said, at most every NOTICE_EVERY seconds
NOTICE_EVERY = 30.0


def gpu_index() -> str:
    """The GPU this process runs on: the first of CUDA_VISIBLE_DEVICES (an index or a
    UUID), else 0, the CUDA runtime's default device."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip()
    return visible or "0"


def lock_path(cache_root: Path, gpu: str | None = None) -> Path:
    name = re.sub(r"[^\w.-]", "_", gpu if gpu is not None else gpu_index())
    return cache_root / "locks" / f"gpu-{name}.lock"


@dataclass(frozen=True)
class Ticket:
    """A place in the queue: when it was asked for, and for which use."""

    name: str
    asked: int  # monotonic nanoseconds
    exclusive: bool
    pid: int

    @classmethod
    def parse(cls, name: str) -> Ticket | None:
        parts = name.split(".")
        if len(parts) != 4 or parts[1] not in ("x", "s"):
            return None  # a ticket being made (a dot file), or something else
        try:
            return cls(name, int(parts[0]), parts[1] == "x", int(parts[2]))
        except ValueError:
            return None

    def ahead_of(self, other: Ticket) -> bool:
        return (self.asked, self.name) < (other.asked, other.name)


class GpuLock:
    """Shared or exclusive use of one GPU by this thread (see the module's docstring).
    `with lock:` is exclusive use; `with lock.shared():` is shared use."""

    def __init__(self, path: Path, clock: Callable[[], int] = time.monotonic_ns):
        self.path = path
        self.queue = path.with_name(path.name + ".queue")
        self.clock = clock
        self._held = threading.local()  # depth, exclusive, ticket, handle: this thread's hold
        self._noticed = 0.0  # when a wait was last said

    def __enter__(self) -> GpuLock:
        self.acquire(exclusive=True)
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    @contextlib.contextmanager
    def shared(self) -> Iterator[GpuLock]:
        self.acquire(exclusive=False)
        try:
            yield self
        finally:
            self.release()

    @property
    def held(self) -> str | None:
        """'exclusive', 'shared' or None: what this thread holds."""
        if not getattr(self._held, "depth", 0):
            return None
        return "exclusive" if self._held.exclusive else "shared"

    def acquire(self, exclusive: bool, timeout: float | None = None) -> None:
        """Take a hold, waiting for the holds asked before it (at most `timeout` seconds:
        then TimeoutError, and this thread's place in the queue is given up)."""
        held = self._held
        if getattr(held, "depth", 0):
            if exclusive and not held.exclusive:
                raise RuntimeError(
                    f"{self.path}: exclusive use of the GPU asked for while this thread "
                    "holds shared use (take the exclusive hold first)"
                )
            held.depth += 1
            return
        ticket, handle = self._take_ticket(exclusive)
        try:
            self._wait_for_turn(ticket, timeout)
        except BaseException:
            self._drop(ticket, handle)
            raise
        held.ticket, held.handle = ticket, handle
        held.exclusive = exclusive
        held.depth = 1

    def release(self) -> None:
        held = self._held
        held.depth -= 1
        if held.depth <= 0:  # below 0 only after a `make_way` whose new wait was interrupted
            if held.ticket is not None:
                self._drop(held.ticket, held.handle)
            held.ticket = held.handle = None
            held.depth = 0

    def make_way(self) -> bool:
        """For a long shared hold (a model's generation, 5-60 s): where a timing asked for
        the GPU after this hold began, give the place up and queue again behind it, so
        the timing waits for one token, not the whole answer (with generations holding the
        GPU for 15-20 s under `bench -j 8`, every timing waited for them, and the shared
        holds asked meanwhile waited behind those timings: searches got 1-3 candidates
        in 30 s). Returns whether it made way. Only this thread's outermost shared hold
        may; any other hold is left as it is."""
        held = self._held
        if getattr(held, "depth", 0) != 1 or held.exclusive:
            return False
        mine = held.ticket
        if not any(other.exclusive and mine.ahead_of(other) for other in self._tickets()):
            return False
        self._drop(held.ticket, held.handle)
        held.depth = 0
        held.ticket = held.handle = None
        self.acquire(exclusive=False)
        return True

    def users(self) -> int:
        """The processes with a hold on this GPU now, held or asked for, this one counted
        once whatever its threads hold: how many programs share the GPU at this moment."""
        try:
            tickets = self._tickets()
        except FileNotFoundError:
            return 1
        return len({os.getpid()} | {t.pid for t in tickets})

    # -- the queue ---------------------------------------------------------------------

    def _tickets(self) -> list[Ticket]:
        """Every ticket in the queue now (tickets being made are not yet in it)."""
        return [t for t in map(Ticket.parse, os.listdir(self.queue)) if t is not None]

    def _take_ticket(self, exclusive: bool) -> tuple[Ticket, IO[bytes]]:
        """A ticket, locked by this thread before anyone can see it."""
        self.queue.mkdir(parents=True, exist_ok=True)
        self.path.touch(exist_ok=True)  # where the lock is, for whoever looks
        name = f"{self.clock():020d}.{'x' if exclusive else 's'}.{os.getpid()}.{uuid.uuid4().hex}"
        staged = self.queue / f".{name}"
        handle = open(staged, "wb")  # noqa: SIM115 - held for as long as the ticket lives
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        os.replace(staged, self.queue / name)
        ticket = Ticket.parse(name)
        assert ticket is not None
        return ticket, handle

    def _drop(self, ticket: Ticket, handle: IO[bytes]) -> None:
        with contextlib.suppress(FileNotFoundError):
            (self.queue / ticket.name).unlink()
        handle.close()

    def _ahead(self, ticket: Ticket) -> list[Ticket]:
        """The tickets this one waits for: every earlier one for an exclusive hold, the
        earlier exclusive ones for a shared hold."""
        return [
            other
            for other in self._tickets()
            if other.name != ticket.name
            and other.ahead_of(ticket)
            and (ticket.exclusive or other.exclusive)
        ]

    def _wait_for_turn(self, ticket: Ticket, timeout: float | None) -> None:
        began = time.monotonic()
        checked = began
        while True:
            ahead = self._ahead(ticket)
            if not ahead:
                return
            now = time.monotonic()
            if timeout is not None and now - began >= timeout:
                raise TimeoutError(f"the GPU was not free within {timeout:.1f} s")
            if now - checked >= LIVENESS_EVERY:
                checked = now
                self._remove_dead(ahead)
            if now - began >= WAIT_NOTICE:
                self._notice(ahead, now - began)
            time.sleep(POLL)

    def _remove_dead(self, tickets: list[Ticket]) -> None:
        """Remove the tickets nobody holds a lock on: their owners died."""
        for ticket in tickets:
            path = self.queue / ticket.name
            try:
                probe = open(path, "rb")  # noqa: SIM115
            except FileNotFoundError:
                continue
            with probe:
                try:
                    fcntl.flock(probe.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue  # alive
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()

    def _notice(self, ahead: list[Ticket], waited: float) -> None:
        now = time.monotonic()
        if self._noticed and now - self._noticed < NOTICE_EVERY:
            return
        self._noticed = now
        timings = sum(1 for t in ahead if t.exclusive)
        processes = len({t.pid for t in ahead})
        log.warning(
            "waiting for the GPU (%.0f s so far): %d hold(s) ahead, %d of them timings, "
            "from %d process(es)",
            waited,
            len(ahead),
            timings,
            processes,
        )


_SHARED: dict[Path, GpuLock] = {}
_SHARED_GUARD = threading.Lock()


def _forget_after_fork() -> None:
    # A forked worker starts with no lock held: the parent's state (and open files) is not
    # its, and the guard may have been held by a thread that does not exist in the child.
    global _SHARED_GUARD
    _SHARED_GUARD = threading.Lock()
    _SHARED.clear()


os.register_at_fork(after_in_child=_forget_after_fork)


def gpu_lock(cache_root: Path, gpu: str | None = None) -> GpuLock:
    """The lock of `gpu` (default: this process's GPU) under `cache_root`. One object per
    lock file in a process, so that a thread's nested holds are seen as nested."""
    path = lock_path(cache_root, gpu).absolute()
    with _SHARED_GUARD:
        if path not in _SHARED:
            _SHARED[path] = GpuLock(path)
        return _SHARED[path]


__all__ = ["GpuLock", "Ticket", "gpu_index", "gpu_lock", "lock_path"]
