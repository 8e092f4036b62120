from __future__ import annotations

import re
from pathlib import Path

import pytest
from emulation import run_emulated
from transforms_support import GOLDEN, analysed

from cudaify.core import Variant, toolchain
from cudaify.frontend.facts import Program
from cudaify.transforms import get
from cudaify.transforms.base import Context
from cudaify.transforms.gemm_tiling import gemm_problems
from cudaify.transforms.structure import structural_problems

CASES = sorted(p.stem for p in (GOLDEN / "gemm_tiling").glob("*.c"))
GEMM = get("gemm_tiling")
BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def applied(program: Program, *methods: str) -> Variant:
    variant = Variant(program.source)
    for method in methods:
        outcome = get(method).apply_rule(variant, Context(program))
        assert outcome.variant is not None, outcome.reason
        variant = outcome.variant
    return variant


def case(name: str) -> Program:
    return analysed(GOLDEN / "gemm_tiling" / f"{name}.c")


def refusal(program: Program) -> str:
    variant = applied(program, "offload")
    reason = GEMM.applies(variant, Context(program))
    outcome = GEMM.apply_rule(variant, Context(program))
    assert outcome.variant is None
    assert reason == outcome.reason and reason
    return reason


def nvcc_compiles(code: str, directory: Path) -> str:
    source = directory / "candidate.cu"
    source.write_text(code)
    nvcc = toolchain.find_tool("nvcc")
    argv = [nvcc, "-arch=sm_80", "-c", str(source), "-o", str(directory / "candidate.o")]
    done = toolchain.run(argv, timeout=240)
    return "" if done.ok else done.errors() + done.text()


def gcc_output(source: Path, directory: Path, flags: tuple[str, ...] = ()) -> str:
    gcc = toolchain.find_tool("gcc")
    built = toolchain.run([gcc, "-O2", *flags, str(source), "-o", str(directory / "ref"), "-lm"])
    assert built.ok, built.errors()
    return toolchain.run([str(directory / "ref")], timeout=600).text()


def test_there_are_golden_cases() -> None:
    assert len(CASES) >= 3


@pytest.mark.parametrize("name", CASES)
def test_golden_output_is_stable_and_compiles(name: str, update_golden: bool, tmp_path) -> None:
    program = case(name)
    before = applied(program, "offload")
    variant = GEMM.apply_rule(before, Context(program)).variant
    assert variant is not None
    expected = GOLDEN / "gemm_tiling" / f"{name}.cu"
    if update_golden:
        expected.write_text(variant.code)
    assert expected.exists(), f"{expected.name} is missing: rerun with --update-golden to write it"
    assert variant.code == expected.read_text(), f"rerun with --update-golden to accept {name}.cu"
    assert structural_problems(program, variant.code, GEMM, before) == []
    assert GEMM.check(before, variant, Context(program)) == []
    assert nvcc_compiles(variant.code, tmp_path) == ""


@pytest.mark.parametrize("processors", [132, 1])
@pytest.mark.parametrize("name", CASES)
def test_golden_output_emulated_on_the_cpu_prints_what_gcc_prints(
    name: str, processors: int, tmp_path
) -> None:
    """Every thread a std::thread, every barrier a std::barrier: the vector and scalar
    loads, the edges and the micro-tiles, without a GPU. On 132 multiprocessors a float
    product of these sizes launches narrow tiles, on 1 wide ones: both paths run."""
    from cudaify.backend.compare import compare

    expected = gcc_output(GOLDEN / "gemm_tiling" / f"{name}.c", tmp_path)
    flags = (f"-DEMULATED_PROCESSORS={processors}",)
    actual = run_emulated(
        (GOLDEN / "gemm_tiling" / f"{name}.cu").read_text(), tmp_path, flags=flags
    )
    assert actual.ok, actual.errors() + actual.text()
    assert compare(expected, actual.text()) is None


