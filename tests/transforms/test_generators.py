"""`offload` of a loop that carries a linear congruential generator's state (pattern
"generator"): each iteration starts from the state before the loop jumped ahead by its
iteration number times its steps, and the host leaves the state where the loop would.
The jump the kernel and the host call is checked here against stepping, on the CPU."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from transforms_support import GOLDEN, analysed

from cudaify.core import Variant, toolchain
from cudaify.transforms import get
from cudaify.transforms.base import Context

GOLDEN_CU = GOLDEN / "offload" / "lcg_fill.cu"


def jump_functions(code: str) -> dict[str, str]:
    """Each generated jump function of `code` by name, as C (the CUDA qualifiers dropped)."""
    found = re.findall(
        r"__host__ __device__ static inline unsigned int (\w+_jump_\w+)\(.*?\n}\n", code, re.S
    )
    texts = {}
    for name in found:
        start = code.index(f"__host__ __device__ static inline unsigned int {name}(")
        end = code.index("\n}\n", start) + 3
        texts[name] = code[start:end].replace("__host__ __device__ ", "")
    return texts


def test_each_loop_gets_its_jump_and_the_host_leaves_the_state_where_the_loop_would() -> None:
    code = GOLDEN_CU.read_text()
    assert sorted(jump_functions(code)) == ["fill_kernel_2_jump_state", "fill_kernel_jump_state"]
    # iteration t of the first loop (two draws each) starts 2 t steps on, of the second 1 t
    assert "state = fill_kernel_jump_state(state_start, (unsigned long long)t_i * 2ull);" in code
    assert "state = fill_kernel_2_jump_state(state_start, (unsigned long long)t_j * 1ull);" in code
    # the launches take the state as the loop finds it, and the host moves it past the loop
    launch = code.index("fill_kernel<<<")
    assert "(d_x, trips_i, state);" in code[launch : launch + 80]
    after = code.index("state = fill_kernel_jump_state(state, (unsigned long long)trips_i * 2ull);")
    second = code.index("fill_kernel_2<<<")
    assert launch < after < second  # the second loop starts where the first left the state


@pytest.mark.skipif(toolchain.find_tool("gcc") is None, reason="gcc is not installed")
def test_a_jump_of_k_steps_is_k_steps(tmp_path: Path) -> None:
    """The generated function against the generator itself, k = 0 .. 300 and far ones (a
    carry through every bit of k), from several states."""
    (name, text), *_ = sorted(jump_functions(GOLDEN_CU.read_text()).items())
    harness = tmp_path / "jump.c"
    harness.write_text(
        text
        + f"""
