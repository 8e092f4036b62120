"""Monte Carlo Graph Search: transpositions, value recomputation, budgets, seeds.
The expand/evaluate callbacks model a small synthetic optimization landscape."""

from __future__ import annotations

import math
import threading
import time
from dataclasses import replace

import pytest

from cudaify.core import Evaluation, Problem, Stage, Timing, Variant
from cudaify.mcgs.mcgs import Budget, GraphSearch, graph_prior, mixed_prior, reaches_more
from cudaify.mcgs.reward import reward
from cudaify.mcgs.search import SearchResult
from cudaify.regraph.graph import ReGraph


def correct(speedup: float) -> Evaluation:
    return Evaluation(
        stage=Stage.CORRECT,
        ran_on_gpu=True,
        timing=Timing(region=1.0),
        reference=Timing(region=speedup),
    )


def graph_of(*edges: tuple[str, str]) -> ReGraph:
    graph = ReGraph()
    graph.add_method("sequential")
    for source, target in edges:
        graph.add_edge(source, target)
    return graph


class Landscape:
    """Code is the sorted set of applied methods, so order does not matter: a,b and b,a
    are the same state (a transposition)."""

    def __init__(self, speed: dict[frozenset, float], fail: frozenset = frozenset()):
        self.speed = speed
        self.fail = fail
        self.expanded: list[tuple[str, ...]] = []
        self.evaluated: list[str] = []

    def expand(self, variant: Variant, method: str, how: str, refused: str = ""):
        applied = frozenset(variant.methods) | {method}
        if method in variant.methods:
            return None, "already applied"
        self.expanded.append(variant.methods + (method,))
        return variant.then(method, "+".join(sorted(applied)), how), ""

    def evaluate(self, variant: Variant) -> Evaluation:
        self.evaluated.append(variant.code)
        applied = frozenset(variant.methods)
        if applied & self.fail:
            return Evaluation(stage=Stage.STRUCTURE, problems=(Problem("compile", "error"),))
        return correct(self.speed.get(applied, 1.5))


def search(graph, landscape, **kwargs) -> GraphSearch:
    budget = kwargs.pop("budget", Budget(iterations=40, max_depth=3, rollout_depth=0))
    return GraphSearch(graph, landscape.expand, landscape.evaluate, budget=budget, **kwargs)


def run(gs: GraphSearch):
    return gs.run(Variant(code="seq"), Evaluation(stage=Stage.CORRECT))


def test_transposed_states_are_one_node_and_evaluated_once():
    graph = graph_of(("sequential", "a"), ("sequential", "b"), ("a", "b"), ("b", "a"))
    land = Landscape({frozenset("a"): 2.0, frozenset("b"): 2.0, frozenset("ab"): 20.0})
    gs = search(graph, land)
    result = run(gs)
    assert land.evaluated.count("a+b") == 1
    assert sum(1 for n in gs.nodes.values() if n.variant.code == "a+b") == 1
    assert result.best_verified.variant.code == "a+b"


def test_node_value_is_recomputed_from_children():
    graph = graph_of(("sequential", "a"), ("sequential", "b"), ("a", "b"), ("b", "a"))
    land = Landscape({frozenset("a"): 2.0, frozenset("b"): 2.0, frozenset("ab"): 20.0})
    gs = search(graph, land)
    run(gs)
    for node in gs.nodes.values():
        expected = node.utility + sum(
            e.visits * gs.nodes[e.child].value for e in node.edges if e.child and e.visits
        )
        assert node.value == pytest.approx(expected / node.visits)
    # the strong shared child lifts both parents above their own utility
    a = next(n for n in gs.nodes.values() if n.variant.code == "a")
    b = next(n for n in gs.nodes.values() if n.variant.code == "b")
    assert a.value > a.utility and b.value > b.utility


def test_finds_a_deep_optimum_behind_a_weak_first_step():
    graph = graph_of(("sequential", "x"), ("sequential", "y"), ("y", "z"), ("z", "w"))
    land = Landscape(
        {frozenset("x"): 4.0, frozenset("y"): 1.2, frozenset("yz"): 1.5, frozenset("yzw"): 50.0}
    )
    result = run(search(graph, land))
    assert result.best_verified.variant.methods == ("y", "z", "w")


def test_failed_children_are_recorded_and_never_expanded():
    graph = graph_of(("sequential", "bad"), ("bad", "a"), ("sequential", "a"))
    land = Landscape({frozenset("a"): 3.0}, fail=frozenset({"bad"}))
    result = run(search(graph, land))
    assert ("bad", "a") not in land.expanded
    assert any(c.evaluation.stage == Stage.STRUCTURE for c in result.candidates)
    assert result.best_verified.variant.methods == ("a",)
    # the trace's graph says why a state failed; a verified one has nothing to say
    states = {tuple(state["methods"]): state for state in result.states}
    assert states[("bad",)]["problems"] == ["compile: error"]
    assert "problems" not in states[("a",)] and "problems" not in states[()]


def test_iteration_and_slm_budgets():
    graph = graph_of(*[("sequential", m) for m in "abcdef"])
    land = Landscape({})
    gs = search(graph, land, budget=Budget(iterations=3, max_depth=2, rollout_depth=0))
    result = run(gs)
    assert result.iterations == 3 and len(land.expanded) <= 3
    land = Landscape({})
    gs = search(
        graph,
        land,
        ways=("rule", "slm"),
        budget=Budget(iterations=30, max_depth=1, slm_calls=2, rollout_depth=0),
    )
    run(gs)
    assert sum(1 for key in land.expanded if key) <= 6 + 2
    assert gs.slm_calls == 2


def test_same_seed_same_search_and_exhaustion_stops_early():
    graph = graph_of(*[("sequential", m) for m in "abc"], ("a", "b"), ("b", "c"))
    orders = []
    for _ in range(2):
        land = Landscape({frozenset("ab"): 5.0})
        run(search(graph, land, seed=7))
        orders.append(land.expanded)
    assert orders[0] == orders[1]
    land = Landscape({})
    result = run(search(graph, land, budget=Budget(iterations=1000, max_depth=3, rollout_depth=0)))
    assert result.iterations < 1000


def test_rollout_finds_and_records_rule_children():
    graph = graph_of(("sequential", "a"), ("a", "b"))
    land = Landscape({frozenset("a"): 1.1, frozenset("ab"): 30.0})
    gs = search(graph, land, budget=Budget(iterations=1, max_depth=2, rollout_depth=2))
    result = run(gs)
    assert result.best_verified.variant.methods == ("a", "b")
    node_a = next(n for n in gs.nodes.values() if n.variant.code == "a")
    assert node_a.utility == pytest.approx(reward(correct(30.0)))


def test_prior_mixes_slm_and_graph_statistics():
    graph = graph_of(("sequential", "a"), ("sequential", "b"))
    graph.stats("sequential", "a").visits = 10
    graph.stats("sequential", "a").successes = 9
    graph.stats("sequential", "a").mean_log_gain = 1.0
    p_graph = graph_prior(graph, "sequential", ["a", "b"])
    assert p_graph["a"] > p_graph["b"] and sum(p_graph.values()) == pytest.approx(1.0)
    mixed = mixed_prior(p_graph, {"a": 0.0, "b": 1.0})
    assert mixed["b"] > p_graph["b"] and sum(mixed.values()) == pytest.approx(1.0)


