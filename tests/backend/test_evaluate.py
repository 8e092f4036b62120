"""The evaluator end to end. Candidates here are .cu files whose host code makes no CUDA
call, so they really run on a machine without a GPU; `run_on_gpu=True` tells the evaluator
to run them anyway (the real GPU path is in the gpu-marked tests)."""

from __future__ import annotations

import contextlib
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from cudaify.backend.cache import Cache
from cudaify.backend.evaluate import (
    NOTHING_RAN,
    ROUNDING_BRANCH_NOTE,
    ROUNDING_NOTE,
    Evaluator,
)
from cudaify.backend.gpu import gpu_available
from cudaify.core import Evaluation, Problem, Stage, Timing, Variant
from cudaify.core.config import Config
from cudaify.core.errors import InputError, SourceError
from cudaify.frontend.facts import Program

REFERENCE = """#include <stdio.h>
#include <time.h>
double work(int n) {
    struct timespec pause = {0, 50000000};
    nanosleep(&pause, NULL);
    double s = 0;
    for (int i = 1; i <= n; i++) s += 1.0 / i;
    return s;
}
int main(void) {
    double total = 0;
    for (int r = 0; r < 3; r++) total += work(1000);
    printf("total %.6f\\ncount %d\\n", total, 3);
    return 0;
}
"""

# The candidate computes the same sum in the opposite order: equal within the tolerance.
CANDIDATE = """#include <cstdio>
#include <ctime>
double work(int n) {
    timespec pause = {0, 50000000};
    nanosleep(&pause, nullptr);
    double s = 0;
    for (int i = n; i >= 1; i--) s += 1.0 / i;
    return s;
}
int main() {
    double total = 0;
    for (int r = 0; r < 3; r++) total += work(1000);
    std::printf("total %.6f\\ncount %d\\n", total, 3);
    return 0;
}
"""


def program(tmp_path: Path, source: str = REFERENCE) -> Program:
    path = tmp_path / "input.c"
    path.write_text(source)
    return Program(path=str(path), source=source, language="c")


def evaluator(tmp_path: Path, cache: Cache, run: bool, **settings: object) -> Evaluator:
    config = Config(runs=settings.pop("runs", 5), **settings)  # type: ignore[arg-type]
    return Evaluator(program(tmp_path), config, cache=cache, run_on_gpu=run)


def candidate(code: str = CANDIDATE, offloaded: tuple[str, ...] = ("work",)) -> Variant:
    return Variant(code=code, node="parallel_for", offloaded=offloaded)


def test_without_a_gpu_it_compiles_and_says_plainly_nothing_ran(
    tmp_path: Path, cache: Cache
) -> None:
    result = evaluator(tmp_path, cache, run=False).evaluate(candidate())
    assert result.stage == Stage.COMPILE
    assert not result.ran_on_gpu and not result.verified
    assert result.problems[0].kind == "not_run"
    assert result.why == f"not_run: {NOTHING_RAN}"
    assert "nothing was run" in result.why
    assert result.timing.wall is None and result.compile_seconds > 0


def test_default_is_to_run_only_where_a_gpu_is_found(tmp_path: Path, cache: Cache) -> None:
    default = Evaluator(program(tmp_path), Config(), cache=cache)
    assert default.run_on_gpu == gpu_available()


def test_compile_error_stops_before_compile_with_the_line(tmp_path: Path, cache: Cache) -> None:
    broken = CANDIDATE.replace("double s = 0;", "double s = 0")
    result = evaluator(tmp_path, cache, run=False).evaluate(candidate(broken))
    assert result.stage == Stage.STRUCTURE
    assert result.problems[0].kind == "compile"
    assert result.problems[0].line == 7
    assert "candidate.cu(7): error" in result.problems[0].message


