"""`--learn` end to end on a machine without a GPU: the run's compile-verified steps go
into the user's graph (in the user data folder), the shipped graph is never written,
and the next run searches both."""

from __future__ import annotations

import hashlib
from importlib import resources
from pathlib import Path

import pytest
from click.testing import CliRunner

from cudaify.cli import main
from cudaify.regraph.learn import load_active_graph, user_graph_path

from .test_cli import SAXPY


def shipped_digest() -> str:
    data = resources.files("cudaify.regraph").joinpath("data/default.json").read_bytes()
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def user_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setattr("cudaify.backend.gpu.gpu_available", lambda: False)
    path = user_graph_path()
    assert str(path).startswith(str(tmp_path))
    return path


def compile_saxpy(folder: Path, *extra: str):
    source = folder / "saxpy.c"
    source.write_text(SAXPY)
    args = [str(source), "-o", str(folder / "saxpy.cu"), "--strategy", "rules", *extra]
    return CliRunner().invoke(main, args, catch_exceptions=False)


def learned(edge: tuple[str, str]) -> list:
    return [e for e in load_active_graph().examples(*edge) if e.source == "learned"]


def test_learn_adds_the_runs_steps_to_the_user_graph_only(tmp_path: Path, user_data: Path):
    shipped = shipped_digest()
    before = {e.after for e in load_active_graph().examples("sequential", "offload")}
    assert not user_data.exists()

    result = compile_saxpy(tmp_path, "--learn", "--max-depth", "2")
    assert result.exit_code == 0, result.output

    assert user_data.is_file() and shipped_digest() == shipped
    offloads = learned(("sequential", "offload"))
    assert len(offloads) == 1
    example = offloads[0]
    assert example.program == "saxpy" and example.verified == "compile"
    assert "__global__" in example.after and example.after not in before
    assert "__global__" not in example.before and "saxpy" in example.before
    # a second step from offload was learned too, with its parent as `before`
    seconds = [
        (target, e)
        for target in load_active_graph().successors("offload")
        for e in learned(("offload", target))
    ]
    assert seconds and all(e.before == example.after for _, e in seconds)
    # nothing was run: the edge statistics were not touched
    from cudaify.regraph.graph import load

    assert load(user_data).stats("sequential", "offload").visits == 0

    # the next run searches the merged graph: the learned example is retrievable there
    from cudaify.pipeline import search_graph

    assert example.after in {e.after for e in search_graph().examples("sequential", "offload")}


def test_learning_twice_keeps_one_example_per_step(tmp_path: Path, user_data: Path):
    assert compile_saxpy(tmp_path, "--learn", "--max-depth", "1", "--no-cache").exit_code == 0
    assert compile_saxpy(tmp_path, "--learn", "--max-depth", "1", "--no-cache").exit_code == 0
    assert len(learned(("sequential", "offload"))) == 1


def test_without_learn_nothing_is_written(tmp_path: Path, user_data: Path):
    assert compile_saxpy(tmp_path, "--max-depth", "1").exit_code == 0
    assert not user_data.exists()


def test_learn_from_the_settings_file(tmp_path: Path, user_data: Path):
    (tmp_path / "cudaify.toml").write_text("learn = true\nmax_depth = 1\n")
    assert compile_saxpy(tmp_path).exit_code == 0
    assert len(learned(("sequential", "offload"))) == 1
    # --no-learn on the command line wins over the file
    other = tmp_path / "other"
    other.mkdir()
    (other / "cudaify.toml").write_text("learn = true\nmax_depth = 1\n")
    user_data.unlink()
    assert compile_saxpy(other, "--no-learn").exit_code == 0
    assert not user_data.exists()