def test_an_edge_that_gains_over_a_slow_parent_ranks_above_an_unseen_one():
    """offload at 0.5x, data_residency after it at 2.5x: the edge's gain is 5x, so its
    prior is above an edge never seen (1/2 * e^0); recorded as a speedup over the CPU it
    was below. An edge that lost ranks below the unseen one."""
    from cudaify.regraph.build import VerifiedStep, merge_steps

    graph = graph_of(("offload", "unroll"), ("offload", "fast_math"))
    steps = [
        VerifiedStep("p", "offload", "data_residency", "a", "b", verified="gpu", speedup=2.5,
                     gain=2.5 / 0.5),
        VerifiedStep("p", "offload", "fast_math", "a", "c", verified="gpu", speedup=0.2,
                     gain=0.2 / 0.5),
    ]  # fmt: skip
    graph = merge_steps(graph, steps)
    assert graph.stats("offload", "data_residency").mean_log_gain == pytest.approx(math.log(5))
    methods = ["data_residency", "unroll", "fast_math"]
    prior = graph_prior(graph, "offload", methods)
    assert prior["data_residency"] > prior["unroll"] > prior["fast_math"]
    # the weights: (1 + 1) / (1 + 2) * 5 against 1/2 against (2/3) * 0.4
    assert prior["data_residency"] / prior["unroll"] == pytest.approx(2 / 3 * 5 / 0.5)
    assert prior["fast_math"] / prior["unroll"] == pytest.approx(2 / 3 * 0.4 / 0.5)


def test_an_unseen_method_that_supersedes_a_seen_one_ranks_just_ahead_of_it():
    """schedule does offload's work and more (Method.supersedes): with no statistics of
    its own it ranks by offload's, just ahead; once it has some, they decide."""
    graph = graph_of(("sequential", "offload"), ("sequential", "schedule"), ("sequential", "scan"))
    offload = graph.stats("sequential", "offload")
    offload.visits, offload.successes, offload.mean_log_gain = 33, 32, 0.7
    prior = graph_prior(graph, "sequential", ["offload", "schedule", "scan"])
    assert prior["schedule"] == pytest.approx(1.01 * prior["offload"])
    assert prior["scan"] < prior["offload"]
    seen = graph.stats("sequential", "schedule")
    seen.visits, seen.successes, seen.mean_log_gain = 10, 1, -1.0
    prior = graph_prior(graph, "sequential", ["offload", "schedule", "scan"])
    assert prior["schedule"] < prior["offload"]


class Precondition(Landscape):
    """Only `applicable` methods apply: the others fail their rule's precondition."""

    def __init__(self, applicable: set[str], speed: dict[frozenset, float]):
        super().__init__(speed)
        self.applicable = applicable

    def expand(self, variant: Variant, method: str, how: str, refused: str = ""):
        if method not in self.applicable:
            return None, f"{method}: precondition not met"
        return super().expand(variant, method, how)


def test_edges_that_do_not_apply_spend_no_iteration():
    """Ten methods out of the start, one applicable and ranked last by the graph's
    statistics: the first playout passes over the nine that do not apply and reaches it,
    however small the depth (a dead edge is not a move)."""
    names = [f"m{i}" for i in range(10)]
    graph = graph_of(*(("sequential", name) for name in names))
    for name in names[:-1]:  # the graph has seen the others succeed
        for _ in range(5):
            graph.stats("sequential", name).record(True, 3.0)
    land = Precondition({"m9"}, {frozenset({"m9"}): 8.0})
    gs = search(graph, land, budget=Budget(iterations=1, max_depth=1, rollout_depth=0))
    result = run(gs)
    assert result.iterations == 1
    assert result.best_verified is not None and result.best_verified.variant.code == "m9"
    assert len(result.skipped) == 9


def test_the_time_budget_stops_rollouts_and_playouts_when_spent(monkeypatch):
    """Each evaluation takes 10 s of a fake clock and the budget is 25 s: the search stops
    making candidates once it is spent (the one under way finishes), instead of finishing
    a 5-step rollout and only then looking at the clock."""
    import cudaify.mcgs.mcgs as mcgs_module

    now = [0.0]
    monkeypatch.setattr(mcgs_module.time, "perf_counter", lambda: now[0])
    chain = "abcdefg"
    graph = graph_of(("sequential", "a"), *zip(chain, chain[1:], strict=False))
    land = Landscape({})
    evaluate = land.evaluate

    def slow(variant: Variant) -> Evaluation:
        now[0] += 10.0
        return evaluate(variant)

    budget = Budget(iterations=40, seconds=25.0, max_depth=6, rollout_depth=5)
    gs = GraphSearch(graph, land.expand, slow, budget=budget)
    result = run(gs)
    assert len(land.evaluated) == 3  # a, then the rollout's b and c; c started at 20 s
    assert result.seconds == 30.0


class Costly(Precondition):
    """Rules cost 1 s of a fake clock, an SLM answer 60 s; every verification 10 s."""

    def __init__(self, applicable: set[str], speed: dict[frozenset, float], now: list[float]):
        super().__init__(applicable, speed)
        self.now = now
        self.ways: list[tuple[str, str]] = []

    def expand(self, variant: Variant, method: str, how: str, refused: str = ""):
        self.now[0] += 60.0 if how == "slm" else 1.0
        self.ways.append((method, how))
        if how == "slm":  # the model's answer fails its checks, as small models' mostly do
            return None, "the SLM's answer failed its checks"
        return super().expand(variant, method, how)

    def evaluate(self, variant: Variant) -> Evaluation:
        self.now[0] += 10.0
        return super().evaluate(variant)


def test_rule_edges_are_tried_before_the_model_is_asked(monkeypatch):
    """The graph ranks `a` first (its rule's wins), but its rule does not apply here;
    `b`'s rule does and gives 50x. The model's try at `a` costs a minute, more than the
    50 s budget: asked first, it spent the budget and `b` was never tried (seen on the
    H200: mcgs kept host code for threshold_counts, where the reduction rule gives 55x).
    `a`'s prior is its rule's record: its model edge's share does not lift it above the
    untried rule edges."""
    import cudaify.mcgs.mcgs as mcgs_module

    now = [0.0]
    monkeypatch.setattr(mcgs_module.time, "perf_counter", lambda: now[0])
    graph = graph_of(("sequential", "a"), ("sequential", "b"), ("sequential", "c"))
    for _ in range(8):
        graph.stats("sequential", "a").record(True, 4.0, "rule", True)
    land = Costly({"b", "c"}, {frozenset("b"): 50.0}, now)
    budget = Budget(iterations=40, seconds=50.0, max_depth=2, rollout_depth=0)
    gs = GraphSearch(graph, land.expand, land.evaluate, ways=("rule", "slm"), budget=budget)
    result = run(gs)
    assert result.best_verified is not None and result.best_verified.variant.code == "b"
    first_slm = next(i for i, (_, how) in enumerate(land.ways) if how == "slm")
    assert {m for m, how in land.ways[:first_slm] if how == "rule"} == {"a", "b", "c"}


