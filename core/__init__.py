"""The few objects every stage shares: a candidate program, the steps that made it, and
what verifying it found. Frozen data only; the stages return new objects."""

from __future__ import annotations

import enum
import functools
import hashlib
import re
from dataclasses import dataclass, field


class Stage(enum.IntEnum):
    """How far a candidate got. Ordered: a later stage implies every earlier one passed."""

    NONE = 0
    PARSE = 1
    STRUCTURE = 2
    COMPILE = 3
    RUN = 4
    CORRECT = 5

    @property
    def label(self) -> str:
        return self.name.lower()


# the kind of problem of a search candidate stopped once its run could no longer beat the
# CPU's (see backend/evaluate.py): slower for certain, its output never seen
TOO_SLOW = "too_slow"


class Unanswered(str):
    """Why a model edge has no child when there was no answer to judge: the time budget
    ran out before the model wrote it or before it was checked, or the model is switched
    off. The search does not count it as one of the model's answers (a failed answer
    lowers the value of the model's untried edges; this says nothing about them)."""


@dataclass(frozen=True)
class Problem:
    """One reason a candidate is not acceptable (structural, compile, run or output)."""

    kind: str
    message: str
    line: int | None = None

    def __str__(self) -> str:
        where = f"line {self.line}: " if self.line else ""
        return f"{self.kind}: {where}{self.message}"


@dataclass(frozen=True)
class Step:
    """One applied optimization method."""

    method: str
    applied_by: str  # "rule" | "slm"
    before_hash: str
    after_hash: str
    detail: str = ""
    think: str = ""
    diff_lines: int = 0

    def to_json(self) -> dict[str, object]:
        return {
            "method": self.method,
            "applied_by": self.applied_by,
            "before": self.before_hash,
            "after": self.after_hash,
            "detail": self.detail,
            "diff_lines": self.diff_lines,
        }


_BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_LINE_COMMENT = re.compile(r"//[^\n]*")
_SPACE = re.compile(r"\s+")


def normalised_hash(code: str) -> str:
    """Hash of the code with comments and white space folded: two variants that differ
    only in layout are one state for the search and one entry in every cache."""
    text = _LINE_COMMENT.sub("", _BLOCK_COMMENT.sub("", code))
    text = _SPACE.sub(" ", text).strip()
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def content_hash(*parts: str | bytes) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode() if isinstance(part, str) else part)
        digest.update(b"\0")
    return digest.hexdigest()


@dataclass(frozen=True)
class Variant:
    """A candidate CUDA program: its full source, how it was reached, where it stands in
    the reasoning graph. `offloaded` names the host functions whose work now runs on the
    GPU (the timing instrumentation wraps their call sites)."""

    code: str
    steps: tuple[Step, ...] = ()
    node: str = "sequential"
    offloaded: tuple[str, ...] = ()

    @functools.cached_property
    def key(self) -> str:
        # asked thousands of times per search (the search's states, caches and parents
        # are keyed by it); the code never changes (frozen), so it is hashed once
        return normalised_hash(self.code)

    @property
    def methods(self) -> tuple[str, ...]:
        return tuple(step.method for step in self.steps)

    def then(
        self,
        method: str,
        code: str,
        applied_by: str,
        detail: str = "",
        offloaded: tuple[str, ...] = (),
    ) -> Variant:
        """The variant after one more step."""
        before, after = self.key, normalised_hash(code)
        step = Step(
            method=method,
            applied_by=applied_by,
            before_hash=before,
            after_hash=after,
            detail=detail,
            diff_lines=_changed_lines(self.code, code),
        )
        merged = tuple(dict.fromkeys(self.offloaded + offloaded))
        return Variant(code=code, steps=self.steps + (step,), node=method, offloaded=merged)


