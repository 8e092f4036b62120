"""The trace for people: as text (`--explain`) and as a picture (`cudaify trace render`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def _speedup(value: float | None) -> str:
    return f"{value:.2f}x" if value else "-"


def close_call_text(record: dict[str, Any]) -> str:
    """A trace's `close_call` in a few words ("" for none): its reading, and what its turns
    with gcc -O3's build read, or why there were none."""
    if "read" not in record:
        return ""
    if record.get("runs"):
        turned = record["reference"] / record["program"]
        return f"{record['read']:.2f}x -> {turned:.2f}x in {record['runs']} turns"
    return f"{record['read']:.2f}x, not timed in turns: {record.get('not_timed', '')}"


def _reading(reading: dict[str, Any]) -> str:
    """One finalist reading: the whole program (CUDA's start at its least where measured
    so), the region, the runs."""
    whole = reading.get("program_speedup") or reading.get("steady_speedup")
    runs = reading.get("runs", 0)
    return (
        f"{_speedup(whole)} (region {_speedup(reading.get('region_speedup'))}, "
        f"{runs} run{'s' if runs != 1 else ''})"
    )


def _finalists(finalists: list[dict[str, Any]]) -> list[str]:
    """The trace's `finalists`: each one's readings by the search and timed alone."""
    if not finalists:
        return []
    lines = ["finalists, timed with the GPU alone in this order (whole program):"]
    for finalist in finalists:
        path = " -> ".join(finalist["methods"]) or "sequential"
        line = f"  {path}: the search read {_reading(finalist['screened'])}"
        if finalist.get("why_not"):
            lines.append(f"{line}; not timed: {finalist['why_not']}")
        else:
            timed = _reading(finalist["timed"])
            lines.append(f"{line}, timed {timed} in {finalist['seconds']:.1f} s")
    return lines


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
        if timing.get("program_speedup"):
            lines.append(f"whole program: {_speedup(timing['program_speedup'])} over gcc -O3")
    lines.extend(_finalists(trace.get("finalists") or []))
    close_call = close_call_text(trace.get("close_call") or {})
    if close_call:
        lines.append(f"close call: {close_call}")
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
