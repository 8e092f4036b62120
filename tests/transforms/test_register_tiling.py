from __future__ import annotations

from pathlib import Path

import pytest
from emulation import run_emulated
from transforms_support import GOLDEN, analysed

from cudaify.core import Variant, toolchain
from cudaify.frontend.facts import Program
from cudaify.transforms import get
from cudaify.transforms.base import Context
from cudaify.transforms.register_tiling import coarsening_problems
from cudaify.transforms.structure import structural_problems

CASES = sorted(p.stem for p in (GOLDEN / "register_tiling").glob("*.c"))
OFFLOAD = get("offload")
COARSEN = get("register_tiling")


def offloaded(program: Program) -> Variant:
    outcome = OFFLOAD.apply_rule(Variant(program.source), Context(program))
    assert outcome.variant is not None, outcome.reason
    return outcome.variant


def coarsened(program: Program) -> Variant:
    outcome = COARSEN.apply_rule(offloaded(program), Context(program))
    assert outcome.variant is not None, outcome.reason
    return outcome.variant


def case(name: str) -> Program:
    return analysed(GOLDEN / "register_tiling" / f"{name}.c")


def nvcc_compiles(code: str, directory: Path) -> str:
    source = directory / "candidate.cu"
    source.write_text(code)
    nvcc = toolchain.find_tool("nvcc")
    argv = [nvcc, "-arch=sm_80", "-c", str(source), "-o", str(directory / "candidate.o")]
    done = toolchain.run(argv, timeout=240)
    return "" if done.ok else done.errors() + done.text()


def reference_output(source: Path, directory: Path) -> str:
    gcc = toolchain.find_tool("gcc")
    built = toolchain.run([gcc, "-O2", str(source), "-o", str(directory / "ref"), "-lm"])
    assert built.ok, built.errors()
    return toolchain.run([str(directory / "ref")], timeout=120).text()


def test_there_are_golden_cases() -> None:
    assert len(CASES) >= 4


@pytest.mark.parametrize("name", CASES)
def test_golden_output_is_stable_and_compiles(name: str, update_golden: bool, tmp_path) -> None:
    program = case(name)
    before = offloaded(program)
    variant = COARSEN.apply_rule(before, Context(program)).variant
    assert variant is not None
    expected = GOLDEN / "register_tiling" / f"{name}.cu"
    if update_golden:
        expected.write_text(variant.code)
    assert expected.exists(), f"{expected.name} is missing: rerun with --update-golden to write it"
    assert variant.code == expected.read_text(), f"rerun with --update-golden to accept {name}.cu"
    assert structural_problems(program, variant.code, COARSEN, before) == []
    assert nvcc_compiles(variant.code, tmp_path) == ""


@pytest.mark.parametrize("name", CASES)
def test_golden_output_emulated_on_the_cpu_prints_what_gcc_prints(name: str, tmp_path) -> None:
    from cudaify.backend.compare import compare

    expected = reference_output(GOLDEN / "register_tiling" / f"{name}.c", tmp_path)
    code = (GOLDEN / "register_tiling" / f"{name}.cu").read_text()
    actual = run_emulated(code, tmp_path)
    assert actual.ok, actual.errors() + actual.text()
    assert compare(expected, actual.text()) is None


def test_a_2d_kernel_computes_four_rows_per_thread_and_loads_shared_values_once() -> None:
    variant = coarsened(case("matmul_flat"))
    code = variant.code
    assert variant.methods == ("offload", "register_tiling")
    assert "matmul_kernel: 4 outputs per thread along 'i' (y" in variant.steps[-1].detail
    # one k loop, four accumulators: b[k * p + j] is the same expression in all four
    assert code.count("for (int k = 0; k < m; k++)") == 2  # the fused loop and the edge path
    for r in range(4):
        assert f"sum_{r} += a[i_{r} * m + k] * b[k * p + j];" in code
        assert f"c[i_{r} * p + j] = sum_{r};" in code
    assert "const long long t_i_3 = base_i + 3LL * blockDim.y;" in code
    assert "base_i += (long long)blockDim.y * gridDim.y * 4)" in code
    # the grid shrinks along y only; the block keeps offload's shape
    assert "const dim3 block(32, 8);" in code
    assert (
        "cudaify_blocks(cudaify_rows(trips_j, 1), 32, 2147483647u), "
        "cudaify_blocks(cudaify_rows(trips_i, trips_j), 32, 65535u)" in code
    )


