"""The pipeline that wires the stages: parse and analyse, make the input valid C++,
search the reasoning graph with rules (and later the SLM), verify on the GPU, write the
best variant atomically with its trace."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cudaify import __version__
from cudaify.config import Config
from cudaify.core import Evaluation, Problem, Stage, Variant, content_hash
from cudaify.errors import ConfigError, InputError
from cudaify.frontend.facts import Program

log = logging.getLogger("cudaify")


@dataclass(frozen=True)
class Result:
    input_path: str
    output_path: str
    variant: Variant  # what was written
    evaluation: Evaluation | None  # its evaluation (None for the unmodified program)
    trace: dict[str, Any]
    warnings: tuple[str, ...]

    @property
    def verified(self) -> bool:
        return bool(self.evaluation and self.evaluation.verified)

    @property
    def offloaded(self) -> bool:
        return bool(self.variant.steps)


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
    return analyze(source_path, config.flags, source=compat.text.encode("utf-8", "surrogateescape"))


class Stages:
    """The expand and evaluate callbacks the search is given."""

    def __init__(self, program: Program, config: Config):
        from cudaify.backend.evaluate import Evaluator
        from cudaify.transforms.base import Context

        self.program = program
        self.config = config
        self.context = Context(program=program)
        self.evaluator = Evaluator(program, config)

    def expand(self, variant: Variant, method_name: str) -> tuple[Variant | None, str]:
        from cudaify.transforms import get

        method = get(method_name)
        reason = method.applies(variant, self.context)
        if reason:
            return None, reason
        outcome = method.apply_rule(variant, self.context)
        return outcome.variant, outcome.reason

    def evaluate(self, variant: Variant) -> Evaluation:
        from cudaify.transforms import get
        from cudaify.transforms.structure import structural_problems

        method = get(variant.node) if variant.steps else None
        problems = structural_problems(self.program, variant.code, method)
        if problems:
            return Evaluation(stage=Stage.PARSE, problems=tuple(problems))
        return self.evaluator.evaluate(variant)


def _methods(config: Config) -> list[str]:
    from cudaify.transforms import METHODS

    unknown = [m for m in config.methods if m not in METHODS]
    if unknown:
        known = ", ".join(sorted(METHODS))
        raise ConfigError(f"unknown method '{unknown[0]}' (known: {known})")
    return list(config.methods)


def search(start: Variant, stages: Stages, config: Config, progress=None):  # -> SearchResult
    from cudaify.mcgs import search as search_mod
    from cudaify.regraph.graph import default_graph

    if config.methods:
        return search_mod.run_sequence(
            start, _methods(config), stages.expand, stages.evaluate, progress
        )
    if config.strategy != "rules":
        raise ConfigError(f"unknown strategy '{config.strategy}' (available: rules)")
    return search_mod.run_rules(
        start, default_graph(), stages.expand, stages.evaluate, config.max_depth, progress
    )


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


def header(
    program: Program, variant: Variant, evaluation: Evaluation | None, input_hash: str
) -> str:
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
            speedup = evaluation.region_speedup
            measured = f", region speedup {speedup:.2f}x over gcc -O3" if speedup else ""
            lines.append(f"Verified on the GPU: output equal to the original's{measured}.")
        elif not evaluation.ran_on_gpu:
            lines.append("UNVERIFIED: compiled with nvcc but not run (no GPU was found).")
    body = "\n".join(" * " + line if line else " *" for line in lines)
    return f"/*\n{body}\n */\n"


def compile_file(source_path: str, output_path: str, config: Config) -> Result:
    from cudaify.mcgs.trace import build_trace

    check_output_path(output_path)
    program = prepare(source_path, config)
    input_hash = content_hash(Path(source_path).read_bytes())
    start = Variant(code=program.source)
    stages = Stages(program, config)
    with progress_display(config) as show:
        result = search(start, stages, config, show)
    warnings = [f"'{method}' not applied: {reason}" for method, reason in result.skipped]
    chosen = result.best_verified or result.best
    if chosen is not None and chosen.evaluation.ran_on_gpu and not chosen.evaluation.verified:
        chosen = None  # on a GPU, only a verified variant may win
    evaluations = {c.variant.key: c for c in result.candidates}
    variant = chosen.variant if chosen else start
    evaluation = chosen.evaluation if chosen else None
    if chosen is None:
        failures = [c.evaluation.why for c in result.candidates if c.evaluation.problems]
        detail = f" ({failures[0]})" if failures else ""
        warnings.append(f"nothing could be offloaded{detail}; the output is the input as host code")
    elif not chosen.evaluation.ran_on_gpu:
        warnings.append("no GPU found: the output was compiled with nvcc but not run or verified")
    text = header(program, variant, evaluation, input_hash) + variant.code
    trace = build_trace(source_path, input_hash, result, chosen, evaluations)
    write_atomically(output_path, text)
    return Result(source_path, output_path, variant, evaluation, trace, tuple(warnings))


def report(result: Result, config: Config) -> None:
    if config.quiet:
        return
    for warning in result.warnings:
        print(f"cudaify: warning: {warning}", file=sys.stderr)
    methods = " -> ".join(result.variant.methods) or "none"
    status = "verified" if result.verified else "unverified"
    speedup = result.evaluation.region_speedup if result.evaluation else None
    shown = f", region speedup {speedup:.2f}x" if speedup else ""
    print(f"cudaify: wrote {result.output_path} ({methods}; {status}{shown})", file=sys.stderr)


__all__ = ["compile_file", "report", "write_atomically", "Result", "Problem"]
