"""Table of small loop nests with known answers: for every loop (outermost first, in
source order) whether it is provably parallel, its pattern and its reductions."""

from __future__ import annotations

import pytest

from cudaify.frontend.analyze import analyze

HEADER = "#include <math.h>\n#include <stdio.h>\n#define N 64\n#define M 32\n"

P, R, S, A, Q = "plain", "reduction", "sequential", "atomic_update", "scan"

# (name, code, [(var, parallel, pattern, {reduction var: op}) per loop, walk order])
CASES = [
    (
        "saxpy",
        """
void f(int n, float a, const float *x, float *y) {
  for (int i = 0; i < n; i++) y[i] = a * x[i] + y[i];
}""",
        [("i", True, P, {})],
    ),
    (
        "add_2d_static",
        """
double a[N][M], b[N][M], c[N][M];
void f(void) {
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++) c[i][j] = a[i][j] + b[i][j];
}""",
        [("i", True, P, {}), ("j", True, P, {})],
    ),
    (
        "matmul_static",
        """
double A[N][N], B[N][N], C[N][N];
void f(void) {
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      C[i][j] = 0;
      for (int k = 0; k < N; k++) C[i][j] += A[i][k] * B[k][j];
    }
}""",
        [("i", True, P, {}), ("j", True, P, {}), ("k", False, R, {"C[i][j]": "+"})],
    ),
    (
        "matmul_linearized_private_sum",
        """
void f(int n, const double *A, const double *B, double *C) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double s = 0;
      for (int k = 0; k < n; k++) s += A[i*n+k] * B[k*n+j];
      C[i*n+j] = s;
    }
}""",
        [("i", True, P, {}), ("j", True, P, {}), ("k", False, R, {"s": "+"})],
    ),
    (
        "gauss_seidel_in_place",
        """
double G[N][N];
void f(void) {
  for (int i = 1; i < N - 1; i++)
    for (int j = 1; j < N - 1; j++)
      G[i][j] = 0.25 * (G[i-1][j] + G[i+1][j] + G[i][j-1] + G[i][j+1]);
}""",
        [("i", False, S, {}), ("j", False, S, {})],
    ),
    (
        "jacobi_separate_buffers",
        """
void f(int n, const double *u, double *v) {
  for (int i = 1; i < n - 1; i++)
    for (int j = 1; j < n - 1; j++)
      v[i*n+j] = 0.25 * (u[(i-1)*n+j] + u[(i+1)*n+j] + u[i*n+j-1] + u[i*n+j+1]);
}""",
        [("i", True, P, {}), ("j", True, P, {})],
    ),
    (
        "floyd_warshall",
        """
void f(int n, double d[N][N]) {
  for (int k = 0; k < n; k++)
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++)
        if (d[i][k] + d[k][j] < d[i][j]) d[i][j] = d[i][k] + d[k][j];
}""",
        [("k", False, S, {}), ("i", False, S, {}), ("j", False, S, {})],
    ),
    (
        "prefix_sum_array",
        """
void f(int n, double *s, const double *a) {
  s[0] = a[0];
  for (int i = 1; i < n; i++) s[i] = s[i-1] + a[i];
}""",
        [("i", False, Q, {})],
    ),
    (
        "prefix_sum_scalar",
        """
void f(int n, const double *a, double *out) {
  double acc = 0;
  for (int i = 0; i < n; i++) { acc += a[i]; out[i] = acc; }
}""",
        [("i", False, Q, {})],
    ),
    (
        "histogram",
        """
void f(int n, const int *data, int *bins) {
  for (int i = 0; i < n; i++) bins[data[i]]++;
}""",
        [("i", False, A, {})],
    ),
    (
        "histogram_weighted",
        """
void f(int n, const int *key, const double *w, double *h) {
  for (int i = 0; i < n; i++) { int k = key[i] % 16; h[k] += w[i]; }
}""",
        [("i", False, A, {})],
    ),
    (
        "matvec_row_major",
        """
void f(int n, int m, const double *A, const double *x, double *y) {
  for (int i = 0; i < n; i++) {
    double s = 0;
    for (int j = 0; j < m; j++) s += A[i*m+j] * x[j];
    y[i] = s;
  }
}""",
        [("i", True, P, {}), ("j", False, R, {"s": "+"})],
    ),
    (
        "matvec_column_major",
        """
void f(int n, int m, const double *A, const double *x, double *y) {
  for (int j = 0; j < m; j++)
    for (int i = 0; i < n; i++) y[i] += A[j*n+i] * x[j];
}""",
        [("j", False, A, {}), ("i", True, P, {})],
    ),
    (
        "triangular_lower",
        """
void f(int n, double *L, const double *a) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < i; j++) L[i*n+j] = a[i] * a[j];
}""",
        [("i", True, P, {}), ("j", True, P, {})],
    ),
    (
        "triangular_solve",
        """
void f(int n, const double *L, double *x, const double *b) {
  for (int i = 0; i < n; i++) {
    double s = b[i];
    for (int j = 0; j < i; j++) s -= L[i*n+j] * x[j];
    x[i] = s / L[i*n+i];
  }
}""",
        [("i", False, S, {}), ("j", False, R, {"s": "+"})],
    ),
    (
        "stencil_1d_separate",
        """
void f(int n, const float *in, float *out) {
  for (int i = 1; i < n - 1; i++) out[i] = (in[i-1] + in[i] + in[i+1]) / 3.0f;
}""",
        [("i", True, P, {})],
    ),
    (
        "stencil_1d_in_place",
        """
void f(int n, float *a) {
  for (int i = 1; i < n - 1; i++) a[i] = (a[i-1] + a[i] + a[i+1]) / 3.0f;
}""",
        [("i", False, S, {})],
    ),
    (
        "stencil_2d_separate_static",
        """
double in[N][N], out[N][N];
void f(void) {
  for (int i = 1; i < N - 1; i++)
    for (int j = 1; j < N - 1; j++)
      out[i][j] = in[i-1][j] + in[i+1][j] + in[i][j-1] + in[i][j+1] - 4 * in[i][j];
}""",
        [("i", True, P, {}), ("j", True, P, {})],
    ),
    (
        "calls_sqrtf_expf",
        """
void f(int n, const float *x, float *y) {
  for (int i = 0; i < n; i++) y[i] = sqrtf(x[i]) + expf(-x[i]) + fabsf(x[i]);
}""",
        [("i", True, P, {})],
    ),
    (
        "break_in_loop",
        """
int f(int n, const int *a, int *b) {
  int i;
  for (i = 0; i < n; i++) { if (a[i] < 0) break; b[i] = a[i]; }
  return i;
}""",
        [("i", False, S, {})],
    ),
    (
        # the loop's only statement is `if (C) return E;`: a search for the first hit
        "return_in_loop",
        """
int f(int n, const int *a) {
  for (int i = 0; i < n; i++) if (a[i] == 7) return i;
  return -1;
}""",
        [("i", False, "find_first", {})],
    ),
    (
        # a statement before the test: the answer is more than the first hit's index
        "return_after_work",
        """
int f(int n, const int *a, int *b) {
  for (int i = 0; i < n; i++) { b[i] = a[i]; if (a[i] == 7) return i; }
  return -1;
}""",
        [("i", False, S, {})],
    ),
    (
        "anti_dependence_shift",
        """
void f(int n, double *a) {
  for (int i = 0; i < n - 1; i++) a[i] = a[i+1];
}""",
        [("i", False, S, {})],
    ),
    (
        "even_odd_independent",
        """
void f(int n, double *a) {
  for (int i = 0; i < n; i++) a[2*i] = a[2*i+1];
}""",
        [("i", True, P, {})],
    ),
    (
        "output_dependence",
        """
void f(int n, double *a, const double *b) {
  for (int i = 0; i < n; i++) a[0] = b[i];
}""",
        [("i", False, S, {})],
    ),
    (
        "sum_reduction",
        """
double f(int n, const double *a) {
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i];
  return s;
}""",
        [("i", False, R, {"s": "+"})],
    ),
    (
        "max_reduction_if",
        """
double f(int n, const double *a) {
  double m = a[0];
  for (int i = 1; i < n; i++) if (a[i] > m) m = a[i];
  return m;
}""",
        [("i", False, R, {"m": "max"})],
    ),
    (
        "min_reduction_ternary",
        """
double f(int n, const double *a) {
  double m = a[0];
  for (int i = 1; i < n; i++) m = a[i] < m ? a[i] : m;
  return m;
}""",
        [("i", False, R, {"m": "min"})],
    ),
    (
        "max_reduction_fmax",
        """
double f(int n, const double *a) {
  double m = -1e300;
  for (int i = 0; i < n; i++) m = fmax(m, a[i]);
  return m;
}""",
        [("i", False, R, {"m": "max"})],
    ),
    (
        "product_reduction",
        """
double f(int n, const double *a) {
  double p = 1;
  for (int i = 0; i < n; i++) p *= a[i];
  return p;
}""",
        [("i", False, R, {"p": "*"})],
    ),
    (
        "several_reductions",
        """
double f(int n, const double *a, const int *b) {
  double s = 0, q = 0; int bits = 0; int x = 0;
  for (int i = 0; i < n; i++) { s += a[i]; q = q + a[i] * a[i]; bits |= b[i]; x ^= b[i]; }
  return s + q + bits + x;
}""",
        [("i", False, R, {"s": "+", "q": "+", "bits": "|", "x": "^"})],
    ),
    (
        "struct_field_reduction",
        """
struct stats { double sum; double max; };
struct stats f(int n, const double *a) {
  struct stats st = {0, 0};
  for (int i = 0; i < n; i++) { st.sum += a[i]; if (a[i] > st.max) st.max = a[i]; }
  return st;
}""",
        [("i", False, R, {"st.sum": "+", "st.max": "max"})],
    ),
    (
        "struct_array_fields",
        """
struct point { double x, y; };
void f(int n, struct point *p, double dx) {
  for (int i = 0; i < n; i++) { p[i].x += dx; p[i].y = p[i].x * 2; }
}""",
        [("i", True, P, {})],
    ),
    (
        "field_arrays",
        """
struct soa { double *x; double *y; int n; };
void f(struct soa *s) {
  for (int i = 0; i < s->n; i++) s->y[i] = 2 * s->x[i];
}""",
        [("i", True, P, {})],
    ),
    (
        "printf_in_loop",
        """
void f(int n, const double *a) {
  for (int i = 0; i < n; i++) printf("%f\\n", a[i]);
}""",
        [("i", False, S, {})],
    ),
    (
        "impure_user_call",
        """
int counter;
void bump(double *p) { *p += 1; counter++; }
void f(int n, double *a) {
  for (int i = 0; i < n; i++) bump(&a[i]);
}""",
        [("i", False, S, {})],
    ),
    (
        "pure_user_call",
        """
static double sq(double v) { return v * v; }
void f(int n, const double *a, double *b) {
  for (int i = 0; i < n; i++) b[i] = sq(a[i]);
}""",
        [("i", True, P, {})],
    ),
    (
        "indirect_write_scatter",
        """
void f(int n, const int *idx, const double *v, double *out) {
  for (int i = 0; i < n; i++) out[idx[i]] = v[i];
}""",
        [("i", False, S, {})],
    ),
    (
        "indirect_read_gather",
        """
void f(int n, const int *idx, const double *v, double *out) {
  for (int i = 0; i < n; i++) out[i] = v[idx[i]];
}""",
        [("i", True, P, {})],
    ),
    (
        "private_scalar_temp",
        """
void f(int n, const double *a, double *b) {
  double t;
  for (int i = 0; i < n; i++) { t = a[i] * 2; b[i] = t + 1; }
}""",
        [("i", True, P, {})],
    ),
    (
        "scalar_used_after_loop",
        """
double f(int n, const double *a, double *b) {
  double t = 0;
  for (int i = 0; i < n; i++) { t = a[i] * 2; b[i] = t; }
  return t;
}""",
        [("i", False, S, {})],
    ),
    (
        "scalar_live_around_outer_loop",
        """
void f(int n, double *a, double *b) {
  double t = 0;
  for (int r = 0; r < 3; r++) {
    b[r] = t;
    for (int i = 0; i < n; i++) { t = a[i]; a[i] = t * 2; }
  }
}""",
        [("r", False, S, {}), ("i", False, S, {})],
    ),
    (
        "scalar_killed_after_loop",
        """
double f(int n, double *a) {
  double t = 0;
  for (int i = 0; i < n; i++) { t = a[i] + 1; a[i] = t * t; }
  t = 5;
  return t;
}""",
        [("i", True, P, {})],
    ),
    (
        "static_local_in_loop",
        """
void f(int n, int *b) {
  for (int i = 0; i < n; i++) { static int calls = 0; calls++; b[i] = calls; }
}""",
        [("i", False, Q, {})],
    ),
    (
        "static_local_array_in_loop",
        """
void f(int n, int *b) {
  for (int i = 0; i < n; i++) { static int seen[4]; seen[i % 4] = i; b[i] = seen[0]; }
}""",
        [("i", False, S, {})],
    ),
    (
        "carried_scalar_recurrence",
        """
void f(int n, double *b) {
  double x = 1;
  for (int i = 0; i < n; i++) { x = x * 0.5 + 1; b[i] = x; }
}""",
        [("i", False, S, {})],
    ),
    (
        "outer_declared_loop_vars",
        """
void f(int n, double *a) {
  int i, j;
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) a[i*n+j] = i + j;
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) a[i*n+j] += 1;
}""",
        [("i", True, P, {}), ("j", True, P, {}), ("i", True, P, {}), ("j", True, P, {})],
    ),
    (
        "negative_step",
        """
void f(int n, double *a, const double *b) {
  for (int i = n - 1; i >= 0; i--) a[i] = b[i] * 2;
}""",
        [("i", True, P, {})],
    ),
    (
        "negative_step_recurrence",
        """
void f(int n, double *a) {
  for (int i = n - 2; i >= 0; i--) a[i] = a[i+1] + 1;
}""",
        [("i", False, Q, {})],
    ),
    (
        "stride_two",
        """
void f(int n, double *a) {
  for (int i = 0; i < n; i += 2) a[i] = a[i+1];
}""",
        [("i", True, P, {})],
    ),
    (
        "while_inside_parallel",
        """
void f(int n, const double *c, int *out) {
  for (int i = 0; i < n; i++) {
    double z = 0; int it = 0;
    while (z < 4.0 && it < 100) { z = z * z + c[i]; it++; }
    out[i] = it;
  }
}""",
        [("i", True, P, {})],
    ),
    (
        "symbolic_offset_unknown",
        """
void f(int n, int m, double *a) {
  for (int i = 0; i < n; i++) a[i] = a[i + m];
}""",
        [("i", False, S, {})],
    ),
    (
        "non_affine_bound_csr",
        """
void f(int n, const int *rowptr, const int *col, const double *val, const double *x, double *y) {
  for (int i = 0; i < n; i++) {
    double s = 0;
    for (int j = rowptr[i]; j < rowptr[i+1]; j++) s += val[j] * x[col[j]];
    y[i] = s;
  }
}""",
        [("i", True, P, {}), ("j", False, R, {"s": "+"})],
    ),
    (
        "column_sums_atomic",
        """
void f(int n, int m, const double *A, double *colsum) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) colsum[j] += A[i*m+j];
}""",
        [("i", False, A, {}), ("j", True, P, {})],
    ),
    (
        "let_bound_row_offset",
        """
void f(int n, const double *a, double *b) {
  for (int i = 0; i < n; i++) {
    int row = i * n;
    for (int j = 0; j < n; j++) b[row + j] = a[row + j] * 2;
  }
}""",
        [("i", True, P, {}), ("j", True, P, {})],
    ),
    (
        "pointer_induction_not_canonical",
        """
void f(double *a, double *end) {
  for (double *p = a; p < end; p++) *p = 0;
}""",
        [],
    ),
    (
        "goto_in_loop",
        """
void f(int n, double *a) {
  for (int i = 0; i < n; i++) { if (a[i] < 0) goto out; a[i] = 1; }
out:;
}""",
        [("i", False, S, {})],
    ),
    (
        "horner_3d_delinearized",
        """
void f(int n, const float *in, float *out) {
  for (int i = 1; i < n - 1; i++)
    for (int j = 1; j < n - 1; j++)
      for (int k = 1; k < n - 1; k++) {
        size_t at = ((size_t)i * n + j) * n + k;
        out[at] = in[at - 1] + in[at + n] + in[at - (size_t)n * n];
      }
}""",
        [("i", True, P, {}), ("j", True, P, {}), ("k", True, P, {})],
    ),
    (
        "horner_3d_column_overflows_row",
        """
void f(int n, float *out) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      for (int k = 0; k <= n; k++) out[((size_t)i * n + j) * n + k] = k;
}""",
        [("i", False, S, {}), ("j", False, S, {}), ("k", False, S, {})],
    ),
    (
        "benign_frontier_with_flag",
        """
int f(int n, const int *row, const int *adj, int level, int *dist) {
  int changed = 0;
  for (int v = 0; v < n; v++) {
    if (dist[v] != level) continue;
    for (int k = row[v]; k < row[v + 1]; k++) {
      int w = adj[k];
      if (dist[w] < 0) { dist[w] = level + 1; changed = 1; }
    }
  }
  return changed;
}""",
        [("v", True, P, {}), ("k", True, P, {})],
    ),
    (
        "benign_mark_visited",
        """
void f(int n, const int *key, int *seen) {
  for (int i = 0; i < n; i++) seen[key[i]] = 1;
}""",
        [("i", True, P, {})],
    ),
    (
        "benign_flag_set_by_many",
        """
int f(int n, const int *a, int key) {
  int found = 0;
  for (int i = 0; i < n; i++) if (a[i] == key) found = 1;
  return found;
}""",
        [("i", True, P, {})],
    ),
    (
        "racing_marks_of_different_values",
        """
void f(int n, const int *key, int *seen) {
  for (int i = 0; i < n; i++) seen[key[i]] = i;
}""",
        [("i", False, S, {})],
    ),
    (
        "racing_mark_read_in_arithmetic",
        """
void f(int n, const int *key, int *seen, int *out) {
  for (int i = 0; i < n; i++) {
    out[i] = seen[key[i]] + 1;
    if (seen[key[i]] < 0) seen[key[i]] = 1;
  }
}""",
        [("i", False, S, {})],
    ),
    (
        "racing_flag_read_in_loop",
        """
int f(int n, const int *a, int *b) {
  int found = 0;
  for (int i = 0; i < n; i++) { if (a[i] == 3) found = 1; b[i] = found; }
  return found;
}""",
        [("i", False, S, {})],
    ),
    (
        "racing_guard_claims_another_element",
        """
void f(int n, const int *adj, int *dist) {
  for (int i = 0; i < n; i++) if (dist[adj[i]] < 0) dist[adj[i] + 1] = 1;
}""",
        [("i", False, S, {})],
    ),
    ("vector_cxx", None, None),  # C++ case, tested below
]


