"""`--objective`: what a verified variant must beat gcc -O3 at to be written. By default
the whole program as the user runs it (CUDA's start and every copy count); `region` judges
only the offloaded code. The real rules make real candidates of a real program; the GPU is
faked: every candidate's region runs 3x faster than the CPU's, and the whole program
`WHOLE` times as fast."""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path
from typing import Any

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


def compile_saxpy(  # type: ignore[no-untyped-def]
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    whole: float,
    turns: tuple[float, float] | str = "not run in this test",
    asked: list[int] | None = None,
    left: list[float | None] | None = None,
    **settings,
):
    """The compile, its GPU faked; `turns`: what timing the winner in turns with the
    reference gives (Evaluator.in_turns: the medians, or why there are none), each call's
    runs recorded in `asked`; `left`: the evaluator's time left at each screening."""

    def in_turns(self, variant, runs, turn=0.0):  # type: ignore[no-untyped-def]
        (asked if asked is not None else []).append(runs)
        # the turns run in the hold the finalists took (Evaluator.keeping_gpu)
        assert self._keeper == threading.get_ident()
        return turns if isinstance(turns, str) else (*turns, runs)

    monkeypatch.setattr(evaluate_mod.Evaluator, "in_turns", in_turns)

    def screen(self: evaluate_mod.Evaluator, variant: Variant) -> Evaluation:
        (left if left is not None else []).append(self.deadline.remaining())
        return Evaluation(
            stage=Stage.CORRECT,
            ran_on_gpu=True,
            timing=Timing(wall=1.0 / whole, region=0.1, runs=1),
            reference=Timing(wall=1.0, region=0.3, runs=5),
        )

    def timed_again(self, variant, evaluation, runs, detail, beat=None):  # type: ignore[no-untyped-def]
        assert self._keeper == threading.get_ident()  # the finalists keep one hold
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
    # the trace says which finalists were timed and what they read, the written one first
    finalists = result.trace["finalists"]
    assert finalists and finalists[0]["methods"] == list(result.methods)
    assert finalists[0]["timed"]["runs"] == 5 and finalists[0]["screened"]["runs"] == 1
    assert finalists[0]["timed"]["program_speedup"] == pytest.approx(1.5)
    assert all(f["why_not"] is None for f in finalists)


