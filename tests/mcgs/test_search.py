"""The rules search and the reward order, with stand-in expand/evaluate callbacks that
model real outcomes (the search is independent of what produces them)."""

from __future__ import annotations

from cudaify.core import Evaluation, Problem, Stage, Timing, Variant
from cudaify.mcgs.reward import reward
from cudaify.mcgs.search import run_rules, run_sequence
from cudaify.regraph.graph import ReGraph


def evaluation(stage: Stage, speedup: float | None = None, ran: bool = True) -> Evaluation:
    timing = Timing(region=1.0) if speedup else Timing()
    reference = Timing(region=speedup) if speedup else Timing()
    return Evaluation(stage=stage, ran_on_gpu=ran, timing=timing, reference=reference)


def test_reward_bands_are_ordered():
    ordered = [
        evaluation(Stage.PARSE),
        evaluation(Stage.STRUCTURE),
        evaluation(Stage.COMPILE, ran=True),
        evaluation(Stage.RUN),
        evaluation(Stage.COMPILE, ran=False),
        evaluation(Stage.CORRECT, speedup=0.5),
        evaluation(Stage.CORRECT, speedup=0.99),
        evaluation(Stage.CORRECT, speedup=1.0),
        evaluation(Stage.CORRECT, speedup=10.0),
        evaluation(Stage.CORRECT, speedup=100.0),
    ]
    rewards = [reward(e) for e in ordered]
    assert rewards == sorted(rewards) and len(set(rewards)) == len(rewards)


def chain_graph(*edges: tuple[str, str]) -> ReGraph:
    graph = ReGraph()
    graph.add_method("sequential")
    for source, target in edges:
        graph.add_edge(source, target)
    return graph


def test_rules_search_prefers_the_fastest_verified_and_dedupes():
    graph = chain_graph(("sequential", "a"), ("sequential", "b"), ("a", "c"), ("b", "c"))
    speed = {"a": 2.0, "b": 3.0, "c": 8.0}

    def expand(variant: Variant, method: str):
        if method == "c":  # a and b then c reach the same code: one state
            return variant.then("c", "code-c", "rule"), ""
        return variant.then(method, f"code-{method}", "rule"), ""

    def evaluate(variant: Variant):
        return evaluation(Stage.CORRECT, speedup=speed[variant.node])

    result = run_rules(Variant(code="seq"), graph, expand, evaluate, max_depth=3)
    assert result.best_verified.variant.code == "code-c"
    codes = [c.variant.code for c in result.candidates]
    assert codes.count("code-c") == 1  # transposition: the second path found a known state
    assert result.best.variant.methods in (("a", "c"), ("b", "c"))


def test_rules_search_does_not_expand_failed_states():
    graph = chain_graph(("sequential", "a"), ("a", "b"))
    tried = []

    def expand(variant, method):
        tried.append(method)
        return variant.then(method, f"code-{method}", "rule"), ""

    def evaluate(variant):
        return Evaluation(stage=Stage.STRUCTURE, problems=(Problem("compile", "boom"),))

    result = run_rules(Variant(code="seq"), graph, expand, evaluate)
    assert tried == ["a"] and result.best is None


def test_sequence_skips_methods_that_do_not_apply():
    def expand(variant, method):
        if method == "nope":
            return None, "no parallel loop"
        return variant.then(method, variant.code + method, "rule"), ""

    result = run_sequence(
        Variant(code="x"),
        ["a", "nope", "b"],
        expand,
        lambda v: evaluation(Stage.COMPILE, ran=False),
    )
    assert result.skipped == [("nope", "no parallel loop")]
    assert result.best.variant.methods == ("a", "b")


