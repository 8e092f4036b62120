"""Building the reasoning graph (the paper's pipeline): trajectories -> verification ->
relabeling -> merging.

Trajectories come from three teachers: a model behind any OpenAI-compatible endpoint (or a
recorded one), the compiler's own rules (every sequence of registered methods up to a
length, applied by the pipeline's `expand`), and curated trajectory files. Every step is
checked by an injected `verify(variant, before) -> Evaluation` (the pipeline's structural check,
nvcc, and a GPU run compared with the reference): a step that fails ends its trajectory,
since later steps build on code that is wrong, and is kept out of the graph; it still
counts as a visit on an edge the verified steps created. Merging walks each trajectory from
`sequential`, reusing or adding nodes and edges, appending examples and updating stats.
A step's statistics record its gain: its speedup over its parent's, by the build's
objective (`Teachers.objective`, the pipeline's `--objective`); the sequential program's
speedup is 1."""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import multiprocessing
import time
import zlib
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cudaify.core import Evaluation, Stage, Variant, objective_speedup
from cudaify.core.errors import CudaifyError, ToolchainError
from cudaify.regraph.graph import START, EdgeStats, Example, ReGraph, gain, stamped
from cudaify.regraph.relabel import describe, relabel
from cudaify.regraph.teacher import TextModel, teacher_trajectory
from cudaify.regraph.trajectory import Trajectory, TrajectoryError, TrajectoryStep
from cudaify.regraph.trajectory import load as load_trajectory

log = logging.getLogger("cudaify")

# (variant, method) -> (new variant, "") or (None, why it does not apply): Stages.expand
Apply = Callable[[Variant, str], tuple[Variant | None, str]]
# (variant, the variant its last step was applied to) -> what verifying it found:
# structural check (a method's postcondition compares the two), compile, GPU run, comparison
Verify = Callable[[Variant, Variant], Evaluation]

PROGRAM_SUFFIXES = (".c", ".cc", ".cpp", ".cxx")


@dataclass(frozen=True)
class VerifiedStep:
    """One step of a trajectory with what verification found. `verified` is "gpu"
    (ran and printed the reference's output), "compile" (no GPU: compiled only) or ""
    (failed; `why` says how). `speedup` is the result's over the CPU (the example's);
    `gain` the result's speedup over its parent's, by the run's objective (the edge's
    statistics), None where either was not measured."""

    program: str
    source: str  # the graph node the step starts from
    target: str  # the method it applied
    before: str
    after: str
    think: str = ""
    detail: str = ""
    speedup: float | None = None
    verified: str = ""
    origin: str = "rule"  # teacher | rule | curated | learned
    why: str = ""
    gain: float | None = None

    @property
    def ok(self) -> bool:
        return bool(self.verified)

    def example(self) -> Example:
        return Example(
            program=self.program,
            before=self.before,
            after=self.after,
            think=self.think,
            detail=self.detail,
            speedup=self.speedup,
            verified=self.verified,
            source=self.origin,
        )


def how_verified(evaluation: Evaluation) -> str:
    """ "gpu" when the output matched on a GPU; "compile" when no GPU ran it but it
    compiled; "" otherwise (a GPU run that printed something else is a failure)."""
    if evaluation.verified:
        return "gpu"
    if evaluation.stage >= Stage.COMPILE and not evaluation.ran_on_gpu:
        return "compile"
    return ""


def verification_line(steps: Sequence[VerifiedStep]) -> str:
    """What a build's verification did, in one line: how many steps ran on the GPU and
    matched, how many only compiled (no GPU), how many were rejected."""
    gpu = sum(1 for s in steps if s.verified == "gpu")
    compiled = sum(1 for s in steps if s.verified == "compile")
    rejected = len(steps) - gpu - compiled
    how = []
    if gpu:
        how.append(f"{gpu} ran on the GPU and matched the CPU reference")
    if compiled:
        how.append(f"{compiled} compiled only, not run (no GPU)")
    said = f" ({'; '.join(how)})" if how else ""
    return f"{gpu + compiled} verified step(s){said}, {rejected} rejected"


def measured_speedup(evaluation: Evaluation) -> float | None:
    return evaluation.region_speedup or evaluation.program_speedup


def step_gain(
    evaluation: Evaluation, parent: Evaluation | None, objective: str = "program"
) -> float | None:
    """A verified step's speedup over its parent's by `objective` (`parent` None: the
    parent is the input program, whose speedup is 1)."""
    if not evaluation.verified:
        return None
    before = objective_speedup(parent, objective) if parent is not None else 1.0
    return gain(objective_speedup(evaluation, objective), before)


