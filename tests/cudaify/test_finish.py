"""The end of a search: which verified candidates are timed in full, and which is written."""

from __future__ import annotations

import dataclasses

from cudaify.core import Evaluation, Problem, Stage, Timing, Variant
from cudaify.core.config import Config
from cudaify.mcgs.search import Candidate, SearchResult
from cudaify.pipeline import FINALISTS, WHOLE_TIE, finalists, finish


def candidate(
    name: str, speedup: float, runs: int = 1, stage: Stage = Stage.CORRECT, shared_by: int = 2
) -> Candidate:
    evaluation = Evaluation(
        stage=stage,
        ran_on_gpu=True,
        timing=Timing(region=1.0, runs=runs, shared_by=shared_by),
        reference=Timing(region=speedup, runs=5),
    )
    start = Variant(code="seq")
    return Candidate(start.then(name, f"code-{name}", "rule"), evaluation)


class FakeEvaluator:
    """Full timings as given (a one-run sample can be lucky), counting what it is asked."""

    def __init__(
        self, full: dict[str, float], flaky: tuple[str, ...] = (), no_time: tuple[str, ...] = ()
    ):
        self.full = full
        self.flaky = flaky
        self.no_time = no_time  # the deadline leaves these their screening as it was
        self.remeasured: list[str] = []
        self.detailed: list[str] = []
        self.prefetched: list[str] = []
        self.plain: list[str] = []
        self.beats: list[float | None] = []

    def prefetch_harness(self, variants: list[Variant]) -> None:
        self.prefetched += [variant.node for variant in variants]

    def prefetch_plain(self, variants: list[Variant]) -> None:
        self.plain += [variant.node for variant in variants]

    def remeasure(
        self,
        variant: Variant,
        evaluation: Evaluation,
        detail: bool = True,
        beat: float | None = None,
    ):
        """The correctness run reads the full timing's speedup; past RACE_MARGIN under
        `beat` it is the only run (as the evaluator does)."""
        from cudaify.backend.evaluate import RACE_MARGIN

        self.remeasured.append(variant.node)
        self.beats.append(beat)
        if variant.node in self.no_time:
            return evaluation
        if variant.node in self.flaky:
            return dataclasses.replace(
                evaluation, stage=Stage.RUN, problems=(Problem("flaky", "output changed"),)
            )
        speedup = self.full[variant.node]
        runs = 1 if beat is not None and speedup * RACE_MARGIN < beat else 5
        reference = Timing(region=speedup, runs=5)
        return dataclasses.replace(
            evaluation, timing=Timing(region=1.0, runs=runs), reference=reference
        )

    def detail(self, variant: Variant, evaluation: Evaluation):
        self.detailed.append(variant.node)
        return dataclasses.replace(
            evaluation, timing=dataclasses.replace(evaluation.timing, kernel=0.5)
        )


def test_finalists_are_the_best_and_those_within_the_margin():
    found = [
        candidate("a", 10.0),
        candidate("b", 9.0),
        candidate("c", 2.0),
        candidate("d", 50.0, stage=Stage.RUN),  # wrong output: never a finalist
        candidate("e", 8.5),
        candidate("f", 8.4),
    ]
    chosen = [c.variant.node for c in finalists(found)]
    assert chosen == ["a", "b", "e"][:FINALISTS]
    assert finalists([candidate("x", 1.0, stage=Stage.COMPILE)]) == []


def test_with_the_gpu_alone_the_finalists_are_only_those_close_to_the_best():
    """A screening run that shared the GPU can read twice too slow: the margin is wide. Where
    every run had it alone, only noise separates them: a candidate at 70% is not timed."""
    speedups = {"a": 10.0, "b": 9.0, "c": 7.0}
    shared = [candidate(name, s, shared_by=3) for name, s in speedups.items()]
    assert [c.variant.node for c in finalists(shared)] == ["a", "b", "c"]
    alone = [candidate(name, s, shared_by=1) for name, s in speedups.items()]
    assert [c.variant.node for c in finalists(alone)] == ["a", "b"]
    mixed = [*alone[:2], candidate("c", 7.0, shared_by=2)]  # one shared run: the wide margin
    assert [c.variant.node for c in finalists(mixed)] == ["a", "b", "c"]


