"""Verifying a candidate: compile it, run it, compare its output with the reference's,
time it. The furthest stage reached and every reason it stopped go into an Evaluation; a
failing candidate never raises.

Without a GPU the candidate is compiled and nothing more: the Evaluation says so plainly.
With one, a timing build (see timing.py) is compiled when the variant names offloaded
functions; its first run is the correctness check (output and exit code against the
reference's). What follows depends on who asks:

- `evaluate` (cudaify check, graph building): `runs` timed runs, one kernel-timing run,
  the profile when asked: 2 + runs program runs per verified candidate.
- `screen` (a search candidate): the correctness run is also the timing sample: 1 run
  (`search_runs` > 1 adds runs). The search ranks on it.
- `remeasure` (a search's finalists): a second correctness run, which is also the first of
  the timed runs (`runs`, one for a program that runs a second or more); `detail` adds
  the kernel-timing run and the profile to the one written out.

The reference (the input built with gcc -O3) is run once per input: its output, exit code
and time are cached on disk by the hash of its build (the input, its headers, the flags,
the compiler), and so is its region timing, so a second cudaify of the same input runs it
no more. That first run is of the timing build of every function with a loop, so it is
also the first timed sample of the region most candidates time.

Time: with a `Deadline`, every compile and run gets a time limit no later than it and a
wait for the GPU gives up at it; work the deadline cut short raises `OutOfTime` inside and
is an Evaluation with a `time_budget` problem outside, never a candidate's failure. With
`prefetch`, candidates are compiled on other cores (`compile_jobs` at once) while this
thread verifies others. A `Breakdown` gets the seconds this thread spent compiling,
running, waiting for the GPU and on the reference."""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import math
import os
import re
import statistics
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent import futures
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from cudaify.backend import gpu, roofline
from cudaify.backend.bandwidth import (
    copy_bandwidth,
    peak_flops,
    prepare_bandwidth,
    roofline_percent,
)
from cudaify.backend.budget import UNLIMITED, Breakdown, Deadline, OutOfTime
from cudaify.backend.cache import Cache
from cudaify.backend.compare import (
    ROUNDING_RTOL,
    compare,
    compare_exit,
    matched_tolerance,
    rounding_only,
)
from cudaify.backend.compile import (
    COMPILE_TIMEOUT,
    COMPILER_CRASH,
    Build,
    compile_cuda,
    compile_reference,
    nvcc_base,
    prepare_objects,
    tool_version,
)
from cudaify.backend.cost import kernel_work
from cudaify.backend.differential import differential_test
from cudaify.backend.gpulock import GpuLock, gpu_lock
from cudaify.backend.kernel_differential import kernel_differential_test
from cudaify.backend.profile import hardware_counters
from cudaify.backend.region_timing import Harness, RegionTime, prepare, time_region
from cudaify.backend.runner import RunResult, in_turns, run_binary, time_limit
from cudaify.backend.timing import (
    CUDA_LINK_FLAGS,
    MAX_PER_FUNCTION,
    InstrumentError,
    Sample,
    find_definitions,
    instrument,
    measure,
    runs_for,
    runtime_units,
    subset_time,
    summarise,
    timed_run,
    timed_runs,
    with_kernel_times,
)
from cudaify.core import (
    TOO_SLOW,
    Evaluation,
    Problem,
    Stage,
    Timing,
    Variant,
    content_hash,
    objective_speedup,
)
from cudaify.core.config import Config
from cudaify.core.errors import InputError, SourceError
from cudaify.frontend.facts import Program
from cudaify.transforms.fp_exact import compares_floats

log = logging.getLogger("cudaify")
# the harness's reading of a region is used when within this factor of the program's
REGION_AGREES = 2.0
HARNESS_TIMEOUT = 30.0
HARNESS_RUN = 1.0  # seconds: the harness's process (Python, pycuda, CUDA's start, calls)
# A finalist's harness library built ahead is waited for, at most this long: a region the
# program calls once reads its one-time costs (the first allocations and copies: 10-21 ms
# on an H200 around a 1-2.6 ms steady call of a 900^3 product, varying +-30% between runs
# of one binary), which decided between a plain kernel and a tiled one at random; the
# harness reads the steady call
HARNESS_WAIT = 20.0
NOTHING_RAN = (
    "no NVIDIA GPU found: the candidate was compiled but nothing was run; its output is unverified"
)
# said of an output whose only mismatch is rounding (Evaluation.rounding_only)
ROUNDING_NOTE = f"every number is within rtol {ROUNDING_RTOL:g}: rounding only"
# said of one whose kernels compare floating values (Evaluation.rounding_may_decide)
ROUNDING_BRANCH_NOTE = "the kernels compare float or double values: rounding may decide a branch"
REFERENCE_TIMEOUT = 300.0
# A program that only starts CUDA and exits: the least wall of START_RUNS runs of it, the
# GPU held alone, is the fixed cost every offloaded program pays on this GPU (CUDA's
# start, the context, the teardown at exit), which a whole-program time estimated from
# parts must hold (Timing.start_alone). The parts held only the context: on an H200 under
# bench -j 4, nine of ten winners the finalists could not time again read 1.3-2.6 times
# their speed timed alone later (syrk 3.23x by its parts, 1.24x alone: the parts said
# 0.16 s for a program that ran 0.43 s; the tenth, heat1d, 0.36 times).
START_PROBE = """#include <cuda_runtime.h>
int main(void) { return cudaFree(0) == cudaSuccess ? 0 : 1; }
"""
START_RUNS = 3
START_TIMEOUT = 10.0
# data_residency's runtime: where deferred transfers happen (see Evaluator._sync_points)
RESIDENCY_SYNC = (
    "cudaify_scope_begin",
    "cudaify_scope_end",
    "cudaify_host_reads",
    "cudaify_host_writes",
    "cudaify_host_writes_at",
    "cudaify_host_reads_at",
)  # the input's own run, when no --run-timeout is configured
_ERROR_LINE = re.compile(r"^[^\s:()]+(?::(\d+):\d+:|\((\d+)\)):? (?:fatal )?error", re.M)


@dataclass(frozen=True)
class ReferenceResult:
    """The input compiled with gcc/g++ -O3 and run once."""

    stdout: str
    exit_code: int
    seconds: float
    cached: bool = False


