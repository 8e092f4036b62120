from __future__ import annotations

import re
from pathlib import Path

import pytest
from pattern_golden import applied, gpu_output_problem, matches_golden
from transforms_support import GOLDEN, analysed

from cudaify.backend.compare import compare
from cudaify.transforms import get
from cudaify.transforms.base import Context
from cudaify.transforms.segmented import plan_kernels, segmented_problems

SEGMENTED = get("segmented")
ROWS = GOLDEN / "segmented" / "rows.cpp"
SCHEDULED = GOLDEN / "segmented" / "scheduled_rows.c"
WARPS = Path(__file__).resolve().parent / "warp_emulation.h"
BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _emulated_problem(
    code: str, tmp_path: Path, source: Path = ROWS, flags: tuple[str, ...] = ()
) -> str | None:
    """`code` on the CPU emulator with real warp shuffles and __syncwarp, against g++."""
    from emulation import gcc_output, run_emulated

    code = re.sub(r"#include <cuda/std/\w+>\n", "", code)
    ran = run_emulated(code, tmp_path, timeout=600, flags=("-include", str(WARPS), *flags))
    assert ran.ok, ran.errors()
    return compare(gcc_output(source, tmp_path, flags=flags), ran.text())


def test_golden_output_is_stable_and_compiles(update_golden: bool, tmp_path) -> None:
    matches_golden(ROWS, "segmented", update_golden, tmp_path, after=("offload",))


def test_each_kernel_with_inner_reductions_gets_a_warp_per_iteration() -> None:
    program = analysed(ROWS)
    offloaded = applied(program, "offload")
    outcome = SEGMENTED.apply_rule(offloaded, Context(program))
    assert outcome.variant is not None
    assert outcome.variant.steps[-1].detail.split("; ") == [
        "segment_sums_kernel: one warp per 's' of segment_sums() (line 11), its lanes sharing "
        "loop 'j' (line 13) combining acc (+)",
        "normalise_rows_kernel: one warp per 'r' of normalise_rows() (line 21), its lanes "
        "sharing loop 'c' (line 23) combining top (max), 'c' (line 27)",
        "choices_kernel: one warp per 'r' of choices() (line 35), its lanes sharing loop 'c' "
        "(line 37) combining best (argmax), 'c' (line 44) combining low (argmin)",
        "even_bits_kernel: one warp per 'r' of even_bits() (line 57), its lanes sharing loop "
        "'c' (line 59) combining mask (|)",
        "row_prefix_kernel: one warp per 'r' of row_prefix() (line 94), its lanes sharing loop "
        "'c' (line 96) scanning run (+, inclusive)",
        "row_xor_before_kernel: one warp per 'r' of row_xor_before() (line 107), its lanes "
        "sharing loop 'c' (line 109) scanning seen (^, exclusive)",
        "row_doubled_kernel: one warp per 'r' of row_doubled() (line 118), its lanes sharing "
        "loop 'c' (line 120) scanning run (+, inclusive)",
    ]
    code = outcome.variant.code
    # the grid counts warps: 8 iterations per block of 256 threads
    assert code.count("const dim3 grid(cudaify_blocks(trips_r, 8, 2147483647u));") == 6
    assert "t_s += (long long)blockDim.x * gridDim.x / 32) {" in code
    # each lane starts its copy at the identity; the value before the loop joins after
    assert "double acc = cudaify_plus::identity<double>();" in code
    assert "acc = cudaify_plus()(acc, cudaify_lanes_acc);" in code
    # the step of 2 and the inclusive bound are kept
    assert "unsigned int c = " not in code
    assert "int c = (int)(cudaify_first_c + cudaify_t_c * 2);" in code
    assert "if (!(c <= cols - 1))" in code
    # argmin with <=: the later of equal values wins against the value before the loop
    assert "if (cudaify_lanes_at_low >= 0 && cudaify_lanes_low <= low) {" in code
    # a scan: the term in range (the identity past the bound), each lane's prefix, the
    # running value its iteration stores, the tile's total carried on
    assert "double cudaify_term_run = cudaify_plus::identity<double>();" in code
    assert "cudaify_value_run = cudaify_plus()(run, cudaify_prefix_run);" in code
    assert "run = cudaify_plus()(run, cudaify_shfl_from(cudaify_prefix_run, 31));" in code
    # exclusive: lane 0 stores the value before the tile, lane l the prefix of lane l - 1;
    # every lane takes part in the shuffle (a lane left out would hang the warp)
    assert (
        "cudaify_before_seen = cudaify_shfl_from(cudaify_prefix_seen, (cudaify_lane + 31) % 32);"
    ) in code
    assert (
        "cudaify_value_seen = cudaify_lane == 0 ? seen : cudaify_bit_xor()(seen, "
        "cudaify_before_seen);"
    ) in code
    # memory is written by lane 0, then the warp meets
    assert "if (cudaify_lane == 0)\n            sums[s] = acc;\n        __syncwarp();" in code


