"""The roofline per kernel: where each kernel of a verified variant stands against the
GPU's measured roofs (backend/bandwidth.py: the copy bandwidth, the fp32 and fp64 peaks).

Measured: each kernel function's time and launches inside the region (CUDA events, one
run with CUDAIFY_KERNEL_TIMING set; runtime/kernel_timing.h). Counted from the variant's
text (backend/cost.py `kernel_work`): the bytes one launch must move (its DRAM footprint:
for each array, the distinct elements its accesses' index ranges cover, read and written
counted apart) and its floating-point operations, times the measured launches; a kernel
whose footprint the text does not give (an extent or a trip count it cannot find) gets no
roofline. Hence its achieved bytes/s and FLOP/s and its arithmetic intensity I (FLOPs per
byte); its roof is min(peak, bandwidth x I) with the peak of its precision, and it is
*memory* bound where bandwidth x I is the lower of the two, else *compute* bound. A kernel
without floating-point arithmetic is placed against the bandwidth alone. The percentage
is achieved over roof. Since the bytes are the least the kernel must move, a kernel that
reads an element twice from memory moves more than it is credited with: the memory
percentage is a lower bound."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from cudaify.backend.bandwidth import Peaks
from cudaify.backend.cost import HELPER_SCAN, LIBRARY_SCAN, Work, launched_work
from cudaify.core import KernelRoofline, LaunchValues, Timing
from cudaify.transforms import kernel_text as kt

MEMORY = "memory"
COMPUTE = "compute"
# the distinct sets of launch values the runtime keeps per kernel (kernel_timing.h RECORDS)
MOST_SETS = 256
# cub's scan kernels as the runtime names them (Itanium-mangled, in cub's detail::scan)
_CUB_SCAN_KERNEL = re.compile(r"\d+cub\w*?\d+DeviceScan(Init)?Kernel")
# the runtime's two-pass scan kernels (scan_passes.cuh): pass 1 (`shares`) and the scan (`share`)
_HELPER_SCAN_KERNEL = re.compile(r"^_Z\d+cudaify_scan_share(s?)I")


def place(
    bytes_moved: float,
    flops: float,
    seconds: float,
    precision: str | None,
    bandwidth: float | None,
    peaks: Peaks | None,
) -> tuple[float | None, str | None, float | None]:
    """(roof, bound, percent) of a kernel that moved `bytes_moved` and computed `flops` in
    `seconds`: the roof in FLOP/s (bytes/s for a kernel without floating-point work or
    without a measured peak), the bound that applies, achieved over roof in percent.
    None where a roof it needs is unknown or nothing was measured."""
    if seconds <= 0:
        return None, None, None
    if not flops or precision is None or peaks is None:
        if not bandwidth or not bytes_moved:
            return None, None, None
        return bandwidth, MEMORY, 100.0 * bytes_moved / seconds / bandwidth
    peak = peaks.of(precision)
    if not bytes_moved:
        return peak, COMPUTE, 100.0 * flops / seconds / peak
    if not bandwidth:
        return None, None, None
    memory_roof = bandwidth * flops / bytes_moved
    roof, bound = (memory_roof, MEMORY) if memory_roof < peak else (peak, COMPUTE)
    return roof, bound, 100.0 * flops / seconds / roof


def source_name(reported: str, names: Sequence[str]) -> str | None:
    """The source kernel a reported name is: itself (C linkage), or the kernel whose
    Itanium-mangled name it holds (`_Z12saxpy_kernelifPKfPf` -> saxpy_kernel; templates
    and namespaces included, the longest match first). None when none matches (a
    library's kernel, or an address the runtime could not name)."""
    if reported in names:
        return reported
    for name in sorted(names, key=len, reverse=True):
        if f"{len(name)}{name}" in reported:
            return name
    return None


def kernel_roofline(
    name: str,
    launches: int,
    seconds: float,
    work: Work | None,
    bandwidth: float | None,
    peaks: Peaks | None,
) -> KernelRoofline:
    """One kernel's place under the roofs; without `work` (a kernel the text does not
    show) only its measured time and launches."""
    measured = KernelRoofline(name=name, launches=launches, seconds=seconds)
    if work is None or seconds <= 0:
        return measured
    moved = work.bytes * launches
    # FLOPs in a loop of unknown trips are not counted: the kernel stands against the
    # bandwidth alone, with no bound (a product's k loop of unknown length may well make
    # it compute-bound: calling it memory-bound at 0% would misreport it)
    flops = work.flops * launches if work.flops_known else 0.0
    precision = work.precision if work.flops_known else None
    if not moved:  # nothing counted: no intensity, never "compute bound" for want of bytes
        return replace(measured, bytes=moved, exact=work.exact)
    roof, bound, percent = place(moved, flops, seconds, precision, bandwidth, peaks)
    return replace(
        measured,
        bytes=moved,
        flops=flops if work.flops_known else None,
        precision=precision,
        exact=work.exact,
        bytes_per_second=moved / seconds,
        flops_per_second=flops / seconds if work.flops_known else None,
        intensity=flops / moved if work.flops_known else None,
        roof=roof,
        percent=percent,
        bound=bound if work.flops_known else None,
    )


def with_launches(
    work: Mapping[str, Work],
    code: str,
    launches: Sequence[LaunchValues],
    kernel_times: Sequence[tuple[str, int, float]],
) -> dict[str, Work]:
    """`work` (counted from the text alone) with the kernels it leaves out counted from
    the values their launches passed at run time (cost.launched_work), where those give
    a count: sizes a vector or a call's argument fixes only when the program runs. Only a
    kernel whose every timed launch (`kernel_times`) had its values recorded: the runtime
    keeps the first 256 distinct sets, and the rest of a wavefront's growing and
    shrinking diagonals would not have the first ones' mean (PolyBench seidel-2d's first
    32 read 0.01% of the bandwidth)."""
    names = [kernel.name for kernel in kt.kernels(kt.encode(code))]
    timed = {reported: count for reported, count, _ in kernel_times}
    recorded: dict[str, int] = {}
    for launch in launches:
        recorded[launch.kernel] = recorded.get(launch.kernel, 0) + launch.count
    by_kernel: dict[str, list[LaunchValues]] = {}
    for launch in launches:
        name = source_name(launch.kernel, names)
        whole = recorded[launch.kernel] >= timed.get(launch.kernel, 0) > 0
        if name is not None and name not in work and whole:
            by_kernel.setdefault(name, []).append(launch)
    # the report is the candidate's own output: no more sets than the runtime keeps
    by_kernel = {name: sets for name, sets in by_kernel.items() if len(sets) <= MOST_SETS}
    found = dict(work)
    for name, values in by_kernel.items():
        counted = launched_work(code, name, values)
        if counted is not None:
            found[name] = counted
    return found


def with_kernels(
    timing: Timing, work: Mapping[str, Work], bandwidth: float | None, peaks: Peaks | None
) -> Timing:
    """`timing` with a roofline entry per timed kernel (`timing.kernel_times`), the
    region's figure their percentages weighted by time, and the bound of the kernel that
    took the most time. Without per-kernel figures `timing` is returned as it is."""
    names = list(work)
    kernels = []
    times = _library_scans(timing.kernel_times)
    for reported, launches, seconds in times:
        grouped = reported in (LIBRARY_SCAN, HELPER_SCAN)
        name = reported if grouped else source_name(reported, names)
        found = work.get(name) if name is not None else None
        kernels.append(
            kernel_roofline(name or reported, launches, seconds, found, bandwidth, peaks)
        )
    placed = [k for k in kernels if k.percent is not None]
    if not placed:
        return replace(timing, kernels=tuple(kernels))
    weight = sum(k.seconds for k in placed)
    percent = sum(k.seconds * (k.percent or 0.0) for k in placed) / weight
    dominant = max(placed, key=lambda k: k.seconds)
    return replace(timing, kernels=tuple(kernels), roofline_percent=percent, bound=dominant.bound)


def _library_scans(
    kernel_times: Sequence[tuple[str, int, float]],
) -> list[tuple[str, int, float]]:
    """`kernel_times` with cub's scan kernels taken together as LIBRARY_SCAN: the time of
    every instantiation of its scan and init kernels, and the scan kernel's launches (one
    per call), since the text counts the work of a call, not of a kernel of the library.
    The runtime's two-pass scan kernels alike, as HELPER_SCAN: a call launches the scan
    (`share`) once, after pass 1 (`shares`) where there are several shares."""
    helper = _grouped(
        list(kernel_times),
        _HELPER_SCAN_KERNEL.match,
        HELPER_SCAN,
        lambda found: sum(n for n, first in found if not first),
    )
    return _grouped(
        helper,
        _CUB_SCAN_KERNEL.search,
        LIBRARY_SCAN,
        lambda found: sum(n for n, init in found if not init),
    )


def _grouped(
    kernel_times: list[tuple[str, int, float]],
    kind: Callable[[str], re.Match[str] | None],
    name: str,
    calls: Callable[[list[tuple[int, str | None]]], int],
) -> list[tuple[str, int, float]]:
    """`kernel_times` with the kernels `kind` matches taken together, last, as `name`: all
    their time, and `calls(found)` launches, from each one's (launches, the match's first
    group); unchanged where that count is 0."""
    kinds = [kind(reported) for reported, _, _ in kernel_times]
    found = [(entry, match) for entry, match in zip(kernel_times, kinds, strict=True) if match]
    count = calls([(entry[1], match[1] or None) for entry, match in found])
    if not count:
        return kernel_times
    rest = [entry for entry, match in zip(kernel_times, kinds, strict=True) if not match]
    return [*rest, (name, count, sum(entry[2] for entry, _ in found))]


def describe(kernel: KernelRoofline) -> str:
    """One short line: `saxpy_kernel: 81% of the memory roof (2.71 TB/s, 0.17 FLOP/B,
    fp32), 1 launch, 0.51 ms`."""
    launches = f"{kernel.launches} launch" + ("es" if kernel.launches != 1 else "")
    timed = f"{launches}, {kernel.seconds * 1e3:.3g} ms"
    if kernel.percent is None or kernel.bound is None:
        return f"{kernel.name}: {timed} (no roofline: its work is not counted)"
    if kernel.bound == MEMORY:
        rate = f"{(kernel.bytes_per_second or 0) / 1e12:.3g} TB/s"
    else:
        rate = f"{(kernel.flops_per_second or 0) / 1e12:.3g} TFLOP/s"
    intensity = f", {kernel.intensity:.3g} FLOP/B" if kernel.intensity is not None else ""
    precision = f", {kernel.precision}" if kernel.precision else ""
    estimated = "" if kernel.exact else ", work estimated"
    return (
        f"{kernel.name}: {kernel.percent:.0f}% of the {kernel.bound} roof "
        f"({rate}{intensity}{precision}{estimated}), {timed}"
    )


def header_lines(timing: Timing, most: int = 3) -> list[str]:
    """The roofline lines of the output's header: the kernels that took the most time,
    at most `most` of them; none when no kernel was placed."""
    placed = sorted(timing.kernels, key=lambda k: k.seconds, reverse=True)
    if not any(k.percent is not None for k in placed):
        return []
    lines = ["Roofline (kernel time by CUDA events; bytes and FLOPs counted from the code):"]
    lines.extend("  " + describe(kernel) for kernel in placed[:most])
    if len(placed) > most:
        lines.append(f"  and {len(placed) - most} more kernel(s)")
    return lines


__all__ = [
    "COMPUTE",
    "MEMORY",
    "describe",
    "header_lines",
    "kernel_roofline",
    "place",
    "source_name",
    "with_kernels",
    "with_launches",
]
