"""Every method's structural postcondition refuses decoys: answers that only look like the
method was applied. Each method is given a program it applies to; its rule's answer must
pass, and each decoy built from the code it was applied to must be refused: that code with
comments naming the method's constructs (what substring checks used to accept) or with
only its layout changed; a kernel full of those constructs never launched, beside a launch
of the wrong kernel, launched from a helper nothing calls, or launched from main beside
the work it leaves alone."""

from __future__ import annotations

import json
from functools import cache

import pytest
from pattern_golden import applied
from transforms_support import GOLDEN, analysed

from cudaify.core import Variant
from cudaify.frontend.facts import Program
from cudaify.transforms import METHODS, get
from cudaify.transforms import postcondition as pc
from cudaify.transforms.base import Context

# method -> (a golden input it applies to, the rules applied before it): one table for the
# postcondition tests and the decoy endpoint's (tests/golden/method_cases.json)
CASES = {
    method: (case["input"], tuple(case["after"]))
    for method, case in json.loads((GOLDEN / "method_cases.json").read_text()).items()
}

# what the old substring checks looked for, and the names of every method's construct
MAGIC = (
    "<<< wave >>> cub::DeviceScan::InclusiveSum( atomicAdd( cudaify_add_at( "
    "cudaify_block_reduce cudaify_shfl_down #pragma unroll __shared__ __syncthreads() "
    "__restrict__ __ldg( __expf( __fmul_rn( gridDim.x*4) cudaify_scope_begin(); "
    "cub::DeviceRadixSort::SortKeys( __launch_bounds__(256) threadIdx.y"
)

# a kernel holding every method's construct: only where it runs can make it count
KITCHEN_SINK = """
__device__ float cudaify_decoy_helper(float v)
{
    return __shfl_down_sync(0xffffffffu, v, 16) + __fmul_rn(v, 2.0f);
}

__global__ void __launch_bounds__(256) cudaify_decoy(float *__restrict__ out,
                                                     const float *__restrict__ in,
                                                     long long n, long long wave)
{
    __shared__ float tile[256];
    tile[threadIdx.x] = __ldg(&in[threadIdx.x + wave]);
    __syncthreads();
    float v = cudaify_decoy_helper(__expf(tile[threadIdx.y]));
    for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < n;
         t += (long long)blockDim.x * gridDim.x * 4) {
#pragma unroll
        for (int k = 0; k < 4; k++)
            atomicAdd(&out[t + k], v);
    }
}

"""
IDLE = "__global__ void cudaify_idle(void) {}\n\n"
DECOY_LAUNCH = "cudaify_decoy<<<1, 256>>>(nullptr, nullptr, 0, 0);"


@cache
def program_of(method: str) -> Program:
    return analysed(GOLDEN / CASES[method][0])


@cache
def start_of(method: str) -> Variant:
    """The code the method is applied to."""
    _, before = CASES[method]
    program = program_of(method)
    return applied(program, *before) if before else Variant(program.source)


def refusals(method: str, code: str) -> list[str]:
    context = Context(program_of(method))
    return [p.message for p in get(method).check(start_of(method), Variant(code), context)]


def main_body_start(code: str) -> tuple[int, int]:
    """Byte offsets of `main`'s definition and of the first byte inside its body."""
    source = pc.parsed(code)
    definition = next(
        node for name, nodes in pc.functions(source).items() if name == "main" for node in nodes
    )
    body = definition.child_by_field_name("body")
    assert body is not None
    top = definition
    while top.parent is not None and top.parent.type != "translation_unit":
        top = top.parent
    return top.start_byte, body.start_byte + 1


def with_kernels(code: str, definitions: str, in_main: str = "") -> str:
    """`code` with `definitions` put before main and `in_main` as main's first statement."""
    data = code.encode()
    before_main, inside = main_body_start(code)
    statement = f"\n    {in_main}" if in_main else ""
    return (
        data[:before_main]
        + definitions.encode()
        + data[before_main:inside]
        + statement.encode()
        + data[inside:]
    ).decode()