def test_refusals_name_the_source_loop_and_the_reason() -> None:
    program = analysed(ROWS)
    _, reasons = plan_kernels(applied(program, "offload").code, program)
    assert reasons == [
        f"{ROWS}:68: segmented: kernel 'decay_kernel': loop 'c' (line 70) is sequential: "
        "scalar run is written in one iteration of c and used in another (not a recognised "
        "reduction)",
        f"{ROWS}:81: segmented: kernel 'weighted_kernel': every lane would run "
        "`const double w = weight(r);`, and 'weight' may have effects",
        f"{ROWS}:130: segmented: kernel 'row_twice_kernel': scan loop 'c' (line 132): its body "
        "is not local declarations, then `acc += term;` and `out[...] = f(acc);` in either order",
    ]


def test_a_kernel_it_cannot_relaunch_is_refused_in_planning_not_emission() -> None:
    """A kernel no launch reaches (a model's answer may leave one) is a refusal with its
    reason; the other kernels are still rewritten."""
    program = analysed(ROWS)
    offloaded = applied(program, "offload")
    unlaunched = re.sub(r"segment_sums_kernel<<<[^\n]*\n", "", offloaded.code)
    plans, reasons = plan_kernels(unlaunched, program)
    assert (
        f"{ROWS}:11: segmented: kernel 'segment_sums_kernel': kernel 'segment_sums_kernel' is "
        "never launched"
    ) in reasons
    assert "segment_sums_kernel" not in [plan.kernel.name for plan in plans]
    outcome = SEGMENTED.apply_rule(offloaded.then("edit", unlaunched, "slm"), Context(program))
    assert outcome.variant is not None
    assert "segment_sums_kernel:" not in outcome.variant.steps[-1].detail


def test_on_the_host_program_it_says_what_it_needs() -> None:
    program = analysed(ROWS)
    from cudaify.core import Variant

    assert SEGMENTED.applies(Variant(program.source), Context(program)) == (
        "no 1-D kernel of offload's shape"
    )


def test_emulated_on_the_cpu_prints_what_gpp_prints(tmp_path) -> None:
    """Every thread of a block on a CPU thread, shuffles and __syncwarp real: empty and long
    segments, ties for argmax and argmin, the step of 2, rows of 45 values scanned 32 at a
    time (inclusive, exclusive)."""
    code = applied(analysed(ROWS), "offload", "segmented").code
    assert _emulated_problem(code, tmp_path) is None


def test_without_the_lanes_combination_the_output_differs(tmp_path) -> None:
    """The combination is what makes it right: lanes that keep their own sums print
    another total, so the emulated test above can fail."""
    code = applied(analysed(ROWS), "offload", "segmented").code
    broken = code.replace(
        "cudaify_lanes_acc = cudaify_warp_allreduce(acc, cudaify_plus());",
        "cudaify_lanes_acc = acc;",
    )
    assert broken != code
    assert _emulated_problem(broken, tmp_path) is not None


