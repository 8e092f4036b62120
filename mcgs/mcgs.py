"""Monte Carlo Graph Search over the reasoning graph.

A state is a Variant; identical code reached by different paths is one state (the
transposition table is keyed by the normalised-code hash), so the search space is a graph
with cycles. Following KataGo's "Monte-Carlo Graph Search from First Principles", values
live on nodes and visit counts on edges, and a node's value is *recomputed* from its
children whenever a playout passes through it, never accumulated from playouts:

    N(n)  = 1 + sum_a N(n, a)
    Q(n)  = (U(n) + sum_a N(n, a) * Q(child(n, a))) / N(n)

where U(n) is the node's own utility: the hierarchical reward of its evaluation, or the
best reward a cheap rules-only rollout from it reached, whichever is larger. Rollouts start
only from nodes faster than the CPU (or compiled where there is no GPU to run them): a
slower variant is usually one step from its rescue, and that step is rarely among the
rollout's highest-prior ones, while the search tries all of its rule edges. Because Q(n)
is a function of the children's current values, a child reached and improved through
another path immediately counts for every parent (the transposition problem of naive MCTS).

Selection is PUCT over edges (a, edge = (method, how), how = rule | slm):

    score(n, a) = Q(child) + C_PUCT * P(n, a) * sqrt(1 + sum_b N(n, b)) / (1 + N(n, a))

with Q(child) = the first-play urgency for an edge not expanded yet: FPU for a rule edge;
for an SLM edge, the mean reward of the model's answers in this search so far, counting
FPU_SLM once as a prior answer (a failed answer counts as a structure failure, -1; an edge
the time budget or a switched-off model left without an answer does not count). So the
model is asked again where its answers have been good, and rarely where they have failed,
since the local models' measured edge pass rates are 0-46%. The prior mixes
the SLM's method-choice probabilities with the reasoning graph's edge statistics:

    P_graph(m) ∝ (successes + 1) / (visits + 2) * exp(clip(mean_log_gain, -2, 3))

where an edge's gain is its child's speedup over its parent's (not over the CPU): an edge
never seen weighs 1/2, and data_residency after an offload that it makes 5x faster weighs
more, however slow that offload was.
    P(m)       = LAMBDA * P_slm(m) + (1 - LAMBDA) * P_graph(m)    (P_graph alone without an SLM)

the model being asked only at a state whose out-edges the graph has tried fewer times in
all than it has out-edges (PRIOR_EVIDENCE); where it has more record, P_graph alone.
    P(n, (m, how)) = P(m) * share(how)
    share(how) ∝ (wins(how) + 1) / (visits(how) + 2), normalised over the ways here

where visits(how) and wins(how) count the graph's attempts of the edge (n's method, m)
made that way, a win being a child verified and faster than its parent (`how` in the edge
statistics; an older file without them: equal shares, P(m) / number of ways). The model's
edge of a method whose rule keeps failing where the model's answers win gets most of it.

Cost before score: a rule edge costs a source rewrite and one verification, an SLM edge a
generation as well, and rules succeed far more often (the measured edge pass rates of the
local models are 0-46%). So while a node has rule edges not tried yet, it makes its first
moves: the next untried rule edge, in the cost model's order then the prior's, unless an
untried SLM edge scores above every untried rule edge, its first-play value counted at most
FPU (a rule's). A rule edge never tried thus comes before an SLM edge whose prior is not
higher; an SLM edge goes first where its prior is enough higher than the best untried
rule's, C_PUCT * sqrt(N(n)) * (P(n, slm) - P(n, rule)) > FPU - min(FPU, Q_slm), which
with no record of the model's wins (equal shares, Q_slm = FPU_SLM: a gap of 0.5) takes a
method the graph ranks far above the others. The children wait until every rule edge was
tried (taken, or dead); then all live edges compete by PUCT. Without the first moves a
high-prior SLM edge at the root could spend the whole time budget while a rule that
applies was never tried.

Model edges do what rules cannot: when a method's rule refuses a node (its precondition
fails, with a reason such as "kernel 'k' maps one loop: nothing to swap"), the SLM edge of
that method at the node is given that reason (`ExpandHow`'s `refused`; the rule is tried
first when its edge was not, a source rewrite). The model is told why the rule could not
apply the method to the nest the reason names, and asked for a rewrite that makes the
method's result possible or applies it by hand; its answer is checked like any other.

Answers written ahead: with `prefetch` (idle cores), when a node is first expanded and its
rule children are made, the SLM edge of the highest prior among the methods whose rule
refused there is asked in a background thread (told the refusal), at most one at a time and
only where a model edge is affordable: the model writes on its generation slot while the
rule children build and run. On the default 30 s budget the searches of the 30 C programs
reached a model edge in 1 of 30 (H200, the 1.5B model): every rule edge comes first, and
the search had converged or spent its time by then. The answer's child becomes its edge's
made child, taken like a rule child made ahead (it costs one verification); the search does
not converge while it is unverified, and waits for an answer still being written before it
stops for want of moves (the budget still ends it).

Time before moves: under a time budget (`time_left`), a model edge is started only where
the search's time left covers what a model edge has taken in this search so far (its mean:
answer, nvcc, run), SLM_EDGE_SECONDS before the first. Otherwise the rule steps deeper in
the graph take that time. On an H200 bench with the default 30 s budget (before this rule),
mcgs with the model verified 0-3 candidates of 6 programs where the rules alone verified 3-9
and found a variant faster than the CPU; mcgs wrote host code for all 6.

Constants: C_PUCT = 1.5, FPU = 0.25, FPU_SLM = -0.25, LAMBDA = 0.5, SLM_EDGE_SECONDS = 15.

Convergence (`Budget.patience`): once a verified variant beats the CPU (by the command's
objective, `wins`: the whole program unless `--objective region`), the search ends
after `patience` new candidates in a row none of which beat the best by MIN_GAIN (5%, about
one screening run's noise). The reward of a faster variant is 0.5 + log(speedup), so that
is a reward gain of log(1.05). Most of a program's time budget used to go to candidates
tried after the search had found its best; the rest of the graph is left untried, which
the trace says (`converged`). Except what the cost model points at: while a made child
(moving at least the best variant's functions) is predicted under half the best variant's
cost, the search goes on until that child is tried (`PROMISING`).

Stepping stones: a new state whose cheapest rule child (moving at least its functions) the
cost model prices STEPPING_STONE times below it is not run; that child is verified in its
place, and when it is correct the state stays in the graph as too slow by prediction (its
run unseen) with the child behind its edge. A rewrite that is only a step on the way (an
offload that copies every array both ways on each call, before data_residency keeps them
on the device) otherwise ran for seconds only to be stopped as too slow.

With `prefetch`, a node's rule edges are all applied when the node is first expanded (they
are its first moves anyway) and their children's builds start at once on other cores; an
edge whose rule does not apply dies then. The time budget (`Budget.seconds`, or `stop`: the
command's deadline) is checked before every new candidate, in playouts and rollouts alike. A
playout never follows an edge into a node already on its own path (cycles are allowed in
the graph, not in one playout), chooses again from the same node when the edge it took dies
(a precondition not met, an unusable answer: no move was made), stops at the depth limit,
and stops early when it reaches a child that has more visits than the edge it came through
(the child already carries that information; KataGo's catch-up rule)."""

