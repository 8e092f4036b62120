"""How many local language models generate at once on this machine, across processes.

`cudaify bench -j 16` runs 16 workers; each loads its own model (a llama.cpp instance
cannot be shared between processes, and a 0.5-1.5B model fits 16 times in GPU memory),
but 16 generations at once would only contend: for the cores of a CPU model, for the
GPU's time slices with a GPU-offloaded one. A generation takes one of `count` slots (a
lock file each, in the cache folder) and shared use of the GPU (backend.gpulock), so the
timings cudaify reports, which take the GPU alone, are never taken while a model
generates. flock locks die with their process: a killed worker frees its slot."""

from __future__ import annotations

import contextlib
import fcntl
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

POLL_SECONDS = 0.05


def slot_paths(folder: Path, count: int) -> list[Path]:
    return [folder / "locks" / f"slm-slot-{index}.lock" for index in range(max(1, count))]


def _open(path: Path) -> IO[bytes]:
    path.parent.mkdir(parents=True, exist_ok=True)
    return open(path, "ab")  # noqa: SIM115 - closed by the caller, which releases the flock


class NoSlot(TimeoutError):
    """Every slot stayed taken until the wait's end."""


@contextlib.contextmanager
def one_slot(folder: Path, count: int, until: float | None = None) -> Iterator[int]:
    """Wait for a free slot of `count` and hold it; yields its index. `until`
    (time.monotonic; None: no end): NoSlot where every slot is still taken then."""
    paths = slot_paths(folder, count)
    while True:
        for index, path in enumerate(paths):
            handle = _open(path)
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.close()
                continue
            try:
                yield index
            finally:
                handle.close()
            return
        if until is not None and time.monotonic() >= until:
            raise NoSlot(f"all {len(paths)} generation slots stayed taken")
        wait = POLL_SECONDS if until is None else min(POLL_SECONDS, until - time.monotonic())
        time.sleep(max(0.0, wait))


__all__ = ["NoSlot", "one_slot", "slot_paths"]
