from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from cudaify.cli import main
from cudaify.regraph.build import VerifiedStep, merge_steps
from cudaify.regraph.graph import ReGraph, load, save
from cudaify.regraph.trajectory import load as load_trajectory

DATA = Path(__file__).parent / "data"


def _run(*args: str):
    return CliRunner().invoke(main, ["graph", *args])


def _graph_file(path: Path, *afters: str) -> Path:
    steps = [
        VerifiedStep("p", "sequential", "offload", "seq", a, verified="compile") for a in afters
    ]
    save(merge_steps(ReGraph(), steps), path)
    return path


def graph_meta_lengths(path: Path) -> tuple[int, float]:
    meta = load(path).meta
    return meta["trajectories"], meta["mean_trajectory_length"]


def test_stats_of_the_shipped_graph_as_json():
    result = _run("stats", "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert set(summary) >= {
        "nodes",
        "edges",
        "examples",
        "methods",
        "examples_per_method",
        "sources",
    }
    assert "sequential" in summary["methods"] and "offload" in summary["methods"]


def test_validate_names_the_json_path_and_exits_2(tmp_path):
    path = _graph_file(tmp_path / "g.json", "gpu")
    data = json.loads(path.read_text())
    data["edges"][0]["examples"][0]["before"] = "0" * 64
    path.write_text(json.dumps(data))
    result = _run("validate", str(path))
    assert result.exit_code == 2
    assert "$.edges[0].examples[0].before: unknown blob" in result.output
    assert str(path) in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_validate_a_good_file_and_a_missing_one(tmp_path):
    good = _run("validate", str(_graph_file(tmp_path / "g.json", "gpu")))
    assert good.exit_code == 0 and "valid (2 nodes, 1 edges, 1 examples)" in good.output
    missing = _run("validate", str(tmp_path / "none.json"))
    assert missing.exit_code == 2 and "cannot read" in missing.output


def test_merge_two_files(tmp_path):
    a = _graph_file(tmp_path / "a.json", "x")
    b = _graph_file(tmp_path / "b.json", "x", "y")
    result = _run("merge", str(a), str(b), "-o", str(tmp_path / "c.json"))
    assert result.exit_code == 0, result.output
    merged = load(tmp_path / "c.json")
    assert [e.after for e in merged.examples("sequential", "offload")] == ["x", "y"]
    assert merged.stats("sequential", "offload").successes == 3


def test_show_a_method_and_an_unknown_one(tmp_path):
    path = _graph_file(tmp_path / "g.json", "kernel code")
    shown = _run("show", "offload", "--graph", str(path))
    assert shown.exit_code == 0
    assert "sequential -> offload: 1 example(s), 1/1 verified" in shown.output
    unknown = _run("show", "teleport", "--graph", str(path))
    assert unknown.exit_code == 2 and "no method 'teleport'" in unknown.output


def test_render_dot_and_svg(tmp_path):
    path = _graph_file(tmp_path / "g.json", "a", "b")
    dot = _run("render", str(path), "-o", str(tmp_path / "g.dot"))
    assert dot.exit_code == 0, dot.output
    text = (tmp_path / "g.dot").read_text()
    assert "sequential -> offload" in text and 'label="2/2"' in text
    if shutil.which("dot") is None:
        pytest.skip("graphviz's `dot` is not installed (apt-get install graphviz)")
    svg = _run("render", str(path), "-o", str(tmp_path / "g.svg"))
    assert svg.exit_code == 0, svg.output
    assert (tmp_path / "g.svg").read_text().lstrip().startswith("<?xml")


