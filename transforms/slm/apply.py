"""Applying a reasoning-graph edge with the small model: the model edits only the functions
the edge changes (focus.py picks them, cuts them out of the variant and splices the answer
back), prompted with the method's instruction and the edge's examples cut the same way (where
the method's rule refused the variant, also with its reason, the functions it points at
in focus, and a request for the rewrite the rule could not make);
strict extraction of the one fenced block, the whole-program check, and one repair round
with what was wrong (as a judge would) before the edge counts as failed. Checking is handed
in (`validate`), so this module never compiles anything. The whole-program baselines
(`oneshot`, `cot`) ask for the whole program."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from cudaify.core import Problem, Variant, normalised_hash
from cudaify.transforms.base import Context, Method, Outcome
from cudaify.transforms.slm import focus as focusing
from cudaify.transforms.slm.engine import Engine, Message, PromptTooLong, Sampling
from cudaify.transforms.slm.extract import extract_code
from cudaify.transforms.slm.prompt import (
    ANSWER_FORMAT,
    ExampleLike,
    edit_prompt,
    focus_format,
    focused_prompt,
    refused_note,
    repair_prompt,
)
from cudaify.transforms.structure import launch_problems

Validate = Callable[[str], list[Problem]]
# the extracted block -> the whole program, or the problems that prevent it
Build = Callable[[str], "focusing.Splice"]

# max_tokens is a ceiling: a focused edit asks for about what its target and examples need
EDIT_SAMPLING = Sampling(temperature=0.2, top_p=0.95, max_tokens=4096, seed=0)
# the whole-program baselines (oneshot, cot) keep the budget they were recorded with
WHOLE_PROGRAM_SAMPLING = dataclasses.replace(EDIT_SAMPLING, max_tokens=3072)
MIN_ANSWER_TOKENS = 512


@dataclass(frozen=True)
class Attempt:
    code: str | None
    problems: tuple[Problem, ...]
    answer: str


def attempt(
    engine: Engine,
    messages: Sequence[Message],
    validate: Validate,
    sampling: Sampling,
    build: Build | None = None,
) -> Attempt:
    try:
        answer = engine.complete(list(messages), sampling).text
    except PromptTooLong as exc:  # this edge's prompt cannot be answered; others still can
        return Attempt(None, (Problem("context", str(exc)),), "")
    extraction = extract_code(answer)
    if extraction.code is None:
        return Attempt(None, (Problem("extract", extraction.reason),), answer)
    code = extraction.code
    if build is not None:  # a focused edit: the answer's functions spliced into the variant
        spliced = build(code)
        if spliced.code is None:
            return Attempt(None, spliced.problems, answer)
        code = spliced.code
    return Attempt(code, tuple(validate(code)), answer)


def converse(
    engine: Engine,
    messages: list[Message],
    validate: Validate,
    sampling: Sampling = EDIT_SAMPLING,
    build: Build | None = None,
    answer_format: str = ANSWER_FORMAT,
) -> Attempt:
    """One answer, and when it fails its checks, one repair round (the repair prompt is
    the same conversation: for a focused edit, the functions, never the whole program)."""
    first = attempt(engine, messages, validate, sampling, build)
    if first.code is not None and not first.problems:
        return first
    if any(problem.kind == "context" for problem in first.problems):
        return first  # the repair prompt holds this one: it cannot fit either
    repaired = repair_prompt(messages, first.answer, first.problems, answer_format)
    second = attempt(engine, repaired, validate, sampling, build)
    return second if second.code is not None else first


def answer_tokens(focus: focusing.Focus, examples: Sequence[focusing.Reduced], ceiling: int) -> int:
    """max_tokens for a focused edit, proportional to what the answer must hold: twice the
    target functions (a kernel and its host wrapper from one function) plus the largest
    example answer (the new helpers the method adds), within `ceiling`. Without an example
    what the method adds is unknown: the ceiling (sized to its target alone, compact's
    answer after schedule, which the graph has no example of, was cut at 512 tokens on an
    H200). Tokens not generated cost nothing."""
    if not examples:
        return ceiling
    largest = max((focusing.estimate_tokens(e.after) for e in examples), default=0)
    wanted = 2 * focusing.estimate_tokens(focus.target_text) + largest + 256
    return min(ceiling, max(MIN_ANSWER_TOKENS, wanted))


def edit(
    engine: Engine,
    method: Method,
    variant: Variant,
    examples: Sequence[ExampleLike],
    validate: Validate,
    sampling: Sampling = EDIT_SAMPLING,
    context: Context | None = None,
    refused: str = "",
) -> Attempt:
    """The model's answer to one edge, after the repair round when the first failed: the
    target functions (picked with the method's rule where `context` is given) are cut out,
    the model answers them, and its answer is spliced back into the variant. `refused`:
    why the method's rule could not apply it here; the model is told, shown the functions
    the reason points at, and asked for the rewrite the rule could not make. The runtime
    blocks the examples' answers add are pasted in first (`focus.with_runtime`) and kept
    only where the answer calls them."""
    runtime = focusing.with_runtime(variant.code, examples)
    picked = focusing.pick_targets(method, variant, context)
    focus = dataclasses.replace(picked, code=runtime.code)  # the targets keep their names
    note = ""
    if refused:
        focus = focusing.refused_targets(focus, refused, context)
        note = refused_note(method.name, refused)
    reduced = [focusing.reduce_example(example, runtime.code) for example in examples]
    shown = [(example, example.names or focus.targets) for example in reduced]
    messages = focused_prompt(method.instruction or method.summary, shown, focus, note)
    budget = answer_tokens(focus, reduced, sampling.max_tokens)
    return converse(
        engine,
        messages,
        validate,
        dataclasses.replace(sampling, max_tokens=budget),
        build=lambda code: runtime.unused_dropped(focusing.splice(focus, code)),
        answer_format=focus_format(focus.targets),
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
    context: Context | None = None,
    refused: str = "",
) -> Outcome:
    """An edge's child by the model, or why there is none; `refused` as for `edit`. The
    answer passes the same checks whether or not the rule refused."""
    return edge_outcome(
        method,
        variant,
        edit(engine, method, variant, examples, validate, sampling, context, refused),
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
    sampling: Sampling = WHOLE_PROGRAM_SAMPLING,
) -> Outcome:
    """The baselines of the paper: the whole program to CUDA in one prompt (`oneshot`) or
    step by step in one prompt (`cot`); same checks and repair round as an edge."""

    def checked(code: str) -> list[Problem]:  # the caller's checks first: they say more
        return validate(code) or launch_problems(code)

    result = converse(
        engine, edit_prompt(WHOLE_PROGRAM[style], (), variant.code), checked, sampling
    )
    if result.code is None or result.problems:
        why = result.problems[0] if result.problems else Problem("extract", "no code")
        return Outcome(None, f"the SLM's {style} answer failed its checks: {why}")
    return Outcome(variant.then(style, result.code, "slm", detail=f"whole program ({style})"))