from __future__ import annotations

import contextvars
import math
import random
import re
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Protocol

from cudaify.backend.budget import Breakdown
from cudaify.backend.cost import rank_agreement
from cudaify.backend.evaluate import TIME_BUDGET
from cudaify.core import TOO_SLOW, Evaluation, Problem, Stage, Unanswered, Variant
from cudaify.mcgs.reward import (
    FASTER,
    STRUCTURE_FAIL,
    TOO_SLOW_UNSEEN,
    reward,
    stopped_as_too_slow,
    unrun,
)
from cudaify.mcgs.search import (
    Candidate,
    Predict,
    Prefetch,
    Rescue,
    SearchResult,
    Stop,
    verify,
)
from cudaify.regraph.graph import START, ReGraph
from cudaify.transforms import METHODS

C_PUCT = 1.5
# A gain smaller than this is within one screening run's noise: not an improvement
MIN_GAIN = 0.05
FPU = 0.25
FPU_SLM = -0.25  # the wrong-output band: what a model's answer is until this search sees some
LAMBDA = 0.5
# what a model edge costs before this search has timed one: answer, nvcc, run (the 1.5B
# default model on an H200: 17 s per edge on average over 25 edges, `make bench-slm --run`)
SLM_EDGE_SECONDS = 15.0
# the share of the search's time the model's method-choice requests may take in all (their
# slot waits and the model's reading of the program): on an H200 one takes 0.2-1 s (plus
# the slot waits of `bench -j 8`); on two CPU cores 45 s
PRIOR_SHARE = 0.1
# a request given less than this is not made
PRIOR_MIN_SECONDS = 0.05
# a refusal that names where the rule looked (`file:line:col:`, `line N`, a quoted kernel,
# function or loop) found its pattern and could not rewrite it: the model, shown that nest,
# has something to work on; one that names nothing ("no scan loop outside main") did not
POINTS_AT = re.compile(r":\d+:\d+:|\bline \d+\b|'[A-Za-z_]\w*'")
# the model's method prior is asked only at a state whose out-edges the graph has tried
# fewer times in all than it has out-edges: where it has tried each about once, its own
# prior ranked the best variant's first step as well or better (first for 16 of 28
# programs against the 1.5B model's 17, mean rank 1.50 against 1.68, README)
PRIOR_EVIDENCE = 1.0
# a child the cost model predicts this many times dearer than its cheapest sibling is
# built last: after every other rule child of its node, and not ahead of its turn
DEFER = 8.0
# a made child predicted this many times cheaper than the best variant keeps the search
# going after its patience is spent, until it is tried
PROMISING = 2.0
# a new state one of whose rule children (moving at least its functions) is predicted this
# many times cheaper is a stepping stone: that child is verified in its place
STEPPING_STONE = 8.0


def build_order(
    deferred: bool, cost_rank: int, prior: float, reaches: bool = False
) -> tuple[bool, bool, int, float]:
    """Which rule child is built first, smallest first: not deferred by the cost model,
    then one that `reaches` code its parent leaves on the host (see `reaches_more`), then
    the lower cost rank, then the higher prior."""
    return (deferred, not reaches, cost_rank, -prior)


def reaches_more(parent: Variant, child: Variant) -> bool:
    """Whether `child` runs functions on the GPU that `parent` leaves on the host. What the
    user runs is the whole program: on byte_hist, offload's child that also moved the
    histogram (atomic_privatize) came after every refinement of offload's fill kernel by
    prior (register_tiling, readonly_cache, launch_tuning), and the 30 s search ended
    before it was tried; the same child, run alone, was the fastest variant (1.45x)."""
    return bool(set(child.offloaded) - set(parent.offloaded))


class ExpandHow(Protocol):
    """(variant, method, how) -> (child, "") or (None, why not). For an SLM edge,
    `refused` is why the method's rule could not apply it to this variant ("" when it
    could): the model is told, and asked for what the rule could not do."""

    def __call__(
        self, variant: Variant, method: str, how: str, refused: str = ""
    ) -> tuple[Variant | None, str]: ...


Evaluate = Callable[[Variant], Evaluation]
# (variant, candidate methods, seconds it may take or None) -> probability per method (the
# SLM's choice), {} where the model failed, None where it could not answer in those seconds
MethodPrior = Callable[[Variant, list[str], "float | None"], "dict[str, float] | None"]


@dataclass(frozen=True)
class Budget:
    iterations: int = 32
    seconds: float | None = None
    slm_calls: int | None = None
    max_depth: int = 4
    rollout_depth: int = 2  # 0 turns rollouts off
    # Converged: once a verified variant beats the CPU, the search ends after this many new
    # candidates in a row that did not beat the best by MIN_GAIN (None or 0: never)
    patience: int | None = None


@dataclass
class Edge:
    method: str
    how: str
    prior: float
    visits: int = 0
    child: str | None = None  # key of the child node
    dead: str = ""  # why this edge cannot be taken (does not apply, failed to produce code)
    made: Variant | None = None  # the rule's child, made ahead and not verified yet
    # the made child's predicted cost over its cheapest sibling's, as a power of two
    # (0: the cheapest, or no prediction); `deferred`: over DEFER, built last
    cost_rank: int = 0
    deferred: bool = False
    reaches: bool = False  # the made child moves functions this node leaves on the host