def loops_of(code: str, tmp_path, name: str = "f", suffix: str = ".c"):
    path = tmp_path / f"case{suffix}"
    path.write_text(HEADER + code)
    program = analyze(str(path))
    fn = program.function(name)
    assert fn is not None
    return [
        (loop.var, loop.parallel, loop.pattern, {r.var: r.op for r in loop.reductions})
        for top in fn.loops
        for loop in top.walk()
    ]


@pytest.mark.parametrize(
    "name,code,expected",
    [c for c in CASES if c[1] is not None],
    ids=[c[0] for c in CASES if c[1] is not None],
)
def test_loop_table(name, code, expected, tmp_path):
    assert loops_of(code, tmp_path) == expected


def test_table_is_large_enough():
    assert len([c for c in CASES if c[1] is not None]) >= 40


def test_std_vector_loop(tmp_path):
    code = """
#include <vector>
void f(std::vector<double>& v, const std::vector<double>& w) {
  for (std::size_t i = 0; i < v.size(); i++) v[i] = 2 * w[i];
  double s = 0;
  for (std::size_t i = 0; i < w.size(); i++) s += w[i];
  v[0] = s;
}"""
    path = tmp_path / "case.cpp"
    path.write_text(code)
    fn = analyze(str(path)).function("f")
    assert fn is not None
    first, second = fn.loops
    assert (first.parallel, first.pattern) == (True, "plain")
    assert second.pattern == "reduction"
    assert [(r.var, r.op) for r in second.reductions] == [("s", "+")]
    arrays = {a.name: a for a in fn.arrays_for(first)}
    assert arrays["v"].kind == "vector" and arrays["v"].count == "v.size()"
    assert arrays["v"].elem_type == "double" and arrays["w"].access == "read"


