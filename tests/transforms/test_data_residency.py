from __future__ import annotations

from pathlib import Path

import pytest
from pattern_golden import applied, nvcc_errors, same_output_as_gcc
from transforms_support import GOLDEN, analysed

from cudaify.core import Variant, toolchain
from cudaify.transforms import get
from cudaify.transforms.base import Context
from cudaify.transforms.data_residency import RUNTIME, map_transfers, residency_problems
from cudaify.transforms.structure import structural_problems

CASES = sorted(path.stem for path in (GOLDEN / "data_residency").glob("*.c"))
RESIDENCY = get("data_residency")


def resident(path: Path) -> Variant:
    return applied(analysed(path), "offload", "data_residency")


def refusal(program_of, code: str) -> str:
    program = program_of(code)
    offloaded = applied(program, "offload")
    outcome = RESIDENCY.apply_rule(offloaded, Context(program))
    assert outcome.variant is None
    assert RESIDENCY.applies(offloaded, Context(program)) == outcome.reason
    return outcome.reason


@pytest.mark.parametrize("case", CASES)
def test_golden_output_is_stable_and_compiles(case: str, update_golden: bool, tmp_path) -> None:
    program = analysed(GOLDEN / "data_residency" / f"{case}.c")
    before = applied(program, "offload")
    variant = applied(program, "offload", "data_residency")
    expected = GOLDEN / "data_residency" / f"{case}.cu"
    if update_golden:
        expected.write_text(variant.code)
    assert expected.exists(), f"{expected.name} is missing: rerun with --update-golden to write it"
    assert variant.code == expected.read_text(), f"rerun with --update-golden to accept {case}.cu"
    assert structural_problems(program, variant.code, RESIDENCY, before) == []
    assert nvcc_errors(variant.code, tmp_path) == ""


def test_a_time_loop_in_main_gets_one_scope_and_no_barrier() -> None:
    variant = resident(GOLDEN / "data_residency" / "swap_loop.c")
    code = variant.code
    main = code[code.index("int main(void)") :]
    assert main.count("cudaify_scope_begin();") == 1
    assert main.index("cudaify_scope_begin();") < main.index("for (int t = 0;")
    assert main.index("cudaify_scope_end();") < main.index("double total")
    assert "cudaify_host_" not in main  # the pointer swap touches no pointee
    wrapper = code[code.index("void diffuse(") : code.index("int main(void)")]
    for call in ("cudaify_malloc", "cudaMalloc", "cudaMemcpy", "cudaify_free", "cudaFree"):
        assert call not in wrapper
    assert "float *d_next = (float *)cudaify_map(next + (1), (size_t)((n - 2))" in wrapper
    assert "cudaify_unmap(next + (1), d_next, (size_t)((n - 2)) * sizeof(float), 1);" in wrapper
    # the line is the written program's, where the loop now is (after the runtime's text)
    loop = code[: code.index("for (int t = 0;")].count("\n") + 1
    assert code.splitlines()[loop - 2].strip() == "cudaify_scope_begin();"
    assert (
        variant.steps[-1].detail
        == f"main: arrays stay on the device across the loop at line {loop}"
    )


def test_a_time_loop_inside_the_offloaded_function_gets_the_scope() -> None:
    code = resident(GOLDEN / "data_residency" / "time_inside.c").code
    relax = code[code.index("void relax(") : code.index("int main(void)")]
    assert relax.index("cudaify_scope_begin();") < relax.index("for (int t = 0;")
    assert relax.count("cudaify_map(") == 4 and relax.count("cudaify_unmap(") == 4
    assert "cudaify_scope" not in code[code.index("int main(void)") :]


def test_host_reads_and_writes_get_the_matching_barrier() -> None:
    code = resident(GOLDEN / "data_residency" / "host_reads.c").code
    main = code[code.index("int main(void)") :]
    reads = main.index("cudaify_host_reads();")
    assert reads < main.index('printf("a=%.2f')
    writes = main.index("cudaify_host_writes();")
    assert main.index("if (r % 2 == 1)") < writes < main.index("blend(x, LEN);")
    assert main.count("cudaify_host_") == 2


def test_transfers_become_maps_only_when_the_whole_life_matches() -> None:
    block = (
        "        float *d_y = NULL;\n"
        "        CUDAIFY_CHECK(cudaMalloc((void **)&d_y, (size_t)(n) * sizeof(float)));\n"
        "        CUDAIFY_CHECK(cudaMemcpy(d_y, y, (size_t)(n) * sizeof(float), "
        "cudaMemcpyHostToDevice));\n"
        "        k<<<1, 1>>>(d_y);\n"
        "        CUDAIFY_CHECK(cudaMemcpy(y, d_y, (size_t)(n) * sizeof(float), "
        "cudaMemcpyDeviceToHost));\n"
        "        CUDAIFY_CHECK(cudaFree(d_y));\n"
    )
    code, count = map_transfers(block)
    assert count == 1
    assert code == (
        "        float *d_y = (float *)cudaify_map(y, (size_t)(n) * sizeof(float), 1, 1);\n"
        "        k<<<1, 1>>>(d_y);\n"
        "        cudaify_unmap(y, d_y, (size_t)(n) * sizeof(float), 1);\n"
    )
    # a different byte count in the copy: not the pattern, left alone
    mismatched = block.replace("cudaMemcpy(d_y, y, (size_t)(n)", "cudaMemcpy(d_y, y, (size_t)(m)")
    assert map_transfers(mismatched) == (mismatched, 0)


