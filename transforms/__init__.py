"""The optimization methods: each is a node of the reasoning graph and a compiler pass.

`METHODS` lists every method once; the graph, the CLI and the search read it. The first
steps from the sequential program are the mappings (schedule, offload) and the pattern
methods (reduction, scan, sort, compact, scatter, wavefront, atomic_privatize); the others
refine kernels."""

from __future__ import annotations

from cudaify.core.errors import ConfigError
from cudaify.transforms.atomic_privatize import AtomicPrivatize
from cudaify.transforms.base import Method
from cudaify.transforms.coalesce import Coalesce
from cudaify.transforms.compact import Compact
from cudaify.transforms.data_residency import DataResidency
from cudaify.transforms.fast_math import FastMath
from cudaify.transforms.fp_exact import FpExact
from cudaify.transforms.gemm_tiling import GemmTiling
from cudaify.transforms.launch_tuning import LaunchTuning
from cudaify.transforms.narrow_counters import NarrowCounters
from cudaify.transforms.offload import Offload
from cudaify.transforms.readonly_cache import ReadonlyCache
from cudaify.transforms.reduction import ReductionMethod
from cudaify.transforms.register_tiling import RegisterTiling
from cudaify.transforms.scan import Scan
from cudaify.transforms.scatter import Scatter
from cudaify.transforms.schedule import ScheduleMapping
from cudaify.transforms.segmented import Segmented
from cudaify.transforms.shared_tiling import SharedTiling
from cudaify.transforms.sort import Sort
from cudaify.transforms.unroll import Unroll
from cudaify.transforms.wavefront import Wavefront

METHODS: dict[str, Method] = {
    method.name: method
    for method in (
        ScheduleMapping(),
        Offload(),
        Segmented(),
        ReductionMethod(),
        AtomicPrivatize(),
        DataResidency(),
        Scan(),
        Sort(),
        Compact(),
        Scatter(),
        Wavefront(),
        SharedTiling(),
        RegisterTiling(),
        GemmTiling(),
        Coalesce(),
        ReadonlyCache(),
        Unroll(),
        FastMath(),
        LaunchTuning(),
        NarrowCounters(),
        FpExact(),
    )
}


class UnknownMethodError(ConfigError, KeyError):
    """A method name that is not in the registry (a typo in --methods, an old graph)."""

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0])


def get(name: str) -> Method:
    """The registered method called `name`."""
    try:
        return METHODS[name]
    except KeyError:
        known = ", ".join(sorted(METHODS))
        raise UnknownMethodError(f"unknown method '{name}' (known methods: {known})") from None


__all__ = ["METHODS", "Method", "UnknownMethodError", "get"]