def test_without_the_scan_s_carry_the_output_differs(tmp_path) -> None:
    """Each tile starts from the total of the tiles before it: without that carry the rows
    longer than 32 values print other prefixes."""
    code = applied(analysed(ROWS), "offload", "segmented").code
    broken = code.replace(
        "run = cudaify_plus()(run, cudaify_shfl_from(cudaify_prefix_run, 31));", ""
    )
    assert broken != code
    assert _emulated_problem(broken, tmp_path) is not None


def test_the_suite_s_segmented_scan_emulated_prints_what_gpp_prints(tmp_path) -> None:
    """row_cumsum (BENCH_SMALL): a scan, then a count over the scanned row, in one warp."""
    source = BENCHMARKS / "cpp" / "row_cumsum.cpp"
    program = analysed(source)
    variant = applied(program, "offload", "segmented")
    assert "scanning running (+, inclusive)" in variant.steps[-1].detail
    assert _emulated_problem(variant.code, tmp_path, source, ("-DBENCH_SMALL",)) is None


def test_data_residency_follows_and_the_output_is_the_same(tmp_path) -> None:
    """A time loop calls the segmented kernel: data_residency maps its arrays once."""
    source = BENCHMARKS / "cpp" / "segment_sums.cpp"
    program = analysed(source)
    segmented = applied(program, "offload", "segmented")
    resident = get("data_residency").apply_rule(segmented, Context(program)).variant
    assert resident is not None
    assert "segment_sums_kernel<<<grid, block>>>(d_offsets, d_values" in resident.code
    assert "(double *)cudaify_map(values.data()" in resident.code
    assert segmented_problems(resident.code) == []
    small = ("-DBENCH_SMALL",)
    assert _emulated_problem(resident.code, tmp_path, source, small) is None


def test_the_postcondition_refuses_decoys() -> None:
    program = analysed(ROWS)
    offloaded = applied(program, "offload").code
    after = applied(program, "offload", "segmented").code
    assert segmented_problems(after) == []
    message = (
        "no launched kernel whose grid-stride loop gives each iteration a warp and whose inner "
        "loops its lanes share"
    )
    # offload's kernels: one thread per iteration
    assert [p.message for p in segmented_problems(offloaded)] == [message]
    # the input plus comments that name the pieces
    commented = offloaded + "\n/* t += (long long)blockDim.x * gridDim.x / 32; j += 32 */\n"
    assert [p.message for p in segmented_problems(commented)] == [message]
    # the kernels defined but never launched
    unlaunched = re.sub(r"\w+_kernel<<<[^\n]*\n", "", after)
    assert [p.message for p in segmented_problems(unlaunched)] == [message]
    # a warp per iteration, but the lanes never share an inner loop
    unshared = re.sub(r"(cudaify_(?:t|tile)_\w+) \+= 32", r"\1 += 1", after)
    assert [p.message for p in segmented_problems(unshared)] == [message]


def test_the_postcondition_refuses_rows_decoys() -> None:
    """The rows layout: turns of 32 iterations per block, a loop the rows share, and the
    barrier where their results meet; without the barrier, or a turn per thread, refused."""
    program = analysed(SCHEDULED)
    scheduled = applied(program, "schedule")
    after = SEGMENTED.apply_rule(scheduled, Context(program)).variant
    assert after is not None
    # keep only the rows-layout kernels' launches: the warp kernels are not launched
    plans, _ = plan_kernels(scheduled.code, program)
    lanes = [plan.kernel.name for plan in plans if plan.layout == "lanes"]
    assert len(lanes) == 4
    rows_only = after.code
    for name in lanes:
        rows_only = re.sub(rf"{name}<<<[^\n]*\n", "", rows_only)
    assert segmented_problems(rows_only) == []
    message = (
        "no launched kernel whose grid-stride loop gives each iteration a warp and whose inner "
        "loops its lanes share"
    )
    no_barrier = rows_only.replace("__syncthreads();", "")
    assert [p.message for p in segmented_problems(no_barrier)] == [message]
    per_thread = rows_only.replace("cudaify_base += (long long)32 * gridDim.x", "cudaify_base += 1")
    assert [p.message for p in segmented_problems(per_thread)] == [message]


