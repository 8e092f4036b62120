from __future__ import annotations

import pytest

from cudaify.backend import gpu
from cudaify.backend.gpu import GpuInfo, _parse_smi, default_arch, normalise_arch
from cudaify.errors import ConfigError

SMI = (
    "0, GPU-1f2e3d4c-aaaa, NVIDIA H100 80GB HBM3, 9.0, 81559 MiB\n"
    "1, GPU-9b8a7c6d-bbbb, NVIDIA A100-SXM4-40GB, 8.0, 40960 MiB\n"
)


def test_nvidia_smi_csv_is_parsed() -> None:
    assert _parse_smi(SMI) == (
        GpuInfo("NVIDIA H100 80GB HBM3", "9.0", 81559, "0", "GPU-1f2e3d4c-aaaa"),
        GpuInfo("NVIDIA A100-SXM4-40GB", "8.0", 40960, "1", "GPU-9b8a7c6d-bbbb"),
    )
    assert _parse_smi(SMI)[0].arch == "sm_90"


@pytest.mark.parametrize(
    ("setting", "names"),
    [
        (None, ["H100", "A100"]),
        ("1", ["A100"]),
        ("1,0", ["A100", "H100"]),
        ("GPU-9b8a", ["A100"]),  # a UUID's prefix, as the CUDA runtime accepts
        ("0,7,1", ["H100"]),  # the runtime stops at an index it cannot resolve
        ("", []),
        ("-1", []),
        ("MIG-5e6f", ["H100", "A100"]),  # not placeable here: every GPU stays
    ],
)
def test_cuda_visible_devices_chooses_and_orders_the_gpus(
    setting: str | None, names: list[str]
) -> None:
    chosen = gpu.visible(_parse_smi(SMI), setting)
    assert [g.name.split()[1].split("-")[0] for g in chosen] == names


def test_error_lines_from_nvidia_smi_are_not_gpus() -> None:
    text = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n"
    assert _parse_smi(text) == ()


@pytest.mark.parametrize(
    ("spelled", "arch"),
    [
        ("sm_90", "sm_90"),
        ("90", "sm_90"),
        ("9.0", "sm_90"),
        ("compute_86", "sm_86"),
        ("SM_90a", "sm_90a"),
        ("12.0", "sm_120"),
    ],
)
def test_architecture_spellings(spelled: str, arch: str) -> None:
    assert normalise_arch(spelled) == arch


def test_nonsense_architecture_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="sm_90"):
        normalise_arch("hopper")


def test_nvcc_lists_what_it_can_build() -> None:
    supported = gpu.supported_archs()
    assert "sm_80" in supported and "sm_90" in supported
    assert all(arch.startswith("sm_") for arch in supported)


def test_explicit_arch_wins_and_unsupported_arch_is_refused() -> None:
    assert default_arch("sm_86") == "sm_86"
    with pytest.raises(ConfigError, match="supports"):
        default_arch("sm_35")


def test_default_arch_follows_the_gpu_or_is_portable() -> None:
    found = gpu.detect_gpus()
    if found:
        assert default_arch(None) == found[0].arch
    else:
        assert default_arch(None) == gpu.PORTABLE_ARCH


@pytest.mark.gpu
def test_a_gpu_is_detected_with_its_capability() -> None:
    found = gpu.detect_gpus()
    assert gpu.gpu_available() and found
    assert found[0].memory_mib > 1000
    assert found[0].arch in gpu.supported_archs()
