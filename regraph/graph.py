"""The reasoning graph: nodes are optimization methods, edges are validated transitions
carrying worked examples and statistics. A networkx DiGraph underneath; JSON on disk.

Format (version 3; `regraph/FORMAT.md` has the long form):
    {"format": "cudaify-regraph", "version": 3,
     "nodes": [{"name", "description", "category"}],
     "edges": [{"source", "target",
                "stats": {"visits", "successes", "mean_log_gain", "timed",
                          "how": {HOW: {"visits", "wins"}}},
                "examples": [{"program", "before": BLOB, "after": BLOB, "think", "detail",
                              "speedup", "verified", "source"}]}],
     "blobs": {BLOB: code},
     "meta": {...}}  (optional: how, when and on which GPU the graph was built)
BLOB is the sha256 of the code text: a program's code appears once in the file however
many examples refer to it (the `after` of one step is the `before` of the next).
`verified` says how a step was checked ("gpu", "compile", "" for not at all); `source`
where it came from (teacher, rule, curated, learned). An edge's statistics measure its
*gain*: the child's speedup over its parent's (the input's is 1), not over the CPU, so an
edge that makes a slow parent 5x faster ranks high however slow the parent was. `how`
(optional) splits the attempts by the way the step was made (`rule` or `slm`): how often
each way was tried and how often it won (verified and faster than its parent), which the
search reads as each way's share of the edge's prior.

Older files still load. Version 2 stored each edge's mean log-speedup over the CPU; read,
it becomes a gain: exact for the edges from `sequential` (their parent is the input), and
for the others that mean minus the mean log-speedup of the timed arrivals at the edge's
source in the same file (the parent's speedup taken as the geometric mean of how fast the
graph's walks reached that method). The edges out of one method keep their order among
themselves; where nothing timed arrives at the source, the edge keeps its counts and no
gain (`timed` 0). Version 1 files (code inline in the examples, no blobs) are read the same
way. `sequential` is the start node: the unmodified program."""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, fields, replace
from importlib import resources
from pathlib import Path
from typing import Any

import networkx as nx

FORMAT = "cudaify-regraph"
VERSION = 3
# the first version whose edge statistics hold gains over the parent, not speedups over the CPU
GAIN_VERSION = 3
START = "sequential"
VERIFIED_HOW = ("gpu", "compile", "")
HOW = ("rule", "slm")  # the ways an edge is applied, as the edge statistics split them
SOURCES = ("teacher", "rule", "curated", "learned")


class GraphFormatError(ValueError):
    """A graph file does not follow the format; the message starts with the JSON path."""


@dataclass(frozen=True)
class Example:
    program: str
    before: str
    after: str
    think: str = ""
    detail: str = ""
    speedup: float | None = None
    verified: str = ""  # how: "gpu", "compile", ""
    source: str = "rule"  # teacher | rule | curated | learned

    @property
    def key(self) -> tuple[str, str, str]:
        """Two examples with the same program and code are one example."""
        return (self.program, blob_key(self.before), blob_key(self.after))


def gain(child_speedup: float | None, parent_speedup: float | None) -> float | None:
    """What a step did: its result's speedup over the CPU divided by its parent's (the
    input program's is 1). None when either was not measured."""
    if not child_speedup or not parent_speedup or child_speedup <= 0 or parent_speedup <= 0:
        return None
    return child_speedup / parent_speedup


@dataclass(frozen=True)
class HowStats:
    """The attempts of an edge made one way (`rule` or `slm`), and its wins: the child
    verified and faster than its parent."""

    visits: int = 0
    wins: int = 0

    def plus(self, other: HowStats) -> HowStats:
        return HowStats(self.visits + other.visits, self.wins + other.wins)


@dataclass
class EdgeStats:
    visits: int = 0  # attempts of this transition
    successes: int = 0  # attempts that were verified
    # mean of ln(gain) over the `timed` successes: gain = the child's speedup / its parent's
    mean_log_gain: float = 0.0
    timed: int = 0
    # the attempts by how they were made (HOW); empty in files written before it was kept
    how: dict[str, HowStats] = field(default_factory=dict)

    def record(
        self, success: bool, gain: float | None = None, how: str = "", win: bool = False
    ) -> None:
        self.visits += 1
        if how:
            self.how[how] = self.way(how).plus(HowStats(1, int(win)))
        if not success:
            return
        self.successes += 1
        if gain is not None and gain > 0:
            self.timed += 1
            self.mean_log_gain += (math.log(gain) - self.mean_log_gain) / self.timed

    def way(self, how: str) -> HowStats:
        return self.how.get(how, HowStats())

    def combined(self, other: EdgeStats) -> EdgeStats:
        timed = self.timed + other.timed
        mean = (
            (self.mean_log_gain * self.timed + other.mean_log_gain * other.timed) / timed
            if timed
            else 0.0
        )
        ways = {how: self.way(how).plus(other.way(how)) for how in sorted({*self.how, *other.how})}
        return EdgeStats(
            self.visits + other.visits, self.successes + other.successes, mean, timed, ways
        )

    def to_json(self) -> dict[str, Any]:
        """The stats as stored; `how` only when some attempt was recorded by way (a graph
        without any keeps its bytes)."""
        data: dict[str, Any] = {
            "visits": self.visits,
            "successes": self.successes,
            "mean_log_gain": self.mean_log_gain,
            "timed": self.timed,
        }
        if self.how:
            data["how"] = {how: asdict(self.how[how]) for how in sorted(self.how)}
        return data


