"""The static cost model (backend/cost.py): each thing it weighs moves the prediction the
way the GPU would, and the rank correlation it is checked with."""

from __future__ import annotations

from pathlib import Path

import pytest

from cudaify.backend.cost import (
    HOST as HOST_UNITS,
)
from cudaify.backend.cost import (
    LAUNCH,
    MIN_PARALLEL,
    STRIDED,
    TRANSFER,
    UNIFORM,
    UNKNOWN_TRIPS,
    Work,
    kernel_work,
    predict,
    rank_agreement,
)
from cudaify.core import Variant

HOST = """
void step(float *d_a, float *d_b, int n)
{
    const dim3 block(16, 16);
    const dim3 grid(64, 64);
    COPY_IN
    scale<<<grid, block>>>(d_a, d_b, n, n, n);
    COPY_OUT
}
int main(void)
{
    float *a = 0, *b = 0;
    STEPS
    return 0;
}
"""

KERNEL = """
__global__ void scale(float *a, float *b, int n, long long trips_i, long long trips_j)
{
    for (long long t_i = blockIdx.y * (long long)blockDim.y + threadIdx.y; t_i < trips_i;
         t_i += (long long)blockDim.y * gridDim.y) {
        for (long long t_j = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_j < trips_j;
             t_j += (long long)blockDim.x * gridDim.x) {
            int i = (int)t_i;
            int j = (int)t_j;
            BODY
        }
    }
}
"""


OUTPUTS = UNKNOWN_TRIPS**2  # the kernel's two grid levels, bounds unknown


def cost_of(
    body: str,
    copy_in: str = "",
    kernel: str = KERNEL,
    steps: str = "step(a, b, size());",  # a size the text does not give
):
    host = HOST.replace("COPY_IN", copy_in).replace("COPY_OUT", "").replace("STEPS", steps)
    code = kernel.replace("BODY", body) + host
    estimate = predict(Variant(code=code))
    assert estimate is not None
    return estimate


def test_host_code_has_no_prediction() -> None:
    assert predict(Variant(code="int main(void) { return 0; }\n")) is None


def test_coalesced_uniform_and_strided_accesses_are_weighed_apart() -> None:
    # a[i][j]-style with j on threadIdx.x: unit stride; a[j * n + i]: stride n
    rows = cost_of("b[i * n + j] = a[i * n + j];")
    columns = cost_of("b[j * n + i] = a[j * n + i];")
    broadcast = cost_of("b[i * n + j] = a[i];")
    assert rows.kernel == pytest.approx(2.0 * OUTPUTS)
    assert columns.kernel == pytest.approx(2 * STRIDED * OUTPUTS)
    assert broadcast.kernel == pytest.approx((1.0 + UNIFORM) * OUTPUTS)
    assert rows.coalesced == 1.0 and columns.coalesced == 0.0
    # a gather through an index array that depends on the thread: strided (plus the
    # coalesced read of the index itself)
    gather = cost_of("b[i * n + j] = a[(int)b[j] % n];")
    assert gather.kernel == pytest.approx((2.0 + STRIDED) * OUTPUTS)


def test_a_vector_read_of_w_elements_a_lane_is_coalesced() -> None:
    """gemm_tiling's float4 / double2 loads: an element's address, W elements apart from
    lane to lane, read through `reinterpret_cast<const VEC *>` with VEC a W-lane vector:
    W coalesced elements a lane. Read as one strided access, they priced a 900^3 float
    product's gemm_tiling kernel above shared_tiling's (0.13 against 0.14 G units, no
    build order between them); measured on an H200 it ran 3x faster (0.09 against 0.28
    ms), as it is now priced (48 against 141 M)."""
    address = "const float *p = &(a[i * n + 4 * j]); "
    vector = cost_of(
        address + "const float4 v = *reinterpret_cast<const float4 *>(p); b[i * n + j] = v.x + v.w;"
    )
    assert vector.kernel == pytest.approx((4 + 1) * OUTPUTS)  # a's 4 a lane, b's 1
    assert vector.coalesced == 1.0
    # decoys: lanes 4 apart read as float2 (half of each run skipped), lanes 8 apart read
    # as float4, the address read as one float: one strided access each
    halves = cost_of(
        address + "const float2 v = *reinterpret_cast<const float2 *>(p); b[i * n + j] = v.x;"
    )
    spread = cost_of(
        "const float *p = &(a[i * n + 8 * j]); "
        "const float4 v = *reinterpret_cast<const float4 *>(p); b[i * n + j] = v.x;"
    )
    scalar = cost_of(address + "b[i * n + j] = *p;")
    for decoy in (halves, spread, scalar):
        assert decoy.kernel == pytest.approx((STRIDED + 1) * OUTPUTS)