def test_finish_picks_by_the_full_timing_and_details_only_the_winner():
    result = SearchResult("mcgs", candidates=[candidate("a", 10.0), candidate("b", 9.5)])
    evaluator = FakeEvaluator(full={"a": 6.0, "b": 8.0})  # a's one run was lucky
    chosen = finish(result, evaluator, Config())
    assert chosen.variant.node == "b" and chosen.evaluation.region_speedup == 8.0
    assert sorted(evaluator.remeasured) == ["a", "b"] and evaluator.detailed == ["b"]
    assert sorted(evaluator.prefetched) == ["a", "b"]  # their harness libraries, ahead
    assert sorted(evaluator.plain) == ["a", "b"]  # and the plain builds a close call runs
    assert chosen.evaluation.timing.kernel == 0.5
    assert all(c.evaluation.timing.runs == 5 for c in result.candidates)  # trace shows these
    by_region = FakeEvaluator(full={"a": 6.0, "b": 8.0})
    finish(
        SearchResult("mcgs", candidates=[candidate("a", 10.0), candidate("b", 9.5)]),
        by_region,
        Config(objective="region"),
    )
    assert by_region.plain == []  # no close call by the region: no turns to build for


def test_a_finalist_that_fails_its_second_run_gives_way():
    result = SearchResult("mcgs", candidates=[candidate("a", 10.0), candidate("b", 2.0)])
    evaluator = FakeEvaluator(full={"a": 10.0, "b": 3.0}, flaky=("a",))
    chosen = finish(result, evaluator, Config())
    assert chosen.variant.node == "b"  # b was not close enough at first; a's failure let it in
    assert evaluator.remeasured == ["a", "b"]
    assert not result.candidates[0].evaluation.verified


def test_finish_measures_nothing_when_the_search_already_timed_in_full():
    result = SearchResult("mcgs", candidates=[candidate("a", 3.0, runs=1)])
    evaluator = FakeEvaluator(full={"a": 1.0})
    assert finish(result, evaluator, Config(runs=1, search_runs=1)).variant.node == "a"
    assert evaluator.remeasured == [] and evaluator.detailed == []
    assert finish(SearchResult("mcgs"), evaluator, Config()) is None


def test_a_finalist_whose_first_run_is_far_behind_one_timed_in_full_is_not_timed_further():
    """The leader is timed in full first; b's run with the GPU alone reads 6x against the
    leader's 10x (more than RACE_MARGIN behind): that run is b's timing; c's 9x is close
    enough to be timed in full."""
    found = [candidate("a", 10.0), candidate("b", 9.0), candidate("c", 8.9)]
    result = SearchResult("mcgs", candidates=found)
    evaluator = FakeEvaluator(full={"a": 10.0, "b": 6.0, "c": 9.0})
    chosen = finish(result, evaluator, Config())
    assert chosen.variant.node == "a"
    assert evaluator.remeasured == ["a", "b", "c"]
    # by the whole program (the default), the best timed by WHOLE_TIE: one that can
    # still tie with it may win by its region
    assert evaluator.beats == [None, 10.0 * WHOLE_TIE, 10.0 * WHOLE_TIE]
    runs = {c.variant.node: c.evaluation.timing.runs for c in result.candidates}
    assert runs == {"a": 5, "b": 1, "c": 5}


def test_a_finalist_faster_than_the_leader_by_its_first_run_is_timed_in_full_and_wins():
    found = [candidate("a", 10.0), candidate("b", 9.0)]
    result = SearchResult("mcgs", candidates=found)
    evaluator = FakeEvaluator(full={"a": 7.0, "b": 12.0})  # a's one screening run was lucky
    chosen = finish(result, evaluator, Config())
    assert chosen.variant.node == "b" and evaluator.beats == [None, 7.0 * WHOLE_TIE]
    assert chosen.evaluation.timing.runs == 5


def test_after_three_timed_finalists_a_new_one_is_timed_only_as_the_leader():
    """The three finalists read far slower in full than in their screening runs; d (5x,
    not a finalist at first) then ranks second, close to the best but not ahead of it:
    not timed. e
    (7x) is then the leader by its screening: it is timed, and loses to its full timing."""
    found = [
        candidate("a", 10.0),
        candidate("b", 9.8),
        candidate("c", 9.6),
        candidate("d", 5.0),
    ]
    result = SearchResult("mcgs", candidates=list(found))
    evaluator = FakeEvaluator(full={"a": 6.0, "b": 4.0, "c": 3.9, "d": 5.5})
    chosen = finish(result, evaluator, Config())
    assert chosen.variant.node == "a"
    assert evaluator.remeasured == ["a", "b", "c"]  # d, close to a's 6x, is left as screened

    found = [*found, candidate("e", 7.0)]
    found.remove(found[3])
    result = SearchResult("mcgs", candidates=found)
    evaluator = FakeEvaluator(full={"a": 6.0, "b": 5.9, "c": 5.8, "e": 4.0})
    chosen = finish(result, evaluator, Config())
    assert evaluator.remeasured == ["a", "b", "c", "e"]  # e led by its screening run
    assert chosen.variant.node == "a"


