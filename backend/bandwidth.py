"""The roofline figure: how close a candidate's kernels come to the GPU's memory bandwidth.

The roof is measured, not taken from a data sheet: a large device-to-device copy
(runtime/copy_bandwidth.h), once per GPU model, cached in the cache folder by the GPU's
name. A kernel's achieved rate is the bytes its region's transfers moved (copied in, and
copied back: what the offloaded nest reads and writes) per second of kernel time. For a
memory-bound kernel the ratio says how much of the hardware it uses; where data stays on
the device across calls the transfers move less than the kernels touch, so the figure is
a lower bound."""

from __future__ import annotations

import re
import threading
from importlib import resources

from cudaify.backend import gpu
from cudaify.backend.cache import Cache
from cudaify.backend.compile import Build, compile_cuda
from cudaify.backend.gpulock import gpu_index
from cudaify.backend.runner import run_binary
from cudaify.core import content_hash

PROGRAM = "copy_bandwidth.h"
TIMEOUT = 60.0
_MEASURED = re.compile(r"^bytes_per_second\s+(\S+)", re.M)
_KNOWN: dict[str, float | None] = {}


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
        _KNOWN[name] = _cached_or_measured(cache, arch, name)
    return _KNOWN[name]


def _cached_or_measured(cache: Cache, arch: str, name: str) -> float | None:
    key = content_hash("copy-bandwidth", name)
    stored = cache.read_json("bandwidth", key)
    if stored is not None:
        return float(stored["bytes_per_second"])
    measured = measure_bandwidth(cache, arch)
    if measured is not None:
        cache.write_json("bandwidth", key, {"gpu": name, "bytes_per_second": measured})
    return measured


def prepare_bandwidth(cache: Cache, arch: str) -> None:
    """Build the copy program on a thread of its own when this GPU's bandwidth is not
    known yet, so that the measurement (which needs the GPU alone, at the end of a
    search) finds its build cached instead of waiting for nvcc."""
    name = this_gpu()
    if name is None or name in _KNOWN:
        return
    if cache.read_json("bandwidth", content_hash("copy-bandwidth", name)) is not None:
        return
    threading.Thread(
        target=build_copy_program, args=(cache, arch), name="bandwidth", daemon=True
    ).start()


def build_copy_program(cache: Cache, arch: str) -> Build:
    """The copy program's build (cached by its text, like any build)."""
    text = (resources.files("cudaify.backend") / "runtime" / PROGRAM).read_text()
    return compile_cuda(text, (), arch, cache=cache, name="copy_bandwidth.cu")


def measure_bandwidth(cache: Cache, arch: str) -> float | None:
    """Build and run the copy program once."""
    build = build_copy_program(cache, arch)
    if not build.ok or build.binary is None:
        return None
    run = run_binary(build.binary, timeout=TIMEOUT, cuda=True)
    return parse_bandwidth(run.stdout) if run.exit_code == 0 else None


def roofline_percent(
    bytes_moved: float | None, kernel_seconds: float | None, bandwidth: float | None
) -> float | None:
    """Achieved bytes per kernel second as a percentage of `bandwidth`; None where any of
    them is unknown or zero (no kernel ran, nothing was copied)."""
    if not bytes_moved or not kernel_seconds or not bandwidth:
        return None
    return 100.0 * bytes_moved / kernel_seconds / bandwidth


__all__ = [
    "copy_bandwidth",
    "build_copy_program",
    "measure_bandwidth",
    "parse_bandwidth",
    "prepare_bandwidth",
    "roofline_percent",
    "this_gpu",
]