def test_a_branch_the_code_marks_unlikely_costs_nothing() -> None:
    """`if (__builtin_expect(c, 0))` (gemm_tiling's scalar loads where a vector's address is
    not aligned) costs its condition and its else; any other guard is mostly taken."""
    strided = "{ b[j * n + i] = a[j * n + i]; }"
    row = "b[i * n + j] = a[i * n + j];"
    unlikely = cost_of(f"if (__builtin_expect(n < 0, 0)) {strided} {row}")
    likely = cost_of(f"if (__builtin_expect(n < 0, 1)) {strided} {row}")
    guard = cost_of(f"if (n < 0) {strided} {row}")
    otherwise = cost_of(f"if (__builtin_expect(n < 0, 0)) {strided} else {{ {row} }}")
    assert unlikely.kernel == pytest.approx(2 * OUTPUTS)
    assert likely.kernel == guard.kernel == pytest.approx((2 + 2 * STRIDED) * OUTPUTS)
    assert otherwise.kernel == pytest.approx(2 * OUTPUTS)


def test_a_row_subscript_on_the_thread_is_strided_and_a_warp_s_lanes_are_side_by_side() -> None:
    """`A[j][k]` with j the thread's: each lane reads a row of its own, however its last
    subscript moves; a warp per row (`t / 32`), its lanes on `threadIdx.x % 32`, reads the
    row side by side."""
    rows = cost_of("float (*m)[64] = (float (*)[64])a; b[j] = m[j][0] + m[j][1];")
    assert rows.kernel == pytest.approx((1.0 + 2 * STRIDED) * OUTPUTS)
    assert rows.coalesced == pytest.approx(1.0 / (1.0 + 2 * STRIDED))
    warp = """
__global__ void scale(float *a, float *b, int n, long long trips_i, long long trips_j)
{
    const int lane = threadIdx.x % 32;
    for (long long t_j = (blockIdx.x * (long long)blockDim.x + threadIdx.x) / 32; t_j < trips_j;
         t_j += (long long)blockDim.x * gridDim.x / 32) {
        int j = (int)t_j;
        float (*m)[64] = (float (*)[64])a;
        BODY
    }
}
"""
    lanes = cost_of("b[j] = m[j][lane];", kernel=warp)
    across = cost_of("b[j] = m[lane][j];", kernel=warp)
    assert lanes.coalesced == 1.0 and across.coalesced < 0.05
    # b[j]: one address for the warp; m: side by side, or rows apart
    assert lanes.kernel / across.kernel == pytest.approx((UNIFORM + 1.0) / (UNIFORM + STRIDED))


def test_work_per_output_follows_the_loops_in_the_kernel() -> None:
    constant = cost_of("float s = 0; for (int k = 0; k < 8; k++) s += a[k * n + j]; b[j] = s;")
    unknown = cost_of("float s = 0; for (int k = 0; k < n; k++) s += a[k * n + j]; b[j] = s;")
    tiles = cost_of("float s = 0; for (int k = 0; k < n; k += 32) s += a[k * n + j]; b[j] = s;")
    assert constant.kernel == pytest.approx((8 + 1) * OUTPUTS)
    assert unknown.kernel == pytest.approx((UNKNOWN_TRIPS + 1) * OUTPUTS)
    assert tiles.kernel == pytest.approx((UNKNOWN_TRIPS / 32 + 1) * OUTPUTS)
    # a local bound clamped to a constant counts that constant
    clamped = cost_of(
        "const int c = n - i < 4 ? n - i : 4; float s = 0;\n"
        "for (int k = 0; k < c; k++) s += a[k * n + j]; b[j] = s;"
    )
    assert clamped.kernel == pytest.approx((4 + 1) * OUTPUTS)
    # the same element read twice in one iteration counts once (a register keeps it)
    twice = cost_of("b[i * n + j] = a[i * n + j] * a[i * n + j];")
    assert twice.kernel == pytest.approx(2.0 * OUTPUTS)


