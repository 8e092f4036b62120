"""GPU faults stay with their candidate: a kernel that reads an illegal address, traps
(a sticky CUDA error), writes past its array or never ends is killed and marked, and the
GPU is left usable for the next candidate (each runs in a process of its own). Needs a
GPU: skipped loudly without one."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from cudaify.backend.cache import Cache
from cudaify.backend.evaluate import Evaluator
from cudaify.core import Stage, Variant
from cudaify.core.config import Config
from cudaify.frontend.facts import Program

from .test_gpu_runs import CANDIDATE, REFERENCE

pytestmark = pytest.mark.gpu

BODY = "if (i < n) y[i] = a * x[i] + y[i];"
FAULTS = {
    # a null device pointer: "an illegal memory access was encountered"
    "illegal_address": "if (i < n) y[i] = a * x[i] + y[i]; if (i == 0) *(volatile int *)0 = 1;",
    # __trap(): the context is lost, every later CUDA call fails (a sticky error)
    "trap": "if (i < n) y[i] = a * x[i] + y[i]; if (i == n / 2) __trap();",
    # far past the array: a fault, or silently wrong output; never verified
    "past_the_array": "if (i < n) y[i + (1 << 30)] = a * x[i];",
    # never ends: killed at the run's time limit
    "spins": "if (i < n) y[i] = a * x[i] + y[i]; while (i >= 0) { __nanosleep(1000); }",
}


def _evaluator(tmp_path: Path) -> Evaluator:
    path = tmp_path / "saxpy.c"
    path.write_text(REFERENCE)
    program = Program(path=str(path), source=REFERENCE, language="c")
    # the run limit bounds the spinning kernel (otherwise 10x the reference's time)
    config = Config(runs=3, run_timeout=20.0)
    return Evaluator(program, config, cache=Cache(tmp_path / "cache"))


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_faulting_candidate_is_marked_and_the_next_one_is_verified(
    tmp_path: Path, fault: str
) -> None:
    evaluator = _evaluator(tmp_path)
    faulty = Variant(code=CANDIDATE.replace(BODY, FAULTS[fault]), offloaded=("saxpy",))
    began = time.perf_counter()
    result = evaluator.evaluate(faulty)
    took = time.perf_counter() - began
    assert not result.verified and result.problems, result
    assert result.stage in (Stage.COMPILE, Stage.RUN)
    kinds = {p.kind for p in result.problems}
    if fault == "spins":
        assert "timeout" in kinds and took < 20.0 + 15.0
    print(f"\n{fault}: {result.stage.label}: {result.problems[0].message[:160]}")
    good = evaluator.evaluate(Variant(code=CANDIDATE, offloaded=("saxpy",)))
    assert good.stage == Stage.CORRECT, good.problems  # the GPU is still usable
