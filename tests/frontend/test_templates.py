"""Function templates are analysed once, from their own body, and instantiated as used:
the bindings come from the call sites, through templates that call templates."""

from __future__ import annotations

from pathlib import Path

from cudaify.frontend.analyze import analyze
from cudaify.frontend.templates import Template, explicit_arguments, unify

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "cpp"


def analyze_text(tmp_path, code: str):
    path = tmp_path / "case.cpp"
    path.write_text(code)
    return analyze(str(path))


def test_axpy_template_hot_loop_is_parallel_for_each_instantiation():
    program = analyze(str(BENCH / "axpy_template.cpp"))
    axpy = program.function("axpy")
    assert axpy.template_params == ("T",)
    assert axpy.instantiations == ((("T", "float"),), (("T", "double"),))
    (loop,) = axpy.loops
    assert (loop.var, loop.parallel, loop.pattern) == ("i", True, "plain")
    arrays = {a.name: (a.elem_type, a.kind, a.access) for a in axpy.arrays_for(loop)}
    assert arrays == {"x": ("T", "vector", "read"), "y": ("T", "vector", "readwrite")}
    (sum_loop,) = program.function("weighted_sum").loops
    assert sum_loop.pattern == "reduction" and sum_loop.upper == "v.size()"
    (rounds,) = program.function("run_rounds").loops
    assert not rounds.parallel and "axpy" in rounds.calls


def test_template_stencil_with_a_non_type_parameter():
    program = analyze(str(BENCH / "template_stencil.cpp"))
    step = program.function("stencil_step")
    assert step.instantiations == (
        (("R", "2"), ("T", "float")),
        (("R", "4"), ("T", "float")),
    )
    (outer,) = step.loops
    (inner,) = outer.children
    assert (outer.lower, outer.upper, outer.parallel) == ("R", "n - R", True)
    assert outer.lower_affine is not None and outer.lower_affine.names == ("R",)
    assert (inner.pattern, [r.var for r in inner.reductions]) == ("reduction", ["acc"])
    weights = program.function("binomial_weights")
    assert weights.instantiations == ((("R", "2"),), (("R", "4"),))


def test_pointer_templates_and_their_dependences(tmp_path):
    program = analyze_text(
        tmp_path,
        """
template <typename T, int S>
void shift(T *a, const T *b, int n) {
  for (int i = 0; i < n; i++) a[i] = b[i + S];
  for (int i = S; i < n; i++) a[i] = a[i - S] * 2;
}
template <typename U>
void outer(U *a, U *b, int n) { shift<U, 3>(a, b, n); }
int main() {
  static double x[64], y[64];
  static int p[64], q[64];
  outer(x, y, 60);
  shift<int, 1>(p, q, 60);
  return 0;
}
""",
    )
    shift = program.function("shift")
    first, second = shift.loops
    assert first.parallel
    assert not second.parallel and "dependence" in second.reason
    assert {a.elem_type for a in shift.arrays_for(first)} == {"T"}
    assert set(shift.instantiations) == {(("T", "int"), ("S", "1")), (("T", "double"), ("S", "3"))}


def test_class_template_member_loops_are_analysed(tmp_path):
    program = analyze_text(
        tmp_path,
        """
template <typename T>
struct Scaler {
  T factor;
  void apply(T *v, int n) { for (int i = 0; i < n; i++) v[i] = v[i] * factor; }
};
int main() { float v[8] = {0}; Scaler<float> s{2.0f}; s.apply(v, 8); return 0; }
""",
    )
    (loop,) = program.function("apply").loops
    assert loop.parallel


def test_unify_reads_parameters_off_argument_types():
    template = Template("f", ("T", "N"), ("const std::array<T, N> &", "T *"), ("f", 0))
    assert unify(template, ["std::array<float, 8>", "float *"]) == {"T": "float", "N": "8"}
    assert unify(template, ["std::array<float, 8>", "int *"]) is None
    assert unify(template, ["std::array<float, 8>"]) is None
    assert explicit_arguments("g<R, std::pair<int, int>>(a)") == ["R", "std::pair<int, int>"]
    assert explicit_arguments("g(a)") == []


def test_member_arrays_through_implicit_this(tmp_path):
    program = analyze_text(
        tmp_path,
        """
#include <vector>
struct Grid {
  std::vector<float> data;
  float *buf;
  int n;
  void scale(float f) { for (int i = 0; i < n; i++) data[i] *= f; }
  void scale_buf(float f) { for (int i = 0; i < n; i++) this->buf[i] = buf[i] * f; }
  void smear() { for (int i = 1; i < n; i++) buf[i] = buf[i] + buf[i - 1] * 0.5f; }
};
int main() { Grid g; g.n = 4; g.data.resize(4); g.buf = new float[4]; g.scale(2); return 0; }
""",
    )
    (scale,) = program.function("scale").loops
    assert scale.parallel
    assert [(a.name, a.kind, a.count) for a in program.function("scale").arrays_for(scale)] == [
        ("data", "vector", "data.size()")
    ]
    (scale_buf,) = program.function("scale_buf").loops
    assert scale_buf.parallel
    (array,) = program.function("scale_buf").arrays_for(scale_buf)
    assert (array.name, array.kind, array.count, array.access) == ("buf", "field", "n", "readwrite")
    (smear,) = program.function("smear").loops
    assert not smear.parallel