def test_scheduled_golden_output_is_stable_and_compiles(update_golden: bool, tmp_path) -> None:
    matches_golden(SCHEDULED, "segmented", update_golden, tmp_path, after=("schedule",))


def test_scheduled_kernels_share_their_accumulations_read_from_the_text() -> None:
    """schedule's kernels name no analysed loop: an inner loop whose body is one
    accumulation into a kernel scalar or into an element the loop never moves is shared,
    by a warp's lanes where it reads along a row, by a block's rows where the iterations
    side by side read a row together (a column sum); a body that also resets the element,
    and a loop that reads every other column, are left as they were."""
    program = analysed(SCHEDULED)
    scheduled = applied(program, "schedule")
    plans, reasons = plan_kernels(scheduled.code, program)
    assert [(plan.kernel.name, plan.layout) for plan in plans] == [
        ("kernels_kernel", "rows"),
        ("kernels_kernel_2", "lanes"),
        ("kernels_kernel_3", "rows"),
        ("kernels_kernel_4", "lanes"),
        ("kernels_kernel_5", "lanes"),
        ("kernels_kernel_8", "rows"),
        ("kernels_kernel_9", "rows"),
        ("kernels_kernel_10", "lanes"),
    ]
    assert reasons == [
        "segmented: kernel 'init_kernel': its loop body has no inner loop for the lanes to share",
        "segmented: kernel 'init_kernel_2': it maps two loops (a warp per iteration needs a 1-D "
        "kernel)",
        "segmented: kernel 'kernels_kernel_6': loop 'j': the reset of `fused[i]` is not before "
        "its accumulation",
        "segmented: kernel 'kernels_kernel_7': loop 'i': the lanes would read `A[i][2*j]` rows "
        "apart, not side by side; a block's rows: loop 'i': the iterations side by side would "
        "read `A[i][2*j]` apart",
    ]
    outcome = SEGMENTED.apply_rule(scheduled, Context(program))
    assert outcome.variant is not None
    assert outcome.variant.steps[-1].detail.split("; ") == [
        "kernels_kernel: 32 side-by-side 'j' per block of kernels(), its 32 rows sharing loop "
        "'i' combining csum[j] (+)",
        "kernels_kernel_2: one warp per 'i' of kernels(), its lanes sharing loop 'j' combining "
        "prod[i] (*)",
        "kernels_kernel_3: 32 side-by-side 'j' per block of kernels(), its 32 rows sharing loop "
        "'c0' combining m (+), 'c0' combining v (+)",
        "kernels_kernel_4: one warp per 'i' of kernels(), its lanes sharing loop 'j' combining "
        "d (+)",
        "kernels_kernel_5: one warp per 'i' of kernels(), its lanes sharing loop 'c0_2' "
        "combining rsq[i] (+), rsum[i] (+)",
        "kernels_kernel_8: 32 side-by-side 'j' per block of kernels(), its 32 rows sharing loop "
        "'i' combining cabs[j] (+)",
        "kernels_kernel_9: 32 side-by-side 'j' per block of kernels(), its 32 rows sharing loop "
        "'i' combining colsum[j] (+)",
        "kernels_kernel_10: one warp per 'i' of kernels(), its lanes sharing loop 'j' combining "
        "y[i] (+)",
    ]
    code = outcome.variant.code
    # the element: a register per lane from the identity, lane 0 adds the warp's total
    assert "double cudaify_acc_y = cudaify_plus::identity<double>();" in code
    assert "cudaify_acc_y = cudaify_acc_y + A[i][j] * x[j];" in code
    assert (
        "if (cudaify_lane == 0)\n                y[i] = cudaify_plus()(y[i], cudaify_lanes_y);"
    ) in code
    # `d -= term` on the lanes' copies from 0, the warp's sum joins the value before
    assert "d -= A[i][j] * 0.5;" in code
    assert "d = cudaify_plus()(d, cudaify_lanes_d);" in code
    assert "cudaify_acc_prod *= 1.0 + A[i][j] / 64.0;" in code
    # two sums in one loop, the reset isl fused into it run first, where the loop runs
    assert (
        "if (cudaify_lane == 0 && (0) <= (69))\n            rsum[i] = 0.0;\n        __syncwarp();"
    ) in code
    assert "cudaify_acc_rsum = A[i][(c0_2)] * x[(c0_2)] + cudaify_acc_rsum;" in code
    # the rows: every thread of the block runs every turn (the barriers), a thread past
    # the end runs no shared loop and writes nothing; the rows' results meet in shared
    # memory and are added in row order
    assert "const bool cudaify_in = t_j_7 < trips_j_7;" in code
    assert "if (cudaify_in)\n                    for (long long cudaify_t_i = cudaify_row;;" in code
    assert "__shared__ double cudaify_rows_colsum[32][32];" in code
    # 1024 threads a block: the rows kernels (4 of them) say so to the compiler
    assert code.count("__global__ void __launch_bounds__(1024) kernels_kernel") == 4
    assert "cudaify_rows_colsum[cudaify_row][threadIdx.x] = cudaify_acc_colsum;" in code
    assert (
        "if (cudaify_in && cudaify_row == 0)\n                colsum[j] = cudaify_plus()"
        "(colsum[j], cudaify_lanes_colsum);"
    ) in code
    assert (
        "kernels_kernel_9<<<dim3(cudaify_blocks(trips_j_7, 32, 2147483647u)), dim3(32, 32)>>>"
        in (code)
    )


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("y[i] = y[i] + A[i][j] * y[j];", "the term reads 'y', which the loop accumulates into"),
        ("y[i] = A[i][j] - y[i];", "`y[i] = ...` is not `y[i] - term`"),
        ("y[j] = y[j] + A[i][j];", "the element `y[j]` moves with the loop or reads memory"),
        ("y[i] = y[i] + bump(A[i][j]);", "the term writes memory or calls a function"),
        ("y[i] = y[i] + A[i][2 * j];", "the lanes would read `A[i][2*j]` rows apart"),
        ("y[i] /= A[i][j];", "`/=` does not accumulate"),
        ("y[i] += A[i][j]; y[i] += x[j];", "`y[i]` accumulates twice"),
        ("y[i] += A[i][j]; if (j == 0) y[i] = 0.0;", "the reset of `y[i]` is not before"),
        ("if (j == 1) y[i] = 0.0; y[i] += A[i][j];", "`if (j == 1) y[i] = 0.0;` is not a first"),
        ("x[i] += A[i][j]; y[i] += x[i] * A[i][j];", "the term reads 'x', which the loop"),
    ],
)
def test_an_accumulation_it_cannot_share_is_refused(body: str, reason: str) -> None:
    import cudaify.transforms.kernel_nest as kn
    from cudaify.transforms import csource as cs
    from cudaify.transforms.segmented import _accumulation

    code = (
        "__device__ double bump(double v);\n"
        "__global__ void k(double *y, double *x, double (*A)[64], int n, long long lo, "
        "long long trips)\n"
        "{\n"
        "    for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < trips; "
        "t += (long long)blockDim.x * gridDim.x) {\n"
        "        const int i = (int)(lo + t);\n"
        f"        for (int j = 0; (j < n); j += 1) {{\n            {body}\n        }}\n"
        "    }\n"
        "}\n"
    )
    source = code.encode()
    tree = cs.parse(source)
    kernel = kn.read_kernel(kn.kernels(tree, source)[0], tree, source)
    loop = next(n for n in kernel.cols.statements if n.type == "for_statement")
    with pytest.raises(kn.Refuse) as refused:
        _accumulation(loop, kernel, set(), "lanes")
    assert reason in str(refused.value)


