"""Model edges that do what rules cannot (issue 19, item 2): when a method's rule refuses a
variant, the model's edge for that method is told why, shown the functions the reason
points at, and asked for the rewrite the rule could not make; its answer goes through the
same checks as any other. A fake engine answers; nothing is compiled or run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cudaify.core import Problem, Variant
from cudaify.frontend.facts import Program
from cudaify.pipeline import Stages
from cudaify.transforms import METHODS
from cudaify.transforms.base import Context
from cudaify.transforms.slm import focus
from cudaify.transforms.slm.apply import apply_with_slm
from cudaify.transforms.slm.engine import Completion
from cudaify.transforms.structure import structural_problems

from .test_decoy_endpoint import GOLDEN, TARGETS, DecoyServer, analysed, model_config

CARRIED = """\
#include <stdio.h>

static float scale(float v) { return v * 0.5f; }

void running(int n, float *a, const float *b)
{
    for (int i = 1; i < n; i++)
        a[i] = a[i - 1] * 0.5f + b[i];
}

int main(void)
{
    float a[64], b[64];
    for (int i = 0; i < 64; i++) {
        a[i] = 0.0f;
        b[i] = scale((float)i);
    }
    running(64, a, b);
    printf("%f\\n", a[63]);
    return 0;
}
"""


class Decoys:
    """A fake engine: answers every edit with the functions it was asked to change and a
    comment claiming the change (a decoy), and keeps what it was asked."""

    identity = "test:decoys"

    def __init__(self) -> None:
        self.requests: list[list[dict[str, str]]] = []

    def complete(self, messages, sampling):
        self.requests.append(list(messages))
        asked = [m["content"] for m in messages if m["role"] == "user"]
        found = [match for text in asked if (match := TARGETS.search(text))]
        code = found[-1].group("code")
        answer = f"```cuda\n// loops interchanged, coalesced\n{code}\n```\n\nI swapped the loops."
        return Completion(answer, prompt_tokens=10, completion_tokens=10, seconds=0.1)

    def choose(self, messages, options, sampling):
        raise AssertionError("not asked")


def offloaded_saxpy() -> tuple[Program, Context, Variant]:
    program = analysed(GOLDEN / "offload" / "saxpy.c")
    context = Context(program)
    variant = METHODS["offload"].apply_rule(Variant(program.source), context).variant
    assert variant is not None
    return program, context, variant


def structure(program: Program, method: str, before: Variant):
    """The search's own structural check of an edge's answer (compiling comes after)."""
    return lambda code: structural_problems(program, code, METHODS[method], before)


def last_task(messages: list[dict[str, str]]) -> str:
    return [m["content"] for m in messages if m["role"] == "user"][-1]


def test_a_refused_rules_reason_and_nest_are_in_the_prompt_and_a_decoy_is_refused():
    """coalesce's rule refuses a 1-D kernel; the model is told so, shown that kernel and
    its launcher, and asked for the rewrite; its decoy (the functions and a comment) is
    refused by the structure check, in the answer and in the repair round."""
    program, context, variant = offloaded_saxpy()
    method = METHODS["coalesce"]
    reason = method.applies(variant, context)
    assert reason == "kernel 'saxpy_kernel' maps one loop: nothing to swap"
    engine = Decoys()
    checked: list[list[Problem]] = []

    def validate(code: str) -> list[Problem]:
        checked.append(structure(program, "coalesce", variant)(code))
        return checked[-1]

    outcome = apply_with_slm(engine, method, variant, [], validate, context=context, refused=reason)
    task = last_task(engine.requests[0])
    assert f"The compiler's rule for coalesce could not apply it to this code: {reason}" in task
    assert "interchange loops" in task and "launch parameters" in task
    kernel = focus.functions(variant.code)["saxpy_kernel"].text
    assert "Change only the functions `saxpy_kernel` and `saxpy`" in task
    assert kernel in task
    assert "int main" not in task.split("The rest of the program declares")[0]
    # the same checks as any answer: the structure check refused both tries, before nvcc
    assert outcome.variant is None
    assert len(engine.requests) == 2 and len(checked) == 2 and all(checked)
    assert outcome.reason.startswith("the SLM's coalesce failed its checks: coalesce:"), outcome
    assert reason in last_task(engine.requests[1][:-2])  # the repair keeps the conversation


def test_an_edge_whose_rule_applies_keeps_the_methods_own_prompt():
    program, context, variant = offloaded_saxpy()
    engine = Decoys()
    method = METHODS["launch_tuning"]
    assert method.applies(variant, context) is None
    apply_with_slm(
        engine, method, variant, [], structure(program, "launch_tuning", variant), context=context
    )
    task = last_task(engine.requests[0])
    assert task.startswith(f"Task: {method.instruction.strip()}\n\nChange only")
    assert "could not apply" not in task


def test_the_function_a_refusal_points_at_by_line_is_the_one_in_focus(tmp_path: Path):
    """offload refuses the scan in `running` at its file:line:col; without the reason the
    focus would be main (the function holding parallel loops): with it, `running`."""
    source = tmp_path / "carried.c"
    source.write_text(CARRIED)
    program = analysed(source)
    context = Context(program)
    variant = Variant(program.source)
    method = METHODS["offload"]
    reason = method.applies(variant, context)
    assert reason is not None and re.match(rf"{re.escape(str(source))}:7:5: ", reason), reason
    assert focus.pick_targets(method, variant, context).targets == ("main",)
    refocused = focus.refused_targets(focus.pick_targets(method, variant, context), reason, context)
    assert (refocused.targets, refocused.how) == (("running",), "refusal")
    engine = Decoys()
    outcome = apply_with_slm(
        engine,
        method,
        variant,
        [],
        structure(program, "offload", variant),
        context=context,
        refused=reason,
    )
    task = last_task(engine.requests[0])
    assert reason in task and focus.functions(variant.code)["running"].text in task
    assert "Change only the function `running`" in task
    assert outcome.variant is None  # the decoy offloads nothing


def test_a_refusal_naming_nothing_keeps_the_focus():
    program, context, variant = offloaded_saxpy()
    picked = focus.pick_targets(METHODS["coalesce"], variant, context)
    assert focus.refused_targets(picked, "no kernel maps two or more loops", context) == picked


@pytest.mark.parametrize("refused", ["", "kernel 'saxpy_kernel' maps one loop: nothing to swap"])
def test_the_pipeline_passes_the_rules_refusal_to_the_model(
    refused: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The search's expand callback: an SLM edge given the rule's refusal says it in its
    request to the model (here an OpenAI-compatible fake answering decoys)."""
    monkeypatch.setenv("CUDAIFY_CACHE_DIR", str(tmp_path / "cache"))
    program, _context, _variant = offloaded_saxpy()
    with DecoyServer() as server:
        stages = Stages(program, model_config(server.url, tmp_path))
        variant, _ = stages.expand(Variant(program.source), "offload")
        assert variant is not None
        child, reason = stages.expand(variant, "coalesce", "slm", refused)
        asked = [
            m["content"]
            for request in server.requests
            for m in request["body"].get("messages", [])
            if m["role"] == "user"
        ]
    assert child is None and reason.startswith("the SLM's coalesce failed its checks: ")
    said = [text for text in asked if "could not apply it to this code" in text]
    assert bool(said) == bool(refused)
    if refused:
        assert refused in said[0] and "__global__ void saxpy_kernel" in said[0]