@dataclass
class _Ahead:
    """A model's answer to one SLM edge, written in the background (see `_answer_ahead`)."""

    edge: Edge
    future: Future[tuple[Variant | None, str]]
    began: float
    ended: float | None = None


@dataclass
class Node:
    variant: Variant
    evaluation: Evaluation
    utility: float
    edges: list[Edge] = field(default_factory=list)
    expanded: bool = False
    value: float = 0.0

    def __post_init__(self) -> None:
        self.value = self.utility

    @property
    def visits(self) -> int:
        return 1 + sum(edge.visits for edge in self.edges)

    @property
    def terminal(self) -> bool:
        """Failed structure or compile: recorded, never expanded again."""
        return self.evaluation.stage < Stage.COMPILE


def graph_prior(graph: ReGraph, source: str, methods: list[str]) -> dict[str, float]:
    weights = {}
    for method in methods:
        weights[method] = _edge_weight(graph, source, method)
    for method in methods:
        # an edge the graph has not seen yet, of a method that does the work of others
        # (Method.supersedes), ranks just ahead of the best of theirs it has seen
        if graph.stats(source, method).visits:
            continue
        seen = set(graph.successors(source))
        known = [
            _edge_weight(graph, source, other)
            for other in _supersedes(method)
            if other in seen and graph.stats(source, other).visits
        ]
        if known:
            weights[method] = max(weights[method], 1.01 * max(known))
    total = sum(weights.values()) or 1.0
    return {method: weight / total for method, weight in weights.items()}


def _edge_weight(graph: ReGraph, source: str, method: str) -> float:
    stats = graph.stats(source, method)
    success = (stats.successes + 1) / (stats.visits + 2)
    return success * math.exp(min(3.0, max(-2.0, stats.mean_log_gain)))


def _supersedes(method: str) -> tuple[str, ...]:
    found = METHODS.get(method)
    return found.supersedes if found is not None else ()


def how_shares(graph: ReGraph, source: str, method: str, ways: tuple[str, ...]) -> dict[str, float]:
    """Each way's share of a method's prior at `source`, from what its edges made that way
    have won (verified and faster than the parent): (wins + 1) / (visits + 2), normalised
    over `ways`. Equal shares where nothing was recorded by way (older statistics)."""
    if not graph.graph.has_edge(source, method):
        return dict.fromkeys(ways, 1.0 / len(ways)) if ways else {}
    stats = graph.stats(source, method)
    weights = {how: (stats.way(how).wins + 1) / (stats.way(how).visits + 2) for how in ways}
    total = sum(weights.values()) or 1.0
    return {how: weight / total for how, weight in weights.items()}


def mixed_prior(graph_p: dict[str, float], slm_p: dict[str, float]) -> dict[str, float]:
    if not slm_p:
        return graph_p
    mixed = {m: LAMBDA * slm_p.get(m, 0.0) + (1 - LAMBDA) * p for m, p in graph_p.items()}
    total = sum(mixed.values()) or 1.0
    return {m: p / total for m, p in mixed.items()}