def test_shared_memory_and_outputs_per_thread_make_a_kernel_cheaper() -> None:
    staged = cost_of(
        "__shared__ float tile[16][17];\n"
        "float s = 0; for (int k = 0; k < n; k++) s += tile[threadIdx.y][k % 16];\n"
        "b[i * n + j] = s;"
    )
    direct = cost_of(
        "float s = 0; for (int k = 0; k < n; k++) s += a[k * n + j]; b[i * n + j] = s;"
    )
    assert staged.kernel < direct.kernel / 10
    wide = KERNEL.replace(
        "t_i += (long long)blockDim.y * gridDim.y)", "t_i += (long long)blockDim.y * gridDim.y * 4)"
    )
    four = cost_of("b[i * n + j] = a[i * n + j];", kernel=wide)
    assert four.kernel == pytest.approx(2.0 / 4 * OUTPUTS)


def test_a_threads_small_local_arrays_are_registers() -> None:
    """A micro-tile `float acc[8][8]` indexed in unrolled loops lives in registers: priced
    as no traffic, where a large local array (local memory) still is."""
    small = cost_of(
        "float acc[8][8];\n"
        "for (int r = 0; r < 8; r++) for (int c = 0; c < 8; c++) acc[r][c] = a[i * n + j];\n"
        "b[i * n + j] = acc[7][7];"
    )
    large = cost_of(
        "float acc[32][32];\n"
        "for (int r = 0; r < 8; r++) for (int c = 0; c < 8; c++) acc[r][c] = a[i * n + j];\n"
        "b[i * n + j] = acc[7][7];"
    )
    plain = cost_of("b[i * n + j] = a[i * n + j];")
    # a[...] is read once per loop body (the same element again is a register's)
    assert small.kernel == pytest.approx(plain.kernel + 63 * OUTPUTS)
    assert large.kernel > small.kernel


def test_gemm_tilings_kernel_is_priced_per_output_not_per_thread() -> None:
    """gemm_tiling's block tiles: each thread computes 8 x 8 outputs of a 128 x 128 tile
    (4 x 4 of 64 x 64), its micro-tile in registers. Priced as one output per thread and
    iteration, with the micro-tile as memory, the tiled product cost 28x the plain kernel
    it came from and the search built it last; it moves less than the kernel that stages
    16 x 16 tiles, as it runs faster (on an H100: 16.9 TFLOP/s against 3.4 for matmul)."""
    golden = Path(__file__).parents[1] / "golden"
    same = (golden / "shared_tiling/matmul_flat.c").read_text()
    assert same == (golden / "gemm_tiling/sgemm_flat.c").read_text()  # one input, two rules
    tiled = predict(Variant(code=(golden / "gemm_tiling/sgemm_flat.cu").read_text()))
    staged = predict(Variant(code=(golden / "shared_tiling/matmul_flat.cu").read_text()))
    assert tiled is not None and staged is not None
    assert tiled.kernel < staged.kernel


def test_copies_and_launches_count_as_often_as_the_code_around_them_runs() -> None:
    copy = "cudaMemcpy(d_a, d_b, (size_t)(n * 4) * sizeof(float), cudaMemcpyHostToDevice);"
    ten = "for (int t = 0; t < 10; t++) step(a, b, size());"
    once = cost_of("b[i * n + j] = a[i * n + j];", copy_in=copy)
    # the size: n (unknown) times 4 elements, sizeof as 1
    assert once.transfer == TRANSFER * UNKNOWN_TRIPS * 4
    assert (once.launch, once.kernel) == (LAUNCH, 2.0 * OUTPUTS)
    # step() runs in main's loop of 10: its copy, launch and kernel 10 times each
    repeated = cost_of("b[i * n + j] = a[i * n + j];", copy_in=copy, steps=ten)
    assert repeated.transfer == pytest.approx(10 * once.transfer)
    assert repeated.launch == pytest.approx(10 * LAUNCH)
    assert repeated.kernel == pytest.approx(10 * once.kernel)
    in_loop = cost_of(
        "b[i * n + j] = a[i * n + j];", copy_in=f"for (int r = 0; r < 3; r++) {copy}", steps=ten
    )
    assert in_loop.transfer == pytest.approx(30 * once.transfer)
    # the residency runtime copies an array only when stale: once, wherever it is called
    runtime = (
        "static void cudaify_copy_in(float *d, float *h, size_t bytes) { "
        "cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice); }\n"
    )
    resident = cost_of(
        "b[i * n + j] = a[i * n + j];",
        kernel=runtime + KERNEL,
        copy_in="cudaify_copy_in(d_a, d_b, 4);",
        steps=ten,
    )
    # (its size parameter: the 4 its one call passes)
    assert resident.transfer == pytest.approx(TRANSFER * 4)
    assert resident.cost < repeated.cost


