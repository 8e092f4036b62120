"""Work spread over a Ray cluster (`--ray [ADDRESS]`, the optional `cudaify[ray]` extra).

Everything Ray is here, and `ray` is imported only when a cluster is asked for: cudaify
without the extra never loads it. Without `--ray` nothing in this module runs and every
candidate is verified in-process, as it always was.

Two kinds of work go to the cluster:

- A program (`cudaify bench --ray`): `Cluster.submit` runs any importable function as a
  task and `Cluster.completed` hands back what each returns, with the node that ran it and
  its seconds there. On a cluster with GPUs a program's task asks for a share of one
  (`gpu_share`), so several programs share a GPU as `bench -j N` does, each pinned to it by
  Ray's CUDA_VISIBLE_DEVICES.
- A candidate (`cudaify compile --ray`): `RemoteEvaluator` is an `Evaluator` whose
  candidates are built by a task on a CPU worker and, on a cluster with GPUs, run, compared
  and timed by a second task that holds a whole GPU (`num_gpus=1`). Each task carries the
  candidate's source, the program (its flags, its path) and the reference: the cache
  entries that hold the reference's build, output, exit code and timings, which the worker
  puts in its own cache before it starts, so no worker runs the reference again. The
  evaluation and every cache entry the worker wrote (builds, compile errors) come back to
  the caller and go into its cache, written by rename as every cache entry is.

Failures: a task whose worker process or node dies is retried by Ray on another worker
(MAX_RETRIES times); an exception of cudaify's own is not retried (it would fail again)
and is raised in the caller as it would have been in-process. Ctrl-C (or SIGTERM) while
the caller waits cancels every task it started (`ray.cancel`: a running task gets the
KeyboardInterrupt, which kills its nvcc and candidate processes on the way out).

Inputs are shipped as text, and a worker compiles with the caller's flags: an input that
includes headers of its own needs them at the same path on every node (a shared file
system), as a compile on that node would."""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cudaify.backend.budget import Breakdown, Deadline
from cudaify.backend.cache import Cache
from cudaify.backend.evaluate import Evaluator
from cudaify.core import Evaluation, Problem, Stage, Variant
from cudaify.core.config import Config
from cudaify.core.errors import ConfigError, CudaifyError
from cudaify.frontend.facts import Program

log = logging.getLogger("cudaify")

LOCAL = "local"  # `--ray` without an address: start a cluster on this machine
INSTALL_HINT = "pip install 'cudaify[ray]'"
# a task whose worker or node died runs again elsewhere, at most this many more times
MAX_RETRIES = 3
# seconds a cancelled task has to stop on its own before its worker is killed
CANCEL_GRACE = 2.0
LOST = "cluster"  # the kind of problem of a candidate the cluster lost (every retry died)


def ray_available() -> bool:
    """Whether the `ray` package can be imported (the `cudaify[ray]` extra)."""
    import importlib.util

    try:
        return importlib.util.find_spec("ray") is not None
    except (ImportError, ValueError):
        return False


def _ray() -> Any:
    try:
        import ray
    except ImportError as missing:
        raise ConfigError(
            f"--ray needs the ray package, which is not installed: {INSTALL_HINT}"
        ) from missing
    return ray


# -- the cluster ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Done:
    """What a task gave back, where it ran and how long it took there."""

    value: Any
    node: str  # the host, and the GPUs Ray gave the task: "gpu-host-1 (GPU 0)"
    seconds: float


class TaskLost(CudaifyError):
    """A task whose every try died with its worker or node."""


