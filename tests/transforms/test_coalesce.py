from __future__ import annotations

import pytest
from pattern_golden import applied, nvcc_errors, same_output_as_gcc
from transforms_support import GOLDEN, analysed

from cudaify.core import Variant
from cudaify.transforms import get
from cudaify.transforms.base import Context
from cudaify.transforms.structure import structural_problems

CASES = sorted(path.stem for path in (GOLDEN / "coalesce").glob("*.c"))
COALESCE = get("coalesce")

TRANSPOSE = """
#include <stdio.h>
#define N 700
#define M 300
static double in[N][M], out[M][N];
/* as many accesses walk memory with i as with j: no mapping is better */
void transpose(void)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            out[j][i] = in[i][j];
}
/* three accesses walk memory with i, the innermost loop, already on x */
void mix(void)
{
    for (int j = 0; j < M; j++)
        for (int i = 0; i < N; i++)
            out[j][i] = out[j][i] * 0.5 + in[i][j] + out[j][i];
}
int main(void) { transpose(); mix(); printf("%f\\n", out[1][2]); return 0; }
"""


@pytest.mark.parametrize("case", CASES)
def test_golden_output_is_stable_and_compiles(case: str, update_golden: bool, tmp_path) -> None:
    program = analysed(GOLDEN / "coalesce" / f"{case}.c")
    before = applied(program, "offload")
    variant = applied(program, "offload", "coalesce")
    expected = GOLDEN / "coalesce" / f"{case}.cu"
    if update_golden:
        expected.write_text(variant.code)
    assert expected.exists(), f"{expected.name} is missing: rerun with --update-golden to write it"
    assert variant.code == expected.read_text(), f"rerun with --update-golden to accept {case}.cu"
    assert structural_problems(program, variant.code, COALESCE, before) == []
    assert nvcc_errors(variant.code, tmp_path) == ""


def test_the_contiguous_loop_moves_to_x_and_the_grid_follows() -> None:
    program = analysed(GOLDEN / "coalesce" / "column_major.c")
    before = applied(program, "offload").code
    variant = applied(program, "offload", "coalesce")
    code = variant.code
    assert "t_i = blockIdx.y" in before and "t_j = blockIdx.x" in before
    assert "t_i = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_i < trips_i;" in code
    assert "t_i += (long long)blockDim.x * gridDim.x" in code
    assert "t_j = blockIdx.y * (long long)blockDim.y + threadIdx.y; t_j < trips_j;" in code
    assert (
        "const dim3 grid(cudaify_blocks(cudaify_rows(trips_i, 1), 32, 2147483647u), "
        "cudaify_blocks(cudaify_rows(trips_j, trips_i), 8, 65535u));" in code
    )
    # before the swap y's rows were capped beside j's threads on x
    assert "cudaify_blocks(cudaify_rows(trips_i, trips_j), 8, 65535u));" in before
    assert variant.steps[-1].detail == (
        "scale_add_kernel: loop 'i' (3 unit-stride accesses) moves to x, loop 'j' (0) to y"
    )
    # nothing else changes: same length of text outside the two headers and the grid
    assert len(code.splitlines()) == len(before.splitlines())


def test_refuses_when_x_is_already_best_or_tied(program_of) -> None:
    program = program_of(TRANSPOSE)
    offloaded = applied(program, "offload")
    outcome = COALESCE.apply_rule(offloaded, Context(program))
    assert outcome.variant is None
    assert (
        outcome.reason == "kernel 'transpose_kernel': loop 'j' on x already walks contiguous memory"
    )


def test_refuses_one_dimensional_kernels() -> None:
    program = analysed(GOLDEN / "offload" / "saxpy.c")
    reason = COALESCE.applies(applied(program, "offload"), Context(program))
    assert reason == "kernel 'saxpy_kernel' maps one loop: nothing to swap"


def test_refuses_host_code(program_of) -> None:
    program = program_of(TRANSPOSE)
    assert COALESCE.applies(Variant(program.source), Context(program)) == (
        "no kernel maps two or more loops on the grid"
    )


def test_check_finds_two_loops_on_one_dimension() -> None:
    program = analysed(GOLDEN / "coalesce" / "column_major.c")
    before = applied(program, "offload")
    after = applied(program, "offload", "coalesce")
    assert COALESCE.check(before, after, Context(program)) == []
    both_on_x = after.code
    for name in ("blockIdx", "blockDim", "threadIdx", "gridDim"):
        both_on_x = both_on_x.replace(f"{name}.y", f"{name}.x")
    broken = Variant(both_on_x)
    problems = COALESCE.check(before, broken, Context(program))
    assert [p.message for p in problems] == [
        "kernel 'scale_add_kernel' maps two loops on one dimension"
    ]


@pytest.mark.gpu
@pytest.mark.parametrize("case", CASES)
def test_golden_cases_print_what_gcc_prints(case: str, tmp_path) -> None:
    source = GOLDEN / "coalesce" / f"{case}.c"
    cu = tmp_path / f"{case}.cu"
    cu.write_text(applied(analysed(source), "offload", "coalesce").code)
    same_output_as_gcc(source, cu, tmp_path)
