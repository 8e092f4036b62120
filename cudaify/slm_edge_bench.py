"""How often the small model's edges are usable: for each registered method and a sample of
the benchmark suite's programs, the model applies that method's edge exactly as the search
does (the method's prompt with examples retrieved from the reasoning graph, strict
extraction, the structural check, nvcc, one repair round), and the table counts the answers
that pass the structural check, that compile, and (with `run`, on a GPU) that print what the
original prints.

The input of an edge is a variant the search would meet: the sequential program for a method
that only follows `sequential` (offload); for the others, the output of a deterministic rule
the method follows in the graph (offload first, then its other predecessors, each rule applied
to its own natural start), falling back to the sequential program where the method may follow
it. The first input on which the method's precondition holds is taken; programs where it holds
somewhere are sampled first.

Outcomes, in the order an answer can fail: `context` (the prompt does not fit the model's
context), `extract` (no single fenced block), `structure` (the structural check), `compile`
(nvcc), `unchanged` (the search rejects an answer that is the input again), `ok`; and
`timeout` / `error` when the edge did not finish. The model edits only the edge's target
functions (see transforms/slm/focus.py); an answer missing one of them is a `structure`
failure. An edge passes the structural check when its outcome is `compile` or `ok`, and
compiles when it is `ok`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cudaify.core import Variant, normalised_hash
from cudaify.core.config import Config
from cudaify.core.errors import CudaifyError
from cudaify.transforms import METHODS
from cudaify.transforms.base import Context, Method
from cudaify.transforms.slm.apply import EDIT_SAMPLING, Attempt, edge_outcome, edit
from cudaify.transforms.slm.engine import (
    Completion,
    Engine,
    Message,
    Sampling,
    generation_pauses,
)

START = "sequential"
OUTCOMES = ("ok", "unchanged", "compile", "structure", "extract", "context", "timeout", "error")
MAX_REASON = 300  # characters of a failure reason kept per edge


class EdgeTimeout(BaseException):
    """The edge ran past its time limit. A BaseException, so that no `except Exception` on
    the way (a model call, a compile) can swallow it and keep the edge running."""


@contextlib.contextmanager
def deadline(seconds: float | None) -> Iterator[None]:
    """Raise EdgeTimeout in this thread after `seconds`. llama.cpp returns to Python between
    tokens and batches, and the toolchain kills a running compiler's process group on any
    exception, so the limit holds during generation, compiles and runs alike."""
    if not seconds or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise EdgeTimeout(f"the edge ran past {seconds:.0f} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# -- the inputs of the edges ----------------------------------------------------------------


class Starts:
    """One analysed benchmark program and the variants its edges can start from: the
    sequential program and each rule's output (computed on first use)."""

    def __init__(self, path: Path, label: str, config: Config, graph: Any = None):
        from cudaify import pipeline

        self.path = path
        self.label = label
        self.stages = pipeline.Stages(pipeline.prepare(str(path), config), config)
        if graph is not None:  # one graph (and its retrieval index) for every program
            self.stages.__dict__["graph"] = graph
        self.context = Context(program=self.stages.program)
        self.sequential = Variant(code=self.stages.program.source)
        self._after: dict[str, Variant | None] = {START: self.sequential}

    def after(self, name: str) -> Variant | None:
        """The variant the rule `name` makes from its natural start: the sequential program
        when the method may follow it, else the offload rule's output. None where the rule
        does not apply."""
        if name not in self._after:
            self._after[name] = self._apply_rule(name)
        return self._after[name]

    def _apply_rule(self, name: str) -> Variant | None:
        method = METHODS.get(name)
        if method is None:
            return None
        base = self.sequential if START in method.follows else self.after("offload")
        if base is None or not _applies(method, base, self.context):
            return None
        try:
            return method.apply_rule(base, self.context).variant
        except Exception:  # a rule's bug must not stop the benchmark; the edge is just not tried
            return None

    def input_for(self, method: Method) -> tuple[str, Variant, bool] | None:
        """(the start's graph node, the variant, whether the method's precondition holds
        there), preferring a start where it holds; None when no start exists at all."""
        found = [(name, self.after(name)) for name in start_order(method)]
        found_ok = [(name, variant) for name, variant in found if variant is not None]
        for name, variant in found_ok:
            if _applies(method, variant, self.context):
                return name, variant, True
        cuda = [(name, variant) for name, variant in found_ok if name != START]
        fallback = cuda or found_ok
        return (*fallback[0], False) if fallback else None