def test_float_gets_128x128_tiles_of_8x8_outputs_with_float4_loads() -> None:
    variant = applied(case("sgemm_flat"), "offload", "gemm_tiling")
    code = variant.code
    assert variant.steps[-1].detail == (
        "matmul_kernel: 128x128 float tiles, 8x8 outputs per thread, 8 iterations of 'k' per "
        "stage, staging a[i * m + k] (rows, vector), b[k * p + j] (cols, vector)"
    )
    # a walks k: its slice is stored k-major (transposed), padded by one vector
    assert "alignas(16) __shared__ float tile_a[8][132];" in code
    assert "tile_a[slot_inner + 3][slot_outer] = staged_a[part][3];" in code
    assert "tile_b[slot_outer][slot_inner + 3] = staged_b[part][3];" in code
    # one float4 load where aligned and inside the matrix, else four scalar loads, into the
    # thread's staging registers
    assert "if (((unsigned long long)address & 15ull) == 0) {" in code
    assert "staged_a[part][3] = packed.w;" in code
    assert "staged_a[part][1] = a[i * m + k];" in code
    # one stage ahead: stored after the barrier that ends the stage before, the next one
    # fetched (its loads in flight) while the block computes on this one
    assert "float staged_a[1][4];" in code
    stage = code[code.index("tile_k < trips_k; tile_k += 8) {") :]  # the 128 x 128 path
    stored = stage.index("tile_a[slot_inner][slot_outer] = staged_a[part][0];")
    barrier = stage.index("__syncthreads();")
    fetched = stage.index("if (next_k < trips_k) {")
    assert stored < barrier < stage.index("next_k = tile_k + 8;") < fetched
    assert fetched < stage.index("const int count_k") < stage.index("sum_tile[out_r][out_c] +=")
    # the micro-tile: registers, fragments read from shared memory as vectors
    assert "float sum_tile[8][8];" in code
    assert "&tile_b[kk_k][half * 64 + threadIdx.x * 4]" in code
    assert "sum_tile[out_r][out_c] += frag_a[out_r] * frag_b[out_c];" in code
    assert "c[i * p + j] = sum_tile[out_r][out_c];" in code
    assert "const dim3 block(16, 16);" in code
    # the launch sizes its grid by the tile the GPU fills: 128 x 128 where there are at least
    # as many as multiprocessors, else 64 x 64 (4 x 4 per thread, k 16 at a time)
    assert (
        "cudaify_blocks(trips_j, matmul_kernel_tile(trips_i, trips_j), 2147483647u), "
        "cudaify_blocks(trips_i, matmul_kernel_tile(trips_i, trips_j), 65535u)"
    ) in code
    assert "static int matmul_kernel_tile(long long rows, long long cols)" in code
    assert "return ((rows + 127) / 128) * ((cols + 127) / 128) < processors ? 64 : 128;" in code
    # the kernel runs the path its grid was sized for
    assert (
        "const bool narrow = (long long)gridDim.y > (trips_i + 127) / 128 || "
        "(long long)gridDim.x > (trips_j + 127) / 128;"
    ) in code
    assert "alignas(16) __shared__ float tile_a[16][68];" in code
    assert "float sum_tile[4][4];" in code
    # two per stage on each path: wide, narrow, and narrow with k split over the blocks of
    # a tile (one more there; the host splits only where it launches the narrow tiles)
    assert code.count("__syncthreads();") == 7
    assert code.count("__syncthreads_or(arrived)") == 1
    assert "next_k = tile_k + 16LL * gridDim.z;" in code


def test_double_accumulates_in_registers_and_keeps_alpha_and_beta_per_output() -> None:
    code = applied(case("dgemm_alpha_beta"), "offload", "gemm_tiling").code
    assert "alignas(16) __shared__ double tile_a[16][66];" in code
    assert "double acc_c[4][4];" in code
    # the prologue, then the element into a register (when the k loop runs at all)
    assert code.index("c[i * nj + j] *= beta;") < code.index("acc_c[out_r][out_c] = c[i * nj + j];")
    assert "acc_c[out_r][out_c] += alpha * frag_a[out_r] * frag_b[out_c];" in code
    assert "c[i * nj + j] = acc_c[out_r][out_c];" in code
    # b[j * nk + k] walks k: column-major for the product, loaded along k
    assert "const double2 packed = *reinterpret_cast<const double2 *>(address);" in code
    assert "staged_b[part][1] = packed.y;" in code
    assert "tile_b[slot_inner + 1][slot_outer] = staged_b[part][1];" in code


