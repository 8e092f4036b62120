"""fp_exact: the golden output, the typed rewrite (floating operations only, integer
arithmetic untouched), the postcondition against decoys, and what nvcc makes of it (no
fused multiply-add in the PTX). The emulated run checks the values on the CPU; the GPU
test checks that the output is gcc's, digit for digit."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from emulation import gcc_output, run_emulated
from pattern_golden import applied, nvcc_errors
from transforms_support import GOLDEN, analysed

from cudaify.core import Variant, toolchain
from cudaify.transforms import get
from cudaify.transforms.base import Context
from cudaify.transforms.fp_exact import compares_floats, literal_type
from cudaify.transforms.structure import structural_problems

FOLDER = GOLDEN / "fp_exact"
CASES = sorted(path.stem for path in FOLDER.glob("*.c"))
EXACT = get("fp_exact")
RN_HEADER = Path(__file__).resolve().parent / "rn_emulation.h"


def test_there_are_golden_cases() -> None:
    assert CASES == ["projections"]


@pytest.mark.parametrize("case", CASES)
def test_golden_output_is_stable_and_compiles(case: str, update_golden: bool, tmp_path) -> None:
    program = analysed(FOLDER / f"{case}.c")
    before = applied(program, "offload")
    variant = applied(program, "offload", "fp_exact")
    expected = FOLDER / f"{case}.cu"
    if update_golden:
        expected.write_text(variant.code)
    assert expected.exists(), f"{expected.name} is missing: run with --update-golden to write it"
    assert variant.code == expected.read_text(), f"rerun with --update-golden to accept {case}.cu"
    assert structural_problems(program, variant.code, EXACT, before) == []
    assert nvcc_errors(variant.code, tmp_path) == ""


def projections() -> tuple[Context, Variant, Variant]:
    program = analysed(FOLDER / "projections.c")
    return Context(program), applied(program, "offload"), applied(program, "offload", "fp_exact")


def test_floating_operations_become_intrinsics_and_integer_arithmetic_stays() -> None:
    _context, _before, after = projections()
    code = after.code
    # double, through a typedef; `+=` becomes an assignment of the rounded sum
    assert "dot = __dadd_rn(dot, __dmul_rn(q[i * cols + j], a[i * cols + j]));" in code
    assert (
        "out[i * cols + j] = __dsub_rn(a[i * cols + j], __dmul_rn(q[i * cols + j], dot));" in code
    )
    assert "det[k] = __dsub_rn(__dmul_rn(x[k], y[k + 1]), __dmul_rn(x[k + 1], y[k]));" in code
    # float stays float: a cast and float literals
    assert "f[k] = __fmul_rn(f[k], 0.5f);" in code
    assert "f[k] = __fsub_rn(f[k], __fadd_rn(__fmul_rn((float)x[k], 2.0f), 1.0f));" in code
    # indices and integer results: unchanged
    assert "idx[k] = k * 3 + (k - 1) * 2;" in code
    assert "t_k += (long long)blockDim.x * gridDim.x" in code
    # a field of the file's struct has the field's declared type
    assert "v[k] = __dadd_rn(__dmul_rn(s[k].w, v[k]), 1.0);" in code
    assert after.steps[-1].detail == (
        "project_kernel: __dadd_rn x1, __dmul_rn x2, __dsub_rn x1; determinants_kernel: "
        "__dmul_rn x2, __dsub_rn x1, __fadd_rn x1, __fmul_rn x2, __fsub_rn x1; weigh_kernel: "
        "__dadd_rn x1, __dmul_rn x1"
    )


def test_host_code_is_untouched() -> None:
    _context, before, after = projections()
    host = before.code[: before.code.index("__global__")]
    assert after.code.startswith(host)
    main = before.code[before.code.index("int main(void)") :]
    assert after.code.endswith(main)
    assert "rs += r[j];" in main  # the host's own sums stay operators


KERNEL = """
typedef float real;
#define SCALE 2.5
__host__ __device__ static double helper(double v) { return v * v + 1.0; }
__device__ double twice(double v) { return 2.0 * v; }
__global__ void k(real *x, double (*grid)[64], const float *f, int n, long long *p, int *w)
{
    int i = threadIdx.x;
    x[i] = x[i] * f[i] + 1;
    grid[i][1] -= SCALE * x[i];
    x[i + 1] = helper(x[i]) * 0.5f;
    x[w[i]++] *= 3.0f;
    p[i] = p[i] * n + i;
    x[i] += *(f + i) * twice(x[i]) - (x + 1)[0];
    x[i] = x[i] * 1.0L;
}
int main(void) { return (int)helper(2.0); }
"""


def made_exact(code: str) -> Variant:
    """fp_exact's rule applied to kernel text alone (no analysed program)."""
    variant = Variant(code=code, steps=(), node="offload")
    outcome = EXACT.apply_rule(variant, Context(program=None))  # type: ignore[arg-type]
    assert outcome.variant is not None, outcome.reason
    return outcome.variant