def test_a_close_call_is_timed_in_turns_with_the_reference_before_it_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A variant read under CLOSE_CALL times gcc -O3 as a whole program is timed again in
    turns with the reference: slower there (lcs_edit read 1.12x and ran at 0.88x), the
    input is kept as host code and the warning says both readings; faster, it is written.
    A clear win, the region objective, or turns that could not run change nothing."""
    from cudaify.pipeline import CLOSE_CALL, IN_TURNS

    asked: list[int] = []
    result = compile_saxpy(tmp_path, monkeypatch, whole=1.12, turns=(1.0, 1.136), asked=asked)
    assert asked == [IN_TURNS] and not result.verified and result.methods == ()
    warning = next(w for w in result.warnings if "timed in turns" in w)
    assert "read 1.12x as a whole program" in warning and "ran at 0.88x" in warning
    assert "medians 1.136 s and 1.000 s" in warning
    assert "Nothing was offloaded" in (tmp_path / "saxpy.cu").read_text()
    assert result.trace["close_call"] == {
        "read": pytest.approx(1.12),
        "runs": IN_TURNS,
        "reference": 1.0,
        "program": 1.136,
    }
    result = compile_saxpy(tmp_path, monkeypatch, whole=1.5, turns=(1.0, 0.8), asked=asked)
    header = (tmp_path / "saxpy.cu").read_text().split("*/")[0]
    assert result.verified and (
        "Timed in turns with gcc -O3's build (3 runs each, as a close call): the whole "
        "program at 1.25x (medians 0.800 s and 1.000 s; the search read 1.50x)."
    ) in " ".join(line.strip(" *") for line in header.splitlines())
    for whole, turns, objective, written, times in (
        (1.5, (1.0, 0.8), "program", True, 1),
        (CLOSE_CALL * 1.25, (1.0, 2.0), "program", True, 0),
        (1.5, (1.0, 2.0), "region", True, 0),
        (1.5, "its build failed", "program", True, 1),
    ):
        asked.clear()
        result = compile_saxpy(
            tmp_path, monkeypatch, whole=whole, turns=turns, asked=asked, objective=objective
        )
        assert result.verified == written and len(asked) == times, (whole, turns, objective)
        assert not any("timed in turns" in w for w in result.warnings)


def test_a_close_call_takes_the_turns_the_time_left_holds() -> None:
    """Under a time budget the close call's turns are as many as fit (at most IN_TURNS);
    where not one pair fits, none is run and the trace says why: a reading from
    UNCONFIRMED_MIN up stands, one under it is not written."""
    from types import SimpleNamespace

    from cudaify.backend.budget import Deadline
    from cudaify.pipeline import IN_TURNS, confirmed

    clock = [0.0]
    for budget, runs in ((None, IN_TURNS), (100.0, IN_TURNS), (3.4, 2), (1.5, 1), (1.3, 0)):
        asked: list[int] = []

        def in_turns(
            variant: Variant, n: int, turn: float, asked: list[int] = asked
        ) -> tuple[float, float, int]:
            asked.append(n)
            assert turn == pytest.approx(1.4)  # the reference's 1.0 s and the variant's 0.4
            return 1.0, 0.9, n

        evaluator = SimpleNamespace(
            reference=lambda: SimpleNamespace(seconds=1.0),
            deadline=Deadline(budget, clock=lambda: clock[0]),
            in_turns=in_turns,
        )
        chosen = SimpleNamespace(
            variant=Variant(code="x"),
            evaluation=Evaluation(
                stage=Stage.CORRECT,
                ran_on_gpu=True,
                timing=Timing(wall=0.4, region=0.1, runs=1),
                reference=Timing(wall=0.6, region=0.3, runs=1),
            ),
        )
        kept, why, record = confirmed(chosen, evaluator, Config(objective="program"))
        assert kept is chosen and why == "", budget
        assert asked == ([runs] if runs else []), budget
        assert ("not_timed" in record) == (runs == 0) and record["read"] == 1.5
    # a reading under UNCONFIRMED_MIN that cannot be timed in turns is not written
    close = dataclasses.replace(
        chosen.evaluation, reference=Timing(wall=0.4 * 1.2, region=0.3, runs=1)
    )
    chosen = SimpleNamespace(variant=Variant(code="x", steps=()), evaluation=close)
    kept, why, record = confirmed(chosen, evaluator, Config(objective="program"))
    assert kept is None and "read 1.20x" in why and "could not be timed in turns" in why
    assert "does not fit" in record["not_timed"]


def test_the_finalists_leave_a_close_call_one_turn() -> None:
    """Where the leader reads under MAY_BE_CLOSE as a whole program (a finalist's runs may
    bring it under CLOSE_CALL), the finalists are timed against a deadline one turn sooner
    (the reference's time and the leader's, a fifth to spare); a clear win, the region
    objective or no verified candidate keep nothing."""
    from types import SimpleNamespace

    from cudaify.mcgs.search import Candidate
    from cudaify.pipeline import CLOSE_CALL, MAY_BE_CLOSE, close_call_reserve

    def leader(whole: float) -> Candidate:
        evaluation = Evaluation(
            stage=Stage.CORRECT,
            ran_on_gpu=True,
            timing=Timing(wall=0.5, region=0.1, runs=1),
            reference=Timing(wall=0.5 * whole, region=0.3, runs=1),
        )
        return Candidate(Variant(code=f"{whole}"), evaluation)

    stages = SimpleNamespace(
        evaluator=SimpleNamespace(reference=lambda: SimpleNamespace(seconds=1.0))
    )
    program = Config(objective="program")
    assert close_call_reserve([leader(1.3)], stages, program) == pytest.approx(1.2 * 1.5)
    assert close_call_reserve([leader(CLOSE_CALL * 1.1)], stages, program) == pytest.approx(1.8)
    assert close_call_reserve([leader(MAY_BE_CLOSE * 1.01)], stages, program) == 0.0
    assert close_call_reserve([leader(0.9)], stages, program) == 0.0
    assert close_call_reserve([leader(1.3)], stages, Config(objective="region")) == 0.0
    assert close_call_reserve([], stages, program) == 0.0


def test_the_searchs_runs_end_where_the_finalists_share_begins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a GPU, the evaluator the search screens with has the search's own deadline: the
    budget less the finalists' share, so a slow candidate's run (limited by what is left)
    cannot use the finalists' time or the close call's turn; without a budget, none."""
    from cudaify.pipeline import FINALIST_RESERVE

    left: list[float | None] = []
    compile_saxpy(tmp_path, monkeypatch, whole=3.0, time_budget=30.0, left=left)
    assert left and all(t is not None and t <= 30.0 * (1 - FINALIST_RESERVE) for t in left)
    unlimited: list[float | None] = []
    compile_saxpy(tmp_path, monkeypatch, whole=3.0, time_budget=0, left=unlimited)
    assert unlimited and all(t is None for t in unlimited)


