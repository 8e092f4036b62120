"""Kernel-level differential tests: which kernels can be tested alone and how they are
launched (any machine: the candidates come from the offload rule and the cubin is built
with nvcc), and the pycuda runs themselves (gpu-marked)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cudaify.backend import kernel_differential as kd
from cudaify.backend.cache import Cache
from cudaify.backend.compile import compile_cubin
from cudaify.backend.gpu import gpu_available
from cudaify.core import Variant
from cudaify.core.toolchain import Completed
from cudaify.frontend.analyze import analyze
from cudaify.frontend.facts import Program
from cudaify.transforms.base import Context
from cudaify.transforms.offload import Offload

REFERENCE = """#include <stdio.h>
#include <stdlib.h>
void saxpy(int n, float a, const float *x, float *y) {
    for (int i = 0; i < n; i++) y[i] = a * x[i] + y[i];
}
void matmul(int n, int m, const double *A, const double *B, double *C) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++) {
            double s = 0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * m + j];
            C[i * m + j] = s;
        }
}
void twice(int n, float *u, float *v) {
    int i;
    for (i = 0; i < n; i++) u[i] = u[i] * 2.0f;
    for (i = 1; i < n; i++) v[i] = u[i] + v[i];
}
void seeded(int n, float *u) {
    u[0] = 1.0f;
    for (int i = 1; i < n; i++) u[i] = u[i] + 1.0f;
}
int main(void) {
    int n = 2048;
    float *x = (float *)malloc(n * sizeof *x), *y = (float *)malloc(n * sizeof *y);
    double *A = (double *)malloc(64 * 64 * sizeof *A), *B = (double *)malloc(64 * 64 * sizeof *B);
    double *C = (double *)malloc(64 * 64 * sizeof *C);
    for (int i = 0; i < n; i++) { x[i] = i % 10; y[i] = 1; }
    for (int i = 0; i < 64 * 64; i++) { A[i] = i % 7; B[i] = 1; }
    saxpy(n, 2.0f, x, y);
    matmul(64, 64, A, B, C);
    twice(n, x, y);
    seeded(n, x);
    printf("%f %f %f\\n", y[3], C[9], x[5]);
    return 0;
}
"""


@pytest.fixture(scope="module")
def offloaded(tmp_path_factory) -> tuple[Program, str]:  # type: ignore[no-untyped-def]
    path = tmp_path_factory.mktemp("kd") / "input.c"
    path.write_text(REFERENCE)
    program = analyze(str(path))
    outcome = Offload().apply_rule(Variant(program.source), Context(program))
    assert outcome.variant is not None, outcome.reason
    return program, outcome.variant.code


def _plan(program: Program, code: str, name: str):  # type: ignore[no-untyped-def]
    function = program.function(name)
    assert function is not None
    return kd.plan_launches(function, kd.find_kernels(code, name), program.source)


def test_kernels_are_found_with_parameters_and_grid_dimensions(offloaded) -> None:  # type: ignore[no-untyped-def]
    _, code = offloaded
    (matmul,) = kd.find_kernels(code, "matmul")
    assert matmul.name == "matmul_kernel"
    assert [(p.name, p.pointer) for p in matmul.params] == [
        ("A", True),
        ("B", True),
        ("C", True),
        ("n", False),
        ("m", False),
        ("trips_i", False),
        ("trips_j", False),
    ]
    assert dict(matmul.dims) == {"trips_i": "y", "trips_j": "x"}  # innermost loop on x
    assert [k.name for k in kd.find_kernels(code, "twice")] == ["twice_kernel", "twice_kernel_2"]


def test_launches_cover_sizes_that_are_not_multiples_of_the_block(offloaded) -> None:  # type: ignore[no-untyped-def]
    program, code = offloaded
    cases, why = _plan(program, code, "saxpy")
    assert why == ""
    sizes = [case["sizes"]["n"] for case in cases]
    assert sizes == [1, 31, 257, 1001]
    launch = cases[2]["launches"][0]
    assert launch["kernel"] == "saxpy_kernel"
    assert launch["block"] == [256, 1, 1] and launch["grid"] == [2, 1, 1]  # 257 threads
    kinds = [(a["kind"], a.get("name", a.get("value"))) for a in launch["args"]]
    assert kinds == [("array", "y"), ("array", "x"), ("scalar", 0.875), ("scalar", 257)]


def test_two_dimensional_grid_and_several_kernels_in_order(offloaded) -> None:  # type: ignore[no-untyped-def]
    program, code = offloaded
    cases, _ = _plan(program, code, "matmul")
    assert [case["sizes"] for case in cases] == [  # n = 1001 needs too much memory
        {"n": 1, "m": 3},
        {"n": 31, "m": 33},
        {"n": 257, "m": 259},
    ]
    launch = cases[2]["launches"][0]
    assert launch["block"] == [32, 8, 1]
    assert launch["grid"] == [(259 + 31) // 32, (257 + 7) // 8, 1]
    assert [a["value"] for a in launch["args"][-2:]] == [257, 259]
    cases, _ = _plan(program, code, "twice")
    first, second = cases[1]["launches"]  # n = 31
    assert (first["kernel"], first["args"][-1]["value"]) == ("twice_kernel", 31)
    assert (second["kernel"], second["args"][-1]["value"]) == ("twice_kernel_2", 30)  # from 1


def test_kernels_that_are_not_the_whole_function_are_skipped(offloaded) -> None:  # type: ignore[no-untyped-def]
    program, code = offloaded
    cases, why = _plan(program, code, "seeded")
    assert cases == [] and "does more than its loop nests ('u[0] = 1.0f')" in why
    handwritten = code + (
        "__global__ void saxpy_kernel_mine(int n, float *y, int stride) {"
        " for (int i = threadIdx.x; i < n; i += stride) y[i] = 0; }\n"
    )
    cases, why = _plan(program, handwritten, "saxpy")
    assert cases == [] and "2 kernel(s) for 1 loop nest(s)" in why


def test_unknown_parameters_and_unknown_grids_are_skipped(offloaded) -> None:  # type: ignore[no-untyped-def]
    program, code = offloaded
    renamed = code.replace("long long trips_i)", "long long count_i)").replace(
        "t_i < trips_i;", "t_i < count_i;"
    )
    cases, why = _plan(program, renamed, "saxpy")
    assert cases == [] and "parameter 'count_i' is not known to the function" in why
    exact = code.replace(
        "t_i += (long long)blockDim.x * gridDim.x", "t_i += trips_i"
    )  # one iteration per thread: only the host's own grid covers n
    cases, why = _plan(program, exact, "saxpy")
    assert cases == [] and "'trips_i' bounds no grid-stride loop" in why


def test_the_cubin_exports_kernels_by_their_names(offloaded, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _, code = offloaded
    kernels = kd.find_kernels(code, "twice")
    build = compile_cubin(kd.exported_kernels(code, kernels), (), "sm_80", cache=Cache(tmp_path))
    assert build.ok, build.diagnostics
    assert build.binary is not None
    data = build.binary.read_bytes()
    assert data[:4] == b"\x7fELF"
    assert b"twice_kernel_2\x00" in data and b"_Z14twice_kernel" not in data


def test_without_pycuda_the_test_says_so(offloaded, monkeypatch, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    program, code = offloaded
    monkeypatch.setattr(kd, "pycuda_available", lambda: False)
    outcome = kd.kernel_differential_test(
        program, "saxpy", code, arch="sm_80", cache=Cache(tmp_path)
    )
    assert outcome.status == "skipped" and "pycuda is not installed" in outcome.detail
    assert outcome.problem is None


def test_the_child_says_plainly_when_pycuda_cannot_be_imported(  # type: ignore[no-untyped-def]
    offloaded, monkeypatch, tmp_path: Path
) -> None:
    if kd.pycuda_available():
        pytest.skip("pycuda is installed here: the gpu tests run the child for real")
    program, code = offloaded
    # Past the parent's check: the reference library and the cubin are built, the child
    # runs, finds no pycuda and says so instead of failing the candidate.
    monkeypatch.setattr(kd, "pycuda_available", lambda: True)
    outcome = kd.kernel_differential_test(
        program, "twice", code, arch="sm_80", cache=Cache(tmp_path)
    )
    assert outcome.status == "skipped", outcome.detail
    assert outcome.detail.startswith("twice kernels: pycuda cannot be imported")


def _done(returncode: int = 0, stderr: bytes = b"", timed_out: bool = False) -> Completed:
    return Completed(("python",), returncode, b"", stderr, 0.1, timed_out)


CASES = [{"sizes": {"n": 1}}, {"sizes": {"n": 31}}]


def test_verdicts_from_the_childs_lines() -> None:
    passed = [{"case": 0, "sizes": {"n": 1}, "problem": None}] * 2
    assert kd.outcome_of("f", passed, CASES, _done(), 60).status == "passed"
    wrong = [passed[0], {"case": 1, "sizes": {"n": 31}, "problem": "y[30] is 0.0, expected 2.0"}]
    failed = kd.outcome_of("f", wrong, CASES, _done(1), 60)
    assert failed.status == "failed"
    assert failed.detail == "f kernels (n=31): y[30] is 0.0, expected 2.0"
    assert failed.problem is not None and failed.problem.kind == "differential"
    fault = [passed[0], {"calling": "reference"}, {"calling": "kernels"}]
    crashed = kd.outcome_of("f", fault, CASES, _done(-11, b"Segmentation fault"), 60)
    assert crashed.status == "failed" and "(n=31)" in crashed.detail
    assert kd.outcome_of("f", fault[:2], CASES, _done(-11), 60).status == "skipped"
    skipped = kd.outcome_of("f", [{"skip": "no GPU for pycuda"}], CASES, _done(), 60)
    assert skipped.status == "skipped" and skipped.detail == "f kernels: no GPU for pycuda"


# -- on the GPU ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def gpu_cache(tmp_path_factory) -> Cache:  # type: ignore[no-untyped-def]
    """Shared by the GPU tests: the reference libraries are built once (quick on a GPU host)."""
    return Cache(tmp_path_factory.mktemp("gpu-cache"))


def _on_gpu(program: Program, code: str, name: str, cache: Cache):  # type: ignore[no-untyped-def]
    if not gpu_available() or not kd.pycuda_available():
        pytest.skip("kernel-level differential tests need an NVIDIA GPU and pycuda")
    from cudaify.backend.gpu import default_arch

    return kd.kernel_differential_test(program, name, code, arch=default_arch(), cache=cache)


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["saxpy", "matmul", "twice"])
def test_offloaded_kernels_agree_with_the_original(offloaded, name: str, gpu_cache: Cache) -> None:  # type: ignore[no-untyped-def]
    program, code = offloaded
    outcome = _on_gpu(program, code, name, gpu_cache)
    assert outcome.status == "passed", outcome.detail
    assert outcome.cases >= 3


@pytest.mark.gpu
def test_a_kernel_right_only_for_multiples_of_the_block_is_caught(  # type: ignore[no-untyped-def]
    offloaded, gpu_cache: Cache
) -> None:
    program, code = offloaded
    # Right for the program's n = 2048; wrong for 1, 31, 257 and 1001.
    rounded = code.replace("t_i < trips_i;", "t_i < trips_i / 256 * 256;", 1)
    assert rounded != code
    outcome = _on_gpu(program, rounded, "saxpy", gpu_cache)
    assert outcome.status == "failed"
    assert outcome.detail.startswith("saxpy kernels (n=1): y[0] is ")


@pytest.mark.gpu
def test_an_out_of_bounds_kernel_fails_without_hurting_us(offloaded, gpu_cache: Cache) -> None:  # type: ignore[no-untyped-def]
    program, code = offloaded
    wild = code.replace("t_i < trips_i;", "t_i < trips_i + (1 << 26);", 1)
    outcome = _on_gpu(program, wild, "saxpy", gpu_cache)
    assert outcome.status == "failed", outcome.detail


@pytest.mark.gpu
def test_the_evaluator_runs_the_kernel_level_test(offloaded, gpu_cache: Cache) -> None:  # type: ignore[no-untyped-def]
    from cudaify.backend.evaluate import Evaluator
    from cudaify.core import Stage
    from cudaify.core.config import Config

    program, code = offloaded
    if not gpu_available() or not kd.pycuda_available():
        pytest.skip("kernel-level differential tests need an NVIDIA GPU and pycuda")
    rounded = code.replace("t_i < trips_i;", "t_i < trips_i / 256 * 256;", 1)
    evaluator = Evaluator(program, Config(runs=1), cache=gpu_cache, differential=True)
    variant = Variant(code=rounded, offloaded=("saxpy",))
    result = evaluator.evaluate(variant)
    assert result.stage == Stage.RUN, result.problems
    assert result.problems[0].kind == "differential"
    assert result.problems[0].message.startswith("saxpy kernels (n=1)")
