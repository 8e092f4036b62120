"""Temporary arrays privatised by expansion in the schedule-based mapping.

An array that each iteration of some outer loops sets before reading (doitgen's `sum[p]`,
one per (r, q)) gets one copy per iteration, so those loops can map to the grid; the
last iteration's copy goes back into the array, so the program still sees the values the
loops leave. Decoys keep the array shared and say why. Every program runs on the CPU
emulator, threads forward and reversed, and must print exactly what gcc's build prints."""

from __future__ import annotations

from pathlib import Path

import islpy as isl
import pytest
from emulation import SERIAL_HEADER, gcc_output, run_emulated
from pattern_golden import nvcc_errors

from cudaify.backend.compare import compare
from cudaify.core import Variant
from cudaify.frontend.facts import Program
from cudaify.transforms import get
from cudaify.transforms.base import Context
from cudaify.transforms.schedule import RegionPlan, mapping_report, plan_program

SCHEDULE = get("schedule")

DOITGEN = """
#include <stdio.h>

#define NR 12
#define NQ 10
#define NP 16

static double A[NR][NQ][NP], C4[NP][NP], sum[NP];

static void doitgen(int nr, int nq, int np, double A[NR][NQ][NP], double C4[NP][NP],
                    double sum[NP])
{
    for (int r = 0; r < nr; r++)
        for (int q = 0; q < nq; q++) {
            for (int p = 0; p < np; p++) {
                sum[p] = 0.0;
                for (int s = 0; s < np; s++)
                    sum[p] += A[r][q][s] * C4[s][p];
            }
            for (int p = 0; p < np; p++)
                A[r][q][p] = sum[p];
        }
}

static void print(const char *what)
{
    double total = 0.0;
    for (int r = 0; r < NR; r++)
        for (int q = 0; q < NQ; q++)
            for (int p = 0; p < NP; p++)
                total += A[r][q][p] * (1 + (r + q + p) % 7);
    printf("%s: A %.12e sum", what, total);
    for (int p = 0; p < NP; p++)
        printf(" %.12e", sum[p]);
    printf("\\n");
}

int main(void)
{
    for (int r = 0; r < NR; r++)
        for (int q = 0; q < NQ; q++)
            for (int p = 0; p < NP; p++)
                A[r][q][p] = (double)((r * q + p) % NP) / NP;
    for (int i = 0; i < NP; i++) {
        sum[i] = -1.0 - i;
        for (int j = 0; j < NP; j++)
            C4[i][j] = (double)(i * j % NP) / NP;
    }
    doitgen(0, NQ, NP, A, C4, sum); /* no iteration: sum keeps its values */
    print("empty");
    doitgen(NR, NQ, NP, A, C4, sum); /* sum ends as the last (r, q) leaves it */
    print("full");
    return 0;
}
"""

# -- helpers ---------------------------------------------------------------------------


def plan_of(program: Program, function: str) -> RegionPlan:
    plans, reasons = plan_program(Variant(program.source), program)
    found = [plan for plan in plans if plan.function.name == function]
    assert found, reasons
    return found[0]


def loop_of(piece: isl.Map, plan: RegionPlan) -> str:
    """The loop variable a 1-D schedule member is for one statement (S[i0..] -> [ik])."""
    statement = piece.get_tuple_name(isl.dim_type.in_)
    for k, var in enumerate(plan.model.iterators[statement]):
        dims = [f"i{j}" for j in range(piece.dim(isl.dim_type.in_))]
        identity = isl.Map(f"{{ {statement}[{', '.join(dims)}] -> [i{k}] }}")
        identity = identity.align_params(piece.get_space()).intersect_domain(piece.domain())
        if piece.is_equal(identity):
            return var
    raise AssertionError(f"a grid dimension of {statement} is not one of its loops: {piece}")


