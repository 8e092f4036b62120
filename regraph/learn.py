"""Learning from use: a run's verified steps and its edge statistics go into the user's
graph (`platformdirs.user_data_dir("cudaify")/graph.json`); the shipped graph stays
read-only. The graph a run searches is the shipped one merged with the user's.

The user graph holds only what runs added (examples, and stats as increments), so merging
it into a newer shipped graph after an upgrade counts nothing twice."""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cudaify.core import Evaluation, Variant
from cudaify.regraph import user_graph_path
from cudaify.regraph.build import VerifiedStep, how_verified, measured_speedup, merge, merge_steps
from cudaify.regraph.graph import START, GraphFormatError, ReGraph, default_graph, load, save
from cudaify.regraph.relabel import describe


@dataclass(frozen=True)
class StatsUpdate:
    """One attempt of an edge during a run."""

    source: str
    target: str
    success: bool
    speedup: float | None = None


def _user_graph(path: Path) -> ReGraph:
    if not path.exists():
        graph = ReGraph()
        graph.add_method(START, *describe(START))
        return graph
    try:
        return load(path)
    except GraphFormatError as exc:
        raise GraphFormatError(f"{exc} (in {path}; delete it to start a fresh user graph)") from exc


def learn(
    graph_path_user: str | Path | None,
    verified_steps: Iterable[VerifiedStep],
    stats_updates: Iterable[StatsUpdate],
) -> ReGraph:
    """Add the verified steps as `learned` examples and the attempts to the edge stats of
    the user graph at `graph_path_user` (None: the default place); returns the new user graph."""
    path = Path(graph_path_user) if graph_path_user is not None else user_graph_path()
    steps = [dataclasses.replace(s, origin="learned") for s in verified_steps if s.ok]
    updates = list(stats_updates)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _locked(path):  # `make -j` runs several compiles that learn into one file
        graph = merge_steps(_user_graph(path), steps, count=False)
        for update in updates:
            for name in (update.source, update.target):
                graph.add_method(name, *describe(name))
            graph.add_edge(update.source, update.target)
            graph.stats(update.source, update.target).record(update.success, update.speedup)
        save(graph, path)
    return graph


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path.with_name(path.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def load_active_graph(user_path: str | Path | None = None) -> ReGraph:
    """The shipped graph, merged with the user graph when there is one."""
    path = Path(user_path) if user_path is not None else user_graph_path()
    shipped = default_graph()
    if not path.exists():
        return shipped
    return merge(shipped, _user_graph(path))


def run_steps(
    program: str,
    start: Variant,
    candidates: Iterable[tuple[Variant, Evaluation]],
    accept: tuple[str, ...] = ("gpu",),
) -> tuple[list[VerifiedStep], list[StatsUpdate]]:
    """What a search run teaches: every evaluated candidate is an attempt of the edge that
    made it; those verified (by a way in `accept`: a GPU run, by default, since a run
    without a GPU proves little) whose parent is known (the start or another candidate) are
    examples. Candidates are (variant, evaluation) pairs, e.g. a SearchResult's."""
    candidates = list(candidates)
    by_key = {start.key: start, **{v.key: v for v, _ in candidates}}
    steps: list[VerifiedStep] = []
    updates: list[StatsUpdate] = []
    for variant, evaluation in candidates:
        if not variant.steps:
            continue
        parent = by_key.get(variant.steps[-1].before_hash)
        source = variant.steps[-2].method if len(variant.steps) > 1 else START
        how = how_verified(evaluation)
        how = how if how in accept else ""
        speedup = measured_speedup(evaluation) if how else None
        updates.append(StatsUpdate(source, variant.node, bool(how), speedup))
        if how and parent is not None:
            last = variant.steps[-1]
            steps.append(
                VerifiedStep(
                    program,
                    source,
                    variant.node,
                    parent.code,
                    variant.code,
                    last.think,
                    last.detail,
                    speedup,
                    how,
                    "learned",
                )
            )
    return steps, updates


def learn_from_search(
    program: str,
    start: Variant,
    candidates: Iterable[Any],
    graph_path_user: str | Path | None = None,
    accept: tuple[str, ...] = ("gpu",),
) -> ReGraph:
    """`--learn`: add what one search found (its candidates: anything with `.variant` and
    `.evaluation`, e.g. `SearchResult.candidates`) to the user graph. Steps verified by a
    way in `accept` become examples (by default only GPU-verified ones; a machine without
    a GPU may pass ("compile",): the examples then say how little was verified); every
    attempt counts in the stats when something ran."""
    pairs = [(c.variant, c.evaluation) for c in candidates]
    steps, updates = run_steps(program, start, pairs, accept)
    if not any(evaluation.ran_on_gpu for _, evaluation in pairs):
        updates = []  # nothing ran: compiled candidates are neither successes nor failures
    return learn(graph_path_user, steps, updates)