def test_scheduled_emulated_on_the_cpu_prints_what_gcc_prints(tmp_path) -> None:
    code = applied(analysed(SCHEDULED), "schedule", "segmented").code
    assert _emulated_problem(code, tmp_path, SCHEDULED) is None


def test_scheduled_without_lane_zero_s_combination_the_output_differs(tmp_path) -> None:
    """Every lane adding its total into the element, not lane 0 alone, adds it 32 times."""
    code = applied(analysed(SCHEDULED), "schedule", "segmented").code
    broken = code.replace(
        "if (cudaify_lane == 0)\n                y[i] = cudaify_plus()",
        "if (cudaify_lane >= 0)\n                y[i] = cudaify_plus()",
    )
    assert broken != code
    assert _emulated_problem(broken, tmp_path, SCHEDULED) is not None


def test_scheduled_rows_without_the_other_rows_results_the_output_differs(tmp_path) -> None:
    """Row 0's own share of a column is not the column's sum: the meeting in shared memory
    is what makes the rows layout right."""
    code = applied(analysed(SCHEDULED), "schedule", "segmented").code
    broken = code.replace("cudaify_r = 1; cudaify_r < 32;", "cudaify_r = 1; cudaify_r < 1;")
    assert broken != code
    assert _emulated_problem(broken, tmp_path, SCHEDULED) is not None


