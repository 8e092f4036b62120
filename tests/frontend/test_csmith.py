"""Random programs from csmith never crash the frontend (a sample; `make fuzz` runs 500+
through scripts/fuzz_frontend.py)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "fuzz_frontend.py"
SAMPLE_SEEDS = range(1, 7)  # about 2 s each on an idle machine


def _fuzzer():
    spec = importlib.util.spec_from_file_location("fuzz_frontend", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


fuzzer = _fuzzer()
needs_csmith = pytest.mark.skipif(
    fuzzer.missing_tools() is not None, reason=f"csmith sample NOT run: {fuzzer.missing_tools()}"
)


@needs_csmith
@pytest.mark.parametrize("seed", SAMPLE_SEEDS)
def test_csmith_program_is_analysed_without_crashing(seed, tmp_path):
    outcome = fuzzer.fuzz_one(seed, tmp_path)
    assert outcome.status != "failed", f"seed {seed}:\n{outcome.detail}"


@needs_csmith
def test_csmith_programs_are_reproducible_from_their_seed(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()

    def program(seed, folder):  # csmith's header comment names the output path: skip it
        lines = fuzzer.generate(seed, folder).read_text().splitlines()
        return [line for line in lines if "Options:" not in line]

    first = program(7, tmp_path / "a")
    assert first == program(7, tmp_path / "b")
    assert first != program(8, tmp_path / "b")


def test_a_rejected_program_is_fine_and_a_crash_is_a_failure(tmp_path):
    """The harness must be able to fail."""
    source = tmp_path / "case.c"
    source.write_text("int main(void) { return undeclared; }\n")
    assert fuzzer.classify(1, source).status == "rejected"
    source.write_text("int main(void) { int s = 0; for (int i = 0; i < 9; i++) s += i; }\n")
    assert fuzzer.classify(1, source).status == "ok"

    def crashing_check(path, flags):
        raise KeyError("internal")

    outcome = fuzzer.classify(1, source, crashing_check)
    assert outcome.status == "failed" and "KeyError" in outcome.detail
