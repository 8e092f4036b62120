from __future__ import annotations

import json
import math

import pytest

from cudaify.regraph.graph import (
    EdgeStats,
    Example,
    GraphFormatError,
    ReGraph,
    default_graph,
    from_json,
    load,
    save,
)


def test_default_graph_starts_at_sequential_and_offloads():
    graph = default_graph()
    assert "sequential" in graph.methods
    assert "offload" in graph.successors("sequential")


def test_round_trip_keeps_examples_and_stats():
    graph = ReGraph()
    graph.add_method("sequential", "the input", "start")
    graph.add_edge("sequential", "offload")
    graph.examples("sequential", "offload").append(Example("saxpy", "a", "b", speedup=3.5))
    graph.stats("sequential", "offload").visits = 4
    loaded = from_json(json.loads(json.dumps(graph.to_json())))
    assert loaded.examples("sequential", "offload")[0].speedup == 3.5
    assert loaded.stats("sequential", "offload").visits == 4


@pytest.mark.parametrize(
    "mutate, path",
    [
        (lambda d: d.update(version=99), "$.version"),
        (lambda d: d["edges"][0].update(target="nowhere"), "$.edges[0].target"),
        (lambda d: d["nodes"][0].update(name=5), "$.nodes[0].name"),
        (lambda d: d["edges"][0].update(examples=[{"program": "x"}]), "$.edges[0].examples[0]"),
    ],
)
def test_validation_names_the_json_path(mutate, path):
    data = default_graph().to_json()
    mutate(data)
    with pytest.raises(GraphFormatError) as info:
        from_json(data)
    assert str(info.value).startswith(path)


def _two_step_graph() -> ReGraph:
    graph = ReGraph()
    graph.add_method("sequential", "the input", "start")
    graph.add_example("sequential", "offload", Example("p", "seq code", "gpu code", speedup=2.0))
    graph.add_example("offload", "unroll", Example("p", "gpu code", "unrolled code"))
    return graph


def test_code_is_stored_once_as_a_blob():
    data = _two_step_graph().to_json()
    assert data["version"] == 2
    assert sorted(data["blobs"].values()) == ["gpu code", "seq code", "unrolled code"]
    edges = {e["source"]: e for e in data["edges"]}
    assert edges["sequential"]["examples"][0]["after"] == edges["offload"]["examples"][0]["before"]
    assert "gpu code" not in json.dumps(data["edges"])


def test_version_1_files_still_load():
    v1 = {
        "format": "cudaify-regraph",
        "version": 1,
        "nodes": [{"name": "sequential"}, {"name": "offload"}],
        "edges": [
            {
                "source": "sequential",
                "target": "offload",
                "examples": [{"program": "p", "before": "int x;", "after": "int y;"}],
                "stats": {"visits": 2, "successes": 1, "mean_log_speedup": 0.5},
            }
        ],
    }
    graph = from_json(v1)
    assert graph.examples("sequential", "offload")[0].after == "int y;"
    assert graph.stats("sequential", "offload").successes == 1
    again = from_json(json.loads(json.dumps(graph.to_json())))
    assert again.to_json()["version"] == 2
    assert again.examples("sequential", "offload")[0].before == "int x;"


def _first_blob(data):
    return next(iter(data["blobs"]))


@pytest.mark.parametrize(
    "mutate, path",
    [
        (
            lambda d: d["edges"][0]["examples"][0].update(before="f" * 64),
            "$.edges[0].examples[0].before",
        ),
        (lambda d: d["blobs"].update({_first_blob(d): "changed"}), "$.blobs."),
        (
            lambda d: d["edges"][0]["examples"][0].update(verified="maybe"),
            "$.edges[0].examples[0].verified",
        ),
        (
            lambda d: d["edges"][0]["examples"][0].update(source="me"),
            "$.edges[0].examples[0].source",
        ),
        (
            lambda d: d["edges"][0]["examples"][0].update(speedup="fast"),
            "$.edges[0].examples[0].speedup",
        ),
        (lambda d: d["edges"][0]["examples"][0].update(colour=1), "$.edges[0].examples[0].colour"),
        (lambda d: d["edges"][1]["stats"].update(successes=9), "$.edges[1].stats.successes"),
        (lambda d: d["edges"][1]["stats"].update(visits=-1), "$.edges[1].stats.visits"),
        (lambda d: d["edges"][1]["stats"].update(visits=True), "$.edges[1].stats.visits"),
        (lambda d: d["edges"].append(dict(d["edges"][0])), "$.edges[2]"),
        (lambda d: d["nodes"].append({"name": "offload"}), "$.nodes[3].name"),
        (lambda d: d.update(nodes={}), "$.nodes"),
        (lambda d: d.update(format="other"), "$.format"),
        (lambda d: d.update(meta=[]), "$.meta"),
    ],
)
def test_v2_validation_names_the_json_path(mutate, path):
    data = _two_step_graph().to_json()
    mutate(data)
    with pytest.raises(GraphFormatError) as info:
        from_json(data)
    assert str(info.value).startswith(path)


def test_duplicate_examples_are_kept_once():
    graph = _two_step_graph()
    added = graph.add_example("sequential", "offload", Example("p", "seq code", "gpu code"))
    assert not added
    assert len(graph.examples("sequential", "offload")) == 1


def test_stats_record_a_running_mean_of_log_speedups():
    stats = EdgeStats()
    stats.record(True, 2.0)
    stats.record(True, 8.0)
    stats.record(False)
    stats.record(True, None)
    assert (stats.visits, stats.successes, stats.timed) == (4, 3, 2)
    assert math.isclose(stats.mean_log_speedup, math.log(4.0))


def test_save_and_load_a_file(tmp_path):
    path = tmp_path / "g.json"
    save(_two_step_graph(), path)
    assert load(path).examples("offload", "unroll")[0].after == "unrolled code"
    assert [p.name for p in tmp_path.iterdir()] == ["g.json"]  # no temporary left behind


def test_unreadable_and_non_json_files(tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text("{nope")
    with pytest.raises(GraphFormatError, match=r"^\$: not JSON"):
        load(broken)
    with pytest.raises(GraphFormatError, match=r"^\$: cannot read"):
        load(tmp_path / "missing.json")


def test_build_information_survives_a_round_trip():
    graph = _two_step_graph()
    graph.meta = {"verified": "compile", "rule_methods": ["offload"]}
    assert from_json(json.loads(json.dumps(graph.to_json()))).meta == graph.meta
    assert graph.copy().meta == graph.meta