@pytest.mark.parametrize(
    "copy, elements",
    [
        ("cudaMemcpy(d_a, d_b, 100 * sizeof(float), cudaMemcpyHostToDevice);", 100),
        ("cudaMemcpyAsync(d_a, d_b, (size_t)(n * n) * sizeof(float), kind, 0);", 1024**2),
        ("cudaMemcpy2D(d_a, 64, d_b, 64, 16 * sizeof(float), 50, kind);", 16 * 50),
        ("cudaMemcpyToSymbol(table, d_b, (n - 2) * 4);", 1024 * 4),
    ],
)
def test_a_copy_moves_what_its_size_arguments_say(copy: str, elements: int) -> None:
    assert cost_of("b[i * n + j] = a[i * n + j];", copy_in=copy).transfer == TRANSFER * elements


def test_a_launch_of_few_outputs_costs_as_much_as_one_that_fills_the_gpu() -> None:
    """One thread per row of 1000, each running a whole row: the GPU mostly idles."""
    rows = KERNEL.replace("t_i < trips_i", "t_i < 1000").replace("t_j < trips_j", "t_j < 1")
    few = cost_of(
        "float s = 0; for (int k = 0; k < n; k++) s += a[i * n + k]; b[i] = s;", kernel=rows
    )
    # x runs over one column: every access is the warp's one address
    per_output = (UNKNOWN_TRIPS + 1) * UNIFORM
    assert few.kernel == pytest.approx(per_output * MIN_PARALLEL)
    # the same work over a grid of more outputs than MIN_PARALLEL costs by its outputs
    wide = KERNEL.replace("t_i < trips_i", "t_i < 100000").replace("t_j < trips_j", "t_j < 1")
    many = cost_of(
        "float s = 0; for (int k = 0; k < n; k++) s += a[i * n + k]; b[i] = s;", kernel=wide
    )
    assert many.kernel == pytest.approx(per_output * 100000)


def test_a_compare_and_swap_retry_loop_counts_once() -> None:
    """An atomic max on a float is a `while` around atomicCAS: it mostly succeeds at once,
    so it costs one atomic, not UNKNOWN_TRIPS of them."""
    cas = (
        "float seen = b[0]; while (a[j] > seen) { unsigned int old = atomicCAS("
        "(unsigned int *)b, __float_as_uint(seen), __float_as_uint(a[j])); "
        "if (old == __float_as_uint(seen)) break; seen = __uint_as_float(old); }"
    )
    plain = "float seen = b[0]; if (a[j] > seen) atomicMax((int *)b, (int)a[j]);"
    assert cost_of(cas).kernel == pytest.approx(cost_of(plain).kernel)


SIZES = """
#ifdef SMALL
#define N 64
#define STEPS 2
#else
#define N (1 << 10)
#ifndef STEPS
#define STEPS (N / 128)
#endif
#endif
"""


def test_sizes_come_from_the_preprocessor_branch_taken_and_reach_functions_as_arguments():
    """N is 1024 (the #else branch: SMALL is not defined); main's `int n = N` reaches
    step() as its parameter and the kernel as its trip counts; STEPS (8) repeats it all."""
    copy = "cudaMemcpy(d_a, d_b, (size_t)(n * n) * sizeof(float), cudaMemcpyHostToDevice);"
    steps = "int n = N; for (int t = 0; t < STEPS; t++) step(a, b, n);"
    sized = cost_of(
        "b[i * n + j] = a[i * n + j];", copy_in=copy, kernel=SIZES + KERNEL, steps=steps
    )
    assert sized.transfer == pytest.approx(8 * TRANSFER * 1024**2)
    assert sized.launch == pytest.approx(8 * LAUNCH)
    assert sized.kernel == pytest.approx(8 * 2.0 * 1024**2)


