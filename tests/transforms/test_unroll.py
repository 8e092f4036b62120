from __future__ import annotations

import pytest
from pattern_golden import applied, nvcc_errors, same_output_as_gcc
from transforms_support import GOLDEN, analysed

from cudaify.core import Variant
from cudaify.transforms import get
from cudaify.transforms.base import Context
from cudaify.transforms.structure import structural_problems
from cudaify.transforms.unroll import trip_count

CASES = sorted(path.stem for path in (GOLDEN / "unroll").glob("*.c"))
UNROLL = get("unroll")


@pytest.mark.parametrize("case", CASES)
def test_golden_output_is_stable_and_compiles(case: str, update_golden: bool, tmp_path) -> None:
    program = analysed(GOLDEN / "unroll" / f"{case}.c")
    before = applied(program, "offload")
    variant = applied(program, "offload", "unroll")
    expected = GOLDEN / "unroll" / f"{case}.cu"
    if update_golden:
        expected.write_text(variant.code)
    assert expected.exists(), f"{expected.name} is missing: rerun with --update-golden to write it"
    assert variant.code == expected.read_text(), f"rerun with --update-golden to accept {case}.cu"
    assert structural_problems(program, variant.code, UNROLL, before) == []
    assert nvcc_errors(variant.code, tmp_path) == ""


def test_small_constant_loops_unroll_fully_long_ones_by_four_runtime_ones_not_at_all() -> None:
    program = analysed(GOLDEN / "unroll" / "filters.c")
    variant = applied(program, "offload", "unroll")
    code = variant.code
    assert code.count("#pragma unroll\n") == 2
    assert code.count("#pragma unroll 4\n") == 1
    assert "#pragma unroll\n            for (int dy = -2; dy <= 2; dy++)" in code
    assert "#pragma unroll 4\n            for (int t = 0; t < TAPS; t++)" in code
    partial = code[code.index("__global__ void partial_kernel") :]
    assert "#pragma" not in partial[: partial.index("\n}\n")]
    assert variant.steps[-1].detail == (
        "filters_kernel: loop 'dy' (5 iterations) unrolled fully; filters_kernel: loop 'dx' "
        "(5 iterations) unrolled fully; filters_kernel_2: loop 't' (48 iterations) unrolled by 4"
    )


def test_trip_counts_of_the_analysis() -> None:
    program = analysed(GOLDEN / "unroll" / "filters.c")
    loops = {loop.var: loop for outer in program.function("filters").loops for loop in outer.walk()}
    assert trip_count(loops["dy"]) == 5
    assert trip_count(loops["t"]) == 48
    assert trip_count(loops["x"]) is None  # w - 2: a run-time bound


def test_refuses_twice_and_without_kernels() -> None:
    program = analysed(GOLDEN / "unroll" / "filters.c")
    once = applied(program, "offload", "unroll")
    assert UNROLL.applies(once, Context(program)) == (
        "kernel 'filters_kernel': its inner loops are already unrolled"
    )
    assert (
        UNROLL.applies(Variant(program.source), Context(program)) == "no kernel to unroll loops in"
    )


def test_refuses_kernels_without_inner_loops() -> None:
    program = analysed(GOLDEN / "offload" / "saxpy.c")
    assert UNROLL.applies(applied(program, "offload"), Context(program)) == (
        "kernel 'saxpy_kernel': it has no sequential loop"
    )


def test_check_finds_a_pragma_outside_kernels() -> None:
    program = analysed(GOLDEN / "unroll" / "filters.c")
    before = applied(program, "offload")
    after = applied(program, "offload", "unroll")
    assert UNROLL.check(before, after, Context(program)) == []
    stray = after.code.replace("int main(void)\n{\n", "int main(void)\n{\n#pragma unroll\n", 1)
    problems = UNROLL.check(before, Variant(stray), Context(program))
    assert [p.message for p in problems] == [
        "#pragma unroll is not right before a loop of a kernel"
    ]


@pytest.mark.gpu
@pytest.mark.parametrize("case", CASES)
def test_golden_cases_print_what_gcc_prints(case: str, tmp_path) -> None:
    source = GOLDEN / "unroll" / f"{case}.c"
    cu = tmp_path / f"{case}.cu"
    cu.write_text(applied(analysed(source), "offload", "unroll").code)
    same_output_as_gcc(source, cu, tmp_path)
