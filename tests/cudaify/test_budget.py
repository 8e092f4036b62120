"""`--time-budget` bounds the whole command, on a fake clock: the real rules make real
candidates of a real program, and each verification takes 10 s of the clock. When the
budget is spent the search starts nothing new, the finalists are not timed again, and the
best variant verified so far (or the input, as host code) is written, with a warning."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from cudaify import pipeline
from cudaify.backend import evaluate as evaluate_mod
from cudaify.backend.budget import Deadline
from cudaify.core import Evaluation, Problem, Stage, Timing, Variant
from cudaify.core.config import Config

SAXPY = """\
#include <stdio.h>
#include <stdlib.h>

void scale(int n, float a, float *y) {
    for (int i = 0; i < n; i++)
        y[i] = a * y[i];
}

void saxpy(int n, float a, const float *x, float *y) {
    for (int i = 0; i < n; i++)
        y[i] = a * x[i] + y[i];
}

int main(void) {
    int n = 1000;
    float *x = (float *)malloc(n * sizeof(float));
    float *y = (float *)malloc(n * sizeof(float));
    for (int i = 0; i < n; i++) { x[i] = i * 0.5f; y[i] = 1.0f; }
    for (int t = 0; t < 10; t++) { saxpy(n, 2.0f, x, y); scale(n, 0.5f, y); }
    double s = 0;
    for (int i = 0; i < n; i++) s += y[i];
    printf("%.6e\\n", s);
    free(x); free(y);
    return 0;
}
"""

STEP = 10.0  # seconds of the fake clock each verification takes


class World:
    """The fake clock, and what the evaluator was asked."""

    def __init__(self, verified: bool | str) -> None:
        self.now = 0.0
        self.verified = verified  # True, False, or "slower": verified, slower than the CPU
        self.screened: list[tuple[str, ...]] = []
        self.remeasured = 0

    def clock(self) -> float:
        return self.now


@pytest.fixture
def world(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> World:
    made = World(verified=getattr(request, "param", True))

    def screen(self: evaluate_mod.Evaluator, variant: Variant) -> Evaluation:
        made.now += STEP
        made.screened.append(variant.methods)
        if not made.verified:
            problem = Problem("output", "line 1: 3.1 differs from 3.0")
            return Evaluation(stage=Stage.RUN, ran_on_gpu=True, problems=(problem,))
        # each step makes it faster: 2x, 3x, ... (or all at half the CPU's speed, the
        # region and the whole program alike)
        slower = made.verified == "slower"
        speedup = 0.5 if slower else 1.0 + len(variant.steps)
        return Evaluation(
            stage=Stage.CORRECT,
            ran_on_gpu=True,
            timing=Timing(wall=2.0 if slower else 0.5, region=0.1, runs=1),
            reference=Timing(wall=1.0, region=0.1 * speedup, runs=5),
        )

    # The finalists' timing: the real gatekeeping (is there time left?), a fake GPU behind it
    def timed_again(self, variant, evaluation, runs, detail, beat=None):  # type: ignore[no-untyped-def]
        made.now += STEP
        made.remeasured += 1
        return dataclasses.replace(
            evaluation, timing=dataclasses.replace(evaluation.timing, runs=5)
        )

    monkeypatch.setattr(evaluate_mod.Evaluator, "screen", screen)
    monkeypatch.setattr(evaluate_mod.Evaluator, "_remeasure", timed_again)
    monkeypatch.setattr(evaluate_mod.Evaluator, "_detailed", lambda self, v, e: e)
    monkeypatch.setattr(evaluate_mod.gpu, "gpu_available", lambda: True)
    monkeypatch.setattr(
        pipeline, "Deadline", lambda seconds, started=None: Deadline(seconds, made.clock, started)
    )
    return made


def compile_with(tmp_path: Path, **settings: object) -> pipeline.Result:
    source = tmp_path / "saxpy.c"
    source.write_text(SAXPY)
    config = Config(slm="off", cache=False, seed=0, **settings)  # type: ignore[arg-type]
    return pipeline.compile_file(str(source), str(tmp_path / "saxpy.cu"), config)


def test_when_the_budget_is_spent_the_best_verified_variant_so_far_is_written(
    tmp_path: Path, world: World
) -> None:
    result = compile_with(tmp_path, time_budget=25.0, strategy="rules")
    # verifications began at 0, 10 and 20 s of the clock; none after 25 s
    assert len(world.screened) == 3
    assert world.remeasured == 0  # no time was left to time the finalists again
    assert result.verified and result.methods in world.screened
    assert result.region_speedup == pytest.approx(1.0 + len(result.methods))
    assert any("time budget (25 s) ran out after 3 candidate(s)" in w for w in result.warnings)
    assert any("wrote the best verified variant found by then" in w for w in result.warnings)
    times = result.trace["time"]
    assert times["budget"] == 25.0 and times["cut_short"] is True
    assert times["total"] == 30.0  # the candidate under way at 25 s finished
    text = (tmp_path / "saxpy.cu").read_text()
    assert "Verified on the GPU" in text and result.methods[0] in text


def test_on_a_gpu_the_search_leaves_part_of_the_budget_for_timing_the_finalists_alone(
    tmp_path: Path, world: World
) -> None:
    """With 34 s, a fourth candidate would start at 30 s and end at 40 s, leaving nothing
    for the finalists. The search stops within FINALIST_RESERVE (15%: 5.1 s) of the end,
    and the leader is timed again, with the GPU alone."""
    result = compile_with(tmp_path, time_budget=34.0, strategy="rules")
    assert len(world.screened) == 3 and world.remeasured == 1
    assert result.verified and result.trace["timing"]["candidate"]["runs"] == 5
    assert result.trace["time"]["total"] == 40.0  # 3 screenings and the finalist's timing


@pytest.mark.parametrize("world", [False], indirect=True)
def test_with_nothing_verified_in_time_the_input_is_written_as_host_code(
    tmp_path: Path, world: World
) -> None:
    result = compile_with(tmp_path, time_budget=15.0, strategy="mcgs")
    assert len(world.screened) == 2 and not result.verified and result.methods == ()
    assert any(
        "none verified by then: the output is the input as host code" in w for w in result.warnings
    )
    assert "Nothing was offloaded" in (tmp_path / "saxpy.cu").read_text()


@pytest.mark.parametrize("world", ["slower"], indirect=True)
def test_with_only_slower_variants_verified_in_time_the_warning_says_so(
    tmp_path: Path, world: World
) -> None:
    result = compile_with(tmp_path, time_budget=15.0, strategy="mcgs")
    assert len(world.screened) == 2 and not result.verified and result.methods == ()
    assert any(
        "none faster than the CPU by then: the output is the input" in w for w in result.warnings
    )
    assert not any("none verified" in w for w in result.warnings)
    # the trace says so too (a bench reads why a verified variant was not written from it)
    assert result.trace["warnings"] == list(result.warnings)
    assert any("kept" in w or "host code" in w for w in result.trace["warnings"])


def test_without_a_budget_the_search_runs_to_its_end_and_finalists_are_timed(
    tmp_path: Path, world: World
) -> None:
    result = compile_with(tmp_path, time_budget=0.0, strategy="rules")
    assert not result.trace["time"]["cut_short"] and result.trace["time"]["budget"] is None
    assert not any("time budget" in w for w in result.warnings)
    assert len(world.screened) > 3 and world.remeasured >= 1
    assert result.trace["timing"]["candidate"]["runs"] == 5


def test_the_trace_and_verbose_output_break_the_time_down(
    tmp_path: Path, world: World, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level("INFO", logger="cudaify"):
        result = compile_with(tmp_path, time_budget=25.0, strategy="greedy")
    times = result.trace["time"]
    parts = ("start", "analysis", "reference", "compile", "run", "wait", "model", "search")
    assert set(parts) <= set(times)
    # the fake clock moved only in verifications, which the breakdown does not see
    # (screen is replaced): they count as the search's own time
    # (each part is rounded to the millisecond on its own)
    rest = times["total"] - sum(times[p] for p in parts[:-1])
    assert times["search"] == pytest.approx(rest, abs=0.004)
    said = [r.getMessage() for r in caplog.records if r.getMessage().startswith("time: ")]
    assert said and "of a 25 s budget (the budget ran out)" in said[0]
    assert json.loads(json.dumps(result.trace))["time"] == times


def test_a_cut_short_result_is_served_from_the_cache_like_any_other(
    tmp_path: Path, world: World
) -> None:
    source = tmp_path / "saxpy.c"
    source.write_text(SAXPY)
    config = Config(
        slm="off", cache=True, time_budget=25.0, strategy="rules", cache_dir=str(tmp_path / "cache")
    )
    first = pipeline.compile_file(str(source), str(tmp_path / "a.cu"), config)
    screened = len(world.screened)
    again = pipeline.compile_file(str(source), str(tmp_path / "b.cu"), config)
    assert again.cached and len(world.screened) == screened
    assert dataclasses.replace(again, cached=False, output_path=first.output_path) == first


def test_a_model_request_the_budget_cut_is_unanswered_and_a_failed_one_is_not():
    """The reason an SLM edge's expansion gives when the model wrote nothing for want of
    time (a `budget` failure) or its answer's check was cut short is `Unanswered`, which
    the search does not count among the model's answers; a real failure (a timeout of the
    endpoint, a truncated answer) stays a plain reason and counts."""
    from cudaify.backend.budget import OutOfTime
    from cudaify.core import Unanswered
    from cudaify.core.errors import ModelFailure

    def raising(exc: Exception):
        def ask():
            raise exc

        return ask

    for exc, unanswered in (
        (ModelFailure("budget", "the time budget ran out"), True),
        (OutOfTime("nvcc was stopped"), True),
        (ModelFailure("truncated", "cut at max_tokens"), False),
        (ModelFailure("timeout", "the endpoint did not answer"), False),
    ):
        outcome, why = pipeline._answered(raising(exc))
        assert outcome is None and str(exc) in why
        assert isinstance(why, Unanswered) == unanswered, why
    assert pipeline._answered(lambda: "an outcome") == ("an outcome", "")