#include <stdio.h>
static unsigned int step(unsigned int x) {{ return x * 1664525u + 1013904223u; }}
int main(void) {{
    unsigned int seeds[3] = {{0u, 17u, 4000000000u}};
    unsigned long long far[3] = {{1000003ull, 65536ull, 4294967295ull}};
    for (int s = 0; s < 3; s++) {{
        unsigned int x = seeds[s];
        for (unsigned long long k = 0; k <= 300; k++) {{
            if ({name}(seeds[s], k) != x) {{ printf("k=%llu\\n", k); return 1; }}
            x = step(x);
        }}
        for (int f = 0; f < 3; f++) {{
            unsigned int y = seeds[s];
            for (unsigned long long k = 0; k < far[f]; k++) y = step(y);
            if ({name}(seeds[s], far[f]) != y) {{ printf("far %llu\\n", far[f]); return 1; }}
        }}
    }}
    puts("same");
    return 0;
}}
"""
    )
    binary = tmp_path / "jump"
    subprocess.run([toolchain.find_tool("gcc"), "-O2", str(harness), "-o", str(binary)], check=True)
    done = subprocess.run([str(binary)], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (0, "same\n")


XORSHIFT = """
static unsigned int next_state(unsigned int *s) {
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

void noise(unsigned int *out, int n, unsigned int seed) {
    unsigned int s = seed;
    for (int i = 0; i < n; i++)
        out[i] = next_state(&s);
}
"""


def test_a_loop_whose_generator_is_not_affine_is_not_offloaded(tmp_path: Path) -> None:
    """xorshift's state is not advanced by x * a + c: the loop that carries it stays on
    the host, and the refusal names the state."""
    source = tmp_path / "noise.c"
    source.write_text(XORSHIFT)
    program = analysed(source)
    outcome = get("offload").apply_rule(Variant(program.source), Context(program))
    assert outcome.variant is None
    assert "scalar s is written in one iteration of i" in outcome.reason


NESTED_CU = GOLDEN / "offload" / "lcg_nested.cu"


def launch_steps(code: str, kernel: str) -> str:
    """The host expression `kernel`'s launch passes as its first level's steps (the last
    argument)."""
    call = re.search(rf"{kernel}<<<[^;]*>>>\((.*)\);\n", code)
    assert call is not None, kernel
    arguments = call.group(1)
    start = arguments.index(", (unsigned long long)(") + 2
    return arguments[start:]


def test_a_nest_draws_rows_and_columns_from_their_own_jumps() -> None:
    """The row loop's steps are its inner loop's trips; both levels are on the grid, each
    iteration jumping t_i rows and t_j draws. A particle (a draw, then three) is a thread
    that runs its short inner loop as written, jumping t_p particles; a channel's samples,
    many, are a launch each, the host moving the state past each."""
    code = NESTED_CU.read_text()
    assert (
        "fill_matrix_kernel_jump_state(state_start, (unsigned long long)t_i * state_steps_i + "
        "(unsigned long long)t_j * 1ull);" in code
    )
    particle = (
        "fill_particles_kernel_jump_state(state_start, (unsigned long long)t_p * state_steps_p);"
    )
    assert particle in code
    kernel = code.index("__global__ void fill_particles_kernel(")
    assert kernel < code.index("for (int d = 2; d >= 0; d--)", kernel) < code.index("\n}\n", kernel)
    host = code.index("    for (int c = 0; c < channels; c++) {")
    launch = code.index("fill_channels_kernel<<<", host)
    assert (
        host
        < launch
        < code.index(
            "state = fill_channels_kernel_jump_state(state, (unsigned long long)trips_k * 1ull);",
            launch,
        )
    )


@pytest.mark.skipif(toolchain.find_tool("gcc") is None, reason="gcc is not installed")
def test_a_nest_s_steps_are_what_its_iterations_draw(tmp_path: Path) -> None:
    """The host's steps for the row loop (an inclusive inner loop by 2) and the particle
    loop (one draw, then a countdown) against the loops themselves, drawn one by one, for
    widths that leave the inner loop empty, odd and even: every outer iteration starts where
    the jump of t times the steps lands."""
    code = NESTED_CU.read_text()
    jumps = jump_functions(code)
    matrix = launch_steps(code, "fill_matrix_kernel")
    particles = launch_steps(code, "fill_particles_kernel")
    harness = tmp_path / "steps.c"
    harness.write_text(
        "\n".join(jumps.values())
        + f"""
#include <stdio.h>
static unsigned int lcg_next(unsigned int *state) {{
    *state = *state * 1664525u + 1013904223u;
    return *state;
}}
int main(void) {{
    for (int cols = 0; cols < 9; cols++) {{
        unsigned long long matrix_steps = {matrix};
        unsigned long long particle_steps = {particles};
        unsigned int state = 99u;
        for (int i = 0; i < 5; i++) {{
            if (fill_matrix_kernel_jump_state(99u, (unsigned long long)i * matrix_steps) != state)
                {{ printf("row %d cols %d\\n", i, cols); return 1; }}
            for (int j = 1; j <= cols; j += 2)
                lcg_next(&state);
        }}
        unsigned int start = state;
        for (int p = 0; p < 5; p++) {{
            unsigned long long k = (unsigned long long)p * particle_steps;
            if (fill_particles_kernel_jump_state(start, k) != state)
                {{ printf("particle %d\\n", p); return 1; }}
            lcg_next(&state);
            for (int d = 2; d >= 0; d--)
                lcg_next(&state);
        }}
    }}
    puts("same");
    return 0;
}}
"""
    )
    binary = tmp_path / "steps"
    subprocess.run([toolchain.find_tool("gcc"), "-O2", str(harness), "-o", str(binary)], check=True)
    done = subprocess.run([str(binary)], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (0, "same\n"), done.stdout
