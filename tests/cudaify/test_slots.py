"""Generation slots across processes (flock): at most `count` generations at once. (That
reported timings wait for generations is the GPU lock's shared/exclusive rule, tested in
tests/backend/test_gpulock.py.)"""

from __future__ import annotations

import threading
import time

from cudaify.core.slots import one_slot


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


def test_a_wait_with_an_end_gives_up_there(tmp_path):
    """`make -j` compiles share the slots: a request that must be done by its deadline
    stops waiting there (NoSlot), and takes a slot that comes free before it."""
    import pytest

    from cudaify.core.slots import NoSlot

    with one_slot(tmp_path, 1):
        began = time.monotonic()
        with pytest.raises(NoSlot), one_slot(tmp_path, 1, until=began + 0.2):
            pass
        assert 0.19 < time.monotonic() - began < 0.4
    with one_slot(tmp_path, 1, until=time.monotonic() + 0.2) as index:
        assert index == 0
