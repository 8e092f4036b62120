"""The schedule-based mapping: golden outputs (a missing golden fails; --update-golden
writes them for review), nvcc compiles each, the serial emulator runs each with its
threads forward and reversed and must print what gcc's build prints, and the lines that
prove each mapping are checked."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from emulation import SERIAL_HEADER, gcc_output, run_emulated
from pattern_golden import nvcc_errors
from transforms_support import GOLDEN, analysed

from cudaify.backend.compare import compare
from cudaify.core import Variant
from cudaify.frontend.facts import Program
from cudaify.transforms import get
from cudaify.transforms.base import Context
from cudaify.transforms.schedule import mapping_report

FOLDER = GOLDEN / "schedule"
CASES = sorted(p.stem for p in FOLDER.glob("*.c"))
SCHEDULE = get("schedule")


def mapped(program: Program) -> Variant:
    outcome = SCHEDULE.apply_rule(Variant(program.source), Context(program))
    assert outcome.variant is not None, outcome.reason
    return outcome.variant


@pytest.fixture(scope="module")
def outputs() -> dict[str, str]:
    return {case: mapped(analysed(FOLDER / f"{case}.c")).code for case in CASES}


def test_there_are_golden_cases() -> None:
    assert len(CASES) >= 6


@pytest.mark.parametrize("case", CASES)
def test_golden_output_is_stable_and_compiles(
    case: str, outputs: dict[str, str], update_golden: bool, tmp_path: Path
) -> None:
    expected = FOLDER / f"{case}.cu"
    if update_golden:
        expected.write_text(outputs[case])
    assert expected.exists(), f"{expected.name} is missing: run pytest --update-golden"
    assert outputs[case] == expected.read_text(), f"rerun with --update-golden to accept {case}.cu"
    assert nvcc_errors(outputs[case], tmp_path) == ""


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reversed"])
def test_emulated_output_is_gccs(
    case: str, reverse: bool, outputs: dict[str, str], tmp_path: Path
) -> None:
    expected = gcc_output(FOLDER / f"{case}.c", tmp_path)
    done = run_emulated(outputs[case], tmp_path, header=SERIAL_HEADER, reverse=reverse)
    assert done.ok, done.errors()
    assert compare(expected, done.text()) is None


ROWS = [case for case in CASES if "cudaify_rows(" in (FOLDER / f"{case}.cu").read_text()]


def test_multi_dimensional_grids_cap_their_rows() -> None:
    assert {"gemm", "jacobi_time", "strided"} <= set(ROWS)


@pytest.mark.parametrize("case", ROWS)
def test_a_grid_one_row_high_still_covers_every_iteration(
    case: str, outputs: dict[str, str], tmp_path: Path
) -> None:
    """With the runtime's thread cap at 1 every grid dimension gets one block, so the
    grid-stride loops, not the grid, reach every iteration."""
    expected = gcc_output(FOLDER / f"{case}.c", tmp_path)
    done = run_emulated(
        outputs[case], tmp_path, header=SERIAL_HEADER, flags=("-DCUDAIFY_GRID_THREADS=1",)
    )
    assert done.ok, done.errors()
    assert compare(expected, done.text()) is None


def kernels(code: str) -> list[str]:
    return re.findall(r"__global__ void (\w+)\(", code)


def launches(code: str) -> list[str]:
    return re.findall(r"(\w+)<<<", code)


def body_of(code: str, kernel: str) -> str:
    start = code.index(f"__global__ void {kernel}(")
    return code[start : code.index("\n}\n", start)]


def test_gemm_maps_i_and_j_to_the_grid_and_keeps_k_in_the_thread(
    outputs: dict[str, str],
) -> None:
    code = outputs["gemm"]
    gemm_kernels = [k for k in kernels(code) if k.startswith("gemm")]
    assert len(gemm_kernels) == 1
    body = body_of(code, gemm_kernels[0])
    assert "threadIdx.x" in body and "threadIdx.y" in body
    assert re.search(r"const int j = \(int\)\(lo_j\w* \+ t_j\w*\);", body)  # j on x
    assert "for (int k = 0; (k < nk); k += 1)" in body
    assert "C[i][j] += alpha * A[i][k] * B[k][j];" in body


def test_a_time_loop_stays_on_the_host_with_the_data_on_the_device(
    outputs: dict[str, str],
) -> None:
    code = outputs["jacobi_time"]
    function = code[code.index("static void jacobi(") :]
    function = function[: function.index("\nint main")]
    host_loop = re.search(r"for \(long long (\w+) = 0; \(\1 < tsteps\); \1 \+= 1\) \{", function)
    assert host_loop, function
    inside = function[host_loop.end() :]
    assert len(launches(inside)) == 2
    # every array goes over once each way, outside the time loop
    assert function.count("cudaMemcpyHostToDevice") == 2
    assert function.count("cudaMemcpyDeviceToHost") == 2
    assert function.index("cudaMemcpyHostToDevice") < host_loop.start()


def test_work_in_main_gets_kernels_and_the_sum_adds_atomically(outputs: dict[str, str]) -> None:
    code = outputs["main_sum"]
    main_kernels = [k for k in kernels(code) if k.startswith("main_kernel")]
    assert main_kernels
    assert any("atomicAdd((double *)&((*d_sum))" in body_of(code, k) for k in main_kernels)
    main = code[code.index("int main(void)") :]
    assert main.index("double a = 2.5;") < main.index("cudaify_malloc")
    assert "CUDAIFY_CHECK(cudaMemcpy(&sum, d_sum, sizeof(double), cudaMemcpyDeviceToHost));" in main


def test_csr_extents_come_from_an_inspector_over_the_rows(outputs: dict[str, str]) -> None:
    code = outputs["spmv_csr"]
    assert "for (int i = 0; i < n; i += 1) {" in code
    assert "(long long)(row_ptr[i]) + 0, hi_reach = (long long)(row_ptr[i + 1]) + 0;" in code
    assert "cudaify_malloc((void **)&d_val, (size_t)(end_val - first_val) * sizeof(double))" in code
    (kernel,) = [k for k in kernels(code) if k.startswith("spmv")]
    assert "for (int k = row_ptr[i]; k < row_ptr[i + 1]; k++)" in body_of(code, kernel)


def test_reused_temporaries_live_in_each_threads_registers(outputs: dict[str, str]) -> None:
    code = outputs["temporaries"]
    own = [k for k in kernels(code) if k.startswith("sums")]
    assert len(own) == 2
    for kernel in own:
        body = body_of(code, kernel)
        assert re.search(r"\n\s+double t;\n", body), body
        assert "d_t" not in body


def test_a_forward_substitution_updates_the_remaining_rows_in_parallel(
    outputs: dict[str, str],
) -> None:
    """isl turns the row-by-row solve around: for each column j on the host, x[j] is
    final, then every later x[i] subtracts L[i][j] * x[j] at once."""
    code = outputs["trisolv"]
    bodies = [body_of(code, k) for k in kernels(code) if k.startswith("trisolv")]
    assert any(re.search(r"x\[i\] -= L\[i\]\[\(h\w*\)\] \* x\[\(h\w*\)\];", b) for b in bodies)
    function = code[code.index("static void trisolv(") : code.index("\nint main")]
    loop = re.search(r"for \(long long (\w+) = 0; \(\1 < n\); \1 \+= 1\) \{", function)
    assert loop and len(launches(function[loop.end() :])) == 2


def test_refusals_say_where_and_why() -> None:
    import os
    import tempfile

    from cudaify.frontend.analyze import analyze

    code = """
