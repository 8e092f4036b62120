"""`cudaify bench`: compile every program of a benchmark folder with one or more search
strategies, verify and time each on the GPU, and report (CSV, Markdown, a PNG plot, and a
strategy comparison). Programs run in parallel worker processes; GPU runs are serialised
across them by the backend's GPU lock, so timings do not disturb each other. On a machine
with several GPUs the workers are spread over them, each worker pinned to one GPU (its own
lock, its own timings)."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import multiprocessing
import os
import re
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cudaify.core.config import Config
from cudaify.core.errors import CudaifyError
from cudaify.mcgs.explain import close_call_text

SOURCES = (".c", ".cpp", ".cc", ".cxx")
_CATEGORY = re.compile(r"^\s*\**\s*Category:\s*(\S+)", re.M)


@dataclass(frozen=True)
class BenchRow:
    program: str
    category: str
    strategy: str
    stage: str  # furthest stage of the written variant; "error" when cudaify failed
    verified: bool
    methods: str
    cpu_seconds: float | None  # the reference's whole-program time (gcc -O3)
    cpu_region: float | None
    gpu_region: float | None
    region_speedup: float | None
    program_speedup: float | None
    roofline_percent: float | None
    search_seconds: float
    note: str = ""
    wall_seconds: float = 0.0  # the whole cudaify run: analysis, search, final timing
    node: str = ""  # with --ray: the host (and GPU) that ran it
    # the roof ("memory" or "compute") of the kernel that took the most time
    bound: str | None = None
    # that kernel: "name: 81% of the memory roof (...)", see backend/roofline.describe
    kernel: str = ""
    # steps of the written variant's path that the language model applied
    model_steps: int = 0
    # the run's seconds with the language model (loading, slot waits, answers) and its edits
    model_seconds: float = 0.0
    slm_calls: int = 0
    # the search's model answers that made a program nvcc compiled (a state of its graph),
    # and of those, the ones verified on the GPU
    model_compiled: int = 0
    model_verified: int = 0
    # `--retime N`: the written program and gcc -O3's build of the input timed again after
    # every compile, alone, N runs each in turns (medians of the whole process's wall time)
    quiet_cpu_seconds: float | None = None
    quiet_gpu_seconds: float | None = None
    quiet_program_speedup: float | None = None
    # the compile's close call (pipeline.confirmed): "1.16x -> 0.91x in 3 turns", or why
    # it was not timed in turns ("" where its reading was no close call)
    close_call: str = ""


def discover(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.suffix in SOURCES and p.is_file())


def category_of(path: Path) -> str:
    found = _CATEGORY.search(path.read_text(errors="replace")[:2000])
    return found.group(1).strip(" .") if found else path.parent.name


def run_one(path: Path, strategy: str, config: Config, keep: Path | None = None) -> BenchRow:
    """One program's compile as a row. `keep`: the folder (`-o`'s `programs`) where a
    verified program it wrote is kept, as `STRATEGY/NAME.cu` (`kept`), and where every
    compile's trace is kept, as `STRATEGY/NAME.trace.json` (its search: what was tried,
    what died and why, what each candidate read)."""
    from cudaify import pipeline

    began = time.perf_counter()
    base = BenchRow(
        path.stem,
        category_of(path),
        strategy,
        "error",
        False,
        "",
        None,
        None,
        None,
        None,
        None,
        None,
        0.0,
    )
    try:
        with tempfile.TemporaryDirectory(prefix="cudaify-bench-") as work:
            out = str(Path(work) / f"{path.stem}.cu")
            result = pipeline.compile_file(str(path), out, config.with_(strategy=strategy))
    except CudaifyError as exc:
        elapsed = time.perf_counter() - began
        return dataclasses.replace(
            base,
            note=str(exc).splitlines()[0][:200],
            search_seconds=elapsed,
            wall_seconds=elapsed,
        )
    trace = result.trace
    timing = trace.get("timing") or {}
    reference, candidate = timing.get("reference") or {}, timing.get("candidate") or {}
    chosen = trace.get("chosen") or []
    compiled, verified = model_answers(trace)
    row = dataclasses.replace(
        base,
        stage=chosen[-1]["stage"] if chosen else "none",
        verified=result.verified,
        methods="+".join(result.methods) or "-",
        cpu_seconds=reference.get("wall"),
        cpu_region=reference.get("region"),
        gpu_region=candidate.get("region"),
        region_speedup=result.region_speedup,
        program_speedup=timing.get("program_speedup"),
        roofline_percent=timing.get("roofline_percent"),
        bound=timing.get("roofline_bound"),
        kernel=dominant_kernel(candidate.get("kernels") or []),
        search_seconds=trace.get("search", {}).get("seconds", time.perf_counter() - began),
        note=note_of(result.warnings),
        wall_seconds=time.perf_counter() - began,
        model_steps=sum(1 for step in chosen if step.get("applied_by") == "slm"),
        model_seconds=(trace.get("time") or {}).get("model") or 0.0,
        slm_calls=trace.get("search", {}).get("slm_calls", 0),
        model_compiled=compiled,
        model_verified=verified,
        close_call=close_call_text(trace.get("close_call") or {}),
    )
    if result.verified and result.offloaded and not candidate.get("kernels"):
        row = with_written_roofline(row, path, result.text, config)
    if keep is not None:
        written = kept(keep, strategy, path.stem)
        written.parent.mkdir(parents=True, exist_ok=True)
        trace_text = json.dumps(result.trace, indent=1, default=str) + "\n"
        pipeline.write_atomically(str(written.with_suffix(".trace.json")), trace_text)
        if result.verified and result.offloaded:
            pipeline.write_atomically(str(written), result.text)
    return dataclasses.replace(row, wall_seconds=time.perf_counter() - began)


def kept(keep: Path, strategy: str, program: str) -> Path:
    """Where `run_one` keeps the program a strategy wrote for `program`."""
    return keep / strategy / f"{program}.cu"


@dataclass(frozen=True)
class Quiet:
    """Medians of the whole process's wall time, runs of each build in turns."""

    cpu_seconds: float
    gpu_seconds: float


