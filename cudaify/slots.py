"""How many local language models generate at once on this machine, across processes.

`cudaify bench -j 16` runs 16 workers; each loads its own model (a llama.cpp instance
cannot be shared between processes, and a 0.5-1.5B model fits 16 times in GPU memory),
but 16 generations at once would only contend: for the cores of a CPU model, for the
GPU's time slices with a GPU-offloaded one. A generation takes one of `count` slots (a
lock file each, in the cache folder); `all_slots` takes every one of them, so that the
timings cudaify reports (the reference's, the finalists') are taken while no model
generates. flock locks die with their process: a killed worker frees its slot."""

from __future__ import annotations

import contextlib
import fcntl
import threading
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


@contextlib.contextmanager
def one_slot(folder: Path, count: int) -> Iterator[int]:
    """Wait for a free slot of `count` and hold it; yields its index."""
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
        time.sleep(POLL_SECONDS)


_held = threading.local()  # all_slots is reentrant within a thread


@contextlib.contextmanager
def all_slots(folder: Path, count: int) -> Iterator[None]:
    """Hold every slot: no generation runs until this ends. Slots are taken in order and
    a generation holds one at most, so this cannot deadlock with generations, and each
    slot taken shrinks the pool the generations compete for."""
    depth = getattr(_held, "depth", 0)
    if depth:
        _held.depth = depth + 1
        try:
            yield
        finally:
            _held.depth -= 1
        return
    handles: list[IO[bytes]] = []
    _held.depth = 1
    try:
        for path in slot_paths(folder, count):
            handle = _open(path)
            handles.append(handle)
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        yield
    finally:
        _held.depth = 0
        for handle in reversed(handles):
            handle.close()


__all__ = ["one_slot", "all_slots", "slot_paths"]
