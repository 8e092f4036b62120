from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from cudaify.backend import runner
from cudaify.backend.cache import Cache
from cudaify.backend.compile import compile_reference
from cudaify.backend.runner import run_binary, time_limit

from . import programs


def build(source: str, cache: Cache) -> Path:
    done = compile_reference(source, "c", cache=cache)
    assert done.ok, done.diagnostics
    assert done.binary is not None
    return done.binary


def test_output_and_exit_code_are_returned(cache: Cache) -> None:
    result = run_binary(build(programs.EXIT_7, cache), timeout=10)
    assert result.stdout == "bye\n"
    assert result.exit_code == 7
    assert result.finished and result.problem() is None


def test_a_hang_is_killed_at_the_limit_and_reported_as_timeout(cache: Cache) -> None:
    started = time.perf_counter()
    result = run_binary(build(programs.HANG, cache), timeout=1.0)
    assert time.perf_counter() - started < 5
    assert result.timed_out and not result.finished
    problem = result.problem(1.0)
    assert problem is not None and problem.kind == "timeout" and "1 s" in problem.message


def test_a_segfault_reports_the_signal(cache: Cache) -> None:
    result = run_binary(build(programs.SEGFAULT, cache), timeout=10)
    assert result.signal_name == "SIGSEGV"
    assert result.exit_code is None
    assert result.stdout == "before\n"
    problem = result.problem()
    assert problem is not None and problem.kind == "crash" and "SIGSEGV" in problem.message


def test_huge_output_is_truncated_and_killed_early(cache: Cache) -> None:
    binary = build(programs.FLOOD, cache)
    started = time.perf_counter()
    result = run_binary(binary, timeout=60)
    elapsed = time.perf_counter() - started
    assert result.truncated and not result.timed_out
    assert len(result.stdout) <= runner.OUTPUT_CAP
    assert elapsed < 10, f"a 100 MB flood took {elapsed:.1f} s to stop"
    problem = result.problem()
    assert problem is not None and problem.kind == "output_cap"


def test_secrets_in_our_environment_are_not_inherited(
    cache: Cache, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUDAIFY_TEST_SECRET", "hunter2")
    assert os.environ["CUDAIFY_TEST_SECRET"] == "hunter2"
    result = run_binary(build(programs.PRINT_ENV, cache), timeout=10)
    assert result.stdout == "secret=(none)\n"


def test_variables_given_explicitly_are_passed(cache: Cache) -> None:
    binary = build(programs.PRINT_ENV, cache)
    result = run_binary(binary, timeout=10, env={"CUDAIFY_TEST_SECRET": "given"})
    assert result.stdout == "secret=given\n"


def test_runs_happen_in_a_fresh_folder_that_is_removed(
    cache: Cache, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    binary = build(programs.WRITE_FILE, cache)
    result = run_binary(binary, timeout=10)
    assert result.stdout == "wrote\n"
    assert not (tmp_path / "scratch.txt").exists()
    assert not list(tmp_path.rglob("scratch.txt"))


def test_stdin_is_closed(cache: Cache) -> None:
    source = '#include <stdio.h>\nint main(void){ printf("%d\\n", getchar()); return 0; }\n'
    assert run_binary(build(source, cache), timeout=10).stdout == "-1\n"


def test_time_limit_is_ten_times_the_reference_at_least_ten_seconds() -> None:
    assert time_limit(0.2) == 10.0
    assert time_limit(3.0) == 30.0
    assert time_limit(None) == 10.0
    assert time_limit(3.0, configured=2.5) == 2.5
