"""The small model on this machine: its speed and the share of its edges that pass.

Speed: prompt processing and generation, tokens per second, from llama.cpp's own counters,
on a real edit prompt. Edges: how often the edges it applies on the benchmark suite pass the
structural check and compile, per method (and, with --run on a GPU, print what the original
prints). See slm_edge_bench.py for what an edge is.

    python -m cudaify.slm_bench [MODEL ...] [--programs N] [--methods a,b]
        [--max-tokens N] [--threads N] [--gpu-layers N] [--run] [--edge-timeout S]
        [--record FILE | --replay FILE] [-o DIR]

MODEL is a registry name or a GGUF path (also --model, $CUDAIFY_MODEL); by default every
registry model. The summary is printed at the end, also after failures or Ctrl-C; -o DIR
keeps edges.jsonl (one line per edge, written as it finishes), summary.json and summary.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cudaify.core.config import Config
from cudaify.core.errors import CudaifyError
from cudaify.slm_edge_bench import (
    Edge,
    EdgeOptions,
    Results,
    run_edges,
    select_edges,
)
from cudaify.transforms import METHODS
from cudaify.transforms.slm import models
from cudaify.transforms.slm.apply import EDIT_SAMPLING
from cudaify.transforms.slm.engine import DEFAULT_CONTEXT, LocalEngine, import_llama_cpp
from cudaify.transforms.slm.prompt import edit_prompt

PROGRAM = """\
#include <stdio.h>
#include <stdlib.h>

void saxpy(int n, float a, const float *x, float *y) {
    for (int i = 0; i < n; i++)
        y[i] = a * x[i] + y[i];
}