class Evaluator:
    """Verifies variants of one program. Thread-safe; compiles in parallel. Search
    candidates' correctness runs share the GPU with other processes' (bench -j N); every
    timing that gets reported has it alone (see gpulock), since timings taken side by side
    on one GPU would disturb each other."""

    def __init__(
        self,
        program: Program,
        config: Config,
        cache: Cache | None = None,
        run_on_gpu: bool | None = None,
        differential: bool = False,
        profile: bool = False,
        deadline: Deadline | None = None,
        breakdown: Breakdown | None = None,
    ):
        self.program = program
        self.config = config
        self.cache = cache or Cache.for_config(config)
        self.run_on_gpu = gpu.gpu_available() if run_on_gpu is None else run_on_gpu
        # Off by default: a host function that relies on state set up elsewhere (device
        # buffers kept across calls, globals filled by main) cannot be called alone.
        self.differential = differential
        self.profile = profile  # ncu counters for verified candidates (slow: replays)
        self.arch = gpu.default_arch(config.arch)
        self.flags = tuple(program.flags) or tuple(config.flags)
        self.source_dir = Path(program.path).resolve().parent if program.path else None
        self._reference: ReferenceResult | None = None
        self._reference_lock = threading.Lock()
        # the reference run started by start_ahead, on a thread of its own
        self._reference_ahead: Future[ReferenceResult] | None = None
        self._reference_timings: dict[tuple[str, ...], Timing] = {}
        self._reference_measured: dict[tuple[str, ...], _ReferenceSamples | None] = {}
        self._lock = threading.RLock()
        # This GPU's lock across threads and processes (bench -j N): `with self.gpu:` for
        # reported timings, `with self.gpu.shared():` for correctness runs and for local
        # models generating (see gpulock).
        self.gpu: GpuLock = gpu_lock(self.cache.root)
        self.deadline = deadline or UNLIMITED
        self.breakdown = breakdown or Breakdown()
        # the region most candidates time: every function with a loop nest but main
        self.region = tuple(f.name for f in program.functions if f.loops and f.name != "main")
        self._first_samples: dict[tuple[str, ...], Sample] = {}  # the reference run's
        # candidates compiled ahead (prefetch): (code hash, timed) -> its build
        self._pending: dict[_PendingKey, Future[Build | None]] = {}
        self._pool: ThreadPoolExecutor | None = None
        self._pool_size = 0
        self._cancel = threading.Event()  # set by close(): compiles under way stop
        # candidates screened ahead (see prefetch): variant key -> its screening
        self._screened: dict[str, tuple[_PendingKey, Future[Evaluation | None]]] = {}
        self._screen_pool: ThreadPoolExecutor | None = None
        # finalists' harness libraries being built (see prefetch_harness): variant key ->
        self._harness_builds: dict[str, Future[Harness | str]] = {}
        self._plain_builds: dict[str, Future[Build]] = {}  # see prefetch_plain
        self._start_tried = False  # see _measure_start
        # see keeping_gpu: the thread that keeps its exclusive hold, and whether it has one
        self._keeper: int | None = None
        self._kept = False
        # the shortest whole-program run of a verified candidate so far (see hopeless_after)
        self._fastest_wall = float("inf")

    # -- time ----------------------------------------------------------------------

    def _limit(self, seconds: float) -> float:
        """A subprocess's time limit, cut to the deadline (OutOfTime when it has passed)."""
        return self.deadline.clamp(seconds)

    def _cut_short(self) -> None:
        """After a failure: when the deadline has passed, it is why (OutOfTime)."""
        self.deadline.check()

    @contextlib.contextmanager
    def _hold(self, exclusive: bool, kind: str = "run") -> Iterator[None]:
        """Use of the GPU (exclusive for a reported timing, shared for a screening run),
        the wait counted as `wait` and given up at the deadline, the hold as `kind`. Within
        `keeping_gpu`, the first exclusive hold lasts until it ends."""
        keeping = exclusive and self._keeper == threading.get_ident()
        self.deadline.check()
        if not (keeping and self._kept):
            with self.breakdown.measure("wait"):
                try:
                    self.gpu.acquire(exclusive, timeout=self.deadline.remaining())
                except TimeoutError as error:
                    raise OutOfTime(self.deadline.message()) from error
        try:
            with self.breakdown.measure(kind):
                yield
        finally:
            if keeping:
                self._kept = True  # released when keeping_gpu ends
            else:
                self.gpu.release()

    @contextlib.contextmanager
    def keeping_gpu(self) -> Iterator[None]:
        """While it lasts (the finalists' timings, the winner's kernel timing, a close
        call's turns), the GPU is taken alone once, at the first timing that needs it, and
        kept until the end: each hold waits for the holds asked before it, and under
        `bench -j 4` the end of a compile took five of them, each behind the other
        compiles' (their finalists waited 1-15 s in all, and 13 of 30 compiles left a
        finalist untimed). Only this thread's holds are kept."""
        if self._keeper is not None:  # nested: the outer one keeps it
            yield
            return
        self._keeper, self._kept = threading.get_ident(), False
        try:
            yield
        finally:
            held, self._keeper, self._kept = self._kept, None, False
            if held:
                self.gpu.release()

    # -- the reference -------------------------------------------------------------

    def reference(self) -> ReferenceResult:
        """Compile and run the input once (cached on disk by content hash). Raises
        SourceError when gcc rejects the input, InputError when it does not finish, and
        OutOfTime when the deadline cut it short."""
        if self._reference is not None:  # no lock: a shared GPU holder may ask
            return self._reference
        with self._reference_lock:
            if self._reference is None:
                began = time.perf_counter()
                with self.breakdown.measure("reference"):
                    self._reference = self._started_reference() or self._load_or_run_reference()
                log.debug("the reference: built and run, %.2f s", time.perf_counter() - began)
                # the other one-off cost, once per GPU: what an estimate from parts adds
                self._measure_start()
            return self._reference

    def _started_reference(self) -> ReferenceResult | None:
        """The reference start_ahead began, waited for; its failure raised, unless close()
        stopped it (None: run it now)."""
        ahead, self._reference_ahead = self._reference_ahead, None
        if ahead is None:
            return None
        try:
            return ahead.result()
        except (InputError, OutOfTime):
            if self._cancel.is_set() and not self.deadline.expired:
                return None  # killed by close(), not by the program or the deadline
            raise

    def _load_or_run_reference(
        self, cancel: threading.Event | None = None, source: _Source | None = None
    ) -> ReferenceResult:
        """The run is of the region's timing build where the input can be instrumented
        (its output is the program's own): that run is also the region's first sample.
        Setting `cancel` kills the run; `source`: see _reference_build."""
        build, names = self._reference_build(self.region, source)
        key = content_hash("reference-run", str(build.binary), self._depends())
        stored = self.cache.read_json("reference-runs", key)
        if stored is not None:
            return ReferenceResult(stored["stdout"], stored["exit_code"], stored["seconds"], True)
        limit = self._limit(self.config.run_timeout or REFERENCE_TIMEOUT)
        # a CPU program: it needs no GPU, and waiting behind other programs' GPU timings
        # (bench -j N, make -j) would spend the time budget before any candidate
        sample = timed_run(build.binary, timeout=limit, cuda=False, cancel=cancel)  # type: ignore[arg-type]
        run = sample.run
        problem = run.problem(limit)
        if problem is not None or run.exit_code is None:
            self._cut_short()
            raise InputError(f"{self.program.path}: the input program itself failed: {problem}")
        if names:
            self._first_samples[names] = sample
        result = ReferenceResult(run.stdout, run.exit_code, run.seconds)
        self.cache.write_json(
            "reference-runs",
            key,
            {"stdout": run.stdout, "exit_code": run.exit_code, "seconds": run.seconds},
        )
        return result

    def _reference_build(
        self, offloaded: tuple[str, ...], source: _Source | None = None
    ) -> tuple[Build, tuple[str, ...]]:
        """The reference's timing build of `offloaded` (and those names), or its plain
        build (and no names) when they cannot be instrumented. `source`: what
        `_reference_source` made of them already."""
        code, names = source if source is not None else self._reference_source(offloaded)
        if code is not None:
            try:
                return self._compile_reference(code, timed=True), names
            except SourceError:
                self._cut_short()  # a build the deadline stopped is no reason to give up
        return self._compile_reference(), ()

    def _reference_source(self, offloaded: tuple[str, ...]) -> _Source:
        """The timing build's source of `offloaded` and their names; (None, ()) when they
        cannot be instrumented. Made on the caller's thread (tree-sitter's parser is
        shared), so the build and run can go to another."""
        if offloaded:
            try:
                language = self.program.language
                apart = len(offloaded) <= MAX_PER_FUNCTION  # else only their union is timed
                return instrument(self.program.source, language, offloaded, apart).code, offloaded
            except InstrumentError:
                self._cut_short()
        return None, ()

    def _compile_reference(self, code: str | None = None, timed: bool = False) -> Build:
        build = compile_reference(
            self.program.source if code is None else code,
            self.program.language,
            self.flags,
            cache=self.cache,
            name=Path(self.program.path).name or None,
            source_dir=self.source_dir,
            extra_units=runtime_units(cuda=False) if timed else (),
            depends=self._depends(),
            timeout=self._limit(COMPILE_TIMEOUT),
        )
        if not build.ok:
            self._cut_short()
            raise SourceError(build.diagnostics.splitlines() or ["the input does not compile"])
        return build

    def _depends(self) -> str:
        """The headers the input includes, by path, size and time: editing one of them
        invalidates every cached build of this program."""
        stamps = []
        for header in self.program.includes:
            try:
                info = os.stat(header)
            except OSError:
                continue
            stamps.append(f"{header}:{info.st_size}:{info.st_mtime_ns}")
        return "\n".join(stamps)

    def cpu_profile(self, offloaded: tuple[str, ...]) -> Timing:
        """Without a GPU: the CPU reference's time in the `offloaded` functions, and its
        whole wall time, from its per-function timing runs (once per input, cached), so
        that a search can prefer the candidate that moves the hottest code. Empty when the
        input cannot be profiled (it fails, or the budget is spent): the GPU path reports
        such failures, and a compile without a GPU never needed the reference."""
        if not offloaded:
            return Timing()
        try:
            return self.reference_timing(offloaded)
        except (InputError, SourceError, OutOfTime):
            return Timing()

    def reference_timing(self, offloaded: tuple[str, ...]) -> Timing:
        """Medians of the reference's wall and region time, region = the `offloaded`
        functions (wall only when they cannot be instrumented)."""
        with self._lock:
            if offloaded not in self._reference_timings:
                with self.breakdown.measure("reference"):
                    self._reference_timings[offloaded] = self._time_reference(offloaded)
            return self._reference_timings[offloaded]

    def _time_reference(self, offloaded: tuple[str, ...]) -> Timing:
        """A subset of the region is timed by the region's own runs (its timing build
        times each function apart: see timing.subset_time); anything else by its own
        timing build."""
        if offloaded != self.region and offloaded and set(offloaded) <= set(self.region):
            region = self._reference_samples(self.region)
            if region is not None and region.per_function:
                return region.restricted([self.region.index(name) for name in offloaded])
        measured = self._reference_samples(offloaded)
        return measured.timing if measured is not None else Timing()

    def _reference_samples(self, offloaded: tuple[str, ...]) -> _ReferenceSamples | None:
        """The reference's timed runs of the timing build of `offloaded`, once per input:
        cached on disk by the build's hash (within a `timing_session`, per session:
        `cudaify bench` gives each run its own). `runs` runs of a short program, fewer of
        a longer one, one from a second (see runs_for); the reference run counts as the
        first when it was of this build. None when a run failed."""
        if offloaded in self._reference_measured:
            return self._reference_measured[offloaded]
        build, names = self._reference_build(offloaded)
        reference = self.reference()
        limit = time_limit(reference.seconds, self.config.run_timeout)
        runs = runs_for(reference.seconds, self.config.runs)
        session = self.config.timing_session or ""
        key = content_hash("reference-samples", session, str(build.binary), str(runs))
        stored = self.cache.read_json("reference-timings", key)
        if stored is not None:
            measured = _ReferenceSamples.from_json(stored)
        else:
            first = self._first_samples.get(names) if names else None
            # the CPU reference needs no GPU (see _load_or_run_reference)
            samples, failed = timed_runs(
                build.binary,  # type: ignore[arg-type]
                runs=runs,
                timeout=self._limit(limit),
                cuda=False,
                warm_up=first is None and runs > 1,
                first=first,
            )
            if failed is not None:
                self._cut_short()
                return None  # not cached: nothing was measured
            measured = _ReferenceSamples.of(samples, per_function=bool(names))
            self.cache.write_json("reference-timings", key, measured.to_json())
        self._reference_measured[offloaded] = measured
        return measured

    # -- candidates ---------------------------------------------------------------

    def compile(self, variant: Variant) -> tuple[Build, tuple[str, ...], float]:
        """(build, the functions its timing wraps (none: a plain build), compile seconds).
        Offloaded functions the candidate no longer defines are left out of the region.
        A build `prefetch` started is waited for, not started again."""
        with self.breakdown.measure("compile"):
            return self._compile_variant(variant)

    def _compile_variant(self, variant: Variant) -> tuple[Build, tuple[str, ...], float]:
        seconds = 0.0
        code, names = self._first_source(variant)
        if names:
            build = self._build(code, timed=True)
            seconds += build.seconds
            if build.ok:
                return build, names, seconds
        # The plain build: no timing, and the diagnostics a failing candidate deserves.
        build = self._build(variant.code, timed=False)
        if not build.ok:
            self._cut_short()
        return build, (), seconds + build.seconds

    def _first_source(self, variant: Variant) -> tuple[str, tuple[str, ...]]:
        """What to compile first: the timing build (and the names it times) on a GPU
        when the offloaded functions can be wrapped, else the plain source."""
        names = self._timable(variant) if self.run_on_gpu else ()
        if not names:
            return variant.code, ()
        wrapped = names + self._sync_points(variant, names)
        return instrument(variant.code, "cuda", wrapped).code, names

    def start_ahead(self) -> None:
        """On a GPU, start building what the first candidates and the final timing need
        and a cold cache lacks, on other cores while the analysis and the reference run:
        the timing runtime's objects (every candidate's build links them) and the
        bandwidth probe (the roofline of the written variant)."""
        if not self.run_on_gpu:
            return
        self._start_reference()
        prepare_objects(runtime_units(cuda=True), nvcc_base(self.arch), "nvcc", self.cache)
        prepare_bandwidth(self.cache, self.arch)

    def _start_reference(self) -> None:
        """Build and run the reference on a thread of its own, while the search applies
        its first rules (a second or two of Python before its first candidate needs the
        reference's output). A program with no loop outside main offers no candidates:
        nothing is started for it. The thread is a daemon: a command that ends before it
        does (the search found nothing to build) does not wait for it."""
        if not self.region or self._reference is not None or self._reference_ahead is not None:
            return
        future: Future[ReferenceResult] = Future()
        source = self._reference_source(self.region)

        def run() -> None:
            with self.breakdown.quiet():  # the search counts its wait when it takes it
                try:
                    future.set_result(self._load_or_run_reference(self._cancel, source))
                except BaseException as error:  # noqa: BLE001 - handed to the caller
                    future.set_exception(error)

        self._reference_ahead = future
        threading.Thread(target=run, name="reference", daemon=True).start()

    def prefetch(self, variants: Sequence[Variant]) -> None:
        """Start compiling `variants` on other cores (at most `compile_jobs` at once)
        while this thread goes on; `compile` then waits for the build instead of
        starting it. Sources are instrumented here (tree-sitter stays in this thread).
        On a GPU, each build is then also screened ahead (see `_screen_ahead`)."""
        jobs = compile_jobs(self.config)
        if jobs <= 1 or self._cancel.is_set():
            return
        if self._pool is None or self._pool_size != jobs:
            if self._pool is not None:  # the machine's load changed: as many as fit now
                self._pool.shutdown(wait=False)  # its builds under way go on
            self._pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="nvcc")
            self._pool_size = jobs
        for variant in variants:
            code, names = self._first_source(variant)
            key = (content_hash(code), bool(names))
            with self._lock:
                build = self._pending.get(key)
                if build is None:
                    build = self._pending[key] = self._pool.submit(
                        self._compile_ahead, code, bool(names)
                    )
                if self._screens_ahead(reference=True) and variant.key not in self._screened:
                    if self._screen_pool is None:
                        self._screen_pool = ThreadPoolExecutor(
                            max_workers=SCREEN_AHEAD_JOBS, thread_name_prefix="screen"
                        )
                    screening = self._screen_pool.submit(self._screen_ahead, variant, build, names)
                    self._screened[variant.key] = (key, screening)

    def _compile_ahead(self, code: str, timed: bool) -> Build | None:
        """A build ahead, when it starts: None (the search builds it itself when it gets
        there) if the cores have filled up since it was asked for."""
        if self._cancel.is_set() or (self.config.compile_jobs <= 0 and idle_cores() < 1):
            return None
        return self._compile_candidate(code, timed, self._cancel)

    def _screens_ahead(self, reference: bool = False) -> bool:
        """Screening ahead needs a GPU, and the search's screening runs (not full
        evaluations), without the differential test (its analysis is not thread-safe).
        With `reference`, the reference is run first, here (where it is counted): every
        screening needs it. Its failures are left to the search to report."""
        if not (
            self.run_on_gpu
            and not self.differential
            and self.config.search_runs < self.config.runs
            and not self._cancel.is_set()
        ):
            return False
        if reference and self._reference is None:
            try:
                self.reference()
            except Exception:  # noqa: BLE001 - the search runs it again and says why
                return False
        return True

    def _screen_ahead(
        self, variant: Variant, build: Future[Build | None], names: tuple[str, ...]
    ) -> Evaluation | None:
        """A prefetched candidate's screening, on a thread of its own: its correctness
        run shares the GPU with the search's (a program's run is mostly host time: CUDA's
        start, its own host code), so the search finds it done when it gets there.
        Unlike the search's own compile, a failed timing build is not followed by the
        plain one: None, and the search evaluates it itself."""
        if self._cancel.is_set():
            return None
        built = build.result()
        if built is None or not built.ok or self._cancel.is_set():
            return None
        with self.breakdown.quiet():  # the search counts its wait for the result
            return self._within_deadline(
                variant, screening=True, built=(built, names, built.seconds), cancel=self._cancel
            )

    def _screened_ahead(self, variant: Variant) -> Evaluation | None:
        """The screening `_screen_ahead` did of `variant`, waited for (its build counted
        as compile, its run as run), when it can stand: a verified candidate, or one
        stopped as too slow. Anything else (a failed run could come from sharing the GPU:
        its memory, its time) is screened again by the caller."""
        with self._lock:
            key, future = self._screened.pop(variant.key, (None, None))
            build = self._pending.get(key) if key is not None else None
        if key is None or build is None or future is None or future.cancelled():
            return None
        with self.breakdown.measure("compile"), contextlib.suppress(Exception):
            build.result()
        with self.breakdown.measure("run"):
            try:
                evaluation = future.result()
            except Exception:  # noqa: BLE001 - screened again by the caller, which says why
                return None
        if evaluation is None:
            return None
        if evaluation.verified or any(p.kind == TOO_SLOW for p in evaluation.problems):
            with self._lock:
                self._pending.pop(key, None)  # as `compile` would have
            return evaluation
        return None

    def _build(self, code: str, timed: bool) -> Build:
        with self._lock:
            pending = self._pending.pop((content_hash(code), timed), None)
        ahead = _built_ahead(pending)
        return ahead if ahead is not None else self._compile_candidate(code, timed)

    def close(self) -> None:
        """Stop the compiles started ahead: the queued ones never start, the running
        ones are killed (their builds are not cached). The evaluator compiles no more
        ahead afterwards."""
        self._cancel.set()
        with self._lock:
            self._pending.clear()
            self._screened.clear()
        for pool in (self._pool, self._screen_pool):
            if pool is not None:
                pool.shutdown(wait=False, cancel_futures=True)

    @staticmethod
    def _timable(variant: Variant) -> tuple[str, ...]:
        try:
            found = find_definitions(variant.code.encode(), "cuda", variant.offloaded)
            names = tuple(n for n in variant.offloaded if n in {d.name for d in found})
            instrument(variant.code, "cuda", names)  # raises when one cannot be wrapped
        except InstrumentError:
            return ()
        return names

    @staticmethod
    def _sync_points(variant: Variant, names: tuple[str, ...]) -> tuple[str, ...]:
        """Runtime functions that move data for the offloaded functions outside them: a
        residency scope's end copies results back in the caller, a host barrier copies
        before host code reads. Their time belongs to the region (the reference has no
        such cost), so the candidate's timing build wraps them too."""
        try:
            found = find_definitions(variant.code.encode(), "cuda", RESIDENCY_SYNC)
            extras = tuple(n for n in RESIDENCY_SYNC if n in {d.name for d in found})
            instrument(variant.code, "cuda", names + extras)
        except InstrumentError:
            return ()
        return extras

    def _compile_candidate(
        self, code: str, timed: bool, cancel: threading.Event | None = None
    ) -> Build:
        return compile_cuda(
            code,
            self.flags,
            self.arch,
            cache=self.cache,
            source_dir=self.source_dir,
            extra_units=runtime_units(cuda=True) if timed else (),
            link_flags=CUDA_LINK_FLAGS if timed else (),
            depends=self._depends(),
            timeout=self._limit(COMPILE_TIMEOUT),
            cancel=cancel,
        )

    def evaluate(self, variant: Variant) -> Evaluation:
        """Verify and time in full: the correctness run, then `runs` timed runs, one
        kernel-timing run and (with `profile`) the hardware counters. What `cudaify check`
        reports and what a search's finalists get (see `remeasure`)."""
        return self._within_deadline(variant, screening=False)

    def screen(self, variant: Variant) -> Evaluation:
        """Verify a search candidate as cheaply as the checks allow: the same compile and
        the same correctness run (output and exit code against the reference's) as
        `evaluate`, but that run is also the timing sample (`search_runs` > 1 adds runs);
        no kernel timing, no profile. `remeasure` times a verified one in full later."""
        if self.config.search_runs >= self.config.runs:
            return self.evaluate(variant)
        ahead = self._screened_ahead(variant)
        if ahead is not None:
            return ahead
        return self._within_deadline(variant, screening=True)

    def _within_deadline(
        self,
        variant: Variant,
        screening: bool,
        built: _Built | None = None,
        cancel: threading.Event | None = None,
    ) -> Evaluation:
        began = time.perf_counter()
        try:
            evaluation = self._evaluate(variant, screening, built, cancel)
        except OutOfTime as spent:
            evaluation = out_of_time(str(spent))
        log.debug(
            "%s %s: %s, %.2f s (build %.2f s)",
            "screened" + (" ahead" if built is not None else "") if screening else "evaluated",
            " -> ".join(variant.methods) or "the input",
            "verified" if evaluation.verified else evaluation.stage.name.lower(),
            time.perf_counter() - began,
            evaluation.compile_seconds or 0.0,
        )
        return evaluation

    def _evaluate(
        self,
        variant: Variant,
        screening: bool,
        built: _Built | None = None,
        cancel: threading.Event | None = None,
    ) -> Evaluation:
        """`built`: the build `compile` would make, made already; `cancel` stops the run."""
        build, timed, compile_seconds = built or self.compile(variant)
        if not build.ok:
            return Evaluation(
                stage=Stage.STRUCTURE,
                problems=(compile_problem(build.diagnostics),),
                compile_seconds=compile_seconds,
            )
        if not self.run_on_gpu:
            return Evaluation(
                stage=Stage.COMPILE,
                problems=(Problem("not_run", NOTHING_RAN),),
                ran_on_gpu=False,
                compile_seconds=compile_seconds,
                reference=self.cpu_profile(variant.offloaded),
            )
        # Ran before the hold: running the reference needs the GPU alone.
        reference = self.reference()
        # the processes sharing the GPU with a screening run (a reported timing has it alone)
        users = self.gpu.users() if screening else 1
        # A candidate's screening run shares the GPU; a reported timing has it alone.
        with self._hold(exclusive=not screening):
            checked = self._check(
                variant, build, timed, compile_seconds, reference, screening, cancel
            )
            if isinstance(checked, Evaluation):
                return checked
            runs = self.config.search_runs if screening else self.config.runs
            # Screening: the correctness run is the first sample. In full: it is the warm-up.
            first = checked.sample if screening else None
            timing, flaky = measure(
                checked.binary,
                runs=max(1, runs),
                timeout=self._limit(checked.limit),
                cuda=True,
                expected_exit=checked.reference.exit_code,
                warm_up=False,  # the correctness run warmed the GPU and the caches
                first=first,
            )
            if screening:
                users = max(users, self.gpu.users())
        timing = self._sharing(timing, users)
        if flaky is not None:
            self._cut_short()
            problem = Problem("flaky", f"passed once, then a timed run failed: {flaky}")
            return replace(checked.ran, stage=Stage.RUN, problems=(problem,))
        verified = replace(
            checked.ran,
            stage=Stage.CORRECT,
            timing=timing,
            reference=self.reference_timing(timed),
            run_seconds=checked.ran.run_seconds + _timed_seconds(timing, first is not None),
        )
        if timing.wall is not None:
            with self._lock:
                self._fastest_wall = min(self._fastest_wall, timing.wall)
        return verified if screening else self._detailed(variant, verified)

    def _sharing(self, timing: Timing, users: int) -> Timing:
        """`timing` with the processes that shared the GPU while it was taken and CUDA's
        start on this GPU alone (see Evaluation.program_speedup). A timing with the GPU
        alone teaches the latter: the least such start is kept beside the GPU's lock."""
        if users <= 1 and timing.context is not None:
            self._remember_context(timing.context)
        return replace(
            timing,
            shared_by=max(1, users),
            context_alone=self._context_alone(),
            start_alone=self._start_alone(),
        )

    def _beside_lock(self, what: str) -> Path:
        """Where a figure of this GPU (`context`, `start`) is kept for every process."""
        return self.gpu.path.with_name(f"{self.gpu.path.name}.{what}")

    def _remembered(self, what: str) -> float | None:
        try:
            return float(gpu.read_remembered(self._beside_lock(what)) or "")
        except ValueError:
            return None

    def _start_file(self) -> Path:
        return self._beside_lock("start")

    def _start_alone(self) -> float | None:
        return self._remembered("start")

    def _measure_start(self) -> None:
        """The fixed cost of a CUDA program on this GPU (see START_PROBE), measured once
        and kept beside the GPU's lock for every later compile: under `make -j` the first
        process to hold the GPU alone measures it, the others find it there. A probe that
        cannot be built or run, or a deadline too near, leaves it unknown (the estimate
        from parts then adds the context alone, as before)."""
        if not self.run_on_gpu or self._start_tried or self._start_alone() is not None:
            return
        self._start_tried = True  # one attempt an evaluator: a failed probe fails again
        if not gpu.gpu_available():  # a GPU of tests, or of a cluster's workers: not here
            return
        try:
            build = compile_cuda(
                START_PROBE,
                (),
                self.arch,
                cache=self.cache,
                name="start_probe.cu",
                timeout=self._limit(COMPILE_TIMEOUT),
            )
            if not build.ok or build.binary is None:
                return
            with self._hold(exclusive=True):
                if self._start_alone() is not None:  # measured by another process meanwhile
                    return
                samples, failed = timed_runs(
                    build.binary,
                    runs=START_RUNS,
                    timeout=self._limit(START_TIMEOUT),
                    cuda=True,
                    expected_exit=0,
                )
        except OutOfTime:
            return
        if failed is None and samples:
            least = min(sample.run.seconds for sample in samples)
            log.debug("CUDA's start and exit on this GPU alone: %.3f s", least)
            gpu.remember(self._start_file(), f"{least:.6f}\n")

    def _context_file(self) -> Path:
        return self._beside_lock("context")

    def _context_alone(self) -> float | None:
        return self._remembered("context")

    def _remember_context(self, seconds: float) -> None:
        known = self._context_alone()
        if seconds > 0 and (known is None or seconds < known):
            gpu.remember(self._context_file(), f"{seconds:.6f}\n")

    @contextlib.contextmanager
    def leaving(self, seconds: float) -> Iterator[None]:
        """While it lasts, the deadline is `seconds` sooner: the time after it is kept for
        what comes next (the close call's turns after the finalists)."""
        whole = self.deadline
        self.deadline = whole.sooner(seconds)
        try:
            yield
        finally:
            self.deadline = whole

    def in_turns(
        self, variant: Variant, runs: int, turn: float = 0.0
    ) -> tuple[float, float, int] | str:
        """Medians of the whole program's wall seconds: the reference's (gcc -O3) and
        `variant`'s (nvcc), plain builds both, `runs` runs of each in turns (no uncounted
        ones: both ran in the search already), the GPU held alone: whatever else slows
        the machine (the other compiles of make -j) slows both alike, where the reading
        `remeasure` gives sets the candidate's runs now against the reference's taken at
        the start; and the runs made. Or why there are none (no GPU, a build or a run that
        failed, the deadline). `turn`: the seconds one run of each is expected to take;
        once the GPU is held (the wait for it took 1-15 s under `bench -j 4`) only the
        turns that still fit before the deadline are run, and no run goes past it (a 30 s
        compile had ended at 32.5 s)."""
        if not self.run_on_gpu:
            return "no GPU"
        try:
            reference = self._compile_reference()
            build = self._plain_build(variant)
            if not build.ok or build.binary is None or reference.binary is None:
                failed = build if not build.ok else reference
                said = (failed.diagnostics.strip().splitlines() or [""])[0][:120]
                return f"its build failed{': ' + said if said else ''}"
            with self._hold(exclusive=True):
                left = self.deadline.remaining()
                if turn > 0.0 and left is not None and runs * turn > left:
                    runs = int(left / turn)
                    if runs < 1:
                        return (
                            f"one turn ({turn:.1f} s) no longer fits in the {left:.1f} s "
                            "left once the GPU was free"
                        )
                limit = self._limit(time_limit(self.reference().seconds, self.config.run_timeout))
                timed = in_turns(
                    reference.binary,
                    build.binary,
                    runs,
                    limit,
                    warm=False,
                    left=self.deadline.remaining,
                )
        except (OutOfTime, SourceError) as failed:
            return str(failed)
        if isinstance(timed, str):
            return timed
        cpu, gpu, _outputs = timed
        return statistics.median(cpu), statistics.median(gpu), runs

    def remeasure(
        self,
        variant: Variant,
        evaluation: Evaluation,
        detail: bool = True,
        beat: float | None = None,
    ) -> Evaluation:
        """The full timing of a candidate `screen` verified: one more correctness run (the
        output must match again: a program whose output varies from run to run fails
        here), which is also the first of the timed runs (`runs`; one for a program that
        runs a second or more); with `detail`, the kernel-timing run and the profile too.
        `beat`: a finalist's speedup (by the objective) timed in full already; when this
        one's correctness run, the GPU alone, reads under `beat / RACE_MARGIN`, that run
        is its timing, and its runs stop as soon as the best median they can still reach
        (every run to come taking no time) is no faster than `beat`: no more runs could
        make it the winner. Anything else, and a
        candidate the deadline leaves no time for, is returned unchanged."""
        if not (self.run_on_gpu and evaluation.verified and evaluation.ran_on_gpu):
            return evaluation
        runs = runs_for(evaluation.timing.wall, self.config.runs)
        if not self.deadline.allows(runs * (evaluation.timing.wall or 0.0)):
            return evaluation
        try:
            return self._remeasure(variant, evaluation, runs, detail, beat)
        except OutOfTime:
            return evaluation

    def _remeasure(
        self,
        variant: Variant,
        evaluation: Evaluation,
        runs: int,
        detail: bool,
        beat: float | None = None,
    ) -> Evaluation:
        build, timed, _seconds = self.compile(variant)  # a cache hit: the same binary
        if not build.ok:
            return evaluation
        reference = self.reference()
        began = time.perf_counter()
        alone = self._harness_ready(variant, timed, evaluation, runs)
        log.debug("harness: %s, %.2f s", alone is not None, time.perf_counter() - began)
        harness: RegionTime | None = None
        with self._hold(exclusive=True):
            checked = self._check(variant, build, timed, evaluation.compile_seconds, reference)
            if isinstance(checked, Evaluation):
                flaky = Problem("flaky", f"passed once, then failed: {checked.why}")
                return replace(checked, problems=(flaky, *checked.problems))
            if alone is not None:
                harness = self._time_alone(variant, alone, checked.sample)
            if harness is not None or self._outrun(evaluation, checked.sample, timed, beat):
                runs = 1

            def hopeless(best: Timing) -> bool:  # its best case can no longer beat `beat`
                speedup = self._speedup_with(evaluation, best, timed)
                return beat is not None and speedup is not None and speedup <= beat

            timing, failed = measure(
                checked.binary,
                runs=runs,
                timeout=self._limit(checked.limit),
                cuda=True,
                expected_exit=checked.reference.exit_code,
                warm_up=False,
                first=checked.sample,
                hopeless=hopeless,
            )
        if failed is not None:
            self._cut_short()
            problem = Problem("flaky", f"passed twice, then a timed run failed: {failed}")
            return replace(evaluation, stage=Stage.RUN, problems=(problem,))
        seconds = checked.ran.run_seconds + _timed_seconds(timing, True)
        if harness is not None:
            calls = checked.sample.calls
            timing = replace(timing, region=calls * harness.host, harness_calls=harness.calls)
        remeasured = replace(
            evaluation,
            timing=self._sharing(timing, 1),
            reference=self.reference_timing(timed),
            run_seconds=evaluation.run_seconds + seconds,
        )
        return self._detailed(variant, remeasured) if detail else remeasured

    def _outrun(
        self, evaluation: Evaluation, sample: Sample, timed: tuple[str, ...], beat: float | None
    ) -> bool:
        """Whether a finalist's correctness run alone (its first timed sample) is already
        too slow to win against `beat` (see remeasure)."""
        if beat is None:
            return False
        speedup = self._speedup_with(evaluation, summarise([sample]), timed)
        return speedup is not None and speedup * RACE_MARGIN < beat

    def _speedup_with(
        self, evaluation: Evaluation, timing: Timing, timed: tuple[str, ...]
    ) -> float | None:
        """The speedup (by the objective) `evaluation` would have with `timing`, taken
        with the GPU alone (a possibly hypothetical timing: nothing is learned from it)."""
        alone = replace(
            timing,
            shared_by=1,
            context_alone=self._context_alone(),
            start_alone=self._start_alone(),
        )
        judged = replace(evaluation, timing=alone, reference=self.reference_timing(timed))
        return objective_speedup(judged, self.config.objective)

    def _harness_ready(
        self, variant: Variant, timed: tuple[str, ...], evaluation: Evaluation, runs: int
    ) -> Harness | None:
        """The harness that times the region alone (see region_timing), when the timing
        build wraps one function and nothing the residency runtime does outside it, and
        its library is at hand: built by `prefetch_harness` (waited for, see `_built`), or
        built here (outside the GPU's hold) when the whole-program runs the harness
        replaces would take longer than the build and the harness. None: the program's
        runs time the region."""
        name = self._one_function(variant, timed)
        if name is None:
            return None
        ahead = self._harness_builds.get(variant.key)
        saving = (runs - 1) * (evaluation.timing.wall or 0.0)
        prepared: Harness | str
        if ahead is not None and self._built(ahead, runs * (evaluation.timing.wall or 0.0)):
            prepared = ahead.result()
        elif saving > evaluation.compile_seconds + HARNESS_RUN:
            with self.breakdown.measure("compile"):
                prepared = prepare(
                    self.program,
                    name,
                    variant.code,
                    arch=gpu.default_arch(),
                    cache=self.cache,
                    timeout=self._limit(COMPILE_TIMEOUT),
                )
        else:
            return None
        if isinstance(prepared, str):
            log.debug("%s: region timed in the program's runs: %s", variant.key, prepared)
            return None
        return prepared

    def _built(self, ahead: Future[Harness | str], runs_seconds: float) -> bool:
        """Whether a finalist's library, built ahead, is ready: waited for (outside the
        GPU's hold) as long as the deadline leaves beyond the program's own runs, at most
        HARNESS_WAIT. A build that failed is not."""
        remaining = self.deadline.remaining()
        wait = HARNESS_WAIT if remaining is None else min(HARNESS_WAIT, remaining - runs_seconds)
        if not ahead.done() and wait > 0:
            with self.breakdown.measure("compile"):
                futures.wait([ahead], timeout=wait)
        return ahead.done() and ahead.exception() is None

    def _one_function(self, variant: Variant, timed: tuple[str, ...]) -> str | None:
        """The one function a timing build wraps, when nothing outside it (the residency
        runtime's scope ends, host barriers) belongs to the region too."""
        if len(timed) != 1 or self._sync_points(variant, timed):
            return None
        return timed[0]

    def prefetch_plain(self, variants: Sequence[Variant]) -> None:
        """Build the plain programs (no timing runtime) of finalists on other cores while
        the finalists take the GPU: what a close call's turns run (`in_turns`). Built only
        then, the leader's nvcc (1-2 s) came out of a turn's time: on an H200 under bench
        -j 4, a 1.13x leader's turns found their build cut by the deadline."""
        jobs = compile_jobs(self.config)
        if jobs <= 1 or not self.run_on_gpu:
            return
        pool = ThreadPoolExecutor(max_workers=min(jobs, len(variants) or 1))
        for variant in variants:
            if variant.key not in self._plain_builds:
                self._plain_builds[variant.key] = pool.submit(
                    self._compile_candidate, variant.code, False
                )
        pool.shutdown(wait=False)

    def _plain_build(self, variant: Variant) -> Build:
        """`variant`'s plain build: the one `prefetch_plain` started, else built now."""
        ahead = _built_ahead(self._plain_builds.pop(variant.key, None))
        return ahead if ahead is not None else self._build(variant.code, timed=False)

    def prefetch_harness(self, variants: Sequence[Variant]) -> None:
        """Build the harness libraries of finalists on other cores, while the first
        finalist is re-timed. These are the finish's builds: `close`, which stops the
        search's compiles ahead as the finalists take the GPU, does not stop them (it
        did, so no finalist's region was ever timed by the harness in a compile)."""
        jobs = compile_jobs(self.config)
        if jobs <= 1 or not self.run_on_gpu:
            return
        try:  # the budget is a hard limit: a build nobody waits for ends with it
            limit = self._limit(COMPILE_TIMEOUT)
        except OutOfTime:
            return
        pool = ThreadPoolExecutor(max_workers=min(jobs, len(variants) or 1))
        for variant in variants:
            name = self._one_function(variant, self._timable(variant))
            if name is not None and variant.key not in self._harness_builds:
                self._harness_builds[variant.key] = pool.submit(
                    prepare,
                    self.program,
                    name,
                    variant.code,
                    arch=gpu.default_arch(),
                    cache=self.cache,
                    timeout=limit,
                )
        pool.shutdown(wait=False)

    def _time_alone(self, variant: Variant, harness: Harness, sample: Sample) -> RegionTime | None:
        """The harness's timing, when it agrees with what the program's run read: its
        first call plus the rest at the steady rate within a factor of REGION_AGREES (plus
        a millisecond) of the run's region. A function that reads state main set up
        (globals, buffers kept across calls) may run differently on synthetic inputs."""
        if sample.region is None or sample.calls < 1:
            return None
        timed = time_region(harness, timeout=self._limit(HARNESS_TIMEOUT))
        if isinstance(timed, str):
            log.debug("%s: region timed in the program's runs: %s", variant.key, timed)
            return None
        expected = timed.first + (sample.calls - 1) * timed.host
        slack = 1e-3
        if not (
            sample.region <= REGION_AGREES * expected + slack
            and expected <= REGION_AGREES * sample.region + slack
        ):
            log.debug(
                "%s: the harness read %.6f s, the program's run %.6f s: not used",
                variant.key,
                expected,
                sample.region,
            )
            return None
        return timed

    def detail(self, variant: Variant, evaluation: Evaluation) -> Evaluation:
        """A verified evaluation with its kernel and copy times and, with `profile`, the
        hardware counters (one more run each)."""
        if not (self.run_on_gpu and evaluation.verified and evaluation.ran_on_gpu):
            return evaluation
        if not self.deadline.allows(evaluation.timing.wall or 0.0):
            return evaluation
        began = time.perf_counter()
        try:
            return self._detailed(variant, evaluation)
        except OutOfTime:
            return evaluation
        finally:
            log.debug("kernel timing: %.2f s", time.perf_counter() - began)

    def _detailed(self, variant: Variant, evaluation: Evaluation) -> Evaluation:
        build, timed, _seconds = self.compile(variant)
        binary = build.binary
        if not build.ok or binary is None:
            return evaluation
        limit = self._run_limit()
        with self._hold(exclusive=True):
            timing = evaluation.timing
            if timed:
                timing, failed = self._kernel_times(timing, binary, limit)
                if failed is not None:
                    self._cut_short()
                    problem = Problem("flaky", f"passed, then a timed run failed: {failed}")
                    return replace(evaluation, stage=Stage.RUN, problems=(problem,))
            hardware = hardware_counters(binary, timeout=5 * limit) if self.profile else ()
            timing = self._with_roofline(timing, variant.code)
            return replace(evaluation, timing=timing, hardware=hardware)

    def _run_limit(self) -> float:
        """How long one run of a candidate may take: from the reference's time, within the
        deadline."""
        return self._limit(time_limit(self.reference().seconds, self.config.run_timeout))

    def _kernel_times(
        self, timing: Timing, binary: Path, limit: float
    ) -> tuple[Timing, Problem | None]:
        return with_kernel_times(
            timing, binary, timeout=limit, cuda=True, expected_exit=self.reference().exit_code
        )

    def kernel_roofline(self, variant: Variant) -> Timing | None:
        """The kernels of `variant` timed by CUDA events in one run of its timing build, and
        placed under the roofline; None without a GPU, or where the build or its run
        fails. `cudaify bench` measures a written variant so when its search used the
        whole time budget and left it none."""
        if not self.run_on_gpu:
            return None
        build, timed, _seconds = self.compile(variant)
        if not build.ok or build.binary is None or not timed:
            return None
        limit = self._run_limit()
        with self._hold(exclusive=True):
            timing, failed = self._kernel_times(Timing(), build.binary, limit)
            if failed is not None or not timing.kernel_times:
                return None
            return self._with_roofline(timing, variant.code)

    def evaluate_many(self, variants: Sequence[Variant]) -> list[Evaluation]:
        """Compile every variant in parallel (one compiler per core), then run them one
        by one; the second compile of each is a cache hit."""
        workers = min(len(variants), os.cpu_count() or 1) or 1
        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(self.compile, variants))
        return [self.evaluate(variant) for variant in variants]

    def _check(
        self,
        variant: Variant,
        build: Build,
        timed: tuple[str, ...],
        compile_seconds: float,
        reference: ReferenceResult,
        screening: bool = False,
        cancel: threading.Event | None = None,
    ) -> _Checked | Evaluation:
        """The correctness run: the output and exit code against the reference's (and,
        with `differential`, the offloaded functions alone at other sizes). The run is a
        timed one when the build is a timing build. An Evaluation when it failed. A
        search candidate's run (`screening`) stops once it can no longer beat the CPU
        (see `hopeless_after`), without a configured --run-timeout."""
        limit = time_limit(reference.seconds, self.config.run_timeout)
        binary = build.binary
        assert binary is not None
        cut = self._limit(limit)
        # the program to beat: the CPU's, or the fastest verified variant's when shorter
        against_gpu = self._fastest_wall < reference.seconds
        beat = self._fastest_wall if against_gpu else reference.seconds
        beat_name = "the fastest verified variant so far" if against_gpu else "the CPU program"
        # a GPU shared n ways (make -j, bench -j) runs each program up to n times slower:
        # the cutoff stretches with it, or every candidate would read as too slow
        hopeless = (
            hopeless_after(beat, gpu=against_gpu) * self.gpu.users() if screening else math.inf
        )
        stops_hopeless = screening and not self.config.run_timeout and hopeless < cut
        if stops_hopeless:
            cut = hopeless
        if timed:
            sample = timed_run(binary, timeout=cut, cuda=True, cancel=cancel)
        else:
            run = run_binary(binary, timeout=cut, cuda=True, cancel=cancel)
            sample = Sample(run, None, 0, None)
        run = sample.run
        ran = Evaluation(
            Stage.COMPILE, ran_on_gpu=True, compile_seconds=compile_seconds, run_seconds=run.seconds
        )
        failed = run.problem(limit)
        if failed is not None:
            if run.timed_out:
                self._cut_short()  # killed at the deadline, not at the candidate's limit
            if run.timed_out and stops_hopeless:
                slow = Problem(
                    TOO_SLOW,
                    f"stopped after {hopeless:.1f} s: {beat_name} runs in {beat:.2f} s, "
                    "so this variant's region cannot beat its region",
                )
                return replace(ran, problems=(slow,))
            return replace(ran, problems=(failed,))
        exit_problem = compare_exit(reference.exit_code, run.exit_code or 0)
        output = compare(reference.stdout, run.stdout, self.config.rtol, self.config.atol)
        rounding = (
            exit_problem is None
            and output is not None
            and rounding_only(reference.stdout, run.stdout, self.config.atol)
        )
        may_decide = (
            exit_problem is None
            and output is not None
            and not rounding
            and compares_floats(variant.code)
        )
        if output is not None and (rounding or may_decide):
            note = ROUNDING_NOTE if rounding else ROUNDING_BRANCH_NOTE
            output = replace(output, message=f"{output.message}; {note}")
        mismatch = tuple(p for p in (exit_problem, output) if p is not None)
        if mismatch:
            problems = mismatch + _stderr_problem(run)
            return replace(
                ran,
                stage=Stage.RUN,
                problems=problems,
                rounding_only=rounding,
                rounding_may_decide=may_decide,
            )
        disagreement = self._differential(variant) if self.differential else None
        if disagreement is not None:
            return replace(ran, stage=Stage.RUN, problems=(disagreement,))
        tolerance = matched_tolerance(
            reference.stdout, run.stdout, self.config.rtol, self.config.atol
        )
        return _Checked(replace(ran, tolerance=tolerance), binary, limit, reference, sample)

    def _with_roofline(self, timing: Timing, code: str) -> Timing:
        """Each timed kernel under the roofs (backend/roofline.py): its bytes and FLOPs
        counted from `code`, against the GPU's measured copy bandwidth and fp32/fp64
        peaks (measured on first use, under the GPU lock this runs in). Where no kernel
        can be placed, the region's copies per kernel second against the bandwidth."""
        if not timing.kernel:
            return timing
        began = time.perf_counter()
        bandwidth = copy_bandwidth(self.cache, self.arch)
        peaks = peak_flops(self.cache, self.arch)
        log.debug("the GPU's roofs: %.2f s", time.perf_counter() - began)
        percent = roofline_percent(timing.transfer_bytes, timing.kernel, bandwidth)
        coarse = replace(timing, roofline_percent=percent, bound="memory" if percent else None)
        try:
            counted = kernel_work(code)
            work = roofline.with_launches(counted, code, timing.launches, timing.kernel_times)
        except Exception:  # noqa: BLE001 - a text the count cannot read keeps the coarse figure
            log.debug("kernel work not counted", exc_info=True)
            return coarse
        return roofline.with_kernels(coarse, work, bandwidth, peaks)

    def _differential(self, variant: Variant) -> Problem | None:
        """The first offloaded function that disagrees with the original on other sizes:
        its kernels alone (pycuda), then its host function (copies and launches)."""
        # pycuda loads a cubin: it must be for this GPU, whatever --arch asked for.
        tests = ((kernel_differential_test, gpu.default_arch()), (differential_test, self.arch))
        for name in variant.offloaded:
            for test, arch in tests:
                outcome = test(
                    self.program,
                    name,
                    variant.code,
                    arch=arch,
                    cache=self.cache,
                    rtol=self.config.rtol,
                    atol=self.config.atol,
                )
                if outcome.problem is not None:
                    return outcome.problem
        return None