def now() -> str:
    """The meta's `date`: UTC, to the second."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def stamped(meta: dict[str, Any], gpu: str = "", date: str | None = None) -> dict[str, Any]:
    """`meta` saying when the graph was last built or learned (`date`) and which GPU its
    statistics were measured on (`gpu`: a name, or a sorted list once several GPUs
    contributed; left alone when this build or run measured nothing)."""
    stamp = {**meta, "date": date or now()}
    if gpu:
        stamp["gpu"] = listed(meta.get("gpu"), gpu)
    return stamp


def listed(before: str | list[str] | None, value: str) -> str | list[str]:
    """A meta value that may gather several: one string, or a sorted list once they differ
    (as `verified` says "gpu" or ["compile", "gpu"])."""
    names = sorted({*([before] if isinstance(before, str) else before or []), value})
    return names[0] if len(names) == 1 else names


@functools.lru_cache(maxsize=8192)
def blob_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


@dataclass
class ReGraph:
    graph: nx.DiGraph = field(default_factory=nx.DiGraph)
    # how the graph was built (corpus, methods, how its steps were verified); informative
    meta: dict[str, Any] = field(default_factory=dict)

    def add_method(self, name: str, description: str = "", category: str = "") -> None:
        if name not in self.graph:
            self.graph.add_node(name, description=description, category=category)
            return
        node = self.graph.nodes[name]  # fill what an earlier mention left empty
        node["description"] = node.get("description") or description
        node["category"] = node.get("category") or category

    def add_edge(self, source: str, target: str) -> None:
        for node in (source, target):
            self.add_method(node)
        if not self.graph.has_edge(source, target):
            self.graph.add_edge(source, target, examples=[], stats=EdgeStats())

    def add_example(self, source: str, target: str, example: Example) -> bool:
        """Append unless the same example is already there; True when it was added."""
        self.add_edge(source, target)
        examples = self.examples(source, target)
        if any(e.key == example.key for e in examples):
            return False
        examples.append(example)
        return True

    def successors(self, method: str) -> list[str]:
        if method not in self.graph:
            return []
        return sorted(self.graph.successors(method))

    def stats(self, source: str, target: str) -> EdgeStats:
        return self.graph.edges[source, target]["stats"]

    def examples(self, source: str, target: str) -> list[Example]:
        return self.graph.edges[source, target]["examples"]

    def edges(self) -> Iterator[tuple[str, str]]:
        yield from sorted(self.graph.edges)

    def node(self, name: str) -> dict[str, str]:
        return dict(self.graph.nodes[name])

    @property
    def methods(self) -> list[str]:
        return sorted(self.graph.nodes)

    def copy(self) -> ReGraph:
        copied = ReGraph(meta=json.loads(json.dumps(self.meta)))
        for name in self.graph.nodes:
            copied.add_method(name, **self.node(name))
        for source, target in self.edges():
            copied.add_edge(source, target)
            copied.examples(source, target).extend(self.examples(source, target))
            stats = self.stats(source, target)
            copied.graph.edges[source, target]["stats"] = replace(stats, how=dict(stats.how))
        return copied

    def to_json(self) -> dict[str, Any]:
        blobs: dict[str, str] = {}

        def stored(text: str) -> str:
            key = blob_key(text)
            blobs[key] = text
            return key

        nodes = [{"name": n, **self.node(n)} for n in sorted(self.graph.nodes)]
        edges = []
        for source, target in self.edges():
            examples = [
                {**asdict(e), "before": stored(e.before), "after": stored(e.after)}
                for e in self.examples(source, target)
            ]
            stats = self.stats(source, target).to_json()
            edges.append({"source": source, "target": target, "stats": stats, "examples": examples})
        data: dict[str, Any] = {"format": FORMAT, "version": VERSION}
        if self.meta:
            data["meta"] = self.meta
        data.update(nodes=nodes, edges=edges, blobs=dict(sorted(blobs.items())))
        return data


def dumps(graph: ReGraph) -> str:
    """One line per node and edge header would be nicer to diff, but examples hold code:
    indented JSON keeps a reviewer's diff readable enough."""
    return json.dumps(graph.to_json(), indent=1, ensure_ascii=False) + "\n"