class Cluster:
    """A connection to a Ray cluster: started here (`LOCAL`) or joined at an address."""

    def __init__(self, ray: Any, started: bool, address: str):
        self.ray = ray
        self.started = started  # this process started Ray: it shuts it down
        self.address = address
        self._running: set[Any] = set()  # refs of tasks not taken back yet

    @property
    def resources(self) -> dict[str, float]:
        return dict(self.ray.cluster_resources())

    @property
    def gpus(self) -> int:
        return int(self.resources.get("GPU", 0))

    @property
    def cpus(self) -> int:
        return int(self.resources.get("CPU", 0))

    @property
    def nodes(self) -> int:
        return sum(1 for node in self.ray.nodes() if node.get("Alive"))

    def describe(self) -> str:
        where = "a local Ray cluster" if self.address == LOCAL else f"Ray at {self.address}"
        return f"{where}: {self.nodes} node(s), {self.cpus} CPU(s), {self.gpus} GPU(s)"

    def gpu_share(self, in_flight: int) -> float:
        """The share of a GPU each of `in_flight` tasks asks for so that all of them run at
        once over the cluster's GPUs (a whole one at most); 0 without GPUs."""
        if self.gpus == 0:
            return 0.0
        share = self.gpus / max(1, in_flight)
        return 1.0 if share >= 1.0 else max(0.0001, int(share * 10000) / 10000)

    def submit(
        self, function: Callable[..., Any], *args: Any, cpus: float = 1.0, gpus: float = 0.0
    ) -> Any:
        """Run `function(*args)` (importable by name on the workers) as a task; its ref.
        Arguments that are refs of other tasks reach it as their values, once those ran."""
        remote = _remote(self.ray).options(num_cpus=cpus, num_gpus=gpus)
        ref = remote.remote(function, *args)
        self._running.add(ref)
        return ref

    def put(self, value: Any) -> Any:
        """`value` in the cluster's object store, once: tasks given its ref share it."""
        return self.ray.put(value)

    def finished(self, refs: Sequence[Any]) -> list[Any]:
        """Those of `refs` whose task has ended, without waiting."""
        unique = list(dict.fromkeys(refs))  # ray.wait refuses a ref given twice
        if not unique:
            return []
        ready, _ = self.ray.wait(unique, num_returns=len(unique), timeout=0)
        return list(ready)

    def get(self, ref: Any) -> Done:
        """The task's result, waited for; its exception if it raised one of cudaify's."""
        try:
            return self._taken(ref, self.ray.get(ref))
        except KeyboardInterrupt:
            self.cancel(grace=CANCEL_GRACE)
            raise
        except self.ray.exceptions.RayTaskError as failed:
            self._running.discard(ref)
            raise failed.as_instanceof_cause() from None
        except (self.ray.exceptions.RayError, OSError) as lost:
            self._running.discard(ref)
            raise TaskLost(f"the cluster lost a task after {MAX_RETRIES} retries: {lost}") from lost

    def completed(
        self, refs: Sequence[Any], label: str = "tasks"
    ) -> Iterator[tuple[Any, Done | BaseException]]:
        """(ref, Done or the exception it ended with) for each of `refs`, as each finishes,
        with a live progress line on a terminal. Ctrl-C cancels what is still running."""
        pending = list(refs)
        nodes: set[str] = set()
        with _progress(len(pending), label) as advance:
            try:
                while pending:
                    ready, pending = self.ray.wait(pending, num_returns=1, timeout=1.0)
                    for ref in ready:
                        try:
                            done: Done | BaseException = self.get(ref)
                        except Exception as failed:  # noqa: BLE001 - handed back, as the value
                            done = failed
                        if isinstance(done, Done):
                            nodes.add(done.node)
                        advance(len(nodes))
                        yield ref, done
            except BaseException:
                self.cancel(pending, grace=CANCEL_GRACE)
                raise

    def cancel(self, refs: Sequence[Any] | None = None, grace: float = 0.0) -> None:
        """Stop tasks (all still running when `refs` is None): a queued one never starts,
        a running one gets a KeyboardInterrupt, so it kills its nvcc and candidate
        processes on its way out. With `grace`, one still running after that many seconds
        (in a call that does not return to Python: a sleep, a wait on a pipe) has its
        worker process killed."""
        targets = list(dict.fromkeys(self._running if refs is None else refs))
        for ref in targets:
            with contextlib.suppress(Exception):
                self.ray.cancel(ref, force=False, recursive=True)
            self._running.discard(ref)
        if grace <= 0 or not targets:
            return
        with contextlib.suppress(Exception):
            ended, stuck = self.ray.wait(targets, num_returns=len(targets), timeout=grace)
            for ref in stuck:
                with contextlib.suppress(Exception):
                    self.ray.cancel(ref, force=True)

    def close(self) -> None:
        """Cancel what is still running; shut Ray down if this process started it."""
        self.cancel(grace=CANCEL_GRACE)
        if self.started:
            self.ray.shutdown()

    def _taken(self, ref: Any, done: Done) -> Done:
        self._running.discard(ref)
        return done