def test_a_column_major_operand_loads_along_its_rows() -> None:
    code = applied(case("sgemm_colmajor"), "offload", "gemm_tiling").code
    # a[k * m + i] walks i: float4 groups along i, stored as they come
    assert "staged_a[part][2] = packed.z;" in code
    assert "tile_a[slot_outer][slot_inner + 2] = staged_a[part][2];" in code
    assert "c[i * n + j] = alpha * acc_tile[out_r][out_c] + beta * c[i * n + j];" in code


def test_scheduled_kernels_with_2d_arrays_are_tiled() -> None:
    """PolyBench's gemm after schedule: `(k < nk)` and C[i][j] accumulated in memory."""
    program = analysed(BENCHMARKS / "polybench" / "pb_gemm.c")
    variant = applied(program, "schedule", "gemm_tiling")
    assert (
        "kernel_gemm_kernel: 64x64 double tiles, 4x4 outputs per thread, 16 iterations of 'k' "
        "per stage, staging A[i][k] (rows, vector), B[k][j] (cols, vector); C[i][j] held in "
        "registers"
    ) in variant.steps[-1].detail


BODY = "sum += a[i * m + k] * b[k * p + j];"


def decoy_refusal(body: str = BODY, bound: str = "k < m;") -> str:
    """The reason gemm_tiling gives for sgemm_flat's offloaded kernel with its k loop's
    body or bound replaced (offload itself refuses most such programs)."""
    program = case("sgemm_flat")
    code = applied(program, "offload").code
    assert BODY in code and "k < m;" in code
    changed = Variant(code.replace(BODY, body).replace("k < m;", bound))
    reason = GEMM.applies(changed, Context(program))
    outcome = GEMM.apply_rule(changed, Context(program))
    assert outcome.variant is None
    assert reason == outcome.reason and reason
    return reason


def test_an_output_array_read_as_an_operand_is_refused() -> None:
    reason = decoy_refusal("sum += c[i * p + k] * b[k * p + j];")
    assert "'c[i * p + k]' reads 'c', which the kernel writes, at an index of 'k'" in reason


def test_k_bounds_that_depend_on_the_thread_are_refused() -> None:
    assert "the bounds of 'k' differ between threads" in decoy_refusal(bound="k < i;")


def test_a_reduction_that_is_not_a_product_sum_is_refused() -> None:
    reason = decoy_refusal("sum = fmaxf(sum, a[i * m + k] + b[k * p + j]);")
    assert "is not a sum into 'sum' (a reduction that is not a product-sum)" in reason
    reason = decoy_refusal("sum += a[i * m + k] + b[k * p + j];")
    assert "multiplies no read of the rows by a read of the columns" in reason


def test_an_unstaged_read_in_the_k_loop_is_refused() -> None:
    reason = decoy_refusal("sum += a[i * m + k] * b[k * p + j] * a[k];")
    assert "reads 'a[k]', which is not staged" in reason


def test_the_check_finds_a_skipped_barrier_and_a_missing_micro_tile() -> None:
    program = case("sgemm_flat")
    before = applied(program, "offload")
    after = GEMM.apply_rule(before, Context(program)).variant
    assert after is not None
    assert gemm_problems(before.code, after.code) == []
    guarded = re.sub(
        r"__syncthreads\(\);(\n\s+next_k = )",
        r"if (threadIdx.x == 0) __syncthreads();\1",
        after.code,
        count=1,
    )
    assert guarded != after.code
    assert any("inside a if statement" in p.message for p in gemm_problems(before.code, guarded))
    # the barriers sit under `if (narrow)`, a value of the grid and the parameters: every
    # thread of a block takes the same branch. One the threads differ on is refused.
    assert "    if (narrow) {" in after.code
    per_thread = after.code.replace("    if (narrow) {", "    if (narrow || threadIdx.y > 7) {", 1)
    assert any("inside a if statement" in p.message for p in gemm_problems(before.code, per_thread))
    shared = applied(program, "offload", "shared_tiling")
    assert [p.message for p in gemm_problems(before.code, shared.code)] == [
        "no launched kernel keeps a micro-tile of outputs per thread"
    ]


GUARD = "if (j <= i + 3 && i - j < 70) {"


