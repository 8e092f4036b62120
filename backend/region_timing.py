"""Region timing through the kernel-level harness, not the whole program.

A finalist's whole-program runs time its region once per run, with everything else the
program does around it. When the region is one offloaded function that can be called on
its own (differential.py's conditions: every pointer's extent known) and the program
passes it the same sizes at every call (cost.parameter_values), the candidate's function
is built into a library and called in a child process (region_child.py) on random inputs
at those sizes, as often as fits in HARNESS_SECONDS: a few milliseconds per call, timed
with CUDA events (pycuda) and the host clock. The region is then the outermost calls the
program made times the median steady call: one-time costs (loading the kernels' module,
the first allocations) are the program's, as CUDA's context is, and count in its wall
time, not in the region."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cudaify.backend.cache import Cache
from cudaify.backend.compile import COMPILE_TIMEOUT
from cudaify.backend.cost import parameter_values
from cudaify.backend.differential import candidate_library, case_at, ctype_of
from cudaify.core import toolchain
from cudaify.frontend.facts import Program

CHILD = Path(__file__).with_name("region_child.py")
HARNESS_CALLS = 25
HARNESS_SECONDS = 0.5
MAX_ELEMENTS = 1 << 28  # what the child's arrays may hold in all (1-2 GiB of host memory)
SEED = 2024


@dataclass(frozen=True)
class RegionTime:
    """Seconds per call of the candidate's function at the program's sizes."""

    host: float  # median steady call, host clock: what the region timer would read
    device: float  # the same calls by CUDA events
    first: float  # the first call (module loading, first allocations), host clock
    calls: int  # steady calls timed


@dataclass(frozen=True)
class Harness:
    """A candidate's function ready to be timed alone: its library (cached) and the
    arguments of one call at the program's sizes."""

    function: str
    library: Path
    restype: str | None
    case: dict[str, Any]


def prepare(
    program: Program,
    function_name: str,
    candidate_code: str,
    *,
    arch: str,
    cache: Cache,
    timeout: float = COMPILE_TIMEOUT,
) -> Harness | str:
    """The harness of `function_name`, its library built (nvcc cut at `timeout` seconds),
    or why the function cannot be timed alone."""
    function = program.function(function_name)
    if function is None:
        return f"no facts about '{function_name}'"
    if function_name == "main":
        return "main is the whole program"
    sizes = parameter_values(candidate_code, function_name)
    case, why = case_at(function, sizes, SEED, MAX_ELEMENTS)
    if case is None:
        return f"'{function_name}' cannot be called alone: {why}"
    library = candidate_library(program, function_name, candidate_code, arch, cache, timeout)
    if not library.ok or library.binary is None:
        first = (library.diagnostics.splitlines() or [""])[0]
        return f"the candidate does not build as a library: {first}"
    restype = None if function.return_type == "void" else ctype_of(function.return_type)
    return Harness(function_name, library.binary, restype, case)


def time_region(harness: Harness, timeout: float = 60.0) -> RegionTime | str:
    """Time the harness's function alone, or say why it could not be."""
    spec = {
        "candidate": str(harness.library),
        "restype": harness.restype,
        "case": harness.case,
        "calls": HARNESS_CALLS,
        "seconds": HARNESS_SECONDS,
    }
    lines, done = toolchain.run_helper(CHILD, spec, timeout)
    skipped = next((line["skip"] for line in lines if "skip" in line), None)
    if skipped is not None:
        return skipped
    timed = next((line for line in lines if "host" in line), None)
    if timed is None or not done.ok:
        how = "timed out" if done.timed_out else f"exit code {done.returncode}"
        last = (done.errors().strip().splitlines() or [""])[-1][:200]
        return f"the harness failed ({how}) {last}".rstrip()
    return RegionTime(timed["host"], timed["device"], timed["first"], timed["calls"])