@pytest.mark.parametrize(
    "steps",
    [
        "int n = N; n = n / 2; step(a, b, n);",  # assigned again: its value is not the initializer
        "step(a, b, N); step(a, b, 2 * N);",  # two calls disagree
        "#define SMALL\nstep(a, b, N);",  # defined after the branch was chosen: still 1024...
    ],
)
def test_a_value_the_text_does_not_fix_stays_unknown(steps: str) -> None:
    copy = "cudaMemcpy(d_a, d_b, (size_t)(n) * sizeof(float), cudaMemcpyHostToDevice);"
    got = cost_of("b[i * n + j] = a[i * n + j];", copy_in=copy, kernel=SIZES + KERNEL, steps=steps)
    expected = 1024 if steps.startswith("#define") else UNKNOWN_TRIPS
    assert got.transfer == pytest.approx(TRANSFER * expected)


def test_the_small_branch_is_taken_when_its_macro_is_defined_first() -> None:
    copy = "cudaMemcpy(d_a, d_b, (size_t)(n) * sizeof(float), cudaMemcpyHostToDevice);"
    kernel = "#define SMALL 1\n" + SIZES + KERNEL
    got = cost_of(
        "b[i * n + j] = a[i * n + j];", copy_in=copy, kernel=kernel, steps="step(a, b, N);"
    )
    assert got.transfer == pytest.approx(TRANSFER * 64)


@pytest.mark.parametrize(
    "pairs, expected",
    [
        ([(1, 10), (2, 20), (3, 30), (4, 40)], 1.0),
        ([(1, 40), (2, 30), (3, 20), (4, 10)], -1.0),
        ([(1, 1), (2, 3), (3, 2)], 0.5),
        ([(1, 5), (1, 5), (2, 9)], 1.0),  # ties get their mean rank
        ([(1, 1), (2, 2)], None),  # too few
        ([(1, 3), (2, 3), (3, 3)], None),  # nothing measured apart
    ],
)
def test_rank_agreement_is_spearmans(pairs, expected) -> None:
    got = rank_agreement(pairs)
    assert got == (pytest.approx(expected) if expected is not None else None)


def test_a_kernel_looping_over_block_tiles_counts_the_sources_work() -> None:
    """gemm_tiling's and shared_tiling's kernels walk block tiles (a loop starting at
    blockIdx, every thread of the block in each iteration, a micro-tile each): read as one
    output per thread and iteration they counted 67x the product's FLOPs. Each tile now
    runs once per thread of the launch's block, and a loop dealing a tile's rows to the
    threads once per share: the counts are the source's, up to k's last partial tile."""
    from cudaify.backend.cost import kernel_work

    golden = Path(__file__).parents[1] / "golden"

    def work(name: str) -> Work:
        (found,) = kernel_work((golden / name).read_text()).values()
        return found

    # sgemm_flat: C (77 x 41) = A (77 x 53) B (53 x 41) in float, on 128 x 128 tiles (k 8
    # at a time) or 64 x 64 (k 16 at a time) as the launch chooses: the larger path's
    # count, 53 -> 64 (the last stage's missing ks computed on zeros)
    sgemm = work("gemm_tiling/sgemm_flat.cu")
    assert sgemm.bytes == 4 * (77 * 53 + 53 * 41 + 77 * 41)  # a, b read, c written once
    assert sgemm.flops == 2 * 77 * 41 * 64 and sgemm.precision == "fp32"
    assert not sgemm.exact  # gathers through the tile loads, k's partial tile
    # dgemm_alpha_beta: c (70 x 45) *= beta, += alpha a b^T over 37 ks (-> 48, 16 a time)
    dgemm = work("gemm_tiling/dgemm_alpha_beta.cu")
    assert dgemm.bytes == 8 * (70 * 37 + 45 * 37 + 2 * 70 * 45)  # c read and written
    assert dgemm.flops == 70 * 45 * (1 + 3 * 48) and dgemm.precision == "fp64"
    # shared_tiling's transpose: 32 x 32 tiles, 32 x 8 threads, each thread 4 rows of it
    transpose = work("shared_tiling/transpose_2d.cu")
    assert transpose.bytes == 8 * 2 * 45 * 70  # read once, written once
    assert transpose.flops == 4 * 45 * 70  # sqrt (1), +, -, *
    # a 1-D stencil's halo loop: 258 slots per 256 threads, each thread its share
    heat = work("shared_tiling/heat.cu")
    assert heat == Work(bytes=8 * (5003 + 5001), flops=5 * 5001, precision="fp64", exact=True)
    # the flat thread index deals 374 slots of a 2-D stencil's tile to 256 threads
    jacobi = work("shared_tiling/jacobi.cu")
    assert jacobi.bytes == 4 * (83 * 71 + 80 * 69)  # u (irregular: its extent), v exactly
    assert jacobi.flops == 10 * 80 * 69
    # offload's one output per thread and grid-stride iteration is counted as before
    assert set(kernel_work((golden / "register_tiling/matmul_flat.cu").read_text())) == {
        "matmul_kernel"
    }