def test_pipeline_keeps_host_code_when_the_gpu_is_slower(tmp_path, monkeypatch):
    """A verified variant slower than gcc -O3 is no improvement: the input stays."""
    from cudaify import pipeline
    from cudaify.core.config import Config
    from cudaify.mcgs.search import Candidate, SearchResult

    source = tmp_path / "s.c"
    source.write_text(
        "void twice(int n, float *v) { for (int i = 0; i < n; i++) v[i] *= 2.0f; }\n"
        "int main(void) { float v[2048] = {0}; twice(2048, v); return (int)v[0]; }\n"
    )

    def slow_search(start, stages, config, progress=None):
        child = start.then("offload", start.code + "\n/* gpu */\n", "rule")
        return SearchResult("mcgs", [Candidate(child, evaluation(Stage.CORRECT, speedup=0.5))])

    monkeypatch.setattr(pipeline, "search", slow_search)
    result = pipeline._compile(str(source), source.read_bytes(), Config(cache=False))
    assert result.methods == () and not result.verified
    assert any("ran at 0.50x of the CPU" in w for w in result.warnings)
    assert "/* gpu */" not in result.text


def test_exhaustive_tries_every_applicable_sequence_beyond_the_graph_edges():
    # The graph knows one edge only; the exhaustive strategy still tries every method
    # at every state. "x" never applies (its precondition fails: no compile is spent),
    # "b" after "a" reaches the same code as "a" after "b" (one state).
    graph = chain_graph(("sequential", "a"))
    tried: list[tuple[tuple[str, ...], str]] = []

    def expand(variant: Variant, method: str):
        tried.append((variant.methods, method))
        if method == "x" or method in variant.methods:
            return None, f"{method} does not apply"
        code = "+".join(sorted((*variant.methods, method)))
        return variant.then(method, code, "rule"), ""

    evaluated: list[tuple[str, ...]] = []

    def evaluate(variant: Variant):
        evaluated.append(variant.methods)
        return evaluation(Stage.CORRECT, speedup=2.0 ** len(variant.steps))

    result = run_rules(
        Variant(code="seq"), graph, expand, evaluate, max_depth=3, every_method=["a", "b", "c", "x"]
    )
    assert result.strategy == "exhaustive"
    # every subset of {a, b, c} once: 3 singles, 3 pairs, 1 triple
    assert sorted(len(m) for m in evaluated) == [1, 1, 1, 2, 2, 2, 3]
    assert {frozenset(m) for m in evaluated} == {
        frozenset(s) for s in ("a", "b", "c", "ab", "ac", "bc", "abc")
    }
    assert result.best_verified.variant.code == "a+b+c"
    assert ("x", "x does not apply") in result.skipped
    # the rules strategy on the same graph only follows its one edge
    rules = run_rules(Variant(code="seq"), graph, expand, evaluate, max_depth=3)
    assert [c.variant.methods for c in rules.candidates] == [("a",)]


class Rounding:
    """A landscape where every kernel method's output differs from the reference by
    rounding only, until `exact` (the rescue) makes the arithmetic round like the CPU's;
    then each method step doubles the speed."""

    def __init__(self) -> None:
        self.rescued: list[tuple[str, ...]] = []
        self.evaluated: list[tuple[str, ...]] = []

    def expand(self, variant: Variant, method: str):
        if method in variant.methods:
            return None, "already applied"
        return variant.then(method, f"{variant.code}+{method}", "rule"), ""

    def evaluate(self, variant: Variant) -> Evaluation:
        self.evaluated.append(variant.methods)
        if "exact" not in variant.methods:
            return Evaluation(
                stage=Stage.RUN,
                ran_on_gpu=True,
                problems=(Problem("output", "token 3 differs"),),
                rounding_only=True,
            )
        return evaluation(Stage.CORRECT, speedup=2.0 ** (len(variant.steps) - 1))

    def rescue(self, variant: Variant) -> Variant | None:
        self.rescued.append(variant.methods)
        return variant.then("exact", f"{variant.code}+exact", "rule")


