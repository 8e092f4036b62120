"""The prompts the small model sees. Small models follow a shown format far better than a
described one, so the examples of an edge are given as earlier turns of the conversation:
the task on the example's `before` code, answered by its `detail` and its `after` code in
exactly the form we want back (one fenced block, then one sentence). An edge's prompt is
focused (`focused_prompt`): the examples and the task show only the functions that change,
with the program's other declarations as read-only context, and the answer holds those
functions; the whole-program baselines (`edit_prompt`) show and ask for the program."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

from cudaify.transforms.slm.engine import CHOICE_PREFIX, CHOICE_SUFFIX, Message

SYSTEM = (
    "You are an expert CUDA C++ engineer. You rewrite C and C++ programs into CUDA programs "
    "that print exactly the same output, faster. You make only the change you are asked for, "
    "keep every function signature and main, and never add calls the program did not make."
)
ANSWER_FORMAT = (
    "Reply with the complete new program in one ```cuda code block, then one sentence "
    "saying what you changed. No other code blocks."
)
FOCUS_FORMAT = (
    "Reply with one ```cuda code block holding the complete new version of {names}; put any "
    "new __global__ kernels, __device__ helpers, includes or globals they need before them. "
    "Do not repeat the declarations or any other function. Then one sentence saying what "
    "you changed."
)
MAX_PROBLEM_CHARS = 3000  # compiler logs can be long; the model needs the first errors
# an edge whose rule refused: the model is asked for what the rule could not do
REFUSED = (
    "The compiler's rule for {method} could not apply it to this code: {reason}\n"
    "Make {method}'s result possible here, or apply {method} by hand: rewrite the loop nest "
    "below as far as it needs (interchange loops, distribute a loop, rewrite its index "
    "expressions, or choose the tile sizes or the launch parameters), keeping what every "
    "iteration computes and the output the program prints."
)


class ExampleLike(Protocol):
    """What a prompt needs of an edge example (`regraph.graph.Example` has these fields)."""

    program: str
    before: str
    after: str
    detail: str


def fenced(code: str, language: str = "cuda") -> str:
    return f"```{language}\n{code.rstrip()}\n```"


def _task(instruction: str, code: str) -> str:
    return f"Task: {instruction.strip()}\n\nProgram:\n{fenced(code)}\n\n{ANSWER_FORMAT}"


def _example_turns(instruction: str, example: ExampleLike) -> list[Message]:
    said = example.detail.strip() or "I applied the change."
    return [
        {"role": "user", "content": _task(instruction, example.before)},
        {"role": "assistant", "content": f"{fenced(example.after)}\n\n{said}"},
    ]


def edit_prompt(
    method_instruction: str, examples: Sequence[ExampleLike], code: str
) -> list[Message]:
    """Messages asking the model to apply one method to `code`, shown `examples` first."""
    messages: list[Message] = [{"role": "system", "content": SYSTEM}]
    for example in examples:
        messages += _example_turns(method_instruction, example)
    messages.append({"role": "user", "content": _task(method_instruction, code)})
    return messages


def _names(names: Sequence[str]) -> str:
    quoted = [f"`{name}`" for name in names]
    if len(quoted) <= 1:
        return "the function " + "".join(quoted)
    return "the functions " + ", ".join(quoted[:-1]) + " and " + quoted[-1]


def focus_format(names: Sequence[str]) -> str:
    return FOCUS_FORMAT.format(names=_names(names))


def refused_note(method: str, reason: str) -> str:
    """What an edge's task says when the method's rule refused: the reason, and the
    rewrites asked for in its place."""
    return REFUSED.format(method=method, reason=reason.strip())


def _focused_task(
    instruction: str,
    functions: str,
    names: Sequence[str],
    declarations: str = "",
    note: str = "",
) -> str:
    parts = [f"Task: {instruction.strip()}"]
    if note:
        parts.append(note)
    parts.append(f"Change only {_names(names)}:\n{fenced(functions)}")
    if declarations.strip():  # after the functions: a small model copies the first block
        parts.append(
            "The rest of the program declares (read-only, do not repeat):\n"
            + fenced(declarations, "c")
        )
    parts.append(focus_format(names))
    return "\n\n".join(parts)


class FocusLike(Protocol):
    """What a focused prompt needs of an edge's target (`focus.Focus` has these)."""

    targets: tuple[str, ...]

    @property
    def target_text(self) -> str: ...

    def context_text(self) -> str: ...


def focused_prompt(
    method_instruction: str,
    examples: Sequence[tuple[ExampleLike, Sequence[str]]],
    focus: FocusLike,
    note: str = "",
) -> list[Message]:
    """Messages asking the model to apply one method to the target functions only: each
    example (already cut to its changed functions, with their names) as an earlier turn,
    then the target functions with the declarations they may use as read-only context.
    `note` (a rule's refusal, `refused_note`) goes in the last task only: the examples
    show the method's result as it was reached elsewhere."""
    messages: list[Message] = [{"role": "system", "content": SYSTEM}]
    for example, names in examples:
        said = example.detail.strip() or "I applied the change."
        task = _focused_task(
            method_instruction, example.before, names, getattr(example, "context", "")
        )
        messages += [
            {"role": "user", "content": task},
            {"role": "assistant", "content": f"{fenced(example.after)}\n\n{said}"},
        ]
    task = _focused_task(
        method_instruction, focus.target_text, focus.targets, focus.context_text(), note
    )
    messages.append({"role": "user", "content": task})
    return messages


def repair_prompt(
    messages: Sequence[Message],
    answer: str,
    problems: Iterable[object],
    answer_format: str = ANSWER_FORMAT,
) -> list[Message]:
    """The conversation plus the model's answer and what was wrong with it (compiler
    errors, a failed structural check, an extraction failure), asking for one fix in the
    same form (`answer_format`: the whole program, or the functions of a focused edit)."""
    listed = _problem_list(problems)
    subject = "program" if answer_format == ANSWER_FORMAT else "answer"
    request = f"Your {subject} has these problems:\n{listed}\n\nFix them. {answer_format}"
    return [
        *messages,
        {"role": "assistant", "content": answer},
        {"role": "user", "content": request},
    ]


def _problem_list(problems: Iterable[object]) -> str:
    lines = [f"- {str(problem).strip()}" for problem in problems if str(problem).strip()]
    text = "\n".join(lines) or "- the answer could not be used"
    if len(text) > MAX_PROBLEM_CHARS:
        text = text[:MAX_PROBLEM_CHARS].rsplit("\n", 1)[0] + "\n- (more problems omitted)"
    return text


def choice_prompt(
    code: str, options: Mapping[str, str] | Sequence[tuple[str, str]]
) -> list[Message]:
    """Messages asking which method to apply next; the answer is `{"method": "<name>"}`."""
    pairs = list(options.items()) if isinstance(options, Mapping) else list(options)
    if not pairs:
        raise ValueError("choice_prompt needs at least one option")
    listed = "\n".join(f"- {name}: {description}".rstrip(": ") for name, description in pairs)
    names = ", ".join(name for name, _ in pairs)
    request = (
        f"Program:\n{fenced(code)}\n\n"
        "Which optimization method should be applied next to make this program faster on "
        f"an NVIDIA GPU while printing the same output? The methods:\n{listed}\n\n"
        f"Answer with JSON only: {CHOICE_PREFIX}<one of: {names}>{CHOICE_SUFFIX}"
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": request}]
