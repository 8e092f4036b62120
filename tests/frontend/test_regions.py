"""Data regions: the C expressions for the first index and element count of each array a
nest touches, evaluated by gcc for concrete parameter values and compared with the
brute-force answer."""

from __future__ import annotations

import os
import tempfile

import pytest

from cudaify.core import toolchain
from cudaify.frontend.analyze import analyze

HEADER = "#define N 64\n#define M 32\n"

# (name, code, array, params, (first, count) for those params, access, extra checks)
CASES = [
    (
        "saxpy_x",
        "void f(int n, const float *x, float *y) { for (int i = 0; i < n; i++) y[i] += 2 * x[i]; }",
        "x",
        {"n": 10},
        (0, 10),
        "read",
    ),
    (
        "saxpy_y",
        "void f(int n, const float *x, float *y) { for (int i = 0; i < n; i++) y[i] += 2 * x[i]; }",
        "y",
        {"n": 10},
        (0, 10),
        "readwrite",
    ),
    (
        "offset_window",
        "void f(int n, const double *a, double *b) "
        "{ for (int i = 2; i < n; i++) b[i-2] = a[i+1]; }",
        "a",
        {"n": 10},
        (3, 8),
        "read",
    ),
    (
        "inclusive_bound",
        "void f(int n, double *a) { for (int i = 1; i <= n; i++) a[i] = 0; }",
        "a",
        {"n": 10},
        (1, 10),
        "write",
    ),
    (
        "stride_two",
        "void f(int n, double *a) { for (int i = 0; i < n; i += 2) a[i] = 1; }",
        "a",
        {"n": 9},
        (0, 9),
        "write",
    ),
    (
        "stride_two_even",
        "void f(int n, double *a) { for (int i = 0; i < n; i += 2) a[i] = 1; }",
        "a",
        {"n": 10},
        (0, 9),
        "write",
    ),
    (
        "down_counting",
        "void f(int n, double *a) { for (int i = n - 1; i >= 3; i--) a[i] = 1; }",
        "a",
        {"n": 10},
        (3, 7),
        "write",
    ),
    (
        "linearized_square",
        "void f(int n, const double *A, double *y) "
        "{ for (int i = 0; i < n; i++) for (int j = 0; j < n; j++) y[i] += A[i*n+j]; }",
        "A",
        {"n": 7},
        (0, 49),
        "read",
    ),
    (
        "linearized_rect",
        "void f(int n, int m, const double *A, double *y) "
        "{ for (int i = 0; i < n; i++) for (int j = 0; j < m; j++) y[i] += A[i*m+j]; }",
        "A",
        {"n": 7, "m": 5},
        (0, 35),
        "read",
    ),
    (
        "linearized_interior",
        "void f(int n, const double *u, double *v) "
        "{ for (int i = 1; i < n-1; i++) for (int j = 1; j < n-1; j++) "
        "v[i*n+j] = u[(i-1)*n+j] + u[(i+1)*n+j]; }",
        "v",
        {"n": 6},
        (7, 22),
        "write",
    ),
    (
        "triangular",
        "void f(int n, double *L) "
        "{ for (int i = 0; i < n; i++) for (int j = 0; j <= i; j++) L[i*n+j] = 1; }",
        "L",
        {"n": 5},
        (0, 25),
        "write",
    ),
    (
        "triangular_strict",
        "void f(int n, double *L) "
        "{ for (int i = 0; i < n; i++) for (int j = 0; j < i; j++) L[i*n+j] = 1; }",
        "L",
        {"n": 5},
        (5, 19),
        "write",
    ),
    (
        "param_array_2d",
        "void f(int n, double a[][M]) "
        "{ for (int i = 0; i < n; i++) for (int j = 0; j < M; j++) a[i][j] = 0; }",
        "a",
        {"n": 3},
        (0, 96),
        "write",
    ),
    (
        "vla_param",
        "void f(int n, int m, double a[n][m]) "
        "{ for (int i = 0; i < n; i++) for (int j = 0; j < m; j++) a[i][j] = 0; }",
        "a",
        {"n": 3, "m": 4},
        (0, 12),
        "write",
    ),
    (
        "global_whole",
        "double G[N][M]; void f(void) "
        "{ for (int i = 1; i < N; i++) for (int j = 0; j < M; j++) G[i][j] = 0; }",
        "G",
        {},
        (0, 64 * 32),
        "write",
    ),
    (
        "let_row_offset",
        "void f(int n, double *b) "
        "{ for (int i = 0; i < n; i++) { int row = i * 4; for (int j = 0; j < 4; j++) "
        "b[row + j] = 0; } }",
        "b",
        {"n": 6},
        (0, 24),
        "write",
    ),
    (
        "deref_pointer",
        "void f(int n, double *p) { for (int i = 0; i < n; i++) *(p + i) = 0; }",
        "p",
        {"n": 6},
        (0, 6),
        "write",
    ),
]