def test_types_follow_c_conversions_and_unknown_ones_are_left(tmp_path: Path) -> None:
    variant = Variant(code=KERNEL, steps=(), node="offload")
    after = made_exact(KERNEL)
    code = after.code
    # real is a typedef of float; 1 converts to float
    assert "x[i] = __fadd_rn(__fmul_rn(x[i], f[i]), 1);" in code
    # SCALE is a macro for a double literal; grid's element is double
    assert "grid[i][1] = __dsub_rn(grid[i][1], __dmul_rn(SCALE, x[i]));" in code
    # a function of the file returning double makes the product double
    assert "x[i + 1] = __dmul_rn(helper(x[i]), 0.5f);" in code
    # a target with a side effect is not duplicated
    assert "x[w[i]++] *= 3.0f;" in code
    # integer arithmetic, however spelled, is not touched
    assert "p[i] = p[i] * n + i;" in code
    # a dereference and pointer arithmetic give the element type; `twice` returns double
    rounded = "__dsub_rn(__dmul_rn(*(f + i), twice(x[i])), (x + 1)[0])"
    assert f"x[i] = __dadd_rn(x[i], {rounded});" in code
    # long double is not float or double: left as written
    assert "x[i] = x[i] * 1.0L;" in code
    # the helper the host runs too is left alone, the __device__ one is rewritten
    assert "return v * v + 1.0;" in code and "return __dmul_rn(2.0, v);" in code
    detail = after.steps[-1].detail
    assert "1 left as written, its target has side effects (first: k: 'x[w[i]++] *= 3.0f'" in (
        detail
    )
    assert "1 left as written, an operand's type is unknown (first: k: 'x[i] * 1.0L'" in detail
    assert detail.endswith("__host__ __device__ helpers left as written: helper")
    assert EXACT.check(variant, after, Context(program=None)) == []  # type: ignore[arg-type]
    assert nvcc_errors(code, tmp_path) == ""


STRUCTS = """struct Point { double x, y; float w; int n; double *p; };
struct Other { int x; };
__global__ void k(Point *pts, const Point q, double *o, float *f)
{
    int i = threadIdx.x;
    Point a = pts[i];
    auto near = [](const Point &u, const Point &v) { return u.x * v.x + u.y * v.y; };
    o[i] = pts[i].x * pts[i].x + a.y * q.y + near(a, q);
    o[i] += (&a)->x * 2.0 + pts->y;
    f[i] = a.w * 3.0f + a.n * a.n;
    o[i] -= a.p[0] * a.x;
    o[i] = a.x.y * 2.0 + pts.x * 2.0;
}
"""


