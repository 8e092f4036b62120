from __future__ import annotations

import shutil

import pytest

from cudaify.mcgs.explain import explain, render

TRACE = {
    "input": "saxpy.c",
    "strategy": "mcgs",
    "chosen": [
        {
            "method": "offload",
            "applied_by": "rule",
            "before": "aaaa",
            "after": "bbbb",
            "detail": "saxpy: 1-D grid",
            "stage": "correct",
            "region_speedup": 12.5,
        }
    ],
    "verified": True,
    "timing": {
        "reference": {"region": 0.5},
        "candidate": {"region": 0.04},
        "region_speedup": 12.5,
        "program_speedup": 3.0,
    },
    "skipped": [{"method": "scan (rule)", "reason": "no scan here"}],
    "search": {
        "states": 3,
        "iterations": 2,
        "seconds": 4.2,
        "stages": {"correct": 1, "structure": 1},
        "graph": [
            {
                "key": "root",
                "methods": [],
                "stage": "input",
                "reward": 0.0,
                "value": 1.1,
                "visits": 3,
                "edges": [
                    {
                        "method": "offload",
                        "how": "rule",
                        "prior": 0.5,
                        "visits": 1,
                        "child": "bbbb",
                    },
                    {"method": "scan", "how": "rule", "prior": 0.5, "visits": 1, "child": "cccc"},
                ],
            },
            {
                "key": "bbbb",
                "methods": ["offload"],
                "stage": "correct",
                "reward": 3.02,
                "value": 3.02,
                "visits": 1,
                "edges": [],
            },
            {
                "key": "cccc",
                "methods": ["scan"],
                "stage": "structure",
                "reward": -0.75,
                "value": -0.75,
                "visits": 1,
                "edges": [],
            },
        ],
    },
}


def test_explain_names_the_path_timings_and_alternatives():
    text = explain(TRACE)
    assert "1. offload by rule: reached correct, region speedup 12.50x" in text
    assert "region: 0.5000 s on the CPU, 0.0400 s on the GPU (12.50x)" in text
    assert "scan: structure, reward -0.750" in text
    assert "not applied: scan (rule): no scan here" in text


@pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz's dot is not installed")
def test_render_writes_a_picture(tmp_path):
    written = render(TRACE, tmp_path / "search.png")
    assert written == tmp_path / "search.png"
    assert written.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = render(TRACE, tmp_path / "search.svg").read_text()
    assert "offload (rule) n=1" in svg and "scan" in svg