def guarded_refusal(guard: str) -> str:
    """The reason gemm_tiling gives for sband_guarded's offloaded kernel with its guard
    replaced."""
    program = case("sband_guarded")
    code = applied(program, "offload").code
    assert GUARD in code
    changed = Variant(code.replace(GUARD, guard, 1))
    reason = GEMM.applies(changed, Context(program))
    outcome = GEMM.apply_rule(changed, Context(program))
    assert outcome.variant is None
    assert reason == outcome.reason and reason
    return reason


@pytest.mark.parametrize(
    ("guard", "read"),
    [
        ("if (c[i * p + j] > 0.0f) {", "c[i * p + j]"),  # memory decides
        ("if (j <= i && a[i] != 0.0f) {", "a[i]"),
        ("if (j <= min(i, 40)) {", "min(i, 40)"),  # a call
        ("if ((m = j) <= i) {", "m = j"),  # an assignment
        ("if (j <= i + (int)threadIdx.x) {", "(int)threadIdx.x"),  # differs between threads
        ("if (j <= i / 2) {", "i / 2"),  # only + - * and comparisons
    ],
)
def test_a_guard_that_is_not_a_pure_condition_on_the_outputs_is_refused(
    guard: str, read: str
) -> None:
    reason = guarded_refusal(guard)
    assert "may decide which outputs are computed" in reason
    assert f"reads '{read}'" in reason


def test_a_guard_with_an_else_is_refused() -> None:
    program = case("sband_guarded")
    code = applied(program, "offload").code
    end = "c[i * p + j] = alpha * sum + c[i * p + j];\n            }"
    assert end in code
    changed = Variant(code.replace(end, end + " else c[i * p + j] = 0.0f;", 1))
    assert "the body is an if with an else, not a guard" in str(
        GEMM.applies(changed, Context(program))
    )


def test_a_guarded_kernel_loads_only_live_rows_and_skips_dead_tiles() -> None:
    variant = applied(case("sband_guarded"), "offload", "gemm_tiling")
    code = variant.code
    assert "&& (j <= i + 3 && i - j < 70);" in code  # the guard decides what is stored
    detail = variant.steps[-1].detail
    assert detail.endswith(
        "only the outputs where (j <= i + 3 && i - j < 70), tiles with none skipped"
    )
    assert code.count("const int live_tile = __syncthreads_or(any_live);") == 2  # both shapes
    assert "if (live_tile) {" in code
    # every operand load asks its row's (column's) flag, vector or scalar
    loads = [line for line in code.splitlines() if "< trips_k &&" in line or "< trips_k)" in line]
    loads = [line for line in loads if "next_k <" not in line]  # the next stage's test
    assert loads and all("live_rows[" in line or "live_cols[" in line for line in loads)
    # the vote is a barrier too: under a branch the threads differ on, it is refused
    divergent = code.replace(
        "const int live_tile = __syncthreads_or(any_live);",
        "int live_tile = 0; if (threadIdx.x < 8) live_tile = __syncthreads_or(any_live);",
        1,
    )
    problems = [
        p.message for p in gemm_problems(applied(case("sband_guarded"), "offload").code, divergent)
    ]
    assert any("__syncthreads_or() inside a if statement" in p for p in problems), problems
    assert any("__syncthreads() inside a if statement" in p for p in problems), problems


@pytest.mark.parametrize("processors", [132, 1])
@pytest.mark.parametrize("name", ["pb_syrk", "pb_syr2k"])
def test_triangular_products_after_schedule_emulated_print_what_gcc_prints(
    name: str, processors: int, tmp_path
) -> None:
    """PolyBench's `for (j = 0; j <= i; j++)` nests, which schedule maps to a 2-D grid
    under `if ((i >= j))`: 80 x 80 outputs in 64 x 64 tiles, the one above the diagonal
    skipped; their dumps (on stderr) equal gcc's."""
    from cudaify.backend.compare import compare

    source = BENCHMARKS / "polybench" / f"{name}.c"
    program = analysed(source, ("-DBENCH_SMALL",))  # schedule writes the arrays' sizes
    variant = applied(program, "schedule", "gemm_tiling")
    assert "if ((i >= j))" in applied(program, "schedule").code
    gcc = toolchain.find_tool("gcc")
    built = toolchain.run(
        [gcc, "-O2", "-DBENCH_SMALL", str(source), "-o", str(tmp_path / "ref"), "-lm"]
    )
    assert built.ok, built.errors()
    expected = toolchain.run([str(tmp_path / "ref")], timeout=120)
    flags = (f"-DEMULATED_PROCESSORS={processors}", "-DBENCH_SMALL")
    actual = run_emulated(variant.code, tmp_path, flags=flags, timeout=300)
    assert actual.ok, actual.errors()[-2000:]
    assert "==BEGIN" in expected.text()
    assert compare(expected.text() + expected.errors(), actual.text() + actual.errors()) is None


