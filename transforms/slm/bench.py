"""Speed of a local model on this machine: prompt processing and generation, tokens per
second, from llama.cpp's own performance counters. The prompt is a real edit prompt (the
offload instruction on a small program), so the numbers say what one edge costs.

    python -m cudaify.transforms.slm.bench [--threads N] [--tokens N] [MODEL ...]
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass

from cudaify.transforms.slm import models
from cudaify.transforms.slm.engine import LocalEngine, _llama_cpp
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
    llama_cpp = _llama_cpp()
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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", default=list(models.REGISTRY))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--tokens", type=int, default=128)
    options = parser.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print("model | threads | prompt tok | prompt tok/s | gen tok | gen tok/s")
    for name in options.models:
        engine = LocalEngine(models.resolve(name), n_ctx=4096, n_threads=options.threads)
        speed = measure_speed(engine, options.tokens)
        print(
            f"{name} | {speed.threads} | {speed.prompt_tokens} | {speed.prompt_rate:.1f} | "
            f"{speed.generated_tokens} | {speed.generation_rate:.2f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
