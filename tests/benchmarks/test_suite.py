"""The benchmark suite is usable as cudaify's yardstick: every program is warning-free at
-O3 -Wall, deterministic, documented by its header, and prints checksums that survive
reordering of floating-point operations (checked against a -ffast-math build)."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

from cudaify.core.toolchain import Completed, find_tool, run

SUITE = Path(__file__).resolve().parents[2] / "benchmarks"
REQUIRED_CATEGORIES = {
    "elementwise",
    "reduction",
    "stencil",
    "linalg",
    "nbody",
    "histogram",
    "sparse",
    "dependence",
    "cpp",
    "polybench",
}
HEADER_FIELDS = ("Name", "Category", "Computes", "Pattern", "CPU time")
RTOL = 1e-4  # cudaify's default comparison tolerance
NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
INTEGER = re.compile(r"[-+]?\d+")


def programs() -> list[Path]:
    return sorted(p for p in SUITE.rglob("*") if p.suffix in (".c", ".cpp"))


def program_id(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


def header(path: Path) -> str:
    text = path.read_text()
    return text[: text.index("*/") + 2] if text.startswith("/*") and "*/" in text else ""


def header_field(path: Path, field: str) -> str | None:
    match = re.search(rf"^ \* {re.escape(field)}: (.+)$", header(path), re.MULTILINE)
    return match.group(1).strip() if match else None


def compiler_for(path: Path) -> str:
    return find_tool("g++" if path.suffix == ".cpp" else "gcc")


@cache
def build(path: Path, flags: tuple[str, ...], out_dir: Path) -> tuple[Path, Completed]:
    """Compiled once per (program, flags) for the whole session."""
    tag = re.sub(r"[^A-Za-z0-9]+", "_", "".join(flags))
    exe = out_dir / f"{path.parent.name}_{path.stem}{tag}"
    done = run([compiler_for(path), *flags, "-o", str(exe), str(path), "-lm"], timeout=120)
    return exe, done


@pytest.fixture(scope="session")
def build_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("bench_builds")


def run_small(path: Path, build_dir: Path, extra: tuple[str, ...] = ()) -> str:
    exe, compiled = build(path, ("-O3", "-Wall", "-DBENCH_SMALL", *extra), build_dir)
    assert compiled.ok, compiled.errors()
    done = run([str(exe)], cwd=build_dir, timeout=60)
    assert done.ok, f"{program_id(path)} failed: rc={done.returncode} {done.errors()}"
    return done.text()


def tokens(output: str) -> list[str]:
    return re.findall(r"[^\s=(),:]+", output)


def mismatches(expected: str, actual: str, rtol: float) -> list[str]:
    """Tokens that differ: integers exactly, other numbers beyond rtol, words exactly."""
    want, got = tokens(expected), tokens(actual)
    if len(want) != len(got):
        return [f"{len(want)} tokens expected, {len(got)} printed"]
    wrong = []
    for a, b in zip(want, got, strict=True):
        if INTEGER.fullmatch(a) or not NUMBER.fullmatch(a) or not NUMBER.fullmatch(b):
            if a != b:
                wrong.append(f"{a} != {b}")
            continue
        x, y = float(a), float(b)
        if abs(x - y) > rtol * max(abs(x), abs(y)):
            wrong.append(f"{a} !~ {b}")
    return wrong


def test_suite_has_the_required_breadth() -> None:
    found = programs()
    categories = {p.parent.name for p in found}
    assert len(found) >= 25, [program_id(p) for p in found]
    assert len(categories) >= 8
    assert REQUIRED_CATEGORIES <= categories, REQUIRED_CATEGORIES - categories
    assert len({p.stem for p in found}) == len(found), (
        "program names must be unique across categories"
    )


def test_readme_lists_every_program() -> None:
    readme = (SUITE / "README.md").read_text()
    missing = [program_id(p) for p in programs() if f"`{program_id(p)}`" not in readme]
    assert not missing


@pytest.mark.parametrize("path", programs(), ids=program_id)
def test_header_documents_the_program(path: Path) -> None:
    assert path.read_text().startswith("/*"), "the file must start with the header comment"
    for field in HEADER_FIELDS:
        assert header_field(path, field), f"header lacks '{field}:'"
    assert header_field(path, "Name") == path.stem
    assert header_field(path, "Category") == path.parent.name
    seconds = re.match(r"(\d+(?:\.\d+)?) s\b", header_field(path, "CPU time") or "")
    assert seconds, "CPU time must be a measured number of seconds"
    assert 0.2 <= float(seconds.group(1)) <= 5.0


@pytest.mark.parametrize("path", programs(), ids=program_id)
def test_source_is_self_contained(path: Path) -> None:
    text = path.read_text()
    assert not re.search(r"\b(s?rand|random|time)\s*\(", text), (
        "data must come from the program's own LCG"
    )
    assert "#ifdef BENCH_SMALL" in text
    helpers = re.findall(
        r"^[A-Za-z][\w:<>,\s\*&]*\s[\*&]?(\w+)\([^;]*\)\s*(?:const\s*)?\{", text, re.MULTILINE
    )
    assert set(helpers) - {"main"}, "the hot work must live in functions other than main"


@pytest.mark.parametrize("path", programs(), ids=program_id)
def test_full_size_compiles_without_warnings(path: Path, build_dir: Path) -> None:
    _, compiled = build(path, ("-O3", "-Wall", "-c"), build_dir)
    assert compiled.ok, compiled.errors()
    assert compiled.errors().strip() == "", compiled.errors()


@pytest.mark.parametrize("path", programs(), ids=program_id)
def test_small_run_is_deterministic(path: Path, build_dir: Path) -> None:
    _, compiled = build(path, ("-O3", "-Wall", "-DBENCH_SMALL"), build_dir)
    assert compiled.ok and compiled.errors().strip() == "", compiled.errors()
    first, second = run_small(path, build_dir), run_small(path, build_dir)
    assert first.strip(), "the program must print its checksums"
    assert first == second


@pytest.mark.parametrize("path", programs(), ids=program_id)
def test_checksums_survive_reassociation(path: Path, build_dir: Path) -> None:
    """-ffast-math lets gcc reorder sums and contract multiply-adds, as a GPU version will."""
    strict = run_small(path, build_dir)
    relaxed = run_small(path, build_dir, ("-ffast-math", "-fno-finite-math-only"))
    assert mismatches(strict, relaxed, RTOL) == []


def test_comparison_catches_real_differences() -> None:
    assert mismatches("sum=1.000000e+00 n=3", "sum=1.000050e+00 n=3", RTOL) == []
    assert mismatches("sum=1.000000e+00 n=3", "sum=1.001000e+00 n=3", RTOL) == [
        "1.000000e+00 !~ 1.001000e+00"
    ]
    assert mismatches("n=3", "n=4", RTOL) == ["3 != 4"]
    assert mismatches("a b", "a", RTOL) == ["2 tokens expected, 1 printed"]