def test_a_1d_kernel_coarsens_along_x_and_fuses_nested_loops() -> None:
    code = coarsened(case("argmin")).code
    assert "base_i += (long long)blockDim.x * gridDim.x * 4)" in code
    # one fused loop for the four outputs, one in the edge path's original body
    assert code.count("for (int c = 0; c < k; c++) {") == 2
    assert all(f"float d2_{r} = 0.0f;" in code for r in range(4))
    assert "float diff_2 = points[i_2 * DIM + d] - centres[c * DIM + d];" in code
    # each output keeps its statements in order
    assert code.index("int which_0 = -1;") < code.index("float closest_0 = 1.0e30f, second_0")
    assert "const dim3 grid(cudaify_blocks(cudaify_rows(trips_i, 1), 1024, 2147483647u));" in code


def test_the_edge_runs_the_original_body_for_the_outputs_that_exist() -> None:
    code = coarsened(case("scaled")).code
    assert "if (base_i + 3LL * blockDim.y < trips_i) {" in code
    assert "for (int output = 0; output < 4; output++) {" in code
    assert "out[i][j] = w + shift * (i - j);" in code
    assert "out[i_1][j] = w_1 + shift * (i_1 - j);" in code


def test_a_program_without_kernels_is_refused() -> None:
    program = case("scaled")
    reason = COARSEN.applies(Variant(program.source), Context(program))
    assert reason is not None and "offload first" in reason


def test_a_coarsened_kernel_is_not_coarsened_again() -> None:
    program = case("matmul_flat")
    reason = COARSEN.applies(coarsened(program), Context(program))
    assert reason is not None and "grid-stride loop" in reason


def test_a_shared_tiled_kernel_is_refused() -> None:
    program = case("matmul_flat")
    tiled = get("shared_tiling").apply_rule(offloaded(program), Context(program)).variant
    assert tiled is not None
    reason = COARSEN.applies(tiled, Context(program))
    assert reason is not None and "register_tiling: kernel 'matmul_kernel'" in reason


def test_a_body_that_uses_its_thread_index_is_refused() -> None:
    program = case("scaled")
    code = offloaded(program).code
    changed = code.replace("double w = v * v;", "double w = v * threadIdx.x;")
    assert changed != code
    reason = COARSEN.applies(Variant(changed), Context(program))
    assert reason is not None and "already uses 'threadIdx'" in reason


def test_the_check_wants_a_wider_stride_and_no_new_barrier() -> None:
    program = case("matmul_flat")
    before = offloaded(program).code
    after = coarsened(program).code
    assert coarsening_problems(before, after) == []
    messages = [p.message for p in coarsening_problems(before, before)]
    assert messages == ["no grid-stride loop covers 4 outputs per thread"]
    barrier = after.replace("int j = (int)t_j;", "int j = (int)t_j; __syncthreads();", 1)
    assert [p.message for p in coarsening_problems(before, barrier)] == [
        "coarsening added a __syncthreads() barrier"
    ]


@pytest.mark.gpu
@pytest.mark.parametrize("name", CASES)
def test_golden_output_prints_what_gcc_prints(name: str, tmp_path) -> None:
    from cudaify.backend.compare import compare

    expected = reference_output(GOLDEN / "register_tiling" / f"{name}.c", tmp_path)
    nvcc = toolchain.find_tool("nvcc")
    built = toolchain.run(
        [nvcc, "-O2", str(GOLDEN / "register_tiling" / f"{name}.cu"), "-o", str(tmp_path / "gpu")],
        timeout=240,
    )
    assert built.ok, built.errors()
    actual = toolchain.run([str(tmp_path / "gpu")], timeout=120)
    assert actual.ok, actual.errors()
    assert compare(expected, actual.text()) is None
