"""What verifying a candidate costs, counted: program runs and real (uncached) compiles.
The candidates are the CPU-runnable ones of test_evaluate.py, run with `run_on_gpu=True`,
so the GPU code path is taken on any machine; the counts are the ones an H100 pays."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from cudaify.backend import evaluate as evaluate_mod
from cudaify.backend import gpu
from cudaify.backend import timing as timing_mod
from cudaify.backend.budget import Deadline
from cudaify.backend.cache import Cache
from cudaify.backend.evaluate import TIME_BUDGET, Evaluator, compile_jobs
from cudaify.core import Stage, Variant
from cudaify.core.config import Config

from .test_evaluate import CANDIDATE, program

RUNS = 5


class Counts:
    def __init__(self) -> None:
        self.candidate_binaries: set[Path] = set()
        self.runs: Counter[str] = Counter()  # "candidate" | "reference"
        self.compiles = 0  # real nvcc invocations (cache misses)

    def reset(self) -> None:
        self.runs.clear()
        self.compiles = 0


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> Counts:
    counted = Counts()
    real_compile = evaluate_mod.compile_cuda
    real_run = evaluate_mod.run_binary

    def compile_cuda(*args, **kwargs):
        build = real_compile(*args, **kwargs)
        if build.ok:
            counted.candidate_binaries.add(build.binary)
        counted.compiles += 0 if build.cached else 1
        return build

    def run_binary(binary, **kwargs):
        kind = "candidate" if binary in counted.candidate_binaries else "reference"
        counted.runs[kind] += 1
        return real_run(binary, **kwargs)

    monkeypatch.setattr(evaluate_mod, "compile_cuda", compile_cuda)
    monkeypatch.setattr(evaluate_mod, "run_binary", run_binary)
    monkeypatch.setattr(timing_mod, "run_binary", run_binary)
    return counted


def make(tmp_path: Path, cache: Cache, **settings: object) -> Evaluator:
    """An evaluator on a machine that knows its GPU's fixed cost already (measured once
    per machine, by the first evaluation there: see test_evaluate)."""
    config = Config(runs=RUNS, **settings)  # type: ignore[arg-type]
    made = Evaluator(program(tmp_path), config, cache=cache, run_on_gpu=True)
    gpu.remember(made._start_file(), "0.3\n")
    return made


def variant(code: str = CANDIDATE) -> Variant:
    return Variant(code=code, node="offload", offloaded=("work",))


def test_a_written_variant_s_kernels_cost_one_build_and_one_run(
    tmp_path: Path, cache: Cache, counts: Counts
) -> None:
    """cudaify bench's kernel timing of a written variant: its timing build and one
    event-timed run; a run that names no kernel gives no figures."""
    evaluator = make(tmp_path, cache)
    evaluator.reference_timing(("work",))
    counts.reset()
    assert evaluator.kernel_roofline(variant()) is None  # the stand-in's run times no kernel
    assert counts.runs == {"candidate": 1} and counts.compiles == 1


def test_a_full_evaluation_costs_one_compile_and_runs_plus_two_runs(
    tmp_path: Path, cache: Cache, counts: Counts
) -> None:
    evaluator = make(tmp_path, cache)
    evaluator.reference_timing(("work",))  # the program's one-off cost, counted below
    counts.reset()
    result = evaluator.evaluate(variant())
    assert result.verified and result.timing.runs == RUNS
    # correctness run + RUNS timed runs + the kernel-timing run
    assert counts.runs == {"candidate": RUNS + 2}
    assert counts.compiles == 1


def test_a_search_candidate_costs_one_compile_and_one_run(
    tmp_path: Path, cache: Cache, counts: Counts
) -> None:
    evaluator = make(tmp_path, cache)
    evaluator.reference_timing(("work",))
    counts.reset()
    screened = evaluator.screen(variant())
    assert screened.stage == Stage.CORRECT, screened.problems
    assert counts.runs == {"candidate": 1} and counts.compiles == 1
    # the one run's timing is a real measurement of the region (work sleeps 50 ms x 3)
    assert screened.timing.runs == 1
    assert screened.timing.region is not None and 0.145 <= screened.timing.region <= 0.35
    assert screened.region_speedup is not None and 0.5 < screened.region_speedup < 2.0

    counts.reset()
    final = evaluator.remeasure(variant(), screened, detail=True)
    assert final.verified and final.timing.runs == RUNS
    # a second correctness run that is the first of RUNS timed runs, the kernel-timing
    # run; no compile
    assert counts.runs == {"candidate": RUNS + 1} and counts.compiles == 0


def test_screening_keeps_every_correctness_check(
    tmp_path: Path, cache: Cache, counts: Counts
) -> None:
    evaluator = make(tmp_path, cache)
    wrong = evaluator.screen(variant(CANDIDATE.replace("s += 1.0 / i;", "s += 1.0 / (i + 1);")))
    assert wrong.stage == Stage.RUN and wrong.problems[0].kind == "output"
    exit_code = evaluator.screen(variant(CANDIDATE.replace("return 0;\n}\n", "return 2;\n}\n")))
    assert exit_code.stage == Stage.RUN and exit_code.problems[0].kind == "exit_code"
    crash = CANDIDATE.replace("return 0;\n}\n", "return *(volatile int *)nullptr;\n}\n")
    crashed = evaluator.screen(variant(crash))
    assert crashed.stage == Stage.COMPILE and crashed.problems[0].kind == "crash"
    assert counts.runs["candidate"] == 3  # one run each, and the failures cost no more


def test_remeasure_catches_output_that_changes_between_runs(tmp_path: Path, cache: Cache) -> None:
    # Prints the right count on its first run only: it leaves a marker file behind.
    marker = tmp_path / "ran-before"
    flaky = CANDIDATE.replace(
        '    std::printf("total %.6f\\ncount %d\\n", total, 3);',
        f'    FILE *seen = std::fopen("{marker}", "r");\n'
        f'    if (!seen) std::fclose(std::fopen("{marker}", "w")); else std::fclose(seen);\n'
        '    std::printf("total %.6f\\ncount %d\\n", total, seen ? 4 : 3);',
    )
    assert "ran-before" in flaky
    evaluator = make(tmp_path, cache)
    screened = evaluator.screen(variant(flaky))
    assert screened.verified, screened.problems
    again = evaluator.remeasure(variant(flaky), screened)
    assert not again.verified and again.problems[0].kind == "flaky"
    assert "output" in again.why


def test_more_search_runs_are_medians_that_include_the_correctness_run(
    tmp_path: Path, cache: Cache, counts: Counts
) -> None:
    evaluator = make(tmp_path, cache, search_runs=3)
    evaluator.reference_timing(("work",))
    counts.reset()
    screened = evaluator.screen(variant())
    assert screened.timing.runs == 3 and counts.runs == {"candidate": 3}


def test_bench_strategies_share_one_reference_timing(
    tmp_path: Path, cache: Cache, counts: Counts
) -> None:
    first = make(tmp_path, cache, timing_session="s1").reference_timing(("work",))
    counts.reset()
    second = make(tmp_path, cache, timing_session="s1").reference_timing(("work",))
    assert counts.runs["reference"] == 0 and second == first
    make(tmp_path, cache, timing_session="s2").reference_timing(("work",))
    assert counts.runs["reference"] == RUNS + 1  # another session measures again (warm-up)


def test_the_reference_is_run_and_timed_once_per_input(
    tmp_path: Path, cache: Cache, counts: Counts, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reference's run is of the region's timing build, so it is the first of the
    region's timed runs; a second cudaify of the same input (a new evaluator) runs it no
    more: its output and its timing are both on disk."""
    # RUNS runs whatever the machine's load: the program's 0.15 s is near where runs_for
    # gives 4 (a loaded run read 0.16 s and failed this test: 4 == 5)
    monkeypatch.setattr(timing_mod, "LONG_RUN", 10.0)
    first = make(tmp_path, cache)
    first.region = ("work",)
    timing = first.reference_timing(("work",))
    assert counts.runs["reference"] == RUNS and timing.runs == RUNS
    assert timing.region is not None and 0.145 <= timing.region <= 0.35
    counts.reset()
    again = make(tmp_path, cache)
    again.region = ("work",)
    assert again.reference().cached and again.reference_timing(("work",)) == timing
    assert counts.runs["reference"] == 0


