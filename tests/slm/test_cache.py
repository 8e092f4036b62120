import json
from pathlib import Path

import pytest

from cudaify.core.errors import ModelError
from cudaify.transforms.slm.cache import (
    CachedEngine,
    CompletionCache,
    Recorder,
    Replay,
    ReplayMiss,
    request_key,
    request_of,
)
from cudaify.transforms.slm.engine import RemoteEngine, Sampling
from cudaify.transforms.slm.extract import extract_code

from .httpserver import FakeServer
from .programs import SAXPY

FIXTURE = Path(__file__).parent / "data" / "replay_0.5b.jsonl"
MESSAGES = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "add"}]


def _recorded() -> list[dict]:
    return [json.loads(line) for line in FIXTURE.read_text().splitlines()]


DEFAULT = Sampling()


def _key(identity="gguf:abc", messages=MESSAGES, sampling=DEFAULT, kind="complete", options=None):
    return request_key(identity, kind, request_of(messages, sampling, options))


def test_equal_requests_have_equal_keys():
    copy = [dict(reversed(list(message.items()))) for message in MESSAGES]
    assert _key() == _key(messages=copy)
    assert len(_key()) == 64


@pytest.mark.parametrize(
    "change",
    [
        {"identity": "gguf:abd"},
        {"identity": "remote:abc"},
        {"messages": [*MESSAGES[:1], {"role": "user", "content": "add "}]},
        {"messages": [*MESSAGES[:1], {"role": "assistant", "content": "add"}]},
        {"messages": MESSAGES[1:]},
        {"sampling": Sampling(seed=1)},
        {"sampling": Sampling(temperature=0.3)},
        {"sampling": Sampling(top_p=0.9)},
        {"sampling": Sampling(max_tokens=2047)},
        {"sampling": Sampling(stop=("}",))},
        {"kind": "choose"},
        {"kind": "choose", "options": ["a", "b"]},
    ],
)
def test_any_change_of_model_prompt_or_sampling_changes_the_key(change):
    assert _key(**change) != _key()


def test_option_order_and_set_change_a_choice_key():
    first = _key(kind="choose", options=["a", "b"])
    assert first != _key(kind="choose", options=["b", "a"])
    assert first != _key(kind="choose", options=["a", "b", "c"])


def test_fixture_keys_are_what_request_key_computes():
    for entry in _recorded():
        assert entry["key"] == request_key(entry["model"], entry["kind"], entry["request"])


def test_replay_serves_recorded_answers_without_a_model(tmp_path):
    replay = Replay(FIXTURE)
    engine = CachedEngine(None, replay=replay, record=Recorder(tmp_path / "again.jsonl"))
    assert engine.identity.startswith("gguf:1d9614638d18")
    for entry in _recorded():
        request = entry["request"]
        sampling = Sampling.from_json(request["sampling"])
        if entry["kind"] == "complete":
            completion = engine.complete(request["messages"], sampling)
            assert completion.text == entry["completion"]["text"]
            assert completion.cached
            assert extract_code(completion.text).code is not None
        else:
            prior = engine.choose(request["messages"], request["options"], sampling)
            assert prior == entry["choice"]
            assert sum(prior.values()) == pytest.approx(1.0)
    again = [json.loads(line) for line in (tmp_path / "again.jsonl").read_text().splitlines()]
    assert again == _recorded()  # a replayed run records the same file


def test_replay_miss_is_an_error_never_a_model_call():
    entry = next(e for e in _recorded() if e["kind"] == "complete")
    engine = CachedEngine(None, replay=Replay(FIXTURE))
    other_seed = Sampling.from_json({**entry["request"]["sampling"], "seed": 99})
    with pytest.raises(ReplayMiss, match="no recorded answer for this complete request"):
        engine.complete(entry["request"]["messages"], other_seed)
    with pytest.raises(ReplayMiss):
        engine.complete([{"role": "user", "content": SAXPY}], Sampling())


def test_replay_file_errors_carry_the_line(tmp_path):
    broken = tmp_path / "broken.jsonl"
    broken.write_text(FIXTURE.read_text().splitlines()[0] + "\n{not json\n")
    with pytest.raises(ModelError, match=r"broken.jsonl:2:1: not a record line"):
        Replay(broken)
    with pytest.raises(ModelError, match="cannot read"):
        Replay(tmp_path / "missing.jsonl")


def test_replay_of_several_models_needs_an_identity(tmp_path):
    lines = _recorded()
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text("\n".join(json.dumps({**e, "model": f"m{i}"}) for i, e in enumerate(lines)))
    with pytest.raises(ModelError, match="names models m0, m1"):
        CachedEngine(None, replay=Replay(mixed))
    assert CachedEngine(None, replay=Replay(mixed), identity="m1").identity == "m1"


def test_cache_put_get_round_trip(tmp_path):
    cache = CompletionCache(tmp_path)
    entry = _recorded()[0]
    assert cache.get(entry["key"]) is None
    cache.put(entry["key"], entry)
    assert cache.get(entry["key"]) == entry
    assert not list(tmp_path.rglob("*.tmp"))


def test_cache_answers_a_repeated_request_and_records_it(tmp_path):
    cache = CompletionCache(tmp_path / "cache")
    with FakeServer() as server:
        engine = CachedEngine(
            RemoteEngine(server.url, "m"), cache=cache, record=Recorder(tmp_path / "run.jsonl")
        )
        first = engine.complete(MESSAGES, Sampling(seed=3))
        second = engine.complete(MESSAGES, Sampling(seed=3))
        assert len(server.requests) == 1
        assert (first.cached, second.cached) == (False, True)
        assert second.text == first.text
        engine.complete(MESSAGES, Sampling(seed=4))
        assert len(server.requests) == 2
        # a new process with the same cache asks nothing
        fresh = CachedEngine(
            RemoteEngine(server.url, "m"), cache=CompletionCache(tmp_path / "cache")
        )
        assert fresh.complete(MESSAGES, Sampling(seed=3)).text == first.text
        assert len(server.requests) == 2
    recorded = Replay(tmp_path / "run.jsonl")
    assert len(recorded.entries) == 2  # the cached repeat recorded the same line again
    assert (tmp_path / "run.jsonl").read_text().count("\n") == 3
    replayed = CachedEngine(None, replay=recorded)
    assert replayed.complete(MESSAGES, Sampling(seed=4)).text == first.text


def test_cached_engine_needs_a_source():
    with pytest.raises(ValueError):
        CachedEngine(None)
