"""The hierarchical reward. Every candidate lands in exactly one band, and every band
is below the next:

    structure fail  -1.00
    compile fail    -0.75
    run fail        -0.50   (crash, timeout, output cap)
    wrong output    -0.25
    stopped: too slow to beat the CPU, output unseen  -0.10
    compiled, not run (no GPU)  0.00 + 0.1 * (the share of the CPU program's time in the
                                code it moved to the GPU, from the reference's profile)
    correct, slower than the CPU reference   0.25 * speedup           in [0, 0.25)
    correct, faster                          0.5 + log(speedup)       >= 0.5

With no GPU the search can only tell structure and compile apart, and says so; among
compiled candidates it prefers the one that moves the hottest code (the reference run's
profile, per function), not whichever loop came first."""

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
HOT_SHARE = 0.1  # no GPU: the reward of moving all of the CPU's time (below any verified band)


def reward(evaluation: Evaluation) -> float:
    stage = evaluation.stage
    if stage < Stage.STRUCTURE:
        return STRUCTURE_FAIL
    if stage == Stage.STRUCTURE:
        return COMPILE_FAIL
    if stage == Stage.COMPILE:
        if not evaluation.ran_on_gpu:
            return UNRUN + HOT_SHARE * cpu_share(evaluation)
        if stopped_as_too_slow(evaluation):
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


def stopped_as_too_slow(evaluation: Evaluation) -> bool:
    """A run stopped past the time to beat (see hopeless_after), and nothing else wrong."""
    return bool(evaluation.problems) and all(p.kind == TOO_SLOW for p in evaluation.problems)


def cpu_share(evaluation: Evaluation) -> float:
    """The share of the CPU program's time spent in the functions the variant moved to
    the GPU (0 where the reference was not profiled)."""
    region, wall = evaluation.reference.region, evaluation.reference.wall
    if not region or not wall or wall <= 0:
        return 0.0
    return max(0.0, min(1.0, region / wall))


def unrun(evaluation: Evaluation) -> bool:
    """Compiled where nothing could run it (no GPU): its reward is UNRUN plus its share."""
    return evaluation.stage == Stage.COMPILE and not evaluation.ran_on_gpu