# about 0.09 s a run: RUNS runs (runs_for gives fewer from 0.2 s, which the 0.17 s this
# program took before came close to on a loaded machine)
TWO_FUNCTIONS = """#include <stdio.h>
#include <time.h>
static void nap(long ms) { struct timespec t = {0, ms * 1000000L}; nanosleep(&t, NULL); }
double work(int n) { nap(25); return n * 0.5; }
void prep(double *x) { nap(10); *x = 1.0; }
int main(void) {
    double x, total = 0;
    prep(&x);
    for (int r = 0; r < 3; r++) total += work(r);
    printf("total %.1f %.1f\\n", total, x);
    return 0;
}
"""


def test_every_subset_of_the_region_is_timed_by_the_regions_runs(
    tmp_path: Path, cache: Cache, counts: Counts
) -> None:
    """The region's timing build times each function apart: a candidate that offloads
    only some of them needs no reference build or run of its own, now or in a new process."""

    def fresh() -> Evaluator:
        config = Config(runs=RUNS)
        made = Evaluator(program(tmp_path, TWO_FUNCTIONS), config, cache=cache, run_on_gpu=True)
        made.region = ("work", "prep")
        return made

    first = fresh()
    whole = first.reference_timing(("work", "prep"))
    assert counts.runs["reference"] == RUNS and whole.runs == RUNS
    work = first.reference_timing(("work",))
    prep = first.reference_timing(("prep",))
    assert counts.runs["reference"] == RUNS
    assert work.region is not None and 0.075 <= work.region <= 0.15
    assert prep.region is not None and 0.01 <= prep.region <= 0.05
    assert whole.region == pytest.approx(work.region + prep.region, abs=0.01)
    assert work.wall == whole.wall and work.runs == RUNS
    counts.reset()
    again = fresh()
    assert again.reference_timing(("prep",)) == prep and counts.runs["reference"] == 0