def grid_loops(plan: RegionPlan) -> list[set[str]]:
    """Per kernel: the source loops its grid dimensions run along."""
    result = []
    for part in plan.kernels:
        pieces: list[isl.Map] = []
        for member in part.mapped:
            member.foreach_map(pieces.append)
        result.append({loop_of(piece, plan) for piece in pieces})
    return result


def emulated_like_gcc(program: Program, source: Path, tmp_path: Path) -> str:
    """The mapped program, after checking that nvcc compiles it and that it prints what
    gcc's build of the input prints, its threads run forward and reversed."""
    outcome = SCHEDULE.apply_rule(Variant(program.source), Context(program))
    assert outcome.variant is not None, outcome.reason
    code = outcome.variant.code
    assert nvcc_errors(code, tmp_path) == ""
    expected = gcc_output(source, tmp_path)
    for reverse in (False, True):
        done = run_emulated(code, tmp_path, header=SERIAL_HEADER, reverse=reverse)
        assert done.ok, done.errors()
        assert compare(expected, done.text()) is None, (expected, done.text())
    return code


# -- the temporary array of doitgen ------------------------------------------------------


def test_doitgens_sum_is_expanded_and_r_q_p_form_every_grid(program_of, tmp_path) -> None:
    program = program_of(DOITGEN)
    plan = plan_of(program, "doitgen")
    private = plan.model.privates["sum"]
    assert private.loops == ("r", "q")
    assert "array 'sum' is private to loops r, q: expanded" in plan.summary
    # no host loop: every statement runs over (r, q, p) in the grid
    assert [part.host_depth for part in plan.kernels] == [0] * len(plan.kernels)
    assert grid_loops(plan) == [{"r", "q", "p"}] * len(plan.kernels)
    # the region's result, sum's final values and the empty call included, are gcc's
    code = emulated_like_gcc(program, tmp_path / "input.c", tmp_path)
    assert "cudaMemcpyDeviceToDevice" in code  # the last copy goes back into sum


def test_without_the_expansion_r_and_q_stay_host_loops(program_of) -> None:
    """The same nest with `sum` read after each (r, q) by the next one: it is shared, and
    r and q stay on the host around 1-D launches (what doitgen got before)."""
    carried = DOITGEN.replace("sum[p] = 0.0;", "sum[p] = sum[p] * 0.5;")
    plan = plan_of(program_of(carried), "doitgen")
    assert "sum" not in plan.model.privates
    why = "the read at line 16 may take a value from before the region"
    assert plan.model.shared_arrays["sum"] == why
    assert max(part.host_depth for part in plan.kernels) == 2


# -- write-back: the array after the region holds what the loops leave in it -------------

GROWING = """
#include <stdio.h>

#define N 48
#define M 64

static double t[M], a[N][M], b[N][M];

static void grow(int n, double t[M], double a[N][M], double b[N][M])
{
    for (int q = 0; q < n; q++) {
        for (int p = 0; p <= q; p++)
            t[p] = a[q][p] * 2.0;
        for (int p = 0; p <= q; p++)
            b[q][p] = t[p] + t[q - p];
    }
}

int main(void)
{
    for (int q = 0; q < N; q++)
        for (int p = 0; p < M; p++)
            a[q][p] = (double)((q * 5 + p) % 17) / 17;
    for (int p = 0; p < M; p++)
        t[p] = -p;
    grow(N, t, a, b);
    double total = 0.0, tt = 0.0;
    for (int q = 0; q < N; q++)
        for (int p = 0; p <= q; p++)
            total += b[q][p] * (1 + (q + p) % 5);
    for (int p = 0; p < M; p++)
        tt += t[p] * (p + 1);
    printf("%.12e %.12e\\n", total, tt);
    return 0;
}
"""

