"""Declarations before a loop's only inner loop that could run in every iteration of that
loop instead, with the same values (Loop.prologue): the nest is perfect once they move in,
so both levels can go on a grid. Each decoy below would change a value, or lose one, if
it moved, and has no prologue."""

from __future__ import annotations

import pytest
from analysed_code import analysed

from cudaify.frontend.facts import Loop

HEADER = """
#include <math.h>
double rnd(void);
void keep(double *p);
struct pair { double a, b; };
"""


def analysed_outer(body: str) -> tuple[Loop, bytes]:
    program = analysed(
        HEADER
        + "void f(int n, int m, const double *x, const double *z, double *y, double acc) {\n"
        + "    for (int i = 0; i < n; i++) {\n        "
        + body
        + "\n    }\n}\n"
    )
    fn = program.function("f")
    assert fn is not None and fn.loops
    source = program.source
    return fn.loops[0], source.encode() if isinstance(source, str) else source


def outer_loop(body: str) -> Loop:
    return analysed_outer(body)[0]


def test_pure_declarations_before_the_inner_loop_are_its_prologue() -> None:
    body = (
        "double xi = sqrt(x[i]) * 2.0;\n        int base = i * m;\n"
        "        for (int j = 0; j < m; j++)\n            y[base + j] = xi + z[j];"
    )
    found, source = analysed_outer(body)
    assert found.prologue is not None and not found.perfectly_nested
    assert found.parallel and found.children[0].parallel
    moved = source[found.prologue.start : found.prologue.end]
    assert moved == b"double xi = sqrt(x[i]) * 2.0;\n        int base = i * m;"


# (before the inner loop, the inner loop's body, after it); the inner loop is on j < m
DECOYS = {
    # the value would change: the inner loop writes what it reads
    "reads an array the loop writes": ("double xi = y[i];", "y[i * m + j] = xi;", ""),
    "reads a scalar the loop writes": ("double xi = acc;", "{ acc += 1.0; y[j] = xi; }", ""),
    "written after": ("double xi = x[i];", "{ xi += 1.0; y[i * m + j] = xi; }", ""),
    "its address taken": ("double xi = x[i];\n        keep(&xi);", "y[i * m + j] = xi;", ""),
    # a call that may have effects, or give another value each time
    "an unknown call": ("double xi = rnd();", "y[i * m + j] = xi;", ""),
    # not only declarations, or not scalars
    "a statement": ("y[i] = 0.0;", "y[i * m + j] += 1.0;", ""),
    "an array": ("double t[2] = {x[i], 1.0};", "y[i * m + j] = t[0];", ""),
    "a struct": ("struct pair p = {x[i], 1.0};", "y[i * m + j] = p.a;", ""),
    "a static": ("static double xi = 1.0;", "y[i * m + j] = xi;", ""),
    "no initializer": ("double xi;", "y[i * m + j] = 1.0;", ""),
    "something after the loop": ("double xi = x[i];", "y[i * m + j] = xi;", "y[i] = 0.0;"),
}


@pytest.mark.parametrize("decoy", sorted(DECOYS))
def test_declarations_that_may_not_move_are_no_prologue(decoy: str) -> None:
    before, inner, after = DECOYS[decoy]
    body = f"{before}\n        for (int j = 0; j < m; j++)\n            {inner}\n        {after}"
    assert outer_loop(body).prologue is None, decoy


def test_a_declaration_the_inner_loop_s_bound_uses_is_no_prologue() -> None:
    """The bound is evaluated before the inner loop runs: the name must exist there."""
    found = outer_loop("int mm = m;\n        for (int j = 0; j < mm; j++)\n            y[j] = 1.0;")
    assert found.prologue is None
