"""Generation slots across processes (flock): at most `count` generations at once, and
`all_slots` waits for every generation to end and keeps new ones out."""

from __future__ import annotations

import threading
import time

from cudaify.slots import all_slots, one_slot


def test_one_slot_hands_out_distinct_slots_and_waits_when_all_are_taken(tmp_path):
    with one_slot(tmp_path, 2) as first, one_slot(tmp_path, 2) as second:
        assert {first, second} == {0, 1}
        got: list[int] = []
        waiter = threading.Thread(target=lambda: got.append(_take(tmp_path, 2)))
        waiter.start()
        time.sleep(0.3)
        assert got == []  # both slots are held
    waiter.join(5)
    assert got and got[0] in (0, 1)


def _take(folder, count) -> int:
    with one_slot(folder, count) as index:
        return index


def test_all_slots_waits_for_generations_and_keeps_new_ones_out(tmp_path):
    events: list[str] = []
    generating = threading.Event()
    release = threading.Event()

    def generation():
        with one_slot(tmp_path, 2):
            generating.set()
            release.wait(5)
            events.append("generation ends")

    def quiet():
        with all_slots(tmp_path, 2):
            events.append("quiet begins")
            with all_slots(tmp_path, 2):  # reentrant within the thread
                time.sleep(0.2)
            events.append("quiet ends")

    first = threading.Thread(target=generation)
    first.start()
    generating.wait(5)
    timer = threading.Thread(target=quiet)
    timer.start()
    time.sleep(0.3)
    assert events == []  # the quiet section waits for the running generation
    release.set()
    first.join(5)
    deadline = time.monotonic() + 5
    while "quiet begins" not in events and time.monotonic() < deadline:
        time.sleep(0.01)
    late = threading.Thread(target=lambda: events.append(f"late slot {_take(tmp_path, 2)}"))
    late.start()
    timer.join(5)
    late.join(5)
    assert events[:3] == ["generation ends", "quiet begins", "quiet ends"]
    assert events[3].startswith("late slot")
