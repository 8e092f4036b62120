"""The roofline per kernel: bytes and FLOPs counted from the text (checked against counts
made by hand), the roof and bound chosen from given numbers, names matched, the report's
lines and the bench's columns; on a GPU, the probes and one kernel in plausible ranges."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from cudaify.backend import bandwidth, roofline
from cudaify.backend.bandwidth import Peaks
from cudaify.backend.cost import Work, kernel_work
from cudaify.backend.timing import read_timing_file
from cudaify.core import LaunchValues, Timing

N = 1 << 20

SAXPY = """
#define N (1 << 20)
__global__ void saxpy_kernel(int n, float a, const float *x, float *y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
void saxpy(int n, float a, const float *x, float *y) {
    saxpy_kernel<<<(n + 255) / 256, 256>>>(n, a, x, y);
}
int main(void) { static float x[N], y[N]; saxpy(N, 2.0f, x, y); return 0; }
"""

# offload's shape: grid-stride levels, the trip counts passed by the launch
GEMM = """
#define N 512
__global__ void gemm_kernel(const double *a, const double *b, double *c, int n,
                            long long trips_i, long long trips_j) {
    for (long long t_i = blockIdx.y * (long long)blockDim.y + threadIdx.y; t_i < trips_i;
         t_i += (long long)blockDim.y * gridDim.y) {
        int i = (int)t_i;
        for (long long t_j = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_j < trips_j;
             t_j += (long long)blockDim.x * gridDim.x) {
            int j = (int)t_j;
            double sum = 0.0;
            for (int k = 0; k < n; k++)
                sum += a[i * n + k] * b[k * n + j];
            c[i * n + j] = sum;
        }
    }
}
void gemm(int n, const double *a, const double *b, double *c) {
    gemm_kernel<<<dim3(32, 32), dim3(16, 16)>>>(a, b, c, n, n, n);
}
int main(void) { static double a[N * N], b[N * N], c[N * N]; gemm(N, a, b, c); return 0; }
"""

STENCIL = """
#define N 4096
__global__ void blur(const float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x + 1;
    if (i < n) out[i] = (in[i - 1] + in[i] + in[i + 1]) * 0.33333f;
}
void run(const float *in, float *out) { blur<<<16, 256>>>(in, out, N - 1); }
int main(void) { return 0; }
"""

UNGUARDED = """
__global__ void fill(float *x) { x[blockIdx.x * blockDim.x + threadIdx.x] = 1.0f; }
void run(float *x) { fill<<<4, 256>>>(x); }
int main(void) { return 0; }
"""

HISTOGRAM = """
#define N 1000
__global__ void count(const int *keys, int *bins, long long trips) {
    for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < trips;
         t += (long long)blockDim.x * gridDim.x)
        atomicAdd(&bins[keys[t]], 1);
}
void run(const int *keys, int *bins) { count<<<4, 256>>>(keys, bins, N); }
int main(void) { return 0; }
"""


def test_saxpy_moves_two_loads_and_a_store_and_does_two_flops_per_element() -> None:
    work = kernel_work(SAXPY)["saxpy_kernel"]
    assert work == Work(bytes=3 * 4 * N, flops=2 * N, precision="fp32", exact=True)


def test_a_naive_gemm_does_2n3_flops_on_3n2_elements() -> None:
    n = 512
    work = kernel_work(GEMM)["gemm_kernel"]
    assert work == Work(bytes=3 * n * n * 8, flops=2 * n**3, precision="fp64", exact=True)


def test_a_loop_whose_condition_isl_wrote_in_parentheses_is_counted() -> None:
    """schedule's kernels come from isl's code generator, which writes `(k < n)`: the
    loop was read as one of unknown trips, so PolyBench gemm's kernel had no FLOP count
    and no roofline. Its trips are exact, as those of `k < n`."""
    isl = GEMM.replace("for (int k = 0; k < n; k++)", "for (int k = 0; (k < n); k += 1)")
    assert isl != GEMM
    assert kernel_work(isl)["gemm_kernel"] == kernel_work(GEMM)["gemm_kernel"]
    grid = isl.replace("t_i < trips_i;", "(t_i < trips_i);")  # a grid level too
    assert grid != isl
    assert kernel_work(grid)["gemm_kernel"] == kernel_work(GEMM)["gemm_kernel"]


def test_a_stencils_neighbours_are_one_array_read_once_and_an_estimate() -> None:
    work = kernel_work(STENCIL)["blur"]
    n = 4096 - 1
    assert work.flops == 3 * n  # two additions and a multiplication per element
    # in[i-1], in[i], in[i+1] over n values of i: n + 2 elements; out written once
    assert work.bytes == 4 * (n + 2) + 4 * n
    assert work.precision == "fp32" and not work.exact


def test_a_gather_into_an_array_of_unknown_extent_is_not_counted() -> None:
    # bins[keys[t]]: nothing says how many bins there are
    assert "count" not in kernel_work(HISTOGRAM)


def test_a_gather_counts_at_most_the_extent_of_its_array() -> None:
    code = HISTOGRAM.replace(
        "int main(void) { return 0; }",
        "int main(void) { static int keys[N], bins[256]; run(keys, bins); return 0; }",
    )
    work = kernel_work(code)["count"]
    # keys read once; bins read and written (atomicAdd), 256 elements each, not 1000
    assert work.bytes == 4 * 1000 + 2 * 4 * 256
    assert work.flops == 0 and work.precision is None and not work.exact


def test_a_kernel_whose_extent_is_its_launch_shape_is_not_counted() -> None:
    assert kernel_work(UNGUARDED) == {}


TRIANGULAR = """
#define M 100
#define N 50
__global__ void trmm(double (*B)[N], double (*A)[M], int m, long long trips_j) {
    for (long long t_j = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_j < trips_j;
         t_j += (long long)blockDim.x * gridDim.x) {
        const int j = (int)t_j;
        for (int i = 0; (i < (m - 1)); i += 1)
            for (int k = (i + 1); (k < m); k += 1)
                B[i][j] += A[k][i] * B[k][j];
    }
}
static double A[M][M], B[M][N];
void run(void) { trmm<<<1, 64>>>(B, A, M, N); }
int main(void) { run(); return 0; }
"""


def test_a_triangular_loop_counts_the_nests_iterations() -> None:
    """PolyBench trmm's kernel as schedule writes it: k from i + 1 to m. Its trips are their
    mean over i (m / 2), the nest's (m - 1) m / 2 in all: the source's FLOPs exactly. Its
    variable's range moves with i, so the footprint reads its accesses as irregular (at
    most their arrays). It had no count: k's start was not a value."""
    work = kernel_work(TRIANGULAR)["trmm"]
    assert work.flops == 2 * 50 * (99 * 100 // 2) and work.precision == "fp64"
    # A and B read as irregular (at most their arrays), B written on rows 0..98
    assert work.bytes == 8 * (100 * 100 + 100 * 50 + 99 * 50) and not work.exact
    # a bound that is not affine in the loops around it stays unknown: no FLOP count
    gathered = TRIANGULAR.replace("(k < m)", "(k < i * i)")
    assert not kernel_work(gathered)["trmm"].flops_known
    # a window that moves with the grid (`k = DEG * v; k < DEG * v + DEG`) runs its DEG
    # trips, its footprint still the arrays' extents (adj 3n, dist read and written)
    ranged = (Path(__file__).parents[1] / "golden" / "data_residency" / "ranged.cu").read_text()
    assert kernel_work(ranged)["relax_kernel"].bytes == 4 * (3 * 4096 + 2 * 4096)


def test_a_guard_that_keeps_a_triangle_of_the_grid_counts_the_triangles_work() -> None:
    """schedule maps `for (j = 0; j <= i; j++)` to the whole square under `if ((i >= j))`:
    the threads above the diagonal store nothing, and what the kernel must compute is
    the triangle (n (n + 1) / 2 of n^2 outputs, estimated on a lattice of the square),
    and what it must move of the output array too. Before, the square's FLOPs and bytes
    were counted: 200% of what it does."""
    square = kernel_work(GEMM)["gemm_kernel"]
    lower = GEMM.replace(
        "            double sum = 0.0;", "            if (i >= j) {\n            double sum = 0.0;"
    ).replace("c[i * n + j] = sum;", "c[i * n + j] = sum; }")
    assert lower != GEMM
    work = kernel_work(lower)["gemm_kernel"]
    assert not work.exact
    assert work.flops / square.flops == pytest.approx(513 / 1024, abs=0.01)
    # the bytes: a and b whole (their rows and columns are all read), c's triangle
    n = 512
    assert square.bytes == 3 * n * n * 8
    assert work.bytes == pytest.approx((2 * n * n + n * n * 513 / 1024) * 8, rel=0.01)
    # c read before the guard, at every position: its reads stay whole, its writes do not
    keep = lower.replace(
        "if (i >= j) {", "double keep = c[i * n + j];\n            if (i >= j) {"
    ).replace("c[i * n + j] = sum; }", "c[i * n + j] = sum + keep; }")
    assert kernel_work(keep)["gemm_kernel"].bytes == pytest.approx(
        (3 * n * n + n * n * 513 / 1024) * 8, rel=0.01
    )
    # a band of width 8 on either side: 17 diagonals
    band = lower.replace("if (i >= j) {", "if (i - j <= 8 && j - i <= 8) {")
    band_share = (17 * 512 - 8 * 9) / 512**2
    assert kernel_work(band)["gemm_kernel"].flops / square.flops == pytest.approx(
        band_share, rel=0.15
    )
    # a condition on memory says nothing about positions: counted as kept
    data = lower.replace("if (i >= j) {", "if (a[i] > 0.0) {")
    assert kernel_work(data)["gemm_kernel"].flops == square.flops
    # a guard that keeps every position keeps every FLOP, exactly
    inside = lower.replace("if (i >= j) {", "if (i < n) {")
    assert kernel_work(inside)["gemm_kernel"] == square


def test_a_tiled_triangle_counts_the_outputs_its_active_test_keeps() -> None:
    """gemm_tiling's guarded kernel computes whole tiles and stores the outputs its
    `active` (inside the box and the guard) keeps: its work is the band's, not the
    box's."""
    golden = Path(__file__).parents[1] / "golden" / "gemm_tiling"
    # one call, of 150 x 130 outputs (two of different sizes get no count)
    first = "    band_product(40, m, 30, 0.25f, a, b, c);\n"
    code = (golden / "sband_guarded.cu").read_text()
    assert first in code
    code = code.replace(first, "")
    unguarded = code.replace(" && (j <= i + 3 && i - j < 70);", ";")
    assert unguarded != code
    kept = kernel_work(code)["band_product_kernel"].flops
    box = kernel_work(unguarded)["band_product_kernel"].flops
    band = sum(1 for i in range(150) for j in range(130) if i - 69 <= j <= i + 3)
    assert kept / box == pytest.approx(band / (150 * 130), rel=0.05)


def test_a_find_first_that_stops_at_its_match_is_not_counted() -> None:
    """A thread that breaks out of its grid-stride loop at its first match reads what the
    data says, up to the loop's trips: bytes counted from them are the most it may read,
    not the least it must (find_first_negative's kernel read 101% of the copy bandwidth
    by them). Such a kernel gets its time, no roofline; the loop without the break is
    counted."""
    code = HISTOGRAM.replace(
        "atomicAdd(&bins[keys[t]], 1);", "if (keys[t] < 0) { bins[0] = (int)t; break; }"
    ).replace(
        "int main(void) { return 0; }",
        "int main(void) { static int keys[N], bins[256]; run(keys, bins); return 0; }",
    )
    assert "break;" in code
    assert "count" in kernel_work(code.replace(" break;", ""))
    assert kernel_work(code) == {}
    golden = Path(__file__).parents[1] / "golden" / "reduction" / "find_first.cu"
    assert kernel_work(golden.read_text()) == {}


# offload and register_tiling's shape (heat1d's kernel as emitted): 4 outputs per thread
HEAT = """
#define N (1 << 20)
__global__ void heat_step_kernel(float *next, float *u, float alpha, long long trips_i)
{
    for (long long base = blockIdx.x * (long long)blockDim.x * 4 + threadIdx.x; base < trips_i;
         base += (long long)blockDim.x * gridDim.x * 4) {
        if (base + 3LL * blockDim.x < trips_i) {
            const long long t_0 = base;
            int i_0 = (int)(1 + t_0);
            const long long t_1 = base + 1LL * blockDim.x;
            int i_1 = (int)(1 + t_1);
            next[i_0] = u[i_0] + alpha * (u[i_0 - 1] - 2.0f * u[i_0] + u[i_0 + 1]);
            next[i_1] = u[i_1] + alpha * (u[i_1 - 1] - 2.0f * u[i_1] + u[i_1 + 1]);
        } else {
            for (int output = 0; output < 4; output++) {
                const long long t_i = base + output * (long long)blockDim.x;
                if (t_i < trips_i) {
                    int i = (int)(1 + t_i);
                    next[i] = u[i] + alpha * (u[i - 1] - 2.0f * u[i] + u[i + 1]);
                }
            }
        }
    }
}
void heat_step(int n, float alpha, float *u, float *next) {
    const long long trips_i = cudaify_trips(1, n - 1, 1, 0);
    float *d_next = (float *)cudaify_map(next + (1), (size_t)((n - 2)) * sizeof(float), 1, 1);
    float *d_u = (float *)cudaify_map(u, (size_t)(n) * sizeof(float), 1, 0);
    heat_step_kernel<<<1024, 256>>>(d_next - (1), d_u, alpha, trips_i);
}
int main(void) { static float u[N], next[N]; heat_step(N, 0.1f, u, next); return 0; }
"""

# one warp per row (reduction's shape): the lanes' loop has no condition of its own
MATVEC = """
#define N 4096
__global__ void matvec_kernel(float *a, float *x, float *y, int n, long long trips_i)
{
    const int lane = threadIdx.x % 32;
    for (long long t_i = (blockIdx.x * (long long)blockDim.x + threadIdx.x) / 32; t_i < trips_i;
         t_i += (long long)blockDim.x * gridDim.x / 32) {
        int i = (int)t_i;
        float sum = 0.0f;
        for (long long t_j = lane;; t_j += 32) {
            int j = (int)t_j;
            if (!(j < n))
                break;
            sum += a[i * n + j] * x[j];
        }
        y[i] = sum;
    }
}
void matvec(int n, float *a, float *x, float *y) {
    float *d_a =
        (float *)cudaify_map(a, (size_t)((long long)n * (long long)n) * sizeof(float), 1, 0);
    float *d_x = (float *)cudaify_map(x, (size_t)(n) * sizeof(float), 1, 0);
    float *d_y = (float *)cudaify_map(y, (size_t)(n) * sizeof(float), 1, 1);
    matvec_kernel<<<512, 256>>>(d_a, d_x, d_y, n, n);
}
int main(void) { static float a[N * N], x[N], y[N]; matvec(N, a, x, y); return 0; }
"""

# a matvec whose inner loop's trips are known: x[j] is read once per launch, not per row
MATVEC_ROWS = """
#define N 1000
__global__ void rows(const double *a, const double *x, double *y, long long trips) {
    for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < trips;
         t += (long long)blockDim.x * gridDim.x) {
        int i = (int)t;
        double sum = 0.0;
        for (int j = 0; j < N; j++)
            sum += a[i * N + j] * x[j];
        y[i] = sum;
    }
}
void run(const double *a, const double *x, double *y) { rows<<<4, 256>>>(a, x, y, N); }
int main(void) { return 0; }
"""

# the same element read ten times
DECOY = """
#define N (1 << 20)
__global__ void decoy(const float *x, float *y, long long trips) {
    for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < trips;
         t += (long long)blockDim.x * gridDim.x) {
        int i = (int)t;
        y[i] = x[i] + x[i] + x[i] + x[i] + x[i] + x[i] + x[i] + x[i] + x[i] + x[i];
    }
}
void run(const float *x, float *y) { decoy<<<1024, 256>>>(x, y, N); }
int main(void) { return 0; }
"""

# a kernel over an array whose extent and trips the host does not give
UNKNOWN_EXTENT = """
#include <vector>
__global__ void widen(double *e, const double *a, long long trips) {
    for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < trips;
         t += (long long)blockDim.x * gridDim.x)
        e[t] = e[t] + a[t];
}
void run(std::vector<double> &e, const std::vector<double> &a, double *d_e, double *d_a) {
    widen<<<1024, 256>>>(d_e, d_a, (long long)e.size());
}
int main(void) { return 0; }
"""


def test_a_register_tiled_stencil_moves_its_arrays_once() -> None:
    """heat1d's kernel was counted at 1.7e8 bytes a launch (465% of an H200's bandwidth):
    every reference of every output of the tile charged. Its footprint is u read once
    (n elements: trips + 2 neighbours) and next written once (the trips)."""
    trips = (1 << 20) - 2
    work = kernel_work(HEAT)["heat_step_kernel"]
    assert work.bytes == 4 * (trips + 2) + 4 * trips
    assert work.precision == "fp32"
    # the H200 run: 3000 launches in 26.4 ms on 4.09 TB/s: 23%, not 465%
    placed = roofline.kernel_roofline("heat_step_kernel", 3000, 0.0264, work, 4.09e12, None)
    assert placed.percent == pytest.approx(100 * 3000 * work.bytes / 0.0264 / 4.09e12)
    assert 20 < (placed.percent or 0) < 25


def test_an_elementwise_kernel_moves_each_array_once() -> None:
    assert kernel_work(SAXPY)["saxpy_kernel"].bytes == 3 * 4 * N


def test_a_matvec_reads_the_vector_once_per_launch() -> None:
    n = 1000
    work = kernel_work(MATVEC_ROWS)["rows"]
    assert work.bytes == 8 * (n * n + n + n)  # a, x once (not once per row), y written
    assert work.flops == 2 * n * n and work.flops_known


def test_a_loop_of_unknown_trips_is_capped_by_its_arrays_extents() -> None:
    n = 4096
    # the lanes' loop as a while loop: its trips are not read
    lanes = MATVEC.replace(
        "for (long long t_j = lane;; t_j += 32) {\n            int j = (int)t_j;\n"
        "            if (!(j < n))\n                break;",
        "for (int j = lane; j < n * (1 + (int)x[0] * 0); j += 32) {",
    )
    assert lanes != MATVEC
    work = kernel_work(lanes)["matvec_kernel"]
    assert work.bytes == 4 * (n * n + n + n)
    assert not work.flops_known and not work.exact


BAND = """
__global__ void band(double *a, long long lo, long long trips)
{
    for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < trips;
         t += (long long)blockDim.x * gridDim.x) {
        const long long i = lo + t;
        a[i] = a[i] * 0.5;
    }
}
void sweep(double *a)
{
    double *d_a = (double *)cudaify_map(a, (size_t)(4096) * sizeof(double), 1, 1);
    for (long long h = 0; h < 64; h++) {
        const long long lo = h * 64;
        const long long trips = 64 - (h % 3);
        band<<<1, 64>>>(d_a, lo, trips);
    }
}
int main(void) { static double a[4096]; sweep(a); return 0; }
"""


def test_a_launch_whose_size_the_text_does_not_fix_gets_no_count() -> None:
    """Each launch of a band touches 62-64 elements, its size computed in the host's loop
    (as a wavefront's diagonals are): the array's extent (4096 elements) bounds what a
    launch may touch, not what it must, so it is no count at all (it read 64 times the
    bytes; PolyBench seidel-2d's kernel read 328% of the copy bandwidth by it)."""
    assert kernel_work(BAND) == {}


def test_a_loop_the_lanes_share_counts_the_rows_once() -> None:
    """segmented's lane loop, `for (c = lane;; c += 32)` up to its `break`: the 32 lanes
    together run j over 0..n - 1 once per row, so the count is the product's, exact."""
    n = 4096
    work = kernel_work(MATVEC)["matvec_kernel"]
    assert work == Work(4 * (n * n + n + n), 2 * n * n, "fp32", True, True)


def test_repeated_references_count_once() -> None:
    work = kernel_work(DECOY)["decoy"]
    assert work.bytes == 2 * 4 * N  # x read once, y written once: not 11 * 4 * N
    # so 10 launches in 5 ms on a 3 TB/s GPU are 5.6% of the roof, never over 100%
    timing = Timing(kernel=5e-3, kernel_times=(("decoy", 10, 5e-3),))
    placed = roofline.with_kernels(timing, {"decoy": work}, 3e12, None)
    assert placed.kernels[0].percent == pytest.approx(100 * 10 * 8 * N / 5e-3 / 3e12)


def test_a_kernel_over_arrays_of_unknown_extent_gets_no_roofline() -> None:
    assert kernel_work(UNKNOWN_EXTENT) == {}
    peaks = Peaks(fp32=60e12, fp64=30e12)
    timing = Timing(kernel=1e-3, kernel_times=(("widen", 4, 1e-3),))
    placed = roofline.with_kernels(timing, {}, 3e12, peaks)
    assert placed.kernels[0].percent is None and placed.kernels[0].bound is None


def test_a_kernel_with_uncounted_flops_stands_against_the_bandwidth_with_no_bound() -> None:
    """Its share of the copy bandwidth is measured; whether memory or compute bounds it is
    not known (a product's k loop of unknown length), so it is not called memory-bound."""
    peaks = Peaks(fp32=60e12, fp64=30e12)
    work = Work(bytes=1e9, flops=1e12, precision="fp32", exact=False, flops_known=False)
    placed = roofline.kernel_roofline("k", 1, 1e-3, work, 3e12, peaks)
    assert placed.bound is None and placed.flops is None
    assert placed.percent == pytest.approx(100 * 1e9 / 1e-3 / 3e12)
    counted = roofline.kernel_roofline("k", 1, 1e-3, replace(work, flops_known=True), 3e12, peaks)
    assert counted.bound == "compute"  # 1000 FLOP/B: the same kernel with its FLOPs known


def test_memory_bound_kernel_is_placed_under_the_bandwidth() -> None:
    # 12 GB and 2 GFLOP in 10 ms on a 3 TB/s, 60 TFLOP/s GPU: I = 1/6 FLOP/B, so the
    # roof is 3e12 / 6 = 0.5 TFLOP/s (memory); achieved 0.2 TFLOP/s = 40%.
    peaks = Peaks(fp32=60e12, fp64=30e12)
    roof, bound, percent = roofline.place(12e9, 2e9, 1e-2, "fp32", 3e12, peaks)
    assert bound == "memory" and roof == pytest.approx(0.5e12)
    assert percent == pytest.approx(40.0)


def test_compute_bound_kernel_is_placed_under_its_precisions_peak() -> None:
    # 2 * 4096^3 FLOPs over 3 * 4096^2 doubles: I = 4096 / 12 FLOP/B, far right of the
    # ridge (30e12 / 3e12 = 10): the fp64 peak is the roof; 1 s gives 0.137e12 = 0.46%.
    peaks = Peaks(fp32=60e12, fp64=30e12)
    flops, moved = 2 * 4096.0**3, 3 * 4096.0**2 * 8
    roof, bound, percent = roofline.place(moved, flops, 1.0, "fp64", 3e12, peaks)
    assert bound == "compute" and roof == 30e12
    assert percent == pytest.approx(100 * flops / 30e12)
    # the same work in fp32 has the fp32 roof
    assert roofline.place(moved, flops, 1.0, "fp32", 3e12, peaks)[0] == 60e12


def test_kernels_without_floats_or_roofs_are_placed_as_far_as_they_can_be() -> None:
    peaks = Peaks(fp32=60e12, fp64=30e12)
    assert roofline.place(3e9, 0.0, 1e-3, None, 3e12, peaks) == (3e12, "memory", 100.0)
    assert roofline.place(3e9, 2e9, 1e-3, "fp32", 3e12, None)[1] == "memory"  # no peak
    assert roofline.place(3e9, 2e9, 1e-3, "fp32", None, peaks) == (None, None, None)
    assert roofline.place(3e9, 2e9, 0.0, "fp32", 3e12, peaks) == (None, None, None)


def test_reported_names_are_matched_to_the_sources_kernels() -> None:
    names = ["saxpy_kernel", "kernel", "reduce_kernel"]
    assert roofline.source_name("_Z12saxpy_kernelifPKfPf", names) == "saxpy_kernel"
    assert roofline.source_name("reduce_kernel", names) == "reduce_kernel"  # extern "C"
    assert roofline.source_name("_Z6kernelPf", names) == "kernel"
    assert roofline.source_name("0x55d0c0ffee", names) is None


def test_the_region_gets_its_kernels_weighted_by_time_and_the_dominant_bound() -> None:
    peaks = Peaks(fp32=60e12, fp64=30e12)
    work = {
        "saxpy_kernel": Work(12.0 * N, 2.0 * N, "fp32", True),
        "gemm_kernel": Work(3 * 512 * 512 * 8.0, 2 * 512.0**3, "fp64", True),
    }
    # saxpy: 10 launches of 12 MiB in 5 ms = 25.2 GB/s, 0.84% of 3 TB/s; gemm: 1 launch of
    # 2 * 512^3 FLOPs in 15 ms = 17.9 GFLOP/s, 0.06% of the 30 TFLOP/s fp64 peak
    timing = Timing(
        kernel=0.02,
        kernel_times=(
            ("_Z12saxpy_kernelifPKfPf", 10, 5e-3),
            ("_Z11gemm_kernelPKdS0_Pdixx", 1, 15e-3),
            ("0xdeadbeef", 3, 1e-6),
        ),
    )
    placed = roofline.with_kernels(timing, work, 3e12, peaks)
    saxpy, gemm, unknown = placed.kernels
    assert saxpy.name == "saxpy_kernel" and saxpy.bound == "memory"
    assert saxpy.bytes == 10 * 12.0 * N
    assert saxpy.percent == pytest.approx(100 * 10 * 12.0 * N / 5e-3 / 3e12)
    assert gemm.bound == "compute" and gemm.flops == 2 * 512.0**3
    assert gemm.percent == pytest.approx(100 * 2 * 512.0**3 / 15e-3 / 30e12)
    assert unknown.name == "0xdeadbeef" and unknown.percent is None
    assert placed.bound == "compute"  # gemm took the most time
    expected = (5e-3 * saxpy.percent + 15e-3 * gemm.percent) / 20e-3
    assert placed.roofline_percent == pytest.approx(expected)
    lines = roofline.header_lines(placed)
    assert lines[0].startswith("Roofline")
    assert lines[1] == (
        "  gemm_kernel: 0% of the compute roof (0.0179 TFLOP/s, 42.7 FLOP/B, fp64), 1 launch, 15 ms"
    )
    assert lines[2] == (
        "  saxpy_kernel: 1% of the memory roof (0.0252 TB/s, 0.167 FLOP/B, fp32), 10 launches, 5 ms"
    )
    assert "no roofline" in lines[3]


def test_no_timed_kernels_leave_the_timing_as_it_was() -> None:
    timing = Timing(kernel=0.01, roofline_percent=12.0, bound="memory")
    assert roofline.with_kernels(timing, {}, 3e12, None) == timing
    assert roofline.header_lines(timing) == []


def test_the_runtimes_kernel_lines_are_read(tmp_path: Path) -> None:
    report = tmp_path / "timing"
    report.write_text(
        "region_seconds 0.5\ncalls 1\ncontext_seconds 0.1\nkernel_seconds 0.25\n"
        "transfer_seconds 0.1\ntransfer_bytes 1000\n"
        "kernel _Z12saxpy_kernelifPKfPf 10 0.200000000\nkernel 0x7f00 2 0.05\n"
    )
    found = read_timing_file(report)
    assert found.fields["kernel_seconds"] == 0.25
    assert found.kernels == (("_Z12saxpy_kernelifPKfPf", 10, 0.2), ("0x7f00", 2, 0.05))


def test_a_kernel_name_of_stray_bytes_does_not_stop_the_reading(tmp_path: Path) -> None:
    """Seen on an H100: a name CUDA handed back as bytes that are not UTF-8 crashed the
    measurement (and the graph build running it). The rest of the report still counts."""
    report = tmp_path / "timing"
    report.write_bytes(
        b"region_seconds 0.5\ncalls 1\nkernel_seconds 0.25\n"
        b"kernel \xce\x01\xff 3 0.1\nkernel _Z4stepPf 2 0.15\n"
    )
    found = read_timing_file(report)
    assert found.fields["kernel_seconds"] == 0.25 and found.fields["region_seconds"] == 0.5
    assert ("_Z4stepPf", 2, 0.15) in found.kernels


def test_peaks_are_parsed_and_checked() -> None:
    text = "fp32_flops_per_second 6.000000e+13\nfp64_flops_per_second 3.000000e+13\n"
    assert bandwidth.parse_peaks(text) == Peaks(fp32=6e13, fp64=3e13)
    assert bandwidth.parse_peaks("fp32_flops_per_second 6e13\n") is None  # fp64 missing
    assert bandwidth.parse_peaks(text.replace("3.000000e+13", "nan")) is None
    assert bandwidth.parse_peaks(text.replace("6.000000e+13", "1.0e+20")) is None  # implausible
    assert bandwidth.parse_peaks(text.replace("6.000000e+13", "fast")) is None
    assert bandwidth.parse_peaks("cudaMalloc failed\n") is None
    assert Peaks(6e13, 3e13).of("fp64") == 3e13 and Peaks(6e13, 3e13).of("fp32") == 6e13


def test_the_peak_program_builds_and_measures_where_a_gpu_is(tmp_path: Path) -> None:
    from cudaify.backend.cache import Cache
    from cudaify.backend.gpu import gpu_available

    cache = Cache(tmp_path / "cache")
    build = bandwidth.build_peak_program(cache, "sm_80")
    assert build.ok, build
    measured = bandwidth.measure_peaks(cache, "sm_80")
    if not gpu_available():
        assert measured is None  # built, ran, and gave no figure: never an exception
        return
    assert measured is not None


def test_the_peaks_are_read_from_the_cache_by_gpu_name(monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from cudaify.backend.cache import Cache

    cache = Cache(tmp_path / "cache")
    monkeypatch.setattr(bandwidth, "this_gpu", lambda: "Test GPU 80GB")
    monkeypatch.setattr(bandwidth, "_KNOWN_PEAKS", {})
    key = bandwidth._peaks_key("Test GPU 80GB")
    cache.write_json("bandwidth", key, {"gpu": "Test GPU 80GB", "fp32": 6e13, "fp64": 3e13})
    assert bandwidth.peak_flops(cache, "sm_80") == Peaks(6e13, 3e13)
    monkeypatch.setattr(bandwidth, "this_gpu", lambda: None)
    assert bandwidth.peak_flops(cache, "sm_80") is None


@pytest.mark.gpu
def test_the_peaks_are_plausible_on_this_gpu(tmp_path: Path) -> None:
    from cudaify.backend.cache import Cache

    peaks = bandwidth.measure_peaks(Cache(tmp_path / "cache"), "sm_90")
    assert peaks is not None
    # data-center GPUs: fp32 between 5 and 200 TFLOP/s; fp64 at least 1/64 of it
    assert 5e12 < peaks.fp32 < 2e14, peaks
    assert peaks.fp32 / 64 <= peaks.fp64 <= peaks.fp32 * 1.1, peaks
    print(f"\npeaks: fp32 {peaks.fp32 / 1e12:.1f} TFLOP/s, fp64 {peaks.fp64 / 1e12:.1f} TFLOP/s")


# a scan as transforms/scan.py writes it: the size query (no kernel) and the scan itself;
# the runtime reports cub's kernels by their mangled names, one instantiation per type
SCANS = """
#include <cub/device/device_scan.cuh>
#define N 1000000
void scan_both(int n, const long long *in, long long *out, const double *v, double *w) {
    const long long trips = cudaify_trips(0, n, 1, 0);
    long long *d_in = NULL, *d_out = NULL;
    double *d_v = NULL, *d_w = NULL;
    size_t bytes = 0;
    static void *storage = NULL;
    CUDAIFY_CHECK(cub::DeviceScan::InclusiveSum(nullptr, bytes, d_in, d_out, trips));
    CUDAIFY_CHECK(cub::DeviceScan::InclusiveSum(storage, bytes, d_in, d_out, trips));
    CUDAIFY_CHECK(cub::DeviceScan::ExclusiveScan(storage, bytes, d_v, d_w + 1, cudaify_sum(),
                                                 0.0, n / 2));
}
int main(void) {
    static long long a[N], b[N];
    static double c[N], d[N];
    for (int round = 0; round < 3; round++) scan_both(N, a, b, c, d);
    return 0;
}
"""
SCAN_KERNEL = (
    "_ZN3cub17CUB_300001_SM_9006detail4scan16DeviceScanKernelINS2_10policy_hubIxxxy11"
    "cudaify_sumE10Policy1000EPxS8_NS0_13ScanTileStateIxLb1EEES5_NS1_10InputValueIxS8_EEyxLb1ExEEvT0_"
)
SCAN_INIT = (
    "_ZN3cub17CUB_300001_SM_9006detail4scan20DeviceScanInitKernelINS0_13ScanTileStateIxLb1EEEEEvT_i"
)


def test_a_scan_call_moves_its_input_and_output_once_and_a_size_query_nothing() -> None:
    work = kernel_work(SCANS)["cub::DeviceScan"]
    # a call per round of each: 16 bytes per item over 10^6 items, 16 over 5 * 10^5: the
    # mean of the two calls (each runs 3 times), an estimate since they differ
    assert work.bytes == pytest.approx((16 * 1_000_000 + 16 * 500_000) / 2)
    assert not work.exact and work.flops == 0.0 and work.precision is None
    only_sums = SCANS.replace("CUDAIFY_CHECK(cub::DeviceScan::ExclusiveScan", "// ")
    assert kernel_work(only_sums)["cub::DeviceScan"] == Work(16e6, 0.0, None, True)
    # a size query alone launches nothing: no scan to count
    queries = only_sums.replace("InclusiveSum(storage,", "InclusiveSum(nullptr,")
    assert "cub::DeviceScan" not in kernel_work(queries)
    # an operand whose type the text does not give leaves the scans uncounted
    iterator = only_sums.replace("(storage, bytes, d_in,", "(storage, bytes, it,")
    assert "cub::DeviceScan" not in kernel_work(iterator)


def test_cubs_scan_kernels_stand_together_under_the_calls_work() -> None:
    work = {"cub::DeviceScan": Work(16e6, 0.0, None, True)}
    timing = Timing(
        kernel=0.02,
        kernel_times=(
            (SCAN_KERNEL, 3, 15e-6 * 3),
            (SCAN_INIT, 3, 2e-6 * 3),
            (SCAN_KERNEL.replace("IxxxyN", "IdddyN").replace("Ixxxy11", "Iddd11"), 2, 20e-6),
            ("_Z10other_kernelPf", 1, 1e-3),
        ),
    )
    placed = roofline.with_kernels(timing, work, 3e12, None)
    other, scan = placed.kernels
    assert other.name == "_Z10other_kernelPf" and other.percent is None
    # five calls (the init kernels' launches are part of them), all their kernels' time
    assert scan.name == "cub::DeviceScan" and scan.launches == 5
    assert scan.seconds == pytest.approx(71e-6) and scan.bytes == 5 * 16e6
    assert scan.bound == "memory"
    assert scan.percent == pytest.approx(100 * 5 * 16e6 / 71e-6 / 3e12)
    # without a count the scan still stands as one entry, unplaced
    alone = roofline.with_kernels(timing, {}, 3e12, None)
    assert [k.name for k in alone.kernels][-1] == "cub::DeviceScan"
    assert alone.kernels[-1].percent is None
    # init kernels alone (no scan launched) are left as the runtime named them
    init_only = replace(timing, kernel_times=((SCAN_INIT, 1, 1e-6),))
    assert roofline.with_kernels(init_only, work, 3e12, None).kernels[0].name == SCAN_INIT


AFFINE_SCAN = Path(__file__).parents[1] / "golden" / "scan" / "affine.cu"
# the runtime names the two-pass scan's kernels by their mangled template instances
SHARES_KERNEL = (
    "_Z19cudaify_scan_sharesI14cudaify_affineIdE15cudaify_compose17smooth_scan_termsEvT1_xxT0_PT_"
)
SHARE_KERNEL = (
    "_Z18cudaify_scan_shareI14cudaify_affineIdE15cudaify_compose17smooth_scan_terms"
    "17smooth_scan_storeEvT1_T2_xxT0_PKT_"
)


def test_the_two_pass_scan_moves_what_its_functors_read_and_store_once() -> None:
    """scan's affine recurrence over 99999 items (its golden): the term reads a[i] and
    b[i], the store writes x[t_i], 24 bytes an item; its x[-1], the same element for every
    item, is not counted, and the passes' generic kernels are not counted apart."""
    code = AFFINE_SCAN.read_text()
    work = kernel_work(code)
    assert work["cudaify_scan"] == Work(24 * 99_999, 0.0, None, True)
    assert not {"cudaify_scan_share", "cudaify_scan_shares"} & set(work)
    # a scalar member (the loop's scalars travel in the functor) moves nothing
    scaled = code.replace(
        "    double *b;\n    __device__", "    double *b;\n    double scale;\n    __device__"
    )
    assert scaled != code and kernel_work(scaled)["cudaify_scan"] == work["cudaify_scan"]
    # a term read through a row pointer (or any member the count cannot size) is not counted
    rows = code.replace("    double *b;\n    __device__", "    double (*b)[4];\n    __device__")
    assert rows != code and "cudaify_scan" not in kernel_work(rows)
    # nor is a call whose functor is not spelled out where it is made
    hidden = code.replace("smooth_scan_terms{d_a - (1), d_b - (1)}", "terms_of(d_a, d_b)")
    assert hidden != code and "cudaify_scan" not in kernel_work(hidden)


def test_the_two_pass_scan_kernels_stand_together_one_launch_a_call() -> None:
    """Two calls over several tiles (pass 1 once, then the scan once) and one single-tile
    call (the scan alone): three calls, all the time."""
    work = {"cudaify_scan": Work(24e6, 0.0, None, True)}
    timing = Timing(
        kernel=0.02,
        kernel_times=(
            (SHARES_KERNEL, 2, 210e-6),
            (SHARE_KERNEL, 3, 300e-6),
            ("_Z10other_kernelPf", 1, 1e-3),
        ),
    )
    other, scan = roofline.with_kernels(timing, work, 3e12, None).kernels
    assert other.name == "_Z10other_kernelPf"
    assert scan.name == "cudaify_scan" and scan.launches == 3
    assert scan.seconds == pytest.approx(510e-6) and scan.bytes == 3 * 24e6
    assert scan.percent == pytest.approx(100 * 3 * 24e6 / 510e-6 / 3e12)


def test_a_strided_launch_whose_size_is_guarded_by_its_loop_running_is_counted() -> None:
    """schedule's `for (i = 1; i < n; i += 3)` launches `(n >= 2) ? (...) / 3 + 1 : 0`
    threads (its golden): 33333 of the 10^5 elements read and written, two FLOPs each."""
    golden = Path(__file__).resolve().parent.parent / "golden" / "schedule" / "strided.cu"
    work = kernel_work(golden.read_text())
    assert work["scale_every_third_kernel"] == Work(2 * 8 * 33333.0, 2 * 33333.0, "fp64", True)


COARSENED = """
#define N (1 << 20)
__global__ void saxpy4(float a, const float *x, float *y, long long trips) {
    for (long long base = blockIdx.x * (long long)blockDim.x * 4 + threadIdx.x; base < trips;
         base += (long long)blockDim.x * gridDim.x * 4) {
        if (base + 3LL * blockDim.x < trips) {
            const long long i0 = base, i1 = base + blockDim.x;
            const long long i2 = base + 2LL * blockDim.x, i3 = base + 3LL * blockDim.x;
            y[i0] = a * x[i0] + y[i0];
            y[i1] = a * x[i1] + y[i1];
            y[i2] = a * x[i2] + y[i2];
            y[i3] = a * x[i3] + y[i3];
        }
    }
}
void run(const float *x, float *y) { saxpy4<<<256, 256>>>(2.0f, x, y, N); }
int main(void) { static float x[N], y[N]; run(x, y); return 0; }
"""


def test_a_level_four_grids_wide_runs_its_four_outputs_once_per_four_values() -> None:
    """register_tiling's pass over four outputs per thread: 2 FLOPs per element, not 8
    (kmeans_assign's kernel read 139% of the fp32 peak by the 4x count)."""
    work = kernel_work(COARSENED)["saxpy4"]
    assert work.flops == 2.0 * N and work.bytes == 12.0 * N and work.precision == "fp32"


def test_a_wavefronts_tile_diagonal_launches_get_no_count() -> None:
    """wavefront's kernel guards `t_j < trips_j` with `t_j = tile_j * 32 + threadIdx.x`,
    `tile_j` from the launch's diagonal: a launch covers one diagonal of tiles, which the
    text does not give (read as the whole table, each of lcs_edit's 1374 launches read 555%
    of the copy bandwidth). A guard on the global index still counts (the saxpy above)."""
    golden = Path(__file__).resolve().parent.parent / "golden" / "wavefront" / "dp_rows.cu"
    assert "edit_distance_wave" not in kernel_work(golden.read_text())
    assert kernel_work(
        SAXPY.replace("blockIdx.x * blockDim.x", "(long long)blockDim.x * blockIdx.x")
    )["saxpy_kernel"] == Work(12.0 * N, 2.0 * N, "fp32", True)


def test_the_launches_values_are_read(tmp_path: Path) -> None:
    report = tmp_path / "timing"
    report.write_text(
        "region_seconds 0.5\nkernel _Z4stepPfif 2 0.01\n"
        "launch _Z4stepPfif 2 256 1 1 140737488355328@4096 4294967295 -\n"
        "launch _Z4stepPfif 1 128 2 1 140737488359424@0 7 1065353216\n"
    )
    found = read_timing_file(report)
    assert found.launches == (
        LaunchValues(
            "_Z4stepPfif", 2, (256, 1, 1), (1 << 47, 4294967295, None), (4096, None, None)
        ),
        LaunchValues(
            "_Z4stepPfif", 1, (128, 2, 1), ((1 << 47) + 4096, 7, 1065353216), (0, None, None)
        ),
    )
    # a launch line without its block shape is no report at all, as any malformed line
    report.write_text("region_seconds 0.5\nlaunch _Z4stepPfif 2 256\n")
    assert read_timing_file(report).launches == () and read_timing_file(report).fields == {}


def _counted(work: dict[str, Work], code: str, launches: list[LaunchValues]) -> dict[str, Work]:
    """roofline.with_launches where the run timed exactly the launches recorded."""
    totals: dict[str, int] = {}
    for launch in launches:
        totals[launch.kernel] = totals.get(launch.kernel, 0) + launch.count
    return roofline.with_launches(work, code, launches, [(k, n, 1e-3) for k, n in totals.items()])


# a kernel whose size only the running program knows: a vector's size()
SIZED_AT_RUN_TIME = """
#include <vector>
__global__ void scale_kernel(float *x, int n, float s) {
    for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < n;
         t += (long long)blockDim.x * gridDim.x)
        x[t] = s * x[t];
}
void scale(std::vector<float> &v, float *d, float s) {
    scale_kernel<<<64, 256>>>(d, (int)v.size(), s);
}
int main(void) { return 0; }
"""
SCALE = "_Z12scale_kernelPfif"


def _launch(count: int, n: int, extent: int | None = None) -> LaunchValues:
    return LaunchValues(
        SCALE, count, (256, 1, 1), (1 << 40, n & 0xFFFFFFFF, 0), (extent, None, None)
    )


def test_a_kernel_sized_at_run_time_is_counted_from_its_launches_values() -> None:
    assert kernel_work(SIZED_AT_RUN_TIME) == {}  # the text alone does not give n
    (alone,) = _counted({}, SIZED_AT_RUN_TIME, [_launch(3, 1000)]).values()
    # a read and a write of each of the n floats, a multiply each
    assert alone == Work(8000.0, 1000.0, "fp32", True)
    # launches of several sizes: their mean, weighted by how often each ran
    mixed = _counted({}, SIZED_AT_RUN_TIME, [_launch(2, 1000), _launch(1, 4000)])
    assert mixed["scale_kernel"].bytes == pytest.approx((2 * 8000 + 32000) / 3)
    assert not mixed["scale_kernel"].exact
    # an int's bits are read as a signed int: -1 runs no iteration
    assert _counted({}, SIZED_AT_RUN_TIME, [_launch(1, -1)])["scale_kernel"].bytes == 0
    # the text's own count stands; a launch of no kernel of the text is passed over
    counted = {"scale_kernel": Work(1.0, 0.0, None, True)}
    assert _counted(counted, SIZED_AT_RUN_TIME, [_launch(1, 1000)]) == counted
    other = LaunchValues("_Z5otherPf", 1, (256, 1, 1), (1,), (None,))
    assert _counted({}, SIZED_AT_RUN_TIME, [other]) == {}


GATHER = """
__global__ void gather_kernel(float *out, const float *x, const int *idx, int n) {
    for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < n;
         t += (long long)blockDim.x * gridDim.x)
        out[t] = x[idx[t]];
}
void gather(std::vector<int> &idx, float *d_out, const float *d_x, const int *d_idx) {
    gather_kernel<<<64, 256>>>(d_out, d_x, d_idx, (int)idx.size());
}
int main(void) { return 0; }
"""


def test_a_pointers_allocation_caps_a_gather_counted_from_its_launches() -> None:
    """`x[idx[t]]`: a gather reads at most the elements of x's allocation; the launch's
    pointer to it gives them (the bytes to its end over the element size)."""
    pointers = (1 << 40, 1 << 41, 1 << 42, 1000)

    def launch(x_bytes: int | None) -> LaunchValues:
        extents = (4000, x_bytes, 4000, None)
        return LaunchValues("_Z13gather_kernelPfPKfPKii", 1, (256, 1, 1), pointers, extents)

    (found,) = _counted({}, GATHER, [launch(4 * 100)]).values()
    # out written and idx read over their 1000 elements, x read at most its 100
    assert found.bytes == 4 * 1000 + 4 * 1000 + 4 * 100 and not found.exact
    assert _counted({}, GATHER, [launch(None)]) == {}  # no allocation: no cap


STRUCTS = """
#define N 1000
struct Point { double x, y; int id; };
typedef struct { float a; char tag; } Tagged;
struct Tally { long long count; double sum; };
__global__ void norms(const Point *p, Tagged *t, double *out, long long trips,
                      decltype(cudaify_declval<Tally>().count) *partial) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < trips;
         i += (long long)blockDim.x * gridDim.x) {
        out[i] = p[i].x * p[i].x + p[i].y * p[i].y;
        t[i].a = 1.0f;
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = 1;
}
void run(const Point *p, Tagged *t, double *out, long long *partial) {
    norms<<<64, 256>>>(p, t, out, N, partial);
}
int main(void) { return 0; }
"""


def test_struct_elements_are_laid_out_as_the_c_abi_does() -> None:
    """A struct's element is its members, each at its alignment and the whole padded to
    the largest (24 bytes for two doubles and an int; 8 for a float and a char); a
    reduction's partials of a struct member have that member's type. Their members'
    arithmetic counts: three FLOPs a point, in double."""
    work = kernel_work(STRUCTS)["norms"]
    # (the partials: one element, written by each block's first thread)
    assert work.bytes == 1000 * 24 + 1000 * 8 + 1000 * 8 + 8
    assert work.flops == 3 * 1000 and work.precision == "fp64"
    # a member of no layout known here (a base class, a bit-field) leaves it uncounted
    for unknown in (
        "struct Point : Base { double x, y; int id; };",
        "struct Point { double x, y; int id : 4; };",
    ):
        assert "norms" not in kernel_work(
            STRUCTS.replace("struct Point { double x, y; int id; };", unknown)
        )
    pair = STRUCTS.replace("const Point *p", "const std::pair<int, double> *q").replace(
        "p[i].x * p[i].x + p[i].y * p[i].y", "q[i].second"
    )
    assert kernel_work(pair)["norms"].bytes == 1000 * 16 + 1000 * 8 + 1000 * 8 + 8


COMPLEX_FIR = """
#include <cuda/std/complex>
#define N 4096
#define TAPS 16
__global__ void fir(const cuda::std::complex<float> *x, const cuda::std::complex<float> *h,
                    cuda::std::complex<float> *y, long long trips) {
    for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < trips;
         t += (long long)blockDim.x * gridDim.x) {
        cuda::std::complex<float> acc(0.0f, 0.0f);
        for (int k = 0; k < TAPS; k++)
            acc += h[k] * x[t + k];
        y[t] = acc;
    }
}
void run(const cuda::std::complex<float> *x, const cuda::std::complex<float> *h,
         cuda::std::complex<float> *y) { fir<<<64, 256>>>(x, h, y, N); }
int main(void) { return 0; }
"""


def test_complex_arithmetic_counts_its_real_operations() -> None:
    """A complex multiply is 6 real operations and an add 2: a tap is 8 FLOPs in float,
    on 8-byte elements."""
    work = kernel_work(COMPLEX_FIR)["fir"]
    assert work.flops == 4096 * 16 * 8 and work.precision == "fp32"
    assert work.bytes == 8 * (4096 + 15) + 8 * 16 + 8 * 4096


PRIVATIZED = """
#define N 100000
#define NB 64
__global__ void hist(const float *x, int *bins, long long trips, int copies) {
    extern __shared__ int local[];
    for (long long k = threadIdx.x; k < (long long)(copies * NB); k += blockDim.x)
        local[k] = 0;
    __syncthreads();
    for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < trips;
         t += (long long)blockDim.x * gridDim.x)
        atomicAdd(&local[(int)x[t] % NB], 1);
    __syncthreads();
    for (long long k = threadIdx.x; k < NB; k += blockDim.x)
        atomicAdd(&bins[k], local[k]);
}
int pick(void);
void run(const float *x, int *bins) { int copies = pick(); hist<<<64, 256>>>(x, bins, N, copies); }
int main(void) { return 0; }
"""


def test_a_blocks_own_loop_of_unknown_trips_over_shared_memory_leaves_the_count() -> None:
    """Zeroing a block's shared copies (each block runs the whole loop, its bound a launch
    value the text does not give) moves no device memory: the kernel is still counted, as
    an estimate; the same loop over a global array would leave it uncounted."""
    work = kernel_work(PRIVATIZED)["hist"]
    assert work.bytes == 4 * 100000 + 2 * 4 * 64 and not work.exact
    global_zeroing = PRIVATIZED.replace("local[k] = 0;", "bins[k] = 0;")
    assert "hist" not in kernel_work(global_zeroing)


LAMBDAS = """
#define N 4000
struct Point { double x, y; };
__global__ void nearest(const Point *points, double *out, int n, long long trips) {
    for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < trips;
         t += (long long)blockDim.x * gridDim.x) {
        auto distance = [](const Point &a, const Point &b) {
            double dx = a.x - b.x, dy = a.y - b.y;
            return dx * dx + dy * dy;
        };
        double best = 1e300;
        for (int j = 0; j < n; j++)
            best = fmin(best, distance(points[t], points[j]));
        out[t] = best;
    }
}
void run(const Point *p, double *out) { nearest<<<64, 256>>>(p, out, N, N); }
int main(void) { return 0; }
"""


def test_a_lambdas_work_counts_where_it_is_called_and_its_return_leaves_only_it() -> None:
    """The lambda's 5 FLOPs run once per call, N times per point (not once where it is
    defined); its `return` is no early exit of the kernel's loop (which would leave the
    kernel uncounted, as a find-first's is)."""
    work = kernel_work(LAMBDAS)["nearest"]
    assert work.flops == 5 * 4000 * 4000 and work.precision == "fp64"
    assert work.bytes == 16 * 4000 + 8 * 4000
    (placed,) = roofline.with_kernels(
        Timing(kernel=1e-3, kernel_times=(("_Z7nearestPK5PointPdix", 1, 1e-3),)),
        {"nearest": work},
        4e12,
        Peaks(6e13, 3e13),
    ).kernels
    assert placed.bound == "compute"


TEMPLATE = """
template <int R, typename T>
__global__ void stencil_kernel(T *w, T *in, T *out, long long trips) {
    for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < trips;
         t += (long long)blockDim.x * gridDim.x) {
        int i = (int)(R + t);
        T acc = 0;
        for (int k = -R; k <= R; k++)
            acc += w[k + R] * in[i + k];
        out[i] = acc;
    }
}
template <int R, typename T>
void step(T *w, T *in, T *out, long long n) {
    stencil_kernel<R, T><<<64, 256>>>(w, in, out, n - 2 * R);
}
int main(void) { return 0; }
"""


def test_a_kernel_templates_instance_is_counted_with_its_arguments() -> None:
    """The runtime names the instance (`_Z14stencil_kernelILi4EfEvPT0_S1_S1_x`: R = 4, T =
    float): its element size and its radius come from there, its size from the launch."""
    instance = "_Z14stencil_kernelILi4EfEvPT0_S1_S1_x"
    launch = LaunchValues(instance, 1, (256, 1, 1), (1, 2, 3, 1000), (36, 4032, 4032, None))
    (work,) = _counted({}, TEMPLATE, [launch]).values()
    # 1000 outputs over 1008 inputs, 9 weights; a multiply and an add per tap
    assert work.bytes == 4 * (1008 + 9 + 1000) and work.flops == 2 * 9 * 1000
    assert work.precision == "fp32"
    double = LaunchValues(
        "_Z14stencil_kernelILi1EdEvPT0_S1_S1_x",
        1,
        (256, 1, 1),
        (1, 2, 3, 1000),
        (24, 8016, 8016, None),
    )
    (wider,) = _counted({}, TEMPLATE, [double]).values()
    assert wider.bytes == 8 * (1002 + 3 + 1000) and wider.precision == "fp64"
    # an instance whose arguments are not read (a nested name) gets no count
    nested = replace(launch, kernel="_ZN2ns14stencil_kernelILi4EfEEvPT0_S2_S2_x")
    assert _counted({}, TEMPLATE, [nested]) == {}


def test_a_kernel_whose_launches_were_not_all_recorded_gets_no_count() -> None:
    """The runtime keeps the first 256 distinct sets of values a kernel's launches pass: a
    wavefront's diagonals grow and shrink, so the first ones' mean is not the launches'
    (PolyBench seidel-2d's read 0.01% of the bandwidth by its first 32). Counted only
    where every timed launch's values are in the record."""
    recorded = [_launch(2, 1000), _launch(1, 4000)]
    assert "scale_kernel" in _counted({}, SIZED_AT_RUN_TIME, recorded)
    for timed in ([(SCALE, 4, 1e-3)], [], [("_Z5otherPf", 3, 1e-3)]):
        assert roofline.with_launches({}, SIZED_AT_RUN_TIME, recorded, timed) == {}


def test_a_report_with_more_sets_than_the_runtime_keeps_gets_no_count() -> None:
    """The report is the candidate's own output: a kernel with more distinct sets than
    the runtime keeps (256) is not counted from them, however many launches they cover."""
    sets = [_launch(1, 1000 + k) for k in range(roofline.MOST_SETS + 1)]
    assert _counted({}, SIZED_AT_RUN_TIME, sets) == {}
    assert "scale_kernel" in _counted({}, SIZED_AT_RUN_TIME, sets[: roofline.MOST_SETS])