def test_a_buffer_of_a_template_type_maps_like_any_other() -> None:
    """A std::vector<std::pair<double, double>>'s storage: the declaration's element type
    has '::', '<', ',' and '>' in it; it kept its copies on every call before."""
    size = "(size_t)(n) * sizeof(std::pair<double, double>)"
    block = (
        "        std::pair<double, double> *d_e = NULL;\n"
        f"        CUDAIFY_CHECK(cudaMalloc((void **)&d_e, {size}));\n"
        f"        CUDAIFY_CHECK(cudaMemcpy(d_e, e.data(), {size}, cudaMemcpyHostToDevice));\n"
        "        k<<<1, 1>>>(d_e);\n"
        f"        CUDAIFY_CHECK(cudaMemcpy(e.data(), d_e, {size}, cudaMemcpyDeviceToHost));\n"
        "        CUDAIFY_CHECK(cudaFree(d_e));\n"
    )
    code, count = map_transfers(block)
    assert count == 1
    assert code.splitlines()[0] == (
        "        std::pair<double, double> *d_e = "
        f"(std::pair<double, double> *)cudaify_map(e.data(), {size}, 1, 1);"
    )
    assert "cudaMemcpy" not in code and "cudaFree" not in code


def test_a_copy_in_that_is_absent_or_conditional_maps_with_that_reads_flag() -> None:
    """A launch that writes every element needs no copy in (schedule leaves it out, or
    puts it under the sizes' condition): the map says so, so a range not yet on the
    device is not copied."""
    life = (
        "        double *d_a = NULL;\n"
        "        CUDAIFY_CHECK(cudaMalloc((void **)&d_a, (size_t)(64) * sizeof(double)));\n"
        "{copy}"
        "        k<<<1, 1>>>(d_a);\n"
        "        CUDAIFY_CHECK(cudaMemcpy(a, d_a, (size_t)(64) * sizeof(double), "
        "cudaMemcpyDeviceToHost));\n"
        "        CUDAIFY_CHECK(cudaFree(d_a));\n"
    )
    copy = (
        "        if (!((n >= 64))) CUDAIFY_CHECK(cudaMemcpy(d_a, a, (size_t)(64) * sizeof(double), "
        "cudaMemcpyHostToDevice));\n"
    )
    guarded, count = map_transfers(life.format(copy=copy))
    assert count == 1
    assert "cudaify_map(a, (size_t)(64) * sizeof(double), (!((n >= 64))), 1);" in guarded
    assert "cudaMemcpy" not in guarded and "cudaMalloc" not in guarded
    absent, count = map_transfers(life.format(copy=""))
    assert count == 1
    assert "cudaify_map(a, (size_t)(64) * sizeof(double), 0, 1);" in absent
    # a guard on anything but a copy in is not the pattern
    odd = life.format(copy="").replace(
        "        CUDAIFY_CHECK(cudaFree(d_a));", "        if (n) CUDAIFY_CHECK(cudaFree(d_a));"
    )
    assert map_transfers(odd)[1] == 0
    assert "if (copy) {" in RUNTIME and "cudaify_copy_in(host, end, &capacity, reads)" in RUNTIME


def test_calls_in_a_row_share_one_scope_unless_the_program_can_exit_between(program_of) -> None:
    source = """
#include <stdio.h>
#include <stdlib.h>
#define N 4096
static void fill(float *a, int n) { for (int i = 0; i < n; i++) a[i] = 0.5f * i; }
static void scale(float *a, float *b, int n) { for (int i = 0; i < n; i++) b[i] = 2.0f * a[i]; }
int main(int argc, char **argv)
{
    float *a = (float *)malloc(N * sizeof(float)), *b = (float *)malloc(N * sizeof(float));
    fill(a, N);
    CHECK_POINT
    scale(a, b, N);
    printf("%f\\n", b[N - 1]);
    return 0;
}
"""
    program = program_of(source.replace("CHECK_POINT", 'printf("filled\\n");'))
    code = applied(program, "offload", "data_residency").code
    main = code[code.index("int main(") :]
    begin, end = main.index("cudaify_scope_begin();"), main.index("cudaify_scope_end();")
    assert begin < main.index("fill(a, N);") < main.index("scale(a, b, N);") < end
    assert end < main.index('printf("%f')
    assert "cudaify_host_" not in main  # the printf between touches no memory
    # a is never read after the calls: its device copy is dropped, not copied back; the
    # printf after the scope reads b, which comes back
    assert main.index("cudaify_discard(a);") < end
    assert "cudaify_discard(b)" not in main
    exiting = program_of(source.replace("CHECK_POINT", "if (argc > 5) exit(1);"))
    reason = refusal(lambda _: exiting, "")
    assert "the program can exit inside the statements" in reason, reason


def test_refuses_a_program_that_was_not_offloaded(program_of) -> None:
    program = program_of("int main(void) { return 0; }\n")
    reason = RESIDENCY.applies(Variant(program.source), Context(program))
    assert reason == "no offloaded launch with cudaify's runtime helpers"


SCALE = """
#include <stdio.h>
#include <stdlib.h>
void scale(int n, float *v, float s) { for (int i = 0; i < n; i++) v[i] = v[i] * s; }
"""


