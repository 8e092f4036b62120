"""The command's time budget reaches into the model: a generation begun late ends when the
search must stop instead of overrunning the budget (an H200 bench saw a 30 s compile take
42 s, a model answer started near its end)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from cudaify.core.errors import ModelFailure
from cudaify.transforms.slm.engine import (
    LocalEngine,
    RemoteEngine,
    Sampling,
    generation_deadline,
)

from .httpserver import FakeServer, completion_reply

MESSAGES = [{"role": "user", "content": "hi"}]


class Tokens:
    """llama_cpp.Llama's chat completion as far as the engine uses it: one token per 10 ms,
    asking the stopping criteria after each, up to max_tokens or an end of answer after
    `answer` tokens."""

    def __init__(self, answer: int = 10_000) -> None:
        self.generated = 0
        self.answer = answer

    def create_chat_completion(self, *, max_tokens: int, stopping_criteria: Any = None, **_: Any):
        finish = "length"
        for _token in range(max_tokens):
            time.sleep(0.01)
            self.generated += 1
            if self.generated == self.answer or (
                stopping_criteria is not None and stopping_criteria([], [])
            ):
                finish = "stop"
                break
        return {
            "choices": [{"message": {"content": "x" * self.generated}, "finish_reason": finish}],
            "usage": {"prompt_tokens": 3, "completion_tokens": self.generated},
        }


def local(llm: Tokens) -> LocalEngine:
    engine = LocalEngine.__new__(LocalEngine)  # no model file: the fake stands for llama.cpp
    engine.llm = llm  # type: ignore[assignment]
    engine.model_path = Path("fake.gguf")
    return engine


def test_a_local_generation_stops_at_the_deadline_and_fails_as_budget() -> None:
    llm = Tokens()
    began = time.monotonic()
    with generation_deadline(began + 0.3), pytest.raises(ModelFailure) as failure:
        local(llm).complete(MESSAGES, Sampling(max_tokens=1000))
    assert failure.value.kind == "budget"
    assert time.monotonic() - began < 2.0  # 1,000 tokens would take 10 s
    assert 5 <= llm.generated < 200


def test_without_a_deadline_the_generation_runs_to_its_end() -> None:
    llm = Tokens(answer=30)
    with generation_deadline(None):
        answer = local(llm).complete(MESSAGES, Sampling(max_tokens=100))
    assert llm.generated == 30 and answer.text == "x" * 30
    later = Tokens(answer=30)  # a deadline far enough away changes nothing
    with generation_deadline(time.monotonic() + 60):
        assert local(later).complete(MESSAGES, Sampling(max_tokens=100)).text == "x" * 30


def test_a_deadline_already_passed_asks_nothing() -> None:
    llm = Tokens()
    with generation_deadline(time.monotonic() - 1), pytest.raises(ModelFailure) as failure:
        local(llm).complete(MESSAGES, Sampling(max_tokens=20))
    assert failure.value.kind == "budget" and llm.generated == 0
    with generation_deadline(time.monotonic() - 1), pytest.raises(ModelFailure):
        local(llm).choose(MESSAGES, ["a", "b"], Sampling())


def test_an_endpoints_wait_is_cut_to_the_deadline() -> None:
    with FakeServer() as server:
        server.reply = completion_reply("```cuda\nint main() { return 0; }\n```")
        server.delay = 3.0
        began = time.monotonic()
        with generation_deadline(began + 0.4), pytest.raises(ModelFailure) as failure:
            RemoteEngine(server.url, "m", timeout=60).complete(MESSAGES, Sampling())
        assert failure.value.kind == "budget"
        assert time.monotonic() - began < 2.0
        server.delay = 0.0
        with generation_deadline(time.monotonic() + 30):
            answer = RemoteEngine(server.url, "m", timeout=60).complete(MESSAGES, Sampling())
        assert "int main" in answer.text


class Recording:
    """An engine that records the generation deadline each request was made under."""

    identity = "recording"

    def __init__(self) -> None:
        self.stop_at: list[float | None] = []

    def complete(self, messages: Any, sampling: Sampling) -> Any:
        from cudaify.transforms.slm import engine

        self.stop_at.append(engine._STOP_AT.get())
        time.sleep(0.05)
        return completion_reply("")


@pytest.mark.parametrize("budget", [30.0, 0.0])
def test_the_search_asks_the_model_under_the_commands_budget(budget: float, tmp_path: Path) -> None:
    """Stages' model requests end when the search must stop (no GPU here: at the deadline
    itself); without a budget they have no deadline. Their time is the breakdown's
    "model"."""
    from cudaify.backend.budget import Deadline
    from cudaify.pipeline import Stages

    from .test_decoy_endpoint import GOLDEN, analysed, model_config

    program = analysed(GOLDEN / "offload" / "saxpy.c")
    config = model_config("http://127.0.0.1:9", tmp_path).with_(time_budget=budget)
    stages = Stages(program, config, Deadline(budget))
    recording = Recording()
    stages._engine = recording
    asked = time.monotonic()
    stages._model().complete(MESSAGES, Sampling())
    (stop_at,) = recording.stop_at
    assert stages.breakdown.get("model") >= 0.05  # the answer's time is the model's
    if budget:
        assert stop_at is not None and asked + budget - 1 < stop_at <= asked + budget
    else:
        assert stop_at is None
