"""Functions that keep a caller's scalar through a pointer (a random generator's state,
`*s = *s * a + c`): a call given `&x` reads and writes x and nothing else, so a loop
whose x is declared in its body stays parallel, and one that carries x from iteration to
iteration is sequential for that reason, not for an unknown write. Each decoy reaches
other memory and keeps the call impure."""

from __future__ import annotations

import pytest
from analysed_code import analysed

from cudaify.frontend.facts import Program

GENERATOR = """
static unsigned int next(unsigned int *state) {
    *state = *state * 1664525u + 1013904223u;
    return *state;
}

static float uniform(unsigned int *state) {
    return (float)(next(state) >> 8) * (1.0f / 16777216.0f);
}
"""


def loop(program: Program, function: str):
    fn = program.function(function)
    assert fn is not None and fn.loops, function
    return fn.loops[0]


def test_a_state_kept_in_the_iteration_leaves_the_loop_parallel() -> None:
    program = analysed(
        GENERATOR
        + """
void fill(float *x, int n, unsigned int seed) {
    for (int i = 0; i < n; i++) {
        unsigned int state = seed ^ (unsigned int)i;
        x[i] = uniform(&state) + uniform(&state);
    }
}
"""
    )
    found = loop(program, "fill")
    assert found.parallel, found.reason


def test_a_state_carried_across_iterations_is_named_as_the_dependence() -> None:
    program = analysed(
        GENERATOR
        + """
void fill(float *x, int n, unsigned int seed) {
    unsigned int state = seed;
    for (int i = 0; i < n; i++)
        x[i] = uniform(&state);
}
"""
    )
    found = loop(program, "fill")
    assert not found.parallel
    assert "scalar state is written in one iteration of i" in found.reason


DECOYS = {
    # the generator also counts its calls in a global
    "a global written": """
static int calls;
static unsigned int next(unsigned int *s) { calls++; *s = *s * 5u + 1u; return *s; }
""",
    # more than the one scalar: the element after it
    "a second element": """
static unsigned int next(unsigned int *s) { s[1] = *s; *s = *s * 5u + 1u; return *s; }
""",
    # the pointer kept in a local and written through it
    "an alias": """
static unsigned int next(unsigned int *s) { unsigned int *t = s; *t = *t * 5u + 1u; return *t; }
""",
    # the pointer handed to a function that may do anything with it
    "passed on": """
void keep(unsigned int *p);
static unsigned int next(unsigned int *s) { keep(s); return *s; }
""",
    # the pointer moved before it is written
    "moved": """
static unsigned int next(unsigned int *s) { s++; *s = 1u; return *s; }
""",
}


@pytest.mark.parametrize("decoy", sorted(DECOYS))
def test_a_function_that_reaches_other_memory_is_an_unknown_write(decoy: str) -> None:
    program = analysed(
        DECOYS[decoy]
        + """
void fill(unsigned int *x, int n, unsigned int seed) {
    for (int i = 0; i < n; i++) {
        unsigned int state = seed + (unsigned int)i;
        x[i] = next(&state);
    }
}
"""
    )
    found = loop(program, "fill")
    assert not found.parallel, decoy
    assert "next" in found.reason and "may write memory" in found.reason


@pytest.mark.parametrize(
    "argument, declaration",
    [
        ("&shared", "static unsigned int shared;"),  # a global: every iteration's
        ("&pair[0]", ""),  # an element, not a variable
        ("(unsigned int *)&wide", ""),  # a cast: the callee writes past the variable
    ],
)
def test_a_call_not_given_a_scalar_variable_of_its_own_type_is_not_a_kept_state(
    argument: str, declaration: str
) -> None:
    program = analysed(
        GENERATOR
        + declaration
        + f"""
void fill(float *x, int n) {{
    for (int i = 0; i < n; i++) {{
        unsigned int pair[2] = {{1u, 2u}};
        unsigned long long wide = 7u;
        x[i] = uniform({argument}) + (float)(pair[1] + wide);
    }}
}}
"""
    )
    found = loop(program, "fill")
    assert not found.parallel, argument