def test_correct_candidate_is_verified_and_timed(tmp_path: Path, cache: Cache) -> None:
    result = evaluator(tmp_path, cache, run=True).evaluate(candidate())
    assert result.stage == Stage.CORRECT, result.problems
    assert result.verified and result.problems == ()
    assert result.timing.runs == 5 and result.reference.runs == 5
    for timing in (result.timing, result.reference):
        assert timing.region is not None and 0.145 <= timing.region <= 0.35
        assert timing.wall is not None and timing.wall >= timing.region
    assert result.timing.context is not None
    assert result.region_speedup is not None and 0.5 < result.region_speedup < 2.0


def test_planted_wrong_output_is_caught_at_run(tmp_path: Path, cache: Cache) -> None:
    wrong = CANDIDATE.replace("s += 1.0 / i;", "s += 1.0 / (i + 1);")
    result = evaluator(tmp_path, cache, run=True).evaluate(candidate(wrong))
    assert result.stage == Stage.RUN and result.ran_on_gpu
    problem = result.problems[0]
    assert problem.kind == "output" and "token 2" in problem.message
    assert "expected '22.456413', got '19.459410'" in problem.message


def test_a_mismatch_by_rounding_only_is_told_from_a_wrong_output(
    tmp_path: Path, cache: Cache
) -> None:
    run = evaluator(tmp_path, cache, run=True, runs=1)
    # 2e-4 off (an FMA's worth on a long sum): rejected, but said to be rounding only
    close = run.screen(candidate(CANDIDATE.replace("total, 3)", "total * 1.0002, 3)")))
    assert close.stage == Stage.RUN and close.rounding_only
    assert close.problems[0].kind == "output"
    assert close.problems[0].message.endswith(ROUNDING_NOTE)
    # 10% off, or an integer changed: a wrong output, not rounding
    far = run.screen(candidate(CANDIDATE.replace("total, 3)", "total * 1.1, 3)")))
    assert far.stage == Stage.RUN and not far.rounding_only
    count = run.screen(candidate(CANDIDATE.replace("total, 3)", "total * 1.0002, 4)")))
    assert count.stage == Stage.RUN and not count.rounding_only
    # the exit code must match too
    exit_code = CANDIDATE.replace("total, 3)", "total * 1.0002, 3)").replace(
        "return 0;\n}\n", "return 2;\n}\n"
    )
    assert not run.screen(candidate(exit_code)).rounding_only


def test_a_mismatch_of_kernels_that_compare_floats_is_said_to_be_one_rounding_may_decide(
    tmp_path: Path, cache: Cache
) -> None:
    """An integer changed (an argmin's index) is no rounding; but where a kernel compares
    doubles, an FMA may have decided it, so fp_exact's rescue is worth a try."""
    run = evaluator(tmp_path, cache, run=True, runs=1)
    wrong_count = CANDIDATE.replace("total, 3)", "total, 4)")
    comparing = (
        "__global__ void nearest(const double *d, int n, int *k)\n{\n    double best = 1e300;\n"
        "    for (int i = 0; i < n; i++)\n        if (d[i] < best) { best = d[i]; *k = i; }\n}\n"
    )
    counting = comparing.replace("double best = 1e300;", "int best = 1 << 30;").replace(
        "const double *d", "const int *d"
    )
    decided = run.screen(candidate(comparing + wrong_count))
    assert decided.stage == Stage.RUN and decided.rounding_may_decide
    assert not decided.rounding_only and decided.rounding_suspect
    assert decided.problems[0].message.endswith(ROUNDING_BRANCH_NOTE)
    integers = run.screen(candidate(counting + wrong_count))
    assert integers.stage == Stage.RUN and not integers.rounding_suspect
    # a host comparison of doubles is no kernel's: the work() loop compares ints only anyway
    host = run.screen(
        candidate(
            wrong_count.replace(
                "int main() {", "bool less(double a, double b) { return a < b; }\nint main() {"
            )
        )
    )
    assert host.stage == Stage.RUN and not host.rounding_suspect


