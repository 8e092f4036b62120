"""The trace for people: as text (`--explain`) and as a picture (`cudaify trace render`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def _speedup(value: float | None) -> str:
    return f"{value:.2f}x" if value else "-"


def explain(trace: dict[str, Any]) -> str:
    """What was chosen and why, then what else the search tried."""
    lines = [f"input: {trace['input']}", f"strategy: {trace['strategy']}"]
    chosen = trace.get("chosen") or []
    if not chosen:
        lines.append("chosen: nothing (the output is the input as host code)")
    for number, step in enumerate(chosen, 1):
        lines.append(
            f"  {number}. {step['method']} by {step['applied_by']}: reached {step.get('stage')}, "
            f"region speedup {_speedup(step.get('region_speedup'))}"
            + (f" — {step['detail']}" if step.get("detail") else "")
        )
    verified = "verified on the GPU" if trace.get("verified") else "not verified"
    lines.append(f"result: {verified}")
    timing = trace.get("timing")
    if timing:
        cpu = timing["reference"].get("region") or 0.0
        gpu = timing["candidate"].get("region") or 0.0
        speedup = _speedup(timing["region_speedup"])
        lines.append(f"region: {cpu:.4f} s on the CPU, {gpu:.4f} s on the GPU ({speedup})")
    search = trace.get("search", {})
    stages = ", ".join(f"{k} {v}" for k, v in sorted(search.get("stages", {}).items()))
    lines.append(
        f"search: {search.get('states', 0)} states, {search.get('iterations', 0)} iterations, "
        f"{search.get('seconds', 0):.1f} s ({stages or 'no candidates'})"
    )
    for state in search.get("graph", []):
        path = " -> ".join(state["methods"]) or "sequential"
        lines.append(
            f"  {path}: {state['stage']}, reward {state['reward']:+.3f}, "
            f"value {state['value']:+.3f}, {state['visits']} visits"
        )
    for skipped in trace.get("skipped", []):
        lines.append(f"  not applied: {skipped['method']}: {skipped['reason']}")
    return "\n".join(lines) + "\n"


def render(trace: dict[str, Any], output: str | Path) -> Path:
    """Draw the explored states (graphviz): the chosen path in bold, failed states grey."""
    import graphviz

    output = Path(output)
    fmt = output.suffix.lstrip(".") or "svg"
    dot = graphviz.Digraph("search", format=fmt, graph_attr={"rankdir": "LR"})
    chosen_after = {step["after"] for step in trace.get("chosen", [])}
    states = trace.get("search", {}).get("graph", [])
    for state in states:
        label = " → ".join(state["methods"]) or "sequential"
        failed = state["stage"] in ("none", "parse", "structure")
        dot.node(
            state["key"],
            f"{label}\n{state['stage']}  r={state['reward']:+.2f}  n={state['visits']}",
            shape="box",
            style="bold" if state["key"] in chosen_after else ("dashed" if failed else "solid"),
            color="grey" if failed else "black",
        )
    for state in states:
        for edge in state.get("edges", []):
            if edge.get("child"):
                dot.edge(
                    state["key"],
                    edge["child"],
                    label=f"{edge['method']} ({edge['how']}) n={edge['visits']}",
                    penwidth=str(1 + edge["visits"]),
                )
    target = output.with_suffix("")
    rendered = dot.render(filename=target.name, directory=str(target.parent), cleanup=True)
    return Path(rendered)
