"""Looking at a graph: counts, one method's neighbourhood as text, a picture (graphviz)."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path
from typing import Any

from cudaify.regraph.graph import START, ReGraph


def stats(graph: ReGraph) -> dict[str, Any]:
    """{"nodes", "edges", "examples", "methods", "examples_per_method", "sources",
    "verified"}: examples per method counts the examples on the edges into it."""
    per_method: Counter[str] = Counter({m: 0 for m in graph.methods if m != START})
    sources: Counter[str] = Counter()
    verified: Counter[str] = Counter()
    for source, target in graph.edges():
        for example in graph.examples(source, target):
            per_method[target] += 1
            sources[example.source] += 1
            verified[example.verified or "no"] += 1
    return {
        "nodes": graph.graph.number_of_nodes(),
        "edges": graph.graph.number_of_edges(),
        "examples": sum(per_method.values()),
        "methods": graph.methods,
        "examples_per_method": dict(sorted(per_method.items())),
        "sources": dict(sorted(sources.items())),
        "verified": dict(sorted(verified.items())),
        "built": graph.meta,
    }


def format_stats(summary: dict[str, Any]) -> str:
    lines = [
        f"nodes {summary['nodes']}, edges {summary['edges']}, examples {summary['examples']}",
        "methods: " + ", ".join(summary["methods"]),
        "examples per method: "
        + ", ".join(f"{m} {n}" for m, n in summary["examples_per_method"].items()),
        "sources: " + (", ".join(f"{s} {n}" for s, n in summary["sources"].items()) or "-"),
        "verified: " + (", ".join(f"{s} {n}" for s, n in summary["verified"].items()) or "-"),
    ]
    built = summary.get("built") or {}
    if built:
        lines.append(measured_line(built))
        lines.append("built: " + ", ".join(f"{k} {v}" for k, v in built.items()))
    return "\n".join(lines)


def measured_line(meta: dict[str, Any]) -> str:
    """When a graph was built or learned, and on which GPU its statistics were measured."""
    gpu = meta.get("gpu")
    on = ", ".join(gpu) if isinstance(gpu, list) else gpu
    if on:
        where = f"statistics measured on {on}"
    elif "gpu" in str(meta.get("verified", "")):
        where = "statistics measured on a GPU not recorded"
    else:
        where = "no statistics measured on a GPU"
    return f"date {meta.get('date') or 'not recorded'}, {where}"


def _edge_line(graph: ReGraph, source: str, target: str) -> str:
    s = graph.stats(source, target)
    speedup = f", mean gain {math.exp(s.mean_log_gain):.2f}x over its parent" if s.timed else ""
    count = len(graph.examples(source, target))
    return f"  {source} -> {target}: {count} example(s), {s.successes}/{s.visits} verified{speedup}"


def show(graph: ReGraph, method: str) -> str:
    """A method's description, its edges in and out with their stats, and its examples."""
    if method not in graph.graph:
        raise KeyError(method)
    node = graph.node(method)
    lines = [f"{method} [{node.get('category') or '-'}]: {node.get('description') or '-'}"]
    incoming = sorted(graph.graph.predecessors(method))
    lines.append("from:" if incoming else "from: (none)")
    lines += [_edge_line(graph, source, method) for source in incoming]
    outgoing = graph.successors(method)
    lines.append("to:" if outgoing else "to: (none)")
    lines += [_edge_line(graph, method, target) for target in outgoing]
    examples = [(s, e) for s in incoming for e in graph.examples(s, method)]
    if examples:
        lines.append("examples:")
    for source, example in examples:
        speedup = f" {example.speedup:.2f}x" if example.speedup else ""
        how = example.verified or "unverified"
        summary = example.detail or example.think or ""
        origin = f"from {source}, {example.source}, {how}{speedup}"
        lines.append(f"  {example.program} ({origin}) {summary}".rstrip())
    return "\n".join(lines)


def _node_visits(graph: ReGraph, method: str) -> int:
    """Walks through a method: the visits of the edges into it (out of it, for the start)."""
    if method == START:
        return sum(graph.stats(method, t).visits for t in graph.graph.successors(method))
    return sum(graph.stats(s, method).visits for s in graph.graph.predecessors(method))


# node fill by the method's category (the kind of change it makes)
CATEGORY_COLOURS = {
    "start": "#f2f2f2",
    "mapping": "#cfe2f3",
    "pattern": "#d9d2e9",
    "memory": "#d9ead3",
    "compute": "#fce5cd",
    "launch": "#fff2cc",
}


def _title(graph: ReGraph) -> str:
    count = sum(len(graph.examples(s, t)) for s, t in graph.edges())
    how = graph.meta.get("verified")
    checked = ", ".join(how) if isinstance(how, list) else (how or "unknown")
    return (
        f"cudaify reasoning graph: {len(graph.methods)} methods, "
        f"{graph.graph.number_of_edges()} transitions, {count} examples (verified: {checked})\n"
        "node size: walks through the method; edge width and label: verified / attempted "
        "transitions; colour: mapping (blue), parallel pattern (violet), memory (green), "
        "compute (orange), launch (yellow)"
    )


def to_dot(graph: ReGraph) -> Any:
    """The graph as a graphviz Digraph: node size by visits, edge width by successes,
    nodes coloured by category, laid out left to right from `sequential`."""
    import graphviz

    dot = graphviz.Digraph(
        "regraph",
        graph_attr={
            "rankdir": "LR",
            "ranksep": "1.1",
            "nodesep": "0.35",
            "splines": "true",
            "fontname": "Helvetica",
            "fontsize": "14",
            "labelloc": "t",
            "label": _title(graph),
        },
        node_attr={"fontname": "Helvetica", "style": "filled", "color": "#555555"},
        edge_attr={"fontname": "Helvetica", "fontsize": "9", "color": "#00000099"},
    )
    most = max([_node_visits(graph, m) for m in graph.methods] + [1])
    for method in graph.methods:
        visits = _node_visits(graph, method)
        scale = 1.1 + 1.4 * math.sqrt(visits / most)
        shape = "doublecircle" if method == START else "circle"
        category = graph.node(method).get("category") or ("start" if method == START else "")
        dot.node(
            method,
            f"{method}\n{visits}",
            shape=shape,
            width=f"{scale:.2f}",
            fixedsize="true",
            fontsize="11",
            fillcolor=CATEGORY_COLOURS.get(category, "#ffffff"),
        )
    best = max([graph.stats(s, t).successes for s, t in graph.edges()] + [1])
    for source, target in graph.edges():
        s = graph.stats(source, target)
        width = 0.5 + 4.5 * s.successes / best
        dot.edge(source, target, label=f"{s.successes}/{s.visits}", penwidth=f"{width:.2f}")
    return dot


def render(graph: ReGraph, path: str | Path) -> Path:
    """Draw the graph to `path`; the format comes from the suffix (.svg, .png, .pdf, .dot)."""
    path = Path(path)
    fmt = path.suffix.lstrip(".").lower() or "svg"
    dot = to_dot(graph)
    if fmt in ("dot", "gv"):
        path.write_text(dot.source)
        return path
    path.write_bytes(dot.pipe(format=fmt))
    return path