def test_refuses_when_no_loop_repeats_a_launch(program_of) -> None:
    reason = refusal(
        program_of,
        SCALE + "int main(void) { float *v = (float *)calloc(5000, 4); scale(5000, v, 2.0f);"
        ' printf("%f\\n", v[0]); return 0; }\n',
    )
    assert reason == "no loop repeats a launch"


def test_refuses_a_loop_that_returns_from_inside(program_of) -> None:
    reason = refusal(
        program_of,
        SCALE + "int main(void) { float *v = (float *)calloc(5000, 4);\n"
        "  for (int r = 0; r < 3; r++) { scale(5000, v, 2.0f); if (r == 7) return 1; }\n"
        '  printf("%f\\n", v[0]); return 0; }\n',
    )
    assert "a return leaves the loop without closing the scope" in reason


def test_refuses_an_array_declared_in_the_loop(program_of) -> None:
    reason = refusal(
        program_of,
        SCALE + "int main(void) {\n"
        "  for (int r = 0; r < 3; r++) { float v[5000] = {1}; scale(5000, v, 2.0f);"
        ' printf("%f\\n", v[0]); }\n  return 0; }\n',
    )
    assert "an array declared in the loop comes back at the same address" in reason


def test_refuses_a_wrapper_that_maps_its_own_local_array(program_of) -> None:
    reason = refusal(
        program_of,
        "#include <stdio.h>\n"
        "float total(int r) { float tmp[5000];\n"
        "  for (int i = 0; i < 5000; i++) tmp[i] = (float)(i + r);\n"
        "  return tmp[17]; }\n"
        "int main(void) { float s = 0;\n"
        "  for (int r = 0; r < 3; r++) s += total(r);\n"
        '  printf("%f\\n", s); return 0; }\n',
    )
    assert "maps its local 'tmp', which dies when it returns" in reason


def test_refuses_memory_in_a_loop_header_between_launches(program_of) -> None:
    reason = refusal(
        program_of,
        SCALE + "int main(void) { float *v = (float *)calloc(5000, 4); v[0] = 1;\n"
        "  for (int r = 0; v[0] < 100.0f; r++) scale(5000, v, 2.0f);\n"
        '  printf("%f\\n", v[0]); return 0; }\n',
    )
    assert "a loop or branch header touches memory between launches" in reason


def test_refuses_when_already_applied() -> None:
    program = analysed(GOLDEN / "data_residency" / "swap_loop.c")
    variant = applied(program, "offload", "data_residency")
    assert RESIDENCY.applies(variant, Context(program)) == "data residency is already applied"


def test_check_finds_unbalanced_scopes_and_maps() -> None:
    code = resident(GOLDEN / "data_residency" / "swap_loop.c").code
    assert residency_problems(code) == []
    broken = code.replace("    cudaify_scope_end();\n", "", 1)
    assert [p.message for p in residency_problems(broken)] == [
        "'main' opens and closes a different number of residency scopes"
    ]
    unmapped = code.replace("cudaify_unmap(next + (1)", "(void)(next + (1)", 1)
    assert "'diffuse' maps and unmaps a different number of ranges" in [
        p.message for p in residency_problems(unmapped)
    ]


# ---- the runtime's present table, run on the host ------------------------------------
#
# No GPU here: the table logic is plain C, so it is exercised with device memory played
# by host buffers (a separate copy, so a missing copy shows as a wrong value). The GPU
# tests below run the real thing.

