"""Benchmark reports: results.csv, a Markdown table, a PNG plot of speedups, and the
comparison of search strategies. Rows are `cudaify.bench.BenchRow`s (plain data)."""

from __future__ import annotations

import csv
import dataclasses
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def effective_speedup(row: Any) -> float:
    """A program with no verified variant keeps its host code: it counts as 1x."""
    return row.region_speedup if row.verified and row.region_speedup else 1.0


def geomean(values: list[float]) -> float:
    values = [v for v in values if v > 0]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else float("nan")


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}g}" if abs(value) < 1000 else f"{value:.0f}"
    return str(value)


def write_csv(rows: Sequence[Any], path: Path) -> None:
    with path.open("w", newline="") as handle:
        fields = [f.name for f in dataclasses.fields(rows[0])] if rows else []
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        for row in rows:
            writer.writerow(dataclasses.asdict(row))


COLUMNS = (
    ("program", "program"),
    ("category", "category"),
    ("strategy", "strategy"),
    ("stage", "stage reached"),
    ("methods", "methods"),
    ("cpu_seconds", "CPU time (s)"),
    ("gpu_region", "GPU region (s)"),
    ("region_speedup", "region speedup"),
    ("program_speedup", "program speedup"),
    ("roofline_percent", "roofline %"),
    ("bound", "bound"),
    ("search_seconds", "search (s)"),
)

# The README's table per benchmark program (one strategy): the speedups and the roofline
README_COLUMNS = (
    ("program", "program"),
    ("category", "category"),
    ("methods", "methods"),
    ("region_speedup", "region speedup"),
    ("program_speedup", "whole-program speedup"),
    ("roofline_percent", "roofline %"),
    ("bound", "bound"),
    ("kernel", "dominant kernel"),
)


# `cudaify bench --retime`'s reading, shown only where a row has one
RETIMED = ("quiet_program_speedup", "program speedup, retimed")


def markdown(rows: Sequence[Any]) -> str:
    return _table(rows, _with_retimed(rows, COLUMNS, "program_speedup"), lambda _, v: _fmt(v))


def _with_retimed(
    rows: Sequence[Any], columns: Sequence[tuple[str, str]], after: str
) -> tuple[tuple[str, str], ...]:
    """`columns` with the retimed whole-program speedup after `after`, where a row has one."""
    if not any(getattr(row, RETIMED[0], None) is not None for row in rows):
        return tuple(columns)
    at = [name for name, _ in columns].index(after) + 1
    return (*columns[:at], RETIMED, *columns[at:])


def whole_program_geomean(rows: Sequence[Any], retimed: bool = False) -> float:
    """The geometric mean of whole-program speedups over gcc -O3 (the compile's reading,
    or `--retime`'s), a program with no verified variant, or none retimed, as 1x."""
    name = RETIMED[0] if retimed else "program_speedup"
    return geomean([(getattr(row, name, None) if row.verified else None) or 1.0 for row in rows])


def _table(rows: Sequence[Any], columns: Sequence[tuple[str, str]], cell: Any) -> str:
    lines = ["| " + " | ".join(title for _, title in columns) + " |"]
    lines.append("|" + "---|" * len(columns))
    for row in rows:
        cells = [cell(name, getattr(row, name)) for name, _ in columns]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _cell(name: str, value: Any) -> str:
    if name == "roofline_percent" and isinstance(value, float):
        return f"{value:.0f}%"
    if name.endswith("_speedup") and isinstance(value, float):
        return f"{value:.2f}x"
    text = _fmt(value) if value != "" else "-"
    return text.replace("|", "\\|")


def readme_table(rows: Sequence[Any]) -> str:
    """The README's table: per program, the region and whole-program speedups over gcc
    -O3, the kernels' roofline percentage (weighted by kernel time), the bound of the
    kernel that took the most time, and that kernel. A program with no verified variant
    shows "-" for all of them."""
    shown = [row if row.verified else dataclasses.replace(row, **_UNVERIFIED) for row in rows]
    return _table(shown, _with_retimed(shown, README_COLUMNS, "program_speedup"), _cell)


_UNVERIFIED = {
    "region_speedup": None,
    "program_speedup": None,
    "quiet_program_speedup": None,
    "roofline_percent": None,
    "bound": None,
    "kernel": "",
}