def test_build_with_a_recorded_teacher_saves_replayable_trajectories(tmp_path):
    out, saved = tmp_path / "built.json", tmp_path / "trajectories"
    result = _run(
        "build", str(DATA / "corpus"), "--teacher-replay", str(DATA / "teacher.jsonl"),
        "--rules", "--methods", "offload", "--save-trajectories", str(saved), "-o", str(out),
        "--jobs", "2",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert re.search(r"3 verified step\(s\) \(3 (ran on the GPU|compiled only).*\), 1 rejected",
                     result.output)  # fmt: skip
    assert graph_meta_lengths(out) == (2, 1.5)  # the rule's path (1 step), the teacher's 2 of 3
    graph = load(out)
    assert graph.successors("sequential") == ["offload"]
    assert graph.successors("offload") == ["unroll"]
    assert {e.source for e in graph.examples("offload", "unroll")} == {"teacher"}
    assert graph.meta["sources"] == ["rule", "teacher"]
    assert graph.meta["rule_methods"] == ["offload"]
    assert graph.meta["verified"] in ("compile", "gpu")
    names = sorted(p.name for p in saved.iterdir())
    assert names == ["scale_add.rule1.trajectory.json", "scale_add.teacher1.trajectory.json"]
    assert len(load_trajectory(saved / names[1]).steps) == 3  # as the teacher gave it

    # The saved teacher answer rebuilds the same teacher examples without the teacher.
    corpus = tmp_path / "corpus"
    shutil.copytree(DATA / "corpus", corpus)
    shutil.copy(saved / names[1], corpus)
    again = _run("build", str(corpus), "-o", str(tmp_path / "again.json"))
    assert again.exit_code == 0, again.output
    rebuilt = load(tmp_path / "again.json")
    assert rebuilt.examples("offload", "unroll") == graph.examples("offload", "unroll")


def test_build_refuses_bad_options(tmp_path):
    no_model = _run(
        "build",
        str(DATA / "corpus"),
        "--llm-url",
        "http://localhost:1",
        "-o",
        str(tmp_path / "x.json"),
    )
    assert no_model.exit_code == 2 and "--llm-model" in no_model.output
    bad_method = _run(
        "build",
        str(DATA / "corpus"),
        "--rules",
        "--methods",
        "teleport",
        "-o",
        str(tmp_path / "x.json"),
    )
    assert bad_method.exit_code == 2 and "unknown method 'teleport'" in bad_method.output
    assert not (tmp_path / "x.json").exists()


def test_stats_show_when_and_on_which_gpu(tmp_path, monkeypatch):
    from cudaify.regraph import user_stats_path
    from cudaify.regraph.graph import stamped
    from cudaify.regraph.learn import StatsUpdate, learn_statistics

    path = _graph_file(tmp_path / "g.json", "gpu")
    graph = load(path)
    graph.meta = stamped(graph.meta, "NVIDIA H100 80GB HBM3", date="2026-01-02T03:04:05Z")
    save(graph, path)
    result = _run("stats", str(path))
    assert result.exit_code == 0, result.output
    assert "date 2026-01-02T03:04:05Z, statistics measured on NVIDIA H100 80GB HBM3" in (
        result.output
    )
    assert json.loads(_run("stats", "--json", str(path)).output)["built"]["gpu"] == (
        "NVIDIA H100 80GB HBM3"
    )

    # with no file: the shipped graph, and what this machine's runs learned
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert "learned:" not in _run("stats").output
    learn_statistics([StatsUpdate("sequential", "offload", True, 2.0)], None, "NVIDIA H200")
    shown = _run("stats").output
    assert f"learned: {user_stats_path()}: 1 run(s), date " in shown
    assert "statistics measured on NVIDIA H200" in shown
    learned = json.loads(_run("stats", "--json").output)["learned"]
    assert learned[str(user_stats_path())]["gpu"] == "NVIDIA H200"


def test_a_build_combines_the_searchs_moves_not_the_rounding_rescue():
    """The graph rebuilt on 2026-11-26 took fp_exact among its rules' methods and so
    recorded edges into it; the search never moves there (every strategy applies it
    itself), so by default a build does not combine it, and the search graph drops such
    edges from any graph."""
    from cudaify import pipeline
    from cudaify.graph_cli import _method_list

    assert "fp_exact" not in _method_list("") and "offload" in _method_list("")
    assert _method_list("offload,fp_exact") == ("offload", "fp_exact")  # asked for: as given
    assert not list(pipeline.search_graph().graph.in_edges("fp_exact"))