@dataclass(frozen=True)
class Parent:
    """What a step starts from: the variant, and its evaluation (None for the input)."""

    variant: Variant
    evaluation: Evaluation | None = None


def _checked(
    program: str,
    source: str,
    before: Parent,
    after: Variant,
    evaluation: Evaluation,
    origin: str,
    think: str = "",
    detail: str = "",
    objective: str = "program",
) -> VerifiedStep:
    how = how_verified(evaluation)
    return VerifiedStep(
        program=program,
        source=source,
        target=after.node,
        before=before.variant.code,
        after=after.code,
        think=think,
        detail=detail,
        speedup=measured_speedup(evaluation) if how else None,
        verified=how,
        origin=origin,
        why="" if how else (evaluation.why or f"stopped at {evaluation.stage.label}"),
        gain=step_gain(evaluation, before.evaluation, objective),
    )


class _Memo:
    """Verification of identical code (reached in two orders) is done once."""

    def __init__(self, verify: Verify):
        self.verify = verify
        self.seen: dict[tuple[str, str, str], Evaluation] = {}

    def __call__(self, variant: Variant, before: Variant) -> Evaluation:
        key = (variant.key, variant.node, before.key)
        if key not in self.seen:
            self.seen[key] = self.verify(variant, before)
        return self.seen[key]


def rule_steps(
    program: str,
    start: Variant,
    methods: Sequence[str],
    apply: Apply,
    verify: Verify,
    max_length: int = 3,
    problems: list[str] | None = None,
    max_steps: int | None = None,
    objective: str = "program",
) -> list[VerifiedStep]:
    """Every sequence of distinct `methods` up to `max_length` that the rules can apply,
    as verified steps (a tree: sequences share their prefixes). A rule that raises is
    reported in `problems` and skipped: one faulty pass must not end a corpus build.
    With `max_steps`, at most that many steps are verified, spread over the tree
    (`capped_rule_steps`) instead of spent on its first branch. Each step's gain is over
    its parent's speedup by `objective`."""
    memo = _Memo(verify)
    found: list[VerifiedStep] = []
    attempt = _attempter(program, apply, problems)
    if max_steps is not None:
        return capped_rule_steps(
            program, start, methods, attempt, memo, max_length, max_steps, objective
        )

    def walk(parent: Parent, used: tuple[str, ...]) -> None:
        if len(used) >= max_length:
            return
        variant = parent.variant
        for method in methods:
            if method in used:
                continue
            child = attempt(variant, method)
            if child is None:
                continue
            source = variant.node if variant.steps else START
            evaluation = memo(child, variant)
            step = _checked(
                program,
                source,
                parent,
                child,
                evaluation,
                "rule",
                detail=child.steps[-1].detail if child.steps else "",
                objective=objective,
            )
            found.append(step)
            if step.ok:
                walk(Parent(child, evaluation), used + (method,))

    walk(Parent(start), ())
    return found


# (variant, method) -> the rule's variant, or None (does not apply, or raised: reported)
Attempt = Callable[[Variant, str], Variant | None]


def _attempter(program: str, apply: Apply, problems: list[str] | None) -> Attempt:
    def attempt(variant: Variant, method: str) -> Variant | None:
        try:
            child, why = apply(variant, method)
        except Exception as exc:  # noqa: BLE001 - reported, and the build goes on
            where = " after ".join([method, *reversed(variant.methods)])
            (problems if problems is not None else []).append(
                f"{program}: rule {where} raised {type(exc).__name__}: {exc}"
            )
            log.warning("%s: rule %s raised %s", program, method, exc)
            return None
        if child is None:
            log.debug("%s: %s after %s does not apply: %s", program, method, variant.methods, why)
        return child

    return attempt


def method_order(program: str, used: tuple[str, ...], methods: Sequence[str]) -> list[str]:
    """`methods` rotated by a hash of the program and the path so far: under a step cap,
    different programs (and branches) try different continuations first, so the capped
    corpus still covers many edges. Deterministic across runs and processes."""
    if not methods:
        return []
    offset = zlib.crc32("/".join((program, *used)).encode()) % len(methods)
    return [*methods[offset:], *methods[:offset]]


@dataclass
class _Branch:
    parent: Parent  # the variant the branch's children start from, and its evaluation
    used: tuple[str, ...]
    pending: list[str]  # methods this node has not tried yet, in the order it tries them


