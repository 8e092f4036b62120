"""The precondition of speculative outer-loop steps (polyhedral.speculation): one perfect
nest of affine accesses whose steps write each element once, where only reads of elements
that other instances of the step write stand between the step's instances and the grid.
What it finds for Floyd-Warshall, and why each decoy is refused."""

from __future__ import annotations

import islpy as isl
import pytest
from analysed_code import analysed, region

from cudaify.frontend import polyhedral


def nest(body: str, declarations: str = "") -> str:
    return f"""
void f(int n, double a[100][100], double d[100]{declarations})
{{
    for (int k = 0; k < n; k++)
        for (int i = 0; i < n; i++)
            for (int j = 1; j < n; j++)
                {body}
}}
"""


FLOYD = nest("a[i][j] = a[i][j] < a[i][k] + a[k][j] ? a[i][j] : a[i][k] + a[k][j];")


def test_floyd_warshall_steps_are_speculative_and_the_pivot_writes_are_checked() -> None:
    model = polyhedral.build(region(analysed(FLOYD), "f"))
    found = polyhedral.speculation(model)
    assert (found.loop, found.inner, found.arrays) == ("k", ("i", "j"), ("a",))
    # the writes another instance of the step reads: the pivot row and column
    (statement,) = model.iterators
    pivot = isl.UnionSet(
        f"[n] -> {{ {statement}[k, i, j] : i = k or j = k }}".replace("n", model.space.param("n"))
    )
    checked = found.checked
    assert checked.is_subset(pivot.intersect(model.domain))
    inside = model.domain.intersect(
        isl.UnionSet(f"{{ {statement}[k, i, j] : i = k and j = k + 1 }}").align_params(
            model.domain.get_space()
        )
    )
    assert inside.is_subset(checked)  # a[k][k + 1] is read by (i, k + 1) for every i


@pytest.mark.parametrize(
    ("body", "declarations", "reason"),
    [
        (
            "d[i] = d[i] < a[i][j] + d[k] ? d[i] : a[i][j] + d[k];",
            "",
            "two instances of one step of loop k write the same element of 'd' (line 7)",
        ),
        (
            "a[i][j] = a[i][j] < a[i][p[k]] + a[p[k]][j] ? a[i][j] : a[i][p[k]] + a[p[k]][j];",
            ", int p[100]",
            "line 7 indexes 'a' with a subscript that is not affine",
        ),
        (
            "a[i][j] = a[i][j - 1] * 0.5 + a[i][j] * 0.25;",
            "",
            "the reads across instances of a step of loop k chain 3 deep or more (line 7)",
        ),
        (
            "if (a[i][k] + a[k][j] < a[i][j]) a[i][j] = a[i][k] + a[k][j];",
            "",
            "line 7 is a statement whose accesses the model does not see",
        ),
        (
            "{ double t = a[i][k] + a[k][j]; a[i][j] = t < a[i][j] ? t : a[i][j]; }",
            "",
            "line 7 writes the scalar 't'",
        ),
    ],
    ids=["same-element", "not-affine", "recurrence", "opaque", "scalar"],
)
def test_decoys_are_refused_with_their_reason(body: str, declarations: str, reason: str) -> None:
    model = polyhedral.build(region(analysed(nest(body, declarations)), "f"))
    with pytest.raises(polyhedral.NotSpeculated) as refusal:
        polyhedral.speculation(model)
    assert reason in str(refusal.value)
    assert refusal.value.candidate


def test_a_nest_that_is_not_perfect_is_no_candidate() -> None:
    code = """
void lu(int n, double a[100][100])
{
    for (int k = 0; k < n; k++)
        for (int i = k + 1; i < n; i++) {
            a[i][k] = a[i][k] / a[k][k];
            for (int j = k + 1; j < n; j++)
                a[i][j] -= a[i][k] * a[k][j];
        }
}
"""
    model = polyhedral.build(region(analysed(code), "lu"))
    with pytest.raises(polyhedral.NotSpeculated) as refusal:
        polyhedral.speculation(model)
    assert not refusal.value.candidate
