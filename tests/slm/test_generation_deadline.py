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
    """llama_cpp.Llama's completion as far as the engine uses it: one token per 10 ms,
    asking the stopping criteria after each, up to max_tokens or an end of answer after
    `answer` tokens. The chat template is llama.cpp's own (a ChatML one here)."""

    metadata = {
        "tokenizer.chat_template": "{% for m in messages %}<|im_start|>{{ m.role }}\n"
        "{{ m.content }}<|im_end|>\n{% endfor %}<|im_start|>assistant\n"
    }

    def __init__(self, answer: int = 10_000, read_seconds: float = 0.0) -> None:
        self.generated = 0
        self.answer = answer
        self.prompts: list[str] = []
        # reading the prompt: `read_seconds` per batch of eval(); what the cache holds
        self.read_seconds = read_seconds
        self.input_ids: list[int] = []
        self.n_tokens = 0
        self.n_batch = 512
        self.completions = 0

    def eval(self, tokens: list[int]) -> None:
        time.sleep(self.read_seconds)
        self.input_ids = self.input_ids[: self.n_tokens] + list(tokens)
        self.n_tokens = len(self.input_ids)

    def token_eos(self) -> int:
        return 2

    def token_bos(self) -> int:
        return -1

    def detokenize(self, tokens: list[int], special: bool) -> bytes:
        return b"<|endoftext|>" if tokens == [2] else b""

    def tokenize(self, text: bytes, add_bos: bool, special: bool) -> list[int]:
        self.prompts.append(text.decode())
        return list(range(len(text.split())))

    def create_completion(self, *, max_tokens: int, stopping_criteria: Any, **_: Any):
        self.completions += 1
        finish = "length"
        for _token in range(max_tokens):
            time.sleep(0.01)
            self.generated += 1
            if self.generated == self.answer or stopping_criteria([7], []):
                finish = "stop"
                break
        return {
            "choices": [{"text": "x" * self.generated, "finish_reason": finish}],
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
    assert llm.prompts == ["<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant"]
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


class Prompting:
    """llama_cpp.Llama as the option scoring uses it: reading a batch of the prompt
    takes 50 ms (a CPU's prompt reading, scaled down)."""

    n_batch = 100

    def __init__(self) -> None:
        self.read = 0
        self.n_tokens = 0

    def reset(self) -> None:
        self.n_tokens = 0

    def eval(self, tokens: list[int]) -> None:
        time.sleep(0.05)
        self.read += len(tokens)
        self.n_tokens += len(tokens)


def test_scoring_options_stops_reading_the_prompt_at_the_deadline() -> None:
    """The method-choice prior reads the whole program before it scores an option; on a
    CPU that took 45 of a 60 s budget. It stops between batches once the deadline passed."""
    llm = Prompting()
    engine = local(llm)  # type: ignore[arg-type]
    engine._logprobs = lambda: [0.0] * 8  # type: ignore[method-assign]
    began = time.monotonic()
    with pytest.raises(ModelFailure) as failure:
        engine._score(list(range(2000)), [[1, 2], [3]], stop_at=began + 0.12)
    assert failure.value.kind == "budget"
    assert 100 <= llm.read <= 400 and time.monotonic() - began < 0.5  # of 2000 tokens, 1 s
    whole = Prompting()
    scorer = local(whole)  # type: ignore[arg-type]
    scorer._logprobs = lambda: [0.0, -1.0, -2.0, -3.0]  # type: ignore[method-assign]
    assert scorer._score(list(range(250)), [[1, 2], [3]], stop_at=None) == [-1.0 + -2.0, -3.0]
    assert whole.read == 250 + 1  # the prompt in 3 batches, then the first tail's first token


def test_a_deadline_inside_another_ends_at_the_earlier() -> None:
    from cudaify.transforms.slm.engine import _STOP_AT

    now = time.monotonic()
    with generation_deadline(now + 5):
        with generation_deadline(now + 50):
            assert _STOP_AT.get() == now + 5  # a share cannot outlive the budget
        with generation_deadline(now + 1):
            assert _STOP_AT.get() == now + 1
        with generation_deadline(None):
            assert _STOP_AT.get() == now + 5
    with generation_deadline(None):
        assert _STOP_AT.get() is None


class SlowChooser:
    """An engine whose method choice reads the program for `seconds`, within the
    generation deadline it was asked under, as the local engine does."""

    identity = "slow-chooser"

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.stop_at: list[float | None] = []

    def choose(self, messages: Any, options: Any, sampling: Sampling) -> dict[str, float]:
        from cudaify.transforms.slm import engine

        stop_at = engine._STOP_AT.get()
        self.stop_at.append(stop_at)
        if stop_at is not None and time.monotonic() + self.seconds > stop_at:
            time.sleep(max(0.0, stop_at - time.monotonic()))
            raise engine._budget_spent("slow-chooser")
        time.sleep(self.seconds)
        return {option: 1.0 / len(options) for option in options}


def test_the_method_prior_answers_within_its_share_or_says_it_could_not(tmp_path: Path) -> None:
    """Stages.method_prior: within the seconds the search gives it, the model's choice;
    past them, None (the search then stops asking), not {} (a failure of the model), and
    the command's 30 s budget does not lengthen a share of 0.2 s."""
    from cudaify.backend.budget import Deadline
    from cudaify.core import Variant
    from cudaify.pipeline import Stages

    from .test_decoy_endpoint import GOLDEN, analysed, model_config

    program = analysed(GOLDEN / "offload" / "saxpy.c")
    config = model_config("http://127.0.0.1:9", tmp_path).with_(time_budget=30.0)
    stages = Stages(program, config, Deadline(30.0))
    variant = Variant(program.source)
    stages._engine = SlowChooser(0.05)
    assert stages.method_prior(variant, ["offload", "schedule"], 0.2) == {
        "offload": 0.5,
        "schedule": 0.5,
    }
    stages._engine = slow = SlowChooser(1.0)
    began = time.monotonic()
    assert stages.method_prior(variant, ["offload", "schedule"], 0.2) is None
    assert time.monotonic() - began < 0.6
    (stop_at,) = slow.stop_at
    assert stop_at is not None and stop_at < began + 0.25  # the share, not the 30 s


def test_a_local_generation_makes_way_between_tokens() -> None:
    """Inside `generation_pauses`, a local generation calls the make-way callback between
    tokens every MAKE_WAY_EVERY seconds (where a timing takes the GPU meanwhile), and an
    option scoring between the batches of the prompt it reads."""
    from cudaify.transforms.slm.engine import MAKE_WAY_EVERY, generation_pauses

    calls: list[float] = []
    llm = Tokens(answer=40)  # 0.4 s of tokens
    with generation_pauses(lambda: calls.append(time.monotonic())):
        answer = local(llm).complete(MESSAGES, Sampling(max_tokens=100))
    assert answer.text == "x" * 40
    assert 3 <= len(calls) <= 0.4 / MAKE_WAY_EVERY + 1
    assert all(b - a >= MAKE_WAY_EVERY * 0.9 for a, b in zip(calls, calls[1:], strict=False))
    reading = Prompting()
    scorer = local(reading)  # type: ignore[arg-type]
    scorer._logprobs = lambda: [0.0] * 4  # type: ignore[method-assign]
    calls.clear()
    with generation_pauses(lambda: calls.append(time.monotonic())):
        scorer._score(list(range(500)), [[1]], stop_at=None)  # 5 batches of 50 ms
    assert len(calls) >= 3


def test_reading_a_long_prompt_stops_at_the_deadline_too() -> None:
    """llama.cpp reads a prompt in one call nothing stops (170 s for a 13,600-token prompt
    on two CPU cores): under a deadline the engine reads it a batch at a time first, and
    a read that runs past the deadline ends as budget, without starting the answer."""
    llm = Tokens(read_seconds=0.05)
    words = " ".join(["w"] * 3000)  # 24 batches of 128 tokens: 1.2 s to read
    began = time.monotonic()
    with generation_deadline(began + 0.2), pytest.raises(ModelFailure) as failure:
        local(llm).complete([{"role": "user", "content": words}], Sampling(max_tokens=10))
    assert failure.value.kind == "budget"
    assert time.monotonic() - began < 0.5 and llm.completions == 0
    # without a deadline the completion reads it itself, as before
    llm = Tokens(answer=5, read_seconds=0.05)
    local(llm).complete([{"role": "user", "content": words}], Sampling(max_tokens=10))
    assert llm.completions == 1 and llm.n_tokens == 0
    # in time: the prompt but its last token is in the cache before the answer starts
    llm = Tokens(answer=5)
    with generation_deadline(time.monotonic() + 30):
        local(llm).complete([{"role": "user", "content": words}], Sampling(max_tokens=10))
    assert llm.completions == 1 and llm.n_tokens == len(llm.prompts[-1].split()) - 1


def test_a_request_waits_for_the_model_only_until_its_deadline(tmp_path: Path) -> None:
    """One request at a time per process: while the search's background answer holds the
    model, a method prior waits for it only within its share (None after 0.2 s, not after
    the other answer's 2 s), and a completion only until the search must stop (the
    command's budget); with time left, the request runs once the model is free."""
    import threading

    from cudaify.backend.budget import Deadline
    from cudaify.core import Variant
    from cudaify.pipeline import Stages, _model_turn

    from .test_decoy_endpoint import GOLDEN, analysed, model_config

    program = analysed(GOLDEN / "offload" / "saxpy.c")
    config = model_config("http://127.0.0.1:9", tmp_path).with_(time_budget=1.0)
    stages = Stages(program, config, Deadline(1.0))
    stages._engine = chooser = SlowChooser(0.05)
    holding, release = threading.Event(), threading.Event()

    def background_answer() -> None:
        with _model_turn():
            holding.set()
            release.wait(2.0)

    other = threading.Thread(target=background_answer)
    other.start()
    holding.wait()
    began = time.monotonic()
    assert stages.method_prior(Variant(program.source), ["offload", "schedule"], 0.2) is None
    assert 0.15 < time.monotonic() - began < 0.5 and chooser.stop_at == []
    stages._engine = recording = Recording()
    with pytest.raises(ModelFailure) as failure:
        stages._model().complete(MESSAGES, Sampling())
    assert failure.value.kind == "budget" and recording.stop_at == []
    assert time.monotonic() - began < 1.3  # the command's 1 s, not the answer's 2 s
    release.set()
    other.join()
    free = Stages(program, config.with_(time_budget=30.0), Deadline(30.0))
    free._engine = chooser
    assert free.method_prior(Variant(program.source), ["offload"], 0.2) == {"offload": 1.0}


def test_a_local_models_request_waits_for_a_slot_only_until_its_deadline(tmp_path, monkeypatch):
    """Another compile holds the machine's only generation slot: the search's request
    fails as "budget" when the command's 0.5 s budget ends, without generating."""
    from cudaify.backend.budget import Deadline
    from cudaify.core.slots import one_slot
    from cudaify.pipeline import Stages

    from .test_decoy_endpoint import GOLDEN, analysed, model_config

    program = analysed(GOLDEN / "offload" / "saxpy.c")
    config = model_config("http://127.0.0.1:9", tmp_path).with_(time_budget=0.5, slm_jobs=1)
    stages = Stages(program, config, Deadline(0.5))
    monkeypatch.setattr(Stages, "local_model", property(lambda self: True))
    asked: list[object] = []

    class Engine:
        identity = "slot-test"

        def complete(self, messages, sampling):
            asked.append(messages)

    stages._engine = Engine()
    failures: list[ModelFailure] = []

    def request() -> None:
        try:
            stages._model().complete([{"role": "user", "content": "hi"}], Sampling())
        except ModelFailure as failure:
            failures.append(failure)

    import threading

    began = time.monotonic()
    with one_slot(stages._slots_folder(), 1):
        waiting = threading.Thread(target=request)
        waiting.start()
        waiting.join(3.0)
        assert not waiting.is_alive(), "the request still waits for the slot"
    assert time.monotonic() - began < 0.9
    assert [failure.kind for failure in failures] == ["budget"] and asked == []