def connect(address: str | None) -> Cluster:
    """The cluster `--ray` names: `LOCAL` (or nothing) starts one on this machine, anything
    else is an address (`auto`, `HOST:PORT`, `ray://HOST:PORT`) to join. A process already
    connected (a test's cluster, an earlier call) keeps its connection."""
    ray = _ray()
    address = address or LOCAL
    if ray.is_initialized():
        return Cluster(ray, started=False, address=address)
    # the workers' output and Ray's notices stay out of cudaify's; its errors still show
    options: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.ERROR}
    if address == LOCAL:
        options["include_dashboard"] = False
    try:
        # Ray puts the driver's working directory first on every worker's import path: run
        # from a source checkout of cudaify (as on a GPU node set up from one), its
        # `cudaify/` folder hid the installed package and no task could import this module
        with contextlib.chdir(_package_home()):
            ray.init(address=address, **options)
    except (ConnectionError, ValueError, RuntimeError) as failed:
        raise ConfigError(f"--ray {address}: cannot connect to the Ray cluster: {failed}") from None
    return Cluster(ray, started=True, address=address)


def _package_home() -> Path:
    """The folder holding the installed `cudaify` package: on a worker's import path it can
    only lead to this package."""
    import cudaify

    return Path(cudaify.__file__).resolve().parents[1]


@contextlib.contextmanager
def session(address: str | None) -> Iterator[Cluster]:
    """`connect`, then `close` on the way out (also on Ctrl-C: remote work is cancelled)."""
    cluster = connect(address)
    try:
        yield cluster
    finally:
        cluster.close()


_REMOTE: dict[int, Any] = {}


def _remote(ray: Any) -> Any:
    """The one remote function every task goes through (made once per Ray module)."""
    if id(ray) not in _REMOTE:
        # max_retries: system failures (the worker or its node died) only; an exception of
        # the work itself would only happen again
        _REMOTE[id(ray)] = ray.remote(max_retries=MAX_RETRIES, retry_exceptions=False)(_run_timed)
    return _REMOTE[id(ray)]


def _run_timed(function: Callable[..., Any], *args: Any) -> Done:
    """On the worker: run the work and say where and for how long."""
    import ray

    gpu_ids = [str(g) for g in ray.get_gpu_ids()]
    if gpu_ids:
        from cudaify.backend import gpu

        gpu.forget_detected()  # a reused worker may have run on another GPU before
    began = time.perf_counter()
    value = function(*args)
    node = socket.gethostname() + (f" (GPU {','.join(gpu_ids)})" if gpu_ids else "")
    return Done(value, node, time.perf_counter() - began)


