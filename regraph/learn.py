"""Learning from use: what runs measured and verified goes into the user's files, beside
each other in `platformdirs.user_data_dir("cudaify")`; the shipped graph stays read-only.
The graph a run searches is the shipped one merged with both.

- `edge-stats.json`: the edge statistics (attempts, successes, mean log gain over the
  parent, and per way, rule or slm, the attempts and wins: verified and faster than the
  parent) of every compile that ran on a GPU, unless `learn_stats` is off. Cheap (a small
  file, rewritten under a lock) and outside the result cache's key: every GPU compile
  changes it, and a key over it would miss for every other input after each compile.
- `graph.json`: with `--learn`, the verified steps as worked examples (source `learned`).
  They change what the model is shown, so this file is in the result cache's key; it is
  rewritten only when a run added an example.

Both hold only what runs added (examples, and stats as increments), so merging them into a
newer shipped graph after an upgrade counts nothing twice. Both meta say when they were
last written (`date`) and on which GPU (`gpu`). Parallel compiles (`make -j`) learn into
one file safely: each update is a read-modify-write under an exclusive lock, and the file is
replaced by an atomic rename, so readers never see half of it."""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cudaify.core import Evaluation, Variant
from cudaify.regraph import user_graph_path, user_stats_path
from cudaify.regraph.build import (
    VerifiedStep,
    how_verified,
    measured_speedup,
    merge,
    merge_steps,
    step_gain,
)
from cudaify.regraph.graph import (
    HOW,
    START,
    GraphFormatError,
    ReGraph,
    default_graph,
    listed,
    load,
    save,
    stamped,
)
from cudaify.regraph.relabel import describe

log = logging.getLogger("cudaify")


@dataclass(frozen=True)
class StatsUpdate:
    """One attempt of an edge during a run, with its gain over its parent when measured."""

    source: str
    target: str
    success: bool
    gain: float | None = None
    how: str = ""  # how the step was made: "rule" or "slm" ("": not said)
    win: bool = False  # verified and faster than its parent (gain above 1)


@dataclass(frozen=True)
class Learned:
    """What a run wrote: the user's examples graph and statistics, each None when the run
    learned nothing of that kind."""

    examples: ReGraph | None = None
    statistics: ReGraph | None = None


def _user_graph(path: Path) -> ReGraph:
    if not path.exists():
        graph = ReGraph()
        graph.add_method(START, *describe(START))
        return graph
    try:
        return load(path)
    except GraphFormatError as exc:
        raise GraphFormatError(f"{exc} (in {path}; delete it to start a fresh user graph)") from exc


