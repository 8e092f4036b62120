import math
import socket

import pytest

from cudaify.core.errors import ModelError
from cudaify.transforms.slm.engine import RemoteEngine, Sampling, remote_prior

from .httpserver import FakeServer, completion_reply

MESSAGES = [{"role": "user", "content": "make it fast"}]
L6, L1 = math.log(0.6), math.log(0.1)


@pytest.fixture
def server():
    with FakeServer() as running:
        yield running


def test_completion_request_shape_and_answer(server, monkeypatch):
    monkeypatch.delenv("CUDAIFY_LLM_API_KEY", raising=False)
    engine = RemoteEngine(server.url, "qwen-coder-32b")
    sampling = Sampling(temperature=0.5, top_p=0.9, max_tokens=100, seed=7, stop=("###",))
    completion = engine.complete(MESSAGES, sampling)
    assert completion.text == "```cuda\nint main() { return 0; }\n```"
    assert (completion.prompt_tokens, completion.completion_tokens) == (42, 7)
    assert completion.seconds >= 0
    (request,) = server.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["body"] == {
        "model": "qwen-coder-32b",
        "messages": MESSAGES,
        "temperature": 0.5,
        "top_p": 0.9,
        "max_tokens": 100,
        "seed": 7,
        "stop": ["###"],
    }
    assert "Authorization" not in request["headers"]
    assert engine.identity == "remote:qwen-coder-32b"


def test_api_key_comes_from_the_named_environment_variable(server, monkeypatch):
    monkeypatch.setenv("CUDAIFY_LLM_API_KEY", "default-secret")
    monkeypatch.setenv("MY_KEY", "other-secret")
    RemoteEngine(server.url, "m").complete(MESSAGES, Sampling())
    RemoteEngine(server.url + "/v1", "m", api_key_env="MY_KEY").complete(MESSAGES, Sampling())
    assert server.requests[0]["headers"]["Authorization"] == "Bearer default-secret"
    assert server.requests[1]["headers"]["Authorization"] == "Bearer other-secret"
    assert server.requests[1]["path"] == "/v1/chat/completions"


def test_rejected_key_names_the_variable(server):
    server.status = 401
    server.raw = b'{"error": "bad key"}'
    with pytest.raises(ModelError, match=r"HTTP 401.*CUDAIFY_LLM_API_KEY.*bad key"):
        RemoteEngine(server.url, "m").complete(MESSAGES, Sampling())


def test_unreachable_server_is_a_clear_error():
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(ModelError, match="cannot reach the model server"):
        RemoteEngine(f"http://127.0.0.1:{port}", "m", timeout=5).complete(MESSAGES, Sampling())


def test_slow_server_times_out(server):
    server.delay = 1.0
    with pytest.raises(ModelError, match="no answer within|cannot reach"):
        RemoteEngine(server.url, "m", timeout=0.2).complete(MESSAGES, Sampling())


def test_malformed_answers_are_errors(server):
    server.raw = b"<html>proxy error</html>"
    with pytest.raises(ModelError, match="not JSON"):
        RemoteEngine(server.url, "m").complete(MESSAGES, Sampling())
    server.raw = b'{"choices": []}'
    with pytest.raises(ModelError, match="no choices"):
        RemoteEngine(server.url, "m").complete(MESSAGES, Sampling())


def _token(text, logprob, top=()):
    return {
        "token": text,
        "logprob": logprob,
        "top_logprobs": [{"token": t, "logprob": lp} for t, lp in top],
    }


def test_choose_asks_for_schema_constrained_json_and_reads_logprobs(server):
    options = ["offload", "shared_tiling", "loop_unroll"]
    text = '{"method": "offload"}'
    tokens = [
        _token('{"', -0.01),
        _token("method", -0.01),
        _token('":', -0.01),
        _token(' "', -0.01),
        _token(
            "off",
            math.log(0.6),
            [("off", math.log(0.6)), ("shared", math.log(0.3)), ("loop", math.log(0.1))],
        ),
        _token("load", -0.01),
        _token('"}', -0.01),
    ]
    server.reply = completion_reply(text, tokens)
    prior = RemoteEngine(server.url, "m").choose(MESSAGES, options, Sampling(temperature=0))
    assert prior == pytest.approx({"offload": 0.6, "shared_tiling": 0.3, "loop_unroll": 0.1})
    body = server.requests[0]["body"]
    schema = body["response_format"]["json_schema"]["schema"]
    assert body["response_format"]["type"] == "json_schema"
    assert schema["properties"]["method"]["enum"] == options
    assert body["logprobs"] is True and body["top_logprobs"] == 20


def test_choose_without_logprobs_is_one_hot(server):
    server.reply = completion_reply('{"method": "loop_unroll"}')
    prior = RemoteEngine(server.url, "m").choose(MESSAGES, ["offload", "loop_unroll"], Sampling())
    assert prior == {"offload": 0.0, "loop_unroll": 1.0}


def test_choose_refuses_an_answer_outside_the_options(server):
    server.reply = completion_reply('{"method": "rewrite_everything"}')
    with pytest.raises(ModelError, match="not one of"):
        RemoteEngine(server.url, "m").choose(MESSAGES, ["offload"], Sampling())


def test_prior_splits_a_shared_first_token_and_keeps_a_floor():
    options = ["shared_tiling", "shared_reduction", "offload"]
    text = '{"method":"shared_tiling"}'
    content = [
        _token('{"method":"', -0.01),
        _token("shared", math.log(0.8), [("shared", math.log(0.8)), ("zzz", math.log(0.2))]),
        _token("_tiling", -0.01),
        _token('"}', -0.01),
    ]
    prior = remote_prior(text, content, options, "shared_tiling", temperature=1.0)
    assert prior["shared_tiling"] == pytest.approx(prior["shared_reduction"])
    assert 0 < prior["offload"] < 0.01
    assert sum(prior.values()) == pytest.approx(1.0)
