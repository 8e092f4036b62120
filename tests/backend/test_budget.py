"""The command's deadline and the breakdown of where its time went, on a fake clock."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest

from cudaify.backend.budget import Breakdown, Deadline, OutOfTime, process_age


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_deadline_cuts_time_limits_to_what_is_left_and_then_refuses() -> None:
    clock = FakeClock()
    deadline = Deadline(30.0, clock)
    assert deadline.clamp(300.0) == 30.0
    clock.now += 25.0
    assert deadline.remaining() == 5.0 and deadline.clamp(2.0) == 2.0
    assert deadline.allows(4.0) and not deadline.allows(6.0)
    clock.now += 5.0
    assert deadline.expired
    with pytest.raises(OutOfTime, match="time budget of 30 s is spent"):
        deadline.clamp(1.0)


def test_a_sooner_deadline_keeps_time_for_what_comes_after_it() -> None:
    """`sooner(s)`: the same budget on the same clock, s seconds earlier (the finalists
    leave the close call its turns); its refusal still names the whole budget; without a
    limit it is the deadline itself."""
    clock = FakeClock()
    deadline = Deadline(30.0, clock)
    clock.now += 20.0
    early = deadline.sooner(4.0)
    assert early.remaining() == 6.0 and deadline.remaining() == 10.0
    assert early.allows(5.0) and not early.allows(7.0)
    clock.now += 6.0
    assert early.expired and not deadline.expired
    with pytest.raises(OutOfTime, match="time budget of 30 s is spent"):
        early.check()
    assert deadline.sooner(0.0) is deadline
    unlimited = Deadline(None, clock)
    assert unlimited.sooner(4.0) is unlimited


def test_a_deadline_may_count_from_an_earlier_start() -> None:
    """A command's budget counts from its process's start: 10 s of a 30 s budget are gone
    when the deadline is made."""
    clock = FakeClock()
    deadline = Deadline(30.0, clock, started=clock.now - 10.0)
    assert deadline.elapsed() == 10.0 and deadline.remaining() == 20.0
    clock.now += 20.0
    assert deadline.expired


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_process_knows_how_long_it_has_run() -> None:
    """The kernel's start time of a process, not the first line of its Python: a child
    that sleeps 0.5 s before it asks has run at least that long, and not much longer."""
    code = (
        "import time; time.sleep(0.5)\n"
        "from cudaify.backend.budget import process_age\n"
        "print(process_age())"
    )
    began = time.monotonic()
    age = float(
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout
    )
    assert 0.5 <= age <= time.monotonic() - began + 0.02  # the kernel counts in 10 ms ticks
    assert process_age() > age  # this process, pytest, began well before


def test_no_budget_or_zero_means_no_limit() -> None:
    for seconds in (None, 0.0):
        deadline = Deadline(seconds, FakeClock())
        assert not deadline.limited and deadline.remaining() is None
        assert deadline.clamp(300.0) == 300.0 and not deadline.expired


def test_nested_phases_are_counted_once_in_the_inner_one() -> None:
    clock = FakeClock()
    breakdown = Breakdown(clock)
    with breakdown.measure("reference"):
        clock.now += 1.0  # compiling the reference
        with breakdown.measure("wait"):
            clock.now += 3.0
        with breakdown.measure("reference"):
            clock.now += 2.0  # its runs
    with breakdown.measure("run"):
        clock.now += 0.5
    assert breakdown.seconds == {"reference": 3.0, "wait": 3.0, "run": 0.5}


def test_each_thread_nests_on_its_own() -> None:
    clock = FakeClock()
    breakdown = Breakdown(clock)
    inside = threading.Event()
    leave = threading.Event()

    def compile_in_background() -> None:
        with breakdown.measure("compile"):
            inside.set()
            leave.wait(5)

    thread = threading.Thread(target=compile_in_background)
    with breakdown.measure("search"):
        thread.start()
        inside.wait(5)
        clock.now += 2.0
        leave.set()
        thread.join(5)
    # the other thread's compile does not make the search's own time smaller
    assert breakdown.seconds == {"compile": 2.0, "search": 2.0}


def test_work_done_quietly_ahead_is_not_counted() -> None:
    clock = FakeClock()
    breakdown = Breakdown(clock)
    done = threading.Event()

    def screen_ahead() -> None:
        with breakdown.quiet(), breakdown.measure("wait"), breakdown.measure("run"):
            clock.now += 4.0
        with breakdown.measure("compile"):  # quiet no more
            clock.now += 1.0
        done.set()

    thread = threading.Thread(target=screen_ahead)
    thread.start()
    done.wait(5)
    thread.join(5)
    assert breakdown.seconds == {"compile": 1.0}
