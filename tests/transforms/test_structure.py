from __future__ import annotations

import pytest

from cudaify.core import Variant
from cudaify.transforms import get
from cudaify.transforms.base import Context
from cudaify.transforms.structure import MAX_GROWTH, SIZE_SLACK, structural_problems

SOURCE = """\
#include <stdio.h>

static float twice(float v)
{
    return 2.0f * v;
}

void scale(int n, float a, const float *x, float *y)
{
    for (int i = 0; i < n; i++)
        y[i] = a * twice(x[i]);
}

int main(void)
{
    float x[64], y[64];
    for (int i = 0; i < 64; i++)
        x[i] = i;
    scale(64, 0.5f, x, y);
    printf("%f\\n", y[63]);
    return 0;
}
"""


@pytest.fixture
def program(program_of):
    return program_of(SOURCE)


def kinds(problems) -> list[str]:
    return [problem.kind for problem in problems]


def test_the_input_itself_is_structurally_sound(program) -> None:
    assert structural_problems(program, program.source) == []


def test_the_offload_rule_output_passes_with_its_method_check(program) -> None:
    offload = get("offload")
    variant = offload.apply_rule(Variant(program.source), Context(program)).variant
    assert variant is not None
    assert structural_problems(program, variant.code, offload) == []


def test_a_syntax_error_is_reported_with_its_line(program) -> None:
    broken = program.source.replace("return 2.0f * v;", "return 2.0f * ;")
    problems = structural_problems(program, broken)
    assert kinds(problems) == ["parse"]
    assert problems[0].line == 5


def test_a_missing_token_is_reported(program) -> None:
    broken = program.source.replace("x[i] = i;", "x[i] = i")
    problems = structural_problems(program, broken)
    assert "parse" in kinds(problems)
    assert any(problem.line in (18, 19) for problem in problems)


def test_a_missing_main_is_reported(program) -> None:
    without_main = program.source[: program.source.index("int main")]
    problems = structural_problems(program, without_main)
    assert kinds(problems) == ["signature"]
    assert "'main'" in problems[0].message


def test_a_dropped_function_is_reported(program) -> None:
    start = program.source.index("static float twice")
    end = program.source.index("void scale")
    dropped = program.source[:start] + "static float twice(float v);\n\n" + program.source[end:]
    problems = structural_problems(program, dropped)
    assert kinds(problems) == ["signature"]
    assert "'twice'" in problems[0].message and "line 3" in problems[0].message


def test_a_changed_signature_is_reported(program) -> None:
    changed = program.source.replace("void scale(int n, float a,", "void scale(int n, double a,")
    problems = structural_problems(program, changed)
    assert kinds(problems) == ["signature"]
    assert "float" in problems[0].message and "double" in problems[0].message


def test_qualifiers_names_and_array_spelling_do_not_change_a_signature(program) -> None:
    respelled = program.source.replace(
        "void scale(int n, float a, const float *x, float *y)",
        "__host__ void scale(const int count, float a, const float x[], float *__restrict__ out)",
    )
    assert structural_problems(program, respelled) == []


def test_an_added_system_call_is_reported(program) -> None:
    added = program.source.replace("return 0;\n}", 'system("rm -rf /tmp/x");\n    return 0;\n}')
    problems = structural_problems(program, added)
    assert kinds(problems) == ["dangerous-call"]
    assert "'system'" in problems[0].message
    assert problems[0].line == 21


def test_a_dangerous_name_hidden_in_a_macro_is_reported(program) -> None:
    added = "#define CLEAN(p) unlink(p)\n" + program.source
    problems = structural_problems(program, added)
    assert kinds(problems) == ["dangerous-call"]
    assert "'unlink'" in problems[0].message


def test_a_dangerous_call_the_input_makes_is_allowed(program_of) -> None:
    source = SOURCE.replace("return 0;\n}", 'remove("out.txt");\n    return 0;\n}')
    program = program_of(source)
    again = source.replace(
        "scale(64, 0.5f, x, y);", 'remove("out.txt");\n    scale(64, 0.5f, x, y);'
    )
    assert structural_problems(program, again) == []


def test_cuda_runtime_calls_and_intrinsics_are_allowed(program) -> None:
    extra = program.source.replace(
        "return 0;\n}",
        "cudaDeviceSynchronize();\n    float r = __fsqrt_rn(4.0f) + sqrtf(2.0f);\n"
        "    (void)r;\n    return 0;\n}",
    )
    assert structural_problems(program, extra) == []


def test_an_oversized_candidate_is_reported_without_parsing_it(program) -> None:
    limit = MAX_GROWTH * len(program.source.encode()) + SIZE_SLACK
    padded = program.source + "//" + "x" * limit + "\n"
    problems = structural_problems(program, padded)
    assert kinds(problems) == ["size"]
    assert str(limit) in problems[0].message


def test_the_offload_check_wants_a_kernel_and_a_launch(program) -> None:
    problems = structural_problems(program, program.source, get("offload"))
    assert kinds(problems) == ["offload"]
    assert problems[0].message == "the answer changes nothing but comments and layout"


CXX_SOURCE = """\
#include <cstdio>

struct Counter {
    int total = 0;
    void add(int v) { total += v; }
    void add(double v) { total += (int)v; }
};

int main()
{
    Counter c;
    c.add(2);
    c.add(3.5);
    std::printf("%d\\n", c.total);
    return 0;
}
"""


def test_class_members_and_overloads_are_checked(program_of) -> None:
    program = program_of(CXX_SOURCE, name="input.cpp")
    assert structural_problems(program, program.source) == []
    one_overload_gone = program.source.replace("    void add(double v) { total += (int)v; }\n", "")
    problems = structural_problems(program, one_overload_gone)
    assert kinds(problems) == ["signature"]
    assert "'add'" in problems[0].message and "double" in problems[0].message
