"""`--objective`: what a verified variant must beat gcc -O3 at to be written. By default
the whole program as the user runs it (CUDA's start and every copy count); `region` judges
only the offloaded code. The real rules make real candidates of a real program; the GPU is
faked: every candidate's region runs 3x faster than the CPU's, and the whole program
`WHOLE` times as fast."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from cudaify import pipeline
from cudaify.backend import evaluate as evaluate_mod
from cudaify.core import Evaluation, Stage, Timing, Variant
from cudaify.core.config import Config, ConfigError, load

SAXPY = """\
#include <stdio.h>
#include <stdlib.h>

void saxpy(int n, float a, const float *x, float *y) {
    for (int i = 0; i < n; i++)
        y[i] = a * x[i] + y[i];
}

int main(void) {
    int n = 1000;
    float *x = (float *)malloc(n * sizeof(float));
    float *y = (float *)malloc(n * sizeof(float));
    for (int i = 0; i < n; i++) { x[i] = i * 0.5f; y[i] = 1.0f; }
    for (int t = 0; t < 10; t++) saxpy(n, 2.0f, x, y);
    double s = 0;
    for (int i = 0; i < n; i++) s += y[i];
    printf("%.6e\\n", s);
    free(x); free(y);
    return 0;
}
"""


def compile_saxpy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, whole: float, **settings):  # type: ignore[no-untyped-def]
    def screen(self: evaluate_mod.Evaluator, variant: Variant) -> Evaluation:
        return Evaluation(
            stage=Stage.CORRECT,
            ran_on_gpu=True,
            timing=Timing(wall=1.0 / whole, region=0.1, runs=1),
            reference=Timing(wall=1.0, region=0.3, runs=5),
        )

    def timed_again(self, variant, evaluation, runs, detail, beat=None):  # type: ignore[no-untyped-def]
        return dataclasses.replace(
            evaluation, timing=dataclasses.replace(evaluation.timing, runs=5)
        )

    monkeypatch.setattr(evaluate_mod.Evaluator, "screen", screen)
    monkeypatch.setattr(evaluate_mod.Evaluator, "_remeasure", timed_again)
    monkeypatch.setattr(evaluate_mod.Evaluator, "_detailed", lambda self, v, e: e)
    monkeypatch.setattr(evaluate_mod.gpu, "gpu_available", lambda: True)
    source = tmp_path / "saxpy.c"
    source.write_text(SAXPY)
    config = Config(slm="off", cache=False, seed=0, strategy="rules", **settings)
    return pipeline.compile_file(str(source), str(tmp_path / "saxpy.cu"), config)


def test_by_default_a_variant_slower_as_a_whole_program_is_not_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = compile_saxpy(tmp_path, monkeypatch, whole=0.8)
    assert result.methods == () and not result.verified
    warning = next(w for w in result.warnings if "fastest verified GPU variant" in w)
    assert "ran the whole program at 0.80x of the CPU (its region at 3.00x)" in warning
    assert "--objective region" in warning
    assert "Nothing was offloaded" in (tmp_path / "saxpy.cu").read_text()


def test_with_the_region_objective_the_faster_region_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = compile_saxpy(tmp_path, monkeypatch, whole=0.8, objective="region")
    assert result.verified and result.methods
    assert result.region_speedup == pytest.approx(3.0)
    assert result.program_speedup == pytest.approx(0.8)
    text = (tmp_path / "saxpy.cu").read_text()
    assert "region speedup 3.00x, whole-program speedup 0.80x over gcc -O3" in text


def test_a_variant_faster_as_a_whole_is_written_and_states_both_speedups(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = compile_saxpy(tmp_path, monkeypatch, whole=1.5)
    assert result.verified and result.program_speedup == pytest.approx(1.5)
    assert "whole-program speedup 1.50x" in (tmp_path / "saxpy.cu").read_text()


def test_finalists_follow_the_objective() -> None:
    from cudaify.mcgs.search import Candidate

    def made(name: str, region: float, whole: float) -> Candidate:
        evaluation = Evaluation(
            stage=Stage.CORRECT,
            ran_on_gpu=True,
            timing=Timing(wall=1.0, region=1.0, runs=1),
            reference=Timing(wall=whole, region=region, runs=5),
        )
        return Candidate(Variant(code="seq").then(name, f"code-{name}", "rule"), evaluation)

    # a: the fastest region, slow as a whole (a copy per call); b: the other way round
    found = [made("a", 10.0, 1.2), made("b", 4.0, 3.0)]
    assert [c.variant.node for c in pipeline.finalists(found, "program")] == ["b"]
    assert [c.variant.node for c in pipeline.finalists(found, "region")] == ["a"]


def test_the_objective_is_a_checked_setting_and_part_of_the_result_key(tmp_path: Path) -> None:
    (tmp_path / "cudaify.toml").write_text('objective = "region"\n')
    config, _ = load(tmp_path, {})
    assert config.objective == "region"
    assert Config().objective == "program"
    with pytest.raises(ConfigError, match="'objective': 'kernel' is not one of program, region"):
        load(tmp_path, {"objective": "kernel"})
    with pytest.raises(ConfigError, match="'strategy'"):
        load(tmp_path, {"strategy": "best"})
    source = tmp_path / "a.c"
    source.write_text("int main(void) { return 0; }\n")
    keys = {
        pipeline.result_key(str(source), source.read_bytes(), Config(objective=objective))
        for objective in ("program", "region")
    }
    assert len(keys) == 2
