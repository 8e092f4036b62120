"""Temporary arrays in the isl model: which are expanded over outer loops (exact dataflow
proves each iteration sets what it reads, and the last iteration leaves the final
contents), over how many, which iteration's copy holds the final contents, and why the
others stay shared."""

from __future__ import annotations

import islpy as isl
from analysed_code import analysed, region

from cudaify.frontend import polyhedral

DOITGEN = """
void doitgen(int nr, int nq, int np, double A[25][20][30], double C4[30][30], double sum[30])
{
    int r, q, p, s;
    for (r = 0; r < nr; r++)
        for (q = 0; q < nq; q++) {
            for (p = 0; p < np; p++) {
                sum[p] = 0.0;
                for (s = 0; s < np; s++)
                    sum[p] += A[r][q][s] * C4[s][p];
            }
            for (p = 0; p < np; p++)
                A[r][q][p] = sum[p];
        }
}
"""


def crossing(model: polyhedral.Model, depth: int) -> isl.UnionMap:
    """Dependences between different iterations of the first `depth` loops (every
    statement of these regions is inside them)."""
    pieces = []
    for statement, iterators in model.iterators.items():
        dims = [f"i{k}" for k in range(len(iterators))]
        pieces.append(f"{statement}[{', '.join(dims)}] -> [{', '.join(dims[:depth])}]")
    outer = isl.UnionMap(f"{model.space.header()}{{ {'; '.join(pieces)} }}")
    return model.dependences.subtract(outer.apply_range(outer.reverse()))


def test_doitgens_sum_is_expanded_over_r_and_q_and_no_dependence_crosses_them() -> None:
    model = polyhedral.build(region(analysed(DOITGEN), "doitgen"))
    assert model.privates["sum"].loops == ("r", "q")
    assert model.array_notes() == ["array 'sum' is private to loops r, q: expanded"]
    assert crossing(model, 1).is_empty() and crossing(model, 2).is_empty()
    # sum[p] = 0.0 writes the expansion, indexed by r and q first
    header = model.space.header()
    writes = model.writes.intersect_domain(isl.UnionSet(f"{header}{{ S0[r, q, p] }}"))
    expanded = isl.UnionMap(f"{header}{{ S0[r, q, p] -> P0[r, q, p] }}")
    assert writes.is_equal(expanded.intersect_domain(model.domain))


def test_the_last_copy_of_doitgens_sum_is_the_last_r_and_q_when_the_loops_run() -> None:
    model = polyhedral.build(region(analysed(DOITGEN), "doitgen"))
    last = polyhedral.last_iteration(model, model.privates["sum"])
    nr, nq, np_ = (model.space.param(name) for name in ("nr", "nq", "np"))
    expected = isl.Set(
        f"[{nr}, {nq}, {np_}] -> {{ [{nr} - 1, {nq} - 1] : {nr} > 0 and {nq} > 0 and {np_} > 0 }}"
    ).align_params(last.get_space())
    assert last.is_equal(expected)


def test_a_loop_running_downwards_ends_at_its_lowest_value() -> None:
    program = analysed(
        """
void down(int n, int m, double t[64], double a[48][64], double b[48][64])
{
    for (int q = n - 1; q >= 0; q--) {
        for (int p = 0; p < m; p++)
            t[p] = a[q][p] * 2.0 + q;
        for (int p = 0; p < m; p++)
            b[q][p] = t[p] + t[m - 1 - p];
    }
}
"""
    )
    model = polyhedral.build(region(program, "down"))
    last = polyhedral.last_iteration(model, model.privates["t"])
    n, m = model.space.param("n"), model.space.param("m")
    expected = isl.Set(f"[{n}, {m}] -> {{ [0] : {n} > 0 and {m} > 0 }}")
    assert last.is_equal(expected.align_params(last.get_space()))


def test_an_array_whose_rows_inner_iterations_write_is_expanded_over_the_outer_loop() -> None:
    """Iteration (q, r) writes row r of t: the last (q, r) does not hold every row, the
    last q does."""
    program = analysed(
        """
void rows(int n, int m, int k, double t[16][32], double a[16][32], double out[8][16][32])
{
    for (int q = 0; q < n; q++)
        for (int r = 0; r < m; r++) {
            for (int p = 0; p < k; p++)
                t[r][p] = a[r][p] * q;
            for (int p = 0; p < k; p++)
                out[q][r][p] = t[r][p] + t[r][k - 1 - p];
        }
}
"""
    )
    model = polyhedral.build(region(program, "rows"))
    assert model.privates["t"].loops == ("q",)
    assert crossing(model, 1).is_empty()


def test_an_expansion_that_frees_no_loop_is_dropped() -> None:
    """B is a temporary of each time step, but A carries t anyway: copies of B per step
    would cost memory for nothing."""
    program = analysed(
        """
void steps(int tsteps, int n, double A[100], double B[100])
{
    for (int t = 0; t < tsteps; t++) {
        for (int i = 0; i < n; i++)
            B[i] = A[i] * 0.5 + 1.0;
        for (int i = 0; i < n; i++)
            A[i] = B[i] + B[n - 1 - i];
    }
}
"""
    )
    model = polyhedral.build(region(program, "steps"))
    assert model.privates == {}
    assert (
        "array 'B' stays shared: expanding it over loop t would free none of them "
        "(other accesses cross them)"
    ) in model.array_notes()
    assert "array 'A' stays shared: the read at line 6 may take a value from before the region" in (
        model.array_notes()
    )


def test_arrays_no_loop_iterations_meet_through_get_no_note() -> None:
    """gemm's C[i][j] is read before it is written, but only within one i: nothing to
    expand, nothing to say."""
    program = analysed(
        """
void gemm(int ni, int nj, int nk, double C[100][110], double A[100][120], double B[120][110])
{
    for (int i = 0; i < ni; i++) {
        for (int j = 0; j < nj; j++)
            C[i][j] *= 0.5;
        for (int k = 0; k < nk; k++)
            for (int j = 0; j < nj; j++)
                C[i][j] += A[i][k] * B[k][j];
    }
}
"""
    )
    model = polyhedral.build(region(program, "gemm"))
    assert model.privates == {}
    assert model.array_notes() == []