def retime_rows(
    rows: Sequence[BenchRow],
    programs: Sequence[Path],
    keep: Path,
    config: Config,
    runs: int,
    progress: Callable[[BenchRow], None] | None = None,
) -> list[BenchRow]:
    """`rows` with the whole-program speedups of the programs kept under `keep` measured
    again (`retime`), one program at a time, once every compile is done: a compile's own
    reading of the whole program rests on few runs (one for a reference of a second or
    more, one for a finalist its budget cuts short), taken while the other compiles of
    `-j N` build and run. A row whose program was not kept, or could not be timed, keeps
    its reading; why is added to its note."""
    by_name = {path.stem: path for path in programs}
    done = []
    for row in rows:
        written = kept(keep, row.strategy, row.program)
        if row.verified and written.is_file() and row.program in by_name:
            quiet = retime(by_name[row.program], written, config, runs, row.cpu_seconds)
            row = _retimed(row, quiet)
            if progress:
                progress(row)
        done.append(row)
    return done


def _retimed(row: BenchRow, quiet: Quiet | str) -> BenchRow:
    if isinstance(quiet, str):
        why = f"not retimed: {quiet}"
        return dataclasses.replace(row, note=f"{why}; {row.note}" if row.note else why)
    return dataclasses.replace(
        row,
        quiet_cpu_seconds=quiet.cpu_seconds,
        quiet_gpu_seconds=quiet.gpu_seconds,
        quiet_program_speedup=quiet.cpu_seconds / quiet.gpu_seconds,
    )


