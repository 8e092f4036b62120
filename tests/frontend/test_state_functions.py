"""Functions that keep a caller's scalar through a pointer (a random generator's state,
`*s = *s * a + c`): a call given `&x` reads and writes x and nothing else, so a loop
whose x is declared in its body stays parallel, and one that carries x from iteration to
iteration is sequential for that reason, not for an unknown write. Each decoy reaches
other memory and keeps the call impure."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import pytest
from analysed_code import analysed

from cudaify.core import toolchain
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


def run_c(code: str) -> str:
    """What C program `code` prints, built with gcc."""
    gcc = toolchain.find_tool("gcc")
    if gcc is None:
        pytest.skip("gcc is not installed")
    with tempfile.TemporaryDirectory() as directory:
        binary = Path(directory) / "harness"
        built = subprocess.run(
            [gcc, "-x", "c", "-", "-o", str(binary)], input=code, capture_output=True, text=True
        )
        assert built.returncode == 0, built.stderr
        ran = subprocess.run([str(binary)], capture_output=True, text=True, timeout=60)
    return ran.stdout.strip()


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
    """xorshift: not an affine step (see the generator tests below), so a dependence."""
    program = analysed(
        """
static unsigned int next(unsigned int *s) {
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

static float uniform(unsigned int *s) {
    return (float)(next(s) >> 8) * (1.0f / 16777216.0f);
}
"""
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


LCG = """
static unsigned int lcg_next(unsigned int *state) {
    *state = *state * 1664525u + 1013904223u;
    return *state;
}

static float lcg_float(unsigned int *state) {
    return (float)(lcg_next(state) >> 8) * (1.0f / 16777216.0f);
}

int limit = 5;
int other(void);
void bump(int *p);

static unsigned int other_next(unsigned int *state) {
    *state = 69069u * *state + 1u;
    return *state;
}

static int signed_next(int *state) {
    *state = *state * 5 + 1;
    return *state;
}
"""


def fill_loop(body: str, declarations: str = "unsigned int state = seed;"):
    program = analysed(
        LCG
        + f"""
void fill(float *x, unsigned int *y, int n, unsigned int seed) {{
    {declarations}
    for (int i = 0; i < n; i++) {{
        {body}
    }}
}}
"""
    )
    return loop(program, "fill")


def test_a_linear_congruential_state_is_a_generator_with_its_steps_an_iteration() -> None:
    """Two draws an iteration, one through a function that calls the other: the loop is
    independent once each iteration's state is known (pattern "generator")."""
    found = fill_loop("x[i] = lcg_float(&state);\n        y[i] = lcg_next(&state) >> 4;")
    assert found.pattern == "generator" and not found.parallel
    (generator,) = found.generators
    assert (generator.var, generator.type, generator.steps) == ("state", "unsigned int", "2")
    assert generator.constant == 2
    assert (generator.multiplier, generator.increment) == (1664525, 1013904223)
    assert "linear congruential generator: state (2 step(s) an iteration)" in found.reason


GENERATOR_DECOYS = {
    # how many steps an iteration takes depends on the iteration
    "under a branch": "if (i % 2) x[i] = lcg_float(&state);",
    "under ?:": "x[i] = i % 2 ? lcg_float(&state) : 0.0f;",
    "under &&": "x[i] = (i > 3 && lcg_next(&state) > 5u) ? 1.0f : 0.0f;",
    "in an inner loop": "for (int k = 0; k < i; k++) x[i] += lcg_float(&state);",
    "after a continue": "if (i == 3) continue;\n        x[i] = lcg_float(&state);",
    # the state itself is read, not only advanced
    "read directly": "x[i] = lcg_float(&state) + (float)state;",
    # two generators' steps on one state
    "two steps": "y[i] = lcg_next(&state) + other_next(&state);",
}


DRAW = "x[i] += lcg_float(&state);"
NESTED_DECOYS = {
    # the inner loop's trips change from iteration to iteration
    "bound on the outer variable": "for (int k = 0; k < i; k++) DRAW",
    "bound written in the body": "m += 1;\n        for (int k = 0; k < m; k++) DRAW",
    "bound read from memory": "for (int k = 0; k < (int)y[i]; k++) DRAW",
    "bound from a global": "for (int k = 0; k < limit; k++) DRAW",
    "bound from a call": "for (int k = 0; k < n % other(); k++) DRAW",
    "bound declared in the body": "int q = n;\n        for (int k = 0; k < q; k++) DRAW",
    "bound's address taken": "bump(&m);\n        for (int k = 0; k < m; k++) DRAW",
    # the inner loop runs conditionally, or leaves early
    "inner loop under a branch": "if (i % 2)\n            for (int k = 0; k < n; k++) DRAW",
    "draw under a branch in the inner loop": "for (int k = 0; k < n; k++) if (k % 2) DRAW",
    "inner loop with a break": "for (int k = 0; k < n; k++) { if (x[k] > 1.0f) break; DRAW }",
    "inner while loop": "int k = 0;\n        while (k++ < n) DRAW",
}


@pytest.mark.parametrize("decoy", sorted(GENERATOR_DECOYS) + sorted(NESTED_DECOYS))
def test_a_state_not_advanced_the_same_each_iteration_is_no_generator(decoy: str) -> None:
    body = GENERATOR_DECOYS.get(decoy) or NESTED_DECOYS[decoy].replace("DRAW", DRAW)
    found = fill_loop(body, "unsigned int state = seed;\n    int m = n;")
    assert found.pattern != "generator" and not found.generators, decoy
    assert not found.parallel


def test_draws_in_inner_loops_of_shared_trip_counts_are_counted_by_them() -> None:
    """One draw in the body, one per iteration of an inner loop whose bounds every
    iteration shares (a parameter, a local set before the loop): the steps an iteration are
    1 + the inner loops' trip counts, as C the host can evaluate before the loop."""
    found = fill_loop(
        "y[i] = lcg_next(&state);\n"
        "        for (int k = m - 1; k >= 0; k -= 3)\n"
        "            for (int j = 0; j <= n; j++)\n"
        "                x[i] += lcg_float(&state);",
        "unsigned int state = seed;\n    int m = n / 2 + 1;",
    )
    assert found.pattern == "generator" and not found.parallel
    (generator,) = found.generators
    assert generator.constant is None
    assert generator.label == (
        "1 step(s) an iteration + 1 step(s) in each iteration of the inner loop(s) on "
        "k (line 30), j (line 31)"
    )
    harness = f"""
#include <stdio.h>
int main(void) {{
    for (int n = 0; n < 40; n++) {{
        int m = n / 2 + 1;
        unsigned long long counted = 0;
        counted += 1;
        for (int k = m - 1; k >= 0; k -= 3)
            for (int j = 0; j <= n; j++)
                counted += 1;
        if (counted != ({generator.steps})) {{ printf("n=%d %llu\\n", n, counted); return 1; }}
    }}
    puts("same");
    return 0;
}}
"""
    assert run_c(harness) == "same"


def test_a_draw_under_a_branch_that_is_the_whole_body_is_no_generator() -> None:
    """No braces: the loop's body is the `if` itself, and it branches too."""
    program = analysed(
        LCG
        + """
void fill(float *x, int n, unsigned int seed) {
    unsigned int state = seed;
    for (int i = 0; i < n; i++)
        if (i % 3)
            x[i] = lcg_float(&state);
}
"""
    )
    found = loop(program, "fill")
    assert found.pattern != "generator" and not found.generators and not found.parallel


def test_a_signed_state_is_no_generator() -> None:
    """A signed state's overflow is undefined: nothing to jump by."""
    found = fill_loop("y[i] = (unsigned int)signed_next(&state);", "int state = (int)seed;")
    assert found.pattern != "generator" and not found.parallel


def test_a_generator_beside_a_reduction_keeps_the_loop_sequential() -> None:
    """No mapping handles both: not a reduction loop that would drop the state's steps."""
    program = analysed(
        LCG
        + """
float total(int n, unsigned int seed) {
    unsigned int state = seed;
    float sum = 0.0f;
    for (int i = 0; i < n; i++)
        sum += lcg_float(&state);
    return sum;
}
"""
    )
    found = loop(program, "total")
    assert found.pattern == "sequential" and not found.parallel and not found.generators
    assert found.reason.endswith("state (1 step(s) an iteration), and a reduction")
