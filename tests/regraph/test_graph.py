from __future__ import annotations

import json

import pytest
from cudaify.regraph.graph import Example, GraphFormatError, ReGraph, default_graph, from_json


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
