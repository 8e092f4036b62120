"""Differential tests of single functions. The candidates here are host-only .cu code (no
CUDA call), so they run on any machine; the gpu-marked test runs a real kernel."""

from __future__ import annotations

from pathlib import Path

import pytest

from cudaify.backend.cache import Cache
from cudaify.backend.differential import differential_test, plan_cases
from cudaify.frontend.analyze import analyze

REFERENCE = """#include <stdio.h>
#include <stdlib.h>
void saxpy(int n, float a, const float *x, float *y) {
    for (int i = 0; i < n; i++) y[i] = a * x[i] + y[i];
}
static void matmul(int n, int m, const double *A, const double *B, double *C) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++) {
            double s = 0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * m + j];
            C[i * m + j] = s;
        }
}
double total(int n, const double *v) {
    double s = 0;
    for (int i = 0; i < n; i++) s += v[i];
    return s;
}
void shift(int n, int offset, float *v) {
    for (int i = 0; i < n; i++) v[i] += offset;
}
int main(void) {
    int n = 8;
    float x[8], y[8];
    double A[64], B[64], C[64];
    for (int i = 0; i < n; i++) { x[i] = i; y[i] = 1; }
    for (int i = 0; i < 64; i++) { A[i] = i; B[i] = 1; }
    saxpy(n, 2.0f, x, y);
    matmul(n, n, A, B, C);
    shift(n, 1, y);
    printf("%f %f %f\\n", y[3], C[9], total(64, A));
    return 0;
}
"""

CANDIDATE = REFERENCE.replace("#include <stdlib.h>", "#include <stdlib.h>\n#include <cstdio>")


@pytest.fixture
def program(tmp_path: Path):  # type: ignore[no-untyped-def]
    path = tmp_path / "input.c"
    path.write_text(REFERENCE)
    return analyze(str(path))


def check(program, code: str, name: str, cache: Cache):  # type: ignore[no-untyped-def]
    return differential_test(program, name, code, arch="sm_80", cache=cache)


def test_sizes_include_one_and_non_multiples_of_a_block(program) -> None:  # type: ignore[no-untyped-def]
    cases, why = plan_cases(program.function("matmul"))
    assert why == ""
    sizes = [case["sizes"] for case in cases]
    assert {"n": 1, "m": 3} in sizes and {"n": 257, "m": 259} in sizes
    assert all(s["n"] != s["m"] for s in sizes)


def test_equal_functions_pass(program, cache: Cache) -> None:  # type: ignore[no-untyped-def]
    for name in ("saxpy", "matmul", "total"):
        outcome = check(program, CANDIDATE, name, cache)
        assert outcome.status == "passed", outcome.detail
        assert outcome.cases >= 3 and outcome.problem is None


def test_off_by_one_bound_is_caught(program, cache: Cache) -> None:  # type: ignore[no-untyped-def]
    wrong = CANDIDATE.replace(
        "for (int i = 0; i < n; i++) y[i]", "for (int i = 0; i < n - 1; i++) y[i]"
    )
    outcome = check(program, wrong, "saxpy", cache)
    assert outcome.status == "failed"
    assert outcome.detail.startswith("saxpy(n=1): y[0] is ")
    assert outcome.problem is not None and outcome.problem.kind == "differential"


def test_swapped_extents_are_caught(program, cache: Cache) -> None:  # type: ignore[no-untyped-def]
    wrong = CANDIDATE.replace("C[i * m + j] = s;", "C[i * n + j] = s;")
    outcome = check(program, wrong, "matmul", cache)
    assert outcome.status == "failed" and "C[" in outcome.detail


def test_wrong_return_value_is_caught(program, cache: Cache) -> None:  # type: ignore[no-untyped-def]
    wrong = CANDIDATE.replace(
        "for (int i = 0; i < n; i++) s += v[i];", "for (int i = 1; i < n; i++) s += v[i];"
    )
    outcome = check(program, wrong, "total", cache)
    assert outcome.status == "failed" and "returned" in outcome.detail


def test_a_crashing_candidate_fails_without_hurting_us(program, cache: Cache) -> None:  # type: ignore[no-untyped-def]
    wrong = CANDIDATE.replace("y[i] = a * x[i] + y[i];", "*(volatile float *)nullptr = y[i];")
    outcome = check(program, wrong, "saxpy", cache)
    assert outcome.status == "failed" and "the call failed (signal 11)" in outcome.detail


def test_integer_parameters_of_unknown_meaning_are_skipped(program, cache: Cache) -> None:  # type: ignore[no-untyped-def]
    outcome = check(program, CANDIDATE, "shift", cache)
    assert outcome.status == "skipped" and "'offset'" in outcome.detail


def test_evaluator_rejects_a_candidate_only_other_sizes_expose(program, cache: Cache) -> None:  # type: ignore[no-untyped-def]
    from cudaify.backend.evaluate import Evaluator
    from cudaify.core import Stage, Variant
    from cudaify.core.config import Config

    # Right for the program's n = 8 (a multiple of 4), wrong for n = 1, 31, 257, 1001.
    rounded = CANDIDATE.replace(
        "for (int i = 0; i < n; i++) y[i]", "for (int i = 0; i < n / 4 * 4; i++) y[i]"
    )
    evaluator = Evaluator(program, Config(runs=1), cache=cache, run_on_gpu=True, differential=True)
    passed = evaluator.evaluate(Variant(code=CANDIDATE, offloaded=("saxpy",)))
    assert passed.stage == Stage.CORRECT, passed.problems
    failed = evaluator.evaluate(Variant(code=rounded, offloaded=("saxpy",)))
    assert failed.stage == Stage.RUN
    assert failed.problems[0].kind == "differential"
    assert failed.problems[0].message.startswith("saxpy(n=1): y[0] is ")
