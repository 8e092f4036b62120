"""Per-call device buffers come from the runtime's stream-ordered pool: offload and schedule
emit cudaify_malloc / cudaify_free (runtime_helpers.cuh), the helpers choose
cudaMallocAsync or cudaMalloc as the device allows, and data_residency still maps a
buffer's life whichever spelling it has (a model may write CUDA's own calls)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from emulation import SERIAL_HEADER, gcc_output, run_emulated
from pattern_golden import applied, nvcc_errors, same_output_as_gcc
from transforms_support import GOLDEN, analysed

from cudaify.backend.compare import compare
from cudaify.core import Variant, toolchain
from cudaify.transforms import get
from cudaify.transforms.base import Context
from cudaify.transforms.data_residency import map_transfers
from cudaify.transforms.offload import PRELUDE

RESIDENCY = get("data_residency")

# A function offloaded and called in a loop with sizes that change between calls.
LOOPED = """\
#include <stdio.h>
#define N 8192
static void update(double *y, const double *x, double a, int n)
{
    for (int i = 0; i < n; i++)
        y[i] = a * x[i] + y[i];
}
int main(void)
{
    static double x[N], y[N];
    for (int i = 0; i < N; i++) {
        x[i] = 0.001 * i;
        y[i] = 1.0;
    }
    for (int t = 0; t < 40; t++)
        update(y, x, 0.5, N - (t % 5) * 1000);
    double total = 0.0;
    for (int i = 0; i < N; i++)
        total += y[i];
    printf("%.6f %.6f %.6f\\n", total, y[0], y[N - 1]);
    return 0;
}
"""


def _after_prelude(code: str) -> str:
    """The program without the runtime helpers (which call CUDA's allocators themselves)."""
    assert code.count(PRELUDE) == 1
    return code.replace(PRELUDE, "")


def _function(code: str, name: str) -> str:
    start = re.search(rf"^static void {name}\(", code, re.MULTILINE)
    assert start is not None
    return code[start.start() : code.index("\n}\n", start.start())]


def test_an_offloaded_call_allocates_and_frees_through_the_pool(program_of, tmp_path) -> None:
    code = applied(program_of(LOOPED), "offload").code
    update = _function(code, "update")
    assert "CUDAIFY_CHECK(cudaify_malloc((void **)&d_x, (size_t)(n) * sizeof(double)));" in update
    assert "CUDAIFY_CHECK(cudaify_malloc((void **)&d_y, (size_t)(n) * sizeof(double)));" in update
    assert "CUDAIFY_CHECK(cudaify_free(d_x));" in update
    assert "CUDAIFY_CHECK(cudaify_free(d_y));" in update
    assert "cudaMalloc(" not in _after_prelude(code) and "cudaFree(" not in _after_prelude(code)
    assert nvcc_errors(code, tmp_path) == ""


SCHEDULE_CASES = sorted(p.stem for p in (GOLDEN / "schedule").glob("*.c"))


@pytest.mark.parametrize("case", SCHEDULE_CASES)
def test_a_schedule_allocates_and_frees_through_the_pool(case: str) -> None:
    """Every buffer schedule allocates (arrays, expanded scalars, private copies, snapshots,
    flags, shared scalars) is the pool's, and freed once."""
    code = applied(analysed(GOLDEN / "schedule" / f"{case}.c"), "schedule").code
    rest = _after_prelude(code)
    assert "cudaMalloc(" not in rest and "cudaFree(" not in rest
    mallocs = re.findall(r"CUDAIFY_CHECK\(cudaify_malloc\(\(void \*\*\)&(\w+), ", rest)
    frees = re.findall(r"CUDAIFY_CHECK\(cudaify_free\((\w+)\)\);", rest)
    assert mallocs and sorted(mallocs) == sorted(frees)


def test_a_schedule_with_the_pool_compiles(tmp_path: Path) -> None:
    code = applied(analysed(GOLDEN / "schedule" / "temporaries.c"), "schedule").code
    assert "cudaify_malloc(" in code
    assert nvcc_errors(code, tmp_path) == ""


def test_an_offloaded_call_in_a_loop_prints_what_gcc_prints_emulated(program_of, tmp_path) -> None:
    """On the CPU emulator (threads one after another), whose device has memory pools:
    cudaMallocAsync's path."""
    program = program_of(LOOPED)
    code = applied(program, "offload").code
    done = run_emulated(code, tmp_path, header=SERIAL_HEADER)
    assert done.ok, done.errors()
    assert compare(gcc_output(Path(program.path), tmp_path), done.text()) is None


# ---- the helpers themselves, on a fake CUDA runtime that counts its calls ------------

FAKE_CUDA = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
typedef int cudaError_t;
typedef void *cudaStream_t;
typedef void *cudaMemPool_t;
enum { cudaSuccess = 0, cudaErrorMemoryAllocation = 2 };
enum cudaDeviceAttr { cudaDevAttrMemoryPoolsSupported = 115 };
enum cudaMemPoolAttr { cudaMemPoolAttrReleaseThreshold = 4 };
static int pools = 1, fail_async = 0;
static int asked = 0, mallocs = 0, frees = 0, async_mallocs = 0, async_frees = 0, trims = 0;
/* tight: the device has no memory beside what the pool keeps from frees (held) */
static int tight = 0, held = 0, refused = 0;
static uint64_t threshold = 0;
static const char *cudaGetErrorString(cudaError_t e) { (void)e; return "?"; }
static cudaError_t cudaGetLastError(void) { return 0; }
static cudaError_t cudaGetDeviceCount(int *count) { *count = 0; return 0; }
static cudaError_t cudaFree(void *p) { if (p) frees++; free(p); return 0; }
static cudaError_t cudaMalloc(void **p, size_t n)
{
    if (n && tight && held) { refused++; return cudaErrorMemoryAllocation; }
    mallocs++; *p = n ? malloc(n) : NULL; return 0;
}
static cudaError_t cudaGetDevice(int *device) { *device = 0; return 0; }
static cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr a, int device)
{ (void)a; (void)device; asked++; *value = pools; return 0; }
static cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *pool, int device)
{ (void)device; *pool = NULL; return 0; }
static cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, enum cudaMemPoolAttr a, void *v)
{ (void)pool; (void)a; threshold = *(uint64_t *)v; return 0; }
static cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t keep)
{ (void)pool; (void)keep; trims++; held = 0; return 0; }
static cudaError_t cudaStreamSynchronize(cudaStream_t s) { (void)s; return 0; }
static cudaError_t cudaMallocAsync(void **p, size_t n, cudaStream_t s)
{
    (void)s;
    if (fail_async > 0) { fail_async--; return cudaErrorMemoryAllocation; }
    async_mallocs++; *p = malloc(n); return 0;
}
static cudaError_t cudaFreeAsync(void *p, cudaStream_t s)
{ (void)s; async_frees++; held = 1; free(p); return 0; }
"""

HELPERS_MAIN = r"""
int main(int argc, char **argv)
{
    pools = argc > 1 && argv[1][0] == '1';
    fail_async = argc > 2 ? atoi(argv[2]) : 0;
    tight = argc > 3;
    for (int call = 0; call < 3; call++) {
        double *d = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d, 1000 + call));
        CUDAIFY_CHECK(cudaify_free(d));
    }
    void *empty = NULL;
    CUDAIFY_CHECK(cudaify_malloc(&empty, 0));
    CUDAIFY_CHECK(cudaify_free(empty));
    void *kept = NULL; /* a buffer kept across calls: CUDA's own allocation */
    CUDAIFY_CHECK(cudaMalloc(&kept, 5000));
    CUDAIFY_CHECK(cudaFree(kept));
    printf("asked=%d malloc=%d free=%d async_malloc=%d async_free=%d trims=%d max=%d "
           "refused=%d\n", asked, mallocs, frees, async_mallocs, async_frees, trims,
           threshold == UINT64_MAX, refused);
    return empty != NULL;
}
"""


@pytest.fixture(scope="module")
def helpers_program(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """runtime_helpers.cuh on the fake runtime, built with g++."""
    folder = tmp_path_factory.mktemp("helpers")
    source = folder / "helpers.cpp"
    helpers = PRELUDE.replace("#include <cuda_runtime.h>", "")
    source.write_text(FAKE_CUDA + helpers + HELPERS_MAIN)
    built = toolchain.run(
        [toolchain.find_tool("g++"), "-pthread", str(source), "-o", str(folder / "helpers")]
    )
    assert built.ok, built.errors()
    return folder / "helpers"


@pytest.mark.parametrize(
    ("arguments", "counts"),
    [
        # memory pools: the device is asked once, the threshold keeps everything freed
        (["1"], "asked=1 malloc=2 free=1 async_malloc=3 async_free=3 trims=0 max=1 refused=0"),
        # none: CUDA's synchronous pair
        (["0"], "asked=1 malloc=5 free=4 async_malloc=0 async_free=0 trims=0 max=0 refused=0"),
        # the pool out of memory once: trimmed, then asked again
        (["1", "1"], "asked=1 malloc=2 free=1 async_malloc=3 async_free=3 trims=1 max=1 refused=0"),
        # CUDA's own allocation refused while the pool keeps freed buffers: the pool gives
        # them back and the allocation is asked once more
        (
            ["1", "0", "tight"],
            "asked=1 malloc=2 free=1 async_malloc=3 async_free=3 trims=1 max=1 refused=1",
        ),
        # no pool: nothing kept, so nothing to give back: the refusal is the program's error
        (
            ["0", "0", "tight"],
            "asked=1 malloc=5 free=4 async_malloc=0 async_free=0 trims=0 max=0 refused=0",
        ),
    ],
    ids=["pools", "no-pools", "out-of-memory", "kept-buffers", "kept-buffers-no-pool"],
)
def test_the_helpers_use_the_pool_when_the_device_has_one(
    helpers_program: Path, arguments: list[str], counts: str
) -> None:
    done = toolchain.run([str(helpers_program), *arguments])
    assert done.ok, done.errors()
    assert done.text().strip() == counts  # zero bytes: cudaMalloc's NULL, no free


# ---- data residency reads either spelling ----------------------------------------------

LIFE = (
    "        float *d_y = NULL;\n"
    "        CUDAIFY_CHECK({malloc}((void **)&d_y, (size_t)(n) * sizeof(float)));\n"
    "        CUDAIFY_CHECK(cudaMemcpy(d_y, y, (size_t)(n) * sizeof(float), "
    "cudaMemcpyHostToDevice));\n"
    "        k<<<1, 1>>>(d_y);\n"
    "        CUDAIFY_CHECK(cudaMemcpy(y, d_y, (size_t)(n) * sizeof(float), "
    "cudaMemcpyDeviceToHost));\n"
    "        CUDAIFY_CHECK({free}(d_y));\n"
)
MAPPED = (
    "        float *d_y = (float *)cudaify_map(y, (size_t)(n) * sizeof(float), 1, 1);\n"
    "        k<<<1, 1>>>(d_y);\n"
    "        cudaify_unmap(y, d_y, (size_t)(n) * sizeof(float), 1);\n"
)


@pytest.mark.parametrize(
    ("malloc", "free"),
    [
        ("cudaify_malloc", "cudaify_free"),
        ("cudaMalloc", "cudaFree"),
        ("cudaMalloc", "cudaify_free"),
    ],
    ids=["runtime", "cuda", "mixed"],
)
def test_a_buffer_life_maps_whichever_allocation_it_is_spelled_with(malloc: str, free: str) -> None:
    assert map_transfers(LIFE.format(malloc=malloc, free=free)) == (MAPPED, 1)


def test_residency_maps_an_offload_written_either_way(program_of) -> None:
    """offload's pooled calls, and the same program with CUDA's own (as a model writes it),
    give the same resident program."""
    program = program_of(LOOPED)
    offloaded = applied(program, "offload")
    resident = RESIDENCY.apply_rule(offloaded, Context(program)).variant
    assert resident is not None
    update = _function(resident.code, "update")
    assert update.count("cudaify_map(") == 2 and update.count("cudaify_unmap(") == 2
    assert "malloc" not in update and "free" not in update
    before, prelude, after = offloaded.code.partition(PRELUDE)
    spelled = [
        part.replace("cudaify_malloc(", "cudaMalloc(").replace("cudaify_free(", "cudaFree(")
        for part in (before, after)
    ]
    assert spelled[1] != after
    model_written = Variant(spelled[0] + prelude + spelled[1], offloaded=("update",))
    again = RESIDENCY.apply_rule(model_written, Context(program)).variant
    assert again is not None and again.code == resident.code


@pytest.mark.gpu
def test_an_offloaded_call_in_a_loop_prints_what_gcc_prints(program_of, tmp_path) -> None:
    """The pool on a real device: 40 calls of 5 sizes, each allocating and freeing."""
    program = program_of(LOOPED)
    cuda = tmp_path / "looped.cu"
    cuda.write_text(applied(program, "offload").code)
    same_output_as_gcc(Path(program.path), cuda, tmp_path)


KEPT_AFTER_POOL = r"""
int main(void)
{
    size_t available = 0, total = 0;
    CUDAIFY_CHECK(cudaMemGetInfo(&available, &total));
    size_t most = available / 10 * 6; /* two of these do not fit at once */
    void *pooled = NULL;
    CUDAIFY_CHECK(cudaify_malloc(&pooled, most));
    CUDAIFY_CHECK(cudaify_free(pooled));
    CUDAIFY_CHECK(cudaDeviceSynchronize());
    size_t after = 0;
    CUDAIFY_CHECK(cudaMemGetInfo(&after, &total));
    void *kept = NULL; /* a buffer kept across calls: CUDA's own allocation */
    CUDAIFY_CHECK(cudaMalloc(&kept, most));
    CUDAIFY_CHECK(cudaFree(kept));
    printf("pool kept %d, %s\n", cudaify_async_pool == 1 && after + most / 2 < available,
           "allocated");
    return 0;
}
"""


@pytest.mark.gpu
def test_cudas_own_allocation_gets_what_the_pool_keeps(tmp_path: Path) -> None:
    """On a real device: 60% of the free memory through the pool and back (the pool keeps
    it), then the same size with cudaMalloc, as a buffer kept across calls is made: the pool
    gives its memory back and the allocation succeeds."""
    source = tmp_path / "kept.cu"
    source.write_text(PRELUDE + KEPT_AFTER_POOL)
    nvcc = toolchain.find_tool("nvcc")
    built = toolchain.run([nvcc, "-O2", str(source), "-o", str(tmp_path / "kept")], timeout=240)
    assert built.ok, built.errors()
    done = toolchain.run([str(tmp_path / "kept")], timeout=120)
    assert done.ok, done.errors()
    assert done.text().strip() == "pool kept 1, allocated"
