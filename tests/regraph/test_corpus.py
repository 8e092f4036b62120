"""The corpus that builds the graph: enough programs, every pattern the methods target,
hot work outside main, and no program shared with the benchmark suite that evaluates it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cudaify.core import normalised_hash
from cudaify.regraph.build import corpus_programs

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "regraph" / "corpus"
BENCHMARKS = ROOT / "benchmarks"
PROGRAMS = corpus_programs(CORPUS)
SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".cu")


def _sources(folder: Path) -> dict[str, Path]:
    return {normalised_hash(p.read_text()): p for p in folder.rglob("*") if p.suffix in SUFFIXES}


def test_enough_programs_in_every_category():
    assert len(PROGRAMS) >= 40
    categories = {p.parent.name for p in PROGRAMS}
    assert categories >= {
        "elementwise",
        "nest2d",
        "reduction",
        "histogram",
        "stencil",
        "linalg",
        "scan",
        "wavefront",
        "cpp",
    }
    assert sum(p.suffix == ".cpp" for p in PROGRAMS) >= 4


def test_corpus_and_benchmarks_are_disjoint():
    benchmarks = _sources(BENCHMARKS)
    assert len(benchmarks) >= 10, "the benchmark suite was not found"
    shared = [str(p) for key, p in _sources(CORPUS).items() if key in benchmarks]
    assert shared == []
    names = {p.stem for p in BENCHMARKS.rglob("*") if p.suffix in SUFFIXES}
    assert names.isdisjoint({p.stem for p in PROGRAMS})


def test_the_disjointness_check_ignores_comments_and_layout():
    one = "/* a */ int f(int x) {\n  return x + 1; // one\n}\n"
    two = "int f(int x) { return x + 1; }"
    assert normalised_hash(one) == normalised_hash(two)


_FUNCTION_WITH_LOOP = re.compile(
    r"^[ \t]*[A-Za-z_][\w:<>\s\*&,]*?\b(?!main\b)(\w+)\s*\([^;{]*\)"  # a function header
    r"\s*(?:const\s*)?\{(?:(?!^\}).)*?\bfor\s*\(",  # whose body, before a closing }, loops
    re.M | re.S,
)


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_hot_loops_live_outside_main(path):
    text = path.read_text()
    assert _FUNCTION_WITH_LOOP.search(text), f"{path}: no loop in a function other than main"
    assert "printf" in text


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_programs_are_fast_and_deterministic(path):
    from cudaify.backend.compile import compile_reference
    from cudaify.backend.runner import run_binary

    language = "c++" if path.suffix != ".c" else "c"
    build = compile_reference(path.read_text(), language, name=path.name)
    assert build.ok, build.diagnostics
    first = run_binary(build.binary, timeout=10)
    second = run_binary(build.binary, timeout=10)
    assert first.exit_code == 0 and first.stdout.strip()
    assert first.stdout == second.stdout
    assert min(first.seconds, second.seconds) < 1.0


def test_the_loop_check_rejects_work_done_in_main_only():
    assert not _FUNCTION_WITH_LOOP.search(
        "int main(void) {\n    for (int i = 0; i < 3; i++) ;\n}\n"
    )
    assert _FUNCTION_WITH_LOOP.search("void f(int n) {\n    for (;;) ;\n}\nint main(void) {}\n")


def test_curated_trajectories_name_corpus_programs_and_known_methods():
    from cudaify.regraph.build import corpus_trajectories
    from cudaify.regraph.relabel import CANONICAL, relabel
    from cudaify.regraph.trajectory import load

    files = corpus_trajectories(CORPUS)
    assert files, "no curated trajectory in the corpus"
    names = {p.stem for p in PROGRAMS}
    for file in files:
        trajectory = load(file)
        assert trajectory.program in names, file
        assert trajectory.source == "curated"
        assert trajectory.steps
        assert all(relabel(step.method) in CANONICAL for step in trajectory.steps), file