def capped_rule_steps(
    program: str,
    start: Variant,
    methods: Sequence[str],
    attempt: Attempt,
    verify: Verify,
    max_length: int,
    max_steps: int,
    objective: str = "program",
) -> list[VerifiedStep]:
    """At most `max_steps` rule steps: every new verified step is first continued down to
    `max_length` (one child per level), then the nodes take turns adding their next
    child. So the cap is spent on complete sequences across many branches: most paths
    reach `max_length`, and the first steps from `sequential` each get continued before
    any gets a second continuation (a cap on the depth-first walk would spend it all on
    the first branch)."""
    found: list[VerifiedStep] = []
    queue = deque([_Branch(Parent(start), (), method_order(program, (), methods))])
    while queue and len(found) < max_steps:
        branch = queue.popleft()
        if len(branch.used) >= max_length:
            continue
        method, child = _next_child(branch, attempt)
        if child is None:
            continue  # nothing more applies here
        variant = branch.parent.variant
        source = variant.node if variant.steps else START
        detail = child.steps[-1].detail if child.steps else ""
        evaluation = verify(child, variant)
        step = _checked(
            program,
            source,
            branch.parent,
            child,
            evaluation,
            "rule",
            detail=detail,
            objective=objective,
        )
        found.append(step)
        queue.append(branch)  # its next child, in its turn
        if step.ok:
            used = branch.used + (method,)
            remaining = [m for m in methods if m not in used]
            order = method_order(program, used, remaining)
            queue.appendleft(_Branch(Parent(child, evaluation), used, order))
    return found


def _next_child(branch: _Branch, attempt: Attempt) -> tuple[str, Variant | None]:
    """The first of the branch's untried methods whose rule applies, and its variant."""
    while branch.pending:
        method = branch.pending.pop(0)
        child = attempt(branch.parent.variant, method)
        if child is not None:
            return method, child
    return "", None


def rule_paths(program: str, code: str, steps: Sequence[VerifiedStep]) -> list[Trajectory]:
    """The rule steps' tree as trajectories: one per verified path from `code` to a step
    nothing verified follows (a code reached twice keeps its first parent)."""
    ok = [s for s in steps if s.ok and s.origin == "rule"]
    parent: dict[str, VerifiedStep] = {}
    for step in ok:
        parent.setdefault(step.after, step)
    continued = {s.before for s in ok}
    paths = []
    for leaf in (s for s in ok if s.after not in continued and parent[s.after] is s):
        chain = [leaf]
        while chain[-1].before != code and chain[-1].before in parent and len(chain) <= len(ok):
            chain.append(parent[chain[-1].before])
        chain.reverse()
        path = tuple(TrajectoryStep(s.target, s.after, s.think, s.detail) for s in chain)
        paths.append(Trajectory(program, code, path, "rule"))
    return paths


Relabel = Callable[[str, str], str]  # (name a step gives, its detail) -> graph method


def trajectory_steps(
    trajectory: Trajectory, verify: Verify, rename: Relabel, objective: str = "program"
) -> list[VerifiedStep]:
    """Verify a teacher's or curated trajectory step by step, up to its first failure."""
    parent = Parent(Variant(code=trajectory.code))
    found: list[VerifiedStep] = []
    for step in trajectory.steps:
        method = rename(step.method, step.detail)
        variant = parent.variant
        child = variant.then(method, step.code, trajectory.source, step.detail)
        source = variant.node if variant.steps else START
        evaluation = verify(child, variant)
        checked = _checked(
            trajectory.program,
            source,
            parent,
            child,
            evaluation,
            trajectory.source,
            step.think,
            step.detail,
            objective,
        )
        found.append(checked)
        if not checked.ok:
            break
        parent = Parent(child, evaluation)
    return found


def merge_steps(graph: ReGraph, steps: Iterable[VerifiedStep], count: bool = True) -> ReGraph:
    """A new graph: `graph` with the verified steps added as examples (and new nodes and
    edges where needed); failed steps only count as visits on edges that exist. With
    `count` false the stats are left alone (the caller records them separately)."""
    merged = graph.copy()
    steps = list(steps)
    merged.add_method(START, *describe(START))
    for step in (s for s in steps if s.ok):
        for name in (step.source, step.target):
            merged.add_method(name, *describe(name))
        merged.add_example(step.source, step.target, step.example())
        if count:
            merged.stats(step.source, step.target).record(True, step.gain)
    for step in (s for s in steps if not s.ok and count):
        if merged.graph.has_edge(step.source, step.target):
            merged.stats(step.source, step.target).record(False)
    return merged