def retime(
    source: Path, written: Path, config: Config, runs: int, seconds: float | None = None
) -> Quiet | str:
    """The input built by gcc -O3 (C) or g++ -O3 (C++) and the program cudaify wrote for
    it built by nvcc, each run `runs` times in turns (reference, program, reference, ...)
    after one run of each that is not counted (it loads the binaries and the driver into
    the page cache), holding the GPU lock: a `Quiet`, or why there is none (a build or a
    run failed, or the program's output differs from the reference's by more than
    --rtol / --atol). `seconds`: the reference's time in the compile (each run's limit is
    --run-timeout, else 10 times it, at least 10 s)."""
    from cudaify.backend import compare, gpu
    from cudaify.backend.cache import Cache
    from cudaify.backend.compile import compile_cuda, compile_reference
    from cudaify.backend.gpulock import GpuLock, lock_path
    from cudaify.backend.runner import in_turns, time_limit
    from cudaify.frontend.parse import language_of

    cache = Cache.default()
    text = source.read_text(errors="surrogateescape")
    language = language_of(str(source), tuple(config.flags))
    reference = compile_reference(
        text, language, config.flags, cache=cache, name=source.name, source_dir=source.parent
    )
    if not reference.ok or reference.binary is None:
        return f"gcc -O3 failed ({reference.diagnostics.strip()[:120]})"
    program = compile_cuda(
        written.read_text(errors="surrogateescape"),
        config.flags,
        gpu.default_arch(config.arch),
        cache=cache,
        name=written.name,
        source_dir=source.parent,
    )
    if not program.ok or program.binary is None:
        return f"nvcc failed ({program.diagnostics.strip()[:120]})"
    with GpuLock(lock_path(cache.root)):
        limit = time_limit(seconds, config.run_timeout)
        timed = in_turns(reference.binary, program.binary, runs, limit)
    if isinstance(timed, str):
        return timed
    first, second, outputs = timed
    differs = compare.compare(outputs[0], outputs[1], config.rtol, config.atol)
    if differs is not None:
        return f"its output differs from gcc -O3's ({differs})"
    return Quiet(statistics.median(first), statistics.median(second))


def model_answers(trace: dict[str, Any]) -> tuple[int, int]:
    """(compiled, verified): the model edges of the search's graph whose answer became a
    state (it passed the structural check and nvcc), and those whose state was verified."""
    states = (trace.get("search") or {}).get("graph") or []
    stage = {state.get("key"): state.get("stage") for state in states}
    children = [
        edge["child"]
        for state in states
        for edge in state.get("edges") or []
        if edge.get("how") == "slm" and edge.get("child")
    ]
    return len(children), sum(1 for child in children if stage.get(child) == "correct")


def with_written_roofline(row: BenchRow, path: Path, text: str, config: Config) -> BenchRow:
    """`row` with the roofline of the program it wrote, measured after the compile: the
    kernel timing comes last in a compile, and a search that used its whole budget leaves
    none (half the suite's rows under -j 4). Said in the row's note; the row as it was
    where it cannot be measured (no GPU, a failed run)."""
    from cudaify import pipeline

    try:
        measured = pipeline.written_roofline(str(path), text, config)
    except CudaifyError:
        return row
    if measured is None or not measured.kernels:
        return row
    said = "roofline measured after the compile (its search used the time budget)"
    return dataclasses.replace(
        row,
        roofline_percent=measured.roofline_percent,
        bound=measured.bound,
        kernel=_described_top(measured.kernels),
        note=f"{said}; {row.note}" if row.note else said,
    )


def dominant_kernel(kernels: Sequence[dict[str, Any]]) -> str:
    """The trace's kernel that took the most time, in one line ("" when none was timed)."""
    from cudaify.core import KernelRoofline

    fields = {f.name for f in dataclasses.fields(KernelRoofline)}
    return _described_top(
        [KernelRoofline(**{k: v for k, v in kernel.items() if k in fields}) for kernel in kernels]
    )


def _described_top(kernels: Sequence[Any]) -> str:
    """The kernel (a `KernelRoofline`) that took the most time, in one line ("" for none)."""
    from cudaify.backend.roofline import describe

    if not kernels:
        return ""
    return describe(max(kernels, key=lambda k: k.seconds or 0.0))