def test_a_verified_output_records_the_tolerance_it_matched_at(
    tmp_path: Path, cache: Cache
) -> None:
    run = evaluator(tmp_path, cache, run=True, runs=1)
    exact = run.screen(candidate())  # the same digits, summed in another order
    assert exact.verified and exact.tolerance == (0.0, 0.0)
    close = run.screen(candidate(CANDIDATE.replace("total, 3)", "total * 1.000001, 3)")))
    assert close.verified and close.tolerance == (1e-4, 1e-9)
    assert not close.rounding_only


def test_different_exit_code_is_caught(tmp_path: Path, cache: Cache) -> None:
    wrong = CANDIDATE.replace("return 0;\n}\n", "return 2;\n}\n")
    result = evaluator(tmp_path, cache, run=True).evaluate(candidate(wrong))
    assert result.stage == Stage.RUN
    assert result.problems[0].kind == "exit_code"


def test_hanging_candidate_times_out(tmp_path: Path, cache: Cache) -> None:
    hang = CANDIDATE.replace("int main() {", "int main() {\n    for (volatile int k = 0;;) k++;")
    started = time.perf_counter()
    result = evaluator(tmp_path, cache, run=True, run_timeout=1.0).evaluate(candidate(hang))
    assert time.perf_counter() - started < 30
    assert result.stage == Stage.COMPILE
    assert result.problems[0].kind == "timeout"


def test_crashing_candidate_reports_the_signal(tmp_path: Path, cache: Cache) -> None:
    crash = CANDIDATE.replace("return 0;\n}\n", "return *(volatile int *)nullptr;\n}\n")
    result = evaluator(tmp_path, cache, run=True).evaluate(candidate(crash, offloaded=()))
    assert result.stage == Stage.COMPILE
    assert result.problems[0].kind == "crash" and "SIGSEGV" in result.problems[0].message


def test_reference_is_cached_on_disk(tmp_path: Path, cache: Cache) -> None:
    first = evaluator(tmp_path, cache, run=True).reference()
    second = evaluator(tmp_path, cache, run=True).reference()
    assert not first.cached and second.cached
    assert second.stdout == first.stdout and second.stdout.startswith("total 22.45")
    assert second.exit_code == 0 and second.seconds == first.seconds


def test_reference_that_does_not_compile_is_a_source_error(tmp_path: Path, cache: Cache) -> None:
    bad = Evaluator(program(tmp_path, "int main(void) { return x; }\n"), Config(), cache=cache)
    with pytest.raises(SourceError, match=r"input.c:1:\d+: error"):
        bad.reference()


def test_evaluate_many_keeps_order(tmp_path: Path, cache: Cache) -> None:
    variants = [candidate(), candidate("int main( {"), candidate(CANDIDATE.replace("3);", "4);"))]
    results = evaluator(tmp_path, cache, run=True, runs=1).evaluate_many(variants)
    assert [r.stage for r in results] == [Stage.CORRECT, Stage.STRUCTURE, Stage.RUN]


def test_offloaded_names_the_candidate_lacks_are_left_out_of_the_region(
    tmp_path: Path, cache: Cache
) -> None:
    result = evaluator(tmp_path, cache, run=True, runs=1).evaluate(
        candidate(offloaded=("work", "inlined_away"))
    )
    assert result.stage == Stage.CORRECT, result.problems
    assert result.timing.region is not None and 0.145 <= result.timing.region <= 0.35
    assert result.reference.region is not None and 0.145 <= result.reference.region <= 0.35


TWO_FUNCTIONS = """#include <stdio.h>
#include <time.h>
static void pause_ms(long ms) {
    struct timespec pause = {0, ms * 1000000L};
    nanosleep(&pause, NULL);
}
double hot(int n) {
    pause_ms(120);
    double s = 0;
    for (int i = 1; i <= n; i++) s += 1.0 / i;
    return s;
}
double cold(int n) {
    pause_ms(5);
    double s = 0;
    for (int i = 1; i <= n; i++) s += 2.0 / i;
    return s;
}
int main(void) {
    printf("%.6f %.6f\\n", hot(1000), cold(1000));
    return 0;
}
"""