def prune_examples(graph: ReGraph, most: int) -> ReGraph:
    """A new graph keeping at most `most` examples per edge (statistics untouched): GPU
    verified and faster first, and as many different programs as fit, since the SLM sees
    a handful of examples and ten of one program teach less than three of three."""
    pruned = graph.copy()
    for source, target in pruned.edges():
        examples = pruned.examples(source, target)
        # an example with the teacher's or curator's reasoning (think) teaches more
        ranked = sorted(
            examples, key=lambda e: (e.verified != "gpu", -(e.speedup or 0.0), not e.think)
        )
        chosen: list[int] = []  # positions in `ranked`; each round takes one per program
        while len(chosen) < min(most, len(ranked)):
            used: set[str] = set()
            for position, example in enumerate(ranked):
                if position in chosen or example.program in used or len(chosen) >= most:
                    continue
                used.add(example.program)
                chosen.append(position)
        kept = {id(ranked[p]) for p in chosen}
        examples[:] = [e for e in examples if id(e) in kept]  # in their original order
    return pruned


def merge(a: ReGraph, b: ReGraph) -> ReGraph:
    """Union of two graphs: nodes (a's descriptions first), edges, examples (each once),
    stats added (visits, successes; the mean log speedup weighted by timed samples)."""
    merged = a.copy()
    for name in b.methods:
        merged.add_method(name, **b.node(name))
    for source, target in b.edges():
        fresh = not merged.graph.has_edge(source, target)
        merged.add_edge(source, target)
        for example in b.examples(source, target):
            merged.add_example(source, target, example)
        ours = EdgeStats() if fresh else merged.stats(source, target)
        merged.graph.edges[source, target]["stats"] = ours.combined(b.stats(source, target))
    return merged


# -- building from a corpus --------------------------------------------------------


def corpus_programs(folder: str | Path) -> list[Path]:
    """The C/C++ programs under `folder`, sorted; their names (file stems) must be unique."""
    programs = sorted(p for p in Path(folder).rglob("*") if p.suffix in PROGRAM_SUFFIXES)
    seen: dict[str, Path] = {}
    for path in programs:
        if path.stem in seen:
            raise TrajectoryError(
                f"{path}: a second program named '{path.stem}' ({seen[path.stem]})"
            )
        seen[path.stem] = path
    return programs


def corpus_trajectories(folder: str | Path) -> list[Path]:
    return sorted(Path(folder).rglob("*.trajectory.json"))


# path -> (apply, verify, the program's code as the rules see it)
StagesFor = Callable[[Path], tuple[Apply, Verify, str]]


@dataclass
class BuildReport:
    graph: ReGraph
    steps: list[VerifiedStep] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # programs or trajectories skipped
    # what the teachers produced: the teacher's answers as given, the rules' verified paths
    trajectories: list[Trajectory] = field(default_factory=list)
    # verified steps of each teacher's and curated trajectory (the rules' paths are all
    # verified: their lengths are in `trajectories`)
    taught_lengths: list[int] = field(default_factory=list)
    _renamer: Renamer | None = None

    def renamer(self, judge: TextModel | None) -> Renamer:
        if self._renamer is None:
            self._renamer = Renamer(self.graph.methods, judge)
        self._renamer.judge = self._renamer.judge or judge
        return self._renamer

    @property
    def verified(self) -> int:
        return sum(1 for s in self.steps if s.ok)


@dataclass(frozen=True)
class Teachers:
    """Which teachers a build asks: rules (with the methods to combine), a model, curated
    trajectory files (found in the corpus)."""

    rules: bool = False
    methods: tuple[str, ...] = ()
    max_length: int = 3
    max_steps: int | None = None  # rule steps verified per program (None: every sequence)
    # time.time() after which no rule is tried any more (the build's --time-limit)
    deadline: float | None = None
    model: TextModel | None = None
    curated: bool = True
    # the speedup a step's gain over its parent is measured by (the pipeline's --objective)
    objective: str = "program"


