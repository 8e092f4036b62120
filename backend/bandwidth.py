"""The roofs of the roofline: the GPU's measured copy bandwidth and its measured fp32 and
fp64 arithmetic peaks.

Both are measured, not taken from a data sheet, once per GPU model and cached in the
cache folder by the GPU's name: the bandwidth by a large device-to-device copy
(runtime/copy_bandwidth.h), the peaks by a grid of independent fused multiply-add chains
in registers, fp32 then fp64, on every SM and no tensor core (runtime/peak_flops.h). Each
probe's build starts ahead on a thread of its own (`prepare_bandwidth`); the runs need the
GPU alone, so callers hold the GPU lock. A probe that fails or prints something
implausible gives None, never an exception: the roofline is then left out.

`roofline_percent` is the region's older, coarser figure (the bytes the region's copies
moved per second of kernel time, against the bandwidth): a lower bound kept for regions
whose kernels cannot be told apart. backend/roofline.py places each kernel under its own
roof."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources

from cudaify.backend import gpu
from cudaify.backend.cache import Cache
from cudaify.backend.compile import Build, compile_cuda
from cudaify.backend.gpulock import gpu_index
from cudaify.backend.runner import run_binary
from cudaify.core import content_hash

PROGRAM = "copy_bandwidth.h"
PEAK_PROGRAM = "peak_flops.h"
TIMEOUT = 60.0
_MEASURED = re.compile(r"^bytes_per_second\s+(\S+)", re.M)
_PEAK = re.compile(r"^(fp32|fp64)_flops_per_second\s+(\S+)", re.M)
# Plausible peaks: anything from a laptop GPU's fp64 (tens of GFLOP/s) to 10x today's
# largest fp32 figure; outside this the probe misread its own timing.
PEAK_RANGE = (1e9, 1e15)
_KNOWN: dict[str, float | None] = {}
_KNOWN_PEAKS: dict[str, Peaks | None] = {}


@dataclass(frozen=True)
class Peaks:
    """The GPU's measured arithmetic peaks, FLOPs per second (an FMA counts 2)."""

    fp32: float
    fp64: float

    def of(self, precision: str) -> float:
        return self.fp64 if precision == "fp64" else self.fp32


def parse_bandwidth(output: str) -> float | None:
    """Bytes per second from the program's output; None when it printed none."""
    match = _MEASURED.search(output)
    if match is None:
        return None
    try:
        value = float(match.group(1))
    except ValueError:
        return None
    return value if value > 0 else None


def parse_peaks(output: str) -> Peaks | None:
    """The fp32 and fp64 peaks from the peak program's output; None unless both are
    there and each is a number within PEAK_RANGE."""
    found: dict[str, float] = {}
    for precision, text in _PEAK.findall(output):
        try:
            value = float(text)
        except ValueError:
            return None
        if not PEAK_RANGE[0] <= value <= PEAK_RANGE[1]:  # also false for nan
            return None
        found[precision] = value
    if set(found) != {"fp32", "fp64"}:
        return None
    return Peaks(fp32=found["fp32"], fp64=found["fp64"])


def this_gpu() -> str | None:
    """The name of the GPU this process runs on, None without one."""
    gpus = gpu.detect_gpus()
    if not gpus:
        return None
    index = gpu_index()
    position = int(index) if index.isdigit() and int(index) < len(gpus) else 0
    return gpus[position].name


def copy_bandwidth(cache: Cache, arch: str) -> float | None:
    """The GPU's device-to-device copy rate in bytes (read + written) per second, measured
    once per GPU model and cached; None without a GPU or when the measurement fails.
    Callers hold the GPU lock: the copy must have the GPU to itself."""
    name = this_gpu()
    if name is None:
        return None
    if name not in _KNOWN:
        stored = _cached_or_measured(
            cache, _bandwidth_key(name), lambda: _as_json(measure_bandwidth(cache, arch)), name
        )
        _KNOWN[name] = float(stored["bytes_per_second"]) if stored else None
    return _KNOWN[name]


def peak_flops(cache: Cache, arch: str) -> Peaks | None:
    """The GPU's fp32 and fp64 peaks (no tensor cores), measured once per GPU model and
    cached; None without a GPU or when the measurement fails. Callers hold the GPU lock."""
    name = this_gpu()
    if name is None:
        return None
    if name not in _KNOWN_PEAKS:
        stored = _cached_or_measured(
            cache, _peaks_key(name), lambda: _peaks_json(measure_peaks(cache, arch)), name
        )
        _KNOWN_PEAKS[name] = _peaks_from(stored)
    return _KNOWN_PEAKS[name]


