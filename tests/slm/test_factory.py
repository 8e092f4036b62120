import json
import os
from pathlib import Path

import pytest

from cudaify.core.errors import ConfigError
from cudaify.transforms.slm import models
from cudaify.transforms.slm.cache import ReplayMiss
from cudaify.transforms.slm.engine import RemoteEngine, Sampling
from cudaify.transforms.slm.factory import model_identity, open_engine

from .httpserver import FakeServer

FIXTURE = Path(__file__).parent / "data" / "replay_0.5b.jsonl"
RECORDED = json.loads(FIXTURE.read_text().splitlines()[0])


@pytest.fixture
def empty_store(tmp_path, monkeypatch):
    monkeypatch.setenv("CUDAIFY_MODEL_DIR", str(tmp_path / "store"))
    monkeypatch.delenv("CUDAIFY_MODEL", raising=False)
    return tmp_path / "store"


def _replay_recorded(engine):
    request = RECORDED["request"]
    return engine.complete(request["messages"], Sampling.from_json(request["sampling"]))


def test_identity_of_a_registry_model_needs_no_file(empty_store):
    small = models.REGISTRY["qwen2.5-coder-0.5b"]
    assert model_identity("qwen2.5-coder-0.5b") == f"gguf:{small.sha256}"
    assert model_identity(None) == f"gguf:{models.REGISTRY[models.DEFAULT_MODEL].sha256}"
    assert model_identity("x", llm_model="qwen-32b") == "remote:qwen-32b"
    assert not empty_store.exists()


def test_identity_of_a_gguf_path_is_its_sha256(tmp_path):
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF1234")
    assert model_identity(str(gguf)) == f"gguf:{models.file_sha256(gguf)}"


def test_replay_loads_no_model(empty_store):
    engine = open_engine(replay=FIXTURE, use_cache=False)
    assert engine.engine is None
    assert _replay_recorded(engine).text == RECORDED["completion"]["text"]
    assert not empty_store.exists()


def test_replay_with_another_model_misses(empty_store):
    assert _replay_recorded(open_engine(replay=FIXTURE, model="qwen2.5-coder-0.5b")).cached
    with pytest.raises(ReplayMiss):
        _replay_recorded(open_engine(replay=FIXTURE, model="qwen2.5-coder-1.5b"))


def test_remote_options_go_together():
    with pytest.raises(ConfigError, match="--llm-model"):
        open_engine(llm_url="http://127.0.0.1:1")
    with pytest.raises(ConfigError, match="--llm-url"):
        open_engine(llm_model="qwen")


def test_remote_engine_behind_the_cache(tmp_path):
    with FakeServer() as server:
        engine = open_engine(llm_url=server.url, llm_model="m", cache_dir=tmp_path)
        assert isinstance(engine.engine, RemoteEngine)
        engine.complete([{"role": "user", "content": "hi"}], Sampling())
        engine.complete([{"role": "user", "content": "hi"}], Sampling())
        assert len(server.requests) == 1
    assert len([name for _, _, names in os.walk(tmp_path) for name in names]) == 1