def build(
    corpus: str | Path,
    stages_for: StagesFor,
    teachers: Teachers,
    base: ReGraph | None = None,
    judge: TextModel | None = None,
    jobs: int = 1,
    max_examples: int | None = None,
    gpu: str = "",
) -> BuildReport:
    """Build (or extend `base`) from every program and trajectory file in `corpus`.
    A program the pipeline cannot prepare is reported and skipped, not fatal. With `jobs`
    above 1 the rules run on that many programs at once, in worker processes (then
    `stages_for` must be picklable, as the pipeline's `GraphBuildStages` is).
    `max_examples` caps the examples kept per edge (the stats still count every step).
    `gpu` names the GPU the steps ran on: the meta records it, with the build's date,
    when some step was timed there."""
    graph = base.copy() if base is not None else ReGraph()
    graph.add_method(START, *describe(START))
    for name in teachers.methods:
        graph.add_method(name, *describe(name))
    report = BuildReport(graph)
    programs = {p.stem: p for p in corpus_programs(corpus)}
    remaining = teachers
    if jobs > 1 and teachers.rules:
        _parallel_rules(programs, stages_for, teachers, report, jobs)
        remaining = dataclasses.replace(teachers, rules=False)  # the teacher's turn, in order
    for name, path in programs.items():
        report.steps += _program_steps(name, path, stages_for, remaining, report, judge)
    if teachers.curated:
        for file in corpus_trajectories(corpus):
            if _past(teachers.deadline):
                report.problems.append(f"{file}: not tried: the build's time limit was reached")
                continue
            report.steps += _curated_steps(
                file, programs, stages_for, report, judge, teachers.objective
            )
    report.graph = merge_steps(graph, report.steps)
    if max_examples is not None:
        report.graph = prune_examples(report.graph, max_examples)
    measured = gpu if any(s.verified == "gpu" for s in report.steps) else ""
    meta = {**report.graph.meta, **_meta(corpus, teachers, report)}
    report.graph.meta = stamped(meta, measured)
    return report


def _rules_job(
    name: str, path: Path, stages_for: StagesFor, teachers: Teachers
) -> tuple[list[VerifiedStep], list[Trajectory], list[str]]:
    local = BuildReport(ReGraph())
    steps = _program_steps(name, path, stages_for, teachers, local, None)
    return steps, local.trajectories, local.problems


def _parallel_rules(
    programs: dict[str, Path],
    stages_for: StagesFor,
    teachers: Teachers,
    report: BuildReport,
    jobs: int,
) -> None:
    # spawn, not fork: the parent may hold threads (libclang, the evaluator's pools)
    context = multiprocessing.get_context("spawn")
    rules_only = dataclasses.replace(teachers, model=None)
    level = logging.getLogger().getEffectiveLevel()
    with ProcessPoolExecutor(
        jobs, mp_context=context, initializer=_init_worker, initargs=(context.Lock(), level)
    ) as pool:
        futures = [
            pool.submit(_rules_job, name, path, stages_for, rules_only)
            for name, path in programs.items()
        ]
        for future in futures:  # in corpus order, whatever finished first
            steps, trajectories, problems = future.result()
            report.steps += steps
            report.trajectories += trajectories
            report.problems += problems


def _meta(corpus: str | Path, teachers: Teachers, report: BuildReport) -> dict[str, Any]:
    """How the graph was built, so that a compile-only build is never taken for a GPU one."""
    how = sorted({s.verified for s in report.steps if s.ok})
    sources = sorted({s.origin for s in report.steps if s.ok})
    meta: dict[str, Any] = {
        "corpus": Path(corpus).name,
        "rule_methods": list(teachers.methods) if teachers.rules else [],
        "max_length": teachers.max_length,
        "sources": sources,
        "verified": how[0] if len(how) == 1 else how,
        "objective": teachers.objective,
    }
    if teachers.rules and teachers.max_steps is not None:
        meta["max_steps"] = teachers.max_steps
    if any("time limit was reached" in problem for problem in report.problems):
        meta["cut_short"] = True  # the build's --time-limit ended it early
    rules = [len(t.steps) for t in report.trajectories if t.source == "rule"]
    lengths = [n for n in rules + report.taught_lengths if n]
    if lengths:
        meta["trajectories"] = len(lengths)
        meta["mean_trajectory_length"] = round(sum(lengths) / len(lengths), 2)
    return meta


class Renamer:
    """Relabeling across one build: a name met twice is judged once, and a new method a
    teacher introduced is known when the next trajectory names it differently."""

    def __init__(self, known: Iterable[str], judge: TextModel | None):
        self.known = set(known)
        self.judge = judge
        self.seen: dict[str, str] = {}

    def __call__(self, name: str, detail: str) -> str:
        if name not in self.seen:
            self.seen[name] = relabel(name, sorted(self.known), detail, self.judge)
            self.known.add(self.seen[name])
        return self.seen[name]


