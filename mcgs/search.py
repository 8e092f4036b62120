"""Searching the reasoning graph for the best verified variant.

The search only decides what to try next. Applying a method (`Expand`) and verifying a
candidate (`Evaluate`) are handed in by the pipeline, so this package neither parses C
nor calls nvcc."""

from __future__ import annotations

import time
from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass, field

from cudaify.core import Evaluation, Stage, Variant
from cudaify.mcgs.reward import reward
from cudaify.regraph.graph import START, ReGraph

# (variant, method) -> (new variant, "") or (None, reason it does not apply)
Expand = Callable[[Variant, str], tuple[Variant | None, str]]
Evaluate = Callable[[Variant], Evaluation]
Progress = Callable[["SearchResult"], None]
# a candidate whose only mismatch is rounding -> the variant that rounds like the CPU
# (the pipeline applies fp_exact's rule), or None when that does not apply
Rescue = Callable[[Variant], Variant | None]
# whether the time is up: no new candidate is started once it says so
Stop = Callable[[], bool]
# variants about to be verified, one by one: their builds may start now, on other cores
Prefetch = Callable[[Sequence[Variant]], None]
# a variant -> its predicted cost (a static model, relative units; None: it cannot tell)
Predict = Callable[[Variant], float | None]


def _stopped(stop: Stop | None, result: SearchResult) -> bool:
    if stop is not None and stop():
        result.cut_short = True
        return True
    return False


@dataclass(frozen=True)
class Candidate:
    variant: Variant
    evaluation: Evaluation

    @property
    def reward(self) -> float:
        return reward(self.evaluation)


@dataclass
class SearchResult:
    strategy: str
    candidates: list[Candidate] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (method, reason)
    iterations: int = 0
    seconds: float = 0.0
    # Among equal rewards (without a GPU every compiled candidate scores the same): the
    # shorter sequence, the smallest unverified change; an explicit --methods sequence
    # asks for all of its steps, so there the longer one.
    prefer_longer: bool = False
    # the explored graph of states: {key, methods, stage, reward, visits, value, edges}
    states: list[dict[str, object]] = field(default_factory=list)
    cut_short: bool = False  # the time budget ended it with candidates left to try
    converged: bool = False  # ended early: no better variant in `patience` candidates
    # the static cost model against the measurements: {"pairs", "rank_agreement"} (mcgs)
    cost_model: dict[str, object] = field(default_factory=dict)

    @property
    def best(self) -> Candidate | None:
        """The highest-reward candidate that compiled; ties as `prefer_longer` says."""
        usable = [c for c in self.candidates if c.evaluation.stage >= Stage.COMPILE]
        if not usable:
            return None
        sign = 1 if self.prefer_longer else -1
        return max(usable, key=lambda c: (c.reward, sign * len(c.variant.steps)))

    @property
    def best_verified(self) -> Candidate | None:
        verified = [c for c in self.candidates if c.evaluation.verified]
        return max(verified, key=lambda c: c.reward) if verified else None

    def stage_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for candidate in self.candidates:
            label = candidate.evaluation.stage.label
            counts[label] = counts.get(label, 0) + 1
        return counts


def verify(
    variant: Variant,
    evaluate: Evaluate,
    rescue: Rescue | None = None,
    known: Container[str] = (),
) -> list[Candidate]:
    """Evaluate `variant`. When its only mismatch with the reference is rounding, or its
    kernels compare floating values so that rounding may have decided a branch
    (Evaluation.rounding_suspect), and a `rescue` is given, the variant rescue makes of it
    is evaluated too, once (it is never rescued in turn), unless its key is `known`
    already. Both are candidates; the last one is the search's state: the rescued one when
    it got further, else the original."""
    first = Candidate(variant, evaluate(variant))
    if rescue is None or not first.evaluation.rounding_suspect:
        return [first]
    rescued = rescue(variant)
    if rescued is None or rescued.key in known:
        return [first]
    second = Candidate(rescued, evaluate(rescued))
    return [first, second] if second.reward > first.reward else [second, first]


def run_sequence(
    start: Variant,
    methods: list[str],
    expand: Expand,
    evaluate: Evaluate,
    progress: Progress | None = None,
    rescue: Rescue | None = None,
    stop: Stop | None = None,
) -> SearchResult:
    """Apply the given methods in order; a method that does not apply is skipped with its
    reason. Every intermediate variant is evaluated (and rescued, see `verify`)."""
    result = SearchResult(strategy="sequence", prefer_longer=True)
    began = time.perf_counter()
    current = start
    for method in methods:
        if _stopped(stop, result):
            break
        result.iterations += 1
        child, reason = expand(current, method)
        if child is None:
            result.skipped.append((method, reason))
            continue
        candidates = verify(child, evaluate, rescue)
        result.candidates.extend(candidates)
        if progress:
            progress(result)
        state = candidates[-1]
        if state.evaluation.stage < Stage.COMPILE:
            break
        current = state.variant
    result.seconds = time.perf_counter() - began
    return result


