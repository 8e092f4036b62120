from __future__ import annotations

import pytest
from pattern_golden import applied, nvcc_errors, same_output_as_gcc
from transforms_support import GOLDEN, analysed

from cudaify.core import Variant
from cudaify.transforms import get
from cudaify.transforms.base import Context
from cudaify.transforms.structure import structural_problems

CASES = sorted(path.stem for path in (GOLDEN / "fast_math").glob("*.c"))
FAST = get("fast_math")


@pytest.mark.parametrize("case", CASES)
def test_golden_output_is_stable_and_compiles(case: str, update_golden: bool, tmp_path) -> None:
    program = analysed(GOLDEN / "fast_math" / f"{case}.c")
    before = applied(program, "offload")
    variant = applied(program, "offload", "fast_math")
    expected = GOLDEN / "fast_math" / f"{case}.cu"
    if update_golden:
        expected.write_text(variant.code)
    assert expected.exists(), f"{expected.name} is missing: rerun with --update-golden to write it"
    assert variant.code == expected.read_text(), f"rerun with --update-golden to accept {case}.cu"
    assert structural_problems(program, variant.code, FAST, before) == []
    assert nvcc_errors(variant.code, tmp_path) == ""


def test_kernel_math_becomes_intrinsics_and_helpers_stay() -> None:
    program = analysed(GOLDEN / "fast_math" / "activations.c")
    variant = applied(program, "offload", "fast_math")
    code = variant.code
    assert (
        "y[i] = __sinf(x[i]) * __expf(-0.5f * x[i]) + __powf(x[i], 1.5f) + softplus(x[i]);" in code
    )
    assert "z[i] = rsqrtf(x[i] + 1.0f) + __cosf(x[i]);" in code
    # the helper also runs on the host: unchanged
    assert "return logf(1.0f + expf(v));" in code
    assert variant.steps[-1].detail == (
        "activate_kernel: __cosf x1, __expf x1, __powf x1, __sinf x1, rsqrtf x1"
    )


def test_refuses_double_math_and_a_second_time() -> None:
    program = analysed(GOLDEN / "offload" / "helper.c")  # sqrt on doubles
    assert FAST.applies(applied(program, "offload"), Context(program)) == (
        "no kernel calls single-precision math with an intrinsic"
    )
    program = analysed(GOLDEN / "fast_math" / "activations.c")
    once = applied(program, "offload", "fast_math")
    assert FAST.applies(once, Context(program)) == (
        "no kernel calls single-precision math with an intrinsic"
    )


def test_check_finds_intrinsics_outside_kernels() -> None:
    program = analysed(GOLDEN / "fast_math" / "activations.c")
    before = applied(program, "offload")
    after = applied(program, "offload", "fast_math")
    assert FAST.check(before, after, Context(program)) == []
    host = Variant(
        after.code.replace("return logf(1.0f + expf(v));", "return __logf(1.0f + expf(v));")
    )
    assert [p.message for p in FAST.check(before, host, Context(program))] == [
        "'__logf' is used outside a kernel"
    ]


@pytest.mark.gpu
@pytest.mark.parametrize("case", CASES)
def test_golden_cases_print_what_gcc_prints(case: str, tmp_path) -> None:
    """Within the default tolerance for this input (values near zero, a few ulp)."""
    source = GOLDEN / "fast_math" / f"{case}.c"
    cu = tmp_path / f"{case}.cu"
    cu.write_text(applied(analysed(source), "offload", "fast_math").code)
    same_output_as_gcc(source, cu, tmp_path)
