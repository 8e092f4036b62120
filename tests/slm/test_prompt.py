import pytest

from cudaify.core import Problem
from cudaify.regraph.graph import Example
from cudaify.transforms.slm.extract import extract_code
from cudaify.transforms.slm.prompt import (
    MAX_PROBLEM_CHARS,
    SYSTEM,
    choice_prompt,
    edit_prompt,
    repair_prompt,
)

from .programs import CHOICES, OFFLOAD_INSTRUCTION, SAXPY

EXAMPLES = [
    Example(
        program="vadd",
        before="void add(float *a) { for (int i = 0; i < 8; i++) a[i] += 1; }",
        after="__global__ void add_k(float *a) { a[threadIdx.x] += 1; }",
        detail="Moved the loop over i into add_k.",
    ),
    Example(program="scale", before="void s() {}", after="__global__ void s_k() {}", detail=""),
]


def test_edit_prompt_without_examples_is_system_then_task():
    messages = edit_prompt(OFFLOAD_INSTRUCTION, [], SAXPY)
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[0]["content"] == SYSTEM
    task = messages[1]["content"]
    assert task.startswith("Task: " + OFFLOAD_INSTRUCTION)
    assert f"```cuda\n{SAXPY.rstrip()}\n```" in task
    assert "one ```cuda code block" in task


def test_examples_become_earlier_turns_answered_in_the_extractable_format():
    messages = edit_prompt(OFFLOAD_INSTRUCTION, EXAMPLES, SAXPY)
    assert [m["role"] for m in messages] == ["system"] + ["user", "assistant"] * 2 + ["user"]
    first_task, first_answer = messages[1]["content"], messages[2]["content"]
    assert EXAMPLES[0].before in first_task
    assert extract_code(first_answer).code == EXAMPLES[0].after + "\n"
    assert first_answer.endswith("Moved the loop over i into add_k.")
    assert messages[4]["content"].endswith("I applied the change.")  # no detail recorded
    assert SAXPY.rstrip() in messages[-1]["content"]


def test_repair_prompt_returns_answer_and_problems_to_the_model():
    messages = edit_prompt(OFFLOAD_INSTRUCTION, [], SAXPY)
    problems = [
        Problem("compile", 'identifier "threadIdx" is undefined', line=5),
        "structure: function 'saxpy' lost its signature",
    ]
    repaired = repair_prompt(messages, "```cuda\nbroken\n```", problems)
    assert repaired[:2] == messages and len(messages) == 2  # the input is not mutated
    assert repaired[2] == {"role": "assistant", "content": "```cuda\nbroken\n```"}
    request = repaired[3]["content"]
    assert repaired[3]["role"] == "user"
    assert '- compile: line 5: identifier "threadIdx" is undefined' in request
    assert "- structure: function 'saxpy' lost its signature" in request


def test_repair_prompt_cuts_long_compiler_logs():
    problems = [f"x.cu({n}): error: something is wrong here" for n in range(500)]
    request = repair_prompt([], "answer", problems)[-1]["content"]
    assert "x.cu(0): error" in request
    assert "x.cu(499)" not in request
    assert "(more problems omitted)" in request
    assert len(request) < MAX_PROBLEM_CHARS + 500


def test_choice_prompt_lists_every_option_and_asks_for_json():
    messages = choice_prompt(SAXPY, CHOICES)
    request = messages[-1]["content"]
    for name, description in CHOICES.items():
        assert f"- {name}: {description}" in request
    assert '{"method": "<one of: offload, shared_tiling, loop_unroll>"}' in request
    assert choice_prompt(SAXPY, list(CHOICES.items())) == messages


def test_choice_prompt_needs_options():
    with pytest.raises(ValueError):
        choice_prompt(SAXPY, {})
