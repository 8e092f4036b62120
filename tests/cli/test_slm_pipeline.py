"""The SLM inside the pipeline, replayed from completions recorded once with the real
0.5B model (`--record`), so the test needs neither the model nor a GPU."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from cudaify.cli import main

ROOT = Path(__file__).resolve().parents[2]
RECORDED = Path(__file__).parent / "data" / "oneshot_saxpy_0.5b.jsonl"


def test_oneshot_replayed_answer_goes_through_the_structural_check(tmp_path):
    source = tmp_path / "saxpy.c"
    shutil.copy(ROOT / "examples" / "saxpy.c", source)
    trace = tmp_path / "trace.json"
    result = CliRunner().invoke(
        main,
        [
            str(source),
            "-o",
            str(tmp_path / "saxpy.cu"),
            "--strategy",
            "oneshot",
            "--slm",
            "on",
            "--model",
            "qwen2.5-coder-0.5b",
            "--replay",
            str(RECORDED),
            "--trace",
            str(trace),
        ],
    )
    assert result.exit_code == 0, result.stderr
    # the recorded 0.5B answer turned saxpy itself into a kernel: caught, twice (repair round)
    assert "changed its signature" in result.stderr
    data = json.loads(trace.read_text())
    assert data["strategy"] == "oneshot" and data["chosen"] == []
    assert data["search"]["slm_calls"] == 1
    assert "Nothing was offloaded" in (tmp_path / "saxpy.cu").read_text()


def test_replay_miss_is_a_clear_error(tmp_path):
    source = tmp_path / "other.c"
    source.write_text((ROOT / "examples" / "saxpy.c").read_text().replace("0.5f", "0.25f"))
    result = CliRunner().invoke(
        main,
        [
            str(source),
            "-o",
            str(tmp_path / "o.cu"),
            "--strategy",
            "oneshot",
            "--slm",
            "on",
            "--model",
            "qwen2.5-coder-0.5b",
            "--replay",
            str(RECORDED),
        ],
    )
    assert result.exit_code == 4
    assert "no recorded answer for this complete request" in result.stderr
    assert not (tmp_path / "o.cu").exists()


def test_oneshot_without_a_model_is_a_usage_error(tmp_path):
    source = tmp_path / "saxpy.c"
    shutil.copy(ROOT / "examples" / "saxpy.c", source)
    result = CliRunner().invoke(
        main, [str(source), "-o", str(tmp_path / "o.cu"), "--strategy", "oneshot", "--slm", "off"]
    )
    assert result.exit_code == 2 and "needs a language model" in result.stderr


@pytest.mark.parametrize("strategy", ["mcgs", "greedy", "rules"])
def test_rule_strategies_need_no_model(tmp_path, strategy):
    source = tmp_path / "saxpy.c"
    shutil.copy(ROOT / "examples" / "saxpy.c", source)
    trace = tmp_path / "t.json"
    result = CliRunner().invoke(
        main,
        [str(source), "-o", str(tmp_path / "o.cu"), "--strategy", strategy, "--trace", str(trace)],
    )
    assert result.exit_code == 0, result.stderr
    data = json.loads(trace.read_text())
    assert data["strategy"] == strategy and data["search"]["slm_calls"] == 0
    # without a GPU every strategy writes the candidate that moves the most of the CPU
    # program's time to the GPU: schedule, which maps main's loops too (offload does not)
    assert [step["method"] for step in data["chosen"]][:1] == ["schedule"]
