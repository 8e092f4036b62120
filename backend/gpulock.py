"""One GPU, shared by correctness runs and language models, exclusive for timings.

`cudaify bench -j N` and `cudaify graph build --jobs N` verify programs in parallel
processes. Compiles may overlap freely. Runs on a GPU take one of two kinds of hold on an
`flock`ed file in the cache folder, one file per GPU:

- shared (`with lock.shared():`): a search candidate's correctness run (whose one-run time
  only ranks candidates for the finalists) and a local model's generation. Any number of
  shared holders run side by side: H100-class GPUs time-slice between processes, so
  candidates of 16 programs are checked at once instead of in one queue.
- exclusive (`with lock:`): every timing that gets reported (the reference's, a
  finalist's, the bandwidth probe, ncu replays). Nothing else runs on the GPU meanwhile.

Exclusive holders have priority: a second file, the gate, is held by an exclusive holder
from the moment it asks until it is done, and a shared holder passes through the gate
before it takes its hold. So a stream of short shared holds cannot starve a timing; it
waits only for the shared holds already running.

Each thread takes its own hold (a thread opens its own file descriptions, which flock
treats like another process's), and a thread may nest holds: shared inside exclusive is a
no-op, exclusive inside shared is a bug (two such threads would wait on each other
forever) and raises. The kernel releases a dead holder's locks, so a killed cudaify never
leaves a GPU locked."""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import threading
from collections.abc import Iterator
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


def _locked(path: Path, operation: int) -> IO[bytes]:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = open(path, "ab")  # noqa: SIM115 - closing it releases the flock
    try:
        fcntl.flock(handle.fileno(), operation)  # waits for the other holders
    except BaseException:
        handle.close()
        raise
    return handle


class GpuLock:
    """Shared or exclusive use of one GPU by this thread (see the module's docstring).
    `with lock:` is exclusive use; `with lock.shared():` is shared use."""

    def __init__(self, path: Path):
        self.path = path
        self.gate = path.with_name(path.name + ".gate")
        self._held = threading.local()  # depth, exclusive, handles: this thread's hold

    def __enter__(self) -> GpuLock:
        self._acquire(exclusive=True)
        return self

    def __exit__(self, *exc: object) -> None:
        self._release()

    @contextlib.contextmanager
    def shared(self) -> Iterator[GpuLock]:
        self._acquire(exclusive=False)
        try:
            yield self
        finally:
            self._release()

    @property
    def held(self) -> str | None:
        """'exclusive', 'shared' or None: what this thread holds."""
        if not getattr(self._held, "depth", 0):
            return None
        return "exclusive" if self._held.exclusive else "shared"

    def _acquire(self, exclusive: bool) -> None:
        held = self._held
        if getattr(held, "depth", 0):
            if exclusive and not held.exclusive:
                raise RuntimeError(
                    f"{self.path}: exclusive use of the GPU asked for while this thread "
                    "holds shared use (take the exclusive hold first)"
                )
            held.depth += 1
            return
        gate = _locked(self.gate, fcntl.LOCK_EX)
        try:
            main = _locked(self.path, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        except BaseException:
            gate.close()
            raise
        if exclusive:
            held.handles = [main, gate]  # the gate stays closed to new shared holders
        else:
            gate.close()
            held.handles = [main]
        held.exclusive = exclusive
        held.depth = 1

    def _release(self) -> None:
        held = self._held
        held.depth -= 1
        if held.depth == 0:
            for handle in held.handles:  # closing a file releases its flock
                handle.close()
            held.handles = []


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


__all__ = ["GpuLock", "gpu_index", "gpu_lock", "lock_path"]