# a timing build's source and the functions it times (None, (): the plain build)
_Source = tuple[str | None, tuple[str, ...]]


@dataclass(frozen=True)
class _ReferenceSamples:
    """The reference's timed runs of one timing build: their summary and, for a build that
    times each function apart, each run's sets and entries (see timing.subset_time)."""

    timing: Timing
    sets: tuple[tuple[tuple[int, float], ...], ...] = ()
    entries: tuple[tuple[tuple[int, int, int], ...], ...] = ()
    per_function: bool = False

    @classmethod
    def of(cls, samples: Sequence[Sample], per_function: bool) -> _ReferenceSamples:
        # every run that entered the region must have reported its sets (not too many)
        reported = all(s.sets or not s.calls for s in samples)
        return cls(
            summarise(samples),
            tuple(s.sets for s in samples),
            tuple(s.entries for s in samples),
            per_function and reported and bool(samples),
        )

    def restricted(self, positions: Sequence[int]) -> Timing:
        """The timing of the functions at `positions` alone, from the same runs."""
        regions: list[float | None] = []
        for sets, entries in zip(self.sets, self.entries, strict=True):
            seconds, calls = subset_time(sets, entries, positions)
            regions.append(seconds if calls else None)
        known = [r for r in regions if r is not None]
        region = statistics.median(known) if known and len(known) == len(regions) else None
        return replace(self.timing, region=region)

    def to_json(self) -> dict[str, object]:
        return {
            "timing": dataclasses.asdict(self.timing),
            "sets": [[[mask, s] for mask, s in run] for run in self.sets],
            "entries": [[list(e) for e in run] for run in self.entries],
            "per_function": self.per_function,
        }

    @classmethod
    def from_json(cls, data: dict) -> _ReferenceSamples:
        return cls(
            Timing(**data["timing"]),
            tuple(tuple((int(m), float(s)) for m, s in run) for run in data["sets"]),
            tuple(tuple((int(m), int(p), int(n)) for m, p, n in run) for run in data["entries"]),
            bool(data["per_function"]),
        )