def test_a_rounding_only_candidate_is_rescued_once_and_the_search_goes_on_from_it():
    graph = chain_graph(("sequential", "a"), ("a", "b"), ("exact", "b"))
    land = Rounding()
    result = run_rules(
        Variant(code="seq"), graph, land.expand, land.evaluate, 3, None, None, land.rescue
    )
    # "a" was rescued; "b" followed the rescued state along exact's out-edge, and its own
    # output (through the rounding landscape) needed no second rescue
    assert land.rescued == [("a",)]
    assert land.evaluated == [("a",), ("a", "exact"), ("a", "exact", "b")]
    assert result.best_verified.variant.methods == ("a", "exact", "b")
    # both the rounding-only candidate and its rescue are on record
    assert [c.evaluation.rounding_only for c in result.candidates] == [True, False, False]


def test_a_rescue_that_still_mismatches_is_not_rescued_again():
    land = Rounding()
    land.evaluate = lambda variant: Evaluation(  # type: ignore[method-assign]
        stage=Stage.RUN, ran_on_gpu=True, rounding_only=True
    )
    result = run_sequence(Variant(code="seq"), ["a"], land.expand, land.evaluate, None, land.rescue)
    assert land.rescued == [("a",)]  # once: its rescue is not rescued in turn
    assert [c.variant.methods for c in result.candidates] == [("a", "exact"), ("a",)]
    assert result.best_verified is None


def test_a_wrong_output_of_kernels_that_compare_floats_is_rescued():
    """An argmin's index that FMA changed is no rounding-only mismatch, but rounding may
    have decided it: the rescue is tried, and the rescued variant is the state."""
    land = Rounding()
    decided = Evaluation(
        stage=Stage.RUN,
        ran_on_gpu=True,
        problems=(Problem("output", "token 2 differs"),),
        rounding_may_decide=True,
    )
    land.evaluate = lambda variant: (  # type: ignore[method-assign]
        evaluation(Stage.CORRECT, speedup=3.0) if "exact" in variant.methods else decided
    )
    result = run_sequence(Variant(code="seq"), ["a"], land.expand, land.evaluate, None, land.rescue)
    assert land.rescued == [("a",)]
    assert result.best_verified.variant.methods == ("a", "exact")


def test_a_wrong_output_is_not_rescued():
    land = Rounding()
    wrong = Evaluation(stage=Stage.RUN, ran_on_gpu=True, problems=(Problem("output", "x"),))
    result = run_sequence(
        Variant(code="seq"), ["a"], land.expand, lambda v: wrong, None, land.rescue
    )
    assert land.rescued == [] and len(result.candidates) == 1


def test_rules_search_builds_a_states_children_ahead_and_stops_when_told():
    """Every child of a state is made before the first is verified, so their builds can
    start together (prefetch gets them in one call); once `stop` says the time is up, no
    child is verified and the result says it was cut short."""
    graph = chain_graph(("sequential", "a"), ("sequential", "b"), ("sequential", "c"), ("a", "d"))
    prefetched: list[list[str]] = []
    verified: list[str] = []

    def expand(variant: Variant, method: str):
        return variant.then(method, f"code-{method}", "rule"), ""

    def evaluate(variant: Variant):
        verified.append(variant.node)
        return evaluation(Stage.CORRECT, speedup=2.0)

    def prefetch(variants):
        prefetched.append([v.node for v in variants])

    result = run_rules(
        Variant(code="seq"), graph, expand, evaluate, prefetch=prefetch, stop=lambda: False
    )
    assert prefetched == [["a", "b", "c"], ["d"]] and verified == ["a", "b", "c", "d"]
    assert not result.cut_short
    verified.clear()
    cut = run_rules(Variant(code="seq"), graph, expand, evaluate, stop=lambda: len(verified) >= 2)
    assert verified == ["a", "b"] and cut.cut_short
    assert [c.variant.node for c in cut.candidates] == ["a", "b"]


def test_a_sequence_stops_when_told():
    done: list[str] = []

    def expand(variant, method):
        return variant.then(method, variant.code + method, "rule"), ""

    def evaluate(variant):
        done.append(variant.node)
        return evaluation(Stage.COMPILE, ran=False)

    result = run_sequence(
        Variant(code="x"), ["a", "b", "c"], expand, evaluate, stop=lambda: len(done) >= 1
    )
    assert done == ["a"] and result.cut_short and result.iterations == 1