COLUMN_PAIRS = GOLDEN / "segmented" / "column_pairs.cu"


def test_two_sums_and_a_fused_reset_share_a_block_s_rows(tmp_path) -> None:
    """A kernel as schedule writes them (one thread per column, two sums in its loop, one
    reset on the loop's first run as isl fuses it): the rows layout keeps both sums in
    registers, runs the reset before the loop where the loop runs at all, and prints what
    the sequential loops print (the expected output is computed apart), also for a loop
    of no rows, whose reset must not run."""
    from emulation import run_emulated

    from cudaify.core import Variant
    from cudaify.frontend.facts import Program

    code = COLUMN_PAIRS.read_text()
    program = Program(str(COLUMN_PAIRS), code, "c++")
    plans, reasons = plan_kernels(code, program)
    assert reasons == [] and [(p.kernel.name, p.layout) for p in plans] == [
        ("pairs_kernel", "rows")
    ]
    outcome = SEGMENTED.apply_rule(Variant(code), Context(program))
    assert outcome.variant is not None
    rewritten = outcome.variant.code
    assert outcome.variant.steps[-1].detail == (
        "pairs_kernel: 32 side-by-side 'j' per block of run(), its 32 rows sharing "
        "loop 'i' combining sum[j] (+), mag[j] (+)"
    )
    assert (
        "if (cudaify_in && cudaify_row == 0 && (0) < (rows))\n            mag[j] = 0.0;\n"
        "        __syncthreads();"
    ) in rewritten
    assert "cudaify_acc_mag += A[i][j] * A[i][j];" in rewritten
    assert "pairs_kernel<<<dim3(cudaify_blocks(trips_j, 32, 2147483647u)), dim3(32, 32)>>>" in (
        rewritten
    )
    assert segmented_problems(rewritten) == []
    expected = COLUMN_PAIRS.with_suffix(".expected").read_text()
    for text, same in ((rewritten, True), (rewritten.replace("&& (0) < (rows)", ""), False)):
        ran = run_emulated(text, tmp_path, timeout=600, flags=("-include", str(WARPS)))
        assert ran.ok, ran.errors()
        assert (compare(expected, ran.text()) is None) is same


@pytest.mark.gpu
def test_scheduled_on_the_gpu_it_prints_what_gcc_prints(tmp_path) -> None:
    code = applied(analysed(SCHEDULED), "schedule", "segmented").code
    assert gpu_output_problem(code, SCHEDULED, tmp_path) is None


@pytest.mark.gpu
def test_on_the_gpu_it_prints_what_gpp_prints(tmp_path) -> None:
    code = applied(analysed(ROWS), "offload", "segmented").code
    assert gpu_output_problem(code, ROWS, tmp_path) is None
