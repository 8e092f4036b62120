"""The fixed C/CUDA text the methods paste into a program: the `.cuh` files of
`transforms/runtime/`, shipped as package data.

A file is pasted whole (marker comment first), not `#include`d: the emitted `.cu` stands
alone, so it compiles and runs where cudaify is not installed."""

from __future__ import annotations

import functools
from importlib import resources


@functools.cache
def runtime_text(name: str) -> str:
    """The text of `runtime/<name>`, byte for byte (no newline translation)."""
    return resources.files(__package__).joinpath("runtime", name).read_bytes().decode("utf-8")


# host functions of the runtime that launch kernels of their own (runtime/scan_passes.cuh):
# a method reads a call of one as it reads a call of a library's device-wide algorithm
# (cub::DeviceScan::...), not as program code to rewrite
LAUNCHING_HELPERS = frozenset({"cudaify_scan"})

# Every runtime file, each after the ones it uses (data residency calls CUDAIFY_CHECK, ...):
# the order a program that needs several gets them in when they are pasted together.
RUNTIME_FILES = (
    "runtime_helpers.cuh",
    "std_device.cuh",
    "warp_helpers.cuh",
    "pattern_helpers.cuh",
    "scan_passes.cuh",
    "data_residency.cuh",
)


def marker(text: str) -> str:
    """A runtime block's first line, its marker comment: the same in every version of it."""
    return text.splitlines()[0]