def _changed_lines(before: str, after: str) -> int:
    import difflib

    diff = difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
    return sum(1 for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---"))


@dataclass(frozen=True)
class KernelRoofline:
    """One kernel function under the roofline. Measured: its launches and seconds (CUDA
    events, added over the region's launches). Counted from the text: the bytes it must
    move (each array element it reads, and each it writes, once) and its floating-point
    operations (an FMA counts 2), both per launch times the launches; `exact` is False
    where a count is an estimate (a trip count the text does not give, a gather, a
    branch). `roof` is the FLOP/s attainable at its intensity, min(peak, bandwidth x
    intensity), with the peak of its `precision`; a kernel without floating-point
    arithmetic is placed against the bandwidth alone (`roof` is then bytes/s).
    `percent` is achieved over roof; `bound` says which roof applies."""

    name: str
    launches: int
    seconds: float
    bytes: float | None = None
    flops: float | None = None
    precision: str | None = None  # "fp32", "fp64"; None: no floating-point arithmetic
    exact: bool = False
    bytes_per_second: float | None = None
    flops_per_second: float | None = None
    intensity: float | None = None  # FLOPs per byte
    roof: float | None = None
    percent: float | None = None
    bound: str | None = None  # "memory" or "compute"


@dataclass(frozen=True)
class LaunchValues:
    """What launches of one kernel passed, as the event-timed run recorded them (see
    backend/runtime/kernel_timing.h): `count` launches with this block shape and these
    parameters. `values`: each parameter's raw bits (zero-extended; None where the run
    did not read it: a parameter over 8 bytes); `extents`: for a parameter holding a
    device pointer, the bytes from it to its allocation's end, else None."""

    kernel: str
    count: int
    block: tuple[int, int, int]
    values: tuple[int | None, ...]
    extents: tuple[int | None, ...]

    def __post_init__(self) -> None:
        # read back from JSON: lists as tuples again
        object.__setattr__(self, "block", tuple(int(b) for b in self.block))
        object.__setattr__(self, "values", tuple(self.values))
        object.__setattr__(self, "extents", tuple(self.extents))


@dataclass(frozen=True)
class Timing:
    """Medians in seconds; None where not measured. `kernel` and `transfer` are the time
    the region spent in kernels and in cudaMemcpy*, `transfer_bytes` what those copies
    moved, `roofline_percent` how close the kernels come to their roofs: the mean of the
    per-kernel percentages weighted by kernel time where `kernels` has them (`bound`:
    the roof of the kernel that took the most time), else the bytes the region's copies
    moved per kernel second as a percentage of the GPU's measured copy bandwidth (a
    lower bound). `kernel_times`: (name, launches, seconds) per kernel function, as the
    event-timed run reported them."""

    wall: float | None = None
    region: float | None = None
    context: float | None = None
    kernel: float | None = None
    transfer: float | None = None
    runs: int = 0
    transfer_bytes: float | None = None
    roofline_percent: float | None = None
    profiled_region: float | None = None  # the region of the one run kernel/transfer come from
    # the processes that shared the GPU while this was timed (make -j, bench -j): over 1,
    # the wall time holds other programs' GPU work, not what the user will see alone
    shared_by: int = 1
    # CUDA's start on this GPU when it had it alone (the least measured so; None: unknown)
    context_alone: float | None = None
    # the whole fixed cost of a CUDA program on this GPU alone: the least wall of one that
    # only starts CUDA and exits (its start, context and teardown; None: unknown)
    start_alone: float | None = None
    # the region timed alone by the harness (region_timing), in this many steady calls
    # at the program's sizes; 0: timed in the program's own runs
    harness_calls: int = 0
    kernel_times: tuple[tuple[str, int, float], ...] = ()
    kernels: tuple[KernelRoofline, ...] = ()
    bound: str | None = None
    # the values the kernels' launches passed, in the same run (at most 256 sets a kernel)
    launches: tuple[LaunchValues, ...] = ()

    def __post_init__(self) -> None:
        # read back from JSON (a cached reference's timing): lists and dicts again as tuples
        # and KernelRoofline, so that equal timings compare equal
        times = tuple((str(n), int(c), float(s)) for n, c, s in self.kernel_times)
        kernels = tuple(
            k if isinstance(k, KernelRoofline) else KernelRoofline(**k) for k in self.kernels
        )
        object.__setattr__(self, "kernel_times", times)
        object.__setattr__(self, "kernels", kernels)
        launches = tuple(
            v if isinstance(v, LaunchValues) else LaunchValues(**v) for v in self.launches
        )
        object.__setattr__(self, "launches", launches)


@dataclass(frozen=True)
class Evaluation:
    """What verifying a variant found: the furthest stage reached and why it stopped."""

    stage: Stage
    problems: tuple[Problem, ...] = ()
    ran_on_gpu: bool = False
    timing: Timing = field(default_factory=Timing)
    reference: Timing = field(default_factory=Timing)
    compile_seconds: float = 0.0
    run_seconds: float = 0.0
    hardware: tuple[tuple[str, float], ...] = ()
    # The output differed from the reference's by rounding only: the same text and
    # integers, every number within compare.ROUNDING_RTOL (FMA, summation order).
    rounding_only: bool = False
    # The output differed by more than rounding, but the kernels compare float or double
    # values, so rounding (FMA) may have decided a branch: an argmin's index, a count.
    rounding_may_decide: bool = False
    # (rtol, atol) the verified output matched the reference's at; (0, 0): every number equal
    tolerance: tuple[float, float] | None = None

    @property
    def verified(self) -> bool:
        return self.stage >= Stage.CORRECT

    @property
    def rounding_suspect(self) -> bool:
        """Whether kernels that round like the CPU may give the reference's output."""
        return self.rounding_only or self.rounding_may_decide

    @property
    def region_speedup(self) -> float | None:
        return _ratio(self.reference.region, self.timing.region)

    @property
    def program_speedup(self) -> float | None:
        """The whole program's speedup. Timed while other processes shared the GPU (make
        -j), the measured wall time holds their GPU work too (16 programs at once made
        verified 2x-8x variants read as slower than the CPU), so it is estimated from
        parts instead: the code outside the region is the reference's, so its time is the
        reference's outside the region; the region is this one's as measured (shared, so
        an overestimate); CUDA's start the least this GPU took alone (else as measured).
        Never above what was measured."""
        timing, reference = self.timing, self.reference
        if not self.program_speedup_estimated:
            return _ratio(reference.wall, timing.wall)
        estimate = self.program_from_parts
        assert estimate is not None
        if timing.wall is not None:
            estimate = min(estimate, timing.wall)
        return _ratio(reference.wall, estimate)

    @property
    def program_from_parts(self) -> float | None:
        """The whole program's time from its parts: the reference's time outside the region
        (the code there is the input's), this variant's region, and CUDA's fixed cost: the
        larger of a program's that only starts CUDA and exits on this GPU alone (its start,
        context and teardown) and the context as this GPU took it alone, else the context as
        measured. None where a part was not measured."""
        timing, reference = self.timing, self.reference
        if reference.wall is None or reference.region is None or timing.region is None:
            return None
        alone = [t for t in (timing.start_alone, timing.context_alone) if t is not None]
        # the larger of the two: on an H200 the probe read 0.30 s and the context alone
        # 0.10 s, but a fresh machine's first runs once read a context above the probe's
        fixed = max(alone) if alone else timing.context
        return max(0.0, reference.wall - reference.region) + timing.region + (fixed or 0.0)

    @property
    def program_speedup_estimated(self) -> bool:
        """Whether `program_speedup` was estimated from parts (a shared GPU)."""
        return self.timing.shared_by > 1 and self.program_from_parts is not None

    @property
    def why(self) -> str:
        return str(self.problems[0]) if self.problems else ""


def objective_speedup(evaluation: Evaluation, objective: str = "program") -> float | None:
    """The speedup a variant is judged by: the whole program's (`program`, what the user
    runs: CUDA's start and every copy count), or the offloaded region's (`region`). Each
    falls back to the other where only that one was measured."""
    if objective == "region":
        return evaluation.region_speedup or evaluation.program_speedup
    return evaluation.program_speedup or evaluation.region_speedup


def _ratio(reference: float | None, candidate: float | None) -> float | None:
    if not reference or not candidate:
        return None
    return reference / candidate
