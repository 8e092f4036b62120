"""Speculative outer-loop steps in the schedule-based mapping (polyhedral.Speculation).

isl finds no parallel loop inside Floyd-Warshall's k: at a fixed k, (i, j) reads path[i][k]
and path[k][j], which (i, k) and (k, j) write. Each step runs as one 2-D launch that reads
a snapshot of the array and checks, bit for bit, that the pivot row and column keep their
values; a step whose check fails is restored and rerun in order by a single thread. Every
program runs on the CPU emulator, threads forward and reversed, and must print exactly what
gcc's build prints; decoys keep the ordinary mapping and say why."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from emulation import SERIAL_HEADER, gcc_output, run_emulated
from test_schedule_private_arrays import emulated_like_gcc, grid_loops, plan_of
from transforms_support import GOLDEN

from cudaify.backend.compare import compare
from cudaify.core import Variant
from cudaify.transforms import get
from cudaify.transforms.base import Context
from cudaify.transforms.schedule import mapping_report, plan_program

SCHEDULE = get("schedule")


def floyd(element: str, negative: str = "") -> str:
    """Floyd-Warshall over `element`s; `negative` sets a diagonal entry below zero."""
    return f"""
#include <stdio.h>

#define N 96

static {element} path[N][N];

static void floyd(int n, {element} path[N][N])
{{
    for (int k = 0; k < n; k++)
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                path[i][j] = path[i][j] < path[i][k] + path[k][j] ? path[i][j]
                                                                  : path[i][k] + path[k][j];
}}

int main(void)
{{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            path[i][j] = i == j ? 0 : (i * 7 + j * 13) % 23 + 1;
    {negative}
    floyd(N, path);
    double sum = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            sum += (double)path[i][j] * (1 + (i + 2 * j) % 5);
    printf("sum=%.17g first=%.17g last=%.17g\\n", sum, (double)path[0][N - 1],
           (double)path[N - 1][0]);
    return 0;
}}
"""


def reruns_disabled(code: str) -> str:
    """The mapped program with its reruns of failed steps left out."""
    disabled, count = re.subn(r"if \((changed\w*)\) \{", r"if (0 && \1) {", code)
    assert count == 1
    return disabled


# -- Floyd-Warshall ---------------------------------------------------------------------


def test_floyd_warshall_gets_a_host_loop_around_a_2d_launch(program_of) -> None:
    plan = plan_of(program_of(floyd("int")), "floyd")
    assert plan.speculation is not None and plan.speculation.loop == "k"
    step, rerun = plan.kernels
    assert step.speculative and step.host_depth == 1 and len(step.mapped) == 2
    assert rerun.fallback and rerun.host_depth == 1 and rerun.mapped == ()
    assert grid_loops(plan)[0] == {"i", "j"}
    assert "k: host loop around a 2-D launch, speculative" in plan.summary


@pytest.mark.parametrize("element", ["int", "double"])
def test_floyd_warshall_prints_what_gcc_does(element: str, program_of, tmp_path: Path) -> None:
    program = program_of(floyd(element))
    emulated_like_gcc(program, tmp_path / "input.c", tmp_path)


@pytest.mark.parametrize("element", ["int", "double"])
def test_a_step_whose_pivots_change_reruns_in_order(
    element: str, program_of, tmp_path: Path
) -> None:
    """A negative diagonal entry (a negative cycle: here no value falls below -2) changes
    the pivot row and column at its step: that step's check fails, and only its rerun
    makes the output gcc's."""
    program = program_of(floyd(element, "path[N / 2][N / 2] = -1;"))
    code = emulated_like_gcc(program, tmp_path / "input.c", tmp_path)
    expected = gcc_output(tmp_path / "input.c", tmp_path)
    unchecked = run_emulated(reruns_disabled(code), tmp_path, header=SERIAL_HEADER)
    assert unchecked.ok, unchecked.errors()
    assert compare(expected, unchecked.text()) is not None


TWO_ARRAYS = """
#include <stdio.h>

#define N 64

static double p[N][N], q[N][N];

static void two(int n, double p[N][N], double q[N][N])
{
    for (int k = n - 1; k >= 0; k--)
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                p[i][j] = p[i][j] < p[i][k] + p[k][j] ? p[i][j] : p[i][k] + p[k][j];
                q[i][j] = q[i][j] > q[i][k] * q[k][j] ? q[i][j] : q[i][k] * q[k][j];
            }
}

int main(void)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            p[i][j] = i == j ? 0 : (i * 7 + j * 13) % 23 + 1;
            q[i][j] = i == j ? 1 : ((i * 5 + j * 3) % 17) / 17.0;
        }
    q[3][3] = 1.5; /* its step changes q's pivot row and column: that step reruns */
    two(N, p, q);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j += 5)
            printf("%.17g %.17g\\n", p[i][j], q[j][i]);
    return 0;
}
"""