def test_without_a_gpu_a_candidate_is_ranked_by_the_cpu_time_it_moves(
    tmp_path: Path, cache: Cache
) -> None:
    """The reference's per-function profile (one CPU run of its timing build) says how much
    of the program each candidate takes to the GPU: the hot function's candidate ranks
    above the cold one's, both below any verified variant."""
    from cudaify.mcgs.reward import HOT_SHARE, reward

    ev = Evaluator(program(tmp_path, TWO_FUNCTIONS), Config(), cache=cache, run_on_gpu=False)
    code = TWO_FUNCTIONS.replace("#include <stdio.h>", "#include <cstdio>")
    hot = ev.evaluate(candidate(code, offloaded=("hot",)))
    cold = ev.evaluate(candidate(code, offloaded=("cold",)))
    assert hot.stage == cold.stage == Stage.COMPILE and not hot.ran_on_gpu
    assert hot.reference.region is not None and hot.reference.region >= 0.12
    assert cold.reference.region is not None and cold.reference.region < 0.05
    assert 0.0 < reward(cold) < reward(hot) <= HOT_SHARE < 0.25
    # nothing to profile: no offloaded function, or an input that fails
    assert ev.evaluate(candidate(code, offloaded=())).reference.region is None
    broken = TWO_FUNCTIONS.replace("return 0;", "return *(volatile int *)0;")
    failing = Evaluator(program(tmp_path, broken), Config(), cache=cache, run_on_gpu=False)
    assert failing.evaluate(candidate(code, offloaded=("hot",))).reference.region is None


def test_the_whole_program_timed_on_a_shared_gpu_is_estimated_from_parts() -> None:
    """Under make -j16 a verified 2x variant's wall time read as slower than the CPU: the
    other programs' GPU work was in it. Then the time outside the region is the
    reference's, the region this variant's as measured, CUDA's start the GPU's alone."""
    reference = Timing(wall=1.0, region=0.8)
    shared = Timing(wall=2.5, region=0.3, context=1.1, shared_by=16, context_alone=0.2)
    evaluation = Evaluation(
        stage=Stage.CORRECT, ran_on_gpu=True, timing=shared, reference=reference
    )
    assert evaluation.program_speedup_estimated
    assert evaluation.program_speedup == pytest.approx(1.0 / (0.2 + 0.3 + 0.2))
    # without CUDA's start alone, the start as measured (shared: an overestimate)
    unknown = replace(evaluation, timing=replace(shared, context_alone=None))
    assert unknown.program_speedup == pytest.approx(1.0 / (0.2 + 0.3 + 1.1))
    # never above what was measured
    fast = replace(evaluation, timing=replace(shared, wall=0.5))
    assert fast.program_speedup == pytest.approx(1.0 / 0.5)
    # the GPU alone: measured, as always
    alone = replace(evaluation, timing=replace(shared, shared_by=1))
    assert not alone.program_speedup_estimated and alone.program_speedup == 1.0 / 2.5
    # CUDA's whole fixed cost known (start, context, teardown): it replaces the context,
    # unless the context alone read more
    whole = replace(evaluation, timing=replace(shared, start_alone=0.45))
    assert whole.program_speedup == pytest.approx(1.0 / (0.2 + 0.3 + 0.45))
    less = replace(evaluation, timing=replace(shared, start_alone=0.15))
    assert less.program_speedup == pytest.approx(1.0 / (0.2 + 0.3 + 0.2))
    probe_only = replace(evaluation, timing=replace(shared, start_alone=0.45, context_alone=None))
    assert probe_only.program_speedup == pytest.approx(1.0 / (0.2 + 0.3 + 0.45))


