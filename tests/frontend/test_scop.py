"""Static-control regions: which statements form one, what each statement touches, and why
other loops are not in one. And the isl model of a region: dependences, private
temporaries and their live ranges, sums, and the legality check of a schedule."""

from __future__ import annotations

import os
import tempfile

import islpy as isl
import pytest

from cudaify.frontend import polyhedral
from cudaify.frontend.analyze import analyze
from cudaify.frontend.facts import Program, Scop


def analysed(code: str, suffix: str = ".c") -> Program:
    with tempfile.NamedTemporaryFile("w", suffix=suffix, delete=False) as handle:
        handle.write(code)
        path = handle.name
    try:
        return analyze(path)
    finally:
        os.unlink(path)


def region(program: Program, function: str, index: int = 0) -> Scop:
    fn = program.function(function)
    assert fn is not None
    assert len(fn.scops) > index, fn.scop_notes
    return fn.scops[index]


GEMM = """
void gemm(int ni, int nj, int nk, double alpha, double beta,
          double C[100][110], double A[100][120], double B[120][110])
{
    int i, j, k;
    for (i = 0; i < ni; i++) {
        for (j = 0; j < nj; j++)
            C[i][j] *= beta;
        for (k = 0; k < nk; k++)
            for (j = 0; j < nj; j++)
                C[i][j] += alpha * A[i][k] * B[k][j];
    }
}
"""


def test_a_nest_is_a_region_with_its_statements_loops_and_order() -> None:
    scop = region(analysed(GEMM), "gemm")
    assert [loop.var for loop in scop.loops] == ["i", "j", "k", "j"]
    first, second = scop.statements
    assert [scop.loops[k].var for k in first.loops] == ["i", "j"]
    assert [scop.loops[k].var for k in second.loops] == ["i", "k", "j"]
    assert first.position == (0, 0, 0) and second.position == (0, 1, 0, 0)
    targets = {(a.target, tuple(s.text for s in a.subscripts or ())) for a in second.accesses}
    assert ("A", ("i", "k")) in targets and ("B", ("k", "j")) in targets
    assert second.reduction == "+"
    assert set(scop.params) == {"ni", "nj", "nk"}
    assert {a.name for a in scop.arrays} == {"A", "B", "C"}


def test_an_array_behind_a_pointer_to_array_is_indexed_from_its_first_whole_array() -> None:
    """PolyBench allocates `double (*B)[N][N]` and writes `(*B)[r][s]`: that is
    B[0][r][s], an affine access, and the nest is a region."""
    code = """
#include <stdlib.h>
#define N 64
void square(int n, double A[N][N])
{
    int r, s, t;
    double (*B)[N][N] = (double (*)[N][N])calloc(N * N, sizeof(double));
    for (r = 0; r < n; ++r)
        for (s = 0; s < n; ++s)
            (*B)[r][s] = 0;
    for (t = 0; t < n; ++t)
        for (r = 0; r < n; ++r)
            for (s = 0; s < n; ++s)
                (*B)[r][s] += A[r][t] * A[s][t];
    for (r = 0; r < n; ++r)
        for (s = 0; s < n; ++s)
            A[r][s] = (*B)[r][s];
    free(B);
}
"""
    scop = region(analysed(code), "square")
    assert len(scop.statements) == 3
    writes = [
        (a.target, tuple(x.text for x in a.subscripts or ()))
        for a in scop.statements[1].accesses
        if a.is_write
    ]
    assert writes == [("B", ("0", "r", "s"))]
    assert scop.statements[1].reduction == "+"


def test_io_in_a_loop_keeps_it_out_with_the_reason_and_place() -> None:
    program = analysed(
        """
#include <stdio.h>
void show(int n, const double *a)
{
    for (int i = 0; i < n; i++)
        printf("%f\\n", a[i]);
}
"""
    )
    fn = program.function("show")
    assert fn is not None and fn.scops == ()
    assert len(fn.scop_notes) == 1
    note = fn.scop_notes[0]
    assert ":6:9: not in a static-control region: calls 'printf', which does I/O" in note


def test_a_loop_variable_read_after_the_loops_is_refused() -> None:
    program = analysed(
        """
int last(int n, double *a)
{
    int i;
    for (i = 0; i < n; i++)
        a[i] = 2.0 * a[i];
    return i;
}
"""
    )
    fn = program.function("last")
    assert fn is not None and fn.scops == ()
    assert any("loop variable 'i' is used after the loops" in note for note in fn.scop_notes)


def test_main_loops_with_top_level_scalars_form_a_region() -> None:
    program = analysed(
        """
#include <stdio.h>
int main(void)
{
    double x[4096], y[4096];
    for (int i = 0; i < 4096; i++) { x[i] = i; y[i] = 1.0; }
    double a = 2.5;
    for (int i = 0; i < 4096; i++) y[i] = a * x[i] + y[i];
    double sum = 0.0;
    for (int i = 0; i < 4096; i++) sum += y[i];
    printf("%f\\n", sum);
    return 0;
}
"""
    )
    scop = region(program, "main")
    assert len(scop.prelude) == 1  # `double a = 2.5;` runs on the host before the region
    assert scop.hoisted == (("double", "sum"),)
    scalars = {s.name: s for s in scop.scalars}
    assert not scalars["a"].written
    assert scalars["sum"].written and scalars["sum"].live_out