def test_an_answer_the_budget_cuts_short_kills_only_its_edge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The time budget running out while nvcc checks a model's answer ends that edge with
    its reason (the search then sees the budget spent), instead of escaping the search and
    failing the whole compile (found on an H200 bench: `OutOfTime` raised through mcgs)."""
    from cudaify.backend.budget import OutOfTime

    monkeypatch.setenv("CUDAIFY_CACHE_DIR", str(tmp_path / "cache"))
    program, _context, _variant = offloaded_saxpy()
    checked: list[str] = []

    def spent(code: str, method: object, before: object = None) -> list[Problem]:
        checked.append(code)
        raise OutOfTime("the time budget of 30 s is spent")

    with DecoyServer() as server:
        stages = Stages(program, model_config(server.url, tmp_path))
        variant, _ = stages.expand(Variant(program.source), "offload")
        assert variant is not None
        monkeypatch.setattr(stages, "validate", spent)
        child, reason = stages.expand(variant, "coalesce", "slm")
    assert checked, "the decoy's answer never reached the checks"
    assert child is None and reason == (
        "the model's answer was not checked: the time budget of 30 s is spent"
    )


@pytest.mark.parametrize("written_by", ["slm", "rule"])
def test_a_rule_that_raises_on_the_models_code_kills_only_its_edge(
    written_by: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rule applied to code the model wrote meets text no rule of ours produced (on the
    H200, launch_tuning raised IndexError on a model's 1-D block over a 2-D grid, and the
    whole compile ended with an internal error). There the edge dies with the exception
    named; on code only rules wrote, the same exception is cudaify's bug and propagates."""
    from cudaify.core.config import Config
    from cudaify.transforms.base import Method

    monkeypatch.setenv("CUDAIFY_CACHE_DIR", str(tmp_path / "cache"))
    program, _context, variant = offloaded_saxpy()
    stages = Stages(program, Config(cache=False, slm="off"))
    # the model's edit: the offloaded program, its launch rewritten (as a step records it)
    edited = variant.then("launch_tuning", variant.code + "\n// tuned\n", written_by)
    seen: list[str] = []

    def broken(self: Method, variant: Variant, context: Context):
        seen.append(variant.code)
        raise IndexError("tuple index out of range")

    monkeypatch.setattr(type(METHODS["unroll"]), "apply_rule", broken)
    monkeypatch.setattr(type(METHODS["unroll"]), "applies", lambda self, v, c: None)
    if written_by == "rule":
        with pytest.raises(IndexError):
            stages.expand(edited, "unroll")
        return
    child, reason = stages.expand(edited, "unroll")
    assert seen == [edited.code]
    assert child is None
    assert reason == "the rule failed on the model's code (IndexError: tuple index out of range)"