HOST_CUDA = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
typedef int cudaError_t;
enum { cudaSuccess = 0, cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2 };
static int copies = 0, allocations = 0;
static cudaError_t cudaMalloc(void **p, size_t n) { allocations++; *p = malloc(n); return 0; }
static cudaError_t cudaFree(void *p) { free(p); return 0; }
static cudaError_t cudaGetLastError(void) { return 0; }
static const char *cudaGetErrorString(cudaError_t e) { (void)e; return "?"; }
static cudaError_t cudaMemcpy(void *d, const void *s, size_t n, int kind)
{ (void)kind; copies++; memcpy(d, s, n); return 0; }
static int registered = 0;
enum { cudaHostRegisterDefault = 0 };
static cudaError_t cudaHostRegister(void *p, size_t n, unsigned int flags)
{ (void)p; (void)n; (void)flags; registered++; return 0; }
static cudaError_t cudaHostUnregister(void *p) { (void)p; registered--; return 0; }
#define CUDAIFY_CHECK(call) (void)(call)
"""

TABLE_PROGRAM = r"""
int main(void)
{
    /* aligned so that the copies' offsets in their 256-byte lines are known */
    static float a[100] __attribute__((aligned(256))), b[100] __attribute__((aligned(256)));
    for (int i = 0; i < 100; i++) a[i] = b[i] = (float)i;
    cudaify_scope_begin();
    for (int step = 0; step < 3; step++) {
        /* the "kernel" b[1..99) = a[...] + 1, with a and b mapped as the offload maps them */
        float *da = (float *)cudaify_map(a, sizeof a, 1, 0);
        float *db = (float *)cudaify_map(b + 1, 98 * sizeof(float), 1, 1);
        for (int i = 1; i < 99; i++) db[i - 1] = da[i] + 1.0f;
        cudaify_unmap(a, da, sizeof a, 0);
        cudaify_unmap(b + 1, db, 98 * sizeof(float), 1);
        printf("host b[5] is %g\n", (double)b[5]);
    }
    cudaify_scope_end();
    printf("after the scope b[0]=%g b[5]=%g b[99]=%g copies=%d\n", (double)b[0], (double)b[5],
           (double)b[99], copies);
    /* a larger range of an allocation mapped in the scope flushes the smaller one */
    cudaify_scope_begin();
    float *part = (float *)cudaify_map(a + 10, 10 * sizeof(float), 1, 1);
    part[0] = -1.0f;
    float *whole = (float *)cudaify_map(a, sizeof a, 1, 0);
    printf("union sees %g\n", (double)whole[10]);
    float *again = (float *)cudaify_map(a + 10, 10 * sizeof(float), 1, 0);
    printf("contained reuse %d\n", again == whole + 10);
    cudaify_scope_end();
    printf("a[10]=%g a[50]=%g copies=%d allocations=%d\n", (double)a[10], (double)a[50],
           copies, allocations);
    /* outside a scope: copy in, copy back, buffer back to the pool */
    float *plain = (float *)cudaify_map(b, sizeof b, 1, 1);
    plain[0] = 42.0f;
    cudaify_unmap(b, plain, sizeof b, 1);
    printf("b[0]=%g copies=%d allocations=%d\n", (double)b[0], copies, allocations);
    /* a store to one element forgets only the mapping that holds it */
    cudaify_scope_begin();
    float *kept = (float *)cudaify_map(a, sizeof a, 1, 0);
    float *dirty = (float *)cudaify_map(b, sizeof b, 1, 1);
    dirty[3] = 7.0f;
    cudaify_host_writes_at(&b[3], sizeof b[3]);
    b[3] += 1.0f;
    int before = copies;
    float *again_a = (float *)cudaify_map(a, sizeof a, 1, 0);
    float *again_b = (float *)cudaify_map(b, sizeof b, 1, 0);
    printf("kept %d copied %d b[3]=%g device b[3]=%g\n", again_a == kept, copies - before,
           (double)b[3], (double)again_b[3]);
    cudaify_scope_end();
    /* a read of a few elements copies back only those, and the range stays written */
    cudaify_scope_begin();
    float *w = (float *)cudaify_map(a, sizeof a, 1, 1);
    for (int i = 0; i < 100; i++) w[i] = -2.0f;
    before = copies;
    cudaify_host_reads_at(a + 20, cudaify_bytes(2, sizeof(a[0])));
    printf("part a[20]=%g a[21]=%g a[22]=%g copied %d\n", (double)a[20], (double)a[21],
           (double)a[22], copies - before);
    cudaify_host_reads_at(a, cudaify_bytes(100, sizeof(a[0])));
    before = copies;
    cudaify_host_reads();
    printf("whole a[22]=%g then flushed %d\n", (double)a[22], copies - before);
    /* a loop that runs no iteration writes nothing: the mapping stays */
    cudaify_host_writes_at(a + 50, cudaify_bytes(-3, sizeof(a[0])));
    before = copies;
    float *still = (float *)cudaify_map(a, sizeof a, 1, 0);
    printf("empty write keeps %d copied %d\n", still == w, copies - before);
    cudaify_scope_end();
    /* a large range copied twice in a scope is page-locked until the host may free it */
    static char big[8 << 20];
    cudaify_scope_begin();
    (void)cudaify_map(big, sizeof big, 1, 0);
    cudaify_host_writes_at(big, 1);
    int once = registered;
    (void)cudaify_map(big, sizeof big, 1, 0);
    printf("pinned after one copy %d, after two %d\n", once, registered);
    cudaify_scope_end();
    printf("pinned after the scope %d\n", registered);
    return 0;
}
"""


def runtime_run(program: str, tmp_path: Path) -> list[str]:
    """The lines `program` prints, built with gcc against the residency runtime on a
    host-side stand-in for CUDA (HOST_CUDA)."""
    source = tmp_path / "runtime.c"
    source.write_text(HOST_CUDA + RUNTIME.split("*/", 1)[1] + program)
    gcc = toolchain.find_tool("gcc")
    built = toolchain.run([gcc, "-std=c99", "-Wall", str(source), "-o", str(tmp_path / "t")])
    assert built.ok, built.errors()
    ran = toolchain.run([str(tmp_path / "t")])
    assert ran.ok, ran.errors()
    return ran.text().splitlines()


def test_the_present_table_keeps_reuses_and_flushes(tmp_path) -> None:
    assert runtime_run(TABLE_PROGRAM, tmp_path) == [
        # no copy back inside the scope, no copy in after the first step
        "host b[5] is 5",
        "host b[5] is 5",
        "host b[5] is 5",
        "after the scope b[0]=0 b[5]=6 b[99]=99 copies=3",
        "union sees -1",  # the written part was copied back before the union came in
        "contained reuse 1",
        "a[10]=-1 a[50]=50 copies=6 allocations=3",
        "b[0]=42 copies=8 allocations=3",  # the pooled 400-byte buffer is reused
        "kept 1 copied 1 b[3]=8 device b[3]=8",
        "part a[20]=-2 a[21]=-2 a[22]=22 copied 1",  # two elements, one copy
        "whole a[22]=-2 then flushed 0",  # a range read whole is clean
        "empty write keeps 1 copied 0",
        "pinned after one copy 0, after two 1",
        "pinned after the scope 0",
    ]


TIMED_PROGRAM = r"""
/* a timing build's runtime: the region's calls and how deep they nest */
static int entered = 0, depth = 0, deepest = 0;
void cudaify_timing_enter(void) { entered++; if (++depth > deepest) deepest = depth; }
void cudaify_timing_leave(void) { depth--; }
int main(void)
{
    static float a[100] __attribute__((aligned(256)));
    static char big[8 << 20];
    cudaify_scope_begin();
    float *da = (float *)cudaify_map(a, sizeof a, 1, 1);
    cudaify_unmap(a, da, sizeof a, 1);
    cudaify_host_reads_at(a, sizeof a);
    printf("a copy back from host code: %d region(s), at depth %d\n", entered, depth);
    cudaify_host_reads_at(a, sizeof a);
    printf("nothing to copy: %d\n", entered);
    /* inside an offloaded function's region, the copy is counted there */
    cudaify_timing_enter();
    da = (float *)cudaify_map(a, sizeof a, 1, 1);
    cudaify_unmap(a, da, sizeof a, 1);
    cudaify_host_reads();
    cudaify_timing_leave();
    printf("nested: %d, deepest %d\n", entered, deepest);
    cudaify_scope_end();
    entered = 0;
    cudaify_scope_begin();
    (void)cudaify_map(big, sizeof big, 1, 0);
    cudaify_host_writes_at(big, 1);
    (void)cudaify_map(big, sizeof big, 1, 0);
    int before = entered;
    cudaify_scope_end();
    printf("unpinned at the scope's end: %d region(s), depth %d\n", entered - before, depth);
    return 0;
}
"""


def test_copies_back_and_unpinning_from_host_code_count_in_a_timing_builds_region(
    tmp_path,
) -> None:
    """A timing build links cudaify_timing_enter/leave: a copy back or an unpinning that a
    host statement asks for is GPU work the variant added outside its offloaded functions,
    and the region counts it (prefix_sum's copies back each round read 1.29x as a whole
    program, estimated from the region, and ran at 0.72x). Nothing to copy: no region.
    The user's build has no timing runtime: the weak symbols are null (the test above)."""
    assert runtime_run(TIMED_PROGRAM, tmp_path) == [
        "a copy back from host code: 1 region(s), at depth 0",
        "nothing to copy: 1",
        "nested: 3, deepest 2",  # the offloaded function's region and the copy's within it
        "unpinned at the scope's end: 1 region(s), depth 0",
    ]