def test_a_slow_variant_is_rescued_by_the_search_not_by_rollouts(monkeypatch):
    """`a` alone runs at 0.3x; of its successors the graph ranks b, c, d high (slow here)
    and e last, yet a+e is 40x (data_residency after a slow offload). Rollouts from `a`
    and its slow children spent the 70 s budget walking b, c, d; the search, trying every
    rule edge of `a`, reaches e in time. A fast node still gets its rollout."""
    import cudaify.mcgs.mcgs as mcgs_module

    now = [0.0]
    monkeypatch.setattr(mcgs_module.time, "perf_counter", lambda: now[0])
    chains = [(x, y) for x in "bcd" for y in "bcd" if x != y]
    graph = graph_of(("sequential", "a"), *(("a", m) for m in "bcde"), *chains)
    for method in "bcd":
        for _ in range(10):
            graph.stats("a", method).record(True, 3.0)
    land = Costly(set("abcde"), {frozenset("ae"): 40.0}, now)
    land.speed = {**{frozenset(k): 0.3 for k in ("a", "ab", "ac", "ad")}, **land.speed}
    budget = Budget(iterations=40, seconds=70.0, max_depth=3, rollout_depth=2)
    result = run(GraphSearch(graph, land.expand, land.evaluate, budget=budget))
    assert result.best_verified is not None and result.best_verified.variant.code == "a+e"

    land = Landscape({frozenset("a"): 2.0, frozenset("ab"): 30.0})
    gs = search(graph, land, budget=Budget(iterations=1, max_depth=3, rollout_depth=1))
    assert run(gs).best_verified.variant.code == "a+b"  # found by a's rollout


def test_the_models_first_play_value_follows_its_answers():
    """An SLM edge not tried yet is valued at the mean reward of the model's answers so
    far in this search (FPU_SLM counted once): failures make it wait behind the rules'
    children, good answers bring it forward. A rule edge keeps FPU."""
    from cudaify.mcgs.mcgs import FPU, FPU_SLM, Edge

    gs = search(graph_of(("sequential", "a")), Landscape({}))
    slm, rule = Edge("a", "slm", 0.5), Edge("a", "rule", 0.5)
    assert gs._first_play(slm) == FPU_SLM and gs._first_play(rule) == FPU
    gs._slm_answers += [-1.0, -1.0]
    after_failures = gs._first_play(slm)
    assert after_failures == pytest.approx((FPU_SLM - 2.0) / 3)
    gs._slm_answers += [reward(correct(20.0))] * 3
    assert gs._first_play(slm) > FPU > after_failures


def test_rollouts_stay_within_the_depth_limit():
    """--max-depth is the longest sequence tried, rollouts included: from a node one step
    deep with a depth limit of 2, a 3-step rollout takes one step."""
    graph = graph_of(("sequential", "a"), ("a", "b"), ("b", "c"), ("c", "d"))
    land = Landscape({frozenset("a"): 2.0, frozenset("ab"): 3.0, frozenset("abc"): 9.0})
    result = run(search(graph, land, budget=Budget(iterations=10, max_depth=2, rollout_depth=3)))
    assert max(len(c.variant.methods) for c in result.candidates) == 2
    assert result.best_verified.variant.code == "a+b"


@pytest.mark.parametrize("rollout_depth", [0, 2])
def test_a_rounding_only_child_is_rescued_and_its_rescue_is_the_node(rollout_depth: int):
    graph = graph_of(("sequential", "a"), ("a", "b"), ("exact", "b"))
    rescued: list[tuple[str, ...]] = []

    def expand(variant: Variant, method: str, how: str, refused: str = ""):
        if method in variant.methods:
            return None, "already applied"
        return variant.then(method, f"{variant.code}+{method}", how), ""

    def evaluate(variant: Variant) -> Evaluation:
        if "exact" in variant.methods:
            return correct(2.0 ** len(variant.steps))
        return Evaluation(stage=Stage.RUN, ran_on_gpu=True, rounding_only=True)

    def rescue(variant: Variant) -> Variant | None:
        rescued.append(variant.methods)
        return variant.then("exact", f"{variant.code}+exact", "rule")

    budget = Budget(iterations=10, max_depth=3, rollout_depth=rollout_depth)
    gs = GraphSearch(graph, expand, evaluate, budget=budget, rescue=rescue)
    result = run(gs)
    assert rescued == [("a",)]
    # the root's edge leads to the rescued variant, and the search went on from there
    root = gs.nodes[Variant(code="seq").key]
    assert [gs.nodes[e.child].variant.methods for e in root.edges if e.child] == [("a", "exact")]
    assert result.best_verified.variant.methods == ("a", "exact", "b")
    assert sum(1 for c in result.candidates if c.evaluation.rounding_only) == 1


def with_and_without_prefetch(edges, speed, budget: Budget | None = None):
    """The same search twice, without and with a prefetch that records what it is given:
    (landscape, result) without, (landscape, prefetched codes, result) with."""
    kwargs = {"budget": budget} if budget is not None else {}
    plain = Landscape(speed)
    expected = run(search(graph_of(*edges), plain, **kwargs))
    ahead = Landscape(speed)
    prefetched: list[list[str]] = []
    record = lambda variants: prefetched.append([v.code for v in variants])  # noqa: E731
    result = run(search(graph_of(*edges), ahead, prefetch=record, **kwargs))
    return plain, expected, ahead, prefetched, result


def test_with_prefetch_a_nodes_rule_children_are_made_at_once_and_the_result_is_the_same():
    """prefetch gets every rule child of a node when the node is first expanded; each edge
    is still applied once, and the search finds what it finds without prefetch."""
    edges = [("sequential", "a"), ("sequential", "b"), ("sequential", "c"), ("a", "b"), ("b", "a")]
    speed = {frozenset("a"): 2.0, frozenset("b"): 3.0, frozenset("ab"): 20.0}
    plain, expected, ahead, prefetched, result = with_and_without_prefetch(edges, speed)
    assert prefetched[0] == ["a", "b", "c"]  # the root's three rule children, together
    assert sorted(ahead.expanded) == sorted(set(ahead.expanded))  # each edge applied once
    assert result.best_verified.variant.code == expected.best_verified.variant.code == "a+b"
    assert sorted(ahead.evaluated) == sorted(plain.evaluated)


def test_the_cost_model_orders_a_nodes_rule_children_and_builds_the_hopeless_last():
    """Equal priors; the model predicts c cheapest, a twice as dear, b 100 times: c is
    built and verified first, then a, and b (deferred: over DEFER times c) only after both,
    and it is not prefetched. The trace records each prediction beside the measured region
    time, and how well the two ranked together."""
    edges = [("sequential", "a"), ("sequential", "b"), ("sequential", "c")]
    speed = {frozenset("a"): 2.0, frozenset("b"): 1.2, frozenset("c"): 4.0}
    land = Landscape(speed)
    timed = land.evaluate
    land.evaluate = lambda variant: replace(  # type: ignore[method-assign]
        timed(variant), timing=Timing(region=1.0 / speed[frozenset(variant.methods)])
    )
    costs = {"a": 20.0, "b": 1000.0, "c": 10.0}
    prefetched: list[list[str]] = []
    result = run(
        search(
            graph_of(*edges),
            land,
            prefetch=lambda variants: prefetched.append([v.code for v in variants]),
            predict=lambda variant: costs[variant.code],
        )
    )
    assert land.evaluated[:3] == ["c", "a", "b"]
    assert prefetched[0] == ["c", "a"]
    root = next(state for state in result.states if not state["methods"])
    ranks = {edge["method"]: edge.get("deferred", False) for edge in root["edges"]}
    assert ranks == {"a": False, "b": True, "c": False}
    predicted = {state["methods"][0]: state["predicted_cost"] for state in result.states[1:]}
    assert predicted == costs
    measured = {s["methods"][0]: s["region_seconds"] for s in result.states[1:]}
    assert measured == {"a": 0.5, "b": 1 / 1.2, "c": 0.25}
    # c fastest and cheapest, b slowest and dearest: the ranks agree
    assert result.cost_model == {"pairs": 3, "rank_agreement": 1.0}


