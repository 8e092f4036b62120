"""Fault injection (issue 22): a model that answers garbage, decoys, HTTP 500, too slowly or
not at all costs the user nothing: the compile ends with exit 0, an output file and one
warning naming the failure, and finds exactly what the rules alone find. --strict-model
turns the failure into a one-line error with no output. A Ctrl-C mid-search leaves no
output, no temporary file and a readable cache."""

from __future__ import annotations

import json
import math
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from cudaify.cli import main

from .httpserver import FakeServer, completion_reply

ROOT = Path(__file__).resolve().parents[2]
SAXPY = ROOT / "examples" / "saxpy.c"
FAST = ["--iterations", "4", "--time-budget", "60", "--seed", "0", "--no-cache"]
# The search asks the model's method prior only where the reasoning graph has little record
# (mcgs.PRIOR_EVIDENCE), which the shipped graph has at saxpy's first states: these tests
# ask it everywhere, so that the first request (the start's) meets the fault.
PRIOR_EVERYWHERE = "import math, cudaify.mcgs.mcgs as m; m.PRIOR_EVIDENCE = math.inf"


@pytest.fixture(autouse=True)
def prior_everywhere(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("cudaify.mcgs.mcgs.PRIOR_EVIDENCE", math.inf)


def compile_with(tmp_path: Path, *args: str) -> tuple[object, Path, Path]:
    out = tmp_path / "saxpy.cu"
    trace = tmp_path / "trace.json"
    result = CliRunner().invoke(
        main, [str(SAXPY), "-o", str(out), "--trace", str(trace), *FAST, *args]
    )
    return result, out, trace


def closed_port() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


def search_of(trace: Path) -> tuple[list[str], list[str]]:
    """What the search found: the chosen methods and every state it verified, with its
    edges (a model switched off before any SLM edge was made leaves none); not what each
    state cost (`seconds`: a later run finds the builds cached)."""
    data = json.loads(trace.read_text())
    chosen = [step["method"] for step in data["chosen"]]
    states = [{k: v for k, v in s.items() if k != "seconds"} for s in data["search"]["graph"]]
    return chosen, [json.dumps(state, sort_keys=True) for state in states]


@pytest.fixture(scope="module")
def rules_only(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], list[str]]:
    folder = tmp_path_factory.mktemp("rules")
    result, out, trace = compile_with(folder, "--slm", "off")
    assert result.exit_code == 0, result.stderr
    return search_of(trace)


def garbage(server: FakeServer) -> None:
    server.raw = b"<html>502 Bad Gateway</html>"


def decoy(server: FakeServer) -> None:  # well-formed, but not the choice that was asked for
    server.reply = completion_reply('{"method": "make_it_fast"}')


def refusal(server: FakeServer) -> None:
    server.reply = completion_reply("I'm sorry, I cannot help with that.")


def http_500(server: FakeServer) -> None:
    server.status = 500
    server.raw = b'{"error": "internal"}'


def slow(server: FakeServer) -> None:
    server.delay = 3.0  # past the client's --llm-timeout 1


FAULTS = {
    "garbage": (garbage, "format"),
    "decoy": (decoy, "format"),
    "refusal": (refusal, "refusal"),
    "http_500": (http_500, "http"),
    "slow": (slow, "timeout"),
}


def model_flags(url: str, fault: str = "") -> list[str]:
    # only the slow fault is meant to time out: under load, another's answer may take a while
    timeout = "1" if fault == "slow" else "60"
    return ["--slm", "on", "--llm-url", url, "--llm-model", "m", "--llm-timeout", timeout]


def assert_survived(result, out: Path, trace: Path, kind: str, rules_only) -> None:
    assert result.exit_code == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert f"the language model failed 1 request ({kind} 1)" in result.stderr
    assert "Transformation sequence" in out.read_text()
    assert json.loads(trace.read_text())["model"]["failures"] == {kind: 1}
    assert search_of(trace) == rules_only  # a failing model changes nothing the rules find


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_failing_model_is_a_warning_and_the_rules_result(tmp_path, fault, rules_only):
    arrange, kind = FAULTS[fault]
    with FakeServer() as server:
        arrange(server)
        result, out, trace = compile_with(tmp_path, *model_flags(server.url, fault))
    assert server.requests, "the model was never asked"
    assert_survived(result, out, trace, kind, rules_only)


def test_an_unreachable_endpoint_is_a_warning_and_the_rules_result(tmp_path, rules_only):
    result, out, trace = compile_with(tmp_path, *model_flags(closed_port()))
    assert_survived(result, out, trace, "unreachable", rules_only)
    assert "switched off" in result.stderr


@pytest.mark.parametrize("fault", ["garbage", "http_500", "slow"])
def test_strict_model_is_a_one_line_error_and_no_output(tmp_path, fault):
    with FakeServer() as server:
        FAULTS[fault][0](server)
        flags = model_flags(server.url, fault)
        result, out, _trace = compile_with(tmp_path, *flags, "--strict-model")
    assert result.exit_code == 4
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cudaify: error: the language model failed")
    assert FAULTS[fault][1] in lines[0]
    assert not out.exists()


@pytest.mark.parametrize(("number", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_interrupt_mid_search_leaves_no_output_and_a_usable_cache(tmp_path, number, code):
    """The model's answer is held back, so the signal surely lands mid-search."""
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = out_dir / "saxpy.cu"
    env = {**os.environ, "CUDAIFY_CACHE_DIR": str(tmp_path / "cache")}
    program = f"{PRIOR_EVERYWHERE}; from cudaify.cli import main; main()"
    command = [sys.executable, "-c", program, str(SAXPY), "-o", str(out), *FAST]
    with FakeServer() as server:
        server.delay = 60.0
        flags = ["--slm", "on", "--llm-url", server.url, "--llm-model", "m"]
        proc = subprocess.Popen(
            command + flags,
            env=env,
            stderr=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            # as from a terminal: a process started with SIGINT ignored (as this suite's may
            # be, by the time this runs) keeps ignoring it, so Python raises no KeyboardInterrupt
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        try:
            assert server.received.wait(120), "the compile never asked the model"
            proc.send_signal(number)
            _stdout, stderr = proc.communicate(timeout=30)  # the answer is held back 60 s
        finally:
            proc.kill()
    assert proc.returncode == code, stderr
    name = signal.Signals(number).name
    assert stderr.strip().splitlines()[-1] == f"cudaify: interrupted ({name})"
    assert "Traceback" not in stderr
    assert list(out_dir.iterdir()) == []  # no output, no .tmp
    again = subprocess.run(
        command + ["--slm", "off"], env=env, capture_output=True, text=True, timeout=300
    )
    assert again.returncode == 0, again.stderr
    assert "Transformation sequence" in out.read_text()
    leftovers = [p for p in (tmp_path / "cache").rglob("*") if p.name.endswith(".tmp")]
    assert leftovers == []
