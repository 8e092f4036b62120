"""The roofs: the measured copy bandwidth (and the region's coarse percentage of it); the
peaks' probe is tested beside the per-kernel roofline (test_roofline.py)."""

from __future__ import annotations

import pytest

from cudaify.backend import bandwidth
from cudaify.backend.cache import Cache
from cudaify.backend.gpu import gpu_available
from cudaify.core import content_hash


def test_percent_is_bytes_per_kernel_second_over_the_roof() -> None:
    # 2 GB moved by 1 ms of kernels on a 4 TB/s GPU: 50 % of the roof.
    assert bandwidth.roofline_percent(2e9, 1e-3, 4e12) == pytest.approx(50.0)
    assert bandwidth.roofline_percent(None, 1e-3, 4e12) is None
    assert bandwidth.roofline_percent(2e9, 0.0, 4e12) is None  # no kernel ran
    assert bandwidth.roofline_percent(2e9, 1e-3, None) is None  # no roof measured


def test_parse_reads_the_programs_line() -> None:
    assert bandwidth.parse_bandwidth("bytes_per_second 3.210000e+12\n") == 3.21e12
    assert bandwidth.parse_bandwidth("cudaMalloc: out of memory\n") is None
    assert bandwidth.parse_bandwidth("bytes_per_second nan-ish\n") is None


def test_the_roof_is_read_from_the_cache_by_gpu_name(monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    cache = Cache(tmp_path / "cache")
    monkeypatch.setattr(bandwidth, "this_gpu", lambda: "Test GPU 80GB")
    monkeypatch.setattr(bandwidth, "_KNOWN", {})
    key = content_hash("copy-bandwidth", "Test GPU 80GB")
    cache.write_json("bandwidth", key, {"gpu": "Test GPU 80GB", "bytes_per_second": 1.5e12})
    assert bandwidth.copy_bandwidth(cache, "sm_80") == 1.5e12
    monkeypatch.setattr(bandwidth, "this_gpu", lambda: None)
    assert bandwidth.copy_bandwidth(cache, "sm_80") is None  # no GPU, no roof


def test_the_copy_program_builds_and_measures_where_a_gpu_is(tmp_path) -> None:  # type: ignore[no-untyped-def]
    measured = bandwidth.measure_bandwidth(Cache(tmp_path / "cache"), "sm_80")
    if not gpu_available():
        assert measured is None  # built, ran, and said plainly that it could not measure
        return
    # Any GPU of the last decade copies between 100 GB/s and 20 TB/s (read + written).
    assert measured is not None and 1e11 < measured < 2e13, measured
    print(f"\ncopy bandwidth {measured / 1e9:.0f} GB/s (read + written)")


def test_the_copy_program_is_built_ahead_only_while_the_roof_is_unknown(
    monkeypatch, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    cache = Cache(tmp_path / "cache")
    monkeypatch.setattr(bandwidth, "this_gpu", lambda: "Test GPU 80GB")
    monkeypatch.setattr(bandwidth, "_KNOWN", {})
    monkeypatch.setattr(bandwidth, "_KNOWN_PEAKS", {})
    built: list[str] = []
    monkeypatch.setattr(bandwidth, "build_copy_program", lambda cache, arch: built.append(arch))
    monkeypatch.setattr(
        bandwidth, "build_peak_program", lambda cache, arch: built.append("peak " + arch)
    )

    def prepare() -> None:
        bandwidth.prepare_bandwidth(cache, "sm_90")
        for thread in __import__("threading").enumerate():
            if thread.name == "bandwidth":
                thread.join(5)

    prepare()
    assert built == ["sm_90", "peak sm_90"]
    key = content_hash("copy-bandwidth", "Test GPU 80GB")
    cache.write_json("bandwidth", key, {"gpu": "Test GPU 80GB", "bytes_per_second": 1.5e12})
    prepare()  # the bandwidth measured before: only the peaks' probe to build
    assert built == ["sm_90", "peak sm_90", "peak sm_90"]
    peaks = {"gpu": "Test GPU 80GB", "fp32": 6e13, "fp64": 3e13}
    cache.write_json("bandwidth", bandwidth._peaks_key("Test GPU 80GB"), peaks)
    prepare()  # both measured before: nothing to build
    monkeypatch.setattr(bandwidth, "this_gpu", lambda: None)
    prepare()  # no GPU: nothing to build
    assert built == ["sm_90", "peak sm_90", "peak sm_90"]


def test_the_copy_programs_build_ahead_is_the_measurements_build(tmp_path) -> None:  # type: ignore[no-untyped-def]
    cache = Cache(tmp_path / "cache")
    ahead = bandwidth.build_copy_program(cache, "sm_80")
    assert ahead.ok and not ahead.cached
    assert bandwidth.build_copy_program(cache, "sm_80").cached  # what measure_bandwidth then finds
