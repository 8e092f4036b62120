"""`cudaify bench`: discovery, categories, reports and the strategy comparison's numbers."""

from __future__ import annotations

import csv
import math

from click.testing import CliRunner

from cudaify.backend.report import comparison, markdown
from cudaify.bench import BenchRow, category_of, discover, effective_speedup, geomean
from cudaify.cli import main

PARALLEL = """\
/* Name: scale
 * Category: elementwise
 */
#include <stdio.h>
void scale(int n, double *v) {
    for (int i = 0; i < n; i++) v[i] = 2.0 * v[i];
}
int main(void) {
    static double v[4096];
    for (int i = 0; i < 4096; i++) v[i] = i;
    scale(4096, v);
    printf("%.6e\\n", v[4095]);
    return 0;
}
"""

SEQUENTIAL = """\
#include <stdio.h>
int main(void) {
    long f = 1;
    for (int i = 1; i < 20; i++) f = f * i % 1000003;
    printf("%ld\\n", f);
    return 0;
}
"""


def row(strategy: str, verified: bool, speedup: float | None, program: str = "p") -> BenchRow:
    return BenchRow(
        program,
        "cat",
        strategy,
        "correct" if verified else "run",
        verified,
        "offload",
        1.0,
        0.5,
        0.1,
        speedup,
        speedup,
        None,
        2.0,
    )


def test_comparison_counts_unverified_programs_as_1x():
    rows = [
        row("mcgs", True, 16.0, "a"),
        row("mcgs", True, 4.0, "b"),
        row("mcgs", False, 99.0, "c"),
        row("rules", True, 0.5, "a"),
    ]
    assert effective_speedup(rows[2]) == 1.0
    assert geomean([16.0, 4.0, 1.0]) == 4.0
    text = comparison(rows)
    mcgs = next(line for line in text.splitlines() if line.startswith("| mcgs"))
    assert "| 3 | 67% | 67% | 4.00x | 7.00x | 2.0 |" in mcgs
    rules = next(line for line in text.splitlines() if line.startswith("| rules"))
    assert "| 1 | 100% | 0% | 0.50x | 0.50x |" in rules
    assert math.isnan(geomean([]))


def test_markdown_has_every_column():
    text = markdown([row("mcgs", True, 12.5)])
    header = text.splitlines()[0]
    for title in (
        "program",
        "category",
        "stage reached",
        "CPU time",
        "GPU region",
        "region speedup",
        "program speedup",
        "roofline",
        "search",
    ):
        assert title in header
    assert "| 12.5 |" in text


def test_bench_command_writes_reports(tmp_path):
    suite = tmp_path / "suite"
    (suite / "elementwise").mkdir(parents=True)
    (suite / "elementwise" / "scale.c").write_text(PARALLEL)
    (suite / "dependence").mkdir()
    (suite / "dependence" / "fact.c").write_text(SEQUENTIAL)
    assert [p.name for p in discover(suite)] == ["fact.c", "scale.c"]
    assert category_of(suite / "elementwise" / "scale.c") == "elementwise"
    assert category_of(suite / "dependence" / "fact.c") == "dependence"  # from the folder
    out = tmp_path / "results"
    result = CliRunner().invoke(main, ["bench", str(suite), "-o", str(out)])
    assert result.exit_code == 0, result.output + result.stderr
    rows = list(csv.DictReader((out / "results.csv").open()))
    stages = {r["program"]: r["stage"] for r in rows}
    assert stages["fact"] == "none"
    assert stages["scale"] in ("compile", "correct")  # "correct" where a GPU is present
    assert (out / "speedup.png").read_bytes()[:4] == b"\x89PNG"
    assert "| mcgs | 2 |" in (out / "results.md").read_text()
