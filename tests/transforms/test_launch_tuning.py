from __future__ import annotations

import pytest
from pattern_golden import applied, nvcc_errors, same_output_as_gcc
from transforms_support import GOLDEN, analysed

from cudaify.core import Variant
from cudaify.transforms import get
from cudaify.transforms.base import Context
from cudaify.transforms.launch_tuning import SHAPES
from cudaify.transforms.structure import structural_problems

CASES = sorted(path.stem for path in (GOLDEN / "launch_tuning").glob("*.c"))
TUNING = get("launch_tuning")


@pytest.mark.parametrize("case", CASES)
def test_golden_output_is_stable_and_compiles(case: str, update_golden: bool, tmp_path) -> None:
    program = analysed(GOLDEN / "launch_tuning" / f"{case}.c")
    before = applied(program, "offload")
    variant = applied(program, "offload", "launch_tuning")
    expected = GOLDEN / "launch_tuning" / f"{case}.cu"
    if update_golden:
        expected.write_text(variant.code)
    assert expected.exists(), f"{expected.name} is missing: rerun with --update-golden to write it"
    assert variant.code == expected.read_text(), f"rerun with --update-golden to accept {case}.cu"
    assert structural_problems(program, variant.code, TUNING, before) == []
    assert nvcc_errors(variant.code, tmp_path) == ""


# diffuse3d: offload's 3-D launches (`const dim3 block(32, 4, 2)`) had no list of shapes
@pytest.mark.parametrize("case, rank", [("saxpy", 1), ("linear2d", 2), ("diffuse3d", 3)])
def test_repeated_application_walks_the_list_then_stops(case: str, rank: int) -> None:
    program = analysed(GOLDEN / "launch_tuning" / f"{case}.c")
    variant = applied(program, "offload")
    shapes = SHAPES[rank]
    for shape in shapes[1:]:
        outcome = TUNING.apply_rule(variant, Context(program))
        assert outcome.variant is not None, outcome.reason
        variant = outcome.variant
        sizes = ", ".join(str(size) for size in shape)
        assert f"const dim3 block({sizes});" in variant.code
        threads = 1
        for size in shape:
            threads *= size
        assert f"__launch_bounds__({threads}) " in variant.code
        assert variant.code.count("__launch_bounds__") == 1
        assert variant.steps[-1].detail.endswith("x".join(str(size) for size in shape))
    last = TUNING.apply_rule(variant, Context(program))
    assert last.variant is None
    assert last.reason.endswith("every shape in the list has been tried")


def test_the_grid_divides_by_the_new_block_sizes() -> None:
    program = analysed(GOLDEN / "launch_tuning" / "linear2d.c")
    code = applied(program, "offload", "launch_tuning").code
    assert "const dim3 block(16, 16);" in code
    assert (
        "const dim3 grid(cudaify_blocks(cudaify_rows(trips_j, 1), 16, 2147483647u), "
        "cudaify_blocks(cudaify_rows(trips_i, trips_j), 16, 65535u));" in code
    )


def test_refuses_kernels_that_use_shared_memory() -> None:
    program = analysed(GOLDEN / "reduction" / "sums.c")
    reduced = applied(program, "reduction")
    reason = TUNING.applies(reduced, Context(program))
    assert reason is not None and reason.endswith("it uses shared memory, barriers or shuffles")


def test_refuses_host_code() -> None:
    program = analysed(GOLDEN / "launch_tuning" / "saxpy.c")
    assert TUNING.applies(Variant(program.source), Context(program)) == (
        "no kernel launch with a dim3 block and grid"
    )


def test_check_finds_a_grid_that_does_not_follow_the_block() -> None:
    program = analysed(GOLDEN / "launch_tuning" / "saxpy.c")
    before = applied(program, "offload")
    after = applied(program, "offload", "launch_tuning")
    assert TUNING.check(before, after, Context(program)) == []
    stale = Variant(
        after.code.replace(
            "cudaify_blocks(cudaify_rows(trips_i, 1), 128,",
            "cudaify_blocks(cudaify_rows(trips_i, 1), 256,",
        )
    )
    problems = TUNING.check(before, stale, Context(program))
    assert [p.message for p in problems] == [
        "the grid of 'saxpy_kernel' counts blocks of [256], the block is (128,)"
    ]


