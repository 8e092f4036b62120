from __future__ import annotations

import pytest
from pattern_golden import applied, nvcc_errors, same_output_as_gcc
from transforms_support import GOLDEN, analysed

from cudaify.core import Variant
from cudaify.transforms import get
from cudaify.transforms.base import Context
from cudaify.transforms.structure import structural_problems

CASES = sorted(path.stem for path in (GOLDEN / "readonly_cache").glob("*.c"))
READONLY = get("readonly_cache")

TWICE = """
#include <stdio.h>
#include <stdlib.h>
void shift(int n, const float *x, float *y) { for (int i = 0; i < n; i++) y[i] = x[i] + 1.0f; }
int main(void)
{
    float *a = (float *)calloc(4096, sizeof(float));
    float *b = (float *)calloc(4096, sizeof(float));
    shift(4096, a, b);
    shift(4096, b, b); /* the same array twice: restrict would be a lie */
    printf("%f\\n", b[7]);
    return 0;
}
"""


@pytest.mark.parametrize("case", CASES)
def test_golden_output_is_stable_and_compiles(case: str, update_golden: bool, tmp_path) -> None:
    program = analysed(GOLDEN / "readonly_cache" / f"{case}.c")
    before = applied(program, "offload")
    variant = applied(program, "offload", "readonly_cache")
    expected = GOLDEN / "readonly_cache" / f"{case}.cu"
    if update_golden:
        expected.write_text(variant.code)
    assert expected.exists(), f"{expected.name} is missing: rerun with --update-golden to write it"
    assert variant.code == expected.read_text(), f"rerun with --update-golden to accept {case}.cu"
    assert structural_problems(program, variant.code, READONLY, before) == []
    assert nvcc_errors(variant.code, tmp_path) == ""


def test_read_only_pointers_become_const_restrict_and_written_ones_restrict() -> None:
    program = analysed(GOLDEN / "readonly_cache" / "stencil.c")
    variant = applied(program, "offload", "readonly_cache")
    assert (
        "__global__ void blur_kernel(const float *__restrict__ weights, "
        "const float *__restrict__ in, float *__restrict__ out," in variant.code
    )
    assert variant.steps[-1].detail == "blur_kernel: 3 pointers restricted, read-only: weights, in"


def test_arrays_of_rows_get_the_qualifiers_inside_the_parentheses() -> None:
    program = analysed(GOLDEN / "readonly_cache" / "static2d.c")
    code = applied(program, "offload", "readonly_cache").code
    assert "double (*__restrict__ c)[M], const double (*__restrict__ a)[M]" in code


def test_refuses_when_a_call_passes_the_same_array_twice(program_of) -> None:
    """The frontend already keeps such a loop on the host; the rule checks the calls
    itself too (another method may have offloaded it): here the kernel comes from the
    program with one call and the calls from the program with both."""
    once = program_of(TWICE.replace("    shift(4096, b, b);", ""), name="once.c")
    twice = program_of(TWICE, name="twice.c")
    outcome = READONLY.apply_rule(applied(once, "offload"), Context(twice))
    assert outcome.variant is None
    assert outcome.reason == (
        "kernel 'shift_kernel': the call at line 10 of 'main' passes 'b' for both 'y' and 'x'"
    )


def test_refuses_twice_and_on_host_code() -> None:
    program = analysed(GOLDEN / "readonly_cache" / "helper.c")
    once = applied(program, "offload", "readonly_cache")
    assert READONLY.applies(once, Context(program)) == (
        "kernel 'apply_kernel': its pointers are already restricted"
    )
    assert READONLY.applies(Variant(program.source), Context(program)) == (
        "no kernel takes a pointer parameter"
    )


def test_check_wants_every_pointer_of_a_kernel_restricted() -> None:
    program = analysed(GOLDEN / "readonly_cache" / "stencil.c")
    before = applied(program, "offload")
    after = applied(program, "offload", "readonly_cache")
    assert READONLY.check(before, after, Context(program)) == []
    half = Variant(after.code.replace("float *__restrict__ out", "float *out", 1))
    assert [p.message for p in READONLY.check(before, half, Context(program))] == [
        "kernel 'blur_kernel' restricts some pointer parameters but not all"
    ]


@pytest.mark.gpu
@pytest.mark.parametrize("case", CASES)
def test_golden_cases_print_what_gcc_prints(case: str, tmp_path) -> None:
    source = GOLDEN / "readonly_cache" / f"{case}.c"
    cu = tmp_path / f"{case}.cu"
    cu.write_text(applied(analysed(source), "offload", "readonly_cache").code)
    same_output_as_gcc(source, cu, tmp_path)


def test_check_skips_kernels_whose_pointers_are_used_whole() -> None:
    """A kernel that copies a pointer is not the rule's: the check must not fail on it."""
    program = analysed(GOLDEN / "readonly_cache" / "stencil.c")
    after = applied(program, "offload", "readonly_cache")
    extra = (
        "__global__ void other_kernel(int *count, long long n)\n"
        "{\n    int *first = count;\n    atomicAdd(first, (int)n);\n}\n"
    )
    launched = "int main(void)\n{\n    other_kernel<<<1, 1>>>(NULL, 0);"
    code = after.code.replace("int main(void)\n{", extra + "\n" + launched, 1)
    assert code.count("other_kernel") == 2
    before = applied(program, "offload")
    assert READONLY.check(before, Variant(code), Context(program)) == []


def test_a_write_to_a_field_of_an_element_is_a_write(program_of) -> None:
    program = program_of(
        "#include <stdio.h>\n"
        "typedef struct { float x, v; } Body;\n"
        "void drift(Body *b, const float *push, int n)\n"
        "{ for (int i = 0; i < n; i++) b[i].x += b[i].v + push[i]; }\n"
        "int main(void) { static Body b[4096]; static float push[4096];\n"
        '  drift(b, push, 4096); printf("%f\\n", b[5].x); return 0; }\n'
    )
    variant = applied(program, "offload", "readonly_cache")
    assert "(Body *__restrict__ b, const float *__restrict__ push," in variant.code
    assert variant.steps[-1].detail == "drift_kernel: 2 pointers restricted, read-only: push"