def splits_chosen(
    code: str, kernel: str, calls: list[tuple[int, int, int, int]], processors: int, directory: Path
) -> list[int]:
    """What the generated host function `KERNEL_splits` answers for (rows, cols, trips,
    tile), built against the emulator with `processors` multiprocessors."""
    start = code.index(f"static unsigned int {kernel}_splits(")
    function = code[start : code.index("\n}\n", start) + 3]
    harness = "\n".join(
        [
            function,
            "int main(void)",
            "{",
            *[f'    printf("%u\\n", {kernel}_splits({r}, {c}, {k}, {t}));' for r, c, k, t in calls],
            "    return 0;",
            "}",
        ]
    )
    done = run_emulated(harness, directory, flags=(f"-DEMULATED_PROCESSORS={processors}",))
    assert done.ok, done.errors() + done.text()
    return [int(line) for line in done.text().split()]


def test_few_tiles_and_a_long_k_split_k_over_the_blocks_of_a_tile(tmp_path) -> None:
    variant = applied(case("split_k"), "offload", "gemm_tiling")
    code = variant.code
    # both products qualify: every output a scalar of the prologue, a prologue free of effects
    for kernel, sums in (("cross_kernel", "sum_tile"), ("residual_kernel", "acc_tile")):
        start = code.index(f"void {kernel}(")
        body = code[start : code.index(f"static unsigned int {kernel}_splits(")]
        body = re.sub(r"_2\b", "", body)  # the second kernel's fresh names
        # the blocks of a tile take its stages in turns
        assert "if ((tile_p / 16) % gridDim.z != blockIdx.z) continue;" in body
        assert "next_p = tile_p + 16LL * gridDim.z;" in body
        # a block's share starts from zero after the prologue; its partials are stored, the
        # last block to arrive runs the prologue again and adds them in block order
        assert f"{sums}[out_r][out_c] = {{}};" in body
        assert f"{sums}[out_r][out_c] += __ldcg(&" in body
        assert "const int last_split = __syncthreads_or(arrived);" in body
        assert "if (!last_split) continue;" in body
        assert f"atomicAdd(&{kernel}_arrivals[tile_index], 1u) == gridDim.z - 1u;" in body
        # the partials and the arrival counts: static device arrays, zeroed at load
        assert f"static __device__ unsigned long long {kernel}_partials[2097152];" in code
        assert f"static __device__ unsigned int {kernel}_arrivals[4096];" in code
    # two sums per output: a region of partials each
    assert "(unsigned char *)moments_kernel_partials + 1 * region_3))[" in code
    # the launch asks the host for the split, from the k loop's bounds as the host sees them
    assert (
        "cross_kernel<<<dim3(grid.x, grid.y, cross_kernel_splits(trips_i, trips_j, "
        "((long long)((k)) - (long long)(0)), cross_kernel_tile(trips_i, trips_j))), block>>>"
    ) in code
    # 40 x 72 outputs: 2 narrow tiles on 132 multiprocessors, one wide tile on 1
    chosen = splits_chosen(
        code,
        "cross_kernel",
        [(40, 72, 700, 64), (40, 72, 100, 64), (4096, 4096, 4096, 128)],
        132,
        tmp_path,
    )
    assert chosen == [5, 1, 1]  # 700 // 128 shares of k; too short a k; enough tiles
    assert splits_chosen(code, "cross_kernel", [(384, 512, 1536, 64)], 132, tmp_path) == [2]
    # partial sums that would not fit the static slots: no split
    assert splits_chosen(code, "cross_kernel", [(4000, 4000, 700, 4096)], 132, tmp_path) == [1]
    # one wave: as many blocks a tile as the multiprocessors hold
    assert splits_chosen(
        code, "cross_kernel", [(40, 72, 700, 64), (200, 72, 700, 64)], 3, tmp_path
    ) == [
        1,
        1,
    ]
    assert splits_chosen(code, "cross_kernel", [(64, 128, 700, 64)], 7, tmp_path) == [3]