def note_of(warnings: Sequence[str], limit: int = 300) -> str:
    """A row's note: the outcome first (kept as host code, and why), then the methods
    that did not apply, cut to `limit` characters."""
    skipped = [w for w in warnings if " not applied: " in w]
    outcome = [w for w in warnings if " not applied: " not in w]
    return "; ".join(outcome + skipped)[:limit]


def _run_one(args: tuple[Path, str, Config, Path | None]) -> BenchRow:
    return run_one(*args)


def run_bench(
    programs: list[Path],
    strategies: list[str],
    config: Config,
    jobs: int = 1,
    progress=None,
    cluster: Any = None,
    keep: Path | None = None,
) -> list[BenchRow]:
    """Every program compiled with every strategy; `keep`: where the programs written
    are kept (see run_one; not with a cluster, whose nodes write them)."""
    work = [(path, strategy, config) for strategy in strategies for path in programs]
    if cluster is not None:  # a backend.cluster.Cluster: --ray
        return run_on_cluster(cluster, work, jobs, progress)
    rows: list[BenchRow] = []
    if jobs <= 1:
        for item in work:
            rows.append(_run_one((*item, keep)))
            if progress:
                progress(rows[-1])
        return rows
    # Reported as each one finishes (a bench cut short keeps every finished row in
    # results.partial.jsonl), returned in the order of `work`.
    started = multiprocessing.Value("i", 0)  # workers started, to pin each to one GPU
    with ProcessPoolExecutor(
        max_workers=jobs, initializer=pin_worker, initargs=(worker_gpus(), started)
    ) as pool:
        futures = {
            pool.submit(_run_one, (*work[index], keep)): index for index in submission_order(work)
        }
        done: dict[int, BenchRow] = {}
        for future in as_completed(futures):
            row = future.result()
            done[futures[future]] = row
            if progress:
                progress(row)
    return [done[index] for index in range(len(work))]


def run_on_cluster(
    cluster: Any,
    work: Sequence[tuple[Path, str, Config]],
    jobs: int = 0,
    progress=None,
    task: Callable[..., BenchRow] | None = None,
) -> list[BenchRow]:
    """Each (program, strategy) a Ray task (`task`, default `run_shipped`) that carries the
    program's text; `jobs` of them at once (0: as many as the cluster has GPUs, else CPUs),
    each with its share of a GPU. A row comes back with the node that ran it."""
    in_flight = jobs or cluster.gpus or cluster.cpus or 1
    share = cluster.gpu_share(in_flight)
    refs = {
        cluster.submit(
            task or run_shipped,
            str(path),
            path.read_text(errors="surrogateescape"),
            strategy,
            config.with_(ray=None),  # the program's candidates: in its worker's process
            gpus=share,
        ): index
        for index, (path, strategy, config) in ((i, work[i]) for i in submission_order(work))
    }
    done: dict[int, BenchRow] = {}
    for ref, answer in cluster.completed(list(refs), label="programs"):
        path, strategy, _ = work[refs[ref]]
        if isinstance(answer, BaseException):  # lost with every retry, or a bug of ours
            row = dataclasses.replace(failed_row(path, strategy), note=str(answer)[:200])
        else:
            row = dataclasses.replace(answer.value, node=answer.node)
        done[refs[ref]] = row
        if progress:
            progress(row)
    return [done[index] for index in range(len(work))]


def run_shipped(path: str, text: str, strategy: str, config: Config) -> BenchRow:
    """A program's bench run on a cluster node: at its own path where that holds the same
    text (this machine, a shared file system), else from a copy under the same name."""
    original = Path(path)
    with contextlib.suppress(OSError):
        if original.read_text(errors="surrogateescape") == text:
            return run_one(original, strategy, config)
    with tempfile.TemporaryDirectory(prefix="cudaify-shipped-") as folder:
        copy = Path(folder) / original.name
        copy.write_text(text, errors="surrogateescape")
        found = _CATEGORY.search(text[:2000])
        category = found.group(1).strip(" .") if found else original.parent.name
        return dataclasses.replace(run_one(copy, strategy, config), category=category)