def _bandwidth_key(name: str) -> str:
    return content_hash("copy-bandwidth", name)


def _peaks_key(name: str) -> str:
    # the probe's text is in the key: a changed probe measures again
    return content_hash("peak-flops", name, _program_text(PEAK_PROGRAM))


def _as_json(bytes_per_second: float | None) -> dict | None:
    return None if bytes_per_second is None else {"bytes_per_second": bytes_per_second}


def _peaks_json(peaks: Peaks | None) -> dict | None:
    return None if peaks is None else {"fp32": peaks.fp32, "fp64": peaks.fp64}


def _peaks_from(stored: dict | None) -> Peaks | None:
    try:
        return Peaks(float(stored["fp32"]), float(stored["fp64"])) if stored else None
    except (KeyError, TypeError, ValueError):
        return None


def _cached_or_measured(
    cache: Cache, key: str, measure: Callable[[], dict | None], name: str
) -> dict | None:
    stored = cache.read_json("bandwidth", key)
    if stored is not None:
        return stored
    measured = measure()
    if measured is not None:
        cache.write_json("bandwidth", key, {"gpu": name, **measured})
    return measured


def prepare_bandwidth(cache: Cache, arch: str) -> None:
    """Build the probes whose figures this GPU does not have yet on a thread of their own,
    so that the measurements (which need the GPU alone, at the end of a search) find
    their builds cached instead of waiting for nvcc."""
    name = this_gpu()
    if name is None:
        return
    builds = []
    if name not in _KNOWN and cache.read_json("bandwidth", _bandwidth_key(name)) is None:
        builds.append(build_copy_program)
    if name not in _KNOWN_PEAKS and cache.read_json("bandwidth", _peaks_key(name)) is None:
        builds.append(build_peak_program)
    if builds:
        threading.Thread(
            target=lambda: [build(cache, arch) for build in builds], name="bandwidth", daemon=True
        ).start()


def _program_text(program: str) -> str:
    return (resources.files("cudaify.backend") / "runtime" / program).read_text()


def build_copy_program(cache: Cache, arch: str) -> Build:
    """The copy program's build (cached by its text, like any build)."""
    return compile_cuda(_program_text(PROGRAM), (), arch, cache=cache, name="copy_bandwidth.cu")


def build_peak_program(cache: Cache, arch: str) -> Build:
    """The peak program's build (cached by its text, like any build)."""
    text = _program_text(PEAK_PROGRAM)
    return compile_cuda(text, (), arch, cache=cache, name="peak_flops.cu")


def measure_bandwidth(cache: Cache, arch: str) -> float | None:
    """Build and run the copy program once."""
    output = _run_probe(build_copy_program(cache, arch))
    return parse_bandwidth(output) if output is not None else None


def measure_peaks(cache: Cache, arch: str) -> Peaks | None:
    """Build and run the peak program once."""
    output = _run_probe(build_peak_program(cache, arch))
    return parse_peaks(output) if output is not None else None


def _run_probe(build: Build) -> str | None:
    """The probe's output, None when it did not build or did not exit cleanly."""
    if not build.ok or build.binary is None:
        return None
    run = run_binary(build.binary, timeout=TIMEOUT, cuda=True)
    return run.stdout if run.exit_code == 0 else None


def roofline_percent(
    bytes_moved: float | None, kernel_seconds: float | None, bandwidth: float | None
) -> float | None:
    """Achieved bytes per kernel second as a percentage of `bandwidth`; None where any of
    them is unknown or zero (no kernel ran, nothing was copied)."""
    if not bytes_moved or not kernel_seconds or not bandwidth:
        return None
    return 100.0 * bytes_moved / kernel_seconds / bandwidth


__all__ = [
    "PEAK_RANGE",
    "Peaks",
    "build_copy_program",
    "build_peak_program",
    "copy_bandwidth",
    "measure_bandwidth",
    "measure_peaks",
    "parse_bandwidth",
    "parse_peaks",
    "peak_flops",
    "prepare_bandwidth",
    "roofline_percent",
    "this_gpu",
]
