from __future__ import annotations

import pytest
from pattern_golden import applied, nvcc_errors, same_output_as_gcc
from transforms_support import GOLDEN, analysed

from cudaify.core import Variant
from cudaify.transforms import get
from cudaify.transforms.base import Context
from cudaify.transforms.structure import structural_problems

WAVEFRONT = get("wavefront")


def test_golden_output_is_stable_and_compiles(update_golden: bool, tmp_path) -> None:
    program = analysed(GOLDEN / "wavefront" / "sweeps.c")
    variant = applied(program, "wavefront")
    expected = GOLDEN / "wavefront" / "sweeps.cu"
    if update_golden or not expected.exists():
        expected.write_text(variant.code)
    assert variant.code == expected.read_text(), "rerun with --update-golden to accept sweeps.cu"
    assert structural_problems(program, variant.code, WAVEFRONT) == []
    assert nvcc_errors(variant.code, tmp_path) == ""


def test_distances_are_computed_from_the_affine_accesses() -> None:
    program = analysed(GOLDEN / "wavefront" / "sweeps.c")
    variant = applied(program, "wavefront")
    detail = variant.steps[-1].detail
    assert "sweep: nest 'i, j' at line 10 -> sweep_wave per anti-diagonal" in detail
    assert "(dependence distances (0, 1), (1, 0))" in detail
    assert "(dependence distances (0, 1), (1, 0), (1, 1))" in detail
    code = variant.code
    assert "int i = (int)(1 + (first + k_2));" in code  # main has a `k`
    assert "int j = (int)(1 + (wave - first - k_2));" in code
    # loop variables declared outside the nest end with the values the loops leave
    assert "if (trips_i_2 > 0) j = (int)(1 + trips_j_2);" in code


SOURCES = {
    "same_diagonal": (
        "#define M 64\nvoid f(int n, double a[M][M])\n{\n"
        "    for (int i = 1; i < n; i++)\n        for (int j = 0; j < n - 1; j++)\n"
        "            a[i][j] = a[i - 1][j + 1] + 1.0;\n}\n",
        "distance (1, -1)",
    ),
    "carried_scalar": (
        "#define M 64\nvoid f(int n, double a[M][M])\n{\n    double carry = 0.0;\n"
        "    for (int i = 1; i < n; i++)\n        for (int j = 1; j < n; j++) {\n"
        "            carry = carry * 0.5 + a[i - 1][j];\n            a[i][j] = carry;\n"
        "        }\n}\n",
        "",
    ),
}


@pytest.mark.parametrize("case", sorted(SOURCES))
def test_refusals(case: str, program_of) -> None:
    source, words = SOURCES[case]
    program = program_of(
        source + "int main(void) { static double a[M][M]; f(M, a); return (int)a[3][3]; }\n"
    )
    reason = WAVEFRONT.applies(Variant(program.source), Context(program))
    assert reason is not None and words in reason
    assert WAVEFRONT.apply_rule(Variant(program.source), Context(program)).variant is None


def test_check_wants_launches_per_diagonal() -> None:
    program = analysed(GOLDEN / "wavefront" / "sweeps.c")
    before = Variant(program.source)
    assert len(WAVEFRONT.check(before, before, Context(program))) == 1
    assert WAVEFRONT.check(before, applied(program, "wavefront"), Context(program)) == []


@pytest.mark.gpu
def test_golden_output_prints_what_gcc_prints(tmp_path) -> None:
    same_output_as_gcc(
        GOLDEN / "wavefront" / "sweeps.c", GOLDEN / "wavefront" / "sweeps.cu", tmp_path
    )
