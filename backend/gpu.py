"""GPU discovery without importing any CUDA library: `nvidia-smi` tells what is there,
`nvcc --list-gpu-arch` tells what the compiler can target. Both are asked once per process,
and nvidia-smi's answer is kept for the rest of the machine's boot (a file named by the boot,
the driver's version and the GPUs' bus addresses, in the temporary folder): it takes from a
tenth of a second to seconds, which a cached rebuild under make cannot afford."""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from cudaify.core import content_hash, toolchain
from cudaify.core.errors import ConfigError, ToolchainError

# Ampere is the oldest architecture still in wide use that every recent nvcc accepts; a
# binary built for it runs (through its embedded PTX) on every newer GPU.
PORTABLE_ARCH = "sm_80"


@dataclass(frozen=True)
class GpuInfo:
    name: str
    compute_capability: str  # "9.0"
    memory_mib: int
    index: str = ""  # nvidia-smi's, which CUDA_VISIBLE_DEVICES names
    uuid: str = ""

    @property
    def arch(self) -> str:
        major, _, minor = self.compute_capability.partition(".")
        return f"sm_{major}{minor or '0'}"


_QUERY = "--query-gpu=index,uuid,name,compute_cap,memory.total"


def _parse_smi(text: str) -> tuple[GpuInfo, ...]:
    """`nvidia-smi {_QUERY} --format=csv,noheader` lines; anything else is skipped."""
    found = []
    for line in text.splitlines():
        parts = [part.strip() for part in line.split(",")]
        if len(parts) != 5 or not re.fullmatch(r"\d+\.\d+", parts[3]):
            continue
        memory = re.match(r"\d+", parts[4])
        found.append(
            GpuInfo(parts[2], parts[3], int(memory.group()) if memory else 0, parts[0], parts[1])
        )
    return tuple(found)


def visible(gpus: tuple[GpuInfo, ...], setting: str | None) -> tuple[GpuInfo, ...]:
    """The GPUs CUDA lets this process use, in its order, given CUDA_VISIBLE_DEVICES
    (`setting`; None: unset, all of them). Entries are indices or (prefixes of) UUIDs; the
    runtime stops at the first index it cannot resolve, so "" and "-1" hide every GPU. An
    entry nvidia-smi cannot place (a MIG instance's UUID) leaves the whole list, since
    which GPU it lies on is not known here."""
    if setting is None:
        return gpus
    chosen = []
    for entry in (part.strip() for part in setting.split(",")):
        match = next(
            (g for g in gpus if entry and (entry == g.index or g.uuid.startswith(entry))), None
        )
        if match is not None:
            chosen.append(match)
        elif re.fullmatch(r"-?\d*", entry):
            break
        else:
            return gpus
    return tuple(chosen)


@functools.cache
def _detected() -> tuple[GpuInfo, ...]:
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return ()
    remembered = _remembered_answer(smi)
    text = read_remembered(remembered) if remembered is not None else None
    if text is None:
        try:
            done = toolchain.run([smi, _QUERY, "--format=csv,noheader"], timeout=30)
        except ToolchainError:
            return ()
        # nvidia-smi exists but fails (no driver loaded, no device in the container): no GPU.
        if not done.ok:
            return ()
        text = done.text()
        if remembered is not None and _parse_smi(text):
            remember(remembered, text)
    return visible(_parse_smi(text), os.environ.get("CUDA_VISIBLE_DEVICES"))


_BOOT_ID = Path("/proc/sys/kernel/random/boot_id")
_DRIVER = Path("/proc/driver/nvidia")


def _remembered_answer(smi: str) -> Path | None:
    """Where nvidia-smi's answer for this boot, driver and set of GPUs is kept; None where
    the boot or the driver cannot be told (then nvidia-smi is asked every time)."""
    boot = read_remembered(_BOOT_ID)
    version = read_remembered(_DRIVER / "version")
    if boot is None or version is None:
        return None
    try:
        buses = sorted(os.listdir(_DRIVER / "gpus"))
    except OSError:
        return None
    key = content_hash(boot, version, smi, *buses)[:32]
    return Path(tempfile.gettempdir()) / f"cudaify-{os.getuid()}" / f"nvidia-smi-{key}.csv"


def read_remembered(path: Path) -> str | None:
    """A file `remember` wrote (None when there is none, or it cannot be read)."""
    try:
        return path.read_text()
    except OSError:
        return None


def remember(path: Path, text: str) -> None:
    """Write `text` to `path` whole or not at all: a reader, in any process or thread,
    sees the old text or the new, never half. A failure leaves nothing behind: whatever
    it was is found out again next time."""
    staged = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        staged.write_text(text)
        os.replace(staged, path)
    except OSError:
        with contextlib.suppress(OSError):
            staged.unlink()


def forget_detected() -> None:
    """Ask nvidia-smi again on next use (after this process's CUDA_VISIBLE_DEVICES changed)."""
    _detected.cache_clear()


def detect_gpus() -> list[GpuInfo]:
    """The GPUs this process can use (CUDA_VISIBLE_DEVICES respected), in CUDA's order;
    empty where there are none."""
    return list(_detected())


def gpu_available() -> bool:
    return bool(_detected())


@functools.cache
def supported_archs() -> tuple[str, ...]:
    """Real architectures nvcc can build for, e.g. ('sm_75', 'sm_80', ... 'sm_90', ...)."""
    nvcc = toolchain.find_tool("nvcc")
    done = toolchain.run([nvcc, "--list-gpu-arch"], timeout=60)
    numbers = {int(n) for n in re.findall(r"compute_(\d+)", done.text())}
    return tuple(f"sm_{n}" for n in sorted(numbers))


def normalise_arch(text: str) -> str:
    """Accept sm_90, sm_90a, compute_90, 90 or 9.0; return the sm_ spelling."""
    spelled = text.strip().lower()
    if match := re.fullmatch(r"(?:sm_|compute_)?(\d+)(a|f)?", spelled):
        return f"sm_{match.group(1)}{match.group(2) or ''}"
    if match := re.fullmatch(r"(\d+)\.(\d)", spelled):
        return f"sm_{match.group(1)}{match.group(2)}"
    raise ConfigError(f"--arch {text!r}: expected a GPU architecture such as sm_90 or 9.0")


def _arch_number(arch: str) -> int:
    return int(re.sub(r"\D", "", arch))


def default_arch(config_arch: str | None = None) -> str:
    """The architecture to compile for: the configured one, else the first GPU's, else a
    portable default (a compile-only machine still produces code that runs elsewhere)."""
    supported = supported_archs()
    if config_arch:
        arch = normalise_arch(config_arch)
        if supported and f"sm_{_arch_number(arch)}" not in supported:
            raise ConfigError(
                f"--arch {config_arch}: this nvcc cannot build for it; it supports "
                + ", ".join(supported)
            )
        return arch
    gpus = _detected()
    if gpus:
        wanted = _arch_number(gpus[0].arch)
        # A GPU newer than the compiler: the newest older target still runs on it.
        usable = [s for s in supported if _arch_number(s) <= wanted]
        if usable:
            return usable[-1]
    if not supported or PORTABLE_ARCH in supported:
        return PORTABLE_ARCH
    return supported[0]