@pytest.mark.gpu
@pytest.mark.parametrize("case", CASES)
def test_golden_cases_print_what_gcc_prints(case: str, tmp_path) -> None:
    source = GOLDEN / "data_residency" / f"{case}.c"
    cu = tmp_path / f"{case}.cu"
    cu.write_text(resident(source).code)
    same_output_as_gcc(source, cu, tmp_path)


BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.mark.gpu
@pytest.mark.parametrize(
    "name",
    [
        "stencil/heat1d",
        "stencil/jacobi2d",
        "stencil/blur5x5",
        "elementwise/black_scholes",
        "linalg/matvec",
        "nbody/nbody_forces",
        "sparse/spmv_csr",
        "elementwise/poly_eval",
        "reduction/dot_norms",
    ],
)
def test_benchmarks_print_what_gcc_prints(name: str, tmp_path) -> None:
    source = BENCHMARKS / f"{name}.c"
    program = analysed(source)
    variant = applied(program, "offload", "reduction", "data_residency")
    assert "cudaify_scope_begin();" in variant.code
    cu = tmp_path / "resident.cu"
    cu.write_text(variant.code)
    same_output_as_gcc(source, cu, tmp_path)


def test_a_barrier_inside_a_branch_does_not_cover_what_follows(program_of) -> None:
    program = program_of(
        SCALE + "static double sum(const float *v) { double s = 0; for (int i = 0; i < 5000; i++)"
        " s += v[i]; return s; }\n"
        "int main(void) { float *v = (float *)calloc(5000, 4);\n"
        "  for (int r = 0; r < 3; r++) {\n"
        "    scale(5000, v, 2.0f);\n"
        '    if (r == 1) {\n      printf("%f\\n", v[0]);\n    }\n'
        '    printf("%f\\n", sum(v));\n'
        "  }\n  return 0; }\n"
    )
    code = applied(program, "offload", "data_residency").code
    main = code[code.index("int main(void)") :]
    reads_v0 = "cudaify_host_reads_at(v, cudaify_bytes(1, sizeof(v[0])));"
    assert f'if (r == 1) {{\n      {reads_v0}\n      printf("%f\\n", v[0]);' in main
    assert 'cudaify_host_reads();\n    printf("%f\\n", sum(v));' in main


def test_out_parameters_of_private_scalars_only_read_mapped_memory(program_of) -> None:
    """`stats(v, &s)` writes through its second parameter only, and `s` lives in the
    loop: a read barrier is enough. `bump(v)` writes through the mapped array."""
    program = program_of(
        SCALE + "static void stats(const float *v, double *out) { double s = 0;\n"
        "  for (int i = 0; i < 5000; i++) s += v[i]; *out = s; }\n"
        "static void bump(float *v) { for (int i = 1; i < 5000; i++) v[i] += v[i - 1]; }\n"
        "int main(void) { float *v = (float *)calloc(5000, 4);\n"
        "  for (int r = 0; r < 3; r++) {\n"
        "    double s;\n"
        "    scale(5000, v, 2.0f);\n"
        "    stats(v, &s);\n"
        '    printf("%f\\n", s);\n'
        "    scale(5000, v, 0.5f);\n"
        "    bump(v);\n"
        "  }\n  return 0; }\n"
    )
    code = applied(program, "offload", "data_residency").code
    main = code[code.index("int main(void)") :]
    assert "cudaify_host_reads();\n    stats(v, &s);" in main
    assert "cudaify_host_writes();\n    bump(v);" in main


