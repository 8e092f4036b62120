"""One GPU, one timed program at a time, across processes.

`cudaify bench -j N` and `cudaify graph build --jobs N` verify programs in parallel
processes. Compiles may overlap freely, but two programs sharing a GPU disturb each other's
timings (and ncu replays), so every run on a GPU holds an exclusive `flock` on a lock file
in the cache folder, one file per GPU. The kernel releases the lock when its holder dies,
so a killed cudaify never leaves a GPU locked.

A `GpuLock` is also a reentrant thread lock: a thread that holds it may take it again (the
evaluator's correctness run asks for the reference, which runs under the same lock)."""

from __future__ import annotations

import fcntl
import os
import re
import threading
from pathlib import Path
from typing import IO


def gpu_index() -> str:
    """The GPU this process runs on: the first of CUDA_VISIBLE_DEVICES (an index or a
    UUID), else 0, the CUDA runtime's default device."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip()
    return visible or "0"


def lock_path(cache_root: Path, gpu: str | None = None) -> Path:
    name = re.sub(r"[^\w.-]", "_", gpu if gpu is not None else gpu_index())
    return cache_root / "locks" / f"gpu-{name}.lock"


class GpuLock:
    """Exclusive use of one GPU: a thread lock inside this process, an flock across
    processes. Reentrant within a thread; the flock is taken by the outermost entry."""

    def __init__(self, path: Path):
        self.path = path
        self._thread_lock = threading.RLock()
        self._depth = 0
        self._handle: IO[bytes] | None = None

    def __enter__(self) -> GpuLock:
        self._thread_lock.acquire()
        if self._depth == 0:
            try:
                self._handle = self._open_locked()
            except BaseException:
                self._thread_lock.release()
                raise
        self._depth += 1
        return self

    def __exit__(self, *exc: object) -> None:
        self._depth -= 1
        if self._depth == 0 and self._handle is not None:
            # Closing the file releases the flock.
            self._handle.close()
            self._handle = None
        self._thread_lock.release()

    def _open_locked(self) -> IO[bytes]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(self.path, "ab")  # noqa: SIM115 - held until __exit__
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)  # waits for the other process
        except BaseException:
            handle.close()
            raise
        return handle


_SHARED: dict[Path, GpuLock] = {}
_SHARED_GUARD = threading.Lock()


def _forget_after_fork() -> None:
    # A forked worker starts with no lock held: the parent's state (and open file) is not
    # its, and the guard may have been held by a thread that does not exist in the child.
    global _SHARED_GUARD
    _SHARED_GUARD = threading.Lock()
    _SHARED.clear()


os.register_at_fork(after_in_child=_forget_after_fork)


def gpu_lock(cache_root: Path, gpu: str | None = None) -> GpuLock:
    """The lock of `gpu` (default: this process's GPU) under `cache_root`. One object per
    lock file in a process, so that two evaluators in one thread never wait on each other."""
    path = lock_path(cache_root, gpu).absolute()
    with _SHARED_GUARD:
        if path not in _SHARED:
            _SHARED[path] = GpuLock(path)
        return _SHARED[path]


__all__ = ["GpuLock", "gpu_index", "gpu_lock", "lock_path"]
