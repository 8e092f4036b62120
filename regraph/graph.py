"""The reasoning graph: nodes are optimization methods, edges are validated transitions
carrying worked examples and statistics. A networkx DiGraph underneath; JSON on disk.

Format (version 1):
    {"format": "cudaify-regraph", "version": 1,
     "nodes": [{"name", "description", "category"}],
     "edges": [{"source", "target", "examples": [Example...], "stats": {"visits",
                "successes", "mean_log_speedup"}}]}
`sequential` is the start node: the unmodified program."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import networkx as nx

FORMAT = "cudaify-regraph"
VERSION = 1
START = "sequential"


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


@dataclass
class EdgeStats:
    visits: int = 0
    successes: int = 0
    mean_log_speedup: float = 0.0


@dataclass
class ReGraph:
    graph: nx.DiGraph = field(default_factory=nx.DiGraph)

    def add_method(self, name: str, description: str = "", category: str = "") -> None:
        if name not in self.graph:
            self.graph.add_node(name, description=description, category=category)

    def add_edge(self, source: str, target: str) -> None:
        for node in (source, target):
            self.add_method(node)
        if not self.graph.has_edge(source, target):
            self.graph.add_edge(source, target, examples=[], stats=EdgeStats())

    def successors(self, method: str) -> list[str]:
        if method not in self.graph:
            return []
        return sorted(self.graph.successors(method))

    def stats(self, source: str, target: str) -> EdgeStats:
        return self.graph.edges[source, target]["stats"]

    def examples(self, source: str, target: str) -> list[Example]:
        return self.graph.edges[source, target]["examples"]

    @property
    def methods(self) -> list[str]:
        return sorted(self.graph.nodes)

    def to_json(self) -> dict[str, Any]:
        nodes = [{"name": n, **self.graph.nodes[n]} for n in sorted(self.graph.nodes)]
        edges = [
            {
                "source": s,
                "target": t,
                "examples": [asdict(e) for e in data["examples"]],
                "stats": asdict(data["stats"]),
            }
            for s, t, data in sorted(self.graph.edges(data=True), key=lambda e: (e[0], e[1]))
        ]
        return {"format": FORMAT, "version": VERSION, "nodes": nodes, "edges": edges}


def _require(value: Any, kind: type | tuple[type, ...], path: str) -> Any:
    if not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise GraphFormatError(f"{path}: expected {names}, found {type(value).__name__}")
    return value


def from_json(data: Any) -> ReGraph:
    """Validate and load; the first problem is reported with its JSON path."""
    _require(data, dict, "$")
    if data.get("format") != FORMAT:
        raise GraphFormatError(f"$.format: expected '{FORMAT}'")
    if data.get("version") != VERSION:
        raise GraphFormatError(f"$.version: unsupported version {data.get('version')!r}")
    graph = ReGraph()
    for i, node in enumerate(_require(data.get("nodes"), list, "$.nodes")):
        _require(node, dict, f"$.nodes[{i}]")
        name = _require(node.get("name"), str, f"$.nodes[{i}].name")
        graph.add_method(name, str(node.get("description", "")), str(node.get("category", "")))
    for i, edge in enumerate(_require(data.get("edges"), list, "$.edges")):
        where = f"$.edges[{i}]"
        _require(edge, dict, where)
        source = _require(edge.get("source"), str, f"{where}.source")
        target = _require(edge.get("target"), str, f"{where}.target")
        for end, name in (("source", source), ("target", target)):
            if name not in graph.graph:
                raise GraphFormatError(f"{where}.{end}: unknown method '{name}'")
        graph.add_edge(source, target)
        for j, example in enumerate(_require(edge.get("examples", []), list, f"{where}.examples")):
            _require(example, dict, f"{where}.examples[{j}]")
            try:
                graph.examples(source, target).append(Example(**example))
            except TypeError as exc:
                raise GraphFormatError(f"{where}.examples[{j}]: {exc}") from exc
        stats = _require(edge.get("stats", {}), dict, f"{where}.stats")
        try:
            graph.graph.edges[source, target]["stats"] = EdgeStats(**stats)
        except TypeError as exc:
            raise GraphFormatError(f"{where}.stats: {exc}") from exc
    if START not in graph.graph:
        raise GraphFormatError(f"$.nodes: the start node '{START}' is missing")
    return graph


def load(path: str | Path) -> ReGraph:
    try:
        data = json.loads(Path(path).read_text())
    except json.JSONDecodeError as exc:
        raise GraphFormatError(f"$: not JSON ({exc})") from exc
    return from_json(data)


def default_graph() -> ReGraph:
    """The graph shipped with the package (read-only)."""
    text = resources.files("cudaify.regraph").joinpath("data/default.json").read_text()
    return from_json(json.loads(text))
