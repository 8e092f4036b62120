"""`cudaify graph ...`: build, merge, inspect and draw reasoning graphs. Thin: every
command parses its arguments, calls one function of the package and prints.

A bad graph or trajectory file ends the command with exit code 2 and one line naming the
file and the JSON path of the first problem."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import click

from cudaify.core.errors import CudaifyError
from cudaify.regraph.graph import GraphFormatError, ReGraph, default_graph, load, save
from cudaify.regraph.trajectory import TrajectoryError

EXIT_BAD_FILE = 2

graph = click.Group("graph", help="Build, merge, inspect and draw reasoning graphs.")


def _die(message: str, code: int = EXIT_BAD_FILE) -> NoReturn:
    click.echo(f"cudaify graph: error: {message}", err=True)
    sys.exit(code)


def _load(path: str | None) -> ReGraph:
    """The graph at `path`, or the shipped default."""
    try:
        return load(path) if path else default_graph()
    except GraphFormatError as exc:
        _die(f"{path or 'default graph'}: {exc}")


def _save(result: ReGraph, output: str) -> None:
    try:
        save(result, output)
    except OSError as exc:
        _die(f"{output}: cannot write: {exc.strerror or exc}")


def _guarded(action: Callable[[], Any]) -> Any:
    try:
        return action()
    except (TrajectoryError, GraphFormatError) as exc:
        _die(str(exc))
    except CudaifyError as exc:
        _die(str(exc), exc.exit_code)


@graph.command("build")
@click.argument("corpus_dir", type=click.Path(exists=True, file_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False))
@click.option("--rules", is_flag=True, help="Add rule-generated trajectories.")
@click.option(
    "--methods",
    default="",
    help=(
        "Methods the rules combine (default: every registered method the search moves "
        "to; fp_exact, the rounding rescue, is not one)."
    ),
)
@click.option("--max-length", default=3, show_default=True, help="Longest rule sequence.")
@click.option("--llm-url", default=None, help="OpenAI-compatible endpoint of a teacher model.")
@click.option("--llm-model", default=None, help="The teacher's model name at that endpoint.")
@click.option(
    "--teacher-key-env",
    default="CUDAIFY_LLM_API_KEY",
    show_default=True,
    help="Environment variable holding the teacher's API key.",
)
@click.option(
    "--teacher-replay",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="JSON-lines file of recorded teacher answers (instead of an endpoint).",
)
@click.option(
    "--base",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="Extend this graph instead of starting empty.",
)
@click.option("--no-curated", is_flag=True, help="Ignore *.trajectory.json files in the corpus.")
@click.option(
    "--save-trajectories",
    type=click.Path(file_okay=False),
    default=None,
    help="Write the teacher's and the rules' trajectories here (as *.trajectory.json).",
)
@click.option(
    "-j",
    "--jobs",
    default=1,
    show_default=True,
    type=click.IntRange(1),
    help="Programs the rules work on at once (nvcc in parallel; GPU runs one at a time).",
)
@click.option(
    "--max-examples",
    default=8,
    show_default=True,
    type=click.IntRange(1),
    help="Examples kept per edge (diverse programs first; the stats count every step).",
)
@click.option(
    "--max-steps",
    default=None,
    type=click.IntRange(1),
    help="Rule steps verified per program (default: every sequence); the tree grows "
    "evenly, so most paths still reach --max-length.",
)
@click.option(
    "--runs",
    default=None,
    type=click.IntRange(1),
    help="Timed GPU runs per verified step (default: the configuration's runs).",
)
@click.option(
    "--time-limit",
    default=None,
    type=click.FloatRange(min=1),
    help="Seconds after which no further rule or trajectory is tried; the graph holds what "
    "was verified by then (and says it was cut short).",
)
@click.option(
    "--objective",
    default="program",
    show_default=True,
    type=click.Choice(["program", "region"]),
    help="The speedup an edge's gain over its parent is measured by: the whole program's or "
    "the offloaded region's (as `cudaify compile --objective`).",
)
@click.option("-v", "--verbose", is_flag=True, help="Say what each program gave.")
def build_command(
    corpus_dir: str,
    output: str,
    rules: bool,
    methods: str,
    max_length: int,
    llm_url: str | None,
    llm_model: str | None,
    teacher_key_env: str,
    teacher_replay: str | None,
    base: str | None,
    no_curated: bool,
    save_trajectories: str | None,
    jobs: int,
    max_examples: int,
    max_steps: int | None,
    runs: int | None,
    time_limit: float | None,
    objective: str,
    verbose: bool,
) -> None:
    """Build a graph from the programs and trajectory files in CORPUS_DIR. Every step is
    checked structurally and compiled with nvcc; on a machine with a GPU it is also run,
    compared with the program's own output and timed, and only a correct one is kept.
    Each edge's statistics record its gain (the step's speedup over its parent's); the
    graph's meta records the date and the GPU they were measured on."""
    import logging

    if verbose:
        logging.basicConfig(level=logging.INFO, format="cudaify: %(message)s", force=True)
    from cudaify.pipeline import graph_build_stages
    from cudaify.regraph.build import Teachers, build, verification_line
    from cudaify.regraph.learn import gpu_name
    from cudaify.regraph.report import format_stats, stats

    teacher = _teacher(llm_url, llm_model, teacher_key_env, teacher_replay)
    teachers = Teachers(
        rules=rules,
        methods=_method_list(methods),
        max_length=max_length,
        max_steps=max_steps,
        deadline=time.time() + time_limit if time_limit else None,
        model=teacher,
        curated=not no_curated,
        objective=objective,
    )
    start = _load(base) if base else None
    stages = graph_build_stages(_build_config(runs, objective))
    gpu = gpu_name()
    if not gpu:
        click.echo(
            "cudaify graph: warning: no GPU found: every step is compiled with nvcc but not "
            'run; the examples are marked verified "compile", with no speedup',
            err=True,
        )
    report = _guarded(
        lambda: build(corpus_dir, stages, teachers, start, teacher, jobs, max_examples, gpu)
    )
    for problem in report.problems:
        click.echo(f"cudaify graph: warning: {problem}", err=True)
    _save(report.graph, output)
    if save_trajectories:
        _write_trajectories(report.trajectories, Path(save_trajectories))
    click.echo(f"{output}: {verification_line(report.steps)}")
    click.echo(format_stats(stats(report.graph)))