def test_a_block_tile_kernel_without_its_block_shape_is_not_counted() -> None:
    """Without the block's threads a tile's runs cannot be counted: no work, no
    roofline, never a figure off by the block's size."""
    from cudaify.backend.cost import kernel_work

    code = (Path(__file__).parents[1] / "golden" / "gemm_tiling/sgemm_flat.cu").read_text()
    unknown = code.replace("const dim3 block(16, 16);", "const dim3 block(tuned_x, 16);")
    assert unknown != code and "matmul_kernel" in kernel_work(code)
    assert kernel_work(unknown) == {}


# The same function twice: LEFT offloads its first loop and leaves the nest to the CPU,
# MOVED launches a kernel for the nest and leaves the first loop.
HOST_WORK = """
#define N 2048
__global__ void clear(float *s, long long trips)
{
    for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < trips;
         t += (long long)blockDim.x * gridDim.x)
        s[t] = 0.0f;
}
__global__ void product(float *s, float (*A)[N], float *r, long long trips)
{
    for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < trips;
         t += (long long)blockDim.x * gridDim.x)
        for (int i = 0; i < N; i++)
            s[t] += r[i] * A[i][t];
}
__device__ float twice(float *v, int i)
{
    float x = 0;
    for (int k = 0; k < 4; k++) x += v[i];
    return x;
}
void kernel_bicg(float *s, float (*A)[N], float *r)
{
LAUNCHES
}
int main(void)
{
    static float s[N], A[N][N], r[N];
    for (int i = 0; i < N; i++) r[i] = (float)i;
    kernel_bicg(s, A, r);
    return 0;
}
"""
LEFT = """    clear<<<64, 256>>>(s, N);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            s[j] += r[i] * A[i][j];"""
MOVED = """    for (int j = 0; j < N; j++)
        s[j] = 0.0f;
    product<<<64, 256>>>(s, A, r, N);"""


def test_host_loops_left_in_a_timed_function_cost_what_they_do_on_the_cpu() -> None:
    """A variant that moves a function's small loop and leaves its nest on the CPU is not
    cheaper than one that moves the nest (PolyBench bicg's offload left its N x N nest on
    the host and was predicted the cheapest of its search; it ran the slowest). Only the
    host code of timed functions counts: main's loops and device functions do not."""
    left = predict(Variant(code=HOST_WORK.replace("LAUNCHES", LEFT)))
    moved = predict(Variant(code=HOST_WORK.replace("LAUNCHES", MOVED)))
    assert left is not None and moved is not None
    assert left.host == pytest.approx(HOST_UNITS * 3 * 2048 * 2048)  # s[j], r[i], A[i][j]
    # s[j] once per j; main's r[i] is not counted
    assert moved.host == pytest.approx(HOST_UNITS * 2048)
    assert left.cost > moved.cost
    assert left.to_json()["host"] == pytest.approx(left.host)


def test_loops_a_warp_s_lanes_or_a_block_s_rows_share_count_the_source_s_work() -> None:
    """segmented's shared loops (`for (c = lane;; c += 32) { j = first + c; if (!(j <
    bound)) break; ... }`) run the source loop's iterations once among the 32 threads: the
    count is the source's, exact, and their `break` is no early exit. 45 x 70 doubles."""
    golden = Path(__file__).parents[1] / "golden" / "segmented" / "scheduled_rows.cu"
    work = kernel_work(golden.read_text())
    a, vector, column = 45 * 70 * 8, 45 * 8, 70 * 8
    # a warp per row: y[i] = 0.5 + sum_j A[i][j] x[j] (A, x read; y written, read by lane 0)
    assert work["kernels_kernel_10"] == Work(a + column + 2 * vector, 45 * 70 * 2, "fp64", True)
    # 32 side-by-side columns per block, its rows sharing i: colsum[j] += A[i][j]
    assert work["kernels_kernel_9"] == Work(a + 2 * column, 45 * 70, "fp64", True)
    # the column's mean, then its variance (4 FLOPs a value), then one store
    assert work["kernels_kernel_3"] == Work(a + column, 45 * 70 * 5 + 70, "fp64", True)
    # two sums in one pass, one reset fused into the loop (run before it): both read and
    # written once, and the difference after
    assert work["kernels_kernel_5"] == Work(a + column + 4 * vector, 45 * 70 * 4 + 45, "fp64", True)