DOWNWARDS = """
#include <stdio.h>

#define N 48
#define M 64

static double t[M], a[N][M], b[N][M];

static void down(int n, int m, double t[M], double a[N][M], double b[N][M])
{
    for (int q = n - 1; q >= 0; q--) {
        for (int p = 0; p < m; p++)
            t[p] = a[q][p] * 2.0 + q;
        for (int p = 0; p < m; p++)
            b[q][p] = t[p] + t[m - 1 - p];
    }
}

int main(void)
{
    for (int q = 0; q < N; q++)
        for (int p = 0; p < M; p++)
            a[q][p] = (double)((q * 5 + p) % 17) / 17;
    for (int p = 0; p < M; p++)
        t[p] = -p;
    down(N, M / 2, t, a, b);
    double total = 0.0, tt = 0.0;
    for (int q = 0; q < N; q++)
        for (int p = 0; p < M / 2; p++)
            total += b[q][p] * (1 + (q + p) % 5);
    for (int p = 0; p < M; p++)
        tt += t[p] * (p + 1);
    printf("%.12e %.12e\\n", total, tt);
    return 0;
}
"""


@pytest.mark.parametrize(
    "code, function",
    [
        # iteration q writes t[0..q]: the last one writes every element any other writes
        (GROWING, "grow"),
        # q runs downwards: the last iteration is q = 0; half of t is never written
        (DOWNWARDS, "down"),
    ],
    ids=["growing", "downwards"],
)
def test_a_temporary_read_after_the_region_ends_as_the_last_iteration_leaves_it(
    code: str, function: str, program_of, tmp_path: Path
) -> None:
    program = program_of(code)
    plan = plan_of(program, function)
    assert plan.model.privates["t"].loops == ("q",)
    assert all("q" in loops for loops in grid_loops(plan))
    emulated_like_gcc(program, tmp_path / "input.c", tmp_path)


# -- decoys: the array stays shared, with the reason -------------------------------------

CARRIED = """
#include <stdio.h>

#define N 40
#define M 64

static double t[M], x[N][M], out[N][M];

static void carry(int n, int m, double t[M], double x[N][M], double out[N][M])
{
    for (int q = 0; q < n; q++)
        for (int p = 0; p < m; p++) {
            t[p] = t[p] + x[q][p];
            out[q][p] = t[p] * 0.5;
        }
}

int main(void)
{
    for (int q = 0; q < N; q++)
        for (int p = 0; p < M; p++)
            x[q][p] = (double)((q * 7 + p * 3) % 11) / 11;
    for (int p = 0; p < M; p++)
        t[p] = p;
    carry(N, M, t, x, out);
    double total = 0.0;
    for (int q = 0; q < N; q++)
        for (int p = 0; p < M; p++)
            total += out[q][p] * (1 + (q + p) % 5);
    printf("%.12e %.12e %.12e\\n", total, t[0], t[M - 1]);
    return 0;
}
"""

EARLIER = """
#include <stdio.h>

#define N 200

static double t[N], a[N], b[N][N];

static void earlier(int n, double t[N], const double a[N], double b[N][N])
{
    for (int q = 0; q < n; q++) {
        for (int p = 0; p < q; p++)
            b[q][p] = t[p] * 2.0 + q;
        t[q] = a[q] + 1.0;
    }
}

int main(void)
{
    for (int i = 0; i < N; i++) {
        a[i] = (double)(i % 13) / 13;
        t[i] = -1.0;
    }
    earlier(N, t, a, b);
    double total = 0.0;
    for (int q = 0; q < N; q++)
        for (int p = 0; p < q; p++)
            total += b[q][p] * (1 + (q + p) % 5);
    printf("%.12e %.12e %.12e\\n", total, t[0], t[N - 1]);
    return 0;
}
"""

