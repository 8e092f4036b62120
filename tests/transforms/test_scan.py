from __future__ import annotations

import re
from pathlib import Path

import pytest
from pattern_golden import applied, nvcc_errors, same_output_as_gcc
from transforms_support import GOLDEN, analysed

from cudaify.core import Variant
from cudaify.transforms import get
from cudaify.transforms.base import Context
from cudaify.transforms.structure import structural_problems

SCAN = get("scan")


CASES = ["affine", "prefix", "resident"]


@pytest.mark.parametrize("case", CASES)
def test_golden_output_is_stable_and_compiles(case: str, update_golden: bool, tmp_path) -> None:
    program = analysed(GOLDEN / "scan" / f"{case}.c")
    variant = applied(program, "scan")
    expected = GOLDEN / "scan" / f"{case}.cu"
    if update_golden:
        expected.write_text(variant.code)
    assert expected.exists(), f"{expected.name} is missing: rerun with --update-golden to write it"
    assert variant.code == expected.read_text(), f"rerun with --update-golden to accept {case}.cu"
    assert structural_problems(program, variant.code, SCAN) == []
    assert nvcc_errors(variant.code, tmp_path) == ""


def test_a_seeded_scan_adds_with_the_sum_cub_has_a_tuned_policy_for(tmp_path) -> None:
    """CUB scans with its tuned policy only for a sum it knows (libcu++'s plus): with a
    functor of cudaify's own, 2^24 doubles took 99 us a call on an H200, 87 with plus."""
    from cudaify.transforms.scan import CUB_INCLUDE, SUM_HELPER

    code = "\n".join(
        [
            CUB_INCLUDE,
            "#include <type_traits>",
            SUM_HELPER,
            'static_assert(std::is_same<cudaify_sum, ::cuda::std::plus<>>::value, "CUB\'s sum");',
            "long long sum_of(long long a, long long b) { return cudaify_sum()(a, b); }",
        ]
    )
    assert nvcc_errors(code, tmp_path) == ""


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
    # (`start` is taken: offsets() has an array of that name); its terms are the input's
    # elements, of the sums' type, and it stores them as they are: one pass, CUB reading
    # the input and writing the output, seeded with the starting value
    assert "const long long start_2 = running;" in code
    assert (
        "cub::DeviceScan::InclusiveScanInit(storage, storage_bytes, d_in, d_out, cudaify_sum(), "
        "start_2, trips_i)" in code
    )
    assert "cudaMemcpy(&total_2, d_out + (trips_i - 1), sizeof(long long)" in code
    assert "running = total_2;" in code
    assert "running_total_scan_terms" not in code and "running_total_scan_store" not in code
    # computed terms: a terms kernel, then CUB writes the output (no sums, no store kernel)
    weighted = _function(code, "weighted_total")
    assert "weighted_total_scan_terms<<<" in weighted and "_scan_store" not in weighted
    assert "terms_4, d_out_3, cudaify_sum(), start_5, trips_i_4)" in weighted
    # the exclusive form reads the counts where they lie, and stores with its kernel
    assert "InclusiveSum(storage_2, storage_bytes_2, d_count, sums_2, trips_i_2)" in code
    assert "offsets_scan_terms" not in code
    # the exclusive form stores the sum before each term
    assert "(int)(t_i_2 > 0 ? start_3 + sums_2[t_i_2 - 1] : start_3)" in code
    # the recurrence starts from the element before the first one it writes, read from the
    # output's device copy, and seeds the scan that writes the output from out[1] on
    assert (
        "CUDAIFY_CHECK(cudaMemcpy(&start_4, d_out_2 + 1 - 1, sizeof(double), "
        "cudaMemcpyDeviceToHost));" in code
    )
    assert "terms_3, d_out_2 + 1, cudaify_sum(), start_4, trips_i_3)" in code
    assert "cumulative_scan_store" not in code
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


def _function(code: str, name: str) -> str:
    """The definition of host function `name` (its return type is one word)."""
    found = re.search(rf"^\w+ {name}\(", code, re.MULTILINE)
    assert found is not None, name
    function = code[found.start() :]
    return function[: function.index("\n}\n")]


def test_scratch_buffers_only_grow_so_repeated_calls_allocate_them_once() -> None:
    code = applied(analysed(GOLDEN / "scan" / "prefix.c"), "scan").code
    assert "static int *sums_2 = NULL;" in code
    assert "if (trips_i_2 > capacity_2) {" in code
    assert "capacity_2 = trips_i_2;" in code
    # the size query passes no storage: a kept buffer would make it scan instead
    assert (
        "cub::DeviceScan::InclusiveSum(nullptr, storage_bytes_2, d_count, sums_2, trips_i_2)"
        in code
    )
    assert "if (storage_bytes_2 > storage_capacity_2) {" in code
    function = _function(code, "offsets")
    # sums and storage only when they must grow (kept: CUDA's own calls); the arrays'
    # copies every call (from the runtime's pool)
    assert function.count("cudaFree(") == 2 and function.count("cudaify_free(") == 2
    assert function.count("cudaMalloc(") == 2 and function.count("cudaify_malloc(") == 2
    # a scan that needs neither terms nor sums keeps only CUB's storage
    running = _function(code, "running_total")
    assert "capacity" not in running.replace("storage_capacity", "")
    assert running.count("cudaMalloc(") == 1 and running.count("cudaify_malloc(") == 2