def test_each_state_in_the_trace_says_what_its_build_and_runs_cost():
    """Issue 17's breakdown per candidate: the seconds spent waiting for its build and
    running it, as the evaluator measured them; the input (not built) has none."""
    land = Landscape({frozenset("a"): 2.0, frozenset("b"): 0.5})
    timed = land.evaluate
    cost = {"a": (0.75, 0.25), "b": (1.5, 0.0)}
    land.evaluate = lambda variant: replace(  # type: ignore[method-assign]
        timed(variant),
        compile_seconds=cost[variant.code][0],
        run_seconds=cost[variant.code][1],
    )
    result = run(search(graph_of(("sequential", "a"), ("sequential", "b")), land))
    seconds = {tuple(s["methods"]): s.get("seconds") for s in result.states}
    assert seconds == {
        (): None,
        ("a",): {"compile": 0.75, "run": 0.25},
        ("b",): {"compile": 1.5, "run": 0.0},
    }


def test_a_child_is_measured_only_against_siblings_that_move_at_least_its_functions():
    """A cheap kernel for a small loop (b moves `tail`) is no reason to defer the dear ones
    for the hot loop (a and c move `hot`); d moves both and costs half of a, so a ranks one
    power of two above it; c, 200 times d, is deferred; b is measured against itself and d."""
    edges = [("sequential", m) for m in "abcd"]
    land = Landscape({})
    moves = {"a": ("hot",), "b": ("tail",), "c": ("hot",), "d": ("hot", "tail")}

    def expand(variant: Variant, method: str, how: str, refused: str = ""):
        child, reason = land.expand(variant, method, how)
        if child is None:
            return child, reason
        return replace(child, offloaded=moves[method]), reason

    costs = {"a": 1000.0, "b": 1.0, "c": 100000.0, "d": 500.0}
    gs = GraphSearch(
        graph_of(*edges),
        expand,
        land.evaluate,
        budget=Budget(iterations=40, max_depth=1, rollout_depth=0),
        prefetch=lambda variants: None,
        predict=lambda variant: costs[variant.code],
    )
    result = run(gs)
    root = next(state for state in result.states if not state["methods"])
    deferred = {edge["method"]: edge.get("deferred", False) for edge in root["edges"]}
    assert deferred == {"a": False, "b": False, "c": True, "d": False}
    # b and d rank 0 (the prior breaks the tie: equal here, so the graph's order), a 1, c last
    assert land.evaluated[2:] == ["a", "c"] and sorted(land.evaluated[:2]) == ["b", "d"]


@pytest.mark.parametrize("model", [False, True])
def test_a_rollout_takes_the_cheapest_step_the_model_predicts(model: bool):
    """From a (faster than the CPU) a rollout of depth 1 takes one rule step: with equal
    priors the graph's first, x, unless the model predicts y far cheaper."""
    graph = graph_of(("sequential", "a"), ("a", "x"), ("a", "y"))
    land = Landscape({frozenset("a"): 2.0})
    costs = {"a": 10.0, "a+x": 10.0, "a+y": 2.5}  # not STEPPING_STONE times under a
    predict = (lambda variant: costs[variant.code]) if model else None
    budget = Budget(iterations=1, max_depth=2, rollout_depth=1)
    run(GraphSearch(graph, land.expand, land.evaluate, budget=budget, predict=predict))
    assert land.evaluated == ["a", "a+y" if model else "a+x"]


STONE_EDGES = [("sequential", "slow"), ("slow", "resident"), ("slow", "tuned")]
STONE_SPEED = {frozenset({"slow"}): 0.3, frozenset({"slow", "resident"}): 9.0}


def stone_search(costs: dict[str, float], land: Landscape) -> SearchResult:
    return run(
        search(
            graph_of(*STONE_EDGES),
            land,
            budget=Budget(iterations=40, max_depth=2, rollout_depth=0),
            prefetch=lambda variants: None,
            predict=lambda variant: costs[variant.code],
        )
    )


def test_a_state_whose_child_is_predicted_far_cheaper_is_not_run_the_child_is():
    """slow (copies both ways on every call) is priced 50x above its `resident` child:
    the child is verified in its place, slow is never run, and the trace says why."""
    land = Landscape(STONE_SPEED)
    costs = {"slow": 1000.0, "resident+slow": 20.0, "slow+tuned": 1000.0}
    result = stone_search(costs, land)
    assert "slow" not in land.evaluated
    assert land.evaluated[0] == "resident+slow"
    assert result.best_verified.variant.code == "resident+slow"
    states = {tuple(state["methods"]): state for state in result.states}
    assert states[("slow",)]["stage"] == "stepping_stone"
    (why,) = states[("slow",)]["problems"]
    assert why.startswith("too_slow: not run: the cost model prices it 50x above its resident")
    edges = {edge["method"]: edge for edge in states[("slow",)]["edges"]}
    assert edges["resident"]["visits"] >= 1


def test_a_state_priced_far_above_a_child_stopped_as_too_slow_is_not_run_either():
    """The `resident` child, priced 50x under slow, ran past the time to beat and was
    stopped: slow, dearer by prediction, would be stopped too, and is not run; a child
    that failed otherwise (a wrong answer, below) does not speak for its parent."""
    from cudaify.core import TOO_SLOW

    land = Landscape(STONE_SPEED)
    evaluate = land.evaluate
    stopped = Evaluation(
        stage=Stage.COMPILE,
        ran_on_gpu=True,
        problems=(Problem(TOO_SLOW, "stopped after 1.4 s: the fastest ... runs in 0.28 s"),),
    )
    land.evaluate = lambda variant: (  # type: ignore[method-assign]
        (land.evaluated.append(variant.code), stopped)[1]
        if variant.code == "resident+slow"
        else evaluate(variant)
    )
    costs = {"slow": 1000.0, "resident+slow": 20.0, "slow+tuned": 1000.0}
    result = stone_search(costs, land)
    assert "resident+slow" in land.evaluated and "slow" not in land.evaluated
    states = {tuple(state["methods"]): state for state in result.states}
    assert states[("slow",)]["stage"] == "stepping_stone"
    (why,) = states[("slow",)]["problems"]
    assert why.endswith("child, which was stopped as too slow in its place")


@pytest.mark.parametrize("case", ["child_only_4x_cheaper", "child_wrong", "no_cost_model"])
def test_the_state_is_run_itself_when_no_child_is_a_verified_far_cheaper_step(case: str):
    land = Landscape(STONE_SPEED)
    costs = {"slow": 1000.0, "resident+slow": 20.0, "slow+tuned": 1000.0}
    if case == "child_only_4x_cheaper":
        costs["resident+slow"] = 250.0
    if case == "child_wrong":
        land.fail = frozenset({"resident"})
    if case == "no_cost_model":
        result = run(
            search(
                graph_of(*STONE_EDGES),
                land,
                budget=Budget(iterations=40, max_depth=2, rollout_depth=0),
                prefetch=lambda variants: None,
            )
        )
    else:
        result = stone_search(costs, land)
    assert "slow" in land.evaluated
    states = {tuple(state["methods"]): state for state in result.states}
    assert "problems" not in states[("slow",)]  # run, and correct
    if case != "child_wrong":
        assert result.best_verified.variant.code == "resident+slow"