def _children(
    state: Variant,
    methods: Sequence[str],
    expand: Expand,
    evaluate: Evaluate,
    seen: set[str],
    result: SearchResult,
    progress: Progress | None,
    rescue: Rescue | None = None,
    stop: Stop | None = None,
    prefetch: Prefetch | None = None,
) -> list[Candidate]:
    """Apply each of `methods` to `state` once; evaluate each child not seen before (the
    transposition table `seen` holds normalised-code hashes) and record it in `result`.
    A child whose only mismatch is rounding is rescued (see `verify`): the child state is
    then the rescued variant when it got further. Every child is made first, so that
    `prefetch` can start all their builds while the first one is verified."""
    made: list[Variant] = []
    for method in methods:
        if _stopped(stop, result):
            break
        result.iterations += 1
        child, reason = expand(state, method)
        if child is None:
            result.skipped.append((method, reason))
            continue
        if child.key in seen:
            continue
        seen.add(child.key)
        made.append(child)
    if prefetch is not None and made:
        prefetch(made)
    children: list[Candidate] = []
    for child in made:
        if _stopped(stop, result):
            break
        candidates = verify(child, evaluate, rescue, seen)
        seen.update(c.variant.key for c in candidates)
        result.candidates.extend(candidates)
        children.append(candidates[-1])
        if progress:
            progress(result)
    return children


def _out_edges(graph: ReGraph, state: Variant) -> list[str]:
    return graph.successors(state.node if state.steps else START)


def run_rules(
    start: Variant,
    graph: ReGraph,
    expand: Expand,
    evaluate: Evaluate,
    max_depth: int = 3,
    progress: Progress | None = None,
    every_method: Sequence[str] | None = None,
    rescue: Rescue | None = None,
    stop: Stop | None = None,
    prefetch: Prefetch | None = None,
) -> SearchResult:
    """Breadth-first search with rules only: from `sequential`, follow every out-edge
    whose method applies, to `max_depth` steps. With `every_method` (the `exhaustive`
    strategy), every state tries every one of those methods, edge or not: every sequence
    of applicable rules up to `max_depth` long. Preconditions prune (a method that does
    not apply costs no compile), identical code reached by two paths is one state (the
    transposition table is keyed by the normalised-code hash), and only states that
    compiled are expanded further."""
    result = SearchResult(strategy="rules" if every_method is None else "exhaustive")
    began = time.perf_counter()
    seen = {start.key}
    frontier = [start]
    for _depth in range(max_depth):
        next_frontier: list[Variant] = []
        for state in frontier:
            methods = _out_edges(graph, state) if every_method is None else every_method
            children = _children(
                state, methods, expand, evaluate, seen, result, progress, rescue, stop, prefetch
            )
            for candidate in children:
                if candidate.evaluation.stage >= Stage.COMPILE:
                    next_frontier.append(candidate.variant)
        frontier = next_frontier
        if not frontier or result.cut_short:
            break
    result.seconds = time.perf_counter() - began
    return result


def run_greedy(
    start: Variant,
    graph: ReGraph,
    expand: Expand,
    evaluate: Evaluate,
    max_depth: int = 3,
    progress: Progress | None = None,
    rescue: Rescue | None = None,
    stop: Stop | None = None,
    prefetch: Prefetch | None = None,
) -> SearchResult:
    """At each step try every out-edge once and move to the best child, stopping when no
    child beats the current state."""
    result = SearchResult(strategy="greedy")
    began = time.perf_counter()
    current, current_reward = start, -float("inf")
    seen = {start.key}
    for _depth in range(max_depth):
        methods = _out_edges(graph, current)
        children = _children(
            current, methods, expand, evaluate, seen, result, progress, rescue, stop, prefetch
        )
        best = max(children, key=lambda c: c.reward, default=None)
        if best is None or best.reward <= current_reward or result.cut_short:
            break
        current, current_reward = best.variant, best.reward
    result.seconds = time.perf_counter() - began
    return result


def run_whole_program(
    start: Variant,
    style: str,
    generate: Callable[[Variant, str], tuple[Variant | None, str]],
    evaluate: Evaluate,
    progress: Progress | None = None,
    rescue: Rescue | None = None,
) -> SearchResult:
    """The paper's baselines: one prompt turns the whole program into CUDA (`oneshot`, or
    `cot` with step-by-step reasoning first); the answer gets the same verification."""
    result = SearchResult(strategy=style, iterations=1)
    began = time.perf_counter()
    child, reason = generate(start, style)
    if child is None:
        result.skipped.append((style, reason))
    else:
        result.candidates.extend(verify(child, evaluate, rescue))
        if progress:
            progress(result)
    result.seconds = time.perf_counter() - began
    return result