def _program_steps(
    name: str,
    path: Path,
    stages_for: StagesFor,
    teachers: Teachers,
    report: BuildReport,
    judge: TextModel | None,
) -> list[VerifiedStep]:
    if not teachers.rules and teachers.model is None:
        return []
    if _past(teachers.deadline):
        report.problems.append(f"{name}: not tried: the build's time limit was reached")
        return []
    try:
        apply, verify, code = stages_for(path)
        if teachers.deadline is not None:
            apply = _until(teachers.deadline, apply, name, report.problems)
        steps = _taught_steps(name, code, apply, verify, teachers, report, judge)
    except ToolchainError:
        raise  # nvcc, gcc or the teacher missing: every other program would fail the same way
    except CudaifyError as exc:  # the program itself: does not parse, its reference fails
        report.problems.append(f"{path}: skipped: {exc}")
        return []
    log.info("%s: %d steps, %d verified", name, len(steps), sum(s.ok for s in steps))
    for step in (s for s in steps if not s.ok):
        log.info("%s: %s -> %s rejected: %s", name, step.source, step.target, step.why)
    return steps


def _past(deadline: float | None) -> bool:
    return deadline is not None and time.time() > deadline


def _until(deadline: float, apply: Apply, program: str, problems: list[str]) -> Apply:
    """`apply` until the deadline; after it no rule applies, so the walk ends with the
    steps it has verified (a step is never cut in half, and no failure is recorded)."""
    said = False

    def limited(variant: Variant, method: str) -> tuple[Variant | None, str]:
        nonlocal said
        if not _past(deadline):
            return apply(variant, method)
        if not said:
            problems.append(f"{program}: cut short: the build's time limit was reached")
            said = True
        return None, "the build's time limit was reached"

    return limited


def _taught_steps(
    name: str,
    code: str,
    apply: Apply,
    verify: Verify,
    teachers: Teachers,
    report: BuildReport,
    judge: TextModel | None,
) -> list[VerifiedStep]:
    steps: list[VerifiedStep] = []
    if teachers.rules:
        steps += rule_steps(
            name,
            Variant(code=code),
            teachers.methods,
            apply,
            verify,
            teachers.max_length,
            report.problems,
            teachers.max_steps,
            teachers.objective,
        )
        report.trajectories += rule_paths(name, code, steps)
    if teachers.model is not None:
        try:
            trajectory = teacher_trajectory(teachers.model, name, code, teachers.methods)
        except TrajectoryError as exc:
            report.problems.append(f"{name}: teacher: {exc}")
            return steps
        report.trajectories.append(trajectory)
        renamer = report.renamer(judge or teachers.model)
        taught = trajectory_steps(trajectory, verify, renamer, teachers.objective)
        report.taught_lengths.append(sum(s.ok for s in taught))
        steps += taught
    return steps


def _curated_steps(
    file: Path,
    programs: dict[str, Path],
    stages_for: StagesFor,
    report: BuildReport,
    judge: TextModel | None,
    objective: str = "program",
) -> list[VerifiedStep]:
    try:
        trajectory = load_trajectory(file)
    except TrajectoryError as exc:
        report.problems.append(str(exc))
        return []
    path = programs.get(trajectory.program)
    if path is None:
        report.problems.append(f"{file}: no program named '{trajectory.program}' in the corpus")
        return []
    try:
        _, verify, _ = stages_for(path)
    except Exception as exc:  # noqa: BLE001
        report.problems.append(f"{path}: skipped: {exc}")
        return []
    steps = trajectory_steps(trajectory, verify, report.renamer(judge), objective)
    report.taught_lengths.append(sum(s.ok for s in steps))
    return steps


# Set in worker processes of a parallel build: GPU runs of different programs never
# overlap (each would disturb the other's timing), while their nvcc compiles do.
_GPU_LOCK: Any = None


def _init_worker(lock: Any, level: int) -> None:
    global _GPU_LOCK
    _GPU_LOCK = lock
    logging.basicConfig(level=level, format="cudaify: %(message)s", force=True)


def gpu_turn() -> contextlib.AbstractContextManager[Any]:
    """What a step's GPU run holds: in a worker of a parallel build, the lock that keeps the
    runs of different programs apart; elsewhere, nothing."""
    return _GPU_LOCK if _GPU_LOCK is not None else contextlib.nullcontext()
