"""`--ray` on a GPU host: a local Ray cluster with the GPUs, and the same verified results
as in-process, for bench and compile (issue 21's first must-show, on two benchmark programs
that beat gcc -O3 as whole programs; the test programs of test_ray.py are too small to)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .test_ray import bench_rows, invoke

pytestmark = pytest.mark.gpu

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
PROGRAMS = "black_scholes,matmul"
# what must not change with --ray; the methods of the winner may, where two variants time
# within noise of each other
VERIFIED = ("program", "category", "strategy", "verified")
RULES = ("--slm", "off", "--strategy", "rules", "--max-depth", "1")


@pytest.fixture(scope="module")
def gpu_ray():
    """A local Ray cluster for the module, with this machine's GPUs."""
    ray = pytest.importorskip("ray", reason="ray is not installed (pip install 'cudaify[ray]')")
    ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False)
    try:
        assert ray.cluster_resources().get("GPU", 0) >= 1
        yield ray
    finally:
        ray.shutdown()


def test_bench_verifies_the_same_with_and_without_ray(gpu_ray, tmp_path):
    common = ("bench", str(BENCHMARKS), "--only", PROGRAMS, *RULES)
    common += ("--timing-session", f"ray-{tmp_path.name}")  # one CPU reference timing for both
    alone = invoke(*common, "-o", str(tmp_path / "alone"))
    spread = invoke(*common, "-o", str(tmp_path / "ray"), "--ray")
    assert alone.exit_code == 0 and spread.exit_code == 0, spread.output
    rows = {name: bench_rows(tmp_path / name) for name in ("alone", "ray")}
    assert [[r[k] for k in VERIFIED] for r in rows["ray"]] == [
        [r[k] for k in VERIFIED] for r in rows["alone"]
    ]
    assert all(r["verified"] == "True" for r in rows["ray"]), rows["ray"]
    assert all("(GPU " in r["node"] for r in rows["ray"])


def test_compile_verifies_the_same_with_and_without_ray(gpu_ray, tmp_path):
    source = BENCHMARKS / "elementwise" / "black_scholes.c"
    found = {}
    for name, extra in (("alone", ()), ("ray", ("-v", "--ray"))):
        trace = tmp_path / f"{name}.json"
        out = tmp_path / f"{name}.cu"
        args = (str(source), "-o", str(out), "--trace", str(trace), "--no-cache", *RULES, *extra)
        result = invoke(*args)
        assert result.exit_code == 0, result.output
        assert ("candidates verified on a local Ray cluster" in result.output) == bool(extra)
        assert json.loads(trace.read_text())["chosen"], result.output
        found[name] = "Verified on the GPU" in out.read_text()
    assert found == {"alone": True, "ray": True}