def start_order(method: Method) -> list[str]:
    """The method's predecessors as inputs: CUDA variants first (offload's before the
    others, in the order the method lists them), the sequential program last."""
    predecessors = [name for name in method.follows if name != START and name in METHODS]
    predecessors.sort(key=lambda name: name != "offload")
    return predecessors + ([START] if START in method.follows else [])


def _applies(method: Method, variant: Variant, context: Context) -> bool:
    try:
        return method.applies(variant, context) is None
    except Exception:
        return False


@dataclass(frozen=True)
class Edge:
    method: str
    program: str  # the program's path under the suite, without the suffix
    start: str  # the graph node of the input variant
    precondition: bool
    variant: Variant = field(repr=False, compare=False)
    starts: Starts = field(repr=False, compare=False)


def spread(paths: Sequence[Path], root: Path) -> list[Path]:
    """The programs in round-robin order over their folders (categories), so that a small
    sample covers different kinds of program."""
    groups: dict[str, list[Path]] = {}
    for path in sorted(paths):
        groups.setdefault(str(path.parent.relative_to(root)), []).append(path)
    ordered, columns = [], list(groups.values())
    for row in range(max((len(column) for column in columns), default=0)):
        ordered += [column[row] for column in columns if row < len(column)]
    return ordered


def select_edges(
    root: Path,
    methods: Sequence[str],
    per_method: int,
    config: Config,
    graph: Any = None,
    say: Callable[[str], None] = print,
) -> list[Edge]:
    """`per_method` edges of each method (0: one per program), programs whose input meets
    the method's precondition first; interleaved by round so that a run cut short has
    tried every method."""
    from cudaify.bench import discover

    programs = spread(discover(root), root)
    wanted = per_method or len(programs)
    held: dict[str, list[Edge]] = {name: [] for name in methods}
    other: dict[str, list[Edge]] = {name: [] for name in methods}
    for path in programs:
        if all(len(held[name]) >= wanted for name in methods):
            break
        starts = _prepare(path, root, config, graph, say)
        if starts is None:
            continue
        for name in methods:
            if len(held[name]) < wanted:
                _consider(starts, name, held, other)
    chosen = {name: (held[name] + other[name])[:wanted] for name in methods}
    rounds = max((len(edges) for edges in chosen.values()), default=0)
    return [chosen[name][r] for r in range(rounds) for name in methods if r < len(chosen[name])]


def _prepare(
    path: Path, root: Path, config: Config, graph: Any, say: Callable[[str], None]
) -> Starts | None:
    label = str(path.relative_to(root).with_suffix(""))
    try:
        return Starts(path, label, config, graph)
    except CudaifyError as exc:
        say(f"skipping {label}: {str(exc).splitlines()[0]}")
        return None


def _consider(
    starts: Starts, name: str, held: dict[str, list[Edge]], other: dict[str, list[Edge]]
) -> None:
    picked = starts.input_for(METHODS[name])
    if picked is None:
        return
    start, variant, precondition = picked
    edge = Edge(name, starts.label, start, precondition, variant, starts)
    (held if precondition else other)[name].append(edge)


# -- applying one edge ----------------------------------------------------------------------