def test_the_trace_records_each_finalist_and_why_one_was_not_timed():
    """a is timed in full (5 runs, 12x against its 10x screening), b fails its second run,
    c gets no time before the deadline: each says so, in the order they were timed."""
    found = [candidate("a", 10.0), candidate("b", 9.5), candidate("c", 9.4)]
    result = SearchResult("mcgs", candidates=found)
    evaluator = FakeEvaluator(full={"a": 12.0, "b": 9.0, "c": 9.0}, flaky=("b",), no_time=("c",))
    record: list[dict] = []
    chosen = finish(result, evaluator, Config(), record)
    assert chosen.variant.node == "a"
    assert [r["methods"] for r in record] == [["a"], ["b"], ["c"]]
    first, flaky, late = record
    assert first["screened"] == {
        "program_speedup": None,
        "steady_speedup": 10.0,
        "region_speedup": 10.0,
        "runs": 1,
    }
    assert first["timed"]["region_speedup"] == 12.0 and first["timed"]["runs"] == 5
    assert first["why_not"] is None and first["seconds"] >= 0.0
    assert flaky["why_not"] == "its second run failed: flaky: output changed"
    assert late["why_not"].startswith("no time left before the deadline")
    assert late["timed"] == late["screened"]


def test_a_whole_program_tie_goes_to_the_finalist_whose_kernels_take_less_time(monkeypatch):
    """matmul on an H200: the plain kernel's region read 8% faster (its copies' noise: a
    13 ms region around a 0.07-0.3 ms kernel) and the whole programs tied. The tiled
    variant, priced lower, gets an event-timed run: its kernels take a quarter of the
    time and its copies move the same bytes, so it is written. Kernels at 90% of the
    leader's, or copies of more bytes, or no tie as a whole program: the leader stays."""
    import cudaify.pipeline as pipeline

    def whole(name: str, region: float, wall: float) -> Candidate:
        evaluation = Evaluation(
            stage=Stage.CORRECT,
            ran_on_gpu=True,
            timing=Timing(wall=wall, region=0.013 * 56.0 / region, runs=5),
            reference=Timing(wall=0.73, region=0.73, runs=5),
        )
        return Candidate(Variant(code="seq").then(name, f"code-{name}", "rule"), evaluation)

    prices = {"code-plain": 3.0e8, "code-tiled": 1.0e8, "code-costly": 9.0e8}
    monkeypatch.setattr(pipeline, "_kernel_cost", lambda code: prices[code])

    class Timed(FakeEvaluator):
        def __init__(self, kernels: dict[str, tuple[float, float]]):
            super().__init__(full={})
            self.kernels = kernels

        def remeasure(self, variant, evaluation, detail=True, beat=None):  # type: ignore[no-untyped-def]
            self.remeasured.append(variant.node)
            return evaluation

        def detail(self, variant, evaluation):  # type: ignore[no-untyped-def]
            self.detailed.append(variant.node)
            seconds, moved = self.kernels[variant.node]
            timing = dataclasses.replace(evaluation.timing, kernel=seconds, transfer_bytes=moved)
            return dataclasses.replace(evaluation, timing=timing)

    def written(kernels: dict[str, tuple[float, float]], tiled_wall: float = 0.217) -> tuple:
        found = [whole("plain", 56.2, 0.210), whole("tiled", 51.8, tiled_wall)]
        evaluator = Timed(kernels)
        chosen = finish(SearchResult("mcgs", candidates=found), evaluator, Config())
        return chosen.variant.node, evaluator.detailed

    quarter = {"plain": (3.0e-4, 9.7e6), "tiled": (0.7e-4, 9.7e6)}
    assert written(quarter) == ("tiled", ["plain", "tiled"])
    assert written({"plain": (3.0e-4, 9.7e6), "tiled": (2.7e-4, 9.7e6)})[0] == "plain"
    assert written({"plain": (3.0e-4, 9.7e6), "tiled": (0.7e-4, 19.4e6)})[0] == "plain"
    # 12% behind as a whole program: no tie, and no event-timed run for it
    assert written(quarter, tiled_wall=0.24) == ("plain", ["plain"])
    # by the region objective the region decides, as before
    found = [whole("plain", 56.2, 0.210), whole("tiled", 51.8, 0.217)]
    evaluator = Timed(quarter)
    chosen = finish(SearchResult("mcgs", candidates=found), evaluator, Config(objective="region"))
    assert chosen.variant.node == "plain" and evaluator.detailed == ["plain"]