_Built = tuple[Build, tuple[str, ...], float]  # a build, the names it times, its seconds
_PendingKey = tuple[str, bool]  # a build started ahead: its source's hash, timed or not


@dataclass(frozen=True)
class _Checked:
    """A correctness run that passed: what timing it further needs."""

    ran: Evaluation
    binary: Path
    limit: float
    reference: ReferenceResult
    sample: Sample


def _timed_seconds(timing: Timing, first_counted: bool) -> float:
    """Seconds the timed runs took, less the correctness run when it was one of them."""
    runs = timing.runs - (1 if first_counted else 0)
    return (timing.wall or 0.0) * max(0, runs)


# A search candidate's run is stopped after HOPELESS_FACTOR times the CPU program's wall
# time (or the fastest verified candidate's, when shorter) plus HOPELESS_SECONDS. Past
# that it cannot win: its code outside the region is the input's (the wall time outside
# the region is at most the CPU program's, or the fastest candidate's), so its region has
# taken at least that program's whole time plus HOPELESS_SECONDS less the CUDA context's
# creation, which is more than that program's region. Slow candidates ran to their 10x
# limit before and took most of a search's time (PolyBench atax: 20 s of its 30 s budget;
# at 2x the CPU's, heat-1d still spent 20 s on five candidates stopped at 4 s each; at 2x,
# Gauss-Seidel's two 0.4x mappings ran to 3.7 s each where 1.5x stops them at 3.1 s and,
# once a 0.64 s variant is verified, at 2 s). The half above the CPU's time is for the
# run's host code: a candidate's outside the region may run slower than the CPU build's.
# HOPELESS_SECONDS is for CUDA's start, which the CPU program does not pay; against a
# verified GPU variant, whose time holds that start too, HOPELESS_SECONDS_GPU of noise is
# left (PolyBench bicg ran five candidates to 1.4 s each against a 0.28 s variant).
HOPELESS_FACTOR = 1.5
HOPELESS_SECONDS = 1.0
HOPELESS_SECONDS_GPU = 0.25