def test_a_store_through_a_pointer_forgets_only_what_it_overlaps(program_of) -> None:
    program = program_of(
        SCALE + "static void total(const float *v, double *out) { double s = 0;\n"
        "  for (int i = 0; i < 5000; i++) s += v[i] * v[i] - v[i];\n"
        "  scale(5000, (float *)v, 1.0f);\n"
        "  *out = s; }\n"
        "int main(void) { float *v = (float *)calloc(5000, 4); double s = 0;\n"
        "  for (int r = 0; r < 3; r++) total(v, &s);\n"
        '  printf("%f\\n", s); return 0; }\n'
    )
    code = applied(program, "offload", "data_residency").code
    total = code[code.index("static void total(") : code.index("int main(void)")]
    assert "cudaify_host_writes_at(&(*out), sizeof(*out));\n  *out = s;" in total


# ---- C++: function templates and std::vector ------------------------------------------

TEMPLATE_VECTORS = GOLDEN / "data_residency" / "template_vectors.cpp"


def test_function_templates_on_vectors_stay_resident(update_golden: bool, tmp_path) -> None:
    """The launch offload emits inside a function template (a templated kernel launched
    with the template's arguments, `T *d_x = NULL;`) becomes maps, and the time loops of
    the callers hold scopes. Emulated on the CPU with separate "device" buffers, the
    program prints what g++ prints, so no barrier is missing."""
    from emulation import run_emulated

    program = analysed(TEMPLATE_VECTORS)
    before = applied(program, "offload")
    variant = applied(program, "offload", "data_residency")
    expected = TEMPLATE_VECTORS.with_suffix(".cu")
    if update_golden:
        expected.write_text(variant.code)
    assert expected.exists(), f"{expected.name} is missing: rerun with --update-golden to write it"
    assert variant.code == expected.read_text(), "rerun with --update-golden to accept it"
    assert structural_problems(program, variant.code, RESIDENCY, before) == []
    assert nvcc_errors(variant.code, tmp_path) == ""
    emulated = run_emulated(variant.code, tmp_path)
    assert emulated.ok, emulated.errors()
    gxx = toolchain.find_tool("g++")
    built = toolchain.run([gxx, "-O2", str(TEMPLATE_VECTORS), "-o", str(tmp_path / "ref")])
    assert built.ok, built.errors()
    assert emulated.text() == toolchain.run([str(tmp_path / "ref")]).text()


def test_vector_swaps_and_sizes_need_no_barrier_but_element_reads_do() -> None:
    code = resident(TEMPLATE_VECTORS).code
    axpy = code[code.index("void axpy(T a,") : code.index("template <int R, typename T>\nvoid")]
    assert "cudaify_host_" not in axpy  # `x.size()` reads the vector, not its elements
    assert "T *d_y = (T *)cudaify_map(y.data(), (size_t)(y.size()) * sizeof(T), 1, 1);" in axpy
    rounds = code[code.index("double rounds(int n)") :]
    assert rounds.index("cudaify_scope_begin();") < rounds.index("T a = static_cast<T>(")
    smoothing = code[code.index("double smoothing(int n, int steps)") :]
    assert "smooth<R>(a, b, w);\n        a.swap(b);\n" in smoothing
    # `std::vector<float> a(n)` parses as a function declaration; it is the vector
    assert "{ cudaify_host_reads(); probes += a[n / 2]; }" in smoothing


SCALE_TEMPLATE = """#include <array>
#include <cstdio>
#include <vector>
template <typename T>
void scale(std::vector<T> &v, T s)
{
    const int n = static_cast<int>(v.size());
    for (int i = 0; i < n; i++)
        v[i] = v[i] * s;
}
template <typename T>
void add(std::vector<T> &v, const T &s)
{
    const int n = static_cast<int>(v.size());
    for (int i = 0; i < n; i++)
        v[i] = v[i] + s;
}
"""


def test_a_template_value_from_the_loop_goes_only_to_a_by_value_parameter(program_of) -> None:
    reason = refusal(
        lambda code: program_of(code, "input.cpp"),
        SCALE_TEMPLATE + "int main() {\n  std::vector<float> v(5000, 1.0f);\n"
        "  for (int r = 0; r < 3; r++) {\n    std::vector<float>::value_type s = 0.5f * r;\n"
        "    scale(v, s);\n"
        "    std::vector<float>::value_type t = 1;\n    add(v, t);\n  }\n"
        '  std::printf("%f\\n", v[0]);\n  return 0;\n}\n',
    )
    # both locals have a class-like type; `scale(v, s)` (first) copies s and maps nothing
    # reached from it, `add` takes a reference, which could be mapped
    assert reason.endswith("'add' gets 't': the local 't' may die before the scope ends")