def test_arrays_move_as_offloads_launches_move_theirs() -> None:
    """Each array (the output too) is declared, allocated, copied in, copied back when
    written and freed, every line at the block's indentation: the shape data_residency
    turns into maps."""
    code = applied(analysed(GOLDEN / "scan" / "prefix.c"), "scan").code
    function = _function(code, "running_total")
    ind = "\n            "
    bytes_ = "(size_t)(n) * sizeof(long long)"
    order = [
        f"{ind}long long *d_in = NULL;",
        f"{ind}long long *d_out = NULL;",
        f"{ind}CUDAIFY_CHECK(cudaify_malloc((void **)&d_in, {bytes_}));",
        f"{ind}CUDAIFY_CHECK(cudaify_malloc((void **)&d_out, {bytes_}));",
        f"{ind}CUDAIFY_CHECK(cudaMemcpy(d_in, in, {bytes_}, cudaMemcpyHostToDevice));",
        f"{ind}CUDAIFY_CHECK(cudaMemcpy(d_out, out, {bytes_}, cudaMemcpyHostToDevice));",
        f"{ind}CUDAIFY_CHECK(cub::DeviceScan::InclusiveScanInit(storage, storage_bytes, d_in, "
        "d_out, cudaify_sum(), start_2, trips_i));",
        f"{ind}running = total_2;",
        f"{ind}CUDAIFY_CHECK(cudaMemcpy(out, d_out, {bytes_}, cudaMemcpyDeviceToHost));",
        f"{ind}CUDAIFY_CHECK(cudaify_free(d_in));",
        f"{ind}CUDAIFY_CHECK(cudaify_free(d_out));",
    ]
    positions = [function.index(line) for line in order]
    assert positions == sorted(positions)
    # the exclusive form's output starts where the loop's first store goes
    offsets = _function(code, "offsets")
    assert "CUDAIFY_CHECK(cudaMemcpy(start, d_start, (size_t)(n) * sizeof(int), " in offsets


def test_data_residency_keeps_the_arrays_of_repeated_scans_on_the_device() -> None:
    """After scan, data_residency maps every array and opens a scope around the time
    loop: the wrappers touch no host memory outside their maps (the recurrence's start is
    read on the device), so they need no barrier."""
    program = analysed(GOLDEN / "scan" / "resident.c")
    code = applied(program, "scan", "data_residency").code
    assert "cudaify_scope_begin();\n    for (int r = 0; r < ROUNDS; r++) {" in code
    running, smooth = _function(code, "running"), _function(code, "smooth")
    assert "double *d_out = (double *)cudaify_map(out, (size_t)(n) * sizeof(double), 1, 1);" in (
        running
    )
    assert "double *d_x = (double *)cudaify_map(x, (size_t)(n) * sizeof(double), 1, 1);" in smooth
    assert (
        "double *d_b = (double *)cudaify_map(b + (1), (size_t)((n - 1)) * sizeof(double), 1, 0);"
        in smooth
    )
    for function in (running, smooth):
        assert "cudaify_host_" not in function
        assert "cudaMemcpyHostToDevice" not in function
        assert function.count("cudaify_map(") == function.count("cudaify_unmap(")
    # the only copy back left is the accumulator's total, one element of the output
    assert running.count("cudaMemcpyDeviceToHost") == 1
    assert "cudaMemcpyDeviceToHost" not in smooth


EMULATED = {
    "prefix": ("scan",),
    "affine": ("scan",),
    "resident": ("scan",),
    "resident_kept": ("scan", "data_residency"),
    # the caller reads the scan's elements on the host right after the call: a function
    # whose only device work is cub's scan leaves its output written on the device
    "readback": ("schedule", "scan", "data_residency"),
}


@pytest.mark.parametrize("case", sorted(EMULATED))
def test_emulated_on_the_cpu_prints_what_gcc_prints(case: str, tmp_path) -> None:
    """Kernels, transfers and maps run with separate "device" buffers (CUB's scan done
    in order on one thread): a value left on the wrong side would change the output."""
    _emulated_as_gcc(case, tmp_path)