def decoys(method: str) -> dict[str, str]:
    code = start_of(method).code
    source = pc.parsed(code)
    launched = sorted(pc.launched_kernels(source, source))
    wrong = f"{launched[0]}<<<1, 1>>>();" if launched else "cudaify_idle<<<1, 1>>>();"
    unused = "static void cudaify_unused(void)\n{\n    " + DECOY_LAUNCH + "\n}\n\n"
    return {
        "commented": f"// {MAGIC}\n{code}\n/* {MAGIC} */\n",
        "reformatted": "\n\n".join(line.strip() for line in code.splitlines()) + "\n",
        "unlaunched": with_kernels(code, KITCHEN_SINK),
        "wrong_kernel_launched": with_kernels(code, IDLE + KITCHEN_SINK, wrong),
        "launched_from_dead_code": with_kernels(code, KITCHEN_SINK + unused),
        # runs, but does none of the work the method should have moved or changed
        "launched_beside_the_work": with_kernels(code, KITCHEN_SINK, DECOY_LAUNCH),
    }


DECOYS = [
    "commented",
    "reformatted",
    "unlaunched",
    "wrong_kernel_launched",
    "launched_from_dead_code",
    "launched_beside_the_work",
]


def into_kernel(code: str, statements: str) -> str:
    """`code` with `statements` first in the body of its first launched kernel."""
    source = pc.parsed(code)
    kernel = next(iter(pc.launched_kernels(source, source).values()))
    body = kernel.child_by_field_name("body")
    assert body is not None
    at = body.start_byte + 1
    return (source.data[:at] + f"\n    {statements}".encode() + source.data[at:]).decode()


def before_grid_stride_loop(code: str, line: str) -> str:
    """`code` with `line` before the first grid-stride loop of a kernel (offload's)."""
    header = "    for (long long t_"
    assert header in code
    return code.replace(header, f"    {line}\n{header}", 1)


# method -> decoys that put the method's construct where it does nothing
IDLE_CONSTRUCTS = {
    "unroll": {
        "pragma_on_the_grid_stride_loop": lambda c: before_grid_stride_loop(c, "#pragma unroll")
    },
    "fast_math": {
        "an_intrinsic_called_for_nothing": lambda c: into_kernel(c, "(void)__expf(1.0f);")
    },
    "shared_tiling": {
        "an_unused_tile": lambda c: into_kernel(
            c, "__shared__ float unused[32];\n    __syncthreads();"
        )
    },
}


def test_every_method_has_a_case() -> None:
    assert sorted(CASES) == sorted(METHODS)


@pytest.mark.parametrize("method", sorted(CASES))
def test_the_rule_passes_its_own_postcondition(method: str) -> None:
    program = program_of(method)
    outcome = get(method).apply_rule(start_of(method), Context(program))
    assert outcome.variant is not None, outcome.reason
    assert refusals(method, outcome.variant.code) == []


@pytest.mark.parametrize("decoy", DECOYS)
@pytest.mark.parametrize("method", sorted(CASES))
def test_a_decoy_is_refused(method: str, decoy: str) -> None:
    assert refusals(method, decoys(method)[decoy]) != []


# ---- answers written otherwise than the rule writes them still pass ----------------------