@contextlib.contextmanager
def _progress(total: int, label: str) -> Iterator[Callable[[int], None]]:
    """A live bar on a terminal (done, total, nodes that finished work, elapsed), nothing
    in pipes and logs. Lines printed meanwhile appear above it."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    if not console.is_terminal:
        yield lambda nodes: None
        return
    columns = (
        TextColumn("[bold]ray[/bold] {task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("on {task.fields[nodes]} node(s)"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task(label, total=total, nodes=0)
        yield lambda nodes: bar.update(task, advance=1, nodes=nodes)


# -- cache entries that travel with a task ----------------------------------------------


@dataclass(frozen=True)
class Entry:
    """One file of the cache: where it lies under the root, its bytes, whether it runs."""

    path: str  # kind/fan/key
    data: bytes
    executable: bool


@dataclass(frozen=True)
class RecordingCache(Cache):
    """A cache that remembers which entries were read (found) and written through it, so
    that they can travel with a task or come back from one."""

    read: set[str] = field(default_factory=set, compare=False, hash=False)
    written: set[str] = field(default_factory=set, compare=False, hash=False)

    def file(self, kind: str, key: str) -> Path | None:
        found = super().file(kind, key)
        if found is not None:
            self.read.add(self._relative(found))
        return found

    def write_bytes(self, kind: str, key: str, data: bytes, executable: bool = False) -> Path:
        return self._wrote(super().write_bytes(kind, key, data, executable))

    def store_file(self, kind: str, key: str, source: Path, executable: bool = False) -> Path:
        return self._wrote(super().store_file(kind, key, source, executable))

    def _wrote(self, path: Path) -> Path:
        self.written.add(self._relative(path))
        return path

    def _relative(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def entries(self, paths: set[str]) -> list[Entry]:
        """The entries at `paths` as they are now (one removed meanwhile is left out)."""
        found = []
        for relative in sorted(paths):
            path = self.root / relative
            with contextlib.suppress(OSError):
                found.append(Entry(relative, path.read_bytes(), os.access(path, os.X_OK)))
        return found

    def add(self, entries: Sequence[Entry]) -> None:
        """Put entries another node made into this cache (atomically, as any write); one
        present already is left as it is: entries are named by their content's hash."""
        for entry in entries:
            kind, *_, key = Path(entry.path).parts
            if self.file(kind, key) is None:
                Cache.write_bytes(self, kind, key, entry.data, entry.executable)


# -- candidates on the cluster ------------------------------------------------------------


@dataclass(frozen=True)
class Evaluated:
    """A candidate task's answer: its evaluation (None from a build-only task) and the
    cache entries the worker wrote."""

    evaluation: Evaluation | None
    entries: list[Entry]


@dataclass(frozen=True)
class Job:
    """Everything a worker needs to verify candidates of one program: the program (source,
    flags, path), the settings, whether candidates run on a GPU, the reference's cache
    entries, and when the command's time budget ends (wall clock; None: no limit)."""

    program: Program
    config: Config
    run_on_gpu: bool
    reference: list[Entry]
    ends_at: float | None


def _worker_evaluator(job: Job, built: Sequence[Entry] = ()) -> tuple[Evaluator, RecordingCache]:
    cache = RecordingCache(Cache.for_config(job.config).root)
    cache.add(job.reference)
    cache.add(built)
    cache.written.clear()  # only what this task makes goes back
    seconds = None if job.ends_at is None else max(0.001, job.ends_at - time.time())
    evaluator = Evaluator(
        job.program,
        job.config,
        cache=cache,
        run_on_gpu=job.run_on_gpu,
        differential=job.config.differential,
        profile=job.config.profile,
        deadline=Deadline(seconds),
    )
    return evaluator, cache


def build_candidate(job: Job, variant: Variant) -> Evaluated:
    """On a CPU worker: build the candidate (as the GPU run will want it: its timing build
    where it can be wrapped). Without GPUs in the cluster this is the whole evaluation:
    compiled, nothing run, as in-process without a GPU."""
    evaluator, cache = _worker_evaluator(job)
    try:
        if job.run_on_gpu:
            evaluator.compile(variant)
            return Evaluated(None, cache.entries(cache.written))
        return Evaluated(evaluator.screen(variant), cache.entries(cache.written))
    finally:
        evaluator.close()


