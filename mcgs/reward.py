"""The hierarchical reward. Every candidate lands in exactly one band, and every band
is below the next:

    structure fail  -1.00
    compile fail    -0.75
    run fail        -0.50   (crash, timeout, output cap)
    wrong output    -0.25
    stopped: too slow to beat the CPU, output unseen  -0.10
    compiled, not run (no GPU)  0.00
    correct, slower than the CPU reference   0.25 * speedup           in [0, 0.25)
    correct, faster                          0.5 + log(speedup)       >= 0.5

With no GPU the search can only tell structure and compile apart, and says so."""

from __future__ import annotations

import math

from cudaify.core import TOO_SLOW, Evaluation, Stage

STRUCTURE_FAIL = -1.0
COMPILE_FAIL = -0.75
RUN_FAIL = -0.5
WRONG_OUTPUT = -0.25
TOO_SLOW_UNSEEN = -0.1  # may be right, is slower: a step from its rescue, as a slow variant is
UNRUN = 0.0
FASTER = 0.5  # the lowest reward of a variant faster than the CPU


def reward(evaluation: Evaluation) -> float:
    stage = evaluation.stage
    if stage < Stage.STRUCTURE:
        return STRUCTURE_FAIL
    if stage == Stage.STRUCTURE:
        return COMPILE_FAIL
    if stage == Stage.COMPILE:
        if not evaluation.ran_on_gpu:
            return UNRUN
        if evaluation.problems and all(p.kind == TOO_SLOW for p in evaluation.problems):
            return TOO_SLOW_UNSEEN
        return RUN_FAIL
    if stage == Stage.RUN:
        return WRONG_OUTPUT
    speedup = evaluation.region_speedup or evaluation.program_speedup
    if speedup is None:
        return UNRUN
    if speedup < 1.0:
        return 0.25 * speedup
    return FASTER + math.log(speedup)
