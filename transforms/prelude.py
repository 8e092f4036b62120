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