def hopeless_after(reference_seconds: float, gpu: bool = False) -> float:
    """When a screening run stops as too slow, against a program that runs
    `reference_seconds`: the CPU program, or (`gpu`) a verified GPU variant."""
    extra = HOPELESS_SECONDS_GPU if gpu else HOPELESS_SECONDS
    return HOPELESS_FACTOR * reference_seconds + extra


# A finalist whose one run with the GPU alone reads this much slower than a finalist timed
# in full is not timed further: one such run varies by a few percent, not by a quarter.
RACE_MARGIN = 1.25

MAX_COMPILE_JOBS = 8
# Prefetched candidates screened at once beside the search's own run (see _screen_ahead):
# a screening run is mostly host time, so a few share the GPU well; each holds a CUDA
# context and the program's device memory.
SCREEN_AHEAD_JOBS = 2


def _built_ahead(pending: Future[Build | None] | Future[Build] | None) -> Build | None:
    """The build a compile started ahead made; None where there is none, it was cancelled
    or it raised (the caller compiles again, where the failure can say why). The deadline's
    OutOfTime is raised."""
    if pending is None or pending.cancelled():
        return None
    try:
        return pending.result()
    except OutOfTime:
        raise
    except Exception:  # noqa: BLE001 - compiled again by the caller
        return None


