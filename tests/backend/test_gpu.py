from __future__ import annotations

import pytest

from cudaify.backend import gpu
from cudaify.backend.gpu import GpuInfo, _parse_smi, default_arch, normalise_arch
from cudaify.core.errors import ConfigError

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


@pytest.fixture
def fake_smi(tmp_path, monkeypatch: pytest.MonkeyPatch):
    """An nvidia-smi on PATH that logs each call; a fake boot id and driver folder."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls"
    smi = bin_dir / "nvidia-smi"
    smi.write_text(f"#!/bin/sh\necho called >> {log}\nprintf '%s' '{SMI}'\n")
    smi.chmod(0o755)
    boot = tmp_path / "boot_id"
    boot.write_text("boot-1\n")
    driver = tmp_path / "driver"
    (driver / "gpus" / "0000:01:00.0").mkdir(parents=True)
    (driver / "version").write_text("NVRM version: 580.1\n")
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setattr(gpu, "_BOOT_ID", boot)
    monkeypatch.setattr(gpu, "_DRIVER", driver)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    gpu.forget_detected()
    yield lambda: len(log.read_text().splitlines()) if log.exists() else 0
    gpu.forget_detected()


def test_nvidia_smi_is_asked_once_per_boot_and_set_of_gpus(fake_smi, tmp_path) -> None:
    assert [g.name for g in gpu.detect_gpus()][0] == "NVIDIA H100 80GB HBM3"
    assert fake_smi() == 1
    gpu.forget_detected()  # a new process: the answer comes from the file
    assert len(gpu.detect_gpus()) == 2 and fake_smi() == 1
    (tmp_path / "boot_id").write_text("boot-2\n")  # after a reboot: asked again
    gpu.forget_detected()
    assert len(gpu.detect_gpus()) == 2 and fake_smi() == 2
    (tmp_path / "driver" / "gpus" / "0000:02:00.0").mkdir()  # another GPU: asked again
    gpu.forget_detected()
    assert len(gpu.detect_gpus()) == 2 and fake_smi() == 3


def test_without_a_boot_id_nvidia_smi_is_asked_every_time(
    fake_smi, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gpu, "_BOOT_ID", tmp_path / "missing")
    for calls in (1, 2):
        gpu.forget_detected()
        assert len(gpu.detect_gpus()) == 2 and fake_smi() == calls


def test_cuda_visible_devices_applies_to_a_remembered_answer(
    fake_smi, monkeypatch: pytest.MonkeyPatch
) -> None:
    gpu.detect_gpus()
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    gpu.forget_detected()
    assert [g.compute_capability for g in gpu.detect_gpus()] == ["8.0"] and fake_smi() == 1
