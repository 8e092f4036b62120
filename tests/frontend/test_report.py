"""`cudaify analyze` output: the JSON shape the issue fixes, and the readable report."""

from __future__ import annotations

import json

from cudaify.frontend.analyze import analyze
from cudaify.frontend.report import to_json, to_text

CODE = """#include <stdio.h>
#define N 16
double grid[N][N];
double total(int n, const double *a) {
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i];
  return s;
}
void smooth(void) {
  for (int i = 1; i < N - 1; i++)
    for (int j = 1; j < N - 1; j++) grid[i][j] = 0.5 * (grid[i-1][j] + grid[i+1][j]);
}
int main(void) {
  double a[N];
  for (int i = 0; i < N; i++) a[i] = i;
  smooth();
  printf("%f\\n", total(N, a));
  return 0;
}
"""


def program(tmp_path):
    path = tmp_path / "input.c"
    path.write_text(CODE)
    return analyze(str(path))


def test_json_shape(tmp_path):
    report = to_json(program(tmp_path))
    json.dumps(report)  # serializable as is
    assert [f["name"] for f in report["functions"]] == ["total", "smooth", "main"]
    for fn in report["functions"]:
        assert set(fn) >= {"name", "loops", "arrays"}
        for loop in fn["loops"]:
            assert set(loop) >= {
                "line",
                "var",
                "depth",
                "parallel",
                "pattern",
                "reductions",
                "reason",
            }
            assert isinstance(loop["parallel"], bool)
            assert loop["pattern"] in ("plain", "reduction", "scan", "atomic_update", "sequential")
            assert loop["reason"]
        for array in fn["arrays"]:
            assert set(array) >= {"name", "elem_type", "size", "access"}
            assert array["access"] in ("read", "write", "readwrite")


def test_json_values(tmp_path):
    functions = {f["name"]: f for f in to_json(program(tmp_path))["functions"]}
    (loop,) = functions["total"]["loops"]
    assert (loop["line"], loop["var"], loop["depth"], loop["parallel"], loop["pattern"]) == (
        6,
        "i",
        0,
        False,
        "reduction",
    )
    assert loop["reductions"] == [{"var": "s", "op": "+"}]
    assert functions["total"]["arrays"] == [
        {
            "name": "a",
            "elem_type": "double",
            "size": "n",
            "first": "0",
            "access": "read",
            "kind": "pointer",
            "dims": [],
            "whole": False,
            "loop_line": 6,
        }
    ]
    smooth = functions["smooth"]["loops"]
    assert [(loop["var"], loop["depth"], loop["parallel"]) for loop in smooth] == [
        ("i", 0, False),
        ("j", 1, True),
    ]
    (grid,) = functions["smooth"]["arrays"]
    assert (grid["name"], grid["size"], grid["access"], grid["dims"]) == (
        "grid",
        "256",
        "readwrite",
        ["N"],
    )
    assert functions["main"]["estimated_calls"] == 1
    assert functions["total"]["estimated_calls"] == 1


def test_text_report(tmp_path):
    text = to_text(program(tmp_path))
    assert "do not alias" in text
    assert "input.c:6:3: loop i from 0 while i < n step 1: not parallel (reduction)" in text
    assert "reductions: s (+)" in text
    assert "input.c:11:5: loop j from 1 while j < N - 1 step 1: parallel" in text
    assert "grid[i-1][j] reads it in a later one (flow dependence carried by i)" in text
    assert "data grid: double x 256, readwrite, global_array, whole object" in text
