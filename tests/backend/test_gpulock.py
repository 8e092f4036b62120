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


class _Timeline:
    """Named holds of one lock, each in its own thread, and the order they began and
    ended in."""

    def __init__(self, lock) -> None:  # type: ignore[no-untyped-def]
        self.lock = lock
        self.events: list[str] = []
        self._guard = threading.Lock()
        self.threads: list[threading.Thread] = []

    def note(self, event: str) -> None:
        with self._guard:
            self.events.append(event)

    def hold(self, name: str, exclusive: bool, release: threading.Event) -> None:
        def body() -> None:
            with self.lock if exclusive else self.lock.shared():
                self.note(f"{name} start")
                release.wait(5)
                self.note(f"{name} end")

        thread = threading.Thread(target=body)
        thread.start()
        self.threads.append(thread)
        time.sleep(0.2)  # it holds the lock now, or waits for it

    def join(self) -> None:
        for thread in self.threads:
            thread.join(5)


def test_shared_holders_run_side_by_side(tmp_path: Path) -> None:
    timeline = _Timeline(gpu_lock(tmp_path, "0"))
    release = threading.Event()
    timeline.hold("a", exclusive=False, release=release)
    timeline.hold("b", exclusive=False, release=release)
    assert timeline.events == ["a start", "b start"]
    release.set()
    timeline.join()


def test_a_timing_waits_for_shared_holders_and_keeps_new_ones_out(tmp_path: Path) -> None:
    timeline = _Timeline(gpu_lock(tmp_path, "0"))
    first, timing, late = threading.Event(), threading.Event(), threading.Event()
    timeline.hold("screen", exclusive=False, release=first)
    timeline.hold("timing", exclusive=True, release=timing)
    timeline.hold("late screen", exclusive=False, release=late)
    assert timeline.events == ["screen start"]  # the timing waits; the late one behind it
    first.set()
    time.sleep(0.2)
    assert timeline.events == ["screen start", "screen end", "timing start"]
    late.set()
    time.sleep(0.2)
    assert "late screen start" not in timeline.events  # not while the timing runs
    timing.set()
    timeline.join()
    assert timeline.events[3:] == ["timing end", "late screen start", "late screen end"]


def test_shared_inside_exclusive_nests_and_the_reverse_is_refused(tmp_path: Path) -> None:
    lock = gpu_lock(tmp_path, "0")
    with lock:
        with lock.shared():
            assert lock.held == "exclusive"
    assert lock.held is None
    with lock.shared():
        assert lock.held == "shared"
        try:
            with lock:
                raise AssertionError("exclusive inside shared was granted")
        except RuntimeError as error:
            assert "exclusive use of the GPU" in str(error)
        assert lock.held == "shared"
    assert lock.held is None


