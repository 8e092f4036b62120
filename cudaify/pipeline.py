"""The pipeline that wires the stages: parse and analyse, make the input valid C++,
search the reasoning graph with rules (and later the SLM), verify on the GPU, write the
best variant atomically with its trace."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import logging
import math
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cudaify import __version__
from cudaify.backend.budget import Breakdown, Deadline, OutOfTime
from cudaify.core import (
    Evaluation,
    Problem,
    Stage,
    Unanswered,
    Variant,
    content_hash,
    objective_speedup,
)
from cudaify.core.config import Config, result_settings
from cudaify.core.errors import ConfigError, InputError, ModelFailure

if TYPE_CHECKING:  # the frontend loads the language model's library (see frontend/__init__)
    from cudaify.frontend.facts import Program
    from cudaify.regraph.build import Apply, StagesFor, Verify

log = logging.getLogger("cudaify")


@dataclass(frozen=True)
class Result:
    """What a compile produced; plain data, so that it can be cached and replayed."""

    input_path: str
    output_path: str
    text: str  # the whole .cu written
    methods: tuple[str, ...]  # the applied sequence, empty when nothing was offloaded
    verified: bool
    ran_on_gpu: bool
    region_speedup: float | None
    trace: dict[str, Any]
    warnings: tuple[str, ...]
    dependencies: tuple[str, ...]  # the input and every header it read
    cached: bool = False
    program_speedup: float | None = None  # the whole run's, CUDA's start included

    @property
    def offloaded(self) -> bool:
        return bool(self.methods)


def check_output_path(output_path: str) -> None:
    folder = Path(output_path).resolve().parent
    if not folder.is_dir():
        raise InputError(f"{output_path}: the directory '{folder}' does not exist")
    if Path(output_path).is_dir():
        raise InputError(f"{output_path}: is a directory")


def write_atomically(path: str, text: str) -> None:
    """Write to a temporary file beside the target, then rename: an interrupted run
    never leaves a truncated file behind."""
    target = Path(path)
    fd, temp = tempfile.mkstemp(
        prefix=f".{target.name}.", suffix=".tmp", dir=target.resolve().parent
    )
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as handle:
            handle.write(text)
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def prepare(source_path: str, config: Config) -> Program:
    """Parse (diagnostics against the user's file), make the code valid C++, analyse
    that text: its byte offsets are the ones every rule rewrites."""
    from cudaify.frontend.analyze import analyze
    from cudaify.frontend.cxx_compat import to_cxx
    from cudaify.frontend.parse import parse

    parsed = parse(source_path, config.flags)
    compat = to_cxx(parsed)
    for edit in compat.edits:
        log.info("C++ compatibility: %s", edit.reason)
    for note in compat.notes:  # C-only constructs it could not rewrite: nvcc may reject them
        log.warning("%s", note)
    return analyze(source_path, config.flags, source=compat.text.encode("utf-8", "surrogateescape"))


class Stages:
    """The callbacks the search is given: apply a method (by rule or by the SLM), verify a
    variant, and the SLM's method-choice prior. The SLM engine is opened on first use."""

    def __init__(
        self,
        program: Program,
        config: Config,
        deadline: Deadline | None = None,
        breakdown: Breakdown | None = None,
    ):
        from cudaify.backend.evaluate import Evaluator
        from cudaify.transforms.base import Context

        self.program = program
        self.config = config
        self.context = Context(program=program)
        if config.ray:  # candidates verified on a Ray cluster, the search here
            from cudaify.backend import cluster

            self.evaluator: Evaluator = cluster.RemoteEvaluator(
                cluster.connect(config.ray), program, config, deadline, breakdown
            )
        else:
            self.evaluator = Evaluator(
                program,
                config,
                differential=config.differential,
                profile=config.profile,
                deadline=deadline,
                breakdown=breakdown,
            )
        self.deadline = self.evaluator.deadline
        self.breakdown = self.evaluator.breakdown  # one account of the time: its and the model's
        self._engine: Any = None
        from cudaify.transforms.slm.guard import Guard

        self.guard = Guard(config.model_failures, config.strict_model)
        self.slm_calls = 0
        # (a child's key, the method that made it) -> the variant it was made from. By key
        # alone, a rewrite reached by two orders of commuting steps (offload -> readonly_cache
        # -> shared_tiling and offload -> shared_tiling -> readonly_cache write the same
        # code) kept the parent the later one recorded, and readonly_cache's postcondition
        # was checked against an already restricted kernel: refused, its reward -1, in 5 of
        # matmul's 23 states
        self._parents: dict[tuple[str, str], Variant] = {}
        # host functions an SLM variant may have moved to the GPU: timed as the region
        self.timed = tuple(fn.name for fn in program.functions if fn.loops and fn.name != "main")
        # the search's best whole-program reading verified on the GPU (see `search_left`)
        self._best_read: Evaluation | None = None

    # -- the small model -------------------------------------------------------------

    @property
    def slm_enabled(self) -> bool:
        return slm_available(self.config)

    def model_on(self) -> bool:
        """Whether the model may still be asked: not switched off after its failures."""
        return self.guard.on

    @property
    def local_model(self) -> bool:
        """A model that generates on this machine (not an endpoint, not a replay)."""
        c = self.config
        return self.slm_enabled and not c.llm_url and not c.replay

    @property
    def engine(self) -> Any:
        if self._engine is None:  # not the lock once loaded: a request may hold it long
            with _MODEL_LOCK:  # the search's thread and its background answer (mcgs) may ask
                if self._engine is None:
                    with self.breakdown.measure("model"):
                        self._engine = open_engine_once(self.config)
        return self._engine

    def _slots_folder(self) -> Path:
        return self.evaluator.cache.root

    @contextlib.contextmanager
    def generating(self) -> Iterator[None]:
        """While a local model writes: one of the machine's `slm_jobs` generation slots,
        and shared use of the GPU, so that no reported timing runs meanwhile (a timing
        waits for the generations under way and keeps new ones out until it is done)."""
        if not self.local_model:
            yield
            return
        from cudaify.core.slots import NoSlot, one_slot
        from cudaify.transforms.slm.engine import generation_pauses, generation_stop_at

        gpu = self.evaluator.gpu
        # the slots are shared with other compiles (make -j, bench -j): waited for only until
        # the request's deadline, as the process's own model is (see _model_turn)
        until = generation_stop_at("waiting for a generation slot")
        with contextlib.ExitStack() as held:
            try:
                held.enter_context(one_slot(self._slots_folder(), self.config.slm_jobs, until))
            except NoSlot as busy:
                raise ModelFailure("budget", f"{busy} until the time budget ran out") from None
            # between tokens, a timing asked meanwhile gets the GPU (see GpuLock.make_way)
            held.enter_context(gpu.shared())
            held.enter_context(generation_pauses(gpu.make_way))
            yield

    def validate(self, code: str, method: Any, before: Variant | None = None) -> list[Problem]:
        """What the SLM's answer must pass before it counts: structure (the method's
        postcondition against `before`, the code it was applied to), then nvcc."""
        from cudaify.backend.evaluate import compile_problem
        from cudaify.transforms.structure import structural_problems

        problems = structural_problems(self.program, code, method, before)
        if problems:
            return list(problems)
        # With the offloaded functions named, on a GPU this is the timing build the
        # evaluation will run (a cache hit then), not a second, plain compile.
        build, _timed, _seconds = self.evaluator.compile(Variant(code=code, offloaded=self.timed))
        return [] if build.ok else [compile_problem(build.diagnostics)]

    @functools.cached_property
    def graph(self) -> Any:
        return search_graph()

    def examples(self, variant: Variant, method_name: str) -> list[Any]:
        from cudaify.regraph.graph import START
        from cudaify.regraph.retrieve import retrieve

        source = variant.node if variant.steps else START
        if not self.graph.graph.has_edge(source, method_name) or self.config.examples <= 0:
            return []
        return retrieve(self.graph, variant.code, source, method_name, self.config.examples)

    def method_prior(
        self, variant: Variant, methods: list[str], seconds: float | None = None
    ) -> dict[str, float] | None:
        """The model's probabilities of the next methods at `variant`; {} where it failed
        (the graph's prior alone, as without a model), None where it could not answer
        within `seconds` (its slot wait and answer; the model's load, once, not counted)."""
        from cudaify.transforms import METHODS
        from cudaify.transforms.slm.engine import Sampling, generation_deadline
        from cudaify.transforms.slm.prompt import choice_prompt

        options = [(m, METHODS[m].summary if m in METHODS else "") for m in methods]
        prompt = choice_prompt(variant.code, options)
        sampling = Sampling(temperature=0.0, seed=self.config.seed)
        try:
            model = self._model()
            with generation_deadline(None if seconds is None else time.monotonic() + seconds):
                return model.choose(prompt, methods, sampling)
        except ModelFailure as failure:
            log.info("no method-choice prior here: %s", failure)
            return None if failure.kind == "budget" else {}

    def _model(self) -> Any:
        """The engine as the search uses it: one generation slot per request, every
        request through the guard (see transforms.slm.guard)."""
        from cudaify.transforms.slm.guard import Guarded

        return Guarded(_Generating(self.engine, self._model_time, self.generation_stop), self.guard)

    @contextlib.contextmanager
    def _model_time(self) -> Iterator[None]:
        """A request to the model: its generation slot (waited for), then the answer,
        counted as the breakdown's "model" (the GPU wait inside it as "wait"). One request
        at a time in this process: a llama.cpp model is not safe to use from two threads
        (the search's method prior and its background answer crashed the process)."""
        with self.breakdown.measure("model"), _model_turn(), self.generating():
            yield

    # -- the callbacks -------------------------------------------------------------------

    def expand(self, variant: Variant, method_name: str, how: str = "rule", refused: str = ""):
        """The edge's child, or why there is none; `refused` (an SLM edge): why the
        method's rule could not apply it here, which the model is told."""
        from cudaify.transforms import get

        method = get(method_name)
        if how == "slm":
            from cudaify.transforms.slm.apply import apply_with_slm

            if not self.guard.on:
                return None, Unanswered(f"the model is switched off ({self.guard.off_reason})")
            self.slm_calls += 1
            examples = self.examples(variant, method_name)
            outcome, failed = _answered(
                lambda: apply_with_slm(
                    self._model(),
                    method,
                    variant,
                    examples,
                    lambda code: self.validate(code, method, variant),
                    context=self.context,  # the rule's own targets decide what the model edits
                    refused=refused,
                )
            )
            if outcome is None:  # this edge dies; the search goes on
                return None, failed
            child = outcome.variant
            if child is not None:
                child = dataclasses.replace(child, offloaded=self.timed)
                self._parents[child.key, method_name] = variant
            return child, outcome.reason
        try:
            outcome = method.rule(variant, self.context)
        except Exception as exc:  # noqa: BLE001 - see _rule_failed
            return None, _rule_failed(method_name, variant, exc)
        if outcome.variant is not None:
            self._parents[outcome.variant.key, method_name] = variant
        return outcome.variant, outcome.reason

    def whole_program(self, start: Variant, style: str):
        from cudaify.transforms.slm.apply import whole_program

        self.slm_calls += 1
        outcome, failed = _answered(
            lambda: whole_program(
                self._model(), style, start, lambda code: self.validate(code, None)
            )
        )
        if outcome is None:
            return None, failed
        child = outcome.variant
        return (dataclasses.replace(child, offloaded=self.timed) if child else None), outcome.reason

    def evaluate(self, variant: Variant, before: Variant | None = None) -> Evaluation:
        """A search candidate's verification: structure, compile, one correctness run
        that is also its timing sample (`Evaluator.screen`); `finish` times finalists."""
        from cudaify.transforms import METHODS
        from cudaify.transforms.structure import structural_problems

        method = METHODS.get(variant.node) if variant.steps else None
        # the postcondition compares with the code the step started from (coalesce: as
        # many kernels as before), not with the sequential program
        before = before or self._parents.get((variant.key, variant.node))
        problems = structural_problems(self.program, variant.code, method, before)
        if problems:
            return Evaluation(stage=Stage.PARSE, problems=tuple(problems))
        evaluation = self.evaluator.screen(variant)
        if evaluation.verified and evaluation.ran_on_gpu:
            best = self._best_read
            if best is None or (evaluation.program_speedup or 0.0) > (best.program_speedup or 0.0):
                self._best_read = evaluation
        return evaluation

    def out_of_time(self) -> bool:
        """The search's `stop`: the command's deadline has passed or, on a GPU, is within
        FINALIST_RESERVE of the budget, which is left for timing the finalists with the
        GPU alone (a screening run's timing shares it: under make -j16 it held the other
        programs' GPU work, see Evaluation.program_speedup)."""
        left = self.search_left()
        return left is not None and left <= 0.0

    def search_left(self) -> float | None:
        """Seconds the search may still spend (None: no budget): the time left less, on a
        GPU, the finalists' reserve and, while the best variant so far may be a close call
        (`_may_be_close`), one turn of its close call: the finalists keep that turn
        (`close_call_reserve`) only if the search left it. In a bench at 26b3603, where only
        the finalists kept it, 7 of 12 close calls found no turn left."""
        remaining = self.deadline.remaining()
        if remaining is None:
            return None
        if not self.evaluator.run_on_gpu:
            return remaining
        reserve = self.finalists_reserve()
        best = self._best_read
        if best is not None and _may_be_close(best, self.config):
            reserve += 1.2 * _turn_seconds(self.evaluator, best)
        return remaining - reserve

    def finalists_reserve(self) -> float:
        """Seconds of the budget kept for the finalists, on a GPU: FINALIST_RESERVE of it."""
        if not self.evaluator.run_on_gpu:
            return 0.0
        return FINALIST_RESERVE * (self.config.time_budget or 0.0)

    def generation_stop(self) -> float | None:
        """When a model's answer must be done (time.monotonic), None without a budget: when
        `out_of_time` turns true, so an answer begun late cannot overrun the budget (a
        generation of 1,000-3,000 tokens takes 5-60 s)."""
        left = self.search_left()
        return None if left is None else time.monotonic() + left

    def prefetch(self, variants: Sequence[Variant]) -> None:
        """The search's `prefetch`: build these candidates on other cores meanwhile."""
        self.evaluator.prefetch(variants)

    def rescue(self, variant: Variant) -> Variant | None:
        """A candidate whose output differed from the reference's by rounding only, or
        whose kernels compare floating values, with its kernels' arithmetic rounding like
        the CPU's: `fp_exact`'s rule. Every strategy
        calls this through mcgs.search.verify, once per such candidate."""
        from cudaify.transforms.fp_exact import FpExact

        child, reason = self.expand(variant, FpExact.name)
        if child is None:
            log.info("a mismatch rounding may explain is not rescued: %s", reason)
        return child


def _rule_failed(method: str, variant: Variant, exc: Exception) -> str:
    """A rule that raised on a variant a model wrote (code no rule of ours made, so no
    test of ours had it) kills only this edge: the search goes on and nothing unverified
    is written. On code only the rules wrote it is a bug of cudaify's, raised as one."""
    if not any(step.applied_by == "slm" for step in variant.steps):
        raise exc
    log.warning(
        "the '%s' rule failed on a variant the model wrote (%s: %s); the edge is skipped",
        method,
        type(exc).__name__,
        exc,
        exc_info=log.isEnabledFor(logging.DEBUG),
    )
    return f"the rule failed on the model's code ({type(exc).__name__}: {exc})"


def _answered(ask: Callable[[], Any]) -> tuple[Any, str]:
    """The model's outcome, or (None, why there is none): the model failed, or the time
    budget ran out before its answer was done or while it was being checked (nvcc cut
    short; both `Unanswered`: not a failure of the model's). Either way the edge dies and
    the search goes on, which then sees the budget spent."""
    try:
        return ask(), ""
    except ModelFailure as failure:
        why = f"the model failed ({failure.kind}): {failure}"
        return None, Unanswered(why) if failure.kind == "budget" else why
    except OutOfTime as spent:
        return None, Unanswered(f"the model's answer was not checked: {spent}")


class _Generating:
    """An engine whose every completion holds a generation slot (see cudaify.core.slots),
    and ends when the search must stop (`stop_at`: the instant, time.monotonic; see
    engine.generation_deadline); the validation between retries (nvcc) does not."""

    def __init__(self, engine: Any, slot: Callable[[], Any], stop_at: Callable[[], float | None]):
        self._engine = engine
        self._slot = slot
        self._stop_at = stop_at

    def __getattr__(self, name: str) -> Any:
        from cudaify.transforms.slm.engine import generation_deadline

        attribute = getattr(self._engine, name)
        if name not in ("complete", "choose") or not callable(attribute):
            return attribute

        def held(*args: Any, **kwargs: Any) -> Any:
            # the deadline first: the slot's wait (another request's whole answer) ends there
            with generation_deadline(self._stop_at()), self._slot():
                return attribute(*args, **kwargs)

        return held


_ENGINES: dict[tuple[Any, ...], Any] = {}
# held while a process's model is loaded or asked (see Stages._model_time)
_MODEL_LOCK = threading.RLock()


@contextlib.contextmanager
def _model_turn() -> Iterator[None]:
    """_MODEL_LOCK, waited for until the request's generation deadline at most: the
    search's answer written in the background holds it for its whole answer, and a method
    prior given a share of the search's time waited that long (a ModelFailure "budget"
    where the deadline comes first)."""
    from cudaify.transforms.slm.engine import generation_stop_at

    stop_at = generation_stop_at("waiting for the model")
    left = -1 if stop_at is None else max(0.0, stop_at - time.monotonic())
    if not _MODEL_LOCK.acquire(timeout=left):
        raise ModelFailure(
            "budget", "the model was answering another request until the time budget ran out"
        )
    try:
        yield
    finally:
        _MODEL_LOCK.release()


def open_engine_once(config: Config) -> Any:
    """The engine for these settings, opened once per process: a bench worker compiling
    many programs loads its model once, not once per program."""
    from cudaify.transforms.slm.factory import open_engine
    from cudaify.transforms.slm.models import terminal_progress

    c = config
    key = (
        c.model,
        c.llm_url,
        c.llm_model,
        c.gpu_layers,
        c.threads,
        c.record,
        c.replay,
        c.llm_timeout,
    )
    if key not in _ENGINES:
        with terminal_progress("installing the default model") as progress:
            if c.model is None and c.llm_url is None and c.replay is None:
                from cudaify.transforms.slm.models import resolve

                resolve(None, progress)  # the default model, installed on first use
        _ENGINES[key] = open_engine(
            model=c.model,
            llm_url=c.llm_url,
            llm_model=c.llm_model,
            gpu_layers=c.gpu_layers,
            threads=c.threads,
            record=c.record,
            replay=c.replay,
            timeout=c.llm_timeout,
        )
    return _ENGINES[key]


def search_graph() -> Any:
    """The reasoning graph the search walks: the shipped graph merged with what this user's
    runs learned (--learn), plus every registered method's in-edges (`Method.follows`), so a
    method is reachable even before any trajectory has taught the graph an example of it, and
    the out-edges a method declares itself (`Method.leads_to`)."""
    from cudaify.regraph.learn import load_active_graph
    from cudaify.transforms import METHODS

    graph = load_active_graph()
    # a teacher may have named methods no pass implements: nothing could apply them here
    unknown = [name for name in graph.methods if name not in METHODS and name != "sequential"]
    graph.graph.remove_nodes_from(unknown)
    for method in METHODS.values():
        graph.add_method(method.name, method.summary, method.category)
        for source in method.follows:
            if source == "sequential" or source in METHODS:
                graph.add_edge(source, method.name)
        for target in method.leads_to:
            if target in METHODS:
                graph.add_edge(method.name, target)
    # a method nothing leads to (fp_exact) is a rescue, never a move, whatever a graph built
    # with it among its rules' methods recorded (the shipped graph of 2026-11-26 did)
    rescues = [m.name for m in METHODS.values() if not m.follows and m.name in graph.graph]
    graph.graph.remove_edges_from([e for r in rescues for e in list(graph.graph.in_edges(r))])
    return graph


def slm_available(config: Config) -> bool:
    """`auto` uses the SLM only when one is at hand: a replay file, an endpoint, a model
    named by --model or $CUDAIFY_MODEL, or the default model already installed. It never
    starts a 1 GB download from a Makefile; `--slm on` does, once, with a progress bar."""
    if config.slm == "off":
        return False
    if config.slm == "on" or config.replay or config.llm_url or config.model:
        return True
    from cudaify.transforms.slm.models import is_installed

    return is_installed()


def _methods(config: Config) -> list[str]:
    from cudaify.transforms import METHODS

    unknown = [m for m in config.methods if m not in METHODS]
    if unknown:
        known = ", ".join(sorted(METHODS))
        raise ConfigError(f"unknown method '{unknown[0]}' (known: {known})")
    return list(config.methods)


STRATEGIES = ("mcgs", "greedy", "rules", "exhaustive", "oneshot", "cot")


def search(start: Variant, stages: Stages, config: Config, progress=None):  # -> SearchResult
    from cudaify.mcgs import search as search_mod
    from cudaify.mcgs.mcgs import Budget, GraphSearch

    stop = stages.out_of_time
    if config.methods:
        return search_mod.run_sequence(
            start, _methods(config), stages.expand, stages.evaluate, progress, stages.rescue, stop
        )
    if config.strategy not in STRATEGIES:
        raise ConfigError(
            f"unknown strategy '{config.strategy}' (available: {', '.join(STRATEGIES)})"
        )
    if config.strategy in ("oneshot", "cot"):
        if not stages.slm_enabled:
            raise ConfigError(
                f"--strategy {config.strategy} needs a language model: "
                "run `cudaify model install`, or pass --model or --llm-url"
            )
        return search_mod.run_whole_program(
            start, config.strategy, stages.whole_program, stages.evaluate, progress, stages.rescue
        )
    graph = stages.graph
    if config.strategy in ("rules", "exhaustive"):
        from cudaify.transforms import METHODS

        return search_mod.run_rules(
            start,
            graph,
            stages.expand,
            stages.evaluate,
            config.max_depth,
            progress,
            # a method without in-edges (fp_exact) is a rescue, not a move of its own
            every_method=[n for n, m in METHODS.items() if m.follows]
            if config.strategy == "exhaustive"
            else None,
            rescue=stages.rescue,
            stop=stop,
            prefetch=stages.prefetch,
        )
    if config.strategy == "greedy":
        return search_mod.run_greedy(
            start,
            graph,
            stages.expand,
            stages.evaluate,
            config.max_depth,
            progress,
            stages.rescue,
            stop=stop,
            prefetch=stages.prefetch,
        )
    budget = Budget(
        iterations=config.iterations,
        seconds=None,  # the command's deadline (`stop`) bounds the search
        slm_calls=config.max_slm_calls,
        max_depth=config.max_depth,
        rollout_depth=config.rollout_depth,
        patience=config.patience,
    )
    with_slm = stages.slm_enabled
    if not with_slm:
        log.info("no language model at hand: the search uses the rules only (see --slm)")
    searcher = GraphSearch(
        graph,
        stages.expand,
        stages.evaluate,
        ways=("rule", "slm") if with_slm else ("rule",),
        method_prior=stages.method_prior if with_slm else None,
        model_on=stages.model_on if with_slm else None,
        budget=budget,
        seed=config.seed,
        progress=progress,
        rescue=stages.rescue,
        stop=stop,
        prefetch=stages.prefetch,
        predict=predicted_cost,
        time_left=stages.search_left,
        breakdown=stages.breakdown,
        wins=lambda evaluation: (
            evaluation.stage >= Stage.CORRECT
            and (objective_speedup(evaluation, config.objective) or 0.0) > 1.0
        ),
    )
    return searcher.run(start, Evaluation(stage=Stage.CORRECT))


def predicted_cost(variant: Variant) -> float | None:
    """The static cost model's cost of `variant` (backend.cost), None for host code."""
    from cudaify.backend.cost import predict

    estimate = predict(variant)
    return estimate.cost if estimate is not None else None


@contextlib.contextmanager
def progress_display(config: Config) -> Iterator[Callable[[Any], None] | None]:
    """A live status line on a terminal (candidates tried, best speedup, stage counts);
    nothing at all in pipes, CI logs and with --quiet."""
    from rich.console import Console

    console = Console(stderr=True)
    if config.quiet or not console.is_terminal:
        yield None
        return
    with console.status("cudaify: analysing...") as status:

        def show(result: Any) -> None:
            best = result.best
            speedup = best.evaluation.region_speedup if best else None
            counts = ", ".join(f"{k} {v}" for k, v in sorted(result.stage_counts().items()))
            shown = f"{speedup:.1f}x" if speedup else "-"
            status.update(f"cudaify: {result.iterations} tried, best {shown} ({counts})")

        yield show


def _measured(evaluation: Evaluation) -> str:
    """Both speedups over gcc -O3, as the header and the summary line state them (the
    whole program's said to be estimated where the GPU was shared while it was timed)."""
    parts = [
        f"{label} {value:.2f}x"
        for label, value in (
            ("region speedup", evaluation.region_speedup),
            ("whole-program speedup", evaluation.program_speedup),
        )
        if value
    ]
    shared = ""
    if evaluation.program_speedup_estimated:
        shared = (
            f" (the whole program's estimated: {evaluation.timing.shared_by} processes "
            "shared the GPU while it was timed)"
        )
    harness = ""
    if evaluation.timing.harness_calls:
        harness = (
            f" (the region timed alone: {evaluation.timing.harness_calls} calls at the"
            " program's sizes)"
        )
    return f", {', '.join(parts)} over gcc -O3{harness}{shared}" if parts else ""


def header(
    program: Program,
    variant: Variant,
    evaluation: Evaluation | None,
    input_hash: str,
    rounding_rescue: bool = False,
    close_call: dict[str, Any] | None = None,
) -> str:
    """The output's first comment: what it came from, what was applied, how it was verified
    (the tolerance that held), with `rounding_rescue` that its kernels round like the CPU
    because the output matched only then, and with a `close_call` timed in turns (see
    `confirmed`) what the turns read."""
    from cudaify.backend.roofline import header_lines  # the cost model reads CUDA text

    name = Path(program.path).name
    lines = [f"Generated by cudaify {__version__} from {name} (sha256 {input_hash[:16]})."]
    if not variant.steps:
        lines.append("Nothing was offloaded: this is the input program as CUDA host code.")
    else:
        lines.append("Transformation sequence:")
        for number, step in enumerate(variant.steps, 1):
            lines.append(f"  {number}. {step.method} ({step.applied_by}) {step.detail}".rstrip())
    if evaluation is not None:
        if evaluation.verified:
            lines.append(
                f"Verified on the GPU: output {_matched(evaluation)}{_measured(evaluation)}."
            )
            lines.extend(_turns_line(close_call or {}))
            lines.extend(header_lines(evaluation.timing))
        elif not evaluation.ran_on_gpu:
            lines.append("UNVERIFIED: compiled with nvcc but not run (no GPU was found).")
    if rounding_rescue:
        lines.append(
            "fp_exact was needed: the output matched the original's only with the kernels "
            "rounding like the CPU (no FMA contraction)."
        )
    body = "\n".join(" * " + line if line else " *" for line in lines)
    return f"/*\n{body}\n */\n"


def _turns_line(close_call: dict[str, Any]) -> list[str]:
    """The header's line for a close call timed in turns ([] for none)."""
    if not close_call.get("runs"):
        return []
    turned = close_call["reference"] / close_call["program"]
    return [
        f"Timed in turns with gcc -O3's build ({close_call['runs']} runs each, as a close "
        f"call): the whole program at {turned:.2f}x (medians {close_call['program']:.3f} s "
        f"and {close_call['reference']:.3f} s; the search read {close_call['read']:.2f}x)."
    ]


def _matched(evaluation: Evaluation) -> str:
    """How the output matched the reference's: every number equal, or within which
    tolerance."""
    if evaluation.tolerance is None:
        return "equal to the original's"
    rtol, atol = evaluation.tolerance
    if rtol == atol == 0.0:
        return "equal to the original's, every number identical"
    return f"equal to the original's within rtol {rtol:g}, atol {atol:g}"


def rounding_rescue(variant: Variant, candidates: dict[str, Any]) -> bool:
    """Whether `variant` took fp_exact because a candidate on its way differed from the
    reference in a way rounding may explain (`candidates`: variant key -> Candidate)."""
    from cudaify.transforms.fp_exact import FpExact

    for step in variant.steps:
        before = candidates.get(step.before_hash)
        if step.method == FpExact.name and before is not None:
            if before.evaluation.rounding_suspect:
                return True
    return False


def compile_file(
    source_path: str,
    output_path: str,
    config: Config,
    depfile: str | None = None,
    started: float | None = None,
) -> Result:
    """Compile one input to one .cu (and, on request, a make dependency file). An unchanged
    input with unchanged headers, settings, graph and GPU is served from the result cache.
    The time budget counts from `started` (time.monotonic; the command passes its process's
    start, so Python's start and imports count too), from here without it."""
    from cudaify.frontend.parse import read_source

    deadline = Deadline(config.time_budget, started=started)
    check_output_path(output_path)
    source = read_source(source_path)
    key = result_key(source_path, source, config) if config.cache else ""
    result = cached_result(key, config) if key else None
    if result is None:
        result = _compile(source_path, source, config, deadline)
        # a run whose model failed is not what this configuration gives: search again next time
        if key and not result.trace.get("model", {}).get("failures"):
            store_result(key, result, config)
    result = dataclasses.replace(result, output_path=output_path)
    write_atomically(output_path, result.text)
    if depfile:
        write_atomically(depfile, make_dependencies(output_path, result.dependencies))
    return result


def _compile(
    source_path: str, source: bytes, config: Config, deadline: Deadline | None = None
) -> Result:
    from cudaify.mcgs.trace import build_trace

    deadline = deadline or Deadline(config.time_budget)
    breakdown = Breakdown()
    breakdown.add("start", deadline.elapsed())  # the process's start, reading the input
    with breakdown.measure("analysis"):
        program = prepare(source_path, config)
    input_hash = content_hash(source)
    start = Variant(code=program.source)
    stages = Stages(program, config, deadline, breakdown)
    stages.evaluator.start_ahead()
    finalists_timed: list[dict[str, Any]] = []
    try:
        with progress_display(config) as show:
            # the search's own runs, compiles and waits for the GPU end where the finalists'
            # share begins: one slow candidate's run, limited by the command's deadline, took
            # 7.3 s of byte_hist's, its close call then found no time left for its turns
            with stages.evaluator.leaving(stages.finalists_reserve()):
                result = search(start, stages, config, show)
        result.states = result.states or []
        if config.learn or config.learn_stats:  # what the deadline stopped teaches nothing
            finished = [c for c in result.candidates if not stopped_by_deadline(c)]
            learn(source_path, start, finished, stages.evaluator.run_on_gpu, config)
        # what was started ahead for the search stops before the finalists take the GPU
        stages.evaluator.close()
        searched = deadline.elapsed()
        warnings = [f"'{method}' not applied: {reason}" for method, reason in result.skipped]
        # the finalists, the winner's kernel timing and a close call's turns: one hold
        with stages.evaluator.keeping_gpu():
            reserve = close_call_reserve(result.candidates, stages, config)
            with stages.evaluator.leaving(reserve):
                chosen = finish(result, stages.evaluator, config, finalists_timed) or result.best
            if (
                chosen is not None
                and chosen.evaluation.ran_on_gpu
                and not chosen.evaluation.verified
            ):
                chosen = None  # on a GPU, only a verified variant may win
            slower = objective_speedup(chosen.evaluation, config.objective) if chosen else None
            chosen, close_call = _written(chosen, slower, stages.evaluator, config, warnings)
        finishing = deadline.elapsed() - searched  # the turns time the winner, as finalists
    finally:
        stages.evaluator.close()  # compiles started ahead and not needed stop now
    evaluations = {c.variant.key: c for c in result.candidates}
    variant = chosen.variant if chosen else start
    evaluation = chosen.evaluation if chosen else None
    if chosen is None and slower is None:
        failures = [c.evaluation.why for c in result.candidates if c.evaluation.problems]
        detail = f" ({failures[0]})" if failures else ""
        warnings.append(f"nothing could be offloaded{detail}; the output is the input as host code")
    elif chosen is not None and not chosen.evaluation.ran_on_gpu:
        warnings.append("no GPU found: the output was compiled with nvcc but not run or verified")
    if result.cut_short or deadline.expired:
        warnings.append(budget_warning(deadline, result, chosen))
    if stages.guard.summary():
        warnings.append(stages.guard.summary())
    times = time_breakdown(breakdown, deadline, result.cut_short, result.converged)
    times["finalists"] = round(finishing, 3)
    log.info("%s", describe_times(times))
    trace = build_trace(source_path, input_hash, result, chosen, evaluations, stages.slm_calls)
    return Result(
        input_path=source_path,
        output_path="",
        text=header(
            program,
            variant,
            evaluation,
            input_hash,
            rounding_rescue(variant, evaluations),
            close_call,
        )
        + variant.code,
        methods=variant.methods,
        verified=bool(evaluation and evaluation.verified),
        ran_on_gpu=bool(evaluation and evaluation.ran_on_gpu),
        region_speedup=evaluation.region_speedup if evaluation else None,
        program_speedup=evaluation.program_speedup if evaluation else None,
        # the warnings too: why a verified variant was kept as host code, a spent budget
        trace={
            **trace,
            "time": times,
            "model": stages.guard.to_json(),
            "warnings": warnings,
            "finalists": finalists_timed,
            "close_call": close_call,
        },
        warnings=tuple(warnings),
        dependencies=(str(Path(source_path).resolve()), *program.includes),
    )


# -- time ----------------------------------------------------------------------------------

_MEASURED = ("start", "analysis", "reference", "compile", "run", "wait", "model")


def time_breakdown(
    breakdown: Breakdown, deadline: Deadline, cut_short: bool, converged: bool = False
) -> dict[str, Any]:
    """Where the command's time went, in seconds, adding up to `total`: the start (the
    process's, with its imports, until the input is read), the analysis, the
    CPU reference (build, runs), waiting for candidates' builds, their runs, waits for
    the GPU, the language model (loading it, its answers and the waits for a generation
    slot), and `search`: the rest (rules, checks, the search itself). And
    why the search ended early, if it did: `cut_short` (the budget), `converged`."""
    total = deadline.elapsed()
    measured = {kind: breakdown.get(kind) for kind in _MEASURED}
    search = max(0.0, total - sum(measured.values()))
    times = {"total": total, **measured, "search": search}
    return {
        **{kind: round(seconds, 3) for kind, seconds in times.items()},
        "budget": deadline.seconds,
        "cut_short": bool(cut_short or deadline.expired),
        "converged": converged,
    }


def describe_times(times: dict[str, Any]) -> str:
    parts = ", ".join(f"{kind} {times[kind]:.1f}" for kind in (*_MEASURED, "search"))
    budget = times.get("budget")
    limit = f" of a {budget:g} s budget" if budget else ""
    spent = " (the budget ran out)" if times.get("cut_short") else ""
    if times.get("converged") and not spent:
        spent = " (the search converged: no better variant in its last candidates)"
    return f"time: {times['total']:.1f} s{limit}{spent}: {parts}"


def stopped_by_deadline(candidate: Any) -> bool:
    from cudaify.backend.evaluate import TIME_BUDGET

    return any(p.kind == TIME_BUDGET for p in candidate.evaluation.problems)


def budget_warning(deadline: Deadline, result: Any, chosen: Any) -> str:
    """What a run the time budget ended wrote, and how to give it more."""
    tried = sum(1 for c in result.candidates if not stopped_by_deadline(c))
    budget = f" ({deadline.seconds:g} s)" if deadline.seconds else ""
    spent = f"the time budget{budget} ran out after {tried} candidate(s)"
    more = "--time-budget S gives it more time, 0 no limit"
    if chosen is None:
        verified = any(c.evaluation.verified for c in result.candidates)
        none = "none faster than the CPU" if verified else "none verified"
        return f"{spent}, {none} by then: the output is the input as host code ({more})"
    if chosen.evaluation.verified:
        return f"{spent}: wrote the best verified variant found by then ({more})"
    return f"{spent}: wrote the best variant compiled by then ({more})"


# -- the final choice --------------------------------------------------------------------

FINALISTS = 3  # verified candidates timed in full at the end of a search, at most
# the share of --time-budget a search on a GPU leaves for timing its finalists alone
FINALIST_RESERVE = 0.15
FINALIST_MARGIN = 0.6  # ... those whose one-run speedup is within this factor of the best's
# (wide: a screening run shares the GPU with other programs' runs under bench -j N) ...
FINALIST_MARGIN_ALONE = 0.85  # ... or within this one when every screening run had the GPU
# alone, so that only run-to-run noise separates them (on an H200, 16 programs alone:
# the finalists took 1.3-5.4 s of a median 15.3 s compile)
# Whole-program speedups (CUDA's start taken out, see `_steady`) within this factor of the
# best's are a tie, settled by the region's. What is left of a run's fixed cost still moves:
# the process's exit after main took 93-108 ms on one H100, 5% of a program that runs 0.33 s
# (one variant of nbody read 1.30x-1.90x as a whole, one run in each of six searches). The
# region is timed by CUDA events, and it is the part that grows with the input, where the
# fixed costs do not: of two variants the whole program cannot tell apart, the one that
# does less on the GPU (one copy of the data instead of one per step: 0.36 ms against
# 1.7 ms) is the better program at the user's sizes.
WHOLE_TIE = 0.95
# ... but one run of a whole program varies more than that: on an H200, a 384 x 512 x 1536
# product's offload and its gemm_tiling (medians of ten runs 0.337 and 0.321 s) read 4.07x
# and 3.34x with CUDA's start taken out, one finalist's run each; ten runs of the first
# binary spanned 0.30-0.41 s. Where either reading rests on fewer than WHOLE_RUNS runs, one within
# WHOLE_TIE_FEW_RUNS of the best ties too if the whole programs built from their parts
# (the reference's time outside the region, the region, CUDA's start: no run's noise in
# them) tie within WHOLE_TIE.
WHOLE_TIE_FEW_RUNS = 0.75
WHOLE_RUNS = 3
# Of the whole-program ties, regions within this factor of the fastest one's are a tie too:
# a region dominated by its copies (PolyBench-size products: 20 ms of transfers around a
# 0.1-0.3 ms kernel) reads the same for a plain kernel and a tiled one. Such ties go to
# the variant whose kernels the cost model prices lowest (backend/cost.py): the choice can
# cost at most this share of the region, and the kernel that does less is the one that
# scales with the user's sizes. On one H200, matmul (900^3 floats) wrote the plain
# offload (0.34 ms a product) where gemm_tiling's kernel, verified beside it, took 0.11 ms.
REGION_TIE = 0.95
# ... and where the regions do not tie, their copies may still be what sets them apart:
# matmul's region (13 ms, a 0.07-0.3 ms kernel in it) read 51.8x with gemm_tiling and
# 56.2x plain on an H200, and the plain kernel was written. So after the leader's
# event-timed run, a finalist that ties with it as a whole program and whose kernels the
# cost model prices lower gets one too (the deadline allowing): where its kernels take
# under KERNEL_TIE of the leader's and its copies move no more bytes, it is written. The
# events time the GPU's work to microseconds, and the kernels are what grows with the
# user's sizes.
KERNEL_TIE = 0.8
# A written variant whose whole program reads under CLOSE_CALL times gcc -O3's is timed
# again in turns with the reference (IN_TURNS runs each, or as many as the time left holds)
# before it is written, by the whole-program objective: its reading sets its own runs against the
# reference's taken at the start, each under whatever else the machine was doing. On one
# H200, the 30 C programs compiled by `bench -j 4`, then each timed in turns alone (3 runs):
# the compiles' readings were 0.51-1.57 times the later ones (poly_eval 2.71x -> 1.37x,
# syrk 3.06x -> 1.68x), and lcs_edit, written at 1.12x, ran at 0.88x of gcc -O3. It was 2
# until an H100 bench at f095bef (`-j 4`, 35 programs) wrote nbody_forces at 2.17x that ran
# 0.99x alone (gcc -O3's build took 0.805 s during the compile and 0.344 s alone): the
# largest such ratio seen, 2.19, over the 2.1 of the benches before it.
CLOSE_CALL = 2.5
IN_TURNS = 3
# ... and one that the time left could not time in turns is written only from this
# reading up: in four such benches (78 programs written and timed again alone), the three
# that ran slower than gcc -O3 had read 1.12x, 1.16x and 1.20x (lcs_edit at 0.68x), and
# the compiles' readings were a median 0.88 times the ones taken alone
UNCONFIRMED_MIN = 1.25
# A leader read under this may be under CLOSE_CALL once timed again, so the search and the
# finalists keep one turn for it: the compiles' readings were 0.37-2.1 times (median 0.88)
# the ones taken alone later, and in a bench at 26b3603 7 of 12 close calls had no turn
# left, some of them with 0.0 s (their leader, read over 2x, had kept none); at 3x
# (b33bf4a's bench), poly_eval's leader screened at 3.64x, read 1.75x as a finalist and
# found no turn left
MAY_BE_CLOSE = 5.0


def close_call_reserve(candidates: list[Any], stages: Any, config: Config) -> float:
    """Seconds the finalists leave for the close call's turns: one turn (the reference's
    time and the leader's, a fifth to spare) where the leader by the whole-program
    objective reads under MAY_BE_CLOSE; 0 otherwise. In a 30 s compile the finalists used
    to spend the budget: 6 of 9 close calls on an H200 (`bench -j 4`) were not timed."""
    chosen = finalists(candidates, config.objective)
    if not chosen or not _may_be_close(chosen[0].evaluation, config):
        return 0.0
    return 1.2 * _turn_seconds(stages.evaluator, chosen[0].evaluation)


def _close_call(evaluation: Evaluation, config: Config, under: float = CLOSE_CALL) -> float | None:
    """The whole-program reading of a variant verified on the GPU where it is a close call
    (from 1x to under `under`, by the whole-program objective); None otherwise."""
    whole = evaluation.program_speedup
    if config.objective != "program" or not (evaluation.verified and evaluation.ran_on_gpu):
        return None
    return whole if whole is not None and 1.0 <= whole < under else None


def _may_be_close(evaluation: Evaluation, config: Config) -> bool:
    """Whether a variant's one reading is close enough to CLOSE_CALL that, timed again as a
    finalist, it may be a close call (under MAY_BE_CLOSE): a turn is kept for it."""
    return _close_call(evaluation, config, MAY_BE_CLOSE) is not None


def _turn_seconds(evaluator: Any, evaluation: Evaluation) -> float:
    """One turn: a run of the reference and one of the variant."""
    return evaluator.reference().seconds + (evaluation.timing.wall or 0.0)


def _written(
    chosen: Any, speedup: float | None, evaluator: Any, config: Config, warnings: list[str]
) -> tuple[Any, dict[str, Any]]:
    """The candidate to write (None: the input as host code) and what its close call's
    turns found (see `confirmed`): not a verified variant slower than gcc -O3 by the
    objective (`speedup`); why not goes into `warnings`."""
    if chosen is None:
        return None, {}
    if chosen.evaluation.verified and speedup is not None and speedup < 1.0:
        # a verified variant slower than gcc -O3 is no improvement: keep the input
        warnings.append(slower_warning(chosen, config.objective))
        return None, {}
    chosen, why, close_call = confirmed(chosen, evaluator, config)
    warnings += [why] if why else []
    return chosen, close_call


def confirmed(chosen: Any, evaluator: Any, config: Config) -> tuple[Any, str, dict[str, Any]]:
    """(`chosen`, "", what was done) where its whole-program reading stands, or (None, why,
    what was done) where, timed in turns with the reference (`Evaluator.in_turns`, a close
    call: under CLOSE_CALL by the whole-program objective), it is slower than gcc -O3. The
    turns are IN_TURNS runs of each, or as many as the time left holds (both binaries ran
    in the search: no uncounted runs here); a variant whose turns do not fit at all, or
    cannot be run, keeps its reading from UNCONFIRMED_MIN up, and is not written under
    it. What was done goes into the trace (`close_call`)."""
    whole = _close_call(chosen.evaluation, config)
    if whole is None:
        return chosen, "", {}
    record: dict[str, Any] = {"read": round(whole, 4)}
    pair = _turn_seconds(evaluator, chosen.evaluation)
    left = evaluator.deadline.remaining()
    runs = IN_TURNS if left is None else min(IN_TURNS, int(left / pair))
    timed = (
        evaluator.in_turns(chosen.variant, runs, pair)
        if runs >= 1
        else f"one turn ({pair:.1f} s) does not fit in the {left or 0.0:.1f} s left"
    )
    if isinstance(timed, str):
        record["not_timed"] = timed
        if whole >= UNCONFIRMED_MIN:
            return chosen, "", record
        why = (
            "too close to tell from one reading taken beside other work, and it could not "
            f"be timed in turns with gcc -O3's build ({timed})"
        )
        return (
            None,
            _not_written(chosen, whole, why, "a larger --time-budget leaves time for the turns; "),
            record,
        )
    cpu, gpu, runs = timed
    record.update(runs=runs, reference=round(cpu, 4), program=round(gpu, 4))
    log.info("a close call (%.2fx) in %d turns: %.3f s / %.3f s", whole, runs, cpu, gpu)
    if gpu < cpu:
        return chosen, "", record
    why = (
        f"but timed in turns with gcc -O3's build ({runs} runs each, medians {gpu:.3f} s "
        f"and {cpu:.3f} s) it ran at {cpu / gpu:.2f}x"
    )
    return None, _not_written(chosen, whole, why), record


def _not_written(chosen: Any, whole: float, why: str, advice: str = "") -> str:
    """The warning of a close call kept as host code: its reading, why it is not written."""
    methods = " -> ".join(chosen.variant.methods)
    return (
        f"the fastest verified GPU variant ({methods}) read {whole:.2f}x as a whole program, "
        f"{why}; the output keeps the input as host code ({advice}--objective region judges "
        "the region alone)"
    )


def slower_warning(chosen: Any, objective: str) -> str:
    """Why a verified variant was not written: slower than gcc -O3 by the objective."""
    evaluation = chosen.evaluation
    methods = " -> ".join(chosen.variant.methods)
    whole, region = evaluation.program_speedup, evaluation.region_speedup
    if objective == "region" or whole is None:
        speed = f"{region or whole:.2f}x of the CPU"
        return (
            f"the fastest verified GPU variant ({methods}) ran at {speed}; the output keeps "
            "the input as host code"
        )
    inside = f" (its region at {region:.2f}x)" if region else ""
    return (
        f"the fastest verified GPU variant ({methods}) ran the whole program at {whole:.2f}x "
        f"of the CPU{inside}; the output keeps the input as host code (--objective region "
        "judges the region alone)"
    )


def _speedup(candidate: Any, objective: str = "program") -> float:
    return objective_speedup(candidate.evaluation, objective) or 0.0


def finalists(candidates: list[Any], objective: str = "program") -> list[Any]:
    """The verified candidates worth timing in full: the leader by the search's one-run
    timing (see `_leader`), the best by the objective if that is another, and up to
    FINALISTS - 1 in all whose speedup (by the objective, as `_judged` reads it) was close
    enough to the best's that one run's noise could have ranked them wrong: within
    FINALIST_MARGIN of it, or FINALIST_MARGIN_ALONE where no screening run shared the GPU;
    within FINALIST_MARGIN, the one whose kernels the cost model prices lowest comes first
    among those (see `_cheaper_kernels`)."""
    verified = [c for c in candidates if c.evaluation.verified and c.evaluation.ran_on_gpu]
    ranked = sorted(verified, key=lambda c: c.reward, reverse=True)
    if not ranked:
        return []
    top = max(ranked, key=lambda c: _judged(c, objective))
    best = _judged(top, objective)
    leader = _leader(ranked, top, objective)
    alone = all(c.evaluation.timing is None or c.evaluation.timing.shared_by <= 1 for c in ranked)
    margin = FINALIST_MARGIN_ALONE if alone else FINALIST_MARGIN
    first = [leader] if top is leader else [leader, top]
    rest = [c for c in ranked if all(c is not f for f in first)]
    near = [c for c in rest if _judged(c, objective) >= FINALIST_MARGIN * best]
    cheap = _cheaper_kernels(first, near)
    close = [c for c in rest if c is not cheap and _judged(c, objective) >= margin * best]
    return [*first, *([cheap] if cheap is not None else []), *close][:FINALISTS]


def _cheaper_kernels(first: list[Any], near: list[Any]) -> Any | None:
    """Of `near` (within FINALIST_MARGIN of the best, by one run that may have ranked them
    wrong), the one whose kernels the cost model prices lowest, where that is below every
    one of `first`'s: it is timed as a finalist, since a tie with the leader goes to it.
    On an H200, alone, a 900^3 product's gemm_tiling (priced 245 M units against 339-1110
    M) screened at 0.73 of the best reading and was left out; where it was a finalist, its
    region read 530-670x against the others' 429-530x, and it was written."""
    if not near:
        return None
    cheapest = min(near, key=lambda c: _kernel_cost(c.variant.code))
    price = _kernel_cost(cheapest.variant.code)
    if math.isinf(price) or any(price >= _kernel_cost(f.variant.code) for f in first):
        return None
    return cheapest


def _leader(ranked: list[Any], top: Any, objective: str) -> Any:
    """`top`, the best by the objective; by the whole program, of those that beat the CPU
    as a whole and tie with it (see `_ties`), those whose region ties with the fastest
    region among them (within REGION_TIE), and of these the one whose kernels the cost
    model prices lowest, then the fastest region."""
    if objective == "region":
        return top
    tied = [c for c in ranked if _ties(c, top, objective) and _speedup(c) > 1.0]
    if not tied:
        return top
    fastest = max(c.evaluation.region_speedup or 0.0 for c in tied)
    close = [c for c in tied if (c.evaluation.region_speedup or 0.0) >= REGION_TIE * fastest]
    if len(close) == 1:
        return close[0]
    return min(
        close,
        key=lambda c: (
            _kernel_cost(c.variant.code),
            -(c.evaluation.region_speedup or 0.0),
            -_steady(c),
        ),
    )


def _ties(candidate: Any, top: Any, objective: str) -> bool:
    """Whether `candidate` ties with `top`, the best by the objective (see WHOLE_TIE and
    WHOLE_TIE_FEW_RUNS)."""
    judged, best = _judged(candidate, objective), _judged(top, objective)
    if judged >= WHOLE_TIE * best:
        return True
    if judged < WHOLE_TIE_FEW_RUNS * best or not _few_runs(candidate, top):
        return False
    mine, theirs = (c.evaluation.program_from_parts for c in (candidate, top))
    return mine is not None and theirs is not None and theirs >= WHOLE_TIE * mine


def _few_runs(*candidates: Any) -> bool:
    """Whether a whole-program reading of one of `candidates` rests on fewer than
    WHOLE_RUNS runs."""
    return any(c.evaluation.timing.runs < WHOLE_RUNS for c in candidates)


@functools.lru_cache(maxsize=32)
def _kernel_cost(code: str) -> float:
    """The cost model's price of a variant's kernels (infinite where it prices none).
    Cached: `finish` chooses its finalists again after each one it times."""
    from cudaify.backend.cost import predict

    estimate = predict(Variant(code))
    return estimate.kernel if estimate is not None else math.inf


def _judged(candidate: Any, objective: str) -> float:
    """What variants are ranked by: the region's speedup, or the whole program's with CUDA's
    start taken out (see `_steady`)."""
    return _speedup(candidate, "region") if objective == "region" else _steady(candidate)


def _steady(candidate: Any) -> float:
    """The whole-program speedup with CUDA's start at the least this GPU took: the context
    is created before main (runtime/cuda_context.h) and its modules load lazily, so its
    start is the same work for every variant of a program, and the largest part of the
    noise between two runs of one (0.095-0.23 s a run on the H100s, where nbody runs
    0.33 s in all).
    For comparing variants only: what the output reports is what was measured."""
    evaluation = candidate.evaluation
    timing, reference = evaluation.timing, evaluation.reference
    if evaluation.program_speedup_estimated or None in (
        timing.wall,
        timing.context,
        timing.context_alone,
        reference.wall,
    ):
        return _speedup(candidate)
    steady = timing.wall - timing.context + timing.context_alone
    return reference.wall / steady if steady > 0 else _speedup(candidate)


def finish(
    result: Any, evaluator: Any, config: Config, record: list[dict[str, Any]] | None = None
) -> Any:
    """The verified candidate to write, timed as reported: each finalist gets a second
    correctness run and `runs` timed runs (the leader first: a finalist whose runs so far
    show it cannot beat a finalist timed in full stops there, see Evaluator.remeasure),
    the fastest then its kernel timing and profile. Once FINALISTS are timed, the
    re-ranking brings in a new one only as the leader.
    Re-timed candidates replace the search's in `result`; `record` gets each finalist's
    readings in the order they were timed (`finalist_record`). None when nothing was
    verified (or nothing ran)."""
    from cudaify.mcgs.search import Candidate

    if config.search_runs >= config.runs:  # the search already timed everything in full
        return result.best_verified
    timed: set[str] = set()
    while True:
        chosen = finalists(result.candidates, config.objective)
        if not chosen:
            return None
        pending = [c for c in chosen if c.variant.key not in timed]
        if len(timed) >= FINALISTS and any(c.variant.key in timed for c in chosen):
            # FINALISTS timed in full already: another comes in only as the leader (a
            # candidate merely close to it would cost a second of runs to change nothing)
            pending = pending[:1] if pending and pending[0] is chosen[0] else []
        evaluator.prefetch_harness([c.variant for c in pending])
        if config.objective == "program":  # a close call's turns run the plain builds
            evaluator.prefetch_plain([c.variant for c in pending])
        for candidate in pending:
            # the best finalist re-timed so far (one stopped after its first run is below
            # it by RACE_MARGIN, never the best): one run far below it ends a finalist's
            # timing; by the whole program it is lowered by WHOLE_TIE (WHOLE_TIE_FEW_RUNS
            # where it rests on few runs), since a finalist that can still tie with it may
            # win by its region
            done = [c for c in result.candidates if c.variant.key in timed]
            best = max(done, key=lambda c: _speedup(c, config.objective), default=None)
            beat = None
            if best is not None:
                beat = _speedup(best, config.objective)
                if config.objective == "program":
                    beat *= WHOLE_TIE_FEW_RUNS if _few_runs(best) else WHOLE_TIE
            timed.add(candidate.variant.key)
            began = time.perf_counter()
            evaluation = evaluator.remeasure(
                candidate.variant, candidate.evaluation, detail=False, beat=beat
            )
            timed_candidate = Candidate(candidate.variant, evaluation)
            if record is not None:
                spent = time.perf_counter() - began
                record.append(finalist_record(candidate, timed_candidate, spent))
            log.debug(
                "finalist %s: %d timed run(s), %.2f s; whole program %.3gx (steady %.3gx), "
                "region %.3gx",
                " -> ".join(candidate.variant.methods),
                evaluation.timing.runs if evaluation.timing else 0,
                time.perf_counter() - began,
                evaluation.program_speedup or 0.0,
                _steady(timed_candidate),
                evaluation.region_speedup or 0.0,
            )
            _replace(result, candidate, timed_candidate)
        if pending:
            continue  # the ranking may have changed: choose the finalists again
        winner = chosen[0]  # the leader, always timed in full (see above)
        detailed = Candidate(winner.variant, evaluator.detail(winner.variant, winner.evaluation))
        _replace(result, winner, detailed)
        if detailed.evaluation.verified:
            return _least_kernel_time(detailed, chosen, result, evaluator, config.objective)


def _least_kernel_time(
    leader: Any, chosen: list[Any], result: Any, evaluator: Any, objective: str
) -> Any:
    """`leader`, or a finalist tied with it as a whole program whose kernels took under
    KERNEL_TIE of its time in an event-timed run, copying no more bytes (see KERNEL_TIE)."""
    from cudaify.mcgs.search import Candidate

    own = leader.evaluation.timing
    if objective != "program" or own.kernel is None:
        return leader
    price = _kernel_cost(leader.variant.code)
    rivals = sorted(
        (
            c
            for c in chosen
            if c.variant.key != leader.variant.key
            and c.evaluation.verified
            and _speedup(c) > 1.0
            and _ties(c, leader, objective)
            and _kernel_cost(c.variant.code) < price
        ),
        key=lambda c: _kernel_cost(c.variant.code),
    )
    for rival in rivals:
        detailed = Candidate(rival.variant, evaluator.detail(rival.variant, rival.evaluation))
        _replace(result, rival, detailed)
        theirs = detailed.evaluation.timing
        if theirs.kernel is None or not detailed.evaluation.verified:
            continue
        if theirs.kernel < KERNEL_TIE * own.kernel and (theirs.transfer_bytes or 0.0) <= (
            own.transfer_bytes or 0.0
        ):
            log.debug(
                "%s written before %s: kernels %.3g ms against %.3g ms, whole programs tied",
                " -> ".join(rival.variant.methods),
                " -> ".join(leader.variant.methods),
                theirs.kernel * 1e3,
                own.kernel * 1e3,
            )
            leader, own = detailed, theirs
    return leader


def finalist_record(screened: Any, timed: Any, seconds: float) -> dict[str, Any]:
    """What the trace says of one finalist: its methods, the search's reading and its own
    (whole program as measured and with CUDA's start at its least, `_steady`; region), the
    runs and seconds it took, and `why_not` where it was not timed in full: the deadline
    left it no time (the search's one-run reading then stands), or its second correctness
    run failed."""

    def readings(candidate: Any) -> dict[str, Any]:
        evaluation = candidate.evaluation
        return {
            "program_speedup": _rounded(evaluation.program_speedup),
            "steady_speedup": _rounded(_steady(candidate)),
            "region_speedup": _rounded(evaluation.region_speedup),
            "runs": evaluation.timing.runs if evaluation.timing else 0,
        }

    why_not = None
    if timed.evaluation is screened.evaluation:
        why_not = "no time left before the deadline: the search's reading stands"
    elif not timed.evaluation.verified:
        why_not = f"its second run failed: {timed.evaluation.why}"
    return {
        "methods": list(timed.variant.methods),
        "screened": readings(screened),
        "timed": readings(timed),
        "seconds": round(seconds, 3),
        "why_not": why_not,
    }


def _rounded(value: float | None) -> float | None:
    return round(value, 4) if value is not None else None


def _replace(result: Any, old: Any, new: Any) -> None:
    result.candidates[result.candidates.index(old)] = new


def learn(
    source_path: str, start: Variant, candidates: list[Any], on_gpu: bool, config: Config
) -> None:
    """This run's edge statistics (`learn_stats`, on a GPU: gains by the run's objective)
    and, with --learn, its verified steps go into the user's graph. Without a GPU the steps
    that compiled are what there is to learn (marked so); statistics then stay as they
    were, since nothing was measured."""
    from cudaify.regraph.learn import gpu_name, learn_from_search

    accept = ("gpu",) if on_gpu else ("compile",)
    learn_from_search(
        Path(source_path).stem,
        start,
        candidates,
        accept=accept,
        examples=config.learn,
        statistics=config.learn_stats,
        objective=config.objective,
        gpu=gpu_name() if on_gpu else "",
    )


# -- the result cache and make dependencies ----------------------------------------------


def result_key(source_path: str, source: bytes, config: Config) -> str:
    """Everything that decides the output: cudaify's version, the input, the settings, the
    reasoning graph and the GPU it was verified on (headers are checked on lookup)."""
    from importlib import resources

    from cudaify.backend.gpu import detect_gpus

    settings = result_settings(config)  # the settings declared to change the result
    # `--slm auto` uses a model only when one is at hand: installing the default model (or
    # naming another through $CUDAIFY_MODEL) changes the search, so it changes the key
    settings["model in use"] = slm_available(config)
    from cudaify.transforms.slm.models import MODEL_ENV

    settings["model named"] = config.model or os.environ.get(MODEL_ENV, "")
    from cudaify.regraph import user_graph_path

    graph = resources.files("cudaify.regraph").joinpath("data/default.json").read_bytes()
    learned = user_graph_path()
    graph += learned.read_bytes() if learned.is_file() else b""
    gpus = [f"{g.name}/{g.compute_capability}" for g in detect_gpus()]
    return content_hash(
        __version__,
        _code_hash(),
        str(Path(source_path).resolve()),
        source,
        json.dumps(settings, default=str),
        graph,
        ",".join(gpus) or "no-gpu",
    )


def _code_files() -> list[Path]:
    """cudaify's own Python sources and the C/CUDA runtime files it pastes or builds
    (transforms/runtime/*.cuh, backend/runtime/*.h), every stage package's folder (the
    package-dir mapping puts them side by side, not under cudaify/)."""
    from importlib.util import find_spec

    roots: set[Path] = set()
    for package in ("cudaify", *(f"cudaify.{s}" for s in _STAGES)):
        spec = find_spec(package)
        if spec is not None:
            roots.update(Path(p) for p in spec.submodule_search_locations or [])
    return sorted({path for root in roots for kind in _CODE_KINDS for path in root.rglob(kind)})


_CODE_KINDS = ("*.py", "*.cuh", "*.h")


_STAGES = ("core", "frontend", "transforms", "regraph", "mcgs", "backend")


@functools.cache
def _code_hash() -> str:
    """A changed rule or check must not be answered from the result cache: an editable
    install keeps its version number across changes."""
    return content_hash(*(path.read_bytes() for path in _code_files()))


def _file_hash(path: str) -> str | None:
    try:
        return content_hash(Path(path).read_bytes())
    except OSError:
        return None


def cached_result(key: str, config: Config) -> Result | None:
    from cudaify.backend.cache import Cache

    entry = Cache.for_config(config).read_json("results", key)
    if not entry:
        return None
    for path, digest in entry["dependencies"]:
        if _file_hash(path) != digest:
            return None  # a header changed since
    fields = entry["result"]
    fields["methods"] = tuple(fields["methods"])
    fields["warnings"] = tuple(fields["warnings"])
    fields["dependencies"] = tuple(fields["dependencies"])
    return Result(**{**fields, "cached": True})


def store_result(key: str, result: Result, config: Config) -> None:
    from cudaify.backend.cache import Cache

    dependencies = [[path, _file_hash(path)] for path in result.dependencies]
    entry = {"result": dataclasses.asdict(result), "dependencies": dependencies}
    Cache.for_config(config).write_json("results", key, entry)


def make_dependencies(target: str, dependencies: tuple[str, ...]) -> str:
    """A make rule like gcc -MD -MP writes: the output depends on the input and every
    header; each header also gets an empty rule so that deleting one does not break make."""

    def quoted(path: str) -> str:
        return path.replace(" ", "\\ ").replace("#", "\\#").replace("$", "$$")

    lines = [f"{quoted(target)}: " + " \\\n  ".join(quoted(d) for d in dependencies)]
    lines += [f"\n{quoted(d)}:" for d in dependencies[1:]]
    return "\n".join(lines) + "\n"


def check_file(source_path: str, cuda_path: str, config: Config) -> Evaluation:
    """Verify an existing CUDA program against its input: structure, compile, and on a
    GPU run, compare and time. The region is every function of the input that holds a
    loop nest (other than main), timed at the same call sites in both."""
    from cudaify.frontend.parse import read_source
    from cudaify.transforms.structure import structural_problems

    program = prepare(source_path, config)
    code = read_source(cuda_path).decode("utf-8", "surrogateescape")
    timed = _timed_functions(program)
    problems = structural_problems(program, code, None)
    if problems:
        return Evaluation(stage=Stage.PARSE, problems=tuple(problems))
    from cudaify.backend.evaluate import Evaluator

    return Evaluator(program, config).evaluate(Variant(code=code, offloaded=timed))


def written_roofline(source_path: str, code: str, config: Config) -> Any:
    """The kernels of a written program timed by CUDA events and placed under the roofline,
    measured apart from the compile that wrote it, with no time budget (`cudaify bench`'s
    table, where that compile's search used its whole budget and left no time for them):
    a `Timing`, or None without a GPU or where the timing build or its run fails. The
    timing build wraps every function of the input that holds a loop nest (other than
    main), as `check` times them."""
    from cudaify.backend.evaluate import Evaluator

    program = prepare(source_path, config)
    evaluator = Evaluator(program, config.with_(time_budget=0.0))
    return evaluator.kernel_roofline(Variant(code=code, offloaded=_timed_functions(program)))


def _timed_functions(program: Any) -> tuple[str, ...]:
    """The functions of the input whose calls a given CUDA program's timing wraps: every
    one that holds a loop nest, other than main."""
    return tuple(fn.name for fn in program.functions if fn.loops and fn.name != "main")


def describe_evaluation(evaluation: Evaluation) -> list[str]:
    """Readable lines: how far the candidate got, and why it stopped."""
    lines = [f"stage reached: {evaluation.stage.label}"]
    if evaluation.verified:
        lines.append("output equal to the original's")
        for label, value in (
            ("region speedup", evaluation.region_speedup),
            ("program speedup", evaluation.program_speedup),
        ):
            if value:
                lines.append(f"{label}: {value:.2f}x")
    lines += [str(problem) for problem in evaluation.problems]
    return lines


def report(result: Result, config: Config) -> None:
    if config.quiet:
        return
    for warning in result.warnings:
        print(f"cudaify: warning: {warning}", file=sys.stderr)
    methods = " -> ".join(result.methods) or "none"
    status = "verified" if result.verified else "unverified"
    shown = "".join(
        f", {label} {value:.2f}x"
        for label, value in (
            ("region speedup", result.region_speedup),
            ("whole program", result.program_speedup),
        )
        if value
    )
    reused = ", from the result cache" if result.cached else ""
    print(
        f"cudaify: wrote {result.output_path} ({methods}; {status}{shown}{reused})", file=sys.stderr
    )


class GraphBuildStages:
    """What `regraph.build` needs from the pipeline, given to it as its `stages_for`: for a
    program, the pipeline's prepare, its rules (`Stages.expand`) and a check of each step
    (structure, nvcc, and a GPU run compared with the reference where a GPU is found). A
    class rather than a closure so that a parallel build can send it to its workers."""

    def __init__(self, config: Any = None):
        self.config = config if isinstance(config, Config) else Config()

    def __call__(self, path: Path) -> tuple[Apply, Verify, str]:
        from cudaify.regraph.build import gpu_turn
        from cudaify.transforms import UnknownMethodError, get
        from cudaify.transforms.structure import structural_problems

        program = prepare(str(path), self.config)
        stages = Stages(program, self.config)

        def verify(variant: Variant, before: Variant) -> Evaluation:
            try:
                method = get(variant.node) if variant.steps else None
            except UnknownMethodError:  # a teacher's method the compiler has no pass for
                method = None
            # the postcondition compares with the code the step started from (coalesce:
            # as many kernels as before), not with the sequential program
            problems = structural_problems(program, variant.code, method, before)
            if problems:
                return Evaluation(stage=Stage.PARSE, problems=tuple(problems))
            stages.evaluator.compile(variant)  # outside the lock; evaluate finds it cached
            with gpu_turn():
                return stages.evaluator.evaluate(variant)

        return stages.expand, verify, program.source


def graph_build_stages(config: Any = None) -> StagesFor:
    return GraphBuildStages(config)


__all__ = ["compile_file", "report", "write_atomically", "Result", "Problem"]
