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