def test_a_state_the_deadline_stopped_reads_time_budget_in_the_trace():
    from cudaify.backend.evaluate import out_of_time

    land = Landscape({frozenset("a"): 2.0})
    evaluate = land.evaluate
    land.evaluate = lambda variant: (  # type: ignore[method-assign]
        out_of_time("the time budget is spent") if variant.code == "b" else evaluate(variant)
    )
    result = run(search(graph_of(("sequential", "a"), ("sequential", "b")), land))
    stages = {tuple(state["methods"]): state["stage"] for state in result.states}
    assert stages == {(): "input", ("a",): "correct", ("b",): "time_budget"}


def test_without_a_cost_model_the_order_is_the_priors():
    edges = [("sequential", "a"), ("sequential", "b")]
    graph = graph_of(*edges)
    graph.stats("sequential", "b").visits = 4
    graph.stats("sequential", "b").successes = 4
    land = Landscape({})
    result = run(search(graph, land, prefetch=lambda variants: None))
    assert land.evaluated[:2] == ["b", "a"] and result.cost_model == {}


def test_the_commands_deadline_stops_the_search():
    """`stop` is the command's deadline: after it says so, no new candidate starts."""
    graph = graph_of(("sequential", "a"), ("sequential", "b"), ("a", "b"), ("b", "a"))
    land = Landscape({})
    result = run(search(graph, land, stop=lambda: len(land.evaluated) >= 2))
    assert len(land.evaluated) == 2 and result.cut_short


class InOrder(Landscape):
    """The n-th candidate evaluated, whatever its methods, runs at speeds[n] (then 1.5x)."""

    def __init__(self, speeds: list[float]):
        super().__init__({})
        self.speeds = speeds

    def evaluate(self, variant: Variant) -> Evaluation:
        n = len(self.evaluated)
        self.evaluated.append(variant.code)
        return correct(self.speeds[n] if n < len(self.speeds) else 1.5)


def patient(patience: int | None) -> Budget:
    return Budget(iterations=40, max_depth=1, rollout_depth=0, patience=patience)


WIDE = graph_of(*[("sequential", m) for m in "abcdefghijkl"])


def test_the_search_converges_after_patience_candidates_without_a_gain():
    land = InOrder([1.5, 1.5, 1.52, 1.4])
    result = run(search(WIDE, land, budget=patient(3)))
    # the first faster variant, then three that do not beat it by 5% (1.52x is within it)
    assert len(land.evaluated) == 4
    assert result.converged and not result.cut_short
    assert result.best_verified.evaluation.region_speedup == pytest.approx(1.52)


@pytest.mark.parametrize("with_model", [False, True])
def test_patience_waits_for_a_made_child_the_cost_model_calls_much_cheaper(with_model: bool):
    """a is the best (1.5x) and nothing after it gains; with patience 2 the search stops
    before b's children are tried. When the model predicts b -> y at under half of a's
    cost, the search goes on until y is tried (and y, 20x, is the best). The same with a
    language model's method prior: the states looked ahead of take the graph's prior (on an
    H200, mcgs with the model left matvec at 4.1x where the rules found 19.5x)."""
    edges = [("sequential", "a"), ("sequential", "b"), ("a", "x"), ("b", "y"), ("b", "z")]
    speed = {frozenset("a"): 1.5, frozenset("b"): 1.4, frozenset("by"): 20.0}
    plain = {"a": 100.0, "b": 100.0, "a+x": 100.0, "b+y": 100.0, "b+z": 100.0}

    asked: list[str] = []

    def uniform(variant: Variant, methods: list[str], seconds: float | None) -> dict[str, float]:
        asked.append(variant.code)
        return {method: 1 / len(methods) for method in methods}

    def searched(costs: dict[str, float]) -> tuple[Landscape, SearchResult]:
        land = Landscape(speed)
        budget = Budget(iterations=40, max_depth=2, rollout_depth=0, patience=2)
        result = run(
            search(
                graph_of(*edges),
                land,
                budget=budget,
                prefetch=lambda variants: None,
                predict=lambda variant: costs[variant.code],
                method_prior=uniform if with_model else None,
            )
        )
        return land, result

    land, result = searched(plain)
    assert result.converged and "b+y" not in land.evaluated
    land, result = searched(plain | {"b+y": 40.0})
    assert "b+y" in land.evaluated and result.best_verified.variant.code == "b+y"
    # the model is asked at the states the search expands, not at those it looks ahead of
    assert asked == (["seq", "a", "seq", "a"] if with_model else [])


def test_a_gain_of_five_percent_starts_the_count_again():
    land = InOrder([1.5, 1.5, 1.6, 1.6, 1.7, 1.0, 1.0])
    result = run(search(WIDE, land, budget=patient(2)))
    # 1.6 beats 1.5 by 6.7%: counted afresh; 1.6 again: 1; 1.7 beats 1.6 by 6.25%: afresh
    assert len(land.evaluated) == 7 and result.converged
    assert result.best_verified.evaluation.region_speedup == pytest.approx(1.7)


def test_the_count_starts_only_once_a_variant_beats_the_cpu():
    land = InOrder([0.5] * 6 + [2.0] + [1.0] * 5)
    result = run(search(WIDE, land, budget=patient(2)))
    assert len(land.evaluated) == 9 and result.converged


def test_the_count_starts_only_once_a_variant_wins_by_the_objective():
    """Regions faster than the CPU in programs slower as a whole (`wins` says no) start no
    count: the search goes on to the variant that wins (3.5x here), then its patience."""
    speeds = [1.5, 1.5, 1.5, 1.5, 3.5] + [1.0] * 7
    by_region = InOrder(speeds)
    assert len(by_region.evaluated) == 0
    run(search(WIDE, by_region, budget=patient(2)))
    assert len(by_region.evaluated) == 3  # 1.5x, then two without a gain
    by_program = InOrder(speeds)
    result = run(
        search(WIDE, by_program, budget=patient(2), wins=lambda e: e.region_speedup >= 3.0)
    )
    assert len(by_program.evaluated) == 7 and result.converged
    assert result.best_verified.evaluation.region_speedup == pytest.approx(3.5)


@pytest.mark.parametrize("patience", [None, 0])
def test_without_patience_every_edge_is_tried(patience: int | None):
    land = InOrder([])
    result = run(search(WIDE, land, budget=patient(patience)))
    assert len(land.evaluated) == 12 and not result.converged


def test_rollout_paths_are_built_with_their_nodes_children_and_change_nothing():
    """The steps a rollout would take from each new child are known before any of them is
    verified (the next step does not depend on the last one's result): prefetch gets them
    right after the children, and the search evaluates what it evaluates without it."""
    edges = [("sequential", "a"), ("sequential", "b"), ("a", "c"), ("c", "d")]
    speed = {frozenset("a"): 2.0, frozenset("ac"): 3.0, frozenset("acd"): 9.0}
    budget = Budget(iterations=10, max_depth=3, rollout_depth=2)
    plain, expected, ahead, prefetched, result = with_and_without_prefetch(edges, speed, budget)
    assert prefetched[0] == ["a", "b", "a+c", "a+c+d"]  # b has nowhere to go
    assert sorted(ahead.expanded) == sorted(set(ahead.expanded))  # each edge applied once
    assert ahead.evaluated == plain.evaluated
    assert result.best_verified.variant.code == expected.best_verified.variant.code == "a+c+d"


