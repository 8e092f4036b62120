"""Odd but valid programs: the analysis must not crash, and what it claims must hold."""

from __future__ import annotations

import time

import pytest

from cudaify.core.errors import SourceError
from cudaify.frontend.analyze import analyze


def analyze_text(tmp_path, code: str, suffix: str = ".c"):
    path = tmp_path / f"case{suffix}"
    path.write_text(code)
    return analyze(str(path))


def loops(program, name: str = "f"):
    fn = program.function(name)
    assert fn is not None
    return [loop for top in fn.loops for loop in top.walk()]


def test_switch_break_is_not_an_early_exit(tmp_path):
    program = analyze_text(
        tmp_path,
        """
void f(int n, const int *a, int *b) {
  for (int i = 0; i < n; i++) {
    switch (a[i]) { case 0: b[i] = 1; break; default: b[i] = 2; }
    if (a[i] > 5) continue;
  }
}""",
    )
    (loop,) = loops(program)
    assert (loop.parallel, loop.early_exit) == (True, False)


def test_break_of_inner_loop_only_stops_the_inner_loop(tmp_path):
    program = analyze_text(
        tmp_path,
        """
void f(int n, const int *a, int *first) {
  for (int i = 0; i < n; i++) {
    first[i] = -1;
    for (int j = 0; j < n; j++) if (a[i*n+j]) { first[i] = j; break; }
  }
}""",
    )
    outer, inner = loops(program)
    assert (outer.early_exit, outer.parallel, outer.perfectly_nested) == (False, True, False)
    assert (inner.early_exit, inner.parallel) == (True, False)


def test_non_canonical_loops_are_not_loops(tmp_path):
    program = analyze_text(
        tmp_path,
        """
void f(int n, double *a) {
  int i, j;
  for (i = 0, j = n - 1; i < j; i++, j--) { double t = a[i]; a[i] = a[j]; a[j] = t; }
  for (;;) { if (n-- < 0) break; }
  for (i = 0; i < n; i++) { if (a[i] < 0) i++; }
  for (i = 0; i < n; i++) n--;
  for (i = 0; i < n; i *= 2) a[i] = 0;
  for (i = i + 1; i < n; i++) a[i] = 0;
  do { n--; } while (n > 0);
  while (n < 10) n++;
}""",
    )
    assert loops(program) == []


def test_function_pointer_call_is_not_parallel(tmp_path):
    program = analyze_text(
        tmp_path,
        """
typedef double (*op_t)(double);
void f(int n, op_t op, double *a) {
  for (int i = 0; i < n; i++) a[i] = op(a[i]);
}""",
    )
    (loop,) = loops(program)
    assert not loop.parallel and "op" in loop.reason


def test_pointer_to_pointer_rows_are_not_trusted(tmp_path):
    program = analyze_text(
        tmp_path,
        """
void f(int n, double **a, double **b) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) a[i][j] = b[i][j];
}""",
    )
    outer, inner = loops(program)
    assert not outer.parallel and not inner.parallel
    assert outer.perfectly_nested and outer.children == (inner,)
    data = {d.name: d for d in program.function("f").arrays_for(outer)}
    assert data["a[i][j]"].count is None and data["b[i][j]"].count is None
    assert (data["a"].count, data["a"].elem_type, data["a"].access) == ("n", "double *", "read")


def test_unsigned_inclusive_and_empty_body(tmp_path):
    program = analyze_text(
        tmp_path,
        """
void f(unsigned n, float *a) {
  unsigned i;
  for (i = 0; i <= n; i++) a[i] = 0;
  for (i = 0; i < n; i++);
}""",
    )
    first, second = loops(program)
    assert first.upper_inclusive and first.parallel and first.upper == "n"
    assert first.var_declared_in_header is False
    assert second.parallel


def test_loop_spans_and_positions(tmp_path):
    code = "void f(int n, double *a) {\n  for (int i = 0; i < n; i += 3) { a[i] = 1; }\n}\n"
    program = analyze_text(tmp_path, code)
    (loop,) = loops(program)
    data = code.encode()
    assert data[loop.span.start : loop.span.end] == b"for (int i = 0; i < n; i += 3) { a[i] = 1; }"
    assert data[loop.body_span.start : loop.body_span.end] == b"{ a[i] = 1; }"
    assert (loop.line, loop.column, loop.step, loop.lower) == (2, 3, 3, "0")
    assert loop.var_declared_in_header
    fn = program.function("f")
    assert data[fn.body_span.start : fn.body_span.end].startswith(b"{\n  for")
    assert fn.signature == "void f(int n, double *a)"
    assert [(p.name, p.is_pointer, p.elem_type) for p in fn.params] == [
        ("n", False, None),
        ("a", True, "double"),
    ]


