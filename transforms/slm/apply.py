"""Applying a reasoning-graph edge with the small model: prompt with the method's
instruction and the edge's examples, extract the one fenced block, check it, and give
the model one repair round with what was wrong (as a judge would) before the edge counts
as failed. Checking is handed in (`validate`), so this module never compiles anything."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from cudaify.core import Problem, Variant, normalised_hash
from cudaify.transforms.base import Method, Outcome
from cudaify.transforms.slm.engine import Engine, Message, PromptTooLong, Sampling
from cudaify.transforms.slm.extract import extract_code
from cudaify.transforms.slm.prompt import ExampleLike, edit_prompt, repair_prompt

Validate = Callable[[str], list[Problem]]

EDIT_SAMPLING = Sampling(temperature=0.2, top_p=0.95, max_tokens=3072, seed=0)


@dataclass(frozen=True)
class Attempt:
    code: str | None
    problems: tuple[Problem, ...]
    answer: str


def attempt(
    engine: Engine, messages: Sequence[Message], validate: Validate, sampling: Sampling
) -> Attempt:
    try:
        answer = engine.complete(list(messages), sampling).text
    except PromptTooLong as exc:  # this edge's prompt cannot be answered; others still can
        return Attempt(None, (Problem("context", str(exc)),), "")
    extraction = extract_code(answer)
    if extraction.code is None:
        return Attempt(None, (Problem("extract", extraction.reason),), answer)
    return Attempt(extraction.code, tuple(validate(extraction.code)), answer)


def converse(
    engine: Engine, messages: list[Message], validate: Validate, sampling: Sampling = EDIT_SAMPLING
) -> Attempt:
    """One answer, and when it fails its checks, one repair round."""
    first = attempt(engine, messages, validate, sampling)
    if first.code is not None and not first.problems:
        return first
    if any(problem.kind == "context" for problem in first.problems):
        return first  # the repair prompt holds this one: it cannot fit either
    repaired = repair_prompt(messages, first.answer, first.problems)
    second = attempt(engine, repaired, validate, sampling)
    return second if second.code is not None else first


def edit(
    engine: Engine,
    method: Method,
    variant: Variant,
    examples: Sequence[ExampleLike],
    validate: Validate,
    sampling: Sampling = EDIT_SAMPLING,
) -> Attempt:
    """The model's answer to one edge, after the repair round when the first failed."""
    return converse(
        engine,
        edit_prompt(method.instruction or method.summary, examples, variant.code),
        validate,
        sampling,
    )


def edge_outcome(method: Method, variant: Variant, result: Attempt) -> Outcome:
    """What the search makes of an edge's answer: a child, or why there is none."""
    if result.code is None or result.problems:
        why = result.problems[0] if result.problems else Problem("extract", "no code")
        return Outcome(None, f"the SLM's {method.name} failed its checks: {why}")
    if normalised_hash(result.code) == variant.key:
        return Outcome(None, f"the SLM returned the program unchanged for {method.name}")
    return Outcome(variant.then(method.name, result.code, "slm", detail="applied by the SLM"))


def apply_with_slm(
    engine: Engine,
    method: Method,
    variant: Variant,
    examples: Sequence[ExampleLike],
    validate: Validate,
    sampling: Sampling = EDIT_SAMPLING,
) -> Outcome:
    return edge_outcome(
        method, variant, edit(engine, method, variant, examples, validate, sampling)
    )


WHOLE_PROGRAM = {
    "oneshot": (
        "Rewrite this sequential program as a CUDA program that prints exactly the same "
        "output, faster: move the hot loops into __global__ kernels with the data copied to "
        "and from the GPU, keep every function signature and main."
    ),
    "cot": (
        "Rewrite this sequential program as a CUDA program that prints exactly the same "
        "output, faster. Think step by step first: list the hot loops, whether each is "
        "parallel, which optimizations apply (kernels, coalescing, keeping data on the GPU, "
        "shared memory, reductions), and then write the final program. Keep every function "
        "signature and main."
    ),
}


def whole_program(
    engine: Engine,
    style: str,
    variant: Variant,
    validate: Validate,
    sampling: Sampling = EDIT_SAMPLING,
) -> Outcome:
    """The baselines of the paper: the whole program to CUDA in one prompt (`oneshot`) or
    step by step in one prompt (`cot`); same checks and repair round as an edge."""
    result = converse(
        engine, edit_prompt(WHOLE_PROGRAM[style], (), variant.code), validate, sampling
    )
    if result.code is None or result.problems:
        why = result.problems[0] if result.problems else Problem("extract", "no code")
        return Outcome(None, f"the SLM's {style} answer failed its checks: {why}")
    return Outcome(variant.then(style, result.code, "slm", detail=f"whole program ({style})"))