int main(void) {
    int n = 1 << 20;
    float *x = malloc(n * sizeof(float));
    float *y = malloc(n * sizeof(float));
    for (int i = 0; i < n; i++) { x[i] = i * 0.5f; y[i] = 1.0f; }
    saxpy(n, 2.0f, x, y);
    double sum = 0;
    for (int i = 0; i < n; i++) sum += y[i];
    printf("%.3f\\n", sum);
    free(x); free(y);
    return 0;
}
"""
INSTRUCTION = "Move the parallel loop into a __global__ kernel, one thread per iteration."


@dataclass(frozen=True)
class Speed:
    model: str
    threads: int
    prompt_tokens: int
    prompt_seconds: float
    generated_tokens: int
    generation_seconds: float

    @property
    def prompt_rate(self) -> float:
        return self.prompt_tokens / self.prompt_seconds if self.prompt_seconds else 0.0

    @property
    def generation_rate(self) -> float:
        return self.generated_tokens / self.generation_seconds if self.generation_seconds else 0.0


def measure_speed(engine: LocalEngine, generate: int = 128) -> Speed:
    """Process the edit prompt once, then generate exactly `generate` tokens greedily (an
    end-of-answer token does not stop it, so every model is timed on the same count)."""
    llama_cpp = import_llama_cpp()
    llm = engine.llm
    prompt = engine.chat_prompt(edit_prompt(INSTRUCTION, [], PROGRAM))
    tokens = llm.tokenize(prompt.encode(), add_bos=True, special=True)
    llm.reset()
    llama_cpp.llama_perf_context_reset(llm.ctx)
    for count, _ in enumerate(llm.generate(tokens, temp=0.0, reset=True), 1):
        if count >= generate:
            break
    counters = llama_cpp.llama_perf_context(llm.ctx)
    llm.reset()
    return Speed(
        model=engine.model_path.name,
        threads=llm.n_threads,
        prompt_tokens=int(counters.n_p_eval),
        prompt_seconds=counters.t_p_eval_ms / 1e3,
        generated_tokens=int(counters.n_eval),
        generation_seconds=counters.t_eval_ms / 1e3,
    )


def parse_options(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("models", nargs="*", help="registry names or GGUF paths")
    parser.add_argument("--model", action="append", default=[], help="one more model")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--gpu-layers", type=int, default=0, help="-1: every layer on the GPU")
    parser.add_argument(
        "--ctx", type=int, default=DEFAULT_CONTEXT, help="context size (the search's)"
    )
    parser.add_argument("--tokens", type=int, default=128, help="tokens generated for speed")
    parser.add_argument("--suite", type=Path, default=Path("benchmarks"))
    parser.add_argument("--methods", default="", help="comma-separated (default: every one)")
    parser.add_argument("--programs", type=int, default=1, help="edges per method (0: all)")
    parser.add_argument("--max-tokens", type=int, default=EDIT_SAMPLING.max_tokens)
    parser.add_argument("--examples", type=int, default=Config.examples)
    parser.add_argument("--record", help="append every completion to this JSON-lines file")
    parser.add_argument("--replay", help="answer only from such a file (no model is loaded)")
    parser.add_argument("--no-cache", action="store_true", help="ask the model even if cached")
    parser.add_argument("--run", action="store_true", help="run compiled edges on the GPU")
    parser.add_argument("--edge-timeout", type=float, default=1800.0, help="seconds per edge")
    parser.add_argument(
        "--budget", type=float, default=0.0, help="seconds of edges per model (0: no limit)"
    )
    parser.add_argument("--speed-only", action="store_true", help="measure tokens/s only")
    parser.add_argument("-o", "--output", type=Path, help="write results to this folder")
    options = parser.parse_args(argv)
    if options.record and options.replay:
        parser.error("--record and --replay exclude each other")
    options.methods = [m for m in options.methods.replace(",", " ").split() if m]
    unknown = [m for m in options.methods if m not in METHODS]
    if unknown:
        parser.error(f"unknown method '{unknown[0]}' (known: {', '.join(METHODS)})")
    return options


def model_names(options: argparse.Namespace) -> list[str | None]:
    """The models asked for; with none named, $CUDAIFY_MODEL, the replay file's own model
    (None) or every registry model."""
    named = [*options.models, *options.model]
    if named:
        return named
    if os.environ.get(models.MODEL_ENV):
        return [os.environ[models.MODEL_ENV]]
    return [None] if options.replay else list(models.REGISTRY)


def model_label(name: str | None, identity: str) -> str:
    """The registry name where the model is one (also when given by path), else the file."""
    if name is None:
        known = [n for n, spec in models.REGISTRY.items() if identity == f"gguf:{spec.sha256}"]
        return known[0] if known else identity[:24]
    if name in models.REGISTRY:
        return name
    known = [n for n, spec in models.REGISTRY.items() if spec.file == Path(name).name]
    return known[0] if known else Path(name).stem


def speed_entry(label: str, engine: LocalEngine, speed: Speed, gpu_layers: int) -> dict[str, Any]:
    return {
        "model": label,
        "threads": speed.threads,
        "gpu_layers": gpu_layers if engine.gpu_offload else 0,
        "load_average": os.getloadavg()[0],
        "prompt_tokens": speed.prompt_tokens,
        "prompt_rate": speed.prompt_rate,
        "generated_tokens": speed.generated_tokens,
        "generation_rate": speed.generation_rate,
    }


def bench_model(
    name: str | None,
    edges: list[Edge],
    options: argparse.Namespace,
    results: Results,
    say: Callable[..., None],
) -> None:
    from cudaify.transforms.slm.factory import open_engine

    try:
        engine = open_engine(
            model=name,
            gpu_layers=options.gpu_layers,
            threads=options.threads,
            n_ctx=options.ctx,
            record=options.record,
            replay=options.replay,
            use_cache=not options.no_cache,
        )
    except CudaifyError as exc:
        say(f"{name}: cannot open the model: {exc}")
        return
    label = model_label(name, engine.identity)
    local = engine.engine if isinstance(engine.engine, LocalEngine) else None
    if local is not None:
        if local.gpu_note:
            say(f"{label}: {local.gpu_note}")
        speed = measure_speed(local, options.tokens)
        results.add_speed(speed_entry(label, local, speed, options.gpu_layers))
        say(
            f"{label}: prompt {speed.prompt_rate:.1f} tok/s, generation "
            f"{speed.generation_rate:.2f} tok/s ({speed.threads} threads, "
            f"load {os.getloadavg()[0]:.1f})"
        )
    sampling = dataclasses.replace(EDIT_SAMPLING, max_tokens=options.max_tokens)
    edge_options = EdgeOptions(sampling=sampling, run=options.run, timeout=options.edge_timeout)
    run_edges(edges, engine, label, edge_options, results, say, options.budget)


def main(argv: list[str] | None = None) -> int:
    options = parse_options(argv)
    say = functools.partial(print, flush=True)
    say(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    results = Results(options.output)
    try:
        edges = [] if options.speed_only else choose_edges(options, say)
        for name in model_names(options):
            bench_model(name, edges, options, results, say)
    finally:
        say("\n" + results.markdown())
        if options.output:
            say(f"results in {options.output}/ (edges.jsonl, summary.json, summary.md)")
    return 0


def choose_edges(options: argparse.Namespace, say: Callable[..., None]) -> list[Edge]:
    from cudaify.backend.gpu import gpu_available
    from cudaify.pipeline import search_graph

    if options.run and not gpu_available():
        say("--run: no NVIDIA GPU found, edges are compiled but not run")
    config = Config(examples=options.examples, runs=1)
    methods = options.methods or list(METHODS)
    edges = select_edges(options.suite, methods, options.programs, config, search_graph(), say)
    held = sum(edge.precondition for edge in edges)
    say(f"{len(edges)} edges over {len(methods)} methods ({held} with the precondition)")
    return edges


if __name__ == "__main__":
    raise SystemExit(main())
