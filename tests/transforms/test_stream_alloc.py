"""Per-call device buffers: data_residency maps a buffer's life whichever spelling its
allocation and free have (the runtime's cudaify_malloc / cudaify_free, or CUDA's own calls,
which a model may write)."""

from __future__ import annotations

import pytest

from cudaify.transforms.data_residency import map_transfers

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