def test_once_the_deadline_passes_no_rollout_step_is_made_or_priced():
    """The command's deadline passes while the root's first child is priced (a price and a
    rollout step take up to 0.1-0.2 s each, and a new node asks for tens): its sibling is
    not priced, no rollout step is made after it, and nothing is verified. Before, a 3 s
    budget under make -j3 ran 0.8 s over it in these steps."""
    edges = [("sequential", "a"), ("sequential", "b"), ("a", "c"), ("c", "d")]
    land = Landscape({frozenset("a"): 2.0, frozenset("ac"): 3.0})
    priced: list[str] = []

    def predict(variant: Variant) -> float:
        priced.append(variant.code)
        return 1.0

    budget = Budget(iterations=10, max_depth=3, rollout_depth=2)
    gs = search(
        graph_of(*edges),
        land,
        budget=budget,
        prefetch=lambda variants: None,
        predict=predict,
        stop=lambda: bool(priced),
    )
    result = run(gs)
    assert priced == ["a"]
    assert land.expanded == [("a",), ("b",)] and land.evaluated == []
    assert result.cut_short


class Asked(Precondition):
    """Records every expansion as (method, how, refused); every model answer fails."""

    def __init__(self, applicable: set[str], speed: dict[frozenset, float] | None = None):
        super().__init__(applicable, speed or {})
        self.asked: list[tuple[str, str, str]] = []

    def expand(self, variant: Variant, method: str, how: str, refused: str = ""):
        self.asked.append((method, how, refused))
        if how == "slm":
            return None, "the SLM's answer failed its checks"
        return super().expand(variant, method, how)


def _first_model(asked: list[tuple[str, str, str]]) -> int:
    return next(i for i, (_, how, _) in enumerate(asked) if how == "slm")


def test_a_model_edge_that_won_goes_before_an_untried_rule_of_a_low_prior_method():
    """`x`'s model edges won 10 of 10 times where its rule never did: its SLM edge takes
    most of `x`'s prior and is asked before the rule edge of `y`, a method the graph ranks
    low; the model is told why `x`'s rule refused here. Without the per-way record (an
    older statistics file) the same graph tries every rule edge first."""
    graph = graph_of(("sequential", "x"), ("sequential", "y"))
    for _ in range(10):
        graph.stats("sequential", "x").record(False, None, "rule", False)
        graph.stats("sequential", "x").record(True, 3.0, "slm", True)
    budget = Budget(iterations=1, max_depth=1, rollout_depth=0)
    land = Asked({"y"})
    run(GraphSearch(graph, land.expand, land.evaluate, ways=("rule", "slm"), budget=budget))
    first = _first_model(land.asked)
    assert land.asked[first] == ("x", "slm", "x: precondition not met")
    assert ("y", "rule", "") not in land.asked[:first]
    # the same counts, no record by way: equal shares, and the rules come first
    graph.stats("sequential", "x").how.clear()
    land = Asked({"y"})
    budget = Budget(iterations=3, max_depth=1, rollout_depth=0)
    run(GraphSearch(graph, land.expand, land.evaluate, ways=("rule", "slm"), budget=budget))
    first = _first_model(land.asked)
    assert {m for m, how, _ in land.asked[:first] if how == "rule"} == {"x", "y"}


def test_with_no_statistics_every_untried_rule_edge_comes_first():
    """Equal priors: a rule edge never tried comes before any model edge, even when the
    model's answers in this search have been good (its first play counts as at most a
    rule's while rules are untried: the rule is cheaper)."""
    graph = graph_of(*[("sequential", m) for m in "abcd"])
    for good_answers in (False, True):
        land = Asked(set("abcd"))
        gs = GraphSearch(
            graph,
            land.expand,
            land.evaluate,
            ways=("rule", "slm"),
            budget=Budget(iterations=6, max_depth=1, rollout_depth=0),
        )
        if good_answers:
            gs._slm_answers += [reward(correct(50.0))] * 5
        run(gs)
        first = _first_model(land.asked)
        assert first == 4, land.asked
        assert sorted(m for m, _, _ in land.asked[:first]) == list("abcd")


def test_the_model_edge_is_told_why_the_rule_refused_and_nothing_when_it_applied():
    graph = graph_of(("sequential", "a"), ("sequential", "b"))
    land = Asked({"b"})
    budget = Budget(iterations=8, max_depth=1, rollout_depth=0)
    run(GraphSearch(graph, land.expand, land.evaluate, ways=("rule", "slm"), budget=budget))
    told = {method: refused for method, how, refused in land.asked if how == "slm"}
    assert told == {"a": "a: precondition not met", "b": ""}
    # the rule of `a` was tried once: its refusal is remembered on its dead edge
    assert land.asked.count(("a", "rule", "")) == 1


def test_the_share_of_each_way_follows_its_wins():
    from cudaify.mcgs.mcgs import how_shares

    graph = graph_of(("sequential", "x"))
    assert how_shares(graph, "sequential", "x", ("rule", "slm")) == {"rule": 0.5, "slm": 0.5}
    for _ in range(4):
        graph.stats("sequential", "x").record(True, 2.0, "slm", True)
    graph.stats("sequential", "x").record(True, 2.0, "rule", False)
    shares = how_shares(graph, "sequential", "x", ("rule", "slm"))
    rule, slm = 1 / 3, 5 / 6  # (wins + 1) / (visits + 2)
    assert shares == pytest.approx({"rule": rule / (rule + slm), "slm": slm / (rule + slm)})
    assert how_shares(graph, "sequential", "x", ("rule",)) == {"rule": 1.0}


def with_a_good_model(graph: ReGraph, land: Costly, **kwargs) -> GraphSearch:
    """A search with rule and model edges (depth 2, no rollouts) whose model's answers
    earlier in this search were good (50x): its model edges rank high."""
    budget = Budget(iterations=40, max_depth=2, rollout_depth=0)
    gs = GraphSearch(
        graph, land.expand, land.evaluate, ways=("rule", "slm"), budget=budget, **kwargs
    )
    gs._slm_answers += [reward(correct(50.0))] * 3
    return gs


@pytest.mark.parametrize("timed", [False, True])
def test_a_model_edge_starts_only_where_its_answer_fits_the_time_left(monkeypatch, timed: bool):
    """Root rules `a` (0.5x alone) and `c` (does not apply) take 12 s of a 25 s budget;
    `b` after `a` gives 20x. Model edges cost 60 s here, and the model's answers earlier in
    this search were good, so the root's model edges rank above descending into `a`.
    Knowing the time left (13 s, under SLM_EDGE_SECONDS), the search spends none of it on
    the model and reaches a+b; without it, the answer overruns the budget first."""
    import cudaify.mcgs.mcgs as mcgs_module

    now = [0.0]
    monkeypatch.setattr(mcgs_module.time, "perf_counter", lambda: now[0])
    graph = graph_of(("sequential", "a"), ("sequential", "c"), ("a", "b"), ("a", "c"))
    land = Costly({"a", "b"}, {frozenset("a"): 0.5, frozenset("ab"): 20.0}, now)
    gs = with_a_good_model(
        graph,
        land,
        stop=lambda: now[0] >= 25.0,
        time_left=(lambda: 25.0 - now[0]) if timed else None,
    )
    result = run(gs)
    asked_model = any(how == "slm" for _, how in land.ways)
    found = result.best_verified is not None and result.best_verified.variant.code == "a+b"
    assert (asked_model, found) == ((False, True) if timed else (True, False)), land.ways