def test_a_reference_that_runs_a_second_or_more_is_run_once(
    tmp_path: Path, cache: Cache, counts: Counts, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(timing_mod, "LONG_RUN", 0.1)  # the program runs about 0.15 s
    evaluator = make(tmp_path, cache)
    evaluator.region = ("work",)
    timing = evaluator.reference_timing(("work",))
    assert counts.runs["reference"] == 1 and timing.runs == 1 and timing.region is not None


def test_a_reference_of_a_fraction_of_a_second_gets_as_many_runs_as_fit(
    tmp_path: Path, cache: Cache, counts: Counts, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(timing_mod, "LONG_RUN", 0.4)  # about 0.15 s a run: 2 of them fit
    evaluator = make(tmp_path, cache)
    evaluator.region = ("work",)
    timing = evaluator.reference_timing(("work",))
    assert counts.runs["reference"] == 2 and timing.runs == 2


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [(None, 5), (0.0, 5), (0.01, 5), (0.3, 3), (0.5, 2), (0.9, 1), (7.0, 1)],
)
def test_runs_fill_about_a_second(seconds: float | None, expected: int) -> None:
    assert timing_mod.runs_for(seconds, 5) == expected
    assert timing_mod.runs_for(seconds, 1) == 1


def test_a_long_finalist_is_timed_by_its_second_correctness_run(
    tmp_path: Path, cache: Cache, counts: Counts, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(timing_mod, "LONG_RUN", 0.1)
    evaluator = make(tmp_path, cache)
    screened = evaluator.screen(variant())
    counts.reset()
    final = evaluator.remeasure(variant(), screened, detail=False)
    assert final.verified and final.timing.runs == 1
    assert counts.runs == {"candidate": 1}


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_every_run_ends_by_the_deadline_and_after_it_nothing_starts(
    tmp_path: Path, cache: Cache, counts: Counts, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = FakeClock()
    limits: list[float] = []
    real_run = evaluate_mod.run_binary

    def run_binary(binary, **kwargs):
        limits.append(kwargs["timeout"])
        return real_run(binary, **kwargs)

    monkeypatch.setattr(timing_mod, "run_binary", run_binary)
    config = Config(runs=RUNS)
    evaluator = Evaluator(
        program(tmp_path), config, cache=cache, run_on_gpu=True, deadline=Deadline(30.0, clock)
    )
    clock.now = 26.0  # 4 s left: every run is cut to them (the limit would be 10 s)
    screened = evaluator.screen(variant())
    assert screened.verified and limits and max(limits) <= 4.0
    clock.now = 30.0
    counts.reset()
    late = evaluator.screen(variant(CANDIDATE.replace("total %.6f", "sum %.6f")))
    assert late.problems[0].kind == TIME_BUDGET and not late.verified
    assert counts.runs == {} and counts.compiles == 0
    assert evaluator.remeasure(variant(), screened) == screened  # no time: kept as screened


def test_candidates_compiled_ahead_are_compiled_once(
    tmp_path: Path, cache: Cache, counts: Counts
) -> None:
    """prefetch starts the builds on other cores; verifying then waits for them instead
    of compiling again."""
    evaluator = make(tmp_path, cache, compile_jobs=2)
    sources = [CANDIDATE, CANDIDATE.replace("total %.6f", "total  %.6f")]
    variants = [variant(code) for code in sources]
    evaluator.prefetch(variants)
    assert len(evaluator._pending) == 2
    results = [evaluator.screen(v) for v in variants]
    assert [r.stage for r in results] == [Stage.CORRECT, Stage.CORRECT]
    assert counts.compiles == 2 and evaluator._pending == {}
    evaluator.close()
    evaluator.prefetch([variant(CANDIDATE.replace("count %d", "n %d"))])
    assert evaluator._pending == {}  # a closed evaluator compiles nothing ahead


def test_compiles_ahead_fit_the_idle_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    """Alone on 16 cores: 8 at once; with 11 busy: 5; under make -j16 (16 tasks running):
    none ahead."""
    monkeypatch.setattr(evaluate_mod.os, "cpu_count", lambda: 16)
    monkeypatch.setattr(evaluate_mod, "_busy", lambda: 1)
    assert compile_jobs(Config()) == 8
    monkeypatch.setattr(evaluate_mod, "_busy", lambda: 11)
    assert compile_jobs(Config()) == 5
    monkeypatch.setattr(evaluate_mod, "_busy", lambda: 16)
    assert compile_jobs(Config()) == 1
    assert compile_jobs(Config(compile_jobs=3)) == 3


def test_idle_cores_are_counted_now_not_over_the_last_minute() -> None:
    """/proc/loadavg's running tasks: this test's own thread is not counted, so on an
    otherwise quiet machine most cores are idle; never more than there are."""
    cores = evaluate_mod.os.cpu_count() or 1
    assert 0 <= evaluate_mod.idle_cores() <= cores
    busy = [evaluate_mod._busy() for _ in range(20)]
    assert min(busy) >= 0
    assert min(busy) < cores + 1  # a run queue of the suite's size, not the load average


def test_a_build_asked_for_ahead_is_left_to_the_search_once_the_cores_fill_up(
    tmp_path: Path, cache: Cache, counts: Counts, monkeypatch: pytest.MonkeyPatch
) -> None:
    """make -j16 started sixteen cudaify processes since the build was asked for: it is
    not started ahead, and the search compiles it itself, once."""
    evaluator = make(tmp_path, cache)
    monkeypatch.setattr(evaluate_mod, "compile_jobs", lambda config: 2)
    monkeypatch.setattr(evaluate_mod, "idle_cores", lambda: 0)
    evaluator.prefetch([variant()])
    _key, screening = evaluator._screened[variant().key]
    assert screening.result(timeout=60) is None  # nothing was built, so nothing screened
    assert counts.compiles == 0 and counts.runs["candidate"] == 0
    screened = evaluator.screen(variant())
    assert screened.stage == Stage.CORRECT and counts.compiles == 1


SLOW = CANDIDATE.replace("{0, 50000000}", "{1, 0}")  # 1 s a call: 3 s against the CPU's 0.15


def test_a_search_candidate_is_stopped_once_it_cannot_beat_the_cpu(
    tmp_path: Path, cache: Cache
) -> None:
    import time

    from cudaify.core import TOO_SLOW
    from cudaify.mcgs.reward import TOO_SLOW_UNSEEN, WRONG_OUTPUT, reward

    evaluator = make(tmp_path, cache)
    reference = evaluator.reference().seconds
    evaluator.compile(variant(SLOW))  # the screening below then only runs it
    began = time.perf_counter()
    screened = evaluator.screen(variant(SLOW))
    took = time.perf_counter() - began
    stop = evaluate_mod.hopeless_after(reference)
    assert [p.kind for p in screened.problems] == [TOO_SLOW] and not screened.verified
    assert stop <= took < stop + 1.0  # not the 10 s limit of a run
    assert WRONG_OUTPUT < reward(screened) == TOO_SLOW_UNSEEN < 0
    # what `cudaify check` reports runs to the end: verified, and slower
    full = evaluator.evaluate(variant(SLOW))
    assert full.verified and full.region_speedup is not None and full.region_speedup < 0.1


def test_a_configured_run_timeout_is_the_only_limit(tmp_path: Path, cache: Cache) -> None:
    evaluator = make(tmp_path, cache, run_timeout=20.0)
    assert evaluator.screen(variant(SLOW)).verified


def test_once_a_faster_variant_is_verified_the_cutoff_follows_it(
    tmp_path: Path, cache: Cache
) -> None:
    """A candidate that has run 1.5 times the fastest verified candidate's time (plus a
    quarter second of noise: CUDA's start is in both) cannot beat that one's region
    either: it is stopped there, not at the CPU's cutoff."""
    import time

    from cudaify.core import TOO_SLOW

    evaluator = make(tmp_path, cache)
    reference = evaluator.reference().seconds
    assert evaluator.screen(variant()).verified
    fastest = evaluator._fastest_wall
    assert fastest < 1.0
    evaluator._fastest_wall = fastest = fastest / 10  # as if a much faster variant had run
    slower = CANDIDATE.replace("{0, 50000000}", "{0, 600000000}")  # 1.8 s against 0.15 s
    evaluator.compile(variant(slower))
    began = time.perf_counter()
    screened = evaluator.screen(variant(slower))
    took = time.perf_counter() - began
    assert [p.kind for p in screened.problems] == [TOO_SLOW]
    assert "fastest verified variant" in screened.problems[0].message
    stop = evaluate_mod.hopeless_after(fastest, gpu=True)
    assert stop < evaluate_mod.hopeless_after(fastest)  # CUDA's start is not added twice
    assert stop <= took < evaluate_mod.hopeless_after(reference)  # not the CPU's cutoff


def test_candidates_built_ahead_are_screened_ahead_once(
    tmp_path: Path, cache: Cache, counts: Counts
) -> None:
    """On a GPU, prefetch also screens each build on a thread of its own: the search then
    takes the verified result without running the candidate again."""
    evaluator = make(tmp_path, cache, compile_jobs=2)
    evaluator.reference_timing(("work",))
    counts.reset()
    sources = [CANDIDATE, CANDIDATE.replace("total %.6f", "total  %.6f")]
    variants = [variant(code) for code in sources]
    evaluator.prefetch(variants)
    assert set(evaluator._screened) == {v.key for v in variants}
    results = [evaluator.screen(v) for v in variants]
    assert [r.stage for r in results] == [Stage.CORRECT, Stage.CORRECT]
    assert all(r.timing.runs == 1 and r.timing.region is not None for r in results)
    assert counts.runs == {"candidate": 2} and counts.compiles == 2
    assert evaluator._screened == {} and evaluator._pending == {}
    # the search counts its wait for them; what ran ahead is not counted twice
    assert evaluator.breakdown.get("run") < 1.0


def test_a_candidate_that_failed_ahead_is_screened_again_by_the_search(
    tmp_path: Path, cache: Cache, counts: Counts
) -> None:
    """A failure ahead could come from sharing the GPU (its memory, its time): only a
    verified or too-slow result is taken; anything else runs again, in the search."""
    evaluator = make(tmp_path, cache, compile_jobs=2)
    evaluator.reference_timing(("work",))
    counts.reset()
    wrong = variant(CANDIDATE.replace("s += 1.0 / i;", "s += 1.0 / (i + 1);"))
    evaluator.prefetch([wrong])
    screened = evaluator.screen(wrong)
    assert screened.stage == Stage.RUN and screened.problems[0].kind == "output"
    assert counts.runs == {"candidate": 2} and counts.compiles == 1


def test_closing_the_evaluator_stops_a_screening_under_way(
    tmp_path: Path, cache: Cache, counts: Counts
) -> None:
    import time

    evaluator = make(tmp_path, cache, compile_jobs=2, run_timeout=30.0)
    evaluator.reference_timing(("work",))
    counts.reset()
    slow = variant(SLOW)  # 3 s a run
    evaluator.prefetch([slow])
    _key, future = evaluator._screened[slow.key]
    began = time.perf_counter()
    while counts.runs["candidate"] == 0 and time.perf_counter() - began < 60:
        time.sleep(0.01)
    assert counts.runs["candidate"] == 1  # under way
    stopped = time.perf_counter()
    evaluator.close()
    result = future.result(timeout=10)
    assert time.perf_counter() - stopped < 1.0
    assert result is not None and not result.verified  # killed: never taken as a result
    assert evaluator._screened == {}


def test_on_a_gpu_other_programs_share_the_cutoff_stretches_with_them(
    tmp_path: Path, cache: Cache, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under make -j16 every program's run is slower: with 4 programs on the GPU the
    3 s candidate (CPU: 0.15 s, cutoff 1.3 s alone) runs to its end and is verified."""
    evaluator = make(tmp_path, cache)
    monkeypatch.setattr(evaluator.gpu, "users", lambda: 4)
    evaluator.compile(variant(SLOW))
    screened = evaluator.screen(variant(SLOW))
    assert screened.verified and screened.region_speedup is not None
    assert screened.region_speedup < 0.1


def test_a_finalist_far_behind_one_timed_in_full_stops_at_its_correctness_run(
    tmp_path: Path, cache: Cache
) -> None:
    """remeasure(beat=...): the correctness run (the GPU alone) is the first timed sample;
    when its speedup is RACE_MARGIN under `beat`, no more runs follow."""
    evaluator = make(tmp_path, cache)
    screened = evaluator.screen(variant())
    assert screened.verified
    full = evaluator.remeasure(variant(), screened, detail=False)
    assert full.verified and full.timing.runs > 1
    speedup = full.program_speedup
    assert speedup is not None
    behind = evaluator.remeasure(
        variant(), screened, detail=False, beat=speedup * evaluate_mod.RACE_MARGIN * 4
    )
    assert behind.verified and behind.timing.runs == 1
    ahead = evaluator.remeasure(variant(), screened, detail=False, beat=speedup / 4)
    assert ahead.verified and ahead.timing.runs == full.timing.runs
    # within RACE_MARGIN of its own full timing, but needing every run a quarter faster
    # than that timing's median: its runs stop once their median cannot get there
    close = evaluator.remeasure(variant(), screened, detail=False, beat=speedup * 1.24)
    assert close.verified and close.timing.runs < full.timing.runs
