"""The README's roofline table from a `cudaify bench` run: per program, the region and
whole-program speedups over gcc -O3, the kernels' roofline percentage, the bound and the
kernel that took the most time.

    python scripts/roofline_table.py bench-results/roofline [--strategy mcgs] [-o FILE]

Reads FOLDER/results.csv (written by `cudaify bench ... -o FOLDER`), keeps one strategy's
rows (the first in the file unless --strategy), and writes the Markdown table to
FOLDER/roofline.md (or -o), also printing it. Then the lines of the GPU's measured roofs
(bandwidth, fp32 and fp64 peaks) from the cache, where found, and the share of memory- and
compute-bound programs that reach the issue's marks (memory >= 70% of the copy
bandwidth, compute >= 25% of the peak). `make bench-roofline` runs the bench and this."""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

from cudaify.backend.cache import Cache
from cudaify.backend.report import readme_table, whole_program_geomean
from cudaify.bench import BenchRow

# The marks (issue 18): memory-bound kernels at 70% of the measured copy
# bandwidth, gemm-class (compute-bound) ones at 25% of the non-tensor-core peak
MARKS = {"memory": 70.0, "compute": 25.0}


def read_rows(path: Path) -> list[BenchRow]:
    fields = {f.name: f for f in dataclasses.fields(BenchRow)}
    rows = []
    with path.open(newline="") as handle:
        for line in csv.DictReader(handle):
            values = {name: _typed(fields[name].type, text) for name, text in line.items()}
            rows.append(BenchRow(**{k: v for k, v in values.items() if k in fields}))
    return rows


def _typed(kind: Any, text: str | None) -> Any:
    spelled = str(kind)
    if text is None or (text == "" and "None" in spelled):
        return None
    if spelled.startswith("bool"):
        return text == "True"
    if spelled.startswith("float"):
        return float(text)
    if spelled.startswith("int"):
        return int(text)
    return text


def marks(rows: list[BenchRow]) -> str:
    """Per bound: how many verified programs reach the issue's mark."""
    lines = []
    for bound, mark in MARKS.items():
        mine = [r for r in rows if r.verified and r.bound == bound and r.roofline_percent]
        reached = sum(1 for r in mine if (r.roofline_percent or 0.0) >= mark)
        lines.append(f"- {bound}-bound: {reached} of {len(mine)} at or above {mark:.0f}%")
    lines.append(
        f"- whole program: geometric mean {whole_program_geomean(rows):.2f}x over the "
        f"{len(rows)} (1x for a program kept as host code)"
    )
    retimed = [r for r in rows if r.verified and r.quiet_program_speedup is not None]
    if retimed:
        slower = sum(1 for r in retimed if (r.quiet_program_speedup or 0.0) < 1.0)
        mean = whole_program_geomean(rows, retimed=True)
        lines.append(
            f"- whole program, retimed: geometric mean {mean:.2f}x over the {len(rows)} "
            f"({len(retimed)} retimed, 1x for the others), {slower} of them slower than gcc -O3"
        )
    return "\n".join(lines) + "\n"


def measured_roofs(cache: Path) -> str:
    """The roofs the cache holds (one line per GPU and probe), "" where none."""
    folder = cache / "bandwidth"
    lines = []
    for path in sorted(folder.glob("*/*")) if folder.is_dir() else []:
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if "bytes_per_second" in data:
            lines.append(f"- {data['gpu']}: copy {data['bytes_per_second'] / 1e9:.0f} GB/s")
        elif "fp32" in data:
            lines.append(
                f"- {data['gpu']}: fp32 {data['fp32'] / 1e12:.1f} TFLOP/s, "
                f"fp64 {data['fp64'] / 1e12:.1f} TFLOP/s"
            )
    return "\n".join(lines) + "\n" if lines else ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--strategy")
    parser.add_argument("-o", "--output", type=Path)
    parser.add_argument("--cache", type=Path, help="cudaify's cache folder (default: the user's)")
    options = parser.parse_args(argv)
    results = options.folder / "results.csv"
    if not results.is_file():
        print(f"{results}: not found (run cudaify bench -o {options.folder} first)")
        return 2
    rows = read_rows(results)
    strategy = options.strategy or (rows[0].strategy if rows else "")
    rows = [r for r in rows if r.strategy == strategy]
    text = f"Strategy {strategy}, {len(rows)} programs.\n\n" + readme_table(rows)
    text += "\n" + marks(rows)
    roofs = measured_roofs(options.cache or Cache.default().root)
    text += "\nMeasured roofs:\n" + roofs if roofs else ""
    output = options.output or options.folder / "roofline.md"
    output.write_text(text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
