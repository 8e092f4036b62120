"""The C/CUDA runtime the methods paste into programs: `.cuh` files shipped as package
data, read at emit time, and compiled here together the way a program holds them."""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path

from pattern_golden import nvcc_errors

from cudaify.transforms import (
    data_residency,
    offload,
    pattern_support,
    scan,
    segmented,
    std_device,
)
from cudaify.transforms.prelude import runtime_text

ROOT = Path(__file__).resolve().parents[2]

# Each file, and the marker by which a method finds it already pasted in a program.
FILES = {
    "runtime_helpers.cuh": pattern_support.RUNTIME_MARKER,
    "std_device.cuh": std_device.STD_MARKER,
    "pattern_helpers.cuh": pattern_support.PATTERN_MARKER,
    "warp_helpers.cuh": segmented.WARP_MARKER,
    "data_residency.cuh": data_residency.RUNTIME_MARKER,
    "scan_passes.cuh": scan.SCAN_PASSES_MARKER,
}

# Templates the headers only declare are instantiated by a kernel and a host function.
USES = """
__global__ void cudaify_probe(const float *in, float *out, int *outside, long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    float value = i < n ? in[i] : 0.0f;
    float total = cudaify_block_reduce(value, cudaify_plus());
    float lanes = cudaify_warp_allreduce(value, cudaify_maximum());
    float prefix = cudaify_warp_inclusive_scan(value, cudaify_plus());
    cudaify_add_at(out, (float *)NULL, n, i, total + lanes + prefix, outside);
    out[0] = cudaify_min(out[0], cudaify_max(total, lanes));
}

void cudaify_probe_host(float *data, long long n)
{
    cudaify_scope_begin();
    size_t bytes = cudaify_bytes(n, sizeof(float));
    float *device = (float *)cudaify_map(data, bytes, 1, 1);
    unsigned int blocks = cudaify_blocks(cudaify_trips(0, n, 1, 0), 256, 2147483647u);
    cudaify_probe<<<blocks, 256>>>(device, device, NULL, n);
    cudaify_unmap(data, device, bytes, 1);
    cudaify_scope_end();
}

struct cudaify_probe_item {
    const float *in;
    __device__ float operator()(long long t) const { return in[t]; }
};
struct cudaify_probe_result {
    float *out;
    __device__ void operator()(long long t, const float &sum) const { out[t] = sum; }
};

void cudaify_probe_scan(const float *in, float *out, float *totals, long long n)
{
    cudaify_scan<float>(cudaify_probe_item{in}, cudaify_probe_result{out}, n, cudaify_plus(),
                        totals);
}
"""


def test_each_file_is_the_text_its_method_pastes():
    assert offload.PRELUDE == runtime_text("runtime_helpers.cuh")
    assert std_device.STD_PRELUDE == runtime_text("std_device.cuh")
    assert pattern_support.PATTERN_PRELUDE == runtime_text("pattern_helpers.cuh")
    assert segmented.WARP_HELPERS == runtime_text("warp_helpers.cuh")
    assert data_residency.RUNTIME == runtime_text("data_residency.cuh")
    assert scan.SCAN_PASSES == runtime_text("scan_passes.cuh")
    for name, marker in FILES.items():
        assert runtime_text(name).splitlines()[0] == marker, name


def test_the_files_are_package_data():
    shipped = resources.files("cudaify.transforms").joinpath("runtime")
    assert sorted(f.name for f in shipped.iterdir() if f.name.endswith(".cuh")) == sorted(FILES)
    settings = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "runtime/*.cuh" in settings["tool"]["setuptools"]["package-data"]["cudaify.transforms"]


def test_the_runtime_compiles_with_nvcc(tmp_path: Path):
    """All six, in the order a program holds them, with the includes the pattern
    methods put first, and a kernel and host functions that instantiate the templates."""
    order = ["scan_passes.cuh", "runtime_helpers.cuh", "std_device.cuh", "data_residency.cuh"]
    order += ["pattern_helpers.cuh", "warp_helpers.cuh"]
    includes = "".join(f'#include "{name}"\n' for name in order)
    folder = resources.files("cudaify.transforms").joinpath("runtime")
    code = pattern_support.PATTERN_INCLUDES + includes + USES
    for name in order:
        (tmp_path / name).write_bytes(folder.joinpath(name).read_bytes())
    assert nvcc_errors(code, tmp_path) == ""
