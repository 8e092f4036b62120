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
- `remeasure` (a search's finalists): a second correctness run, then `runs` timed runs;
  `detail` adds the kernel-timing run and the profile to the one written out."""

from __future__ import annotations

import dataclasses
import os
import re
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from cudaify.backend import gpu
from cudaify.backend.bandwidth import copy_bandwidth, roofline_percent
from cudaify.backend.cache import Cache
from cudaify.backend.compare import (
    ROUNDING_RTOL,
    compare,
    compare_exit,
    matched_tolerance,
    rounding_only,
)
from cudaify.backend.compile import Build, compile_cuda, compile_reference, tool_version
from cudaify.backend.differential import differential_test
from cudaify.backend.gpulock import GpuLock, gpu_lock
from cudaify.backend.kernel_differential import kernel_differential_test
from cudaify.backend.profile import hardware_counters
from cudaify.backend.runner import RunResult, run_binary, time_limit
from cudaify.backend.timing import (
    CUDA_LINK_FLAGS,
    InstrumentError,
    Sample,
    find_definitions,
    instrument,
    measure,
    runtime_units,
    timed_run,
    with_kernel_times,
)
from cudaify.config import Config
from cudaify.core import Evaluation, Problem, Stage, Timing, Variant, content_hash
from cudaify.errors import InputError, SourceError
from cudaify.frontend.facts import Program

NOTHING_RAN = (
    "no NVIDIA GPU found: the candidate was compiled but nothing was run; its output is unverified"
)
# said of an output whose only mismatch is rounding (Evaluation.rounding_only)
ROUNDING_NOTE = f"every number is within rtol {ROUNDING_RTOL:g}: rounding only"
REFERENCE_TIMEOUT = 300.0
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
        self._reference_timings: dict[tuple[str, ...], Timing] = {}
        self._lock = threading.RLock()
        # This GPU's lock across threads and processes (bench -j N): `with self.gpu:` for
        # reported timings, `with self.gpu.shared():` for correctness runs and for local
        # models generating (see gpulock).
        self.gpu: GpuLock = gpu_lock(self.cache.root)

    # -- the reference -------------------------------------------------------------

    def reference(self) -> ReferenceResult:
        """Compile and run the input once (cached on disk by content hash). Raises
        SourceError when gcc rejects the input, InputError when it does not finish."""
        if self._reference is not None:  # no lock: a shared GPU holder may ask
            return self._reference
        with self._lock:
            if self._reference is None:
                self._reference = self._load_or_run_reference()
            return self._reference

    def _load_or_run_reference(self) -> ReferenceResult:
        build = self._compile_reference()
        key = content_hash("reference-run", str(build.binary), self._depends())
        stored = self.cache.read_json("reference-runs", key)
        if stored is not None:
            return ReferenceResult(stored["stdout"], stored["exit_code"], stored["seconds"], True)
        limit = self.config.run_timeout or REFERENCE_TIMEOUT
        with self.gpu:
            run = run_binary(build.binary, timeout=limit)  # type: ignore[arg-type]
        problem = run.problem(limit)
        if problem is not None or run.exit_code is None:
            raise InputError(f"{self.program.path}: the input program itself failed: {problem}")
        result = ReferenceResult(run.stdout, run.exit_code, run.seconds)
        self.cache.write_json(
            "reference-runs",
            key,
            {"stdout": run.stdout, "exit_code": run.exit_code, "seconds": run.seconds},
        )
        return result

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
        )
        if not build.ok:
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

    def reference_timing(self, offloaded: tuple[str, ...]) -> Timing:
        """Medians of the reference's wall and region time, region = the `offloaded`
        functions (wall only when they cannot be instrumented)."""
        with self._lock:
            if offloaded not in self._reference_timings:
                self._reference_timings[offloaded] = self._time_reference(offloaded)
            return self._reference_timings[offloaded]

    def _time_reference(self, offloaded: tuple[str, ...]) -> Timing:
        build = self._compile_reference()
        if offloaded:
            try:
                code = instrument(self.program.source, self.program.language, offloaded).code
                build = self._compile_reference(code, timed=True)
            except (InstrumentError, SourceError):
                pass  # time the whole program only
        limit = time_limit(self.reference().seconds, self.config.run_timeout)
        # Within one timing session (`cudaify bench`: every strategy of one program) the
        # reference is timed once, so the strategies share one denominator.
        session = self.config.timing_session
        key = content_hash(
            "reference-timing", str(session), str(build.binary), str(self.config.runs)
        )
        with self.gpu:
            stored = self.cache.read_json("reference-timings", key) if session else None
            if stored is not None:
                return Timing(**stored)
            timing, _ = measure(
                build.binary,  # type: ignore[arg-type]
                runs=self.config.runs,
                timeout=limit,
                cuda=False,
            )
            if session:
                self.cache.write_json("reference-timings", key, dataclasses.asdict(timing))
        return timing

    # -- candidates ---------------------------------------------------------------

    def compile(self, variant: Variant) -> tuple[Build, tuple[str, ...], float]:
        """(build, the functions its timing wraps (none: a plain build), compile seconds).
        Offloaded functions the candidate no longer defines are left out of the region."""
        seconds = 0.0
        names = self._timable(variant) if self.run_on_gpu else ()
        if names:
            wrapped = names + self._sync_points(variant, names)
            build = self._compile_candidate(instrument(variant.code, "cuda", wrapped).code, True)
            seconds += build.seconds
            if build.ok:
                return build, names, seconds
        # The plain build: no timing, and the diagnostics a failing candidate deserves.
        build = self._compile_candidate(variant.code, timed=False)
        return build, (), seconds + build.seconds

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

    def _compile_candidate(self, code: str, timed: bool) -> Build:
        return compile_cuda(
            code,
            self.flags,
            self.arch,
            cache=self.cache,
            source_dir=self.source_dir,
            extra_units=runtime_units(cuda=True) if timed else (),
            link_flags=CUDA_LINK_FLAGS if timed else (),
            depends=self._depends(),
        )

    def evaluate(self, variant: Variant) -> Evaluation:
        """Verify and time in full: the correctness run, then `runs` timed runs, one
        kernel-timing run and (with `profile`) the hardware counters. What `cudaify check`
        reports and what a search's finalists get (see `remeasure`)."""
        return self._evaluate(variant, screening=False)

    def screen(self, variant: Variant) -> Evaluation:
        """Verify a search candidate as cheaply as the checks allow: the same compile and
        the same correctness run (output and exit code against the reference's) as
        `evaluate`, but that run is also the timing sample (`search_runs` > 1 adds runs);
        no kernel timing, no profile. `remeasure` times a verified one in full later."""
        if self.config.search_runs >= self.config.runs:
            return self.evaluate(variant)
        return self._evaluate(variant, screening=True)

    def _evaluate(self, variant: Variant, screening: bool) -> Evaluation:
        build, timed, compile_seconds = self.compile(variant)
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
            )
        # Ran before the hold: running the reference needs the GPU alone.
        reference = self.reference()
        # A candidate's screening run shares the GPU; a reported timing has it alone.
        hold = self.gpu.shared() if screening else self.gpu
        with hold:
            checked = self._check(variant, build, timed, compile_seconds, reference)
            if isinstance(checked, Evaluation):
                return checked
            runs = self.config.search_runs if screening else self.config.runs
            # Screening: the correctness run is the first sample. In full: it is the warm-up.
            first = checked.sample if screening else None
            timing, flaky = measure(
                checked.binary,
                runs=max(1, runs),
                timeout=checked.limit,
                cuda=True,
                expected_exit=checked.reference.exit_code,
                warm_up=False,  # the correctness run warmed the GPU and the caches
                first=first,
            )
        if flaky is not None:
            problem = Problem("flaky", f"passed once, then a timed run failed: {flaky}")
            return replace(checked.ran, stage=Stage.RUN, problems=(problem,))
        verified = replace(
            checked.ran,
            stage=Stage.CORRECT,
            timing=timing,
            reference=self.reference_timing(timed),
            run_seconds=checked.ran.run_seconds + _timed_seconds(timing, first is not None),
        )
        return verified if screening else self._detailed(variant, verified)

    def remeasure(
        self, variant: Variant, evaluation: Evaluation, detail: bool = True
    ) -> Evaluation:
        """The full timing of a candidate `screen` verified: one more correctness run (the
        output must match again: a program whose output varies from run to run fails
        here), then `runs` timed runs; with `detail`, the kernel-timing run and the profile
        too. Anything else is returned unchanged."""
        if not (self.run_on_gpu and evaluation.verified and evaluation.ran_on_gpu):
            return evaluation
        build, timed, _seconds = self.compile(variant)  # a cache hit: the same binary
        if not build.ok:
            return evaluation
        with self.gpu:
            checked = self._check(
                variant, build, timed, evaluation.compile_seconds, self.reference()
            )
            if isinstance(checked, Evaluation):
                flaky = Problem("flaky", f"passed once, then failed: {checked.why}")
                return replace(checked, problems=(flaky, *checked.problems))
            timing, failed = measure(
                checked.binary,
                runs=self.config.runs,
                timeout=checked.limit,
                cuda=True,
                expected_exit=checked.reference.exit_code,
                warm_up=False,
            )
        if failed is not None:
            problem = Problem("flaky", f"passed twice, then a timed run failed: {failed}")
            return replace(evaluation, stage=Stage.RUN, problems=(problem,))
        seconds = checked.ran.run_seconds + _timed_seconds(timing, False)
        remeasured = replace(
            evaluation,
            timing=timing,
            reference=self.reference_timing(timed),
            run_seconds=evaluation.run_seconds + seconds,
        )
        return self._detailed(variant, remeasured) if detail else remeasured

    def detail(self, variant: Variant, evaluation: Evaluation) -> Evaluation:
        """A verified evaluation with its kernel and copy times and, with `profile`, the
        hardware counters (one more run each)."""
        if not (self.run_on_gpu and evaluation.verified and evaluation.ran_on_gpu):
            return evaluation
        return self._detailed(variant, evaluation)

    def _detailed(self, variant: Variant, evaluation: Evaluation) -> Evaluation:
        build, timed, _seconds = self.compile(variant)
        binary = build.binary
        if not build.ok or binary is None:
            return evaluation
        reference = self.reference()
        limit = time_limit(reference.seconds, self.config.run_timeout)
        with self.gpu:
            timing = evaluation.timing
            if timed:
                timing, failed = with_kernel_times(
                    timing,
                    binary,
                    timeout=limit,
                    cuda=True,
                    expected_exit=reference.exit_code,
                )
                if failed is not None:
                    problem = Problem("flaky", f"passed, then a timed run failed: {failed}")
                    return replace(evaluation, stage=Stage.RUN, problems=(problem,))
            hardware = hardware_counters(binary, timeout=5 * limit) if self.profile else ()
            return replace(evaluation, timing=self._with_roofline(timing), hardware=hardware)

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
    ) -> _Checked | Evaluation:
        """The correctness run: the output and exit code against the reference's (and,
        with `differential`, the offloaded functions alone at other sizes). The run is a
        timed one when the build is a timing build. An Evaluation when it failed."""
        limit = time_limit(reference.seconds, self.config.run_timeout)
        binary = build.binary
        assert binary is not None
        if timed:
            sample = timed_run(binary, timeout=limit, cuda=True)
        else:
            sample = Sample(run_binary(binary, timeout=limit, cuda=True), None, 0, None)
        run = sample.run
        ran = Evaluation(
            Stage.COMPILE, ran_on_gpu=True, compile_seconds=compile_seconds, run_seconds=run.seconds
        )
        failed = run.problem(limit)
        if failed is not None:
            return replace(ran, problems=(failed,))
        exit_problem = compare_exit(reference.exit_code, run.exit_code or 0)
        output = compare(reference.stdout, run.stdout, self.config.rtol, self.config.atol)
        rounding = (
            exit_problem is None
            and output is not None
            and rounding_only(reference.stdout, run.stdout, self.config.atol)
        )
        if rounding and output is not None:
            output = replace(output, message=f"{output.message}; {ROUNDING_NOTE}")
        mismatch = tuple(p for p in (exit_problem, output) if p is not None)
        if mismatch:
            problems = mismatch + _stderr_problem(run)
            return replace(ran, stage=Stage.RUN, problems=problems, rounding_only=rounding)
        disagreement = self._differential(variant) if self.differential else None
        if disagreement is not None:
            return replace(ran, stage=Stage.RUN, problems=(disagreement,))
        tolerance = matched_tolerance(
            reference.stdout, run.stdout, self.config.rtol, self.config.atol
        )
        return _Checked(replace(ran, tolerance=tolerance), binary, limit, reference, sample)

    def _with_roofline(self, timing: Timing) -> Timing:
        """The kernels' achieved bytes/s against the GPU's measured copy bandwidth (the
        bandwidth is measured on first use, under the GPU lock this runs in)."""
        if not timing.kernel or not timing.transfer_bytes:
            return timing
        bandwidth = copy_bandwidth(self.cache, self.arch)
        percent = roofline_percent(timing.transfer_bytes, timing.kernel, bandwidth)
        return replace(timing, roofline_percent=percent)

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


def compile_problem(diagnostics: str) -> Problem:
    """The compiler's first lines, with the first error's line number when it has one."""
    match = _ERROR_LINE.search(diagnostics)
    line = int(match.group(1) or match.group(2)) if match else None
    return Problem("compile", diagnostics or "the compiler failed without a message", line)


def _stderr_problem(run: RunResult) -> tuple[Problem, ...]:
    lines = [line for line in run.stderr.splitlines() if line.strip()][:5]
    return (Problem("stderr", "\n".join(lines)),) if lines else ()


__all__ = ["Evaluator", "ReferenceResult", "NOTHING_RAN", "compile_problem", "tool_version"]