class Meter:
    """An engine that remembers every completion it served (tokens and model seconds)."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self.identity = engine.identity
        self.completions: list[Completion] = []

    def complete(self, messages: Sequence[Message], sampling: Sampling) -> Completion:
        completion = self.engine.complete(messages, sampling)
        self.completions.append(completion)
        return completion

    def choose(
        self, messages: Sequence[Message], options: Sequence[str], sampling: Sampling
    ) -> dict[str, float]:
        return self.engine.choose(messages, options, sampling)


@dataclass(frozen=True)
class EdgeResult:
    model: str
    method: str
    program: str
    start: str
    precondition: bool
    outcome: str  # one of OUTCOMES
    reason: str  # why it failed (empty for `ok`); for `ok` with a failed run, why it was wrong
    seconds: float  # wall time of the edge: model, checks, compiles (and the run)
    model_seconds: float  # time the model spent on its answers (as recorded when cached)
    prompt_tokens: int
    generated_tokens: int
    completions: int  # 1, or 2 with the repair round
    cached: int  # completions served from the cache or a replay file
    correct: bool | None = None  # None: not run on a GPU
    load_average: float = 0.0
    # the program the model's last answer made (spliced into the variant), "" without one
    answer: str = ""
    # every rule applied to that program: "method: ExceptionType: message" for each that
    # raised (in a search only that edge dies, but it is a rule's bug to fix)
    rule_failures: tuple[str, ...] = ()

    @property
    def structure_ok(self) -> bool:
        return self.outcome in ("compile", "ok")

    @property
    def compiled(self) -> bool:
        return self.outcome == "ok"

    def to_json(self) -> dict[str, Any]:
        return {
            **dataclasses.asdict(self),
            "structure_ok": self.structure_ok,
            "compiled": self.compiled,
        }


def classify(attempt: Attempt, before: Variant) -> tuple[str, str]:
    """(outcome, reason) of the answer the repair round left."""
    if attempt.code is None:  # no program: too long, no block, or a splice that failed
        first = attempt.problems[0].kind if attempt.problems else "extract"
        kind = first if first in ("context", "extract") else "structure"
        return kind, _reason(attempt.problems)
    structural = [p for p in attempt.problems if p.kind != "compile"]
    if structural:
        return "structure", _reason(structural)
    if attempt.problems:
        return "compile", _reason(attempt.problems)
    if normalised_hash(attempt.code) == before.key:
        return "unchanged", "the model returned the program unchanged"
    return "ok", ""


def _reason(problems: Iterable[object]) -> str:
    text = " ".join(str(next(iter(problems), "no answer")).split())
    return text[:MAX_REASON]


@dataclass(frozen=True)
class EdgeOptions:
    sampling: Sampling = EDIT_SAMPLING
    run: bool = False  # run compiled edges on the GPU and compare with the CPU reference
    timeout: float | None = None  # seconds per edge


@dataclass
class _Progress:
    """What an edge reached so far, kept when a later stage times out or fails."""

    outcome: str = "error"
    reason: str = ""
    correct: bool | None = None
    answer: str = ""
    rule_failures: tuple[str, ...] = ()


def run_edge(edge: Edge, engine: Engine, model: str, options: EdgeOptions) -> EdgeResult:
    """Apply one edge with the model as the search would; never raises for the edge's own
    failure (a timeout, a model error, a crash of a check)."""
    meter = Meter(engine)
    began = time.perf_counter()
    progress = _Progress()
    try:
        with deadline(options.timeout):
            child = _apply(edge, meter, options, progress)
        if child is not None:
            _run(edge, child, progress)
    except EdgeTimeout as exc:
        _failed(progress, "timeout", str(exc))
    except Exception as exc:  # noqa: BLE001 - one edge's failure never stops the benchmark
        _failed(progress, "error", f"{type(exc).__name__}: {exc}")
    completions = meter.completions
    return EdgeResult(
        model=model,
        method=edge.method,
        program=edge.program,
        start=edge.start,
        precondition=edge.precondition,
        outcome=progress.outcome,
        reason=" ".join(progress.reason.split())[:MAX_REASON],
        seconds=time.perf_counter() - began,
        model_seconds=sum(c.seconds for c in completions),
        prompt_tokens=sum(c.prompt_tokens for c in completions),
        generated_tokens=sum(c.completion_tokens for c in completions),
        completions=len(completions),
        cached=sum(1 for c in completions if c.cached),
        correct=progress.correct,
        load_average=os.getloadavg()[0],
        answer=progress.answer,
        rule_failures=progress.rule_failures,
    )


def _failed(progress: _Progress, outcome: str, reason: str) -> None:
    """A timeout or crash: before the answer was judged it is the edge's outcome; after,
    it is the run's (the answer passed its checks, the run did not finish)."""
    if progress.outcome == "ok":
        progress.correct = False
        progress.reason = f"run: {reason}"
        return
    progress.outcome, progress.reason = outcome, reason


def _apply(edge: Edge, engine: Engine, options: EdgeOptions, progress: _Progress) -> Variant | None:
    """The model's answer and its checks; the child to run on the GPU when it passed and
    `options.run` asks for it."""
    stages = edge.starts.stages
    method = METHODS[edge.method]
    examples = stages.examples(edge.variant, method.name)
    # Shared use of the GPU while the model writes: a `cudaify bench` running beside this
    # one takes its reported timings between two tokens (see backend.gpulock's make_way).
    gpu = stages.evaluator.gpu
    with gpu.shared(), generation_pauses(gpu.make_way):
        attempt = edit(
            engine,
            method,
            edge.variant,
            examples,
            lambda code: stages.validate(code, method, edge.variant),
            options.sampling,
            edge.starts.context,
        )
    progress.outcome, progress.reason = classify(attempt, edge.variant)
    if attempt.code is not None:
        progress.answer = attempt.code
        progress.rule_failures = rules_on(
            edge.variant.then(method.name, attempt.code, "slm"), edge.starts.context
        )
    if progress.outcome != "ok" or not options.run or not stages.evaluator.run_on_gpu:
        return None
    child = edge_outcome(method, edge.variant, attempt).variant
    assert child is not None  # an `ok` answer is a child of the search
    return child