def failed_row(path: Path, strategy: str) -> BenchRow:
    return BenchRow(path.stem, path.parent.name, strategy, "error", False, "", *(None,) * 6, 0.0)


def worker_gpus() -> list[str]:
    """The GPUs bench's workers are spread over: CUDA_VISIBLE_DEVICES's entries where it is
    set (indices or UUIDs; set and empty: none), else every GPU nvidia-smi lists."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return [entry.strip() for entry in visible.split(",") if entry.strip()]
    from cudaify.backend.gpu import detect_gpus

    return [str(index) for index in range(len(detect_gpus()))]


def pin_worker(gpus: list[str], started: Any) -> None:
    """A worker process's initializer: the n-th worker to start runs on GPU n mod len(gpus)
    (CUDA_VISIBLE_DEVICES, read by the CUDA runtime, llama.cpp and the GPU lock alike),
    before anything in it touches CUDA. `started` is a shared counter. One GPU or none:
    nothing to choose, the worker keeps what it inherited."""
    from cudaify.backend import gpu

    if len(gpus) < 2:
        return
    with started.get_lock():
        index = started.value
        started.value += 1
    os.environ["CUDA_VISIBLE_DEVICES"] = gpus[index % len(gpus)]
    gpu.forget_detected()  # nvidia-smi is asked again, for this worker's GPU alone


def submission_order(work: Sequence[tuple[Path, str, Config]]) -> list[int]:
    """Indices of `work` program by program (every strategy of the first program, then
    of the second, ...): a comparison cut short then holds all of its strategies' rows for
    the programs it got to, instead of one strategy's rows for every program."""
    programs = list(dict.fromkeys(path for path, _, _ in work))
    return sorted(range(len(work)), key=lambda index: (programs.index(work[index][0]), index))


def check_strategies(names: list[str], config: Config) -> None:
    """Fail before any program runs: an unknown strategy, or a model-only one without a
    model at hand."""
    from cudaify.core.errors import ConfigError
    from cudaify.pipeline import STRATEGIES, slm_available

    if not names:
        raise ConfigError("no strategy named")
    for name in names:
        if name not in STRATEGIES:
            raise ConfigError(f"unknown strategy '{name}' (available: {', '.join(STRATEGIES)})")
        if name in ("oneshot", "cot") and not slm_available(config):
            raise ConfigError(
                f"strategy {name} needs a language model: pass --model, --llm-url or --slm on"
            )


def wall_times(rows: list[BenchRow]) -> tuple[list[str], list[str], dict[tuple[str, str], float]]:
    """(programs, strategies, seconds of the whole cudaify run per (program, strategy))."""
    programs = list(dict.fromkeys(row.program for row in rows))
    strategies = list(dict.fromkeys(row.strategy for row in rows))
    seconds = {(row.program, row.strategy): row.wall_seconds for row in rows}
    return programs, strategies, seconds


def wall_table(rows: list[BenchRow]) -> str:
    """Markdown: one line per program, one column per strategy, the seconds its whole
    cudaify run took; a last line with the totals."""
    programs, strategies, seconds = wall_times(rows)
    lines = ["| program | " + " | ".join(strategies) + " |"]
    lines.append("|---|" + "---|" * len(strategies))
    for program in programs:
        cells = [_seconds(seconds.get((program, s))) for s in strategies]
        lines.append(f"| {program} | " + " | ".join(cells) + " |")
    totals = [sum(seconds.get((p, s), 0.0) for p in programs) for s in strategies]
    lines.append("| total | " + " | ".join(_seconds(t) for t in totals) + " |")
    return "\n".join(lines) + "\n"


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def write_wall_csv(rows: list[BenchRow], path: Path) -> None:
    import csv

    programs, strategies, seconds = wall_times(rows)
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["program", *strategies])
        for program in programs:
            values = [seconds.get((program, s)) for s in strategies]
            writer.writerow([program, *("" if v is None else f"{v:.3f}" for v in values)])