def learn_examples(
    verified_steps: Iterable[VerifiedStep], graph_path_user: str | Path | None = None, gpu: str = ""
) -> ReGraph:
    """`--learn`: the verified steps as `learned` examples of the user graph at
    `graph_path_user` (None: the default place); returns it. The file is written only when a
    step was new there (its bytes, and so the result cache's key, stay otherwise)."""
    path = Path(graph_path_user) if graph_path_user is not None else user_graph_path()
    steps = [dataclasses.replace(s, origin="learned") for s in verified_steps if s.ok]
    if not steps:
        return _user_graph(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _locked(path):  # `make -j` runs several compiles that learn into one file
        before = _user_graph(path)
        graph = merge_steps(before, steps, count=False)
        if _example_keys(graph) == _example_keys(before) and path.exists():
            return graph
        on_gpu = gpu if any(s.verified == "gpu" for s in steps) else ""
        graph.meta = stamped(graph.meta, on_gpu)
        save(graph, path)
    log.info("learned this run's verified steps into %s", path)
    return graph


def _example_keys(graph: ReGraph) -> set[tuple[str, str, tuple[str, str, str]]]:
    return {(s, t, e.key) for s, t in graph.edges() for e in graph.examples(s, t)}


def learn_statistics(
    stats_updates: Iterable[StatsUpdate],
    stats_path: str | Path | None = None,
    gpu: str = "",
    objective: str = "program",
) -> ReGraph | None:
    """One run's attempts into the user's edge statistics at `stats_path` (None: the
    default place); returns them (None when there was nothing to record). The meta counts
    the `runs` and says the last `date`, the `gpu` and the `objective` the gains were
    measured by."""
    updates = list(stats_updates)
    if not updates:
        return None
    path = Path(stats_path) if stats_path is not None else user_stats_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with _locked(path):
        graph = _user_graph(path)
        for update in updates:
            for name in (update.source, update.target):
                graph.add_method(name, *describe(name))
            graph.add_edge(update.source, update.target)
            stats = graph.stats(update.source, update.target)
            stats.record(update.success, update.gain, update.how, update.win)
        meta = stamped(graph.meta, gpu)
        meta["runs"] = int(meta.get("runs", 0)) + 1
        meta["objective"] = listed(meta.get("objective"), objective)
        graph.meta = meta
        save(graph, path)
    log.debug("recorded this run's edge statistics in %s", path)
    return graph


def gpu_name() -> str:
    """The GPU this process times on, by name, for a graph's meta ("" without one); the
    names of all, where CUDA_VISIBLE_DEVICES leaves different kinds."""
    from cudaify.backend.gpu import detect_gpus

    return ", ".join(sorted({gpu.name for gpu in detect_gpus()}))


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path.with_name(path.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def load_active_graph(user_path: str | Path | None = None) -> ReGraph:
    """The shipped graph, merged with the user graph and the learned statistics beside it
    (`user_path`: that graph's path; None: the default place) where there are some."""
    path = Path(user_path) if user_path is not None else user_graph_path()
    graph = default_graph()
    for learned in (path, user_stats_path(path)):
        if learned.exists():
            graph = merge(graph, _user_graph(learned))
    return graph


def run_steps(
    program: str,
    start: Variant,
    candidates: Iterable[tuple[Variant, Evaluation]],
    accept: tuple[str, ...] = ("gpu",),
    objective: str = "program",
) -> tuple[list[VerifiedStep], list[StatsUpdate]]:
    """What a search run teaches: every evaluated candidate is an attempt of the edge that
    made it; those verified (by a way in `accept`: a GPU run, by default, since a run
    without a GPU proves little) whose parent is known (the start or another candidate) are
    examples. A verified attempt's gain is its speedup over its parent's by `objective`
    (the start's is 1; unknown when the parent was not run, as a stepping stone is not).
    Candidates are (variant, evaluation) pairs, e.g. a SearchResult's."""
    candidates = list(candidates)
    by_key = {start.key: start, **{v.key: v for v, _ in candidates}}
    evaluations = {v.key: e for v, e in candidates}
    steps: list[VerifiedStep] = []
    updates: list[StatsUpdate] = []
    for variant, evaluation in candidates:
        if not variant.steps:
            continue
        before = variant.steps[-1].before_hash
        parent = by_key.get(before)
        source = variant.steps[-2].method if len(variant.steps) > 1 else START
        how = how_verified(evaluation)
        how = how if how in accept else ""
        speedup = measured_speedup(evaluation) if how else None
        gain = None
        if how == "gpu" and (before == start.key or before in evaluations):
            parent_evaluation = None if before == start.key else evaluations[before]
            gain = step_gain(evaluation, parent_evaluation, objective)
        last = variant.steps[-1]
        win = gain is not None and gain > 1.0
        way = last.applied_by if last.applied_by in HOW else ""
        updates.append(StatsUpdate(source, variant.node, bool(how), gain, way, win))
        if how and parent is not None:
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
                    gain=gain,
                )
            )
    return steps, updates


def learn_from_search(
    program: str,
    start: Variant,
    candidates: Iterable[Any],
    graph_path_user: str | Path | None = None,
    accept: tuple[str, ...] = ("gpu",),
    *,
    examples: bool = True,
    statistics: bool = True,
    objective: str = "program",
    gpu: str = "",
) -> Learned:
    """What one search found (its candidates: anything with `.variant` and `.evaluation`,
    e.g. `SearchResult.candidates`) into the user's files (`graph_path_user`, and the
    statistics beside it). `examples` (`--learn`): steps verified by a way in `accept`
    become examples (by default only GPU-verified ones; a machine without a GPU may pass
    ("compile",): the examples then say how little was verified). `statistics`: every
    attempt counts, when something ran on a GPU (`gpu` names it)."""
    pairs = [(c.variant, c.evaluation) for c in candidates]
    steps, updates = run_steps(program, start, pairs, accept, objective)
    learned = Learned()
    if examples:
        graph = learn_examples(steps, graph_path_user, gpu)
        learned = dataclasses.replace(learned, examples=graph)
    # nothing ran: compiled candidates are neither successes nor failures
    if statistics and any(evaluation.ran_on_gpu for _, evaluation in pairs):
        path = user_stats_path(Path(graph_path_user)) if graph_path_user is not None else None
        try:
            graph = learn_statistics(updates, path, gpu, objective)
        except OSError as exc:  # on by default: a read-only home must not fail the compile
            log.warning("could not record the edge statistics: %s", exc)
            return learned
        learned = dataclasses.replace(learned, statistics=graph)
    return learned