def test_cudas_fixed_cost_is_measured_once_for_the_gpu(
    tmp_path: Path, cache: Cache, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a GPU, the first evaluation measures the probe that only starts CUDA and exits
    (built by nvcc, START_RUNS runs, the least wall kept beside the GPU's lock); every
    later evaluator of the machine reads it and runs nothing; the timings carry it. A
    probe whose runs fail leaves it unknown and is tried once an evaluator. Without a
    GPU, or where this machine has none (a cluster's evaluator), nothing runs."""
    from cudaify.backend import evaluate as evaluate_mod
    from cudaify.backend.runner import RunResult
    from cudaify.backend.timing import Sample

    asked: list[Path] = []
    failing = [True]

    def runs(binary: Path, *, runs: int, **kwargs: Any) -> tuple[list[Sample], Problem | None]:
        asked.append(binary)
        if failing[0]:
            return [], Problem("run", "no CUDA-capable device is detected")
        walls = (0.31, 0.29, 0.30)[:runs]
        return [Sample(RunResult("", 0, None, False, False, w), None, 0, None) for w in walls], None

    monkeypatch.setattr(evaluate_mod, "timed_runs", runs)
    monkeypatch.setattr(evaluate_mod.gpu, "gpu_available", lambda: True)
    broken = evaluator(tmp_path, cache, run=True)
    broken._measure_start()
    broken._measure_start()
    assert len(asked) == 1 and broken._start_alone() is None  # one try, nothing kept
    assert Path(asked[0]).is_file()  # nvcc built the probe
    failing[0] = False
    first = evaluator(tmp_path, cache, run=True)
    first._measure_start()
    assert len(asked) == 2 and first._start_alone() == pytest.approx(0.29)
    assert first._sharing(Timing(context=0.1), users=4).start_alone == pytest.approx(0.29)
    later = evaluator(tmp_path, cache, run=True)
    later._measure_start()
    assert len(asked) == 2 and later._start_alone() == pytest.approx(0.29)
    evaluator(tmp_path, cache, run=False)._measure_start()
    monkeypatch.setattr(evaluate_mod.gpu, "gpu_available", lambda: False)
    elsewhere = Evaluator(
        program(tmp_path), Config(), cache=Cache(tmp_path / "other"), run_on_gpu=True
    )
    elsewhere._measure_start()  # told it runs on a GPU, but none is here (a test's, a cluster's)
    assert len(asked) == 2 and elsewhere._start_alone() is None


def test_cudas_start_alone_is_the_least_measured_with_the_gpu_alone(
    tmp_path: Path, cache: Cache
) -> None:
    run = evaluator(tmp_path, cache, run=True)
    assert run._sharing(Timing(context=0.3), users=1).context_alone == 0.3
    assert run._sharing(Timing(context=0.5), users=1).context_alone == 0.3  # the least kept
    shared = run._sharing(Timing(context=0.9), users=16)  # shared: learns nothing
    assert (shared.shared_by, shared.context_alone) == (16, 0.3)
    assert run._sharing(Timing(context=0.25), users=1).context_alone == 0.25
    # beside the GPU's lock, for every process of this machine
    again = evaluator(tmp_path, cache, run=True)
    assert again._sharing(Timing(), users=4).context_alone == 0.25


# Each run appends a line to RUNS; with FIRST_SLEEPS the first one (no line yet) sleeps
# 60 s; with CRASHES each run aborts.
AHEAD = """#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
double work(int n) {
    double s = 0;
    for (int i = 1; i <= n; i++) s += 1.0 / i;
    return s;
}
int main(void) {
    int before = 0;
    FILE *runs = fopen(RUNS, "r");
    if (runs) {
        for (int c = fgetc(runs); c != EOF; c = fgetc(runs)) before += c == '\\n';
        fclose(runs);
    }
    runs = fopen(RUNS, "a");
    fputs("ran\\n", runs);
    fclose(runs);
    if (before == 0 && FIRST_SLEEPS) sleep(60);
    if (CRASHES) abort();
    printf("total %.6f\\n", work(1000));
    return 0;
}
"""


def started_ahead(tmp_path: Path, cache: Cache, first_sleeps: int = 0, crashes: int = 0):
    """An evaluator of AHEAD whose reference start_ahead began, once its run has started;
    and the file its runs append to."""
    from cudaify.pipeline import prepare

    runs = tmp_path / "runs.txt"
    path = tmp_path / "ahead.c"
    defines = f'#define RUNS "{runs}"\n#define FIRST_SLEEPS {first_sleeps}\n'
    path.write_text(defines + f"#define CRASHES {crashes}\n" + AHEAD)
    evaluator = Evaluator(prepare(str(path), Config()), Config(), cache=cache, run_on_gpu=True)
    assert evaluator.region == ("work",)
    evaluator._start_reference()
    began = time.monotonic()
    while not runs.exists() and time.monotonic() - began < 60:
        time.sleep(0.05)
    return evaluator, runs


def test_the_reference_started_ahead_is_the_run_the_search_gets(
    tmp_path: Path, cache: Cache
) -> None:
    """start_ahead builds and runs the reference on another thread while the search
    applies its first rules; asking for it then takes that run, not a second one."""
    evaluator, runs = started_ahead(tmp_path, cache)
    reference = evaluator.reference()
    assert reference.stdout.startswith("total 7.485") and reference.exit_code == 0
    assert runs.read_text() == "ran\n"
    assert evaluator.reference() is reference


def test_a_reference_started_ahead_fails_once_and_says_why(tmp_path: Path, cache: Cache) -> None:
    evaluator, runs = started_ahead(tmp_path, cache, crashes=1)
    with pytest.raises(InputError, match="the input program itself failed"):
        evaluator.reference()
    assert runs.read_text() == "ran\n"  # not run again to find out


def test_a_reference_close_stopped_is_run_again_when_asked(tmp_path: Path, cache: Cache) -> None:
    """close() (the search ended without needing the reference) kills its run; a later
    request (the finalists') runs it again instead of reporting the kill as the input's
    failure."""
    evaluator, runs = started_ahead(tmp_path, cache, first_sleeps=1)
    began = time.monotonic()
    evaluator.close()
    reference = evaluator.reference()
    assert time.monotonic() - began < 30  # the 60 s sleep was killed
    assert reference.stdout.startswith("total 7.485") and runs.read_text() == "ran\nran\n"


def test_a_program_with_no_loop_outside_main_starts_no_reference(
    tmp_path: Path, cache: Cache
) -> None:
    path = tmp_path / "flat.c"
    path.write_text('#include <stdio.h>\nint main(void) { printf("%d\\n", 4); return 0; }\n')
    from cudaify.pipeline import prepare

    evaluator = Evaluator(prepare(str(path), Config()), Config(), cache=cache, run_on_gpu=True)
    evaluator._start_reference()
    assert evaluator._reference_ahead is None


def test_without_a_gpu_nothing_is_timed_in_turns(tmp_path: Path) -> None:
    """The close call's turns (Evaluator.in_turns) need the GPU: without one they say so
    and nothing is built or run."""
    ev = evaluator(tmp_path, Cache(tmp_path / "cache"), run=False)
    assert ev.in_turns(candidate(), 3) == "no GPU"
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").rglob("program"))


def test_turns_whose_build_fails_say_what_the_compiler_said(
    tmp_path: Path, cache: Cache, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A close call whose plain build fails (nvcc cut by the deadline, say) is not timed,
    and the reason carries the compiler's first line: "its build failed" alone did not
    tell a deadline from a broken program."""
    from cudaify.backend.compile import Build

    ev = evaluator(tmp_path, cache, run=True)
    cut = Build(False, None, "nvcc did not finish in 2.5 s\nmore", 2.5, False)
    monkeypatch.setattr(ev, "_plain_build", lambda variant: cut)
    assert ev.in_turns(candidate(), 3) == "its build failed: nvcc did not finish in 2.5 s"


def test_turns_that_waited_for_the_gpu_run_only_what_still_fits(
    tmp_path: Path, cache: Cache, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The close call's turns are counted when asked for; the wait for the GPU alone comes
    after (1-15 s under bench -j 4). Once it is held, only the turns that still fit before
    the deadline run (each run cut at it too), and the runs made are returned; where none
    fits, nothing runs and the reason says so."""
    from types import SimpleNamespace

    from cudaify.backend import evaluate as evaluate_mod
    from cudaify.backend.budget import Deadline
    from cudaify.backend.compile import Build

    ev = evaluator(tmp_path, cache, run=True)
    binary = tmp_path / "program"
    made = Build(True, binary, "", 0.1, False)
    monkeypatch.setattr(ev, "_plain_build", lambda variant: made)
    monkeypatch.setattr(ev, "_compile_reference", lambda: made)
    monkeypatch.setattr(ev, "reference", lambda: SimpleNamespace(seconds=1.0))
    clock = [0.0]
    ev.deadline = Deadline(30.0, clock=lambda: clock[0])
    waited = {"seconds": 0.0}

    @contextlib.contextmanager
    def hold(exclusive: bool, kind: str = "run"):  # type: ignore[no-untyped-def]
        clock[0] += waited["seconds"]  # the wait for the GPU alone
        yield

    ran: list[tuple[int, float]] = []

    def turns(first, second, runs, timeout=None, warm=True, left=None):  # type: ignore[no-untyped-def]
        ran.append((runs, left()))
        return [1.0] * runs, [0.8] * runs, ("", "")

    monkeypatch.setattr(ev, "_hold", hold)
    monkeypatch.setattr(evaluate_mod, "in_turns", turns)
    for wait, asked, made_runs in ((0.0, 3, 3), (25.0, 3, 2), (27.5, 3, 1)):
        clock[0], waited["seconds"], ran[:] = 0.0, wait, []
        assert ev.in_turns(candidate(), asked, 2.0) == (1.0, 0.8, made_runs)
        assert ran == [(made_runs, pytest.approx(30.0 - wait))]
    clock[0], waited["seconds"], ran[:] = 0.0, 28.5, []
    why = ev.in_turns(candidate(), 3, 2.0)
    assert why == "one turn (2.0 s) no longer fits in the 1.5 s left once the GPU was free"
    assert ran == []


def test_the_end_of_a_compile_takes_the_gpu_alone_once(tmp_path: Path, cache: Cache) -> None:
    """Within keeping_gpu (the finalists, the winner's kernel timing, a close call's
    turns) the first exclusive hold is kept until it ends: one wait in the queue, not one
    a timing. Shared holds inside nest on it; another thread's holds are its own; outside
    it every hold is taken and given back."""
    import threading

    class Lock:
        def __init__(self) -> None:
            self.calls: list[tuple[str, bool | None, int]] = []

        def acquire(self, exclusive: bool, timeout: float | None = None) -> None:
            self.calls.append(("acquire", exclusive, threading.get_ident()))

        def release(self) -> None:
            self.calls.append(("release", None, threading.get_ident()))

    ev = evaluator(tmp_path, cache, run=True)
    lock = ev.gpu = Lock()  # type: ignore[assignment]
    me = threading.get_ident()
    with ev.keeping_gpu():
        for _ in range(3):
            with ev._hold(exclusive=True):
                pass
        with ev._hold(exclusive=False):
            pass

        def elsewhere() -> None:
            with ev._hold(exclusive=True):
                pass

        other = threading.Thread(target=elsewhere)
        other.start()
        other.join()
        with ev.keeping_gpu():  # nested: the outer one keeps the hold
            with ev._hold(exclusive=True):
                pass
        mine = [call[:2] for call in lock.calls if call[2] == me]
        assert mine == [("acquire", True), ("acquire", False), ("release", None)]
        theirs = [call[:2] for call in lock.calls if call[2] != me]
        assert theirs == [("acquire", True), ("release", None)]
    assert lock.calls[-1] == ("release", None, me)
    lock.calls.clear()
    with ev._hold(exclusive=True):
        pass
    with ev.keeping_gpu():  # nothing held in it: nothing to give back
        pass
    assert [call[:2] for call in lock.calls] == [("acquire", True), ("release", None)]
