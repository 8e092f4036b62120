"""Shared helpers of the pattern methods' tests: apply methods in order as the pipeline
does (a method that does not apply is skipped, like an edge the search does not take),
compile with nvcc, and run a .cu next to gcc's reference."""

from __future__ import annotations

from pathlib import Path

from cudaify.backend import toolchain
from cudaify.core import Variant
from cudaify.frontend.facts import Program
from cudaify.transforms import get
from cudaify.transforms.base import Context


def applied(program: Program, *methods: str) -> Variant:
    """The variant after each method in turn; the last one must apply."""
    variant = Variant(program.source)
    for position, name in enumerate(methods):
        outcome = get(name).apply_rule(variant, Context(program))
        if outcome.variant is None:
            assert position < len(methods) - 1, outcome.reason
            continue
        variant = outcome.variant
    return variant


def nvcc_errors(code: str, directory: Path) -> str:
    """nvcc's diagnostics, or "" when `code` compiles to an object file."""
    source = directory / "candidate.cu"
    source.write_text(code)
    nvcc = toolchain.find_tool("nvcc")
    argv = [nvcc, "-arch=sm_80", "-c", str(source), "-o", str(directory / "candidate.o")]
    done = toolchain.run(argv, timeout=240)
    return "" if done.ok else done.errors() + done.text()


def same_output_as_gcc(c_source: Path, cu_source: Path, directory: Path) -> None:
    """Build both, run both, and compare their outputs as the pipeline does."""
    from cudaify.backend.compare import compare

    gcc = toolchain.find_tool("gcc")
    reference = toolchain.run([gcc, "-O2", str(c_source), "-o", str(directory / "ref"), "-lm"])
    assert reference.ok, reference.errors()
    expected = toolchain.run([str(directory / "ref")], timeout=120)
    nvcc = toolchain.find_tool("nvcc")
    built = toolchain.run([nvcc, "-O2", str(cu_source), "-o", str(directory / "gpu")], timeout=240)
    assert built.ok, built.errors()
    actual = toolchain.run([str(directory / "gpu")], timeout=120)
    assert actual.returncode == expected.returncode, actual.errors()
    assert compare(expected.text(), actual.text()) is None