def run_candidate(
    job: Job, variant: Variant, built: Done, how: str, evaluation: Evaluation | None = None
) -> Evaluated:
    """On a GPU worker: the candidate's build (from `build_candidate`) put in this node's
    cache, then what `how` names: `screen`, `evaluate`, `remeasure` or `detail` (the last
    two of `evaluation`), as the in-process Evaluator does them."""
    evaluator, cache = _worker_evaluator(job, built.value.entries)
    try:
        if how == "screen":
            answer = evaluator.screen(variant)
        elif how == "evaluate":
            answer = evaluator.evaluate(variant)
        elif how == "remeasure" and evaluation is not None:
            answer = evaluator.remeasure(variant, evaluation, detail=False)
        elif how == "detail" and evaluation is not None:
            answer = evaluator.detail(variant, evaluation)
        else:
            raise ValueError(f"run_candidate: nothing to do for {how!r}")
        return Evaluated(answer, cache.entries(cache.written))
    finally:
        evaluator.close()


def gpu_arch() -> str:
    """On a GPU worker: the architecture nvcc should build for there."""
    from cudaify.backend import gpu

    return gpu.default_arch(None)


class RemoteEvaluator(Evaluator):
    """An Evaluator whose candidates are verified on the cluster: `prefetch` starts their
    tasks at once (the cluster, not this machine's idle cores, sets how many run), `screen`,
    `evaluate`, `remeasure` and `detail` wait for theirs. The reference is run here, once,
    and travels to the workers as cache entries. The search, the rules and the structural
    checks stay in this process."""

    def __init__(
        self,
        cluster: Cluster,
        program: Program,
        config: Config,
        deadline: Deadline | None = None,
        breakdown: Breakdown | None = None,
    ):
        on_gpu = cluster.gpus > 0
        if on_gpu and not config.arch:
            # every build, on whichever node, for the GPUs that will run it
            config = config.with_(arch=cluster.get(cluster.submit(gpu_arch, gpus=1)).value)
        self.cluster = cluster
        log.info("candidates verified on %s", cluster.describe())
        self.recording = RecordingCache(Cache.for_config(config).root)
        super().__init__(
            program,
            config,
            cache=self.recording,
            run_on_gpu=on_gpu,
            differential=config.differential,
            profile=config.profile,
            deadline=deadline,
            breakdown=breakdown,
        )
        self._job: Any = None  # the ref of this program's Job in the object store
        self._builds: dict[str, Any] = {}  # variant key -> its build task's ref
        self._tasks: dict[str, Any] = {}  # variant key -> its screening task's ref

    def start_ahead(self) -> None:
        """Nothing: the builds and their support objects are the workers' (their cache
        entries come back with their results), and so is the final timing."""

    def job(self) -> Any:
        """The reference run here first (once), its cache entries then sent with every
        task: its builds, its output and exit code, its timings of the region."""
        if self._job is None:
            self.recording.read.clear()
            self.recording.written.clear()
            if self.run_on_gpu:
                self.reference()
                self.reference_timing(self.region)
            else:
                self.cpu_profile(self.region)
            used = self.recording.read | self.recording.written
            remaining = self.deadline.remaining()
            job = Job(
                self.program,
                self.config,
                self.run_on_gpu,
                self.recording.entries(used),
                None if remaining is None else time.time() + remaining,
            )
            self._job = self.cluster.put(job)
        return self._job

    def _build_task(self, variant: Variant) -> Any:
        if variant.key not in self._builds:
            self._builds[variant.key] = self.cluster.submit(build_candidate, self.job(), variant)
        return self._builds[variant.key]

    def _run_task(self, variant: Variant, how: str, evaluation: Evaluation | None = None) -> Any:
        built = self._build_task(variant)
        return self.cluster.submit(
            run_candidate, self.job(), variant, built, how, evaluation, cpus=1.0, gpus=1.0
        )

    def _screening(self, variant: Variant) -> Any:
        if not self.run_on_gpu:
            return self._build_task(variant)
        return self._run_task(variant, "screen")

    def prefetch(self, variants: Sequence[Variant]) -> None:
        if self._cancel.is_set():
            return
        for variant in variants:
            if variant.key not in self._tasks:
                self._tasks[variant.key] = self._screening(variant)

    def prefetch_harness(self, variants: Sequence[Variant]) -> None:
        """Nothing: a finalist's harness is built on the GPU worker that times it."""

    def _measure_start(self) -> None:
        """Nothing here: each GPU worker's evaluator measures its own GPU's fixed cost,
        and its timings carry it."""

    def prefetch_plain(self, variants: Sequence[Variant]) -> None:
        """Nothing: a close call's turns are not run on the cluster (`in_turns`)."""

    def in_turns(
        self, variant: Variant, runs: int, turn: float = 0.0
    ) -> tuple[float, float, int] | str:
        """Why there are none: the reference runs here, the candidates on the cluster's
        GPU workers, so no machine runs both in turns (the reading then stands from
        UNCONFIRMED_MIN up, as where the time left holds no turn)."""
        return "the candidates ran on the cluster, the reference here"

    def screen(self, variant: Variant) -> Evaluation:
        ref = self._tasks.pop(variant.key, None) or self._screening(variant)
        return self._answer(variant, ref)

    def evaluate(self, variant: Variant) -> Evaluation:
        if not self.run_on_gpu:
            return self._answer(variant, self._build_task(variant))
        return self._answer(variant, self._run_task(variant, "evaluate"))

    def remeasure(
        self,
        variant: Variant,
        evaluation: Evaluation,
        detail: bool = True,
        beat: float | None = None,
    ) -> Evaluation:
        """As Evaluator.remeasure, but every finalist is timed in full on its worker
        (`beat` is not sent: a finalist's runs are one task)."""
        if not (self.run_on_gpu and evaluation.verified and evaluation.ran_on_gpu):
            return evaluation
        remeasured = self._answer(variant, self._run_task(variant, "remeasure", evaluation))
        return self.detail(variant, remeasured) if detail else remeasured

    def detail(self, variant: Variant, evaluation: Evaluation) -> Evaluation:
        if not (self.run_on_gpu and evaluation.verified and evaluation.ran_on_gpu):
            return evaluation
        return self._answer(variant, self._run_task(variant, "detail", evaluation))

    def _answer(self, variant: Variant, ref: Any) -> Evaluation:
        """A task's evaluation, the cache entries its worker (and its build's) wrote stored
        here; a candidate whose every try died with its worker is a failed candidate, not
        the end of the search."""
        with self.breakdown.measure("run" if self.run_on_gpu else "compile"):
            try:
                done = self.cluster.get(ref)
                build = self._builds.get(variant.key)
                if self.run_on_gpu and build is not None and build is not ref:
                    self.recording.add(self.cluster.get(build).value.entries)
            except TaskLost as lost:
                self._builds.pop(variant.key, None)  # built again if it is asked again
                return Evaluation(stage=Stage.NONE, problems=(Problem(LOST, str(lost)),))
        answer: Evaluated = done.value
        self.recording.add(answer.entries)
        if answer.evaluation is None:
            raise RuntimeError("a build task's answer was taken for an evaluation")
        return answer.evaluation

    def close(self) -> None:
        """Cancel the tasks started ahead that have not ended; finished builds are kept (a
        finalist's timing reuses its build). Then as Evaluator.close."""
        started = [*self._tasks.values(), *self._builds.values()]
        ended = set(self.cluster.finished(started))
        self.cluster.cancel([ref for ref in started if ref not in ended])
        self._tasks.clear()
        self._builds = {key: ref for key, ref in self._builds.items() if ref in ended}
        super().close()