def test_two_statements_and_a_downward_loop_share_a_step(program_of, tmp_path: Path) -> None:
    program = program_of(TWO_ARRAYS)
    plan = plan_of(program, "two")
    assert plan.speculation is not None and plan.speculation.arrays == ("p", "q")
    assert [len(part.mapped) for part in plan.kernels] == [2, 0]
    code = emulated_like_gcc(program, tmp_path / "input.c", tmp_path)
    unchecked = run_emulated(reruns_disabled(code), tmp_path, header=SERIAL_HEADER)
    assert compare(gcc_output(tmp_path / "input.c", tmp_path), unchecked.text()) is not None


def test_the_golden_floyd_case_checks_each_step_and_reruns_it() -> None:
    code = (GOLDEN / "schedule" / "floyd.cu").read_text()
    function = code[code.index("static void floyd(") : code.index("\nstatic void fill")]
    host_loop = re.search(r"for \(long long (\w+) = 0; \(\1 < n\); \1 \+= 1\) \{", function)
    assert host_loop, function
    step = function[host_loop.end() :]
    snapshot = step.index("cudaMemcpy(d_path_before, d_path, ")
    launch = re.search(
        r"floyd_kernel<<<dim3\(cudaify_blocks\(cudaify_rows\((\w+), 1\), 32, \w+\), "
        r"cudaify_blocks\(cudaify_rows\(\w+, \1\), 8, \w+\)\), dim3\(32, 8\)>>>",
        step,
    )
    flag = step.index("cudaMemcpyDeviceToHost")
    rerun = step.index("floyd_kernel_2<<<1, 1>>>")
    assert launch and snapshot < launch.start() < flag < rerun
    kernel = code[code.index("__global__ void floyd_kernel(") :]
    kernel = kernel[: kernel.index("\n}\n")]
    # every read of the array reads the snapshot; the write goes in place
    assert "path[i][j] = path_before[i][j] < path_before[i][(h0)] + path_before[(h0)][j]" in kernel
    assert "*changed = 1;" in kernel


# -- decoys: the ordinary mapping, and why ----------------------------------------------

DECOYS = {
    "same-element": (
        "d[i] = d[i] < a[i][j] + d[k] ? d[i] : a[i][j] + d[k];",
        "two instances of one step of loop k write the same element of 'd'",
    ),
    "not-affine": (
        "a[i][j] = a[i][j] < a[i][p[k]] + a[p[k]][j] ? a[i][j] : a[i][p[k]] + a[p[k]][j];",
        "indexes 'a' with a subscript that is not affine",
    ),
    "recurrence": (
        "a[i][j] = a[i][j - 1] * 0.5 + a[k][j] * 0.25;",
        "the reads across instances of a step of loop k chain 3 deep or more",
    ),
}


def decoy(body: str) -> str:
    return f"""
#include <stdio.h>

#define N 64

static double a[N][N], d[N];
static int p[N];

static void step(int n, double a[N][N], double d[N], int p[N])
{{
    for (int k = 0; k < n; k++)
        for (int i = 0; i < n; i++)
            for (int j = 1; j < n; j++)
                {body}
}}

int main(void)
{{
    for (int i = 0; i < N; i++) {{
        d[i] = (double)(i % 5);
        p[i] = (i * 7) % N;
        for (int j = 0; j < N; j++)
            a[i][j] = (double)((i * 3 + j) % 11) / 8.0;
    }}
    step(N, a, d, p);
    double sum = 0;
    for (int i = 0; i < N; i++) {{
        sum += d[i];
        for (int j = 0; j < N; j++)
            sum += a[i][j] * (1 + (i + j) % 3);
    }}
    printf("sum=%.17g\\n", sum);
    return 0;
}}
"""


@pytest.mark.parametrize("case", sorted(DECOYS))
def test_decoys_are_not_speculated_and_say_why(case: str, program_of, tmp_path: Path) -> None:
    body, reason = DECOYS[case]
    program = program_of(decoy(body))
    plans, _ = plan_program(Variant(program.source), program)
    assert all(plan.speculation is None for plan in plans)
    (line,) = [line for line in mapping_report(program) if "'step'" in line or "step:" in line]
    assert reason in line
    outcome = SCHEDULE.apply_rule(Variant(program.source), Context(program))
    if outcome.variant is not None and any(p.function.name == "step" for p in plans):
        emulated_like_gcc(program, tmp_path / "input.c", tmp_path)