def rules_on(variant: Variant, context: Context) -> tuple[str, ...]:
    """Every method's rule applied to `variant` (code a model wrote): the ones that raised,
    as "method: ExceptionType: message". A refusal or a child is fine; an exception is a
    rule that met code it was not written for (launch_tuning's IndexError on a model's 1-D
    block over a 2-D grid was found this way, by hand)."""
    failures = []
    for name, method in METHODS.items():
        try:
            method.rule(variant, context)
        except Exception as exc:  # noqa: BLE001 - the exception is what is recorded
            failures.append(" ".join(f"{name}: {type(exc).__name__}: {exc}".split())[:MAX_REASON])
    return tuple(failures)


def _run(edge: Edge, child: Variant, progress: _Progress) -> None:
    """The GPU verdict on an answer that passed its checks. Not under the edge's deadline:
    the run has the evaluator's own time limit, and beside a `cudaify bench` it may first
    wait for that bench's timings (an H100 run counted such waits as timeouts)."""
    stages = edge.starts.stages
    evaluation = stages.evaluate(
        dataclasses.replace(child, offloaded=stages.timed), before=edge.variant
    )
    progress.correct = evaluation.verified
    progress.reason = "" if evaluation.verified else evaluation.why


# -- the table -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    """One model's edges of one method (`method` "all": every edge of the model)."""

    model: str
    method: str
    edges: int
    precondition: int
    structure_ok: int
    compiled: int
    outcomes: dict[str, int]  # how many edges ended in each outcome
    ran: int  # edges run on the GPU
    correct: int
    seconds: float  # mean wall seconds per edge
    model_seconds: float  # mean model seconds per edge
    prompt_tokens: float  # mean per edge
    generated_tokens: float

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def summarise(results: Sequence[EdgeResult]) -> list[Row]:
    """A row per (model, method) in the order they first appear, then a total per model."""
    groups: dict[tuple[str, str], list[EdgeResult]] = {}
    for result in results:
        groups.setdefault((result.model, result.method), []).append(result)
        groups.setdefault((result.model, "\0all"), []).append(result)
    ordered = sorted(groups, key=lambda key: (_first(results, key[0]), key[1] == "\0all"))
    return [_row(model, method.lstrip("\0"), groups[(model, method)]) for model, method in ordered]


def _first(results: Sequence[EdgeResult], model: str) -> int:
    return next(index for index, result in enumerate(results) if result.model == model)


def _row(model: str, method: str, results: list[EdgeResult]) -> Row:
    count = len(results)

    def mean(values: Iterable[float]) -> float:
        return sum(values) / count

    return Row(
        model=model,
        method=method,
        edges=count,
        precondition=sum(r.precondition for r in results),
        structure_ok=sum(r.structure_ok for r in results),
        compiled=sum(r.compiled for r in results),
        outcomes={o: n for o in OUTCOMES if (n := sum(r.outcome == o for r in results))},
        ran=sum(r.correct is not None for r in results),
        correct=sum(bool(r.correct) for r in results),
        seconds=mean(r.seconds for r in results),
        model_seconds=mean(r.model_seconds for r in results),
        prompt_tokens=mean(r.prompt_tokens for r in results),
        generated_tokens=mean(r.generated_tokens for r in results),
    )


def share(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.0f}%)" if whole else "-"


TABLE_HEADER = (
    "| model | method | edges | precondition | structure ok | compiles | correct on GPU | "
    "outcomes | s/edge | model s/edge | prompt tok | gen tok |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|"
)


def table(rows: Sequence[Row]) -> str:
    """Markdown; every share is over all of the row's edges."""
    lines = [TABLE_HEADER]
    for row in rows:
        correct = share(row.correct, row.edges) if row.ran else "-"
        method = f"**{row.method}**" if row.method == "all" else row.method
        outcomes = ", ".join(f"{name} {count}" for name, count in row.outcomes.items())
        lines.append(
            f"| {row.model} | {method} | {row.edges} | {row.precondition} | "
            f"{share(row.structure_ok, row.edges)} | {share(row.compiled, row.edges)} | "
            f"{correct} | {outcomes} | {row.seconds:.1f} | {row.model_seconds:.1f} | "
            f"{row.prompt_tokens:.0f} | {row.generated_tokens:.0f} |"
        )
    return "\n".join(lines)