def test_what_a_model_edge_costs_is_learned_from_this_searchs_edges():
    from cudaify.mcgs.mcgs import SLM_EDGE_SECONDS

    left = [SLM_EDGE_SECONDS - 5.0]
    gs = search(graph_of(("sequential", "a")), Landscape({}), time_left=lambda: left[0])
    assert not gs._affordable()  # before any answer: the measured default
    gs._slm_seconds += [2.0, 4.0]  # this machine answers in 3 s
    assert gs._affordable()
    left[0] = 2.5
    assert not gs._affordable()
    assert search(graph_of(("sequential", "a")), Landscape({}))._affordable()  # no budget


def test_a_model_too_slow_for_its_prior_gets_no_edges_either():
    """Root rule `a` works, `b` does not apply; the model's prior cannot answer within its
    share (None): the search asks it nothing more, method prior or edge, however good its
    answers were, and spends the budget on rules."""
    graph = graph_of(("sequential", "a"), ("sequential", "b"), ("a", "b"))
    land = Costly({"a"}, {frozenset("a"): 2.0}, [0.0])
    for answers in (None, {}):
        asked: list[str] = []

        def prior(variant, methods, seconds, answers=answers, asked=asked):
            asked.append(variant.code)
            return answers

        land.ways.clear()
        run(with_a_good_model(graph, land, method_prior=prior, time_left=lambda: 1000.0))
        model_edges = [method for method, how in land.ways if how == "slm"]
        if answers is None:
            assert asked == ["seq"] and model_edges == [], (asked, land.ways)
        else:  # a model that answers (here: nothing to add) keeps its edges
            assert model_edges, land.ways


def test_the_model_prior_shares_a_tenth_of_the_search_time_and_stops_after_overrunning_it(
    monkeypatch,
):
    """The method-choice requests share PRIOR_SHARE of the search's time: each may take
    what the earlier ones left of it (a 20 s search: 2 s in all), none is made once it is
    spent, and one that could not answer within its share (None) is the last: on two CPU
    cores reading the program took 45 s of a 60 s budget, and the candidates had the rest."""
    import cudaify.mcgs.mcgs as mcgs_module
    from cudaify.mcgs.mcgs import PRIOR_SHARE

    graph = graph_of(("sequential", "a"), ("sequential", "b"), ("a", "b"), ("b", "a"))
    now = [0.0]
    monkeypatch.setattr(mcgs_module.time, "perf_counter", lambda: now[0])
    for answers, expected in (("fast", [2.0] * 4), ("slow", [2.0]), ("0.8 s", [2.0, 1.2, 0.4])):
        shares: list[float | None] = []

        def prior(variant, methods, seconds, answers=answers, shares=shares):
            shares.append(seconds)
            if answers == "0.8 s":
                now[0] += 0.8
            return {methods[0]: 1.0} if answers != "slow" else None

        now[0] = 0.0
        land = Landscape({frozenset("ab"): 5.0})
        result = run(search(graph, land, method_prior=prior, time_left=lambda: 20.0 - now[0]))
        assert result.best_verified.variant.code == "a+b"
        assert PRIOR_SHARE * 20.0 == 2.0
        assert shares == pytest.approx(expected), answers
    unlimited: list[float | None] = []
    run(search(graph, Landscape({}), method_prior=lambda v, m, s: unlimited.append(s) or {}))
    assert unlimited and set(unlimited) == {None}


def test_the_model_prior_is_asked_only_where_the_graph_has_little_record():
    """The graph has tried the root's two edges 4 times (2 per edge): its prior orders them
    alone. Below `a`, whose one edge it never tried, the model is asked. With one attempt
    in all at the root (half an attempt per edge) the model is asked there too."""
    asked: list[str] = []

    def prior(variant, methods, seconds):
        asked.append(variant.code)
        return {method: 1 / len(methods) for method in methods}

    for root_attempts, expected in ((4, ["a"]), (1, ["seq", "a"])):
        graph = graph_of(("sequential", "a"), ("sequential", "b"), ("a", "b"))
        for attempt in range(root_attempts):
            graph.stats("sequential", "ab"[attempt % 2]).record(True, gain=1.5)
        asked.clear()
        run(search(graph, Landscape({frozenset("a"): 2.0}), method_prior=prior))
        assert asked == expected, root_attempts


class WritesAhead(Precondition):
    """Rules `a` and `b` apply; `x`'s rule refuses, and the model's answer for `x` makes
    the 20x variant. That answer waits (in its own thread) until `wait_for` rule children
    were verified, and records what had been verified when it began; other model answers
    fail."""

    def __init__(self, wait_for: int):
        super().__init__(
            {"a", "b"}, {frozenset("a"): 1.5, frozenset("b"): 1.6, frozenset("x"): 20.0}
        )
        self.asked: list[tuple[str, str, str]] = []
        self.wait_for = wait_for
        self.verified = threading.Event()
        self.began_after: list[str] | None = None

    def expand(self, variant: Variant, method: str, how: str, refused: str = ""):
        self.asked.append((method, how, refused))
        if how != "slm":
            return super().expand(variant, method, how)
        if method != "x":
            return None, "the SLM's answer failed its checks"
        self.began_after = list(self.evaluated)
        assert self.verified.wait(10), "the model's answer was not written in the background"
        return variant.then("x", "x", "slm"), ""

    def evaluate(self, variant: Variant) -> Evaluation:
        evaluation = super().evaluate(variant)
        if sum(1 for code in self.evaluated if code in ("a", "b")) >= self.wait_for:
            self.verified.set()
        return evaluation


def prefetching(graph: ReGraph, land: Landscape, budget: Budget) -> GraphSearch:
    """A search with rule and model edges, given a prefetch (idle cores) that builds nothing."""
    return GraphSearch(
        graph,
        land.expand,
        land.evaluate,
        ways=("rule", "slm"),
        budget=budget,
        prefetch=lambda variants: None,
    )


@pytest.mark.parametrize("patience", [None, 1])
def test_the_model_answers_a_refused_method_in_the_background_and_its_child_is_verified(
    patience: int | None,
):
    """With prefetch (idle cores), a new node's model edge for the method whose rule
    refused there, of the highest prior, is answered in the background, told the reason,
    while the rule children are verified: the answer needs both verified before it is
    done (a foreground request would wait 10 s and fail). Its child is then verified like
    a rule child made ahead, and wins; it is asked once. With patience 1 the search has
    converged on `b` before the answer is in: it waits for the answer and tries it."""
    graph = graph_of(("sequential", "a"), ("sequential", "b"), ("sequential", "x"))
    land = WritesAhead(wait_for=2)
    budget = Budget(iterations=40, max_depth=1, rollout_depth=0, patience=patience)
    gs = prefetching(graph, land, budget)
    result = run(gs)
    assert land.began_after == []  # asked when the root was expanded, before any candidate
    assert land.asked.count(("x", "slm", "x: precondition not met")) == 1
    best = result.best_verified
    assert best is not None and best.variant.code == "x"
    assert best.variant.steps[-1].applied_by == "slm"
    assert gs.slm_calls == sum(1 for _, how, _ in land.asked if how == "slm")


