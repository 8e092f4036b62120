from __future__ import annotations

import re

import pytest
from pattern_golden import applied, nvcc_errors, same_output_as_gcc
from transforms_support import GOLDEN, analysed

from cudaify.backend.cost import kernel_work, predict
from cudaify.core import Variant, toolchain
from cudaify.transforms import get
from cudaify.transforms.base import Context
from cudaify.transforms.narrow_counters import NOTHING, widened
from cudaify.transforms.structure import structural_problems

NARROW = get("narrow_counters")
# case -> the mapping it follows: offload's 1-D levels (one with a step of 2 from -n, whose
# counter's use must stay 64-bit), schedule's 3-D launch with its shapes written inline
CASES = {"rod": "offload", "evens": "offload", "box3d": "schedule"}


def test_every_golden_input_has_a_case() -> None:
    assert sorted(p.stem for p in (GOLDEN / "narrow_counters").glob("*.c")) == sorted(CASES)


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden_output_is_stable_and_compiles(case: str, update_golden: bool, tmp_path) -> None:
    program = analysed(GOLDEN / "narrow_counters" / f"{case}.c")
    before = applied(program, CASES[case])
    variant = applied(program, CASES[case], "narrow_counters")
    expected = GOLDEN / "narrow_counters" / f"{case}.cu"
    if update_golden:
        expected.write_text(variant.code)
    assert expected.exists(), f"{expected.name} is missing: rerun with --update-golden to write it"
    assert variant.code == expected.read_text(), f"rerun with --update-golden to accept {case}.cu"
    assert structural_problems(program, variant.code, NARROW, before) == []
    assert nvcc_errors(variant.code, tmp_path) == ""


# the methods that may follow it in the graph (data_residency, launch_tuning) keep it working
@pytest.mark.parametrize(
    "case, after",
    [(case, ()) for case in sorted(CASES)]
    + [("rod", ("data_residency",)), ("box3d", ("launch_tuning",))],
)
def test_the_emulated_program_prints_what_gcc_prints(
    case: str, after: tuple[str, ...], tmp_path
) -> None:
    from emulation import SERIAL_HEADER, gcc_output, run_emulated

    from cudaify.backend.compare import compare

    source = GOLDEN / "narrow_counters" / f"{case}.c"
    program = analysed(source)
    variant = applied(program, CASES[case], "narrow_counters", *after)
    assert [step.method for step in variant.steps][-1 - len(after)] == "narrow_counters"
    for method in after:
        assert variant.steps[-1].method == after[-1], f"{method} did not apply"
    actual = run_emulated(variant.code, tmp_path, header=SERIAL_HEADER)
    assert actual.ok, actual.errors()
    assert compare(gcc_output(source, tmp_path), actual.text()) is None


def test_the_kernel_chooses_the_counter_and_the_body_reads_it_widened() -> None:
    program = analysed(GOLDEN / "narrow_counters" / "evens.c")
    variant = applied(program, "offload", "narrow_counters")
    code = variant.code
    assert (
        "for (cudaify_counter_t t_i = blockIdx.x * (cudaify_counter_t)blockDim.x + threadIdx.x; "
        "t_i < (cudaify_counter_t)trips_i; t_i += (cudaify_counter_t)blockDim.x * gridDim.x)"
    ) in code
    # i = -n + 2 t: the product stays 64-bit whatever the counter's type
    assert "int i = (int)((-n) + ((long long)t_i) * 2);" in code
    assert "decimate_kernel_counted<int>(" in code
    assert "decimate_kernel_counted<long long>(" in code
    # the launch is untouched: the kernel's name and arguments are the offload's
    launches = re.findall(r"decimate_kernel<<<[^;]*;", code)
    assert launches == re.findall(r"decimate_kernel<<<[^;]*;", applied(program, "offload").code)
    assert variant.steps[-1].detail == "decimate_kernel: i"


def _condition(code: str, kernel: str) -> str:
    match = re.search(rf"__global__ void {kernel}\([^)]*\)\s*\{{\s*if \((.*?)\)\n", code, re.S)
    assert match, f"{kernel} does not choose its counter"
    return match.group(1)


def test_int_is_chosen_only_while_no_counter_can_pass_int_max(tmp_path) -> None:
    """The kernel's own test, compiled on the host with a launch of 256 x 8192 threads on
    x: `int` up to a trip count of INT_MAX minus the grid's stride, `long long` past it
    (a counter would step over INT_MAX) and for a negative count."""
    program = analysed(GOLDEN / "narrow_counters" / "rod.c")
    code = applied(program, "offload", "narrow_counters").code
    condition = _condition(code, "step_kernel")
    stride = 256 * 8192
    trips = [0, 1, 2**31 - 1 - stride, 2**31 - stride, 2**31 - 1, 2**40, -1]
    harness = tmp_path / "condition.cpp"
    harness.write_text(
        "#include <cstdio>\n"
        "struct dims { unsigned x, y, z; };\n"
        "int main() {\n"
        "    dims blockDim = {256, 1, 1}, gridDim = {8192, 1, 1};\n"
        f"    long long counts[] = {{{', '.join(f'{t}LL' for t in trips)}}};\n"
        "    for (long long trips_i : counts)\n"
        f'        std::printf("%d\\n", ({condition}) ? 1 : 0);\n'
        "}\n"
    )
    binary = tmp_path / "condition"
    built = toolchain.run([toolchain.find_tool("g++"), str(harness), "-o", str(binary)])
    assert built.ok, built.errors()
    ran = toolchain.run([str(binary)])
    assert ran.text().split() == ["1", "1", "1", "0", "0", "0", "0"]