def test_a_coarsened_grid_keeps_its_outputs_per_thread() -> None:
    """After register_tiling each thread of matmul's kernel computes 4 rows: the grid's y
    dimension counts blocks of 4 * blockDim.y threads, with the new shape too."""
    program = analysed(GOLDEN / "register_tiling" / "matmul_flat.c")
    tiled = applied(program, "offload", "register_tiling")
    assert "cudaify_blocks(cudaify_rows(trips_i, trips_j), 32, 65535u)" in tiled.code  # 4 x 8 rows
    tuned = applied(program, "offload", "register_tiling", "launch_tuning")
    assert "const dim3 block(16, 16);" in tuned.code
    assert (
        "const dim3 grid(cudaify_blocks(cudaify_rows(trips_j, 1), 16, 2147483647u), "
        "cudaify_blocks(cudaify_rows(trips_i, trips_j), 64, 65535u));" in tuned.code
    )
    assert TUNING.check(tiled, tuned, Context(program)) == []
    assert structural_problems(program, tuned.code, TUNING) == []
    # a grid that forgets the factor launches 4 times the blocks the rows need
    stale = Variant(
        tuned.code.replace(
            "cudaify_blocks(cudaify_rows(trips_i, trips_j), 64,",
            "cudaify_blocks(cudaify_rows(trips_i, trips_j), 16,",
        )
    )
    assert [p.message for p in TUNING.check(tiled, stale, Context(program))] == [
        "the grid of 'matmul_kernel' counts blocks of [16, 16], the block is (16, 16) "
        "and each thread computes (1, 4)"
    ]


@pytest.mark.gpu
def test_a_coarsened_kernel_with_each_shape_prints_what_gcc_prints(tmp_path) -> None:
    source = GOLDEN / "register_tiling" / "matmul_flat.c"
    cu = tmp_path / "matmul_flat.cu"
    methods = ("offload", "register_tiling", "launch_tuning", "launch_tuning")
    cu.write_text(applied(analysed(source), *methods).code)
    same_output_as_gcc(source, cu, tmp_path)


@pytest.mark.gpu
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("steps", [1, 2, 3, 4])
def test_every_shape_prints_what_gcc_prints(case: str, steps: int, tmp_path) -> None:
    source = GOLDEN / "launch_tuning" / f"{case}.c"
    cu = tmp_path / f"{case}.cu"
    cu.write_text(applied(analysed(source), "offload", *["launch_tuning"] * steps).code)
    same_output_as_gcc(source, cu, tmp_path)


def test_refuses_a_grid_of_more_dimensions_than_its_block() -> None:
    """A model's answer launched a 1-D block on a 2-D grid: the rule refuses it (it crashed
    with an IndexError, an internal error of the whole compile)."""
    program = analysed(GOLDEN / "launch_tuning" / "saxpy.c")
    offloaded = applied(program, "offload")
    one_d = "const dim3 grid(cudaify_blocks(cudaify_rows(trips_i, 1), 256, 2147483647u));"
    assert one_d in offloaded.code
    two_d = (
        "const dim3 grid(cudaify_blocks(cudaify_rows(trips_i, 1), 256, 2147483647u), "
        "cudaify_blocks(1, 1, 65535u));"
    )
    variant = Variant(offloaded.code.replace(one_d, two_d))
    reason = TUNING.applies(variant, Context(program))
    assert reason is not None and "different numbers of dimensions" in reason


@pytest.mark.parametrize(
    "case, rank, innermost",
    [("saxpy", 1, "trips_i"), ("linear2d", 2, "trips_j"), ("diffuse3d", 3, "trips_k")],
)
def test_scheduled_launches_with_their_shapes_written_inline_are_tuned(
    case: str, rank: int, innermost: str, tmp_path
) -> None:
    """`schedule` writes `k<<<dim3(...), dim3(32, 4, 2)>>>`, no dim3 declared before the
    launch: the rule refused every scheduled kernel. Each shape of the list now replaces the
    block and the grid's block sizes in the launch itself, and the program, emulated on the
    CPU, prints what gcc's build prints."""
    from emulation import SERIAL_HEADER, gcc_output, run_emulated

    from cudaify.backend.compare import compare

    source = GOLDEN / "launch_tuning" / f"{case}.c"
    program = analysed(source)
    scheduled = applied(program, "schedule")
    variant = scheduled
    expected = gcc_output(source, tmp_path)
    for shape in SHAPES[rank][1:]:
        outcome = TUNING.apply_rule(variant, Context(program))
        assert outcome.variant is not None, outcome.reason
        assert TUNING.check(variant, outcome.variant, Context(program)) == []
        variant = outcome.variant
        sizes = ", ".join(str(size) for size in shape)
        assert f", dim3({sizes})>>>" in variant.code
        # the grid's x dimension counts blocks of the new block's x size
        assert f"cudaify_blocks(cudaify_rows({innermost}, 1), {shape[0]}, 2147483647u)" in (
            variant.code
        )
        actual = run_emulated(variant.code, tmp_path, header=SERIAL_HEADER)
        assert actual.ok, actual.errors()
        assert compare(expected, actual.text()) is None
    assert structural_problems(program, variant.code, TUNING, scheduled) == []
