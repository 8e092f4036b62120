"""Shared helpers of the pattern methods' tests: apply methods in order as the pipeline
does (a method that does not apply is skipped, like an edge the search does not take),
compile with nvcc, and run a .cu next to gcc's reference."""

from __future__ import annotations

from pathlib import Path

from cudaify.core import Variant, toolchain
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


def matches_golden(
    source: Path, method: str, update: bool, directory: Path, after: tuple[str, ...] = ()
) -> Variant:
    """`method`'s rule on `source` (after the methods `after`, in order) against the golden
    `.cu` beside it (written with --update-golden; a missing one fails), structurally sound
    and compiled by nvcc."""
    from transforms_support import analysed

    from cudaify.transforms.structure import structural_problems

    program = analysed(source)
    before = applied(program, *after) if after else Variant(program.source)
    variant = get(method).apply_rule(before, Context(program)).variant
    assert variant is not None, f"{method} does not apply after {after}"
    expected = source.with_suffix(".cu")
    if update:
        expected.write_text(variant.code)
    assert expected.exists(), f"{expected.name} is missing: rerun with --update-golden to write it"
    assert variant.code == expected.read_text(), (
        f"rerun with --update-golden to accept {expected.name}"
    )
    assert structural_problems(program, variant.code, get(method), before) == []
    assert nvcc_errors(variant.code, directory) == ""
    return variant


def emulated_output_problem(code: str, source: Path, directory: Path, header: Path) -> str | None:
    """Run `code` on the CPU emulator with `header` (the CUB or atomics stand-ins; CUDA's
    own headers dropped) and compare its output with g++'s build of `source`: None when
    they agree, else the difference."""
    import re

    from emulation import gcc_output, run_emulated

    from cudaify.backend.compare import compare

    code = re.sub(r"#include <(?:cuda/std/\w+|cub/[\w/.]+)>.*\n", "", code)
    emulated = run_emulated(code, directory, timeout=600, flags=("-include", str(header)))
    assert emulated.ok, emulated.errors()
    return compare(gcc_output(source, directory), emulated.text())


def gpu_output_problem(code: str, source: Path, directory: Path) -> str | None:
    """Build `code` with nvcc, run it on the GPU and compare with g++'s build of `source`."""
    from emulation import gcc_output

    from cudaify.backend.compare import compare

    built_source = directory / "candidate.cu"
    built_source.write_text(code)
    nvcc = toolchain.find_tool("nvcc")
    binary = directory / "gpu"
    built = toolchain.run([nvcc, "-O2", str(built_source), "-o", str(binary)], timeout=300)
    assert built.ok, built.errors()
    ran = toolchain.run([str(binary)], timeout=120)
    assert ran.ok, ran.errors()
    return compare(gcc_output(source, directory), ran.text())