def test_fields_of_the_files_structs_and_lambda_parameters_are_typed() -> None:
    after = made_exact(STRUCTS)
    code = after.code
    # through a reference parameter of a lambda in the kernel
    assert "return __dadd_rn(__dmul_rn(u.x, v.x), __dmul_rn(u.y, v.y));" in code
    # an element's field, a by-value struct's, a pointer's (->), an address's
    assert "__dadd_rn(__dmul_rn(pts[i].x, pts[i].x), __dmul_rn(a.y, q.y))" in code
    assert "o[i] = __dadd_rn(o[i], __dadd_rn(__dmul_rn((&a)->x, 2.0), pts->y));" in code
    # a float field stays float, an int field's product stays integer
    assert "f[i] = __fadd_rn(__fmul_rn(a.w, 3.0f), a.n * a.n);" in code
    # a pointer field's element
    assert "o[i] = __dsub_rn(o[i], __dmul_rn(a.p[0], a.x));" in code
    # a field of a double, `.` on a pointer: not a struct's field, left as written
    assert "o[i] = a.x.y * 2.0 + pts.x * 2.0;" in code
    # a lambda's result is not typed: the sum with it is left, the products in it are not
    assert "o[i] = __dadd_rn(__dmul_rn(pts[i].x, pts[i].x), __dmul_rn(a.y, q.y)) + near(a, q);" in (
        code
    )
    detail = after.steps[-1].detail
    assert "4 left as written, an operand's type is unknown (first: k: 'pts[i].x" in detail


def test_kernels_that_compare_floating_values_are_told_apart() -> None:
    assert compares_floats(STRUCTS.replace("o[i] -= ", "if (a.x < q.x) o[i] -= "))
    assert compares_floats("__global__ void k(float *a) { if (a[0] >= 1.0f) a[0] = 1; }")
    # integers compared, or doubles compared only on the host: rounding decides nothing
    assert not compares_floats("__global__ void k(int *a, int n) { if (a[0] < n) a[0] = 1; }")
    assert not compares_floats("bool less(double a, double b) { return a < b; }\n" + STRUCTS)


@pytest.mark.parametrize(
    "spelled, expected",
    [
        ("1.0", "double"),
        ("1e-3", "double"),
        (".5", "double"),
        ("0x1p3", "double"),
        ("1.0f", "float"),
        ("2.F", "float"),
        ("1.0L", None),
        ("2", "int"),
        ("0xff", "int"),
        ("10u", "int"),
        ("3ll", "int"),
        ("1'000", "int"),
    ],
)
def test_literal_types(spelled: str, expected: str | None) -> None:
    assert literal_type(spelled) == expected


def test_refuses_code_without_floating_kernels_and_a_second_time() -> None:
    integers = Variant(code="__global__ void k(int *a, int n) { a[threadIdx.x] *= n + 1; }\n")
    assert EXACT.applies(integers, Context(program=None)) == (  # type: ignore[arg-type]
        "no __global__ or __device__ function has float or double arithmetic to round"
    )
    unknown = Variant(code="__global__ void k(T *a, T b) { a[threadIdx.x] *= b; }\n")
    assert EXACT.applies(unknown, Context(program=None)) == (  # type: ignore[arg-type]
        "no __global__ or __device__ function has float or double arithmetic of a known type "
        "to round (k: 'a[threadIdx.x] *= b', line 1, is not)"
    )
    context, _before, after = projections()
    assert EXACT.applies(after, context) == (
        "the kernels' float and double arithmetic already rounds through intrinsics"
    )


def _decoy(after: Variant, old: str, new: str) -> Variant:
    assert old in after.code
    return Variant(code=after.code.replace(old, new, 1))