def test_a_vector_declared_in_the_loop_is_not_passed_to_a_launch(program_of) -> None:
    reason = refusal(
        lambda code: program_of(code, "input.cpp"),
        SCALE_TEMPLATE + "int main(int argc, char **argv) {\n  const int n = 5000 + argc;\n"
        "  double t = 0;\n  for (int r = 0; r < 3; r++) {\n    std::vector<float> v(n);\n"
        '    scale(v, 2.0f);\n    t += v[0];\n  }\n  std::printf("%f\\n", t);\n  return 0;\n}\n',
    )
    assert reason.endswith("'scale' gets 'v': the local 'v' may die before the scope ends")


def test_growing_a_vector_or_swapping_arrays_gets_a_write_barrier(program_of) -> None:
    program = program_of(
        SCALE_TEMPLATE + "int main() {\n  std::array<float, 500> a{}, b{};\n"
        "  std::vector<float> v(5000, 1.0f);\n  for (int r = 0; r < 3; r++) {\n"
        "    scale(v, 2.0f);\n    a.swap(b);\n    scale(v, 0.5f);\n    v.push_back(1.0f);\n"
        "  }\n"
        '  std::printf("%f %f %zu\\n", v[0], a[0], v.size());\n  return 0;\n}\n',
        "input.cpp",
    )
    main = applied(program, "offload", "data_residency").code
    main = main[main.index("int main()") :]
    # std::array::swap exchanges the elements; push_back may move the buffer
    assert "cudaify_host_writes();\n    a.swap(b);" in main
    assert "cudaify_host_writes();\n    v.push_back(1.0f);" in main


# ---- range-limited barriers ------------------------------------------------------------


def test_host_loops_and_element_reads_get_barriers_for_what_they_name(program_of) -> None:
    """A counted loop's elements `a[i + k]` and elements at loop-free indices are all the
    host touches: the barriers copy back (or forget) exactly those ranges."""
    program = program_of(
        SCALE + "int main(void) { float *v = (float *)calloc(5000, 4);\n"
        "  float *w = (float *)calloc(5000, 4); double s = 0;\n"
        "  for (int r = 0; r < 3; r++) {\n"
        "    scale(5000, v, 2.0f);\n"
        "    scale(5000, w, 3.0f);\n"
        "    for (int i = 1; i <= 4000; i += 2)\n      s += v[i - 1] + v[i + 1];\n"
        "    for (int i = 10; i < 20; i++)\n      v[i] = (float)i;\n"
        '    printf("%f %f\\n", s, w[r + 1]);\n'
        "  }\n  return 0; }\n"
    )
    main = applied(program, "offload", "data_residency").code.split("int main(void)")[1]
    assert (
        "cudaify_host_reads_at(v + (1 - 1), cudaify_bytes((4000 + 1) - 1, sizeof(v[0])));\n"
        "    cudaify_host_reads_at(v + (1 + 1), cudaify_bytes((4000 + 1) - 1, sizeof(v[0])));\n"
        "    for (int i = 1; i <= 4000; i += 2)"
    ) in main
    assert (
        "cudaify_host_writes_at(v + 10, cudaify_bytes(20 - 10, sizeof(v[0])));\n"
        "    for (int i = 10; i < 20; i++)"
    ) in main
    assert "cudaify_host_reads_at(w + (r + 1), cudaify_bytes(1, sizeof(w[0])));\n    printf" in main
    assert "cudaify_host_reads();" not in main and "cudaify_host_writes();" not in main


@pytest.mark.parametrize(
    "statement, barrier",
    [
        ("for (int i = 0; i < 50; i++) s += v[idx[i]];", "cudaify_host_reads();"),
        ("for (int i = 0; i < 50; i++) s += *(v + i);", "cudaify_host_reads();"),
        ("for (int i = 0; i < 50; i++) s += v[2 * i];", "cudaify_host_reads();"),
        (
            "for (int i = 0; i < 5; i++) for (int j = 0; j < 5; j++) s += v[i + j];",
            "cudaify_host_reads();",
        ),
        ("for (int i = 0; i < 50; i++) { n = 4; s += v[i + n]; }", "cudaify_host_reads();"),
        ("for (int i = 0; i < 50; i++) v[i] = v[i] + (float)peek(v);", "cudaify_host_writes();"),
        ("for (int i = 0; i < n; i++) { v[i] = 0.0f; n--; }", "cudaify_host_writes();"),
        ("s += rows[1][2];", "cudaify_host_reads();"),
        ("v[idx[0]] = 1.0f;", "cudaify_host_writes();"),
    ],
)
def test_accesses_a_barrier_cannot_bound_first_get_the_whole_barrier(
    program_of, statement: str, barrier: str
) -> None:
    """Indices read from memory or written by the statement itself, strides, nested
    loops, pointer arithmetic, a pointer passed to a call, a pointer of pointers: the
    range is not known before the statement runs, so every mapping is flushed."""
    program = program_of(
        SCALE + "static double peek(const float *p) { return p[0]; }\n"
        "int main(void) { float *v = (float *)calloc(5000, 4); int idx[50] = {0};\n"
        "  float **rows = (float **)calloc(4, sizeof(float *)); double s = 0; int n = 50;\n"
        "  for (int k = 0; k < 4; k++) rows[k] = v;\n"
        "  for (int r = 0; r < 3; r++) {\n"
        "    scale(5000, v, 2.0f);\n"
        f"    {statement}\n"
        "  }\n"
        '  printf("%f %d\\n", s, n);\n  return 0; }\n'
    )
    main = applied(program, "offload", "data_residency").code.split("int main(void)")[1]
    assert f"{barrier}\n    {statement}" in main
    assert "_at(" not in main


