"""The real 0.5B model (skipped where it is not installed: `cudaify model install
qwen2.5-coder-0.5b`). Few tokens each: these run on the CPU."""

import pytest

from cudaify.transforms.slm import models
from cudaify.transforms.slm.cache import CachedEngine, Recorder, Replay
from cudaify.transforms.slm.engine import LocalEngine, Sampling
from cudaify.transforms.slm.prompt import choice_prompt

from .programs import CHOICES, SAXPY

SMALL = "qwen2.5-coder-0.5b"
pytestmark = [
    pytest.mark.slm,
    pytest.mark.skipif(not models.is_installed(SMALL), reason=f"model {SMALL} is not installed"),
]
QUESTION = [
    {
        "role": "user",
        "content": "In CUDA C++, which built-in variable holds a thread's index within its "
        "block? Reply with its name only.",
    }
]


@pytest.fixture(scope="module")
def engine():
    return LocalEngine(models.path(SMALL), n_ctx=2048, n_threads=2)


def test_one_completion(engine):
    completion = engine.complete(QUESTION, Sampling(max_tokens=16, temperature=0))
    assert "threadidx" in completion.text.lower()
    assert completion.prompt_tokens > 10
    assert 0 < completion.completion_tokens <= 16
    assert completion.seconds > 0
    assert engine.identity == "gguf:" + models.REGISTRY[SMALL].sha256


def test_choose_gives_a_distribution_over_the_options(engine):
    prior = engine.choose(choice_prompt(SAXPY, CHOICES), list(CHOICES), Sampling())
    assert list(prior) == list(CHOICES)
    assert sum(prior.values()) == pytest.approx(1.0, abs=1e-9)
    assert all(0 < value < 1 for value in prior.values())
    # a sequential loop is offloaded before it is tiled or unrolled
    assert max(prior, key=prior.get) == "offload"


def test_choose_scores_options_sharing_a_prefix_apart(engine):
    options = ["shared_tiling", "shared_reduction"]
    messages = [{"role": "user", "content": 'Reply {"method": "shared_reduction"} exactly.'}]
    prior = engine.choose(messages, options, Sampling())
    assert prior["shared_reduction"] > 0.8


def test_record_then_replay_without_the_model(engine, tmp_path):
    record = tmp_path / "run.jsonl"
    recording = CachedEngine(engine, record=Recorder(record))
    asked = recording.complete(QUESTION, Sampling(max_tokens=8, seed=5))
    chosen = recording.choose(QUESTION, ["threadIdx", "blockDim"], Sampling(seed=5))
    replaying = CachedEngine(None, replay=Replay(record))
    assert replaying.identity == engine.identity
    assert replaying.complete(QUESTION, Sampling(max_tokens=8, seed=5)).text == asked.text
    assert replaying.choose(QUESTION, ["threadIdx", "blockDim"], Sampling(seed=5)) == chosen


def test_a_generation_stops_at_its_deadline(engine):
    """The deadline reaches llama.cpp itself (a stopping criterion): with the fake llama of
    the unit tests only, create_chat_completion's refusal of one went unseen and every
    local answer failed."""
    import time

    from cudaify.core.errors import ModelFailure
    from cudaify.transforms.slm.engine import generation_deadline

    story = [{"role": "user", "content": "Write a long story about a GPU, 2000 words."}]
    began = time.monotonic()
    with generation_deadline(began + 1.0), pytest.raises(ModelFailure) as failure:
        engine.complete(story, Sampling(max_tokens=4000, temperature=0))
    assert failure.value.kind == "budget"
    assert time.monotonic() - began < 4.0
    answer = engine.complete(QUESTION, Sampling(max_tokens=16, temperature=0))
    assert "threadidx" in answer.text.lower()  # the engine still answers afterwards
