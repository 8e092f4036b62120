from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from cudaify.regraph.graph import (
    EdgeStats,
    Example,
    GraphFormatError,
    HowStats,
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
    assert data["version"] == 3
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
    assert again.to_json()["version"] == 3
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


def test_stats_record_a_running_mean_of_log_gains():
    stats = EdgeStats()
    stats.record(True, 2.0)
    stats.record(True, 8.0)
    stats.record(False)
    stats.record(True, None)
    assert (stats.visits, stats.successes, stats.timed) == (4, 3, 2)
    assert math.isclose(stats.mean_log_gain, math.log(4.0))


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


def test_a_copy_keeps_every_statistic_exactly_and_apart():
    """The copy's stats equal the original's bit for bit (a mean of 0.1 over 3 timed runs
    stays 0.1, not 0.1 * 3 / 3) and the per-way record is its own."""
    graph = _two_step_graph()
    stats = graph.stats("sequential", "offload")
    stats.visits, stats.successes, stats.mean_log_gain, stats.timed = 5, 4, 0.1, 3
    stats.how = {"rule": HowStats(visits=5, wins=2)}
    copied = graph.copy().stats("sequential", "offload")
    assert copied == stats and copied is not stats
    copied.record(False, None, "slm")
    assert stats.way("slm").visits == 0 and copied.way("slm").visits == 1


def _v2_file() -> dict:
    """A version 2 graph: each edge's mean of ln(speedup over the CPU)."""

    def edge(source, target, mean, timed, visits=None):
        stats = {"visits": visits or timed, "successes": timed, "timed": timed}
        return {"source": source, "target": target, "stats": {**stats, "mean_log_speedup": mean}}

    return {
        "format": "cudaify-regraph",
        "version": 2,
        "nodes": [{"name": n} for n in ("sequential", "offload", "reduction", "unroll", "scan")],
        "edges": [
            # offload reached 0.5x (1 run) and 2x (3 runs): a mean of ln 0.5 + 3 ln 2 over 4
            edge("sequential", "offload", (math.log(0.5) + 3 * math.log(2.0)) / 4, 4),
            edge("offload", "unroll", math.log(3.0), 2),
            edge("offload", "reduction", math.log(0.5), 1),
            edge("scan", "unroll", math.log(8.0), 1),  # nothing timed reaches scan
        ],
        "blobs": {},
    }


def test_a_version_2_graph_reads_its_speedups_as_gains():
    """From `sequential` a speedup is the gain (the parent is the input); further on the
    parent is taken at the geometric mean of the arrivals at the source (here offload's:
    2^(1/2)), which keeps the order of its out-edges; an edge whose source no timed run
    reaches keeps its counts and no gain."""
    graph = from_json(_v2_file())
    arrival = (math.log(0.5) + 3 * math.log(2.0)) / 4
    assert math.isclose(graph.stats("sequential", "offload").mean_log_gain, arrival)
    assert math.isclose(graph.stats("offload", "unroll").mean_log_gain, math.log(3.0) - arrival)
    reduction = graph.stats("offload", "reduction")
    assert math.isclose(reduction.mean_log_gain, math.log(0.5) - arrival)
    assert (reduction.visits, reduction.successes, reduction.timed) == (1, 1, 1)
    scan = graph.stats("scan", "unroll")
    assert (scan.visits, scan.successes, scan.timed, scan.mean_log_gain) == (1, 1, 0, 0.0)
    saved = json.loads(json.dumps(graph.to_json()))
    assert saved["version"] == 3
    assert "mean_log_gain" in saved["edges"][0]["stats"]
    again = from_json(saved)  # read once: a version 3 file is not converted again
    assert again.stats("offload", "unroll") == graph.stats("offload", "unroll")


def test_a_graph_from_before_gains_still_loads_and_keeps_each_methods_order():
    """The graph shipped before gains (version 2, its statistics kept without examples in
    tests/regraph/data): its edges out of one method keep their order by mean, so the
    search ranks them as before; only unseen edges move."""
    data = json.loads((Path(__file__).parent / "data" / "graph_v2.json").read_text())
    assert data["version"] == 2
    graph = from_json(data)
    for edge in data["edges"]:
        if edge["source"] == "sequential":
            gain = graph.stats(edge["source"], edge["target"]).mean_log_gain
            assert math.isclose(gain, edge["stats"]["mean_log_speedup"])
    by_source: dict[str, list[tuple[float, float]]] = {}
    for edge in data["edges"]:
        stats = graph.stats(edge["source"], edge["target"])
        old = edge["stats"]["mean_log_speedup"]
        by_source.setdefault(edge["source"], []).append((old, stats.mean_log_gain))
    for pairs in by_source.values():
        assert sorted(pairs) == sorted(pairs, key=lambda p: p[1])


def test_a_version_3_file_refuses_the_old_field_and_an_unknown_version():
    data = _two_step_graph().to_json()
    data["edges"][0]["stats"]["mean_log_speedup"] = 1.0
    with pytest.raises(GraphFormatError, match=r"\$.edges\[0\].stats.mean_log_speedup"):
        from_json(data)
    for version in (0, 4, True, "3"):
        with pytest.raises(GraphFormatError, match=r"\$.version"):
            from_json({**_two_step_graph().to_json(), "version": version})


def test_the_meta_stamp_gathers_gpus():
    from cudaify.regraph.graph import stamped

    meta = stamped({"corpus": "c"}, "NVIDIA H100", date="2026-01-02T03:04:05Z")
    assert meta == {"corpus": "c", "date": "2026-01-02T03:04:05Z", "gpu": "NVIDIA H100"}
    assert stamped(meta, "NVIDIA H100")["gpu"] == "NVIDIA H100"
    assert stamped(meta, "NVIDIA A100")["gpu"] == ["NVIDIA A100", "NVIDIA H100"]
    assert stamped(meta, "")["gpu"] == "NVIDIA H100"  # nothing measured: left alone