# a recurrence that keeps its history (multipliers 1 or just below, integer steps): a
# prefix composed in the wrong order or from the wrong share moves every later value
REMEMBERING = """#include <stdio.h>
#define N 20001
void walk(int n, const double *a, const int *step, double *x)
{
    for (int i = 1; i < n; i++)
        x[i] = a[i] * x[i - 1] + (double)(step[i] - 6);
}
int main(void)
{
    static double a[N], x[N];
    static int step[N];
    for (int i = 0; i < N; i++) {
        a[i] = i % 5 == 0 ? 1.0 - 1e-6 * (i % 7) : 1.0;
        step[i] = (i * 7919) % 13;
    }
    x[0] = 3.0;
    walk(N, a, step, x);
    double sum = 0.0;
    for (int i = 0; i < N; i++)
        sum += x[i];
    printf("sum=%.12e\\n", sum);
    for (int i = 2040; i + 9 < N; i += 2048 * BORDERS)
        printf("x[%d]=%.12e x[%d]=%.12e\\n", i, x[i], i + 9, x[i + 9]);
    return 0;
}
"""


@pytest.mark.parametrize("shares", [1, 3, 1024])
@pytest.mark.parametrize("wide_bytes", [16, 64], ids=["straight", "exchanged"])
def test_the_two_pass_scan_carries_across_tiles_and_shares(
    shares: int, wide_bytes: int, tmp_path
) -> None:
    """An affine map of doubles is 16 bytes: by default each of 128 threads reads its 2
    items straight, and 20000 items are 79 tiles of 256; with CUDAIFY_SCAN_WIDE_BYTES=64 it
    is read as narrower items are, 8 a thread, striped and exchanged: 20 tiles of 1024. With
    at most 1024 shares (the default) each block scans one tile from the composition of the
    totals of the blocks before, which it makes itself; with 3, blocks of 27, 27 and 25
    tiles (7, 7 and 6) also carry the composition from tile to tile and read each next tile
    while they scan one; with 1, one block scans every tile and pass 1 does not run. Values
    printed on both sides of tile borders."""
    from emulation import gcc_output, run_emulated

    from cudaify.backend.compare import compare

    source = tmp_path / "walk.c"
    source.write_text(REMEMBERING.replace("N 20001", "N 20001\n#define BORDERS 1"))
    code = applied(analysed(source), "scan").code
    assert "cudaify_scan<cudaify_affine<double>>(" in code
    code = re.sub(r"#include <(?:cuda/std/\w+|cub/[\w/.]+)>.*\n", "", code)
    header = Path(__file__).resolve().parent / "scan_emulation.h"
    flags = (
        "-include",
        str(header),
        f"-DCUDAIFY_SCAN_SHARES={shares}",
        f"-DCUDAIFY_SCAN_WIDE_BYTES={wide_bytes}",
    )
    emulated = run_emulated(code, tmp_path, timeout=600, flags=flags)
    assert emulated.ok, emulated.errors()
    expected = gcc_output(source, tmp_path)
    assert expected.count("x[") == 18
    assert compare(expected, emulated.text()) is None, emulated.text()


@pytest.mark.gpu
def test_the_two_pass_scan_on_the_gpu_prints_what_gcc_prints(tmp_path) -> None:
    """CUB's own block primitives over 4 * 10^6 items: 15625 tiles of 256, 977 blocks of
    sixteen tiles each (each composing up to 976 totals before its own), values printed
    across a tile border every 296 tiles, every other time across a share border."""
    source = tmp_path / "walk.c"
    source.write_text(REMEMBERING.replace("N 20001", "N 4000001\n#define BORDERS 37"))
    code = applied(analysed(source), "scan").code
    assert "cudaify_scan<cudaify_affine<double>>(" in code
    compiled = tmp_path / "walk.cu"
    compiled.write_text(code)
    same_output_as_gcc(source, compiled, tmp_path)


def _emulated_as_gcc(case: str, tmp_path: Path) -> None:
    from emulation import gcc_output, run_emulated

    from cudaify.backend.compare import compare

    source = GOLDEN / "scan" / f"{case.split('_')[0]}.c"
    code = applied(analysed(source), *EMULATED[case]).code
    code = re.sub(r"#include <(?:cuda/std/\w+|cub/[\w/.]+)>.*\n", "", code)
    header = Path(__file__).resolve().parent / "scan_emulation.h"
    emulated = run_emulated(code, tmp_path, timeout=600, flags=("-include", str(header)))
    assert emulated.ok, emulated.errors()
    assert compare(gcc_output(source, tmp_path), emulated.text()) is None, emulated.text()


def test_check_wants_cub_and_a_launch() -> None:
    program = analysed(GOLDEN / "scan" / "prefix.c")
    before = Variant(program.source)
    problems = SCAN.check(before, before, Context(program))
    assert [p.message for p in problems] == ["the answer changes nothing but comments and layout"]