def test_split_sums_do_not_depend_on_which_block_arrives_last(tmp_path) -> None:
    """The last block of a tile adds every partial in block order: blocks run in the
    reverse order print the same bytes."""
    from cudaify.backend.compare import compare

    code = (GOLDEN / "gemm_tiling" / "split_k.cu").read_text()
    flags = ("-DEMULATED_PROCESSORS=132",)
    forward = run_emulated(code, tmp_path, flags=flags)
    backward = run_emulated(code, tmp_path, flags=flags, reverse=True)
    assert forward.ok and backward.ok, forward.errors() + backward.errors()
    assert forward.text() == backward.text()
    expected = gcc_output(GOLDEN / "gemm_tiling" / "split_k.c", tmp_path)
    assert compare(expected, backward.text()) is None


def test_tiled_float_products_keep_their_data_resident(tmp_path) -> None:
    """The launches call the tile and split choosers (host helpers that ask the device
    once): data_residency still finds its scopes, and the result prints what gcc prints."""
    from cudaify.backend.compare import compare

    name = "split_k"
    variant = applied(case(name), "offload", "gemm_tiling", "data_residency")
    assert [step.method for step in variant.steps][-1] == "data_residency"
    expected = gcc_output(GOLDEN / "gemm_tiling" / f"{name}.c", tmp_path)
    actual = run_emulated(variant.code, tmp_path, flags=("-DEMULATED_PROCESSORS=132",))
    assert actual.ok, actual.errors() + actual.text()
    assert compare(expected, actual.text()) is None


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("dgemm_alpha_beta", "an output element accumulated in memory"),
        ("sband_guarded", "a guard"),
    ],
)
def test_k_is_not_split_where_a_block_could_not_add_partials(name: str, why: str) -> None:
    code = (GOLDEN / "gemm_tiling" / f"{name}.cu").read_text()
    assert "gridDim.z" not in code and "_splits(" not in code, why


# ---- on a GPU: correctness against gcc, and the achieved rate -----------------------------

LARGE = """\
#include <stdio.h>
#include <stdlib.h>
void gemm(int n, const REAL *a, const REAL *b, REAL *c)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            REAL sum = 0;
            for (int k = 0; k < n; k++)
                sum += a[i * n + k] * b[k * n + j];
            c[i * n + j] = sum;
        }
}
int main(void)
{
    int n = 2048;
    REAL *a = (REAL *)malloc(sizeof(REAL) * n * n), *b = (REAL *)malloc(sizeof(REAL) * n * n);
    REAL *c = (REAL *)malloc(sizeof(REAL) * n * n);
    for (int i = 0; i < n * n; i++) {
        a[i] = (REAL)((i * 7) % 13) / 13;
        b[i] = (REAL)((i * 5) % 11) / 11 - (REAL)0.5;
    }
    gemm(n, a, b, c);
    double sum = 0.0;
    for (int i = 0; i < n * n; i++)
        sum += c[i] * (1 + i % 3);
    printf("sum=%.6e c[0]=%.6e c[last]=%.6e\\n", sum, (double)c[0], (double)c[n * n - 1]);
    return 0;
}
"""