def test_the_cost_model_reads_the_narrowed_kernel_as_it_was() -> None:
    for case, mapping in CASES.items():
        program = analysed(GOLDEN / "narrow_counters" / f"{case}.c")
        before = applied(program, mapping)
        after = applied(program, mapping, "narrow_counters")
        assert kernel_work(after.code) == kernel_work(before.code) != {}
        assert predict(after) == predict(before)
        assert widened(before.code) == before.code


def test_refuses_host_code_and_its_own_output() -> None:
    program = analysed(GOLDEN / "narrow_counters" / "rod.c")
    assert NARROW.applies(Variant(program.source), Context(program)) == NOTHING
    narrowed = applied(program, "offload", "narrow_counters")
    assert NARROW.applies(narrowed, Context(program)) == NOTHING


def test_a_counter_the_body_writes_keeps_its_width() -> None:
    program = analysed(GOLDEN / "narrow_counters" / "rod.c")
    code = applied(program, "offload").code
    written = code.replace(
        "next[i] = u[i]", "if (alpha < 0.0f) t_i += 1;\n        next[i] = u[i]", 1
    )
    assert written != code
    assert NARROW.applies(Variant(written), Context(program)) == NOTHING


def test_a_trip_count_that_is_not_a_parameter_keeps_its_width() -> None:
    program = analysed(GOLDEN / "narrow_counters" / "rod.c")
    code = applied(program, "offload").code
    local = code.replace("t_i < trips_i;", "t_i < trips_i + 0 * alpha;", 1)
    assert local != code
    assert NARROW.applies(Variant(local), Context(program)) == NOTHING


def test_the_tuned_launch_keeps_its_bounds_and_the_rule_applies_after_it() -> None:
    program = analysed(GOLDEN / "narrow_counters" / "rod.c")
    variant = applied(program, "offload", "launch_tuning", "narrow_counters")
    assert variant.steps[-1].method == "narrow_counters"
    assert re.search(r"__global__ void __launch_bounds__\(\d+\) step_kernel\(", variant.code)
    assert structural_problems(program, variant.code, NARROW, variant) != []  # same code
    tuned = applied(program, "offload", "launch_tuning")
    assert structural_problems(program, variant.code, NARROW, tuned) == []


def test_check_refuses_a_dispatch_to_the_wide_instance_only() -> None:
    program = analysed(GOLDEN / "narrow_counters" / "rod.c")
    before = applied(program, "offload")
    after = applied(program, "offload", "narrow_counters")
    both_wide = after.code.replace("step_kernel_counted<int>(", "step_kernel_counted<long long>(")
    assert both_wide != after.code
    problems = NARROW.check(before, Variant(both_wide), Context(program))
    assert [p.message for p in problems] == [
        "no launched kernel chooses between int and long long instances of a device "
        "function that counts its grid-stride loop in its type parameter"
    ]


@pytest.mark.gpu
@pytest.mark.parametrize("case", sorted(CASES))
def test_the_narrowed_program_prints_what_gcc_prints_on_the_gpu(case: str, tmp_path) -> None:
    source = GOLDEN / "narrow_counters" / f"{case}.c"
    cu = tmp_path / f"{case}.cu"
    cu.write_text(applied(analysed(source), CASES[case], "narrow_counters").code)
    same_output_as_gcc(source, cu, tmp_path)


@pytest.mark.gpu
def test_a_loop_past_int_max_runs_the_long_long_instance(tmp_path) -> None:
    """2^31 + 4096 iterations (2 GiB of bytes): an `int` counter would wrap; the kernel's
    test takes the `long long` instance and the output is gcc's."""
    source = GOLDEN / "narrow_counters" / "gpu" / "past_int_max.c"
    variant = applied(analysed(source), "offload", "narrow_counters")
    assert variant.steps[-1].method == "narrow_counters"
    cu = tmp_path / "past_int_max.cu"
    cu.write_text(variant.code)
    same_output_as_gcc(source, cu, tmp_path)


def test_a_kernel_whose_threads_combine_values_keeps_its_width() -> None:
    """schedule's sum: a grid-stride loop of the mapping's shape, then a warp-shuffle and
    atomicAdd epilogue. Two such kernels ran slower narrowed on an H100: left alone."""
    from cudaify.transforms import kernel_text as kt

    program = analysed(GOLDEN / "reduction" / "sums.c")
    scheduled = applied(program, "schedule")
    kernels = kt.kernels(kt.encode(scheduled.code))
    assert kernels and all(kernel.levels for kernel in kernels)
    assert "atomicAdd(" in scheduled.code
    assert NARROW.applies(scheduled, Context(program)) == NOTHING