def _build_config(runs: int | None, objective: str) -> Any:
    from cudaify.core.config import Config

    config = Config(objective=objective)
    return config.with_(runs=runs) if runs is not None else config


def _write_trajectories(trajectories: list[Any], folder: Path) -> None:
    from cudaify.regraph.trajectory import save as save_trajectory

    folder.mkdir(parents=True, exist_ok=True)
    counts: dict[tuple[str, str], int] = {}
    for trajectory in trajectories:
        key = (trajectory.program, trajectory.source)
        counts[key] = counts.get(key, 0) + 1
        name = f"{trajectory.program}.{trajectory.source}{counts[key]}.trajectory.json"
        save_trajectory(trajectory, folder / name)
    click.echo(f"{folder}: {len(trajectories)} trajectory file(s)")


def _method_list(methods: str) -> tuple[str, ...]:
    from cudaify.transforms import METHODS

    # by default the search's moves: a method nothing leads to (fp_exact, the rounding
    # rescue every strategy applies itself) is not one
    moves = tuple(name for name, method in METHODS.items() if method.follows)
    names = tuple(m for m in methods.replace(",", " ").split() if m) or moves
    unknown = [m for m in names if m not in METHODS]
    if unknown:
        _die(f"unknown method '{unknown[0]}' (known: {', '.join(sorted(METHODS))})")
    return names


def _teacher(url: str | None, model: str | None, key_env: str, replay: str | None) -> Any:
    if replay:
        from cudaify.regraph.teacher import RecordedTeacher

        return _guarded(lambda: RecordedTeacher(replay))
    if not url:
        return None
    if not model:
        _die("--llm-url needs --llm-model (the model's name at that endpoint)")
    from cudaify.transforms.slm.engine import RemoteEngine

    return RemoteEngine(url, model, api_key_env=key_env)


@graph.command("merge")
@click.argument("first", type=click.Path(dir_okay=False))
@click.argument("second", type=click.Path(dir_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False))
def merge_command(first: str, second: str, output: str) -> None:
    """Merge graph files FIRST and SECOND into OUTPUT."""
    from cudaify.regraph.build import merge

    _save(merge(_load(first), _load(second)), output)


@graph.command("stats")
@click.argument("graph_file", required=False, type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def stats_command(graph_file: str | None, as_json: bool) -> None:
    """Counts of nodes, edges and examples, when the graph was built and on which GPU
    (default: the shipped graph, and what this machine's runs learned)."""
    from cudaify.regraph.report import format_stats, stats

    summary = stats(_load(graph_file))
    if graph_file is None:
        summary["learned"] = _learned_files()
    if as_json:
        click.echo(json.dumps(summary, indent=1))
        return
    click.echo(format_stats(summary))
    for path, meta in summary.get("learned", {}).items():
        click.echo(f"learned: {path}: {_learned_line(meta)}")


def _learned_files() -> dict[str, dict[str, Any]]:
    """The meta of the user's learned files that exist: the examples graph (--learn) and
    the edge statistics every GPU run records."""
    from cudaify.regraph import user_graph_path, user_stats_path

    found = {}
    for path in (user_graph_path(), user_stats_path()):
        if path.is_file():
            found[str(path)] = _load(str(path)).meta
    return found


def _learned_line(meta: dict[str, Any]) -> str:
    from cudaify.regraph.report import measured_line

    runs = f"{meta['runs']} run(s), " if "runs" in meta else ""
    return runs + measured_line(meta)


@graph.command("show")
@click.argument("method")
@click.option("--graph", "graph_file", type=click.Path(dir_okay=False), default=None)
def show_command(method: str, graph_file: str | None) -> None:
    """A method's edges, their statistics and examples."""
    from cudaify.regraph.report import show

    loaded = _load(graph_file)
    if method not in loaded.graph:
        _die(f"no method '{method}' in the graph (it has: {', '.join(loaded.methods)})")
    click.echo(show(loaded, method))


@graph.command("validate")
@click.argument("graph_file", required=False, type=click.Path(dir_okay=False))
def validate_command(graph_file: str | None) -> None:
    """Check a graph file against the format; exit 2 naming the first problem."""
    loaded = _load(graph_file)
    count = sum(len(loaded.examples(s, t)) for s, t in loaded.edges())
    click.echo(
        f"{graph_file or 'default graph'}: valid ({len(loaded.methods)} nodes, "
        f"{loaded.graph.number_of_edges()} edges, {count} examples)"
    )


@graph.command("render")
@click.argument("graph_file", required=False, type=click.Path(dir_okay=False))
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(dir_okay=False),
    help="graph.svg, graph.png, graph.pdf or graph.dot",
)
def render_command(graph_file: str | None, output: str) -> None:
    """Draw the graph: node size by visits, edge width by verified transitions."""
    from cudaify.regraph.report import render

    loaded = _load(graph_file)
    try:
        render(loaded, Path(output))
    except Exception as exc:  # graphviz: ExecutableNotFound, unknown format, CalledProcessError
        _die(f"{output}: cannot render: {exc}", 4 if "not found" in str(exc).lower() else 2)
    click.echo(output)