double dot(int n, const double *a, const double *b)
{
    double s = 0.0;
    for (int i = 0; i < n; i++)
        s = s * 0.5 + a[i] * b[i];
    return s;
}
"""
    with tempfile.NamedTemporaryFile("w", suffix=".c", delete=False) as handle:
        handle.write(code)
    try:
        program = analyze(handle.name)
    finally:
        os.unlink(handle.name)
    outcome = SCHEDULE.apply_rule(Variant(program.source), Context(program))
    assert outcome.variant is None
    assert f"{handle.name}:5:5: region in 'dot' not mapped" in outcome.reason
    assert "every one carries a dependence" in outcome.reason
    assert mapping_report(program) == [outcome.reason]


def test_the_check_refuses_a_decoy_without_a_launched_kernel() -> None:
    program = analysed(FOLDER / "gemm.c")
    decoy = Variant(
        program.source.replace("int main(void)", "__global__ void k() {}\nint main(void)")
    )
    problems = SCHEDULE.check(Variant(program.source), decoy, Context(program))
    assert [p.message for p in problems] == [
        "the new kernel 'k' is never launched from host code the program runs"
    ]


RESIDENT = GOLDEN / "schedule_residency" / "init_compute_print.c"


@pytest.fixture(scope="module")
def resident() -> str:
    program = analysed(RESIDENT)
    outcome = get("data_residency").apply_rule(mapped(program), Context(program))
    assert outcome.variant is not None, outcome.reason
    return outcome.variant.code


def test_residency_after_schedule_is_stable_compiles_and_prints_what_gcc_does(
    resident: str, update_golden: bool, tmp_path: Path
) -> None:
    expected = RESIDENT.with_suffix(".cu")
    if update_golden:
        expected.write_text(resident)
    assert expected.exists(), f"{expected.name} is missing: run pytest --update-golden"
    assert resident == expected.read_text(), "rerun with --update-golden to accept it"
    assert nvcc_errors(resident, tmp_path) == ""
    reference = gcc_output(RESIDENT, tmp_path)
    for reverse in (False, True):
        done = run_emulated(resident, tmp_path, header=SERIAL_HEADER, reverse=reverse)
        assert done.ok, done.errors()
        assert compare(reference, done.text()) is None


def test_arrays_an_initialisation_writes_stay_on_the_device_for_the_next_call(
    resident: str,
) -> None:
    main = resident[resident.index("int main(void)") :]
    begin, end = main.index("cudaify_scope_begin();"), main.index("cudaify_scope_end();")
    assert begin < main.index("init_array(M, N, *A, *x);") < main.index("kernel_atax(") < end
    assert end < main.index("free(A);")
    # nothing reads the arrays after the calls: their copies back are dropped
    discarded = main[begin:end]
    for name in ("A", "x", "y", "tmp"):
        assert f"cudaify_discard({name});" in discarded
    init = resident[resident.index("void init_array(") : resident.index("void kernel_atax(")]
    # every element of A and x is written first: copied in only if the sizes fell short
    assert (
        "cudaify_map(A, (size_t)(9900) * sizeof(double), (!(((n >= 110) && (m >= 90)))), 1)" in init
    )
    atax = resident[resident.index("void kernel_atax(") : resident.index("void print_array(")]
    assert "cudaify_map(A, (size_t)(9900) * sizeof(double), 1, 0)" in atax
    assert "cudaMemcpy" not in init + atax


def _sum_kernel(code: str) -> str:
    (kernel,) = [k for k in kernels(code) if "partial +=" in body_of(code, k)]
    return body_of(code, kernel)


def test_a_sum_into_one_target_adds_once_per_warp(outputs: dict[str, str]) -> None:
    body = _sum_kernel(outputs["main_sum"])
    loop = body[body.index("for (long long t_i") : body.index("\n    }\n")]
    assert "partial += (double)((y[i])); added = true;" in loop
    assert "atomicAdd" not in loop  # the instances add into the thread's register
    after = body[body.index("\n    }\n") :]
    assert "__shfl_xor_sync(partial_active, partial, offset)" in after
    assert after.count("atomicAdd((double *)&((*d_sum)), partial);") == 2  # warp, lone thread
    launch = next(line for line in outputs["main_sum"].splitlines() if "main_kernel_3<<<" in line)
    assert "cudaify_blocks(trips_i_2, 256, 1024u)" in launch


def test_the_warp_sums_print_what_gcc_prints_with_real_shuffles(
    outputs: dict[str, str], tmp_path: Path
) -> None:
    """The threaded emulator exchanges values between the lanes of a warp (the serial one
    runs each thread alone, as a warp of one active lane, so it takes the other branch)."""
    header = Path(__file__).resolve().parent / "warp_emulation.h"
    code = outputs["main_sum"]
    done = run_emulated(code, tmp_path, timeout=600, flags=("-include", str(header)))
    assert done.ok, done.errors()
    assert compare(gcc_output(FOLDER / "main_sum.c", tmp_path), done.text()) is None


def test_min_and_max_updates_run_in_parallel_with_one_atomic_per_warp(
    outputs: dict[str, str],
) -> None:
    """extremes.c keeps a sum, a float maximum (if form), a double minimum (fmin) and an
    int maximum (conditional form): four grid kernels, none serial, each combining in a
    register and updating its scalar once per warp (an integer by atomicMax, a float or a
    double by compare-and-swap on its bits)."""
    code = outputs["extremes"]
    assert "<<<1, 1>>>" not in code
    stats = [k for k in kernels(code) if k.startswith("stats")]
    assert len(stats) == 4
    bodies = {k: body_of(code, k) for k in stats}
    peak = next(b for b in bodies.values() if "d_p" in b)
    loop = peak[peak.index("for (long long") : peak.index("\n    }\n")]
    assert "atomic" not in loop
    assert "partial_3_value > partial_3 : partial_3_value == partial_3_value" in loop
    assert "atomicCAS((unsigned int *)" in peak and "__float_as_uint" in peak
    low = next(b for b in bodies.values() if "d_m" in b)
    assert "partial_2_value < partial_2" in low and "__double_as_longlong" in low
    widest = next(b for b in bodies.values() if "d_w" in b)
    assert widest.count("atomicMax((int *)&((*d_w)), partial_4);") == 2


def test_min_and_max_warps_print_what_gcc_prints_with_real_shuffles(
    outputs: dict[str, str], tmp_path: Path
) -> None:
    header = Path(__file__).resolve().parent / "warp_emulation.h"
    done = run_emulated(outputs["extremes"], tmp_path, timeout=600, flags=("-include", str(header)))
    assert done.ok, done.errors()
    assert compare(gcc_output(FOLDER / "extremes.c", tmp_path), done.text()) is None


@pytest.mark.parametrize(
    "update",
    [
        "if (x[i] > m) m = x[i] + 1.0;",  # keeps something else than the value compared
        "if (x[i] > m) { m = x[i]; k = i; }",  # an argmax: the index goes with it
        "if (x[i] > m) m = x[i]; else m = m - 1.0;",  # an else branch
        "m = x[i] > m ? x[i] : m * 0.5;",  # the other arm is not the target
    ],
)
def test_what_is_no_min_or_max_update_stays_in_one_thread(update: str, program_of) -> None:
    """Each update below is not `m = extreme(m, v)` (or it is one the runtime could not
    reproduce with an atomic): its loop stays sequential, in one thread."""
    program = program_of(
        "#include <stdio.h>\n#define N 4096\ndouble x[N];\n"
        "int main(void) {\n"
        "    for (int i = 0; i < N; i++) x[i] = (i * 37) % 101;\n"
        "    double m = -1.0; int k = 0;\n"
        f"    for (int i = 0; i < N; i++) {{ {update} }}\n"
        '    printf("%f %d\\n", m, k);\n    return 0;\n}\n'
    )
    code = mapped(program).code
    assert "partial" not in code and "atomic" not in code.split("cudaify runtime helpers")[-1]


@pytest.mark.gpu
@pytest.mark.parametrize("case", [*CASES, "residency"])
def test_golden_runs_on_the_gpu_and_prints_what_gcc_does(case: str, tmp_path: Path) -> None:
    from pattern_golden import same_output_as_gcc

    source = RESIDENT if case == "residency" else FOLDER / f"{case}.c"
    same_output_as_gcc(source, source.with_suffix(".cu"), tmp_path)


def test_a_strided_loops_launch_and_copies_are_empty_where_the_loop_is(
    outputs: dict[str, str], tmp_path: Path
) -> None:
    """isl prints the last value of `for (i = 1; i < n; i += 3)` for the n where the loop
    runs (n >= 2): `n - 1 - (n - 2) % 3`, whose % is a floor's only there. For n = 1 or 0
    that text gives one element and one trip (a copy past the array, a kernel reading
    element 0 of an empty buffer: an illegal address on the GPU); guarded, none. The
    generated sizes, built by gcc, against the loop's own counts for n from -3 to 12."""
    from cudaify.core import toolchain

    function = outputs["strided"].split("void scale_every_third(int n, double *v)")[1]
    function = function.split("\n}\n")[0]
    trips = re.search(r"const long long trips_i = (.*);", function)
    copied = re.search(
        r"cudaMemcpy\(d_v, v \+ \(1\), \(size_t\)(.*) \* sizeof\(double\), cudaM", function
    )
    assert trips is not None and copied is not None
    program = tmp_path / "sizes.c"
    program.write_text(
        "#include <stdio.h>\nint main(void) {\n"
        "    for (int n = -3; n <= 12; n++) {\n"
        "        const long long lo_i = 1;\n"
        f"        const long long trips_i = {trips[1]};\n"
        f'        printf("%d %lld %lld\\n", n, trips_i, (long long){copied[1]});\n'
        "    }\n    return 0;\n}\n"
    )
    binary = tmp_path / "sizes"
    built = toolchain.run([toolchain.find_tool("gcc"), str(program), "-o", str(binary)])
    assert built.ok, built.errors()
    for line in toolchain.run([str(binary)]).text().splitlines():
        n, runs, elements = (int(word) for word in line.split())
        values = range(1, n, 3)
        assert runs == len(values), line
        assert elements == (values[-1] if values else 0), line  # v[1] .. v[last]