def progress_line(index: int, total: int, result: EdgeResult) -> str:
    verdict = result.outcome
    if result.correct is not None:
        verdict += ", correct on GPU" if result.correct else ", WRONG on GPU"
    cached = f", {result.cached} cached" if result.cached else ""
    why = f": {result.reason[:160]}" if result.reason else ""
    return (
        f"[{index}/{total}] {result.model} {result.method} {result.program} "
        f"(from {result.start}) -> {verdict} in {result.seconds:.1f} s "
        f"({result.prompt_tokens}+{result.generated_tokens} tok{cached}, "
        f"load {result.load_average:.1f}){why}"
    )


class Results:
    """Writes as it goes: one JSON line per edge, and the summary (JSON and Markdown)
    rewritten after every edge, so a run cut short keeps everything it measured."""

    def __init__(self, directory: Path | None):
        self.directory = directory
        self.edges: list[EdgeResult] = []
        self.speeds: list[dict[str, Any]] = []
        self.notes: list[str] = []
        if directory is not None:
            directory.mkdir(parents=True, exist_ok=True)
            (directory / "edges.jsonl").write_text("")

    def add_speed(self, speed: dict[str, Any]) -> None:
        self.speeds.append(speed)
        self._write_summary()

    def add(self, result: EdgeResult) -> None:
        self.edges.append(result)
        if self.directory is not None:
            with (self.directory / "edges.jsonl").open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(result.to_json()) + "\n")
        self._write_summary()

    def note(self, text: str) -> None:
        self.notes.append(text)
        self._write_summary()

    def markdown(self) -> str:
        parts = []
        if self.speeds:
            parts.append(speed_table(self.speeds))
        if self.edges:
            parts.append(table(summarise(self.edges)))
            parts.append(rule_failures(self.edges))
        parts += self.notes
        return "\n\n".join(parts) + "\n"

    def _write_summary(self) -> None:
        if self.directory is None:
            return
        summary = {
            "speeds": self.speeds,
            "rows": [row.to_json() for row in summarise(self.edges)] if self.edges else [],
            "notes": self.notes,
        }
        _write_atomically(self.directory / "summary.json", json.dumps(summary, indent=1))
        _write_atomically(self.directory / "summary.md", self.markdown())


def rule_failures(results: Sequence[EdgeResult]) -> str:
    """Which rules raised on the programs the models' answers made (the answers that
    spliced into their variant), one line per failure and the edge it came from."""
    answered = [r for r in results if r.answer]
    lines = [
        f"Rules applied to the {len(answered)} answers that made a program: "
        + (f"{sum(len(r.rule_failures) for r in answered)} raised." if answered else "none.")
    ]
    for r in answered:
        lines += [
            f"- {failure} (on {r.model}'s {r.method} of {r.program})" for failure in r.rule_failures
        ]
    return "\n".join(lines)


def speed_table(speeds: Sequence[dict[str, Any]]) -> str:
    lines = [
        "| model | threads | gpu layers | load avg | prompt tok | prompt tok/s | gen tok | "
        "gen tok/s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for s in speeds:
        lines.append(
            f"| {s['model']} | {s['threads']} | {s['gpu_layers']} | {s['load_average']:.1f} | "
            f"{s['prompt_tokens']} | {s['prompt_rate']:.1f} | {s['generated_tokens']} | "
            f"{s['generation_rate']:.2f} |"
        )
    return "\n".join(lines)


def _write_atomically(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


def run_edges(
    edges: Sequence[Edge],
    engine: Engine,
    model: str,
    options: EdgeOptions,
    results: Results,
    say: Callable[[str], None] = print,
    budget: float | None = None,
) -> list[EdgeResult]:
    """The edges with one model, each reported (and written) as it finishes; no edge starts
    once `budget` seconds have passed (the run is then a prefix of the interleaved list)."""
    done: list[EdgeResult] = []
    began = time.perf_counter()
    for index, edge in enumerate(edges, 1):
        if budget and time.perf_counter() - began > budget:
            note = f"{model}: time budget ({budget:.0f} s) spent, {len(edges) - len(done)} "
            results.note(note + f"of {len(edges)} edges not run")
            say(results.notes[-1])
            break
        say(f"[{index}/{len(edges)}] {model} {edge.method} {edge.program} (from {edge.start}) ...")
        result = run_edge(edge, engine, model, options)
        results.add(result)
        done.append(result)
        say(progress_line(index, len(edges), result))
    return done