@pytest.mark.parametrize(
    "code,kind",
    [
        ("for (int i = 0; i < n - 1; i++) a[i] = a[i+1];", "anti"),
        ("for (int i = 1; i < n; i++) a[i] = a[i-1] * 2 + a[i];", "flow"),
        ("for (int i = 0; i < n; i++) a[i % 1 + 0] = i;", None),
        ("for (int i = 0; i < n; i++) a[0] = i;", "output"),
    ],
)
def test_dependence_kind_in_reason(code, kind, tmp_path):
    path = tmp_path / "case.c"
    path.write_text(f"void f(int n, double *a) {{ {code} }}\n")
    fn = analyze(str(path)).function("f")
    assert fn is not None
    (loop,) = fn.loops
    assert not loop.parallel
    if kind is None:
        assert "non-affine" in loop.reason
    else:
        assert f"({kind} dependence carried by i)" in loop.reason


@pytest.mark.parametrize(
    "guard,level,expected",
    [
        ("dist[w] < 0", "level + 1", "(level >= 0)"),
        ("dist[w] == -1", "level + 1", "((level <= -3) || (level >= 0))"),
        # storing 5: a node at 5 would pass the filter only before it is claimed, and
        # an unclaimed (negative) node equal to level would too
        ("dist[w] < 0", "5", "(((level >= 0) && (level <= 4)) || (level >= 6))"),
    ],
)
def test_benign_races_carry_the_precondition_isl_derives(guard, level, expected, tmp_path):
    """The filter `dist[v] != level` must read the same on the stored value as on any
    unclaimed one; the guard must fail on the stored value."""
    code = f"""
int f(int n, const int *adj, int level, int *dist) {{
  int changed = 0;
  for (int v = 0; v < n; v++) {{
    if (dist[v] != level) continue;
    int w = adj[v];
    if ({guard}) {{ dist[w] = {level}; changed = 1; }}
  }}
  return changed;
}}"""
    path = tmp_path / "case.c"
    path.write_text(HEADER + code)
    fn = analyze(str(path)).function("f")
    assert fn is not None
    loop = fn.loops[0]
    assert loop.parallel
    assert set(loop.benign) == {"changed", "dist"}
    assert loop.precondition == f"({expected})"