def test_macros_recursion_vla_and_structs(tmp_path):
    program = analyze_text(
        tmp_path,
        """
#define LOOP(v, n) for (int v = 0; v < (n); v++)
struct pt { double x, y; };
int fact(int k) { return k <= 1 ? 1 : k * fact(k - 1); }
void f(int n, struct pt *p, struct pt q) {
  double tmp[n];
  LOOP(i, n) { tmp[i] = p[i].x; p[i] = q; p[i].y = tmp[i] + fact(3); }
  for (int i = 0; i < n; i++) { tmp[i] = p[i].x; p[i] = q; p[i].y = tmp[i] + fact(3); }
}
int main(void) { struct pt a[4] = {{0}}; struct pt q = {1, 2}; f(4, a, q); return 0; }
""",
    )
    (loop,) = loops(program)  # a loop spelled by a macro cannot be rewritten: not a Loop
    assert not loop.parallel and "fact" in loop.reason  # recursive: treated as impure
    data = {d.name: d for d in program.function("f").arrays_for(loop)}
    assert (data["tmp"].kind, data["tmp"].count, data["p"].elem_type) == (
        "local_array",
        "n",
        "struct pt",
    )
    fn = program.function("f")
    assert fn is not None and fn.estimated_calls == 1
    assert program.function("fact").estimated_calls >= 100  # called inside f's loop


def test_cxx_methods_templates_lambdas_and_range_for(tmp_path):
    program = analyze_text(
        tmp_path,
        """
#include <vector>
#include <cmath>
template <typename T> T twice(T v) { return v + v; }
struct grid {
  std::vector<double> cells;
  int width = 0;
  void relax() {
    for (int i = 1; i < width - 1; i++) cells[i] = 0.5 * (cells[i-1] + cells[i+1]);
  }
};
void f(std::vector<float>& v) {
  auto square = [](float x) { return x * x; };
  for (float& x : v) x = square(x);
  for (int i = 0; i < (int)v.size(); i++) v[i] = std::sqrt(twice(v[i]));
}
""",
        suffix=".cpp",
    )
    fn = program.function("f")
    assert fn is not None
    assert len(fn.loops) == 1  # the range-for is not a canonical loop
    relax = program.function("relax")
    assert relax is not None and relax.loops and not relax.loops[0].parallel


def test_includes_and_call_sites(tmp_path):
    program = analyze_text(
        tmp_path,
        """
#include <stdio.h>
static void scale(int n, double *a, double s) { for (int i = 0; i < n; i++) a[i] *= s; }
int main(void) {
  double a[8] = {0};
  for (int r = 0; r < 3; r++) scale(8, a, 2.0);
  printf("%f\\n", a[0]);
  return 0;
}""",
    )
    assert any(path.endswith("stdio.h") for path in program.includes)
    main = program.function("main")
    site = next(c for c in main.calls if c.callee == "scale")
    assert site.arguments == ("8", "a", "2.0") and site.in_loop
    assert program.function("scale").estimated_calls == 100
    assert program.function("scale").is_static


def test_source_errors_carry_locations(tmp_path):
    with pytest.raises(SourceError) as caught:
        analyze_text(tmp_path, "void f(void) { int x = ; }\n")
    assert ":1:" in str(caught.value)


def test_two_thousand_lines_are_analyzed_quickly(tmp_path):
    """A benchmark more than a test: the bound is generous because this machine is
    shared; on an idle core the analysis takes about a second."""
    parts = ["#include <math.h>\n"]
    k = 0
    while sum(p.count("\n") for p in parts) < 2000:
        parts.append(f"""
void kernel{k}(int n, int m, const double *a, const double *b, double *c, double *d) {{
  double s = 0;
  for (int i = 0; i < n; i++) {{
    for (int j = 0; j < m; j++) {{
      c[i*m+j] = a[i*m+j+{k % 7}] * b[j] + sqrt(fabs(a[i*m+j]));
      s += c[i*m+j];
    }}
  }}
  for (int i = {1 + k % 3}; i < n - {k % 5}; i++) d[i] = d[i-1] + s * a[i];
  for (int i = 0; i < n; i++) if (a[i] > s) s = a[i];
  d[0] = s;
}}
""")
        k += 1
    start = time.process_time()
    program = analyze_text(tmp_path, "".join(parts))
    seconds = time.process_time() - start
    assert len(program.functions) == k
    assert seconds < 6.0, f"analysis took {seconds:.2f} s of CPU for 2,000 lines"


def test_parameters_passed_the_same_array_alias(tmp_path):
    program = analyze_text(
        tmp_path,
        """
void shift(int n, double *dst, const double *src) {
  for (int i = 0; i < n - 1; i++) dst[i] = src[i + 1];
}
void copy(int n, double *dst, const double *src) {
  for (int i = 0; i < n; i++) dst[i] = src[i];
}
int main(void) {
  double a[8] = {0}, b[8] = {0};
  shift(8, a, a);
  copy(8, b, a);
  return 0;
}""",
    )
    (shift,) = loops(program, "shift")
    assert not shift.parallel and "dst and src may be the same array" in shift.reason
    (copy,) = loops(program, "copy")
    assert copy.parallel


def test_local_pointers_into_other_arrays_may_alias(tmp_path):
    program = analyze_text(
        tmp_path,
        """
#include <stdlib.h>
void f(int n, double *a) {
  double *p = a + 1;
  for (int i = 0; i < n - 1; i++) p[i] = a[i];
}
void g(int n) {
  double *x = malloc(n * sizeof(double));
  double *y = (double *)calloc(n, sizeof(double));
  for (int i = 0; i < n; i++) y[i] = x[i];
  free(x);
  free(y);
}""",
    )
    (shifted,) = loops(program, "f")
    assert not shifted.parallel and "p is a local pointer" in shifted.reason
    (fresh,) = loops(program, "g")
    assert fresh.parallel