# -- loading and validation ---------------------------------------------------------


def _require(value: Any, kind: type | tuple[type, ...], path: str) -> Any:
    if isinstance(value, bool) and kind in (int, float, (int, float)):
        raise GraphFormatError(f"{path}: expected a number, found bool")
    if not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise GraphFormatError(f"{path}: expected {names}, found {type(value).__name__}")
    return value


def _one_of(value: Any, allowed: tuple[str, ...], path: str) -> str:
    if value not in allowed:
        choices = ", ".join(repr(a) for a in allowed)
        raise GraphFormatError(f"{path}: {value!r} is not one of {choices}")
    return value


def _blobs(data: dict[str, Any], version: int) -> dict[str, str]:
    if version < 2:
        return {}
    blobs = _require(data.get("blobs", {}), dict, "$.blobs")
    for key, text in blobs.items():
        _require(text, str, f"$.blobs.{key}")
        if blob_key(text) != key:
            raise GraphFormatError(f"$.blobs.{key}: the text does not hash to its key")
    return blobs


def _code(value: Any, blobs: dict[str, str], version: int, path: str) -> str:
    text = _require(value, str, path)
    if version < 2:
        return text
    if text not in blobs:
        raise GraphFormatError(f"{path}: unknown blob '{text[:16]}'")
    return blobs[text]


_EXAMPLE_FIELDS = {f.name for f in fields(Example)}


def _example(data: Any, blobs: dict[str, str], version: int, path: str) -> Example:
    _require(data, dict, path)
    unknown = sorted(set(data) - _EXAMPLE_FIELDS)
    if unknown:
        raise GraphFormatError(f"{path}.{unknown[0]}: unknown field")
    for name in ("program", "before", "after"):
        if name not in data:
            raise GraphFormatError(f"{path}.{name}: missing")
    for name in ("program", "think", "detail"):
        _require(data.get(name, ""), str, f"{path}.{name}")
    speedup = data.get("speedup")
    if speedup is not None:
        _require(speedup, (int, float), f"{path}.speedup")
    return Example(
        program=data["program"],
        before=_code(data["before"], blobs, version, f"{path}.before"),
        after=_code(data["after"], blobs, version, f"{path}.after"),
        think=data.get("think", ""),
        detail=data.get("detail", ""),
        speedup=None if speedup is None else float(speedup),
        verified=_one_of(data.get("verified", ""), VERIFIED_HOW, f"{path}.verified"),
        source=_one_of(data.get("source", "rule"), SOURCES, f"{path}.source"),
    )


def _stats(data: Any, version: int, path: str) -> EdgeStats:
    """An edge's stats; before GAIN_VERSION the mean is of speedups over the CPU, held in
    `mean_log_gain` until `_gains_from_speedups` has read the whole graph."""
    _require(data, dict, path)
    mean_name = "mean_log_gain" if version >= GAIN_VERSION else "mean_log_speedup"
    allowed = {"visits", "successes", "timed", mean_name, "how"}
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise GraphFormatError(f"{path}.{unknown[0]}: unknown field")
    for name in ("visits", "successes", "timed"):
        if _require(data.get(name, 0), int, f"{path}.{name}") < 0:
            raise GraphFormatError(f"{path}.{name}: negative")
    mean = _require(data.get(mean_name, 0.0), (int, float), f"{path}.{mean_name}")
    stats = EdgeStats(data.get("visits", 0), data.get("successes", 0), float(mean))
    stats.timed = data.get("timed", 0)
    if stats.successes > stats.visits:
        raise GraphFormatError(f"{path}.successes: more than visits ({stats.visits})")
    stats.how = _how_stats(data.get("how", {}), f"{path}.how")
    return stats


def _how_stats(data: Any, path: str) -> dict[str, HowStats]:
    """An edge's attempts by way; absent (older files): none recorded."""
    _require(data, dict, path)
    ways: dict[str, HowStats] = {}
    for how in sorted(data):
        at = f"{path}.{_one_of(how, HOW, path)}"
        counts = _require(data[how], dict, at)
        unknown = sorted(set(counts) - {"visits", "wins"})
        if unknown:
            raise GraphFormatError(f"{at}.{unknown[0]}: unknown field")
        for name in ("visits", "wins"):
            if _require(counts.get(name, 0), int, f"{at}.{name}") < 0:
                raise GraphFormatError(f"{at}.{name}: negative")
        ways[how] = HowStats(counts.get("visits", 0), counts.get("wins", 0))
        if ways[how].wins > ways[how].visits:
            raise GraphFormatError(f"{at}.wins: more than visits ({ways[how].visits})")
    return ways


