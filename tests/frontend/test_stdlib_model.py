"""The standard library's pure operations are seen through (issue 23); anything else that
may write keeps its refusal, with the call named."""

from __future__ import annotations

from pathlib import Path

import pytest

from cudaify.frontend.analyze import analyze

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks" / "cpp"
HOT = {
    "dft_complex": "dft",
    "closest_pair_lambda": "nearest_distances",
    "map_lambda_vector": "map_samples",
    "pair_envelope": "widen",
}


def loops_of(path: Path, function: str):
    program = analyze(str(path), ("-DBENCH_SMALL",))
    found = program.function(function)
    assert found is not None
    return found.loops


@pytest.mark.parametrize("case", sorted(HOT))
def test_pure_library_calls_leave_the_hot_loop_parallel(case: str) -> None:
    loop = loops_of(BENCHMARKS / f"{case}.cpp", HOT[case])[0]
    assert loop.parallel and loop.pattern == "plain", loop.reason
    assert "may write memory" not in loop.reason


DECOYS = """\
#include <cstdio>
#include <iostream>
#include <vector>
#include <algorithm>
int counter = 0;
double bump(double v) { counter++; return v * 2.0; }
double max(double a, double b) { counter++; return a > b ? a : b; }
void side(std::vector<double> &x) {
    for (std::size_t i = 0; i < x.size(); i++)
        x[i] = bump(x[i]);
}
void named_max(std::vector<double> &x) {
    for (std::size_t i = 0; i < x.size(); i++)
        x[i] = max(x[i], 1.0);
}
void grow(const std::vector<double> &x, std::vector<double> &y) {
    for (std::size_t i = 0; i < x.size(); i++)
        y.push_back(x[i]);
}
void show(std::vector<double> &x) {
    for (std::size_t i = 0; i < x.size(); i++)
        std::cout << x[i];
}
void lam(std::vector<double> &x) {
    double total = 0;
    auto add = [&total](double v) { total += v; return v; };
    for (std::size_t i = 0; i < x.size(); i++)
        x[i] = add(x[i]);
    std::printf("%f\\n", total);
}
void cmp(std::vector<double> &x, const std::vector<double> &y) {
    for (std::size_t i = 0; i < x.size(); i++)
        x[i] = std::max(x[i], y[i], [](double a, double b) { return a < b; });
}
void store(std::vector<double> &x, std::vector<double> &y) {
    auto put = [&y](int k, double v) { y[k] = v; return v; };
    for (int i = 0; i < (int)x.size(); i++)
        x[i] = put(i, x[i]);
}
int main() { return 0; }
"""

REFUSED = {
    "side": "calls bump, which may write memory",
    "named_max": "calls max, which may write memory",
    "grow": "calls push_back, which grows a container: where each element lands depends",
    "show": "calls operator<< (I/O or hidden state)",
    "lam": "lambda 'add' writes the captured 'total'",
    "cmp": "calls std::max, which may write memory",
    "store": "lambda 'put' writes 'y[k]'",
}


@pytest.mark.parametrize("function", sorted(REFUSED))
def test_calls_that_may_write_are_still_refused_by_name(function: str, tmp_path) -> None:
    path = tmp_path / "decoys.cpp"
    path.write_text(DECOYS)
    loop = loops_of(path, function)[0]
    assert not loop.parallel
    assert REFUSED[function] in loop.reason


def test_a_lambda_reading_a_captured_array_reads_any_of_its_elements(tmp_path) -> None:
    """`x[i] = next(i)` with `next` reading x[k + 1]: a dependence the call must show."""
    path = tmp_path / "shift.cpp"
    path.write_text(
        "#include <vector>\n"
        "void shift(std::vector<double> &x) {\n"
        "    auto next = [&x](int k) { return x[k + 1]; };\n"
        "    const int n = static_cast<int>(x.size());\n"
        "    for (int i = 0; i < n - 1; i++)\n"
        "        x[i] = next(i);\n"
        "}\nint main() { return 0; }\n"
    )
    assert not loops_of(path, "shift")[0].parallel


def test_a_scatter_through_an_index_array_is_named_as_such(tmp_path) -> None:
    path = tmp_path / "scatter.c"
    path.write_text(
        "void f(int n, const int *perm, const double *a, double *b) {\n"
        "    for (int i = 0; i < n; i++) b[perm[i]] = a[i];\n}\n"
        "void g(int n, const double *a, double *b) {\n"
        "    for (int i = 0; i < n; i++) b[i * i] = a[i];\n}\n"
        "int main(void) { return 0; }\n"
    )
    scatter = loops_of(path, "f")[0]
    assert not scatter.parallel
    assert "b[perm[i]] is a scatter through the index array perm" in scatter.reason
    assert "a permutation" in scatter.reason
    square = loops_of(path, "g")[0]
    assert "b[i * i] has a non-affine subscript and b is written in the loop" in square.reason