PREFIX = """\
void prefix(const int *in, int *out, int n)
{
    int sum = 0;
    for (int i = 0; i < n; i++) {
        sum += in[i];
        out[i] = sum;
    }
}

int main(void)
{
    static int in[1000], out[1000];
    prefix(in, out, 1000);
    return out[999];
}
"""
FLAT_SCAN = """\
#include <cub/cub.cuh>
void prefix(const int *in, int *out, int n)
{
    int *d_in, *d_out;
    void *scratch = NULL;
    size_t bytes = 0;
    cudaMalloc(&d_in, n * sizeof(int));
    cudaMalloc(&d_out, n * sizeof(int));
    cudaMemcpy(d_in, in, n * sizeof(int), cudaMemcpyHostToDevice);
    cub::DeviceScan::InclusiveSum(scratch, bytes, d_in, d_out, n);
    cudaMalloc(&scratch, bytes);
    cub::DeviceScan::InclusiveSum(scratch, bytes, d_in, d_out, n);
    cudaMemcpy(out, d_out, n * sizeof(int), cudaMemcpyDeviceToHost);
    cudaFree(scratch);
    cudaFree(d_in);
    cudaFree(d_out);
}

int main(void)
{
    static int in[1000], out[1000];
    prefix(in, out, 1000);
    return out[999];
}
"""
TABLE = """\
void fill(int *t, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = 1; j < n; j++)
            t[i * n + j] = t[(i - 1) * n + j] + t[i * n + j - 1];
}

int main(void)
{
    static int t[64 * 64];
    fill(t, 64);
    return t[64 * 64 - 1];
}
"""
DIAGONALS = """\
__global__ void cell(int *t, int n, int d)
{
    int i = 1 + blockIdx.x * blockDim.x + threadIdx.x;
    int j = d - i;
    if (i < n && j >= 1 && j < n)
        t[i * n + j] = t[(i - 1) * n + j] + t[i * n + j - 1];
}

void fill(int *t, int n)
{
    int *dt;
    cudaMalloc(&dt, n * n * sizeof(int));
    cudaMemcpy(dt, t, n * n * sizeof(int), cudaMemcpyHostToDevice);
    for (int d = 2; d <= 2 * (n - 1); d++)
        cell<<<(n + 127) / 128, 128>>>(dt, n, d);
    cudaMemcpy(t, dt, n * n * sizeof(int), cudaMemcpyDeviceToHost);
    cudaFree(dt);
}

int main(void)
{
    static int t[64 * 64];
    fill(t, 64);
    return t[64 * 64 - 1];
}
"""
TAPS = """\
__global__ void blur(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i + 2 >= n)
        return;
    float s = 0.0f;
    for (int k = 0; k < 3; k++)
        s += x[i + k];
    y[i] = s;
}

void run(const float *x, float *y, int n)
{
    blur<<<(n + 255) / 256, 256>>>(x, y, n);
}

int main(void)
{
    run(0, 0, 0);
    return 0;
}
"""
HAND_UNROLLED = TAPS.replace(
    "    for (int k = 0; k < 3; k++)\n        s += x[i + k];\n",
    "    s += x[i];\n    s += x[i + 1];\n    s += x[i + 2];\n",
)
STRIDED = TAPS.replace(
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i + 2 >= n)\n        return;\n"
    "    float s = 0.0f;\n    for (int k = 0; k < 3; k++)\n        s += x[i + k];\n    y[i] = s;\n",
    "    const int stride = blockDim.x * gridDim.x;\n"
    "    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i + 2 < n; i += 2 * stride) {\n"
    "        y[i] = x[i] + x[i + 1] + x[i + 2];\n"
    "        if (i + stride + 2 < n)\n"
    "            y[i + stride] = x[i + stride] + x[i + stride + 1] + x[i + stride + 2];\n"
    "    }\n",
)

HELPER_PER_DIAGONAL = DIAGONALS.replace(
    "void fill(int *t, int n)\n{",
    "static void diagonal(int *dt, int n, int d)\n{\n"
    "    cell<<<(n + 127) / 128, 128>>>(dt, n, d);\n}\n\nvoid fill(int *t, int n)\n{",
).replace(
    "        cell<<<(n + 127) / 128, 128>>>(dt, n, d);\n    cudaMemcpy",
    "        diagonal(dt, n, d);\n    cudaMemcpy",
)

OTHER_SPELLINGS = {
    "wavefront: a helper launches the kernel of diagonal d": (
        "wavefront",
        TABLE,
        HELPER_PER_DIAGONAL,
    ),
    "scan: straight-line CUB calls on device copies": ("scan", PREFIX, FLAT_SCAN),
    "wavefront: one thread per cell of diagonal d": ("wavefront", TABLE, DIAGONALS),
    "unroll: a loop replicated by hand": ("unroll", TAPS, HAND_UNROLLED),
    "register_tiling: a stride named once, stepped twice": ("register_tiling", TAPS, STRIDED),
}


@pytest.mark.parametrize("case", sorted(OTHER_SPELLINGS))
def test_an_answer_spelled_otherwise_passes(case: str) -> None:
    method, before, after = OTHER_SPELLINGS[case]
    assert after != before
    context = Context(program_of(method))  # these checks read the two codes only
    assert get(method).check(Variant(before), Variant(after), context) == []
    assert get(method).check(Variant(before), Variant(before + "// done\n"), context) != []


@pytest.mark.parametrize(
    ("method", "decoy"),
    sorted((method, decoy) for method, made in IDLE_CONSTRUCTS.items() for decoy in made),
)
def test_a_construct_that_does_nothing_is_refused(method: str, decoy: str) -> None:
    code = IDLE_CONSTRUCTS[method][decoy](start_of(method).code)
    assert code != start_of(method).code
    assert refusals(method, code) != []
