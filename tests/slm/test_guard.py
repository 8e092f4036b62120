"""The guard every model request goes through: failures counted by kind, the model switched
off after its first request fails or after N failures in a row, strict mode an error."""

from __future__ import annotations

import pytest

from cudaify.core.errors import ModelError, ModelFailure
from cudaify.transforms.slm.engine import PromptTooLong
from cudaify.transforms.slm.guard import Guard, ModelOff, StrictModelError


def fail(kind: str):
    def request():
        raise ModelFailure(kind, f"{kind} happened")

    return request


def test_a_model_that_never_answered_is_switched_off_at_its_first_failure():
    guard = Guard(limit=5)
    with pytest.raises(ModelFailure):
        guard.ask(fail("unreachable"))
    assert not guard.on
    with pytest.raises(ModelOff):
        guard.ask(lambda: "never asked")
    assert guard.summary() == (
        "the language model failed 1 request (unreachable 1); "
        "switched off after its first request failed: unreachable"
    )


def test_n_failures_in_a_row_switch_it_off_and_an_answer_resets_the_count():
    guard = Guard(limit=3)
    assert guard.ask(lambda: "ok") == "ok"
    for kind in ("timeout", "format"):
        with pytest.raises(ModelFailure):
            guard.ask(fail(kind))
    assert guard.ask(lambda: "ok again") == "ok again"
    for kind in ("timeout", "http"):
        with pytest.raises(ModelFailure):
            guard.ask(fail(kind))
    assert guard.on
    with pytest.raises(ModelFailure):
        guard.ask(fail("timeout"))
    assert not guard.on and guard.off_reason == "3 failures in a row"
    assert guard.to_json()["failures"] == {"timeout": 3, "format": 1, "http": 1}


def test_a_crash_in_the_model_library_is_a_failure_of_kind_crash():
    guard = Guard()
    guard.ask(lambda: "ok")

    def crash():
        raise KeyError("logits")

    with pytest.raises(ModelFailure) as caught:
        guard.ask(crash)
    assert caught.value.kind == "crash" and guard.failures["crash"] == 1


def test_set_up_errors_and_long_prompts_pass_through_uncounted():
    guard = Guard()

    def too_long():
        raise PromptTooLong("does not fit")

    def replay_miss():
        raise ModelError("no recorded answer")

    with pytest.raises(PromptTooLong):
        guard.ask(too_long)
    with pytest.raises(ModelError) as caught:
        guard.ask(replay_miss)
    assert not isinstance(caught.value, ModelFailure)
    # the command's time budget ran out mid-answer: the model is not to blame, even on
    # its first request (which would otherwise switch it off)
    with pytest.raises(ModelFailure) as spent:
        guard.ask(fail("budget"))
    assert spent.value.kind == "budget"
    assert guard.on and not guard.failures


def test_strict_makes_any_failure_an_error_no_edge_catches():
    guard = Guard(strict=True)
    with pytest.raises(StrictModelError) as caught:
        guard.ask(fail("http"))
    assert not isinstance(caught.value, ModelFailure)
    assert str(caught.value) == "the language model failed (http): http happened"
