"""Run a generated .cu on the CPU, for tests on machines without a GPU.

cuda_emulation.h gives every thread of a block its own std::thread, runs the blocks one
after another, makes `__shared__` variables static (shared by the running block) and
`__syncthreads()` a std::barrier; a barrier that some threads skip deadlocks (the run
times out). The launches `k<<<grid, block>>>(args);` become calls of the emulator. This
checks what a kernel computes, block-level synchronisation included; it says nothing
about speed, and the GPU tests still run the real thing."""

from __future__ import annotations

import re
from pathlib import Path

from cudaify.core import toolchain

HEADER = Path(__file__).resolve().parent / "cuda_emulation.h"
# One thread after another (no barriers): fast enough for full-size programs.
SERIAL_HEADER = Path(__file__).resolve().parent / "serial_emulation.h"
_LAUNCH = re.compile(r"(\w+(?:<[^<>;]*>)?)<<<(.*?)>>>\((.*?)\);", re.S)  # kernel or kernel<T, R>


def _split_top_level(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for char in text:
        depth += char in "([{"
        depth -= char in ")]}"
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    return [*parts, current.strip()]


def _launch_call(match: re.Match[str]) -> str:
    grid, block = _split_top_level(match.group(2))[:2]
    kernel, arguments = match.group(1), match.group(3)
    return f"cudaify_emulate(dim3({grid}), dim3({block}), [&] {{ {kernel}({arguments}); }});"


def emulated_source(code: str) -> str:
    # the header is included first (g++ -include): device qualifiers may come earlier
    code = code.replace("#include <cuda_runtime.h>", "")
    return _LAUNCH.sub(_launch_call, code)


def run_emulated(
    code: str,
    directory: Path,
    timeout: int = 120,
    flags: tuple[str, ...] = (),
    header: Path = HEADER,
    reverse: bool = False,
) -> toolchain.Completed:
    """Build `code` against the emulator with g++ and run it; the build's result when
    it does not build. `header=SERIAL_HEADER` runs threads one after another; `reverse` runs
    the blocks (and, serially, the threads) in reverse order."""
    source = directory / "emulated.cpp"
    source.write_text(emulated_source(code))
    binary = directory / "emulated"
    compiler = toolchain.find_tool("g++")
    argv = [
        compiler,
        "-std=c++20",
        "-O1",
        "-pthread",
        "-w",
        "-include",
        str(header),
        *flags,
        str(source),
        "-o",
        str(binary),
    ]
    argv.append("-lm")
    built = toolchain.run(argv, timeout=240)
    if not built.ok:
        return built
    environment = (
        {**toolchain.clean_environment(), "CUDAIFY_EMULATE_REVERSE": "1"} if reverse else None
    )
    return toolchain.run([str(binary)], timeout=timeout, env=environment)


def gcc_output(
    source: Path, directory: Path, timeout: int = 120, flags: tuple[str, ...] = ()
) -> str:
    """What the sequential program prints when gcc -O2 (g++ for C++) builds it, with
    `flags` (-DBENCH_SMALL): the emulated run's expected output."""
    binary = directory / "reference"
    compiler = toolchain.find_tool("g++" if source.suffix == ".cpp" else "gcc")
    built = toolchain.run([compiler, "-O2", *flags, str(source), "-o", str(binary), "-lm"])
    assert built.ok, built.errors()
    return toolchain.run([str(binary)], timeout=timeout).text()