def test_ranged_barriers_run_on_the_cpu_as_gcc_prints(tmp_path) -> None:
    """The golden ranged.c emulated with separate "device" buffers: a missing copy
    would print a different level count, sum or value."""
    from emulation import gcc_output, run_emulated

    source = GOLDEN / "data_residency" / "ranged.c"
    variant = resident(source)
    assert "cudaify_map(&changed" not in variant.code  # the flag keeps its own copies
    assert "cudaify_host_writes();" not in variant.code.split("int main(void)")[1]
    emulated = run_emulated(variant.code, tmp_path)
    assert emulated.ok, emulated.errors()
    assert emulated.text() == gcc_output(source, tmp_path)


def test_a_host_loop_that_only_reads_through_casts_copies_back_and_keeps_the_maps(tmp_path) -> None:
    """C++ casts write nothing: a host loop summing `static_cast<double>(...)` of mapped
    vectors gets the read barrier (copy back, keep the maps), not the write barrier that
    forgets every mapping and re-sends the inputs on the next call."""
    path = tmp_path / "casts.cpp"
    path.write_text(
        "#include <cstdio>\n#include <vector>\n"
        "void scale(const std::vector<double> &in, std::vector<double> &out, int n, double s)\n{\n"
        "    for (int i = 0; i < n; i++)\n        out[i] = in[i] * s;\n}\n"
        "int main()\n{\n    const int n = 100000;\n"
        "    std::vector<double> in(n, 1.5), out(n);\n    double total = 0.0;\n"
        "    for (int p = 0; p < 10; p++) {\n        scale(in, out, n, 1.0 + p);\n"
        "        for (int i = 0; i < n; i++)\n"
        "            total += out[i] * static_cast<double>(i % 3 + 1);\n    }\n"
        '    printf("%.3f\\n", total);\n    return 0;\n}\n'
    )
    code = applied(analysed(path), "offload", "data_residency").code
    main = code[code.index("int main()") :]
    assert "cudaify_host_reads();" in main and "cudaify_host_writes" not in main


RUN_OF_CALLS = """\
#include <stdio.h>
#define N 4096
static void scale(float *x, int n)
{
    for (int i = 0; i < n; i++)
        x[i] = 2.0f * x[i];
}
static void shift(float *x, int n)
{
    for (int i = 0; i < n; i++)
        x[i] = x[i] + 1.0f;
}
int main(void)
{
    static float x[N];
    for (int i = 0; i < N; i++)
        x[i] = 0.5f * i;
    scale(x, N);
    shift(x, N);
    scale(x, N);
    printf("%f %f\\n", x[0], x[N - 1]);
    return 0;
}
"""


def test_a_run_of_launching_calls_is_named_by_its_lines_in_the_written_program(
    program_of,
) -> None:
    variant = applied(program_of(RUN_OF_CALLS), "offload", "data_residency")
    lines = variant.code.splitlines()
    first = lines.index("    scale(x, N);") + 1
    last = len(lines) - lines[::-1].index("    scale(x, N);")
    assert lines[first - 2].strip() == "cudaify_scope_begin();"
    assert variant.steps[-1].detail == (
        f"main: arrays stay on the device from line {first} to {last} (3 statements launch work)"
    )


HELPER = """\
static int multiprocessors(void)
{
    static int STATE;
    if (COUNT == 0) {
        int device = 0;
        if (cudaGetDevice(&device) != cudaSuccess ||
            cudaDeviceGetAttribute(&COUNT, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
            (void)cudaGetLastError();
            COUNT = 1;
        }
    }
    return COUNT;
}

"""


@pytest.mark.parametrize(
    ("state", "count", "kept"),
    [
        ("processors", "processors", True),  # a cached number: no memory a map could hold
        ("counts[2]", "counts[0]", False),  # an array, static: it could be mapped
    ],
)
def test_a_helper_that_caches_the_device_s_multiprocessor_count_is_host_code_without_memory(
    program_of, state: str, count: str, kept: bool
) -> None:
    """gemm_tiling's launches call such helpers (its tile and split choosers): the CUDA
    runtime's queries write only through their arguments, and a static number of the
    helper's own is no memory a map could hold."""
    program = program_of(
        SCALE + "int main(void) { float *v = (float *)calloc(5000, 4);\n"
        "  for (int r = 0; r < 3; r++) scale(5000, v, 2.0f);\n"
        '  printf("%f\\n", v[0]); return 0; }\n'
    )
    offloaded = applied(program, "offload")
    code = offloaded.code
    at = code.index("void scale(")
    helper = HELPER.replace("STATE", state).replace("COUNT", count)
    code = code[:at] + helper + code[at:]
    launch = code.index("<<<", code.index("void scale("))
    grid = code.rindex("const dim3 grid(", 0, launch)
    opened = grid + len("const dim3 grid(")
    code = code[:opened] + "0 * multiprocessors() + " + code[opened:]
    variant = offloaded.then("offload", code, "rule")
    outcome = RESIDENCY.apply_rule(variant, Context(program))
    if kept:
        assert outcome.variant is not None, outcome.reason
        assert "0 * multiprocessors() + " in outcome.variant.code
    else:
        assert outcome.variant is None
        assert "launches mixed with host code" in outcome.reason