def test_csr_accesses_get_runtime_extents() -> None:
    program = analysed(
        """
void spmv(int n, const int *row_ptr, const int *col, const double *val,
          const double *x, double *y)
{
    for (int i = 0; i < n; i++) {
        double sum = 0.0;
        for (int k = row_ptr[i]; k < row_ptr[i + 1]; k++)
            sum += val[k] * x[col[k]];
        y[i] = sum;
    }
}
"""
    )
    scop = region(program, "spmv")
    extents = {e.array: e for e in scop.runtime_extents}
    assert set(extents) == {"val", "col"}
    assert extents["val"].lower == "row_ptr[i]"
    assert extents["val"].upper == "row_ptr[i + 1]"
    assert [scop.loops[k].var for k in extents["val"].loops] == ["i"]


def test_runtime_extents_need_bounds_the_region_leaves_alone() -> None:
    program = analysed(
        """
void shift(int n, int *start, double *val, double *y)
{
    for (int i = 0; i < n; i++) {
        for (int k = start[i]; k < start[i + 1]; k++)
            y[i] += val[k];
        start[i] = 0;
    }
}
"""
    )
    scop = region(program, "shift")
    assert scop.runtime_extents == ()


# -- the isl model -----------------------------------------------------------------------


def test_dependences_of_gemm_are_carried_by_k_only() -> None:
    model = polyhedral.build(region(analysed(GEMM), "gemm"))
    assert not model.dependences.is_empty()
    # S1 -> S1 pairs differ in k alone: none with another i or j
    s1 = isl.UnionMap(
        f"{model.space.header()}{{ S1[i, k, j] -> S1[i2, k2, j2] : i2 != i or j2 != j }}"
    )
    assert model.dependences.intersect(s1).is_empty()


def test_temporaries_reused_by_two_nests_get_two_private_live_ranges() -> None:
    program = analysed(
        """
void two(int n, int m, double A[64][64], double B[64][64], double r[64], double c[64])
{
    double t;
    for (int i = 0; i < n; i++) {
        t = 0.0;
        for (int j = 0; j < m; j++)
            t += A[i][j];
        r[i] = t;
    }
    for (int j = 0; j < m; j++) {
        t = 0.0;
        for (int i = 0; i < n; i++)
            t += B[i][j];
        c[j] = t;
    }
}
"""
    )
    model = polyhedral.build(region(program, "two"))
    webs = [w for w in model.webs if w.scalar == "t"]
    assert len(webs) == 2
    assert all(w.depth == 1 for w in webs)


def test_a_scalar_read_after_the_region_is_one_shared_location() -> None:
    program = analysed(
        """
double total(int n, const double *a)
{
    double s = 0.0;
    for (int i = 0; i < n; i++)
        s += a[i];
    return s;
}
"""
    )
    model = polyhedral.build(region(program, "total"))
    (web,) = [w for w in model.webs if w.scalar == "s"]
    assert web.depth == 0


def test_sums_lose_their_self_dependences_only_when_relaxed() -> None:
    scop = region(analysed(GEMM), "gemm")
    strict = polyhedral.build(scop)
    relaxed = polyhedral.build(scop, sums=frozenset({"S1"}))
    self_pairs = isl.UnionMap(f"{strict.space.header()}{{ S1[i, k, j] -> S1[i2, k2, j2] }}")
    assert not strict.relaxed.intersect(self_pairs).is_empty()
    assert relaxed.relaxed.intersect(self_pairs).is_empty()
    assert not relaxed.dependences.intersect(self_pairs).is_empty()


@pytest.mark.parametrize(
    "schedule, legal",
    [
        ("{ S0[i] -> [i] }", True),
        ("{ S0[i] -> [-i] }", False),  # runs the recurrence backwards
    ],
)
def test_a_schedule_that_breaks_a_dependence_is_caught(schedule: str, legal: bool) -> None:
    program = analysed(
        """
void prefix(int n, double *a)
{
    for (int i = 1; i < n; i++)
        a[i] = a[i] + a[i - 1];
}
"""
    )
    model = polyhedral.build(region(program, "prefix"))
    new = isl.UnionMap(schedule).align_params(model.domain.get_space())
    assert polyhedral.violated(model, new).is_empty() == legal


def test_an_array_written_everywhere_needs_no_copy_in_for_the_sizes_that_cover_it() -> None:
    program = analysed(
        """
void fill(int n, int m, double A[100][100])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            A[i][j] = i + j;
}
"""
    )
    model = polyhedral.build(region(program, "fill"))
    covered = polyhedral.covered_when(model, "A", ["100", "100"])
    header = model.space.header()
    n, m = model.space.param("n"), model.space.param("m")

    def holds(values: str) -> bool:
        point = isl.Set(f"[{n}, {m}] -> {{ : {values} }}").align_params(covered.get_space())
        return not point.intersect(covered).is_empty()

    assert holds(f"{n} = 100 and {m} = 120")
    assert not holds(f"{n} = 99 and {m} = 100")
    assert header  # the parameters are the function's sizes


def test_a_conditional_write_covers_nothing() -> None:
    program = analysed(
        """
void some(int n, double *a, const double *b)
{
    for (int i = 0; i < n; i++)
        if (b[i] > 0)
            a[i] = b[i];
}
"""
    )
    model = polyhedral.build(region(program, "some"))
    assert polyhedral.surely_written(model, "a").is_empty()
