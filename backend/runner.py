"""Running a built program the way a candidate deserves: in a fresh temporary folder that
is deleted afterwards, with a time limit, capped output, resource limits, a clean
environment and no stdin. A candidate that hangs, crashes or floods stdout is a failed
candidate, reported as such; it never takes cudaify down with it."""

from __future__ import annotations

import os
import signal as signals
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cudaify.core import Problem, toolchain

MIN_TIME_LIMIT = 10.0
TIME_LIMIT_FACTOR = 10.0
OUTPUT_CAP = 16 * 1024 * 1024  # a program printing more than this is a failed candidate
FILE_SIZE_LIMIT = 1 << 30  # files the program writes in its temporary folder
# Host programs get an address-space limit; CUDA programs cannot: the CUDA driver reserves
# a virtual range as large as host plus device memory at start-up, far past any useful cap.
HOST_MEMORY_LIMIT = 16 << 30


@dataclass(frozen=True)
class RunResult:
    stdout: str
    exit_code: int | None  # None when killed by a signal
    signal: int | None
    timed_out: bool
    truncated: bool
    seconds: float
    stderr: str = ""

    @property
    def signal_name(self) -> str | None:
        if self.signal is None:
            return None
        try:
            return signals.Signals(self.signal).name
        except ValueError:
            return f"signal {self.signal}"

    @property
    def finished(self) -> bool:
        """It ran to its own end (any exit code), within the limits."""
        return self.exit_code is not None and not self.timed_out and not self.truncated

    def problem(self, time_limit: float | None = None) -> Problem | None:
        """Why this run cannot be compared with the reference, or None when it can."""
        if self.timed_out:
            limit = f" of {time_limit:g} s" if time_limit else ""
            return Problem("timeout", f"killed at the time limit{limit}")
        if self.truncated:
            return Problem(
                "output_cap", f"printed more than {OUTPUT_CAP // (1024 * 1024)} MiB; killed"
            )
        if self.signal is not None:
            return Problem("crash", f"killed by {self.signal_name}{_stderr_hint(self.stderr)}")
        return None


def _stderr_hint(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    return f" ({lines[0][:200]})" if lines else ""


def time_limit(reference_seconds: float | None, configured: float | None = None) -> float:
    """The configured limit, else 10x the reference's time, at least 10 s."""
    if configured:
        return configured
    return max(MIN_TIME_LIMIT, TIME_LIMIT_FACTOR * (reference_seconds or 0.0))


def run_binary(
    binary: Path,
    *,
    timeout: float,
    cuda: bool = False,
    env: dict[str, str] | None = None,
    output_cap: int = OUTPUT_CAP,
    workdir: Path | None = None,
    cancel: threading.Event | None = None,
) -> RunResult:
    """Run `binary` once. `env` adds variables to the clean environment. With `workdir`
    the program runs there (the caller owns it); otherwise in a fresh folder, deleted.
    Setting `cancel` kills the run (it then reads as timed out)."""
    if workdir is not None:
        return _run_in(binary, workdir, timeout, cuda, env, output_cap, cancel)
    with tempfile.TemporaryDirectory(prefix="cudaify-run-") as folder:
        return _run_in(binary, Path(folder), timeout, cuda, env, output_cap, cancel)


def _run_in(
    binary: Path,
    folder: Path,
    timeout: float,
    cuda: bool,
    env: dict[str, str] | None,
    output_cap: int,
    cancel: threading.Event | None = None,
) -> RunResult:
    # HOME and TMPDIR point into the run's own folder: nothing is left behind elsewhere.
    environment = toolchain.clean_environment({"HOME": str(folder), "TMPDIR": str(folder)})
    environment.update(env or {})
    done = toolchain.run(
        [os.fspath(binary)],
        cwd=folder,
        timeout=timeout,
        env=environment,
        output_cap=output_cap,
        memory_bytes=None if cuda else HOST_MEMORY_LIMIT,
        file_bytes=FILE_SIZE_LIMIT,
        cancel=cancel,
    )
    killed = done.signal is not None
    return RunResult(
        stdout=done.text(),
        exit_code=None if killed else done.returncode,
        signal=None if done.timed_out or done.truncated else done.signal,
        timed_out=done.timed_out,
        truncated=done.truncated,
        seconds=done.seconds,
        stderr=done.errors(),
    )


def in_turns(
    first: Path,
    second: Path,
    runs: int,
    timeout: float | None = None,
    warm: bool = True,
    left: Callable[[], float | None] | None = None,
) -> tuple[list[float], list[float], tuple[str, str]] | str:
    """Wall seconds of `runs` runs of each binary in turns (`first` the CPU reference,
    `second` the CUDA program: whatever slows the machine meanwhile slows both alike),
    with their first outputs; with `warm`, after one uncounted run of each (a binary not
    run lately: the first run loads it and the driver). Or why not: a run that failed, was
    killed or timed out, or ended with another exit code than the first's. Each run is
    sandboxed as every run of generated code is (a fresh folder, a time limit, an output
    cap); the limit is `timeout`, else 10 s for the first run and then 10 times its time,
    at least 10 s, and never more than `left()` (seconds to a deadline, None: none), so
    the turns end by it."""
    limit = time_limit(None, timeout)
    seconds: tuple[list[float], list[float]] = ([], [])
    outputs = ["", ""]
    expected: int | None = None
    for position, which in enumerate([0, 1] * (runs + (1 if warm else 0))):
        remaining = left() if left is not None else None
        if remaining is not None and remaining <= 0.0:
            return "no time left before the deadline"
        cap = limit if remaining is None else min(limit, remaining)
        run = run_binary((first, second)[which], timeout=cap, cuda=which == 1)
        if position == 0 and run.finished:
            expected, limit = run.exit_code, time_limit(run.seconds, timeout)
        if not run.finished or run.exit_code != expected:
            problem = run.problem(cap) or f"exit code {run.exit_code}, not {expected}"
            return f"{'the CUDA program' if which else 'the reference'}: {problem}"
        if position < 2:
            outputs[which] = run.stdout
            if warm:
                continue
        seconds[which].append(run.seconds)
    return seconds[0], seconds[1], (outputs[0], outputs[1])