def test_shared_holds_across_processes_overlap(tmp_path: Path) -> None:
    log = tmp_path / "log"
    log.touch()
    context = multiprocessing.get_context("fork")
    workers = [
        context.Process(target=_hold_shared, args=(str(tmp_path), str(log), name))
        for name in ("first", "second")
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(30)
        assert worker.exitcode == 0
    spans = _spans(log)
    assert spans["second"]["start"] < spans["first"]["end"]
    assert spans["first"]["start"] < spans["second"]["end"]


def _hold_shared(root: str, log: str, name: str) -> None:
    with gpu_lock(Path(root), "0").shared():
        with open(log, "a") as out:
            out.write(f"{name} start {time.time()!r}\n")
        time.sleep(HOLD)
        with open(log, "a") as out:
            out.write(f"{name} end {time.time()!r}\n")


def test_a_holder_that_asks_again_queues_behind_the_waiters(tmp_path: Path) -> None:
    """First come, first served: the holder releases and at once asks again, while another
    thread has been waiting; the waiter goes first (flock alone let the same process take
    the GPU again and again under make -j16)."""
    lock = gpu_lock(tmp_path, "0")
    order: list[str] = []
    asked = threading.Event()

    def waiter() -> None:
        asked.set()
        with lock:
            order.append("waiter")

    with lock:
        order.append("holder")
        thread = threading.Thread(target=waiter)
        thread.start()
        asked.wait(5)
        time.sleep(0.2)  # the waiter's ticket is in the queue now
    with lock:
        order.append("holder again")
    thread.join(5)
    assert order == ["holder", "waiter", "holder again"]


def test_a_wait_with_a_limit_gives_up_and_leaves_the_queue(tmp_path: Path) -> None:
    lock = gpu_lock(tmp_path, "0")
    failures: list[BaseException] = []

    def impatient() -> None:
        try:
            lock.acquire(exclusive=False, timeout=0.2)
        except TimeoutError as error:
            failures.append(error)

    with lock:
        thread = threading.Thread(target=impatient)
        thread.start()
        thread.join(5)
    assert len(failures) == 1 and "not free within 0.2 s" in str(failures[0])
    assert [p for p in lock.queue.iterdir() if not p.name.startswith(".")] == []
    with lock.shared():  # nothing of the impatient one is left in the way
        assert lock.held == "shared"


def test_a_dead_processes_ticket_is_removed(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A ticket nobody holds a lock on (its process was killed) does not block the GPU."""
    import cudaify.backend.gpulock as gpulock

    monkeypatch.setattr(gpulock, "LIVENESS_EVERY", 0.05)
    lock = gpu_lock(tmp_path, "0")
    lock.queue.mkdir(parents=True)
    dead = lock.queue / f"{1:020d}.x.999999.{'0' * 32}"
    dead.touch()  # earlier than any ticket this process takes, and unlocked
    lock.acquire(exclusive=True, timeout=10)
    lock.release()
    assert not dead.exists()


def test_a_long_wait_is_said_with_the_holds_ahead(tmp_path: Path, monkeypatch, caplog) -> None:  # type: ignore[no-untyped-def]
    import cudaify.backend.gpulock as gpulock

    monkeypatch.setattr(gpulock, "WAIT_NOTICE", 0.05)
    lock = gpu_lock(tmp_path, "0")
    release = threading.Event()
    timeline = _Timeline(lock)
    timeline.hold("timing", exclusive=True, release=release)
    with caplog.at_level("WARNING", logger="cudaify"):
        threading.Timer(0.3, release.set).start()
        with lock.shared():
            pass
    timeline.join()
    said = [r.getMessage() for r in caplog.records if "waiting for the GPU" in r.getMessage()]
    assert said and "1 hold(s) ahead, 1 of them timings, from 1 process(es)" in said[0]


def test_users_counts_the_processes_sharing_the_gpu_not_this_ones_threads(
    tmp_path: Path,
) -> None:
    lock = gpu_lock(tmp_path, "0")
    assert lock.users() == 1  # nobody, and this process
    inside = threading.Event()
    leave = threading.Event()

    def hold_in_a_thread() -> None:
        with lock.shared():
            inside.set()
            leave.wait(30)

    thread = threading.Thread(target=hold_in_a_thread)
    thread.start()
    inside.wait(30)
    with lock.shared():
        assert lock.users() == 1  # two threads of one process: one program
        log = tmp_path / "log"
        log.touch()
        context = multiprocessing.get_context("fork")
        other = context.Process(target=_hold_shared, args=(str(tmp_path), str(log), "other"))
        other.start()
        deadline = time.time() + 30
        while "other start" not in log.read_text():
            assert time.time() < deadline and other.is_alive()
            time.sleep(0.01)
        assert lock.users() == 2
        other.join(30)
        assert lock.users() == 1
    leave.set()
    thread.join(30)


def test_a_long_shared_hold_makes_way_for_a_timing_asked_after_it(tmp_path: Path) -> None:
    """A model's generation holds the GPU shared for 5-60 s; at its next token it gives a
    timing that asked meanwhile the GPU and queues again behind it, and a timing asked
    before the generation (none here) or no timing at all leaves it holding."""
    lock = gpu_lock(tmp_path, "0")
    events: list[str] = []
    timing_done = threading.Event()

    def timing() -> None:
        with lock:
            events.append("timing start")
            time.sleep(0.2)
            events.append("timing end")
        timing_done.set()

    with lock.shared():
        assert not lock.make_way()  # nobody waits
        with lock.shared():
            assert not lock.make_way()  # a nested hold is left alone
        timer = threading.Thread(target=timing)
        timer.start()
        time.sleep(0.1)
        assert events == []  # the timing waits for the generation's hold
        assert lock.make_way()  # the next token: way made, back once the timing is done
        events.append("generation goes on")
        assert lock.held == "shared"
        assert not lock.make_way()
    timer.join()
    assert events == ["timing start", "timing end", "generation goes on"]
    assert not list(lock.queue.iterdir())  # no ticket left behind