def test_the_postcondition_rejects_decoys() -> None:
    context, before, after = projections()
    assert EXACT.check(before, after, context) == []

    def problems(variant: Variant) -> list[str]:
        return [p.message for p in EXACT.check(before, variant, context)]

    kernel_line = "        det[k] = x[k] * y[k + 1] - x[k + 1] * y[k];\n"
    # a comment that says it was done
    commented = _decoy(before, kernel_line, "        /* fp_exact: no FMA */\n" + kernel_line)
    assert problems(commented) == ["the answer changes nothing but comments and layout"]
    # an unused intrinsic call
    unused = _decoy(before, kernel_line, kernel_line + "        (void)__dmul_rn(1.0, 2.0);\n")
    assert "determinants_kernel: computes something else, not the same operations rounded" in (
        problems(unused)
    )
    # one product left plain: nvcc may still fuse it
    partial = _decoy(after, "__dmul_rn(x[k + 1], y[k])", "x[k + 1] * y[k]")
    assert problems(partial) == [
        "'x[k + 1] * y[k]': a floating product nvcc may fuse",
    ]
    # a double operation rounded to float
    narrowed = _decoy(after, "__dmul_rn(x[k], y[k + 1])", "__fmul_rn(x[k], y[k + 1])")
    assert problems(narrowed) == ["'__fmul_rn' of double and double: C computes this in double"]
    # a different computation
    changed = _decoy(after, "__dsub_rn(__dmul_rn(x[k]", "__dadd_rn(__dmul_rn(x[k]")
    assert problems(changed) == [
        "determinants_kernel: computes something else, not the same operations rounded"
    ]
    # the host's arithmetic is not the method's to change
    host = _decoy(after, "rs += r[j];", "rs = __dadd_rn(rs, r[j]);")
    assert problems(host) == ["the host code changed: only __global__/__device__ code may"]


def _ptx(code: str, directory: Path) -> str:
    source = directory / "kernels.cu"
    source.write_text(code)
    target = directory / "kernels.ptx"
    nvcc = toolchain.find_tool("nvcc")
    done = toolchain.run(
        [nvcc, "-arch=sm_80", "-O3", "-ptx", str(source), "-o", str(target)], timeout=240
    )
    assert done.ok, done.errors()
    return target.read_text()


def _kernel_ptx(ptx: str, kernel: str) -> str:
    match = re.search(rf"\.entry \w*{kernel}\w*\(.*?\n}}\n", ptx, re.S)
    assert match is not None, kernel
    return match.group(0)


def test_nvcc_fuses_the_plain_kernels_and_not_the_rounded_ones(tmp_path: Path) -> None:
    _context, before, after = projections()
    plain, rounded = _ptx(before.code, tmp_path), _ptx(after.code, tmp_path)
    for kernel in ("project_kernel", "determinants_kernel"):
        assert "fma.rn" in _kernel_ptx(plain, kernel)  # what made the output differ
        assert "fma.rn" not in _kernel_ptx(rounded, kernel)
        assert "mul.rn.f64" in _kernel_ptx(rounded, kernel)
    # the struct field's product is rounded too
    assert "fma.rn" in _kernel_ptx(plain, "weigh_kernel")
    assert "fma.rn" not in _kernel_ptx(rounded, "weigh_kernel")


def test_the_emulated_kernels_print_what_gcc_prints(tmp_path: Path) -> None:
    _context, _before, after = projections()
    emulated = run_emulated(after.code, tmp_path, flags=("-include", str(RN_HEADER)))
    assert emulated.ok, emulated.errors()
    assert emulated.text() == gcc_output(FOLDER / "projections.c", tmp_path)


@pytest.mark.gpu
@pytest.mark.parametrize("case", CASES)
def test_on_the_gpu_the_output_is_gccs_digit_for_digit(case: str, tmp_path: Path) -> None:
    source = FOLDER / f"{case}.c"
    program = analysed(source)
    expected = gcc_output(source, tmp_path)
    outputs = {}
    for methods in (("offload",), ("offload", "fp_exact")):
        cu = tmp_path / f"{'_'.join(methods)}.cu"
        cu.write_text(applied(program, *methods).code)
        binary = tmp_path / f"{'_'.join(methods)}.bin"
        nvcc = toolchain.find_tool("nvcc")
        built = toolchain.run([nvcc, "-O3", str(cu), "-o", str(binary)], timeout=240)
        assert built.ok, built.errors()
        ran = toolchain.run([str(binary)], timeout=120)
        assert ran.ok, ran.errors()
        outputs[methods] = ran.text()
    assert outputs[("offload", "fp_exact")] == expected
    assert outputs[("offload",)] != expected  # the fused multiply-adds show in the digits