def evaluate(expressions: list[str], params: dict[str, int]) -> list[int]:
    """Values of C expressions for the given parameters, computed by gcc."""
    decls = "".join(f"long {name} = {value};\n" for name, value in params.items())
    prints = "".join(f'printf("%ld\\n", (long)({e}));\n' for e in expressions)
    program = f"#include <stdio.h>\n{HEADER}int main(void) {{\n{decls}{prints}return 0;\n}}\n"
    with tempfile.TemporaryDirectory() as tmp:
        built = toolchain.run(
            [toolchain.find_tool("gcc"), "-x", "c", "-", "-o", "eval"],
            stdin=program.encode(),
            cwd=tmp,
            timeout=60,
        )
        assert built.ok, built.errors()
        done = toolchain.run([os.path.join(tmp, "eval")], cwd=tmp, timeout=30)
        assert done.ok, done.errors()
        return [int(x) for x in done.text().split()]


@pytest.mark.parametrize("name,code,array,params,expected,access", CASES, ids=[c[0] for c in CASES])
def test_region(name, code, array, params, expected, access, tmp_path):
    path = tmp_path / "case.c"
    path.write_text(HEADER + code + "\n")
    fn = analyze(str(path)).function("f")
    assert fn is not None
    data = {a.name: a for a in fn.arrays_for(fn.loops[0])}
    found = data[array]
    assert found.access == access
    assert found.count is not None
    first, count = evaluate([found.first, found.count], params)
    assert (first, count) == expected


def test_unknown_size_for_indirect_write(tmp_path):
    path = tmp_path / "case.c"
    path.write_text(
        "void f(int n, const int *d, int *bins) { for (int i = 0; i < n; i++) bins[d[i]]++; }\n"
    )
    fn = analyze(str(path)).function("f")
    assert fn is not None
    data = {a.name: a for a in fn.arrays_for(fn.loops[0])}
    assert data["bins"].count is None
    assert data["d"].count == "n" and data["d"].access == "read"


def test_static_dims_and_kinds(tmp_path):
    path = tmp_path / "case.c"
    path.write_text(
        HEADER + "struct s { double v[8]; double *w; };\n"
        "double G[N][M];\n"
        "void f(int n, struct s *p, double a[][M]) {\n"
        "  double loc[16];\n"
        "  for (int i = 0; i < 8; i++) { p->v[i] = p->w[i] + G[i][0] + a[i][1]; "
        "loc[i] = 0; }\n}\n"
    )
    fn = analyze(str(path)).function("f")
    assert fn is not None
    data = {a.name: a for a in fn.arrays_for(fn.loops[0])}
    assert (data["p->v"].kind, data["p->v"].count, data["p->v"].whole) == ("field", "8", True)
    assert (data["p->w"].kind, data["p->w"].count) == ("field", "8")
    assert (data["G"].kind, data["G"].dims, data["G"].count) == ("global_array", ("M",), "2048")
    assert (data["a"].kind, data["a"].dims) == ("param_array", ("M",))
    assert data["loc"].kind == "local_array" and data["loc"].whole
    assert evaluate([data["a"].first, data["a"].count], {}) == [1, 7 * 32 + 1 + 1 - 1]


def test_row_of_a_matrix_passed_on(tmp_path):
    path = tmp_path / "case.c"
    path.write_text(
        HEADER + "float use(const float *row);\n"
        "void f(float c[N][M]) {\n"
        "  for (int p = 0; p < N; p++) use(c[p]);\n}\n"
    )
    fn = analyze(str(path)).function("f")
    assert fn is not None
    (loop,) = fn.loops
    assert not loop.parallel
    (data,) = fn.arrays_for(loop)
    # the declared size of the parameter covers any row: the whole array is copied
    assert (data.elem_type, data.count, data.kind, data.whole) == (
        "float",
        "2048",
        "param_array",
        True,
    )