# (program, the mapping method, floating-point operations of the tiled kernel)
RATES = {
    "matmul": (BENCHMARKS / "linalg" / "matmul.c", "offload", 2 * 900**3),
    # 48 narrow tiles for 132 multiprocessors: k split over blocks of each tile
    "atb": (BENCHMARKS / "linalg" / "atb.c", "offload", 2 * 384 * 512 * 1536),
    "pb_gemm": (BENCHMARKS / "polybench" / "pb_gemm.c", "schedule", 2 * 1500 * 1650 * 1800),
    "sgemm_2048": ("float", "offload", 2 * 2048**3),
    "dgemm_2048": ("double", "offload", 2 * 2048**3),
    # triangular: only the lower triangle's products count (the tiles above it are skipped)
    "syrk": (BENCHMARKS / "linalg" / "syrk.c", "schedule", 2 * (1536 * 1537 // 2) * 512),
    "pb_syrk": (BENCHMARKS / "polybench" / "pb_syrk.c", "schedule", 2 * (1800 * 1801 // 2) * 1500),
    "pb_syr2k": (
        BENCHMARKS / "polybench" / "pb_syr2k.c",
        "schedule",
        4 * (1200 * 1201 // 2) * 1000,
    ),
}
_TIMED_LAUNCH = re.compile(r"^(\s*)(\w+_kernel(?:_\d+)?<<<[^;]*>>>\([^;]*\);)$", re.M)


def timed(code: str, kernel: str) -> str:
    """The program with `kernel`'s launch run once more to warm up and then timed over 5
    launches with CUDA events, the mean printed on stderr (its output is then not the
    program's: the launches repeat)."""

    def wrap(match: re.Match[str]) -> str:
        indent, launch = match.group(1), match.group(2)
        if not launch.startswith(f"{kernel}<<<"):
            return match.group(0)
        return (
            f"{indent}{{ {launch} cudaEvent_t cudaify_t0, cudaify_t1; "
            "cudaEventCreate(&cudaify_t0); cudaEventCreate(&cudaify_t1); "
            f"cudaEventRecord(cudaify_t0); for (int cudaify_r = 0; cudaify_r < 5; cudaify_r++) "
            f"{launch} cudaEventRecord(cudaify_t1); cudaEventSynchronize(cudaify_t1); "
            "float cudaify_ms = 0; cudaEventElapsedTime(&cudaify_ms, cudaify_t0, cudaify_t1); "
            'fprintf(stderr, "cudaify-kernel-ms %f\\n", cudaify_ms / 5); }'
        )

    changed = _TIMED_LAUNCH.sub(wrap, code)
    assert changed != code, f"no launch of {kernel}"
    return changed


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(RATES))
def test_tiled_gemms_print_what_gcc_prints_and_their_rate(name: str, tmp_path) -> None:
    """Prints GFLOP/s of the tiled kernel (H100 non-tensor peaks: ~60 TFLOP/s fp32, ~30
    fp64; issue 18 asks for at least a quarter of them)."""
    from cudaify.backend.compare import compare

    where, mapping, flops = RATES[name]
    if isinstance(where, str):
        source = tmp_path / f"{name}.c"
        # the element type written out: gemm_tiling does not read through type macros
        source.write_text(LARGE.replace("REAL", where))
    else:
        source = where
    variant = applied(analysed(source), mapping, "gemm_tiling")
    kernel = variant.steps[-1].detail.split(":")[0]
    nvcc = toolchain.find_tool("nvcc")
    (tmp_path / "tiled.cu").write_text(variant.code)
    built = toolchain.run(
        [nvcc, "-O3", "-arch=native", str(tmp_path / "tiled.cu"), "-o", str(tmp_path / "gpu")],
        timeout=300,
    )
    assert built.ok, built.errors()
    actual = toolchain.run([str(tmp_path / "gpu")], timeout=300)
    assert actual.ok, actual.errors()
    assert compare(gcc_output(source, tmp_path), actual.text()) is None
    (tmp_path / "timed.cu").write_text(timed(variant.code, kernel))
    built = toolchain.run(
        [nvcc, "-O3", "-arch=native", str(tmp_path / "timed.cu"), "-o", str(tmp_path / "timed")],
        timeout=300,
    )
    assert built.ok, built.errors()
    run = toolchain.run([str(tmp_path / "timed")], timeout=300)
    found = re.search(r"cudaify-kernel-ms ([0-9.]+)", run.errors() + run.text())
    assert found, run.errors()
    milliseconds = float(found.group(1))
    rate = flops / (milliseconds * 1e-3) / 1e9
    print(f"\n{name}: {kernel} {milliseconds:.3f} ms, {rate:.0f} GFLOP/s")