def _gains_from_speedups(graph: ReGraph) -> None:
    """A version 1 or 2 graph's means (of ln speedup over the CPU) as gains over the parent:
    an edge from `sequential` as it is (its parent is the input); another edge less the
    mean over the timed arrivals at its source (weighted by `timed`), which keeps the order
    of a method's out-edges; an edge whose source no timed edge reaches keeps no gain."""
    arrival: dict[str, float | None] = {}
    for method in graph.methods:
        into = [graph.stats(s, method) for s in graph.graph.predecessors(method)]
        timed = sum(stats.timed for stats in into)
        mean = sum(stats.mean_log_gain * stats.timed for stats in into) / timed if timed else None
        arrival[method] = mean
    for source, target in graph.edges():
        if source == START:
            continue
        stats = graph.stats(source, target)
        parent = arrival[source]
        if parent is None:
            stats.mean_log_gain, stats.timed = 0.0, 0
        else:
            stats.mean_log_gain -= parent


def _load_nodes(graph: ReGraph, nodes: Any) -> None:
    for i, node in enumerate(_require(nodes, list, "$.nodes")):
        _require(node, dict, f"$.nodes[{i}]")
        name = _require(node.get("name"), str, f"$.nodes[{i}].name")
        if name in graph.graph:
            raise GraphFormatError(f"$.nodes[{i}].name: '{name}' appears twice")
        description = _require(node.get("description", ""), str, f"$.nodes[{i}].description")
        category = _require(node.get("category", ""), str, f"$.nodes[{i}].category")
        graph.add_method(name, description, category)


def _load_edge(graph: ReGraph, edge: Any, blobs: dict[str, str], version: int, at: str) -> None:
    _require(edge, dict, at)
    source = _require(edge.get("source"), str, f"{at}.source")
    target = _require(edge.get("target"), str, f"{at}.target")
    for end, name in (("source", source), ("target", target)):
        if name not in graph.graph:
            raise GraphFormatError(f"{at}.{end}: unknown method '{name}'")
    if graph.graph.has_edge(source, target):
        raise GraphFormatError(f"{at}: the edge {source} -> {target} appears twice")
    graph.add_edge(source, target)
    examples = _require(edge.get("examples", []), list, f"{at}.examples")
    for j, example in enumerate(examples):
        graph.add_example(source, target, _example(example, blobs, version, f"{at}.examples[{j}]"))
    stats = _stats(edge.get("stats", {}), version, f"{at}.stats")
    graph.graph.edges[source, target]["stats"] = stats


def from_json(data: Any) -> ReGraph:
    """Validate and load (version 1, 2 or 3); the first problem is reported with its JSON
    path. An older file's statistics are read as gains (the module's docstring says how)."""
    _require(data, dict, "$")
    if data.get("format") != FORMAT:
        raise GraphFormatError(f"$.format: expected '{FORMAT}'")
    version = data.get("version")
    if version not in range(1, VERSION + 1) or isinstance(version, bool):
        raise GraphFormatError(f"$.version: unsupported version {version!r} (1 to {VERSION})")
    blobs = _blobs(data, version)
    graph = ReGraph(meta=dict(_require(data.get("meta", {}), dict, "$.meta")))
    _load_nodes(graph, data.get("nodes"))
    for i, edge in enumerate(_require(data.get("edges"), list, "$.edges")):
        _load_edge(graph, edge, blobs, version, f"$.edges[{i}]")
    if START not in graph.graph:
        raise GraphFormatError(f"$.nodes: the start node '{START}' is missing")
    if version < GAIN_VERSION:
        _gains_from_speedups(graph)
    return graph


def load(path: str | Path) -> ReGraph:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise GraphFormatError(f"$: cannot read {path}: {exc.strerror or exc}") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise GraphFormatError(f"$: not JSON ({exc})") from exc
    return from_json(data)


def save(graph: ReGraph, path: str | Path) -> None:
    """Write beside the target, then rename: an interrupted save never leaves half a graph."""
    target = Path(path)
    fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(dumps(graph))
        os.chmod(temp, _file_mode(target))  # mkstemp's 0600 would hide a shipped graph
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def _file_mode(target: Path) -> int:
    if target.exists():
        return target.stat().st_mode & 0o777
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def default_graph_text() -> str:
    return resources.files("cudaify.regraph").joinpath("data/default.json").read_text()


def default_graph() -> ReGraph:
    """The graph shipped with the package (read-only)."""
    return from_json(json.loads(default_graph_text()))