def comparison(rows: Sequence[Any]) -> str:
    """Per strategy: share correct, share faster than the CPU, geometric-mean and mean
    region speedup (a program with no verified variant counts as 1x), search time; the
    model's answers that compiled and were verified (`bench.model_answers`); and the
    programs whose written variant holds a step the language model applied, and of those,
    the ones faster than the `rules` strategy's variant of the same program ("-" without a
    rules run)."""
    strategies = list(dict.fromkeys(row.strategy for row in rows))
    rules = {row.program: row for row in rows if row.strategy == "rules"}
    lines = [
        "| strategy | programs | correct | faster than CPU | geomean region speedup "
        "| mean region speedup | mean search (s) | model answers verified / compiled "
        "| with a model step | model step, faster than rules |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for strategy in strategies:
        mine = [row for row in rows if row.strategy == strategy]
        speedups = [effective_speedup(row) for row in mine]
        correct = sum(row.verified for row in mine)
        faster = sum(1 for row in mine if row.verified and (row.region_speedup or 0) > 1.0)
        modelled = [row for row in mine if row.verified and row.model_steps > 0]
        beat = (
            str(sum(1 for row in modelled if _beats_rules(row, rules)))
            if rules and strategy != "rules"
            else "-"
        )
        lines.append(
            f"| {strategy} | {len(mine)} | {correct / len(mine):.0%} | {faster / len(mine):.0%} "
            f"| {geomean(speedups):.2f}x | {sum(speedups) / len(speedups):.2f}x "
            f"| {sum(row.search_seconds for row in mine) / len(mine):.1f} "
            f"| {sum(row.model_verified for row in mine)} / "
            f"{sum(row.model_compiled for row in mine)} "
            f"| {len(modelled)} | {beat} |"
        )
    return "\n".join(lines) + "\n"


def _beats_rules(row: Any, rules: dict[str, Any]) -> bool:
    """`row` is faster than the rules strategy's variant of its program (a program the
    rules run did not reach counts as host code there)."""
    theirs = rules.get(row.program)
    return effective_speedup(row) > (effective_speedup(theirs) if theirs else 1.0)


def node_table(rows: Sequence[Any]) -> str:
    """Per node of a `--ray` bench (the host, and the GPU its tasks held): the programs it
    ran, the seconds they took there (their whole cudaify runs, added) and its share of
    all of them; a last line with the totals. Rows without a node (the run lost them) are
    counted under "-"."""
    seconds: dict[str, float] = {}
    programs: dict[str, int] = {}
    for row in rows:
        node = row.node or "-"
        seconds[node] = seconds.get(node, 0.0) + row.wall_seconds
        programs[node] = programs.get(node, 0) + 1
    total = sum(seconds.values())
    lines = ["| node | programs | busy (s) | share |", "|---|---|---|---|"]
    for node in sorted(seconds):
        share = f"{seconds[node] / total:.0%}" if total > 0 else "-"
        lines.append(f"| {node} | {programs[node]} | {seconds[node]:.1f} | {share} |")
    lines.append(f"| total | {len(rows)} | {total:.1f} | 100% |")
    return "\n".join(lines) + "\n"


def plot(rows: Sequence[Any], path: Path) -> None:
    """Region speedup per program on a log scale, one bar group per strategy."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    programs = list(dict.fromkeys(row.program for row in rows))
    strategies = list(dict.fromkeys(row.strategy for row in rows))
    width = 0.8 / max(1, len(strategies))
    figure, axes = plt.subplots(figsize=(max(8, 0.45 * len(programs)), 4.5))
    for offset, strategy in enumerate(strategies):
        by_program = {row.program: row for row in rows if row.strategy == strategy}
        values = [effective_speedup(by_program[p]) if p in by_program else 1.0 for p in programs]
        xs = [i + offset * width for i in range(len(programs))]
        axes.bar(xs, values, width=width, label=strategy)
    axes.set_yscale("log")
    axes.axhline(1.0, color="black", linewidth=0.8)
    axes.set_xticks([i + 0.4 - width / 2 for i in range(len(programs))])
    axes.set_xticklabels(programs, rotation=70, ha="right", fontsize=8)
    axes.set_ylabel("region speedup over gcc -O3 (log)")
    if len(strategies) > 1:
        axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