SCANNED = """
#define N 1000000
void running(int n, const double *in, double *out)
{
    const long long trips = cudaify_trips(0, n, 1, 0);
    double *d_in = NULL, *d_out = NULL;
    size_t bytes = 0;
    static void *storage = NULL;
    COPY_IN
    CUDAIFY_CHECK(cub::DeviceScan::InclusiveSum(nullptr, bytes, d_in, d_out, trips));
    CUDAIFY_CHECK(cub::DeviceScan::InclusiveSum(storage, bytes, d_in, d_out, trips));
    COPY_OUT
}
int main(void)
{
    static double in[N], out[N];
    for (int r = 0; r < 10; r++)
        running(N, in, out);
    return 0;
}
"""
SCAN_COPIES = (
    "CUDAIFY_CHECK(cudaMemcpy(d_in, in, (size_t)n * sizeof(double), cudaMemcpyHostToDevice));",
    "CUDAIFY_CHECK(cudaMemcpy(out, d_out, (size_t)n * sizeof(double), cudaMemcpyDeviceToHost));",
)


def test_the_two_pass_scan_is_priced_as_three_passes_over_its_items() -> None:
    """scan's affine recurrence (its golden, 99999 items, called once): its items read
    twice and its results written once, coalesced, in two launches; the passes' own
    kernels are not priced again as launches of the program."""
    code = (Path(__file__).parents[1] / "golden" / "scan" / "affine.cu").read_text()
    estimate = predict(Variant(code))
    assert estimate is not None
    assert estimate.kernel == 3 * 99_999 and estimate.coalesced == 1.0
    assert estimate.launch == 2 * LAUNCH


def test_a_library_scan_is_priced_as_a_pass_over_its_items_in_two_launches() -> None:
    """A variant whose only device work is cub's scan is GPU code, priced: each call reads
    and writes each of its 10^6 items once, coalesced, in two launches (the size query
    launches nothing); its copies each call cost what data_residency would save."""
    resident = predict(Variant(SCANNED.replace("COPY_IN", "").replace("COPY_OUT", "")))
    assert resident is not None
    assert resident.kernel == 10 * 2 * 1_000_000 and resident.coalesced == 1.0
    assert resident.launch == 10 * 2 * LAUNCH and resident.transfer == 0
    copied = predict(
        Variant(SCANNED.replace("COPY_IN", SCAN_COPIES[0]).replace("COPY_OUT", SCAN_COPIES[1]))
    )
    assert copied is not None and copied.transfer == 10 * 2 * 1_000_000 * TRANSFER
    assert copied.cost > 8 * resident.cost  # a stepping stone to the resident scan
    # a count the text does not give is an unknown size
    unknown = predict(
        Variant(
            SCANNED.replace("COPY_IN", "")
            .replace("COPY_OUT", "")
            .replace("running(N, in, out)", "running(rand(), in, out)")
        )
    )
    assert unknown is not None and unknown.kernel == 10 * 2 * UNKNOWN_TRIPS


def test_a_block_shape_written_in_the_launch_is_evaluated() -> None:
    """`k<<<grid, dim3(8 * 2, 16)>>>`: the launch's own dim3 is evaluated as an expression,
    as a declared one's names are looked up (kernel_text also reads such a shape since
    launch_tuning tunes schedule's launches: its arguments are text, `8 * 2` no number)."""
    from cudaify.backend.cost import kernel_work

    code = (Path(__file__).parents[1] / "golden" / "gemm_tiling/sgemm_flat.cu").read_text()
    inline = code.replace("const dim3 block(16, 16);", "").replace(
        "matmul_kernel_tile(trips_i, trips_j))), block>>>",
        "matmul_kernel_tile(trips_i, trips_j))), dim3(8 * 2, 16)>>>",
    )
    assert inline.count("dim3(8 * 2, 16)>>>") == 1 and "const dim3 block(" not in inline
    assert kernel_work(inline)["matmul_kernel"] == kernel_work(code)["matmul_kernel"]
