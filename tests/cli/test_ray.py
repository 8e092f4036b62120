"""`--ray [ADDRESS]` on compile and bench: a clear error without the extra or with a value
that is not an address, and, on a local Ray cluster started here, the same results as
in-process (compile-only without a GPU; verified and timed on one, `gpu` tests)."""

from __future__ import annotations

import csv
import json
import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from cudaify.cli import main

SCALE = """\
/* Name: scale
 * Category: elementwise
 */
#include <stdio.h>
void scale(int n, double *v) {
    for (int i = 0; i < n; i++) v[i] = 2.0 * v[i];
}
int main(void) {
    static double v[1 << 20];
    for (int i = 0; i < (1 << 20); i++) v[i] = i % 1000;
    for (int r = 0; r < 20; r++) scale(1 << 20, v);
    printf("%.6e\\n", v[12345]);
    return 0;
}
"""

SUM = """\
/* Name: total
 * Category: reduction
 */
#include <stdio.h>
double total(int n, const double *v) {
    double s = 0.0;
    for (int i = 0; i < n; i++) s += v[i];
    return s;
}
int main(void) {
    static double v[1 << 20];
    for (int i = 0; i < (1 << 20); i++) v[i] = (i % 17) * 0.5;
    double t = 0.0;
    for (int r = 0; r < 20; r++) t += total(1 << 20, v);
    printf("%.6e\\n", t);
    return 0;
}
"""

FAST = ("--slm", "off", "--strategy", "rules", "--max-depth", "1")


def invoke(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_ray_without_the_extra_is_a_usage_error(tmp_path, monkeypatch):
    source = tmp_path / "scale.c"
    source.write_text(SCALE)
    monkeypatch.setitem(sys.modules, "ray", None)  # as where `cudaify[ray]` is not installed
    for args in ([str(source), "--ray"], ["bench", str(tmp_path), "--ray"]):
        result = invoke(*args)
        assert result.exit_code == 2, result.output
        assert "--ray needs the ray package" in result.output
        assert "pip install 'cudaify[ray]'" in result.output
        assert "Traceback" not in result.output
    assert not (tmp_path / "scale.cu").exists()


def test_an_input_taken_for_an_address_is_a_usage_error(tmp_path):
    pytest.importorskip("ray", reason="ray is not installed (pip install 'cudaify[ray]')")
    source = tmp_path / "scale.c"
    source.write_text(SCALE)
    result = invoke("compile", "--ray", str(source))
    assert result.exit_code == 2
    assert "is not a Ray address" in result.output and "--ray=ADDRESS" in result.output


@pytest.fixture(scope="module")
def local_ray(gpus_hidden):
    """A local Ray cluster for the module; `--ray` finds it connected and keeps it. No GPU
    here or in its workers: compile-only on any machine (test_ray_gpu.py has GPUs)."""
    ray = pytest.importorskip("ray", reason="ray is not installed (pip install 'cudaify[ray]')")
    ray.init(num_cpus=2, num_gpus=0, include_dashboard=False, log_to_driver=False)
    try:
        yield ray
    finally:
        ray.shutdown()


def test_compile_writes_the_same_program_with_and_without_ray(local_ray, tmp_path):
    source = tmp_path / "total.c"
    source.write_text(SUM)
    outputs = {}
    for name, extra in (("alone", ()), ("ray", ("-v", "--ray"))):
        out = tmp_path / f"{name}.cu"
        trace = tmp_path / f"{name}.json"
        args = (str(source), "-o", str(out), "--trace", str(trace), "--no-cache", *FAST, *extra)
        result = invoke(*args)
        assert result.exit_code == 0, result.output
        assert ("candidates verified on a local Ray cluster" in result.output) == bool(extra)
        chosen = json.loads(trace.read_text())["chosen"]
        outputs[name] = (out.read_text(), [step["method"] for step in chosen])
    assert outputs["ray"] == outputs["alone"]
    assert outputs["ray"][1], "something was offloaded"
    assert local_ray.is_initialized()  # a cluster --ray did not start is not shut down


def bench_rows(folder: Path) -> list[dict[str, str]]:
    with (folder / "results.csv").open() as handle:
        return list(csv.DictReader(handle))


SAME = ("program", "category", "strategy", "stage", "verified", "methods")


def test_bench_gives_the_same_rows_with_and_without_ray(local_ray, tmp_path):
    programs = tmp_path / "programs"
    programs.mkdir()
    (programs / "scale.c").write_text(SCALE)
    (programs / "total.c").write_text(SUM)
    # one timing of each CPU reference for both runs: without a GPU, the search prefers the
    # candidate that moves the most CPU time, and two timings of a tie can rank it apart
    session = ("--timing-session", f"ray-{tmp_path.name}")
    common = ("bench", str(programs), "--strategy", "rules", "--max-depth", "1", "--slm", "off")
    common += session
    alone = invoke(*common, "-o", str(tmp_path / "alone"))
    spread = invoke(*common, "-o", str(tmp_path / "ray"), "--ray")
    assert alone.exit_code == 0 and spread.exit_code == 0, spread.output
    rows = {name: bench_rows(tmp_path / name) for name in ("alone", "ray")}
    assert [[r[k] for k in SAME] for r in rows["ray"]] == [
        [r[k] for k in SAME] for r in rows["alone"]
    ]
    assert {r["stage"] for r in rows["ray"]} == {"compile"}  # no GPU here: compiled, not run
    host = os.uname().nodename
    assert {r["node"] for r in rows["ray"]} == {host}
    report = (tmp_path / "ray" / "results.md").read_text()
    assert "## Time per node (s)" in report and f"| {host} | 2 |" in report
    assert "Time per node" not in (tmp_path / "alone" / "results.md").read_text()
