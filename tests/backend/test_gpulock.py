"""The cross-process GPU lock. It is generic (an flock on a file), so processes that only
sleep while holding it show whether a second one waits: no GPU needed."""

from __future__ import annotations

import multiprocessing
import threading
import time
from pathlib import Path

from cudaify.backend.gpulock import gpu_index, gpu_lock, lock_path

HOLD = 0.5


def _hold(root: str, gpu: str, log: str, name: str) -> None:
    with gpu_lock(Path(root), gpu):
        with open(log, "a") as out:
            out.write(f"{name} start {time.time()!r}\n")
        time.sleep(HOLD)
        with open(log, "a") as out:
            out.write(f"{name} end {time.time()!r}\n")


def _spans(log: Path) -> dict[str, dict[str, float]]:
    spans: dict[str, dict[str, float]] = {}
    for line in log.read_text().splitlines():
        name, event, stamp = line.split()
        spans.setdefault(name, {})[event] = float(stamp)
    return spans


def _contend(tmp_path: Path, first_gpu: str, second_gpu: str) -> dict[str, dict[str, float]]:
    log = tmp_path / "log"
    log.touch()
    context = multiprocessing.get_context("fork")
    first = context.Process(target=_hold, args=(str(tmp_path), first_gpu, str(log), "first"))
    first.start()
    deadline = time.time() + 30
    while "first start" not in log.read_text():  # the first one holds the lock now
        assert time.time() < deadline and first.is_alive()
        time.sleep(0.01)
    second = context.Process(target=_hold, args=(str(tmp_path), second_gpu, str(log), "second"))
    second.start()
    first.join(30)
    second.join(30)
    assert first.exitcode == 0 and second.exitcode == 0
    return _spans(log)


def test_a_second_process_waits_for_the_first(tmp_path: Path) -> None:
    spans = _contend(tmp_path, "0", "0")
    assert spans["second"]["start"] >= spans["first"]["end"]


def test_processes_on_different_gpus_do_not_wait(tmp_path: Path) -> None:
    spans = _contend(tmp_path, "0", "1")
    assert spans["second"]["start"] < spans["first"]["end"]


def _take(lock, order: list[str]) -> None:  # type: ignore[no-untyped-def]
    with lock:
        order.append("other")


def test_reentrant_in_a_thread_and_exclusive_between_threads(tmp_path: Path) -> None:
    lock = gpu_lock(tmp_path, "0")
    assert gpu_lock(tmp_path, "0") is lock  # one object per lock file in a process
    order: list[str] = []
    with lock:
        with lock:  # the evaluator's run asks for the reference under the same lock
            other = threading.Thread(target=_take, args=(lock, order))
            other.start()
            time.sleep(0.2)
            order.append("holder")
    other.join(5)
    assert order == ["holder", "other"]
    assert lock.path == lock_path(tmp_path, "0") and lock.path.is_file()


def test_the_gpu_follows_cuda_visible_devices(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,1")
    assert gpu_index() == "3"
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    assert gpu_index() == "0"
