"""benchmarks/polybench/ is PolyBench/C 4.2.1 as scripts/polybench_import.py writes it: no
generated file was edited by hand or left behind by a change to the script, the sizes became
macros without touching anything else, and `cudaify bench --only polybench` finds all 30."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from cudaify.bench import category_of, discover
from cudaify.core.toolchain import find_tool, run

from .test_suite import RTOL, SUITE, mismatches

REPOSITORY = Path(__file__).resolve().parents[2]
GENERATED = SUITE / "polybench"


def load_importer() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "polybench_import", REPOSITORY / "scripts" / "polybench_import.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


importer = load_importer()
SOURCE: Path = importer.DEFAULT_SOURCE
needs_source = pytest.mark.skipif(
    not (SOURCE / "c").is_dir(),
    reason=f"PolyBench's single-file programs are not at {SOURCE} (a clean clone has no "
    "../shared), so the committed files cannot be compared with a fresh import",
)


def test_bench_finds_every_kernel_as_polybench() -> None:
    found = [p for p in discover(SUITE) if p.parent == GENERATED]
    assert sorted(p.name for p in found) == sorted(
        f"{importer.program_name(kernel)}.c" for kernel in importer.KERNELS
    )
    assert len(found) == 30
    assert {category_of(p) for p in found} == {"polybench"}


def test_sizes_become_macros_and_nothing_else_does() -> None:
    code = "double A[1200][1000]; x = 65535.0f * 0.125; y_1200 = 21200; t <= 1200; f(1000)"
    assert importer.replace_sizes(code, {1200: "PB_N", 1000: "PB_M"}) == (
        "double A[PB_N][PB_M]; x = 65535.0f * 0.125; y_1200 = 21200; t <= PB_N; f(PB_M)"
    )


@needs_source
def test_committed_files_are_what_the_import_writes_now(tmp_path: Path) -> None:
    fresh = {p.name: p.read_bytes() for p in importer.import_all(SOURCE, tmp_path)}
    committed = {p.name: p.read_bytes() for p in GENERATED.iterdir() if p.is_file()}
    assert sorted(committed) == sorted(fresh)
    stale = sorted(name for name, text in fresh.items() if committed[name] != text)
    assert not stale, f"rerun `python scripts/polybench_import.py`: {stale} differ"


@needs_source
@pytest.mark.parametrize("kernel", ["2mm", "correlation", "syr2k"])
def test_full_size_prints_what_polybench_prints(kernel: str, tmp_path: Path) -> None:
    """Kernels whose full-size dataset is the one in ../shared: same numbers as its
    expected output (each runs about half a second)."""
    assert importer.KERNELS[kernel].full == importer.source_dataset(
        (SOURCE / "c" / f"{kernel}.c").read_text()
    )
    exe = tmp_path / kernel
    source = GENERATED / f"{importer.program_name(kernel)}.c"
    built = run([find_tool("gcc"), "-O3", "-o", str(exe), str(source), "-lm"], timeout=120)
    assert built.ok, built.errors()
    done = run([str(exe)], timeout=60)
    assert done.ok, done.errors()
    expected = (SOURCE / "expected" / f"{kernel}.out").read_text()
    assert mismatches(expected, done.text(), RTOL) == []
