from __future__ import annotations

import pytest
from pattern_golden import applied, nvcc_errors, same_output_as_gcc
from transforms_support import GOLDEN, analysed

from cudaify.core import Variant
from cudaify.transforms import get
from cudaify.transforms.base import Context
from cudaify.transforms.structure import structural_problems

SCAN = get("scan")


CASES = ["affine", "prefix"]


@pytest.mark.parametrize("case", CASES)
def test_golden_output_is_stable_and_compiles(case: str, update_golden: bool, tmp_path) -> None:
    program = analysed(GOLDEN / "scan" / f"{case}.c")
    variant = applied(program, "scan")
    expected = GOLDEN / "scan" / f"{case}.cu"
    if update_golden or not expected.exists():
        expected.write_text(variant.code)
    assert variant.code == expected.read_text(), f"rerun with --update-golden to accept {case}.cu"
    assert structural_problems(program, variant.code, SCAN) == []
    assert nvcc_errors(variant.code, tmp_path) == ""


def test_the_three_spellings_are_recognised() -> None:
    program = analysed(GOLDEN / "scan" / "prefix.c")
    variant = applied(program, "scan")
    detail = variant.steps[-1].detail
    assert "running_total: loop 'i' at line 12 -> inclusive scan of out" in detail
    assert "offsets: loop 'i' at line 21 -> exclusive scan of start" in detail
    assert "cumulative: loop 'i' at line 31 -> inclusive scan of out" in detail
    code = variant.code
    # CUB comes before the program's `#define N`, which would rewrite its templates
    assert code.index("#include <cub/device/device_scan.cuh>") < code.index("#define N")
    # the accumulator starts from its value before the loop and ends with the total
    # (`start` is taken: offsets() has an array of that name)
    assert "const long long start_2 = running;" in code
    assert "running = start_2 + total_2;" in code
    # the exclusive form stores the sum before each term
    assert "(int)(t_i_2 > 0 ? start_3 + sums_2[t_i_2 - 1] : start_3)" in code
    # the recurrence starts from the element before the first one it writes
    assert "const double start_4 = out[1 - 1];" in code
    assert "terms_3[t_i_3] = (double)(0.5 * in[i]);" in code


SOURCES = {
    "product_recurrence": (
        "void f(int n, const double *a, const double *b, double *x)\n{\n"
        "    for (int i = 1; i < n; i++)\n        x[i] = a[i] * x[i - 1] * b[i];\n}\n",
        "the recurrence is not a sum",
    ),
    "fractional_into_int": (
        "void f(int n, const double *a, const double *b, int *x)\n{\n    int acc = 0;\n"
        "    for (int i = 0; i < n; i++) {\n        acc += a[i] * b[i];\n        x[i] = acc;\n"
        "    }\n}\n",
        "cannot prove",
    ),
}


@pytest.mark.parametrize("case", sorted(SOURCES))
def test_refusals(case: str, program_of) -> None:
    source, words = SOURCES[case]
    program = program_of(
        source
        + "int main(void) { double a[3] = {1, 2, 3}, b[3] = {1, 1, 1};\n"
        "    static __typeof__(SENTINEL) x[3]; f(3, a, b, x); return (int)x[2]; }\n".replace(
            "__typeof__(SENTINEL)", "int" if "int *x" in source else "double"
        )
    )
    reason = SCAN.applies(Variant(program.source), Context(program))
    assert reason is not None and "scan: cannot rewrite loop 'i' in 'f'" in reason
    assert words in reason
    assert SCAN.apply_rule(Variant(program.source), Context(program)).variant is None


def test_scratch_buffers_only_grow_so_repeated_calls_allocate_nothing() -> None:
    code = applied(analysed(GOLDEN / "scan" / "prefix.c"), "scan").code
    assert "static long long *terms = NULL, *sums = NULL;" in code
    assert "if (trips_i > capacity) {" in code
    assert "capacity = trips_i;" in code
    # the size query passes no storage: a kept buffer would make it scan instead
    assert "cub::DeviceScan::InclusiveSum(nullptr, storage_bytes, terms, sums, trips_i)" in code
    assert "if (storage_bytes > storage_capacity) {" in code
    # nothing is freed after a call: the inputs' device copies are kept too
    function = code[code.index("void running_total(") :]
    function = function[: function.index("\n}\n")]
    assert function.count("cudaFree(") == 5  # each only when its buffer must grow
    assert function.count("cudaMalloc(") == 5  # terms, sums, results, storage, the input


def test_input_copies_are_static_buffers_that_only_grow() -> None:
    """Every call copies its inputs (the host rewrites them between calls) into a kept
    device buffer; it is reallocated only when a call needs more bytes."""
    code = applied(analysed(GOLDEN / "scan" / "prefix.c"), "scan").code
    function = code[code.index("void running_total(") :]
    function = function[: function.index("\n}\n")]
    assert "static long long *d_in = NULL;\n" in function
    assert "static size_t capacity_in = 0;\n" in function
    grow = function.index("if ((size_t)(n) * sizeof(long long) > capacity_in) {")
    malloc = function.index("cudaMalloc((void **)&d_in, (size_t)(n) * sizeof(long long))")
    copy = function.index(
        "cudaMemcpy(d_in, in, (size_t)(n) * sizeof(long long), cudaMemcpyHostToDevice)"
    )
    assert grow < malloc < copy
    assert "capacity_in = (size_t)(n) * sizeof(long long);" in function
    assert "cudaFree(d_in));\n                CUDAIFY_CHECK(cudaMalloc((void **)&d_in" in function
    assert function.count("cudaMemcpy(d_in, in") == 1


def test_check_wants_cub_and_a_launch() -> None:
    program = analysed(GOLDEN / "scan" / "prefix.c")
    before = Variant(program.source)
    assert len(SCAN.check(before, before, Context(program))) == 2


def test_an_affine_recurrence_scans_composed_maps() -> None:
    program = analysed(GOLDEN / "scan" / "affine.c")
    code = applied(program, "scan").code
    assert "terms[t_i] = cudaify_affine<double>{(double)(a[i]), (double)(b[i])};" in code
    assert (
        "cub::DeviceScan::InclusiveScan(storage, storage_bytes, terms, sums, cudaify_compose()"
        in code
    )
    assert "(double)(sums[t_i].cudaify_mul * start + sums[t_i].cudaify_add)" in code
    assert "const double start = x[1 - 1];" in code


@pytest.mark.gpu
@pytest.mark.parametrize("case", CASES)
def test_golden_output_prints_what_gcc_prints(case: str, tmp_path) -> None:
    same_output_as_gcc(GOLDEN / "scan" / f"{case}.c", GOLDEN / "scan" / f"{case}.cu", tmp_path)