def compile_jobs(config: Config) -> int:
    """Candidates compiled at once ahead of the search: `compile_jobs`, or (0) up to
    MAX_COMPILE_JOBS, as many cores as are idle now (see idle_cores). Under make -j16 on
    16 cores the other cudaify processes keep the cores busy: then 1, no compiles ahead."""
    if config.compile_jobs > 0:
        return config.compile_jobs
    return max(1, min(MAX_COMPILE_JOBS, idle_cores()))


def idle_cores() -> int:
    """Cores with nothing to run at this moment: the cores less the tasks running or
    waiting to run now (Linux: /proc/loadavg's fourth field, this process's own thread
    not counted), else less the one-minute load average. The instant count matters:
    the load average lags by a minute, so sixteen cudaify processes started together by
    make -j16 would each find the machine idle and start builds ahead on every core."""
    return max(0, (os.cpu_count() or 1) - _busy())


def _busy() -> int:
    try:
        with open("/proc/loadavg") as status:
            return int(status.read().split()[3].split("/")[0]) - 1
    except (OSError, IndexError, ValueError):
        try:
            return int(os.getloadavg()[0])
        except OSError:
            return 0


def out_of_time(why: str) -> Evaluation:
    """A candidate the deadline stopped: not a failure of its own, but never one to
    write out either (it is below every compiled candidate)."""
    return Evaluation(stage=Stage.STRUCTURE, problems=(Problem(TIME_BUDGET, why),))


TIME_BUDGET = "time_budget"  # the kind of problem of a candidate the deadline stopped


def compile_problem(diagnostics: str) -> Problem:
    """The compiler's first lines, with the first error's line number when it has one."""
    if diagnostics.startswith(COMPILER_CRASH):  # the compiler's fault: no source line
        return Problem(COMPILER_CRASHED, diagnostics)
    match = _ERROR_LINE.search(diagnostics)
    line = int(match.group(1) or match.group(2)) if match else None
    return Problem("compile", diagnostics or "the compiler failed without a message", line)


COMPILER_CRASHED = "compiler_crash"  # the kind of problem of a build the compiler crashed


def _stderr_problem(run: RunResult) -> tuple[Problem, ...]:
    lines = [line for line in run.stderr.splitlines() if line.strip()][:5]
    return (Problem("stderr", "\n".join(lines)),) if lines else ()


__all__ = [
    "Evaluator",
    "ReferenceResult",
    "NOTHING_RAN",
    "TIME_BUDGET",
    "compile_jobs",
    "idle_cores",
    "compile_problem",
    "out_of_time",
    "tool_version",
]