SHIFTED = """
#include <stdio.h>

#define N 40
#define M 64

static double t[N + M], a[N][M], b[N][M];

static void shifted(int n, int m, double t[N + M], double a[N][M], double b[N][M])
{
    for (int q = 0; q < n; q++) {
        for (int p = 0; p < m; p++)
            t[q + p] = a[q][p] * 3.0;
        for (int p = 0; p < m; p++)
            b[q][p] = t[q + p] + t[q + m - 1 - p];
    }
}

int main(void)
{
    for (int q = 0; q < N; q++)
        for (int p = 0; p < M; p++)
            a[q][p] = (double)((q * 5 + p) % 17) / 17;
    for (int i = 0; i < N + M; i++)
        t[i] = -i;
    shifted(N, M, t, a, b);
    double total = 0.0, tt = 0.0;
    for (int q = 0; q < N; q++)
        for (int p = 0; p < M; p++)
            total += b[q][p] * (1 + (q + p) % 5);
    for (int i = 0; i < N + M; i++)
        tt += t[i] * (i + 1);
    printf("%.12e %.12e\\n", total, tt);
    return 0;
}
"""

INDIRECT = """
#include <stdio.h>

#define N 40
#define M 64

static double t[M], a[N][M], b[N][M];
static int perm[M];

static void indirect(int n, int m, const int perm[M], double t[M], double a[N][M],
                     double b[N][M])
{
    for (int q = 0; q < n; q++) {
        for (int p = 0; p < m; p++)
            t[perm[p]] = a[q][p] * 3.0;
        for (int p = 0; p < m; p++)
            b[q][p] = t[p] + 1.0;
    }
}

int main(void)
{
    for (int q = 0; q < N; q++)
        for (int p = 0; p < M; p++)
            a[q][p] = (double)((q * 5 + p) % 17) / 17;
    for (int p = 0; p < M; p++)
        perm[p] = (p * 5) % M;
    indirect(N, M, perm, t, a, b);
    double total = 0.0;
    for (int q = 0; q < N; q++)
        for (int p = 0; p < M; p++)
            total += b[q][p] * (1 + (q + p) % 5);
    printf("%.12e %.12e\\n", total, t[3]);
    return 0;
}
"""


@pytest.mark.parametrize(
    "code, function, reason",
    [
        # t[p] carries its value from one q to the next (and from before the region)
        (CARRIED, "carry", "the read at line 13 may take a value from before the region"),
        # every read of t[p] has a writer in the region, but in an earlier q
        (
            EARLIER,
            "earlier",
            "the read at line 12 takes a value written in an earlier iteration of loop q",
        ),
        # each q writes t[q..q+m-1]: the last q's copy misses what earlier ones leave
        (SHIFTED, "shifted", "the last iteration of q does not write every element"),
        (INDIRECT, "indirect", "line 15 indexes it with a subscript that is not affine"),
    ],
    ids=["carried", "earlier", "shifted", "indirect"],
)
def test_decoys_keep_the_array_shared_and_say_why(
    code: str, function: str, reason: str, program_of, tmp_path: Path
) -> None:
    program = program_of(code)
    plan = plan_of(program, function)
    assert "t" not in plan.model.privates
    assert "array 't'" not in plan.summary  # the generated code's comment: what it does
    (line,) = [line for line in mapping_report(program) if f"{function}: region" in line]
    assert f"array 't' stays shared: {reason}" in line
    emulated_like_gcc(program, tmp_path / "input.c", tmp_path)


def test_the_analysis_report_says_what_became_of_the_array(program_of) -> None:
    lines = mapping_report(program_of(DOITGEN))
    (line,) = [line for line in lines if "doitgen: region" in line]
    assert line.endswith("array 'sum' is private to loops r, q: expanded")


def test_a_refused_region_says_which_array_kept_its_loops_sequential(program_of) -> None:
    program = program_of(
        """
void prefix(int n, double a[1000])
{
    for (int i = 1; i < n; i++)
        a[i] = a[i] + a[i - 1];
}
"""
    )
    outcome = SCHEDULE.apply_rule(Variant(program.source), Context(program))
    assert outcome.variant is None
    assert outcome.reason.endswith(
        "no loop of the region can run in parallel (every one carries a dependence); "
        "array 'a' stays shared: the read at line 5 may take a value from before the region"
    )
