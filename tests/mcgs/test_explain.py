from __future__ import annotations

import shutil

import pytest

from cudaify.mcgs.explain import close_call_text, explain, render

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
    assert "whole program: 3.00x over gcc -O3" in text
    assert "finalists" not in text and "close call" not in text  # none in this trace


def test_explain_says_how_each_finalist_was_timed_and_the_close_call() -> None:
    """--explain shows why the written variant won: each finalist's readings by the search
    and with the GPU alone (or why it got no time), and what the close call's turns read."""

    def reading(whole: float | None, region: float, runs: int) -> dict:
        return {
            "program_speedup": whole,
            "steady_speedup": 1.3,
            "region_speedup": region,
            "runs": runs,
        }

    trace = {
        **TRACE,
        "finalists": [
            {
                "methods": ["offload"],
                "screened": reading(1.4, 10.0, 1),
                "timed": reading(1.2, 11.0, 3),
                "seconds": 2.25,
                "why_not": None,
            },
            {
                "methods": ["offload", "gemm_tiling"],
                "screened": reading(None, 9.0, 1),
                "timed": reading(None, 9.0, 1),
                "seconds": 0.0,
                "why_not": "no time left before the deadline: the search's reading stands",
            },
        ],
        "close_call": {"read": 1.2, "runs": 2, "reference": 0.9, "program": 0.6},
    }
    lines = explain(trace).splitlines()
    at = lines.index("finalists, timed with the GPU alone in this order (whole program):")
    assert lines[at + 1 : at + 4] == [
        "  offload: the search read 1.40x (region 10.00x, 1 run), "
        "timed 1.20x (region 11.00x, 3 runs) in 2.2 s",
        "  offload -> gemm_tiling: the search read 1.30x (region 9.00x, 1 run); not timed: "
        "no time left before the deadline: the search's reading stands",
        "close call: 1.20x -> 1.50x in 2 turns",
    ]


@pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz's dot is not installed")
def test_render_writes_a_picture(tmp_path):
    written = render(TRACE, tmp_path / "search.png")
    assert written == tmp_path / "search.png"
    assert written.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = render(TRACE, tmp_path / "search.svg").read_text()
    assert "offload (rule) n=1" in svg and "scan" in svg


def test_a_rows_close_call_says_what_the_turns_read() -> None:
    assert close_call_text({}) == ""
    turned = {"read": 1.16, "runs": 3, "reference": 1.0, "program": 1.1}
    assert close_call_text(turned) == "1.16x -> 0.91x in 3 turns"
    skipped = {"read": 1.5, "not_timed": "one turn (1.4 s) does not fit in the 0.9 s left"}
    assert close_call_text(skipped) == (
        "1.50x, not timed in turns: one turn (1.4 s) does not fit in the 0.9 s left"
    )