def test_the_search_keeps_a_turn_while_its_best_may_be_a_close_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On a GPU, the search stops one turn earlier (besides the finalists' reserve) while
    its best whole-program reading verified on the GPU is under MAY_BE_CLOSE: a turn of
    that variant and the reference, a fifth to spare. Nothing verified, a clear win read
    later, no GPU, the region objective: no turn kept."""
    from types import SimpleNamespace

    from cudaify.backend.budget import Deadline
    from cudaify.pipeline import FINALIST_RESERVE, MAY_BE_CLOSE, Stages

    def read(whole: float, verified: bool = True) -> Evaluation:
        return Evaluation(
            stage=Stage.CORRECT if verified else Stage.COMPILE,
            ran_on_gpu=True,
            timing=Timing(wall=0.5, region=0.1, runs=1),
            reference=Timing(wall=0.5 * whole, region=0.3, runs=1),
        )

    def stages(objective: str = "program", gpu: bool = True) -> Any:
        made = Stages.__new__(Stages)
        made.config = Config(objective=objective, time_budget=30.0)
        made.program = None
        made._parents = {}
        made._best_read = None
        made.deadline = Deadline(30.0, clock=lambda: 0.0)
        made.evaluator = SimpleNamespace(
            reference=lambda: SimpleNamespace(seconds=1.0), run_on_gpu=gpu, screen=None
        )
        return made

    monkeypatch.setattr(
        "cudaify.transforms.structure.structural_problems", lambda *args, **kwargs: []
    )
    plain = 30.0 - FINALIST_RESERVE * 30.0
    for readings, kept in (
        ([], 0.0),
        ([read(1.4, verified=False)], 0.0),
        ([read(0.8)], 0.0),
        ([read(1.4)], 1.2 * 1.5),
        ([read(1.4), read(2.5)], 1.2 * 1.5),
        ([read(1.4), read(MAY_BE_CLOSE * 1.2), read(2.5)], 0.0),
    ):
        search = stages()
        for evaluation in readings:
            search.evaluator.screen = lambda variant, e=evaluation: e
            assert search.evaluate(Variant(code="x")) is evaluation
        assert search.search_left() == pytest.approx(plain - kept), readings
    for other in (stages(objective="region"), stages(gpu=False)):
        other.evaluator.screen = lambda variant: read(1.4)
        other.evaluate(Variant(code="x"))
        assert other.search_left() == pytest.approx(plain if other.evaluator.run_on_gpu else 30.0)


def test_finalists_follow_the_objective() -> None:
    # a: the fastest region, slow as a whole (a copy per call); b: the other way round
    found = [made("a", 10.0, 1.2), made("b", 4.0, 3.0)]
    assert [c.variant.node for c in pipeline.finalists(found, "program")] == ["b"]
    assert [c.variant.node for c in pipeline.finalists(found, "region")] == ["a"]


def verified(name: str, timing: Timing, reference: Timing) -> Any:
    """A verified candidate `name` with these timings."""
    from cudaify.mcgs.search import Candidate

    evaluation = Evaluation(
        stage=Stage.CORRECT, ran_on_gpu=True, timing=timing, reference=reference
    )
    return Candidate(Variant(code="seq").then(name, f"code-{name}", "rule"), evaluation)


def made(name: str, region: float, whole: float, shared_by: int = 1, runs: int = 5) -> Any:
    """A verified candidate whose region and whole program ran `region` and `whole` times
    as fast as the CPU's (the reference's times; the variant's are 1 s), medians of `runs`."""
    timing = Timing(wall=1.0, region=1.0, runs=runs, shared_by=shared_by)
    return verified(name, timing, Timing(wall=whole, region=region, runs=5))


def test_whole_program_ties_are_settled_by_the_region() -> None:
    """b is 2.5% behind a as a whole, within CUDA's start's noise, with a region 3x as
    fast: b leads, and a, the best by the objective, is timed in full too. c's whole
    program is 25% behind: no tie, whatever its region."""
    found = [made("a", 100.0, 2.0), made("b", 300.0, 1.95), made("c", 1000.0, 1.5)]
    assert [c.variant.node for c in pipeline.finalists(found, "program")] == ["b", "a"]
    assert [c.variant.node for c in pipeline.finalists(found, "region")][0] == "c"
    # 10% behind is no tie
    apart = [made("a", 100.0, 2.0), made("b", 300.0, 1.8)]
    assert [c.variant.node for c in pipeline.finalists(apart, "program")] == ["a", "b"]


def test_ties_are_judged_with_cudas_start_taken_out() -> None:
    """b's run read 10% slower as a whole than a's, all of it in CUDA's start (0.13 s
    against the 0.095 s this GPU takes at least), which is the same work for every
    variant: without it b is as fast, and its region is 3x a's. c lost its 10% outside
    CUDA's start: no tie."""

    def timed(name: str, region: float, wall: float, context: float) -> Any:
        timing = Timing(
            wall=wall, region=0.01 / region, context=context, context_alone=0.095, runs=5
        )
        return verified(name, timing, Timing(wall=0.6, region=0.01, runs=5))

    a, b, c = (
        timed("a", 100.0, 0.30, 0.095),
        timed("b", 300.0, 0.33, 0.13),
        timed("c", 300.0, 0.33, 0.095),
    )
    assert b.evaluation.program_speedup == pytest.approx(0.6 / 0.33)  # reported as measured
    assert [x.variant.node for x in pipeline.finalists([a, b], "program")] == ["b", "a"]
    assert [x.variant.node for x in pipeline.finalists([a, c], "program")] == ["a", "c"]
    # one run 17% behind (outside FINALIST_MARGIN_ALONE), 8% of it CUDA's start: a finalist
    d = timed("d", 50.0, 0.36, 0.13)
    assert [x.variant.node for x in pipeline.finalists([a, d], "program")] == ["a", "d"]


def test_finish_settles_a_tie_by_the_full_timings() -> None:
    """By one run each, b is 10% behind a as a whole (not a tie) but close enough to be
    timed in full; timed in full, it is 2% behind with a region 3x as fast: b is written."""
    from cudaify.mcgs.search import SearchResult

    full = {"a": (100.0, 2.0), "b": (300.0, 1.96)}

    class Evaluator:
        def __init__(self) -> None:
            self.detailed: list[str] = []

        def prefetch_harness(self, variants: list[Variant]) -> None:
            pass

        def prefetch_plain(self, variants: list[Variant]) -> None:
            pass

        def remeasure(self, variant: Variant, evaluation: Evaluation, **_: Any) -> Evaluation:
            region, whole = full[variant.node]
            return made(variant.node, region, whole).evaluation

        def detail(self, variant: Variant, evaluation: Evaluation) -> Evaluation:
            self.detailed.append(variant.node)
            return evaluation

    result = SearchResult("mcgs", candidates=[made("a", 100.0, 2.0), made("b", 300.0, 1.8)])
    evaluator = Evaluator()
    chosen = pipeline.finish(result, evaluator, Config())
    assert chosen.variant.node == "b" and evaluator.detailed == ["b"]
    assert chosen.evaluation.program_speedup == pytest.approx(1.96)


def test_a_tie_never_chooses_a_program_slower_than_the_cpu() -> None:
    found = [made("a", 10.0, 1.02), made("b", 100.0, 0.99)]
    assert [c.variant.node for c in pipeline.finalists(found, "program")][0] == "a"
    slow = [made("a", 10.0, 0.9), made("b", 100.0, 0.88)]
    assert [c.variant.node for c in pipeline.finalists(slow, "program")][0] == "a"


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


PRODUCT = """\
#include <stdio.h>
#define N 900
void product(int n, const float *a, const float *b, float *c) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            float sum = 0.0f;
            for (int k = 0; k < n; k++)
                sum += a[i * n + k] * b[k * n + j];
            c[i * n + j] = sum;
        }
}
int main(void) {
    static float a[N * N], b[N * N], c[N * N];
    for (int i = 0; i < N * N; i++) { a[i] = (i % 7) * 0.25f; b[i] = (i % 5) * 0.5f; }
    product(N, a, b, c);
    double s = 0;
    for (int i = 0; i < N * N; i++) s += c[i];
    printf("%.6e\\n", s);
    return 0;
}
"""


def _product_variants(tmp_path: Path) -> tuple[Variant, Variant]:
    """A 900^3 float product's offload and its gemm_tiling, as the rules write them."""
    from cudaify.frontend.analyze import analyze
    from cudaify.frontend.cxx_compat import to_cxx
    from cudaify.frontend.parse import parse
    from cudaify.transforms import get
    from cudaify.transforms.base import Context

    source = tmp_path / "product.c"
    source.write_text(PRODUCT)
    compat = to_cxx(parse(str(source), ())).text.encode("utf-8", "surrogateescape")
    program = analyze(str(source), (), source=compat)
    offloaded = get("offload").apply_rule(Variant(program.source), Context(program)).variant
    assert offloaded is not None
    tiled = get("gemm_tiling").apply_rule(offloaded, Context(program)).variant
    assert tiled is not None
    return offloaded, tiled


def screened(variant: Variant, region: float, whole: float) -> Any:
    """`variant` verified in one screening run, its region and whole program `region` and
    `whole` times as fast as the CPU's."""
    from cudaify.mcgs.search import Candidate

    timing = Timing(wall=1.0, region=1.0, runs=1, shared_by=1)
    reference = Timing(wall=whole, region=region, runs=5)
    evaluation = Evaluation(
        stage=Stage.CORRECT, ran_on_gpu=True, timing=timing, reference=reference
    )
    return Candidate(variant, evaluation)


def test_region_ties_go_to_the_kernels_the_cost_model_prices_lowest(tmp_path: Path) -> None:
    """A product whose region is mostly its copies: the plain kernel's region reads 2%
    faster than gemm_tiling's, within REGION_TIE, and the whole programs tie; the tiled
    kernel, priced far below the plain one, is written. 10% apart, the region decides."""
    from cudaify.backend.cost import predict

    plain, tiled = _product_variants(tmp_path)
    plain_cost, tiled_cost = predict(plain), predict(tiled)
    assert plain_cost is not None and tiled_cost is not None
    assert tiled_cost.kernel < plain_cost.kernel / 2

    close = [screened(plain, 40.0, 2.50), screened(tiled, 39.2, 2.48)]
    assert pipeline.finalists(close, "program")[0].variant is tiled
    apart = [screened(plain, 40.0, 2.50), screened(tiled, 36.0, 2.48)]
    assert pipeline.finalists(apart, "program")[0].variant is plain
    # by the region alone, the region decides
    assert pipeline.finalists(close, "region")[0].variant is plain


def test_one_run_readings_tie_where_the_programs_built_from_their_parts_do() -> None:
    """atb on an H200, one finalist's run each: offload read 4.07x as a whole with CUDA's
    start taken out, gemm_tiling 3.34x (their medians of ten runs: 0.337 and 0.321 s).
    Built from their parts (the reference's 36 ms outside the region, the region, CUDA's
    start) the two programs tie, and gemm_tiling's region is 25% faster: it leads. Timed
    in full (five runs each) the same readings are no tie; nor is a reading 31% behind,
    nor a faster region whose program, built from its parts, is 3x as slow."""

    def timed(
        name: str,
        wall: float,
        region: float,
        context: float,
        runs: int = 1,
        reference_region: float = 1.264,
    ) -> Any:
        timing = Timing(wall=wall, region=region, context=context, context_alone=0.0953, runs=runs)
        return verified(name, timing, Timing(wall=1.30, region=reference_region, runs=5))

    offload = timed("offload", 0.325, 0.00094, 0.1009)
    tiled = timed("tiled", 0.389, 0.00075, 0.0953)
    assert pipeline._steady(tiled) / pipeline._steady(offload) == pytest.approx(0.82, abs=0.01)
    assert pipeline.finalists([offload, tiled], "program")[0] is tiled
    full = [timed("offload", 0.325, 0.00094, 0.1009, 5), timed("tiled", 0.389, 0.00075, 0.0953, 5)]
    assert pipeline.finalists(full, "program")[0].variant.node == "offload"
    behind = timed("behind", 0.46, 0.00075, 0.0953)
    assert pipeline.finalists([offload, behind], "program")[0] is offload
    # its region covers less of the program: 0.3 s of the reference's time lies outside it
    narrow = timed("narrow", 0.389, 0.0005, 0.0953, reference_region=1.0)
    assert narrow.evaluation.region_speedup > tiled.evaluation.region_speedup
    assert pipeline.finalists([offload, narrow], "program")[0] is offload


def test_the_kernels_priced_lowest_within_the_wide_margin_are_timed_as_a_finalist(
    tmp_path: Path,
) -> None:
    """matmul on an H200, screened alone, one run each: the plain offload read 2.27x as a
    whole, another variant 1.87x, gemm_tiling 1.65x (0.73 of the best, outside
    FINALIST_MARGIN_ALONE). gemm_tiling, priced far below the plain kernel, is timed as a
    finalist too; one priced above the leader's is not, nor one below FINALIST_MARGIN."""
    plain, tiled = _product_variants(tmp_path)
    other = Variant(code="int main(void) { return 0; }\n").then("other", "int x;\n", "rule")

    found = [screened(plain, 40.0, 2.27), screened(other, 30.0, 1.87), screened(tiled, 35.0, 1.65)]
    assert [c.variant for c in pipeline.finalists(found, "program")] == [plain, tiled]
    # the leader's kernels priced lowest already: nothing more to time
    swapped = [
        screened(tiled, 40.0, 2.27),
        screened(other, 30.0, 1.87),
        screened(plain, 35.0, 1.65),
    ]
    assert [c.variant for c in pipeline.finalists(swapped, "program")] == [tiled]
    far = [screened(plain, 40.0, 2.27), screened(tiled, 35.0, 1.30)]
    assert [c.variant for c in pipeline.finalists(far, "program")] == [plain]