def test_an_affine_recurrence_scans_composed_maps_in_two_passes() -> None:
    """The maps are made where the passes read them and the results stored where they
    are made: no terms or sums buffer, no CUB device scan (its header left out)."""
    program = analysed(GOLDEN / "scan" / "affine.c")
    code = applied(program, "scan").code
    assert "return cudaify_affine<double>{(double)(a[i]), (double)(b[i])};" in code
    assert "x[t_i] = (double)(sums.cudaify_mul * x[-1] + sums.cudaify_add);" in code
    assert (
        "cudaify_scan<cudaify_affine<double>>(smooth_scan_terms{d_a - (1), d_b - (1)}, "
        "smooth_scan_store{d_x + 1}, trips_i, cudaify_compose(), totals);" in code
    )
    assert "cub::DeviceScan" not in code and "device_scan.cuh" not in code
    assert "terms[" not in code and "<<<" not in code.split("---- cudaify scan in three")[0]


def _two_pass_variant() -> tuple[Variant, Variant, Context]:
    program = analysed(GOLDEN / "scan" / "affine.c")
    before = Variant(program.source)
    return before, applied(program, "scan"), Context(program)


def test_the_check_takes_the_two_pass_scan_only_as_shipped() -> None:
    """`cudaify_scan` counts as a device-wide scan only while the program holds the helper
    token for token and defines none of its functions again: a copy whose pass 3 stores
    nothing, or an overload that would take the call, is refused."""
    before, after, ctx = _two_pass_variant()
    assert SCAN.check(before, after, ctx) == []
    refused = "no device-wide scan (cub::DeviceScan, or cudaify_scan as shipped)"
    gutted = after.code.replace("                store(tile + at, items[k]);\n", "", 1)
    assert gutted != after.code
    overload = after.code.replace(
        "void smooth(",
        "template <class S, class Op>\n"
        "void cudaify_scan(smooth_scan_terms, smooth_scan_store, long long, Op, S *) {}\n\n"
        "void smooth(",
        1,
    )
    assert overload != after.code
    for decoy in (gutted, overload):
        problems = SCAN.check(before, Variant(decoy), ctx)
        assert [p.message for p in problems if p.message.startswith(refused)], problems


@pytest.mark.gpu
@pytest.mark.parametrize("case", CASES)
def test_golden_output_prints_what_gcc_prints(case: str, tmp_path) -> None:
    same_output_as_gcc(GOLDEN / "scan" / f"{case}.c", GOLDEN / "scan" / f"{case}.cu", tmp_path)


def test_a_scan_over_std_vector_of_integers(update_golden: bool, tmp_path) -> None:
    """operator[] of a std::vector<long> is a long: the long sums are exact, so the scan
    applies (it was refused: "cannot prove that 'in[i]' is an integer"); emulated on the
    CPU it prints what g++ prints, and nvcc compiles it."""
    from emulation import gcc_output, run_emulated

    from cudaify.backend.compare import compare

    source = GOLDEN / "scan" / "vector.cpp"
    program = analysed(source)
    variant = applied(program, "scan")
    expected = GOLDEN / "scan" / "vector.cu"
    if update_golden:
        expected.write_text(variant.code)
    assert expected.exists(), "vector.cu is missing: rerun with --update-golden to write it"
    assert variant.code == expected.read_text(), "rerun with --update-golden to accept vector.cu"
    assert "cub::DeviceScan::InclusiveScanInit" in variant.code
    assert structural_problems(program, variant.code, SCAN) == []
    assert nvcc_errors(variant.code, tmp_path) == ""
    code = re.sub(r"#include <(?:cuda/std/\w+|cub/[\w/.]+)>.*\n", "", variant.code)
    header = Path(__file__).resolve().parent / "scan_emulation.h"
    emulated = run_emulated(code, tmp_path, timeout=600, flags=("-include", str(header)))
    assert emulated.ok, emulated.errors()
    assert compare(gcc_output(source, tmp_path), emulated.text()) is None, emulated.text()


def test_a_vector_of_doubles_summed_into_longs_is_refused(tmp_path) -> None:
    source = (GOLDEN / "scan" / "vector.cpp").read_text()
    decoy = source.replace("const std::vector<long> &in", "const std::vector<double> &in")
    decoy = decoy.replace("std::vector<long> in(n)", "std::vector<double> in(n)")
    path = tmp_path / "decoy.cpp"
    path.write_text(
        decoy.replace(
            "std::vector<double> in(n), out(n);",
            "std::vector<double> in(n);\n    std::vector<long> out(n);",
        )
    )
    program = analysed(path)
    reason = SCAN.applies(Variant(program.source), Context(program))
    assert reason is not None and "cannot prove that 'in[i]' is an integer" in reason