class GraphSearch:
    def __init__(
        self,
        graph: ReGraph,
        expand: ExpandHow,
        evaluate: Evaluate,
        ways: tuple[str, ...] = ("rule",),
        method_prior: MethodPrior | None = None,
        model_on: Callable[[], bool] | None = None,
        budget: Budget = Budget(),
        seed: int = 0,
        progress: Callable[[SearchResult], None] | None = None,
        rescue: Rescue | None = None,
        stop: Stop | None = None,
        prefetch: Prefetch | None = None,
        predict: Predict | None = None,
        wins: Callable[[Evaluation], bool] | None = None,
        time_left: Callable[[], float | None] | None = None,
        breakdown: Breakdown | None = None,
    ):
        self.graph = graph
        # where the command's time went: an answer written in the background is not
        # counted there (work ahead is quiet), the search's wait for it is the model's
        # (without the command's account, one of the search's own that nothing reads)
        self.breakdown = breakdown or Breakdown()
        # the seconds the search may still spend (None: no limit): a model edge starts only
        # where its answer and checks are expected to fit (see `_affordable`)
        self.time_left = time_left
        self._slm_seconds: list[float] = []  # how long each model edge took, checks included
        # whether a verified variant would be written (it beats the CPU by the command's
        # objective: the whole program by default): patience counts only from one such
        # variant. A region faster than the CPU in a program that is slower as a whole is
        # not yet a result (stencil2d_vector stopped at offload, 0.67x whole, before its
        # offload -> data_residency, 1.92x, was tried). Default: the reward's own FASTER.
        self.wins = wins
        self.predict = predict  # the static cost model: which made children to build first
        self._predicted: dict[str, float | None] = {}
        self.stop = stop  # the command's deadline: no new candidate once it says so
        self.prefetch = prefetch
        self.expand_fn = expand
        # a rule's child of a variant (rules are deterministic): a rollout's path is made
        # ahead, to build it at once, and made again when the rollout is taken
        self._rule_children: dict[tuple[str, str], tuple[Variant | None, str]] = {}
        self.evaluate_fn = evaluate
        self.rescue = rescue
        self.ways = ways
        self.method_prior = method_prior
        # False once a method-choice request overran its share: the model is too slow here
        # (or its generation slots too busy) for this budget, for its edges too
        self._prior_on = True
        self._prior_seconds = 0.0  # what the method-choice requests have taken so far
        self._began = time.perf_counter()  # when the search began (reset by `run`)
        # False once the model was switched off after its failures: from then on the search
        # is the rules-only search, its SLM edges dead and new nodes without any
        self.model_on = model_on
        self.budget = budget
        self.rng = random.Random(seed)
        self.progress = progress
        self.nodes: dict[str, Node] = {}
        self.result = SearchResult(strategy="mcgs")
        self.slm_calls = 0
        self._deadline: float | None = None  # perf_counter time the search must stop by
        self._slm_answers: list[float] = []  # the reward of each SLM answer (failed: -1)
        # a candidate whose only mismatch was rounding -> the rescued variant that is its state
        self._rescued: dict[str, str] = {}
        self._best = -math.inf  # the best reward so far
        self._best_variant: Variant | None = None  # the candidate that has it
        self._stale = 0  # new candidates since the best last improved by MIN_GAIN
        self._won = False  # a candidate has beaten the CPU by the objective (see `wins`)
        self._stones: set[str] = set()  # states not run: a child was verified in their place
        # the model's answer being written in the background, at most one at a time
        self._ahead: _Ahead | None = None
        self._model_pool: ThreadPoolExecutor | None = None

    def _out_of_time(self) -> bool:
        """Whether to start no new candidate: the budget is spent, or the search converged."""
        if self._converged():
            self.result.converged = True
            return True
        return self._time_spent()

    def _time_spent(self) -> bool:
        """The budget is spent (the search's own, or the command's deadline)."""
        spent = self._deadline is not None and time.perf_counter() >= self._deadline
        if spent or (self.stop is not None and self.stop()):
            self.result.cut_short = True
            return True
        return False

    def _converged(self) -> bool:
        patience = self.budget.patience or 0
        if not (patience > 0 and self._won and self._stale >= patience):
            return False
        return not self._model_child_waiting() and not self._promising_untried()

    def _model_child_waiting(self) -> bool:
        """Whether a model's answer written in the background made a child that is not
        verified yet: its generation cost nothing in the search's time, its check is one
        candidate, so patience does not end the search before it."""
        return any(
            edge.how == "slm" and edge.made is not None and not self._dead(edge)
            for node in self.nodes.values()
            for edge in node.edges
        )

    def _promising_untried(self) -> bool:
        """Whether a child made and not verified yet is predicted to cost under 1/PROMISING
        of the best variant's cost (the cost model; moving at least its functions): patience
        does not end the search before it is tried (matvec's offload -> data_residency,
        26.9x, was left behind a 4.1x best)."""
        best = self._best_variant
        best_cost = self._predicted_cost(best) if best is not None else None
        if best is None or best_cost is None:
            return False
        # look one step ahead of every faster state not expanded yet: its rule children
        # are made (a source rewrite each, no build) to be priced; their edges take the
        # graph's prior alone, as a model's request for each would cost more than a rewrite
        if self.prefetch is not None:
            for node in list(self.nodes.values()):
                depth = len(node.variant.steps)
                if node.expanded or node.terminal or node.utility < FASTER:
                    continue
                if 0 < depth < self.budget.max_depth:
                    self._make_edges(node, ask_model=False)
        moved = frozenset(best.offloaded)
        for node in self.nodes.values():
            for edge in node.edges:
                child = edge.made
                if child is None or edge.child is not None or self._dead(edge) or edge.deferred:
                    continue
                cost = self._predicted_cost(child)
                if cost is not None and frozenset(child.offloaded) >= moved:
                    if cost * PROMISING < best_cost:
                        return True
        return False

    def _count(self, candidate: Candidate) -> None:
        """Convergence bookkeeping for one new candidate (see Budget.patience)."""
        if not self._won or candidate.reward > self._best + math.log1p(MIN_GAIN):
            self._stale = 0
        else:
            self._stale += 1
        if self.wins is not None:
            self._won = self._won or self.wins(candidate.evaluation)
        else:
            self._won = self._won or candidate.reward >= FASTER
        if candidate.reward > self._best:
            self._best, self._best_variant = candidate.reward, candidate.variant

    # -- building the graph of states ------------------------------------------------

    def _known(self, key: str) -> Node | None:
        return self.nodes.get(self._rescued.get(key, key))

    def _verified(self, variant: Variant) -> Candidate:
        """Evaluate a new variant, rescued when its only mismatch is rounding (see
        search.verify): the candidate that becomes its node."""
        candidates = verify(variant, self.evaluate_fn, self.rescue, self.nodes)
        self.result.candidates.extend(candidates)
        for candidate in candidates:
            self._count(candidate)
        state = candidates[-1]
        if state.variant.key != variant.key:
            self._rescued[variant.key] = state.variant.key
        return state

    def _node_for(self, variant: Variant, evaluation: Evaluation | None = None) -> Node:
        known = self._known(variant.key)
        if known is not None:
            return known
        if evaluation is None:
            state = self._verified(variant)
            variant, evaluation = state.variant, state.evaluation
            if self.progress:
                self.progress(self.result)
        key = variant.key
        node = Node(variant, evaluation, reward(evaluation))
        self.nodes[key] = node
        if self.budget.rollout_depth > 0 and variant.steps and self._promising(node):
            node.utility = max(node.utility, self._rollout(variant))
            node.value = node.utility
        return node

    @staticmethod
    def _promising(node: Node) -> bool:
        """Worth a rollout: faster than the CPU, or compiled where nothing can run (no GPU
        to tell). A variant known to be slower is left to the search, which tries all of
        its rule edges when it comes back (a rollout's few highest-prior steps rarely hold
        the one that rescues it: data_residency after a slow offload)."""
        return node.utility >= FASTER or unrun(node.evaluation)

    def _graph_node(self, variant: Variant) -> str:
        return variant.node if variant.steps else START

    def _make_edges(self, node: Node, ask_model: bool = True) -> None:
        source = self._graph_node(node.variant)
        methods = self.graph.successors(source)
        node.expanded = True
        if not methods:
            return
        slm_p = self._model_prior(node, methods) if ask_model else {}
        prior = mixed_prior(graph_prior(self.graph, source, methods), slm_p)
        ways = self._ways()  # asked after the prior: its request may have switched the model off
        for method in methods:
            shares = how_shares(self.graph, source, method, ways)
            for how in ways:
                node.edges.append(Edge(method, how, prior[method] * shares[how]))
        if self.prefetch is not None:
            self._make_rule_children(node)
            self._answer_ahead(node)

    def _answer_ahead(self, node: Node) -> None:
        """Start the model's answer to the SLM edge of the highest prior at a new node
        among the methods whose rule refused it there (those whose refusal points at the
        program's code first, POINTS_AT), in the background, told the rule's reason: the
        model writes on its GPU slot while the rule children build and run, instead of
        after every rule edge (on the default 30 s budget, the 30 C programs' searches
        reached no model edge in 29 of 30). At most one answer is written at a time, and
        only where a model edge is affordable; its child is verified like a rule child made
        ahead (`_harvest`)."""
        if self._ahead is not None or self.prefetch is None or self._time_spent():
            return
        if "slm" not in self._ways() or not self._affordable():
            return
        if self.budget.slm_calls is not None and self.slm_calls >= self.budget.slm_calls:
            return
        refused = {e.method: e.dead for e in node.edges if e.how == "rule" and e.dead}
        asked = [
            e
            for e in node.edges
            if e.how == "slm" and e.method in refused and not self._dead(e) and e.child is None
        ]
        if not asked:
            return
        edge = max(
            asked, key=lambda e: (bool(POINTS_AT.search(refused[e.method])), e.prior, e.method)
        )
        self.slm_calls += 1
        if self._model_pool is None:
            self._model_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="model")
        # in the search thread's context: the request's deadline and the pauses that let
        # a timing have the GPU between two tokens are context variables
        future = self._model_pool.submit(
            contextvars.copy_context().run,
            self._quietly,
            node.variant,
            edge.method,
            "slm",
            refused[edge.method],
        )
        ahead = self._ahead = _Ahead(edge, future, time.perf_counter())
        future.add_done_callback(lambda _: setattr(ahead, "ended", time.perf_counter()))

    def _quietly(self, variant: Variant, method: str, how: str, refused: str):
        """`expand_fn` on the model's thread, outside the time breakdown (see `_harvest`)."""
        with self.breakdown.quiet():
            return self.expand_fn(variant, method, how, refused)

    @property
    def _writing(self) -> Edge | None:
        """The edge whose answer is being written in the background: not taken meanwhile."""
        return self._ahead.edge if self._ahead is not None else None

    def _harvest(self, wait: bool = False) -> bool:
        """The background answer, once written: its child becomes its edge's made child
        (verified when the edge is taken, as a rule's), or the edge dies with why. `wait`:
        wait for it within the time left. True when it made a child."""
        ahead = self._ahead
        if ahead is None:
            return False
        if not ahead.future.done():
            left = self.time_left() if self.time_left else None
            if not wait or (left is not None and left <= 0):
                return False
            try:
                with self.breakdown.measure("model"):
                    ahead.future.result(timeout=left)
            except TimeoutError:
                return False
        self._ahead = None
        self._slm_seconds.append((ahead.ended or time.perf_counter()) - ahead.began)
        child, reason = ahead.future.result()  # a bug in the expansion is raised here
        if child is None:
            self._dies(ahead.edge, reason)
            self._answer_failed(reason)
            return False
        ahead.edge.made = child
        return True

    def _model_prior(self, node: Node, methods: list[str]) -> dict[str, float]:
        """The model's method-choice prior at `node`. Under a time budget its requests
        share PRIOR_SHARE of the search's time (elapsed and left): each may take what
        the ones before it left of that share, and one that overruns it ends the model's
        prior for this search. The graph's prior orders the edges from then on, and the
        time goes to candidates (on two CPU cores one request took 45 s of a 60 s budget).
        It is not asked where the graph's own record suffices (`_graph_knows`)."""
        if self.method_prior is None or not self._prior_on:
            return {}
        if self._graph_knows(self._graph_node(node.variant), methods):
            return {}
        left = self.time_left() if self.time_left else None
        share = None
        if left is not None:
            elapsed = time.perf_counter() - self._began
            share = PRIOR_SHARE * (elapsed + max(0.0, left)) - self._prior_seconds
            if share < PRIOR_MIN_SECONDS:
                return {}
        asked = time.perf_counter()
        answer = self.method_prior(node.variant, methods, share)
        self._prior_seconds += time.perf_counter() - asked
        if answer is None:
            self._prior_on = False
            return {}
        return answer

    def _graph_knows(self, source: str, methods: list[str]) -> bool:
        """Whether the graph has tried `source`'s out-edges often enough (PRIOR_EVIDENCE
        attempts per edge, in all) for its prior to go without the model's."""
        tried = sum(self.graph.stats(source, method).visits for method in methods)
        return tried >= PRIOR_EVIDENCE * len(methods)

    def _ways(self) -> tuple[str, ...]:
        if self.model_on is not None and not self.model_on():
            return tuple(how for how in self.ways if how != "slm")
        return self.ways

    def _dead(self, edge: Edge) -> bool:
        """Dead, or an SLM edge of a model switched off since the edge was made."""
        if not edge.dead and edge.how == "slm" and "slm" not in self._ways():
            edge.dead = "the model was switched off"
        return bool(edge.dead)

    def _make_rule_children(self, node: Node) -> None:
        """Apply every rule edge of a new node now, and start building the new children:
        each is taken before the node's other edges (cost before score), so their builds
        run on other cores while the first ones are verified. An edge whose rule does not
        apply dies here, as it would when taken."""
        made: list[Variant] = []
        for edge in node.edges:
            # making a child is a source rewrite: only the deadline stops it (convergence
            # asks for children to be made, see _promising_untried)
            if edge.how != "rule" or self._time_spent():
                continue
            child, reason = self._expand(node.variant, edge.method, edge.how)
            if child is None:
                self._dies(edge, reason)
                continue
            edge.made = child
        made = self._rank_by_cost(node)
        # then the rollouts each child would take if it is promising: the cores are idle
        # (prefetch is only given while they are), and a rollout's builds otherwise wait
        # for one another
        ahead = [
            step for child in made for step in self._rollout_path(child, self._rollout_depth(child))
        ]
        if made and self.prefetch is not None:
            self.prefetch(made + ahead)

    def _predicted_cost(self, variant: Variant) -> float | None:
        """The cost model's price of `variant`; None once the budget is spent (a price takes
        up to 0.1 s, a new node's children and their rollouts ask for tens of them)."""
        if self.predict is None:
            return None
        if variant.key not in self._predicted:
            if self._time_spent():
                return None
            self._predicted[variant.key] = self.predict(variant)
        return self._predicted[variant.key]

    def _cost_ranks(self, children: list[Variant]) -> list[tuple[int, bool]]:
        """(cost rank, deferred) of each of a state's children by the cost model: the
        power of two its predicted cost is above the cheapest sibling's, and whether it
        is over DEFER times that. The model prices the GPU code a variant moves, not the
        CPU time it leaves, so a child is measured only against the siblings that move at
        least the functions it moves (a cheap kernel for a summary loop is no reason to
        defer the dear one for the hot loop). (0, False) where nothing is predicted."""
        costs = [self._predicted_cost(child) for child in children]
        priced = [
            (frozenset(child.offloaded), cost)
            for child, cost in zip(children, costs, strict=True)
            if cost is not None and cost > 0
        ]
        ranks: list[tuple[int, bool]] = []
        for child, cost in zip(children, costs, strict=True):
            if cost is None or cost <= 0:
                ranks.append((0, False))
                continue
            moved = frozenset(child.offloaded)
            least = min(c for other, c in priced if other >= moved)
            ranks.append((round(math.log2(cost / least)), cost > DEFER * least))
        return ranks

    def _rank_by_cost(self, node: Node) -> list[Variant]:
        """Rank the made rule children of `node` (Edge.cost_rank and deferred, see
        `_cost_ranks`); the new ones to build now, cheapest first (among equal ranks, the
        higher prior first), the deferred ones left out."""
        edges = [e for e in node.edges if e.made is not None]
        made = [e.made for e in edges if e.made is not None]
        for edge, (rank, deferred) in zip(edges, self._cost_ranks(made), strict=True):
            edge.cost_rank, edge.deferred = rank, deferred
            edge.reaches = edge.made is not None and reaches_more(node.variant, edge.made)
        ahead = sorted(
            (e for e in edges if not e.deferred),
            key=lambda e: build_order(e.deferred, e.cost_rank, e.prior, e.reaches),
        )
        return [e.made for e in ahead if e.made is not None and self._known(e.made.key) is None]

    def _take(self, node: Node, edge: Edge) -> Node | None:
        """Create the child behind an edge (the expensive step: rule or SLM, then verify)."""
        asks = edge.how == "slm" and edge.made is None  # else answered in the background
        if asks:
            if self.budget.slm_calls is not None and self.slm_calls >= self.budget.slm_calls:
                edge.dead = "SLM call budget spent"
                return None
            self.slm_calls += 1
        began = time.perf_counter()
        try:
            return self._make_child(node, edge)
        finally:
            if asks:
                self._slm_seconds.append(time.perf_counter() - began)

    def _make_child(self, node: Node, edge: Edge) -> Node | None:
        child: Variant | None = edge.made
        reason = ""
        if child is not None:
            edge.made = None
        else:
            refused = self._refusal(node, edge.method) if edge.how == "slm" else ""
            child, reason = self._expand(node.variant, edge.method, edge.how, refused)
        if child is None:
            self._dies(edge, reason)
            if edge.how == "slm":
                self._answer_failed(reason)
            return None
        made = self._stepping_stone(child) or self._node_for(child)
        edge.child = made.variant.key  # the rescued variant, when there was one
        if edge.how == "slm":
            self._slm_answers.append(reward(made.evaluation))
        return made

    def _answer_failed(self, reason: str) -> None:
        """A model edge made no child: a failed answer counts as a structure failure in
        the mean of the model's answers (`_first_play`); no answer at all (`Unanswered`:
        the budget ran out first, the model is off) does not count."""
        if not isinstance(reason, Unanswered):
            self._slm_answers.append(STRUCTURE_FAIL)

    def _refusal(self, node: Node, method: str) -> str:
        """Why `method`'s rule cannot apply it at `node` ("" when it can, or rules are not
        a way here): the model's edge for the method is told. A rule edge not tried yet is
        tried now (a source rewrite, kept for when it is taken); one that refuses dies, as
        it would when taken."""
        rule = next((e for e in node.edges if e.method == method and e.how == "rule"), None)
        if rule is None:
            return ""
        if rule.dead:
            return rule.dead
        if rule.child is not None or rule.made is not None:
            return ""
        child, reason = self._expand(node.variant, method, "rule")
        if child is None:
            self._dies(rule, reason)
        return rule.dead

    def _dies(self, edge: Edge, reason: str) -> None:
        """The edge leads nowhere (a precondition not met, an unusable answer): why, kept
        on the edge and in the result's skipped steps."""
        edge.dead = reason or "did not apply"
        self.result.skipped.append((f"{edge.method} ({edge.how})", edge.dead))

    def _stepping_stone(self, variant: Variant) -> Node | None:
        """A new state whose cheapest rule child (by the cost model, moving at least its
        functions) is predicted STEPPING_STONE times cheaper or more is not run itself:
        that child is verified first, and when it is correct the state becomes a node
        that was never run (too slow by prediction: TOO_SLOW_UNSEEN) with the child behind
        its edge; so does it when that child was stopped as too slow. An offload whose
        copies go both ways on every call, one step from the data_residency that keeps its
        arrays on the device, ran for seconds to be stopped as too slow (jacobi2d: 3.7 s,
        twice, of a 19 s search). None when no child is that cheap, or the child failed
        otherwise (the state is then verified as any other)."""
        if self.predict is None or self._known(variant.key) is not None:
            return None
        if len(variant.steps) >= self.budget.max_depth:
            return None
        cost = self._predicted_cost(variant)
        if cost is None or cost <= 0:
            return None
        moved = frozenset(variant.offloaded)
        cheapest: tuple[float, str, Variant] | None = None
        for method in self.graph.successors(self._graph_node(variant)):
            child, _reason = self._expand(variant, method, "rule")
            if child is None or self._known(child.key) is not None:
                continue
            child_cost = self._predicted_cost(child)
            if not child_cost or not frozenset(child.offloaded) >= moved:
                continue
            if child_cost * STEPPING_STONE <= cost and (
                cheapest is None or child_cost < cheapest[0]
            ):
                cheapest = (child_cost, method, child)
        if cheapest is None or self._time_spent():
            return None
        child_cost, method, child = cheapest
        ahead = self._node_for(child)
        if ahead.evaluation.verified:
            fate = "was verified in its place"
        elif stopped_as_too_slow(ahead.evaluation):
            # priced STEPPING_STONE times above a child that ran past the time to beat: it
            # would be stopped too (PolyBench atax ran offload for 3 s after its
            # data_residency child had been stopped so)
            fate = "was stopped as too slow in its place"
        else:
            return None
        why = (
            f"not run: the cost model prices it {cost / child_cost:.0f}x above its {method} "
            f"child, which {fate}"
        )
        stone = Node(
            variant,
            Evaluation(Stage.COMPILE, ran_on_gpu=True, problems=(Problem(TOO_SLOW, why),)),
            TOO_SLOW_UNSEEN,
        )
        self.nodes[variant.key] = stone
        self._stones.add(variant.key)
        self._make_edges(stone)
        for edge in stone.edges:
            if edge.method == method and edge.how == "rule":
                edge.made, edge.child, edge.visits = None, ahead.variant.key, 1
        self._recompute(stone)
        return stone

    def _expand(
        self, variant: Variant, method: str, how: str, refused: str = ""
    ) -> tuple[Variant | None, str]:
        if how != "rule":
            return self.expand_fn(variant, method, how, refused)
        key = (variant.key, method)
        if key not in self._rule_children:
            self._rule_children[key] = self.expand_fn(variant, method, how)
        return self._rule_children[key]

    def _rollout_depth(self, variant: Variant) -> int:
        """A rollout stays within the depth limit, as the playouts do."""
        return min(self.budget.rollout_depth, self.budget.max_depth - len(variant.steps))

    def _rollout_path(self, variant: Variant, depth: int) -> list[Variant]:
        """The variants a rollout from `variant` makes: rules only, along the edge that
        applies and leads somewhere new, cheapest by the cost model first (its rank, see
        `_cost_ranks`), then highest prior, step after step. Which step comes next does
        not depend on how the previous one fares, so the whole path is known, and can be
        built, before any of it is verified."""
        path: list[Variant] = []
        current = variant
        for _ in range(max(0, depth)):
            if self._time_spent():  # its steps are source rewrites, each up to 0.2 s
                break
            source = self._graph_node(current)
            methods = self.graph.successors(source)
            if not methods:
                break
            prior = graph_prior(self.graph, source, methods)
            options: list[tuple[str, Variant]] = []
            for method in sorted(methods, key=lambda m: -prior[m]):
                child, _reason = self._expand(current, method, "rule")
                if child is None or self._known(child.key) is not None:
                    continue
                if any(step.key == child.key for step in path):
                    continue
                options.append((method, child))
            if not options:
                break
            ranks = self._cost_ranks([child for _, child in options])
            first = min(
                range(len(options)),
                key=lambda i: build_order(
                    ranks[i][1],
                    ranks[i][0],
                    prior[options[i][0]],
                    reaches_more(current, options[i][1]),
                ),
            )
            current = options[first][1]
            path.append(current)
        return path

    def _rollout(self, variant: Variant) -> float:
        """Cheap look-ahead: the rollout path (see `_rollout_path`), built at once and
        verified step by step until one fails to compile. Returns the best reward
        reached; every variant it makes is a real, verified candidate."""
        best = -math.inf
        depth = self._rollout_depth(variant)
        path = self._rollout_path(variant, depth)
        if len(path) > 1 and self.prefetch is not None and not self._out_of_time():
            self.prefetch(path)
        index = 0
        while index < len(path):
            child = path[index]
            if self._out_of_time() or self._known(child.key) is not None:
                break
            state = self._verified(child)
            node = Node(state.variant, state.evaluation, 0.0)
            node.utility = node.value = reward(node.evaluation)
            self.nodes[state.variant.key] = node
            best = max(best, node.utility)
            if node.terminal:
                break
            index += 1
            if state.variant.key != child.key:  # rescued: the rest goes on from the rescue
                path = path[:index] + self._rollout_path(state.variant, depth - index)
        return best

    # -- one playout --------------------------------------------------------------------

    def _score(self, node: Node, edge: Edge) -> float:
        return self._puct(node, edge) + self.rng.random() * 1e-9  # seeded tie-break

    def _puct(self, node: Node, edge: Edge, first_play_cap: float = math.inf) -> float:
        parent_visits = sum(e.visits for e in node.edges)
        if edge.child:
            q = self.nodes[edge.child].value
        else:
            q = min(first_play_cap, self._first_play(edge))
        explore = C_PUCT * edge.prior * math.sqrt(parent_visits + 1) / (1 + edge.visits)
        return q + explore

    def _first_play(self, edge: Edge) -> float:
        if edge.how != "slm":
            return FPU
        return (FPU_SLM + sum(self._slm_answers)) / (1 + len(self._slm_answers))

    def _select(self, node: Node, on_path: set[str], remaining: int) -> Edge | None:
        """The edge to follow, among those that can still teach something: not dead, not
        back into the current path, and not into a part of the graph already explored to
        the depth limit (re-walking it would cost an iteration and change nothing). While
        rule edges are untried, the node's first moves: the next rule edge (the cost
        model's order, then the prior's), unless an SLM edge not tried yet scores above
        every untried rule edge by PUCT, its first play at most a rule's (a model's answer
        costs more); then the best PUCT score, children included."""
        affordable = self._affordable()
        writing = self._writing
        live = [
            e
            for e in node.edges
            if not self._dead(e)
            and e is not writing
            and not (e.child and e.child in on_path)
            and not (e.child and not self._open(self.nodes[e.child], remaining - 1, set()))
            and (affordable or e.how != "slm" or e.child is not None or e.made is not None)
        ]
        if not live:
            return None
        # a model's child made in the background costs one verification, as a rule's
        untried_rules = [
            e for e in live if e.child is None and (e.how == "rule" or e.made is not None)
        ]
        if not untried_rules:
            return max(live, key=lambda e: self._score(node, e))
        # cost before score (see the module's docstring): the children wait
        first = min(
            untried_rules,
            key=lambda e: (
                *build_order(e.deferred, e.cost_rank, e.prior, e.reaches),
                -self.rng.random(),
            ),
        )
        untried_slm = [e for e in live if e.how == "slm" and e.child is None and e.made is None]
        if not untried_slm:  # none when no model edge is affordable (see `live`)
            return first
        model = max(untried_slm, key=lambda e: self._score(node, e))
        rules_best = max(self._puct(node, e) for e in untried_rules)
        return model if self._puct(node, model, first_play_cap=FPU) > rules_best else first

    def _affordable(self) -> bool:
        """Whether a model edge can still finish: the search's time left covers the mean
        time of this search's model edges so far (answer, nvcc, run), or SLM_EDGE_SECONDS
        before the first. A late answer would be cut off at the budget's end, its time lost
        to the rule steps still untried deeper in the graph. A model that could not even
        read the program within its method prior's share of the time (`_model_prior`)
        cannot read it and write an answer in the time left: on two CPU cores the first
        model edge of a 90 s search ran for 70 s and was cut off."""
        left = self.time_left() if self.time_left else None
        if left is None:
            return True
        if not self._prior_on:  # only ever off for a model's prior that overran its share
            return False
        taken = self._slm_seconds
        expected = sum(taken) / len(taken) if taken else SLM_EDGE_SECONDS
        return left >= expected

    def _open(self, node: Node, remaining: int, visiting: set[str]) -> bool:
        """Whether anything new can be reached from this node within `remaining` steps."""
        key = node.variant.key
        if node.terminal or remaining <= 0 or key in visiting:
            return False
        if not node.expanded:
            return bool(self.graph.successors(self._graph_node(node.variant)))
        visiting = visiting | {key}
        writing = self._writing
        for edge in node.edges:
            if self._dead(edge) or edge is writing:  # its answer is awaited (`run`)
                continue
            if edge.child is None or self._open(self.nodes[edge.child], remaining - 1, visiting):
                return True
        return False

    def _recompute(self, node: Node) -> None:
        total = node.utility
        for edge in node.edges:
            if edge.child and edge.visits:
                total += edge.visits * self.nodes[edge.child].value
        node.value = total / node.visits

    def playout(self, root: Node) -> None:
        path: list[tuple[Node, Edge]] = []
        node = root
        on_path = {root.variant.key}
        while len(path) < self.budget.max_depth:
            if node.terminal:
                break
            if not node.expanded:
                self._make_edges(node)
            edge = self._select(node, on_path, self.budget.max_depth - len(path))
            if edge is None:
                break
            was_new = edge.child is None
            if was_new and self._out_of_time():
                break  # the budget is spent: count what this playout found, make nothing new
            child = self.nodes[edge.child] if edge.child else self._take(node, edge)
            if child is None:
                # the edge died (its precondition failed, or the answer was unusable): choose
                # again from the same node; a move that went nowhere spends no depth, so a
                # root whose one applicable method has a low prior still reaches it
                continue
            path.append((node, edge))
            on_path.add(child.variant.key)
            if was_new or child.visits > edge.visits + 1:
                break  # a new leaf, or a transposition that already knows more
            node = child
        for parent, edge in reversed(path):
            edge.visits += 1
            self._recompute(parent)

    def run(self, start: Variant, start_evaluation: Evaluation | None = None) -> SearchResult:
        """Playouts until a budget is spent or nothing new is reachable within the depth."""
        began = self._began = time.perf_counter()
        if self.budget.seconds is not None:
            self._deadline = began + self.budget.seconds
        root = self._node_for(start, start_evaluation)
        try:
            while self.result.iterations < self.budget.iterations:
                self._harvest()
                if self._out_of_time() or not self._open(root, self.budget.max_depth, set()):
                    # nothing left to try, but a model's answer on its way: its child, if
                    # it makes one, is tried (the wait ends with the time budget)
                    if self._ahead is not None and not self._time_spent() and self._harvest(True):
                        continue
                    break
                self.result.iterations += 1
                self.playout(root)
        finally:
            if self._model_pool is not None:  # an answer still being written ends at the
                self._model_pool.shutdown(wait=False)  # deadline (generation_stop)
        self.result.seconds = time.perf_counter() - began
        self.result.states = [self._describe(node) for node in self.nodes.values()]
        self.result.cost_model = self._cost_model_check()
        return self.result

    def _cost_model_check(self) -> dict[str, object]:
        """How well the predicted costs ranked the states the GPU measured: Spearman's
        rank correlation of (predicted cost, measured region time), over the states with
        both. Empty without a cost model."""
        if self.predict is None:
            return {}
        # the states that move the same functions are comparable (their regions are the
        # same code's): the most frequent such set is the one checked
        groups: dict[frozenset[str], list[tuple[float, float]]] = {}
        for node in self.nodes.values():
            region = node.evaluation.timing.region
            if not node.variant.steps or node.evaluation.stage < Stage.CORRECT or not region:
                continue
            predicted = self._predicted_cost(node.variant)
            if predicted is not None:
                moved = frozenset(node.variant.offloaded)
                groups.setdefault(moved, []).append((predicted, region))
        pairs = max(groups.values(), key=len, default=[])
        agreement = rank_agreement(pairs)
        return {
            "pairs": len(pairs),
            "rank_agreement": round(agreement, 3) if agreement is not None else None,
        }

    def _stage_label(self, node: Node) -> str:
        """How far a state got, for the trace: `input`; `stepping_stone` (not run: a
        child was verified in its place); `time_budget` (the deadline stopped it before
        it was built or run); else its stage."""
        if not node.variant.steps:
            return "input"
        if node.variant.key in self._stones:
            return "stepping_stone"
        problems = node.evaluation.problems
        if problems and all(p.kind == TIME_BUDGET for p in problems):
            return "time_budget"
        return node.evaluation.stage.label

    def _describe(self, node: Node) -> dict[str, object]:
        predicted = self._predicted_cost(node.variant) if node.variant.steps else None
        return {
            "key": node.variant.key,
            "methods": list(node.variant.methods),
            "stage": self._stage_label(node),
            "reward": round(node.utility, 4),
            "value": round(node.value, 4),
            "visits": node.visits,
            # the static cost model's prediction (relative units), beside what was measured
            **({"predicted_cost": round(predicted, 2)} if predicted is not None else {}),
            **(
                {"region_seconds": node.evaluation.timing.region}
                if node.variant.steps and node.evaluation.timing.region
                else {}
            ),
            **(
                {"program_speedup": round(speedup, 3)}
                if node.variant.steps and (speedup := node.evaluation.program_speedup)
                else {}
            ),
            # what the state cost: waiting for its build, its runs (issue 17's breakdown)
            **(
                {
                    "seconds": {
                        "compile": round(node.evaluation.compile_seconds, 3),
                        "run": round(node.evaluation.run_seconds, 3),
                    }
                }
                if node.variant.steps
                and (node.evaluation.compile_seconds or node.evaluation.run_seconds)
                else {}
            ),
            # why the state is not a verified, faster variant (the first few reasons)
            **(
                {"problems": [str(p) for p in node.evaluation.problems[:3]]}
                if node.variant.steps and node.evaluation.problems
                else {}
            ),
            "edges": [
                {
                    "method": edge.method,
                    "how": edge.how,
                    "prior": round(edge.prior, 4),
                    "visits": edge.visits,
                    "child": edge.child,
                    **({"dead": edge.dead} if edge.dead else {}),
                    **({"deferred": True} if edge.deferred else {}),
                }
                for edge in node.edges
            ],
        }