def test_the_answer_written_ahead_counts_in_the_breakdown_only_as_the_searchs_wait():
    """The background answer's own request (measured as "model" on its thread) is not
    counted: the search's time was spent meanwhile on its rule children. What counts is
    the search's wait for the answer once nothing else was left (0.5 s here, after both
    rule children, 0.2 s each, were verified); before, the answer's 0.9 s on its thread
    were added beside the search's own time."""
    from cudaify.backend.budget import Breakdown

    breakdown = Breakdown()

    class SlowAnswer(WritesAhead):
        def expand(self, variant: Variant, method: str, how: str, refused: str = ""):
            if how != "slm" or method != "x":
                return super().expand(variant, method, how, refused)
            with breakdown.measure("model"):
                answer = super().expand(variant, method, how, refused)
                time.sleep(0.5)
            return answer

        def evaluate(self, variant: Variant) -> Evaluation:
            time.sleep(0.2)
            return super().evaluate(variant)

    graph = graph_of(("sequential", "a"), ("sequential", "b"), ("sequential", "x"))
    land = SlowAnswer(wait_for=2)
    gs = GraphSearch(
        graph,
        land.expand,
        land.evaluate,
        ways=("rule", "slm"),
        budget=Budget(iterations=40, max_depth=1, rollout_depth=0, patience=1),
        prefetch=lambda variants: None,
        breakdown=breakdown,
    )
    best = run(gs).best_verified
    assert best is not None and best.variant.code == "x"
    assert 0.3 < breakdown.get("model") < 0.75


def test_no_answer_is_written_ahead_without_prefetch_or_a_refused_method():
    """Without prefetch (busy cores) the model is asked only as before, after the rules;
    where every rule applies, nothing is asked ahead either."""
    graph = graph_of(("sequential", "a"), ("sequential", "b"), ("sequential", "x"))
    land = WritesAhead(wait_for=0)
    land.verified.set()
    budget = Budget(iterations=2, max_depth=1, rollout_depth=0)
    gs = GraphSearch(graph, land.expand, land.evaluate, ways=("rule", "slm"), budget=budget)
    run(gs)
    assert land.began_after is None and gs._ahead is None
    land = WritesAhead(wait_for=0)
    land.applicable = {"a", "b", "x"}
    gs = prefetching(graph, land, Budget(iterations=3, max_depth=1, rollout_depth=0))
    run(gs)
    assert [how for _, how, _ in land.asked] == ["rule"] * 3


def test_the_answer_written_ahead_is_for_a_refusal_that_points_at_the_code():
    """Two methods' rules refuse: `x` (the higher prior) finding no such pattern, `y`
    naming the kernel it could not rewrite. The model is asked for `y`, where it has a
    nest to work on; with two refusals that name nothing, for the higher prior."""

    class Refusing(Landscape):
        def __init__(self, reasons: dict[str, str]):
            super().__init__({})
            self.reasons = reasons
            self.asked: list[tuple[str, str]] = []

        def expand(self, variant: Variant, method: str, how: str, refused: str = ""):
            if how == "slm":
                self.asked.append((method, refused))
                return None, "the SLM's answer failed its checks"
            if method in self.reasons:
                return None, self.reasons[method]
            return super().expand(variant, method, how)

    graph = graph_of(("sequential", "x"), ("sequential", "y"), ("sequential", "z"))
    for _ in range(6):
        graph.stats("sequential", "x").record(True, 4.0)
    for reasons, expected in (
        ({"x": "no scan loop outside main", "y": "kernel 'k': its grid is not a dim3"}, "y"),
        ({"x": "no scan loop outside main", "y": "no std::sort call"}, "x"),
        ({"x": "no 2-D nest", "y": "input.c:7:5: cannot offload loop 'i'"}, "y"),
    ):
        land = Refusing(reasons)
        run(prefetching(graph, land, Budget(iterations=1, max_depth=1, rollout_depth=0)))
        assert land.asked[0] == (expected, reasons[expected])


@pytest.mark.parametrize("ahead", [False, True])
def test_a_model_edge_the_budget_left_unanswered_is_not_counted_as_a_failed_answer(ahead: bool):
    """The mean of the model's answers (an untried model edge's value) counts a failed
    answer as a structure failure, but not an edge that got no answer: the time budget
    ran out before it was written or checked (`Unanswered`). Before, both counted -1, so
    a search whose model requests were cut by the budget valued the model's edges as if
    every answer had been wrong. Asked in the foreground (after the rules) and in the
    background (`ahead`, idle cores) alike."""
    from cudaify.core import Unanswered
    from cudaify.mcgs.reward import STRUCTURE_FAIL

    class Answers(Precondition):
        def __init__(self, why: str):
            super().__init__({"a"}, {frozenset("a"): 2.0})
            self.why = why
            self.asked = 0

        def expand(self, variant: Variant, method: str, how: str, refused: str = ""):
            if how != "slm":
                return super().expand(variant, method, how)
            self.asked += 1
            return None, self.why

    graph = graph_of(("sequential", "a"), ("sequential", "x"))
    budget = Budget(iterations=6, max_depth=1, rollout_depth=0)
    for why, counted in (
        (Unanswered("the model failed (budget): the time budget ran out"), []),
        ("the SLM's answer failed its checks", [STRUCTURE_FAIL]),
    ):
        land = Answers(why)
        gs = (
            prefetching(graph, land, budget)
            if ahead
            else GraphSearch(graph, land.expand, land.evaluate, ways=("rule", "slm"), budget=budget)
        )
        run(gs)
        assert land.asked >= 1, "the model was never asked"
        assert gs._slm_answers == counted * land.asked, why


class Moving(Landscape):
    """As Landscape, and each method moves the functions `moves` names to the GPU."""

    def __init__(self, speed: dict[frozenset, float], moves: dict[str, tuple[str, ...]]):
        super().__init__(speed)
        self.moves = moves

    def expand(self, variant: Variant, method: str, how: str, refused: str = ""):
        child, why = super().expand(variant, method, how, refused)
        if child is None:
            return child, why
        return replace(
            child, offloaded=tuple(dict.fromkeys(variant.offloaded + self.moves.get(method, ())))
        ), ""


def test_a_child_that_moves_what_its_parent_leaves_on_the_host_is_tried_before_refinements():
    """offload moved the fill; its refinements (tile, cache: the graph has seen them, so
    they lead by prior) move nothing more, hist moves the histogram too (an edge the graph
    has never seen). The whole program is what counts: hist is verified first under
    offload, whatever the priors, and the rollout from offload takes it too."""
    edges = [
        ("sequential", "offload"),
        ("offload", "tile"),
        ("offload", "cache"),
        ("offload", "hist"),
    ]
    graph = graph_of(*edges)
    for refinement in ("tile", "cache"):
        graph.stats("offload", refinement).visits = 6
        graph.stats("offload", refinement).successes = 6
    land = Moving({}, {"offload": ("fill",), "hist": ("hist",)})
    run(search(graph, land, prefetch=lambda variants: None))
    assert land.evaluated[:2] == ["offload", "hist+offload"]
    # the order without the moves: the priors' (the graph's seen edges first)
    plain = Moving({}, {})
    run(search(graph, plain, prefetch=lambda variants: None))
    assert plain.evaluated[1] in ("cache+offload", "offload+tile")


def test_reaches_more_is_a_function_the_parent_leaves_on_the_host():
    parent = Variant(code="p", offloaded=("fill",))
    assert reaches_more(parent, Variant(code="c", offloaded=("fill", "hist")))
    assert not reaches_more(parent, Variant(code="c", offloaded=("fill",)))
    assert not reaches_more(parent, Variant(code="c"))
