from __future__ import annotations

from pathlib import Path

import pytest
from pattern_golden import applied, nvcc_errors, same_output_as_gcc
from transforms_support import GOLDEN, analysed

from cudaify.core import Variant
from cudaify.transforms import get
from cudaify.transforms.base import Context
from cudaify.transforms.structure import structural_problems

CASES = {
    "sums": ("reduction",),
    "fields": ("reduction",),
    "after_offload": ("offload", "reduction"),
    "argmin": ("reduction",),
    "find_first": ("reduction",),
    # each sample's generator state is its own: the calls that advance it are no unknown write
    "monte_carlo": ("reduction",),
}
REDUCTION = get("reduction")


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden_output_is_stable_and_compiles(case: str, update_golden: bool, tmp_path) -> None:
    program = analysed(GOLDEN / "reduction" / f"{case}.c")
    variant = applied(program, *CASES[case])
    expected = GOLDEN / "reduction" / f"{case}.cu"
    if update_golden:
        expected.write_text(variant.code)
    assert expected.exists(), f"{expected.name} is missing: rerun with --update-golden to write it"
    assert variant.code == expected.read_text(), f"rerun with --update-golden to accept {case}.cu"
    assert structural_problems(program, variant.code, REDUCTION) == []
    assert nvcc_errors(variant.code, tmp_path) == ""


def test_every_reduction_variable_gets_an_identity_and_a_host_combination() -> None:
    program = analysed(GOLDEN / "reduction" / "sums.c")
    code = applied(program, "reduction").code
    assert "double s = cudaify_plus::identity<double>();" in code
    assert "float lo = cudaify_minimum::identity<float>();" in code
    assert "float hi = cudaify_maximum::identity<float>();" in code
    assert "double p = cudaify_times::identity<double>();" in code
    # the host folds the block partials into the value the variable had before the loop
    assert "s = cudaify_plus()(s, partial_s[b]);" in code
    assert "lo = cudaify_minimum()(lo, partial_lo[b_2]);" in code
    # the body runs unchanged on the thread's copy
    assert "q -= (double)x[i] * x[i];" in code
    # a loop variable declared outside the loop ends with the value the loop leaves
    assert "i = (long)(0 + trips_i" in code


def test_the_partials_buffer_is_allocated_once_for_every_call() -> None:
    code = applied(analysed(GOLDEN / "reduction" / "sums.c"), "reduction").code
    assert "static cudaify_value_t<decltype(s)> *d_partial_s = NULL;" in code
    allocate = "CUDAIFY_CHECK(cudaMalloc((void **)&d_partial_s, 1024 * sizeof(*d_partial_s)));"
    assert f"if (d_partial_s == NULL)\n                {allocate}" in code
    assert "cudaFree(d_partial_s)" not in code


def test_struct_fields_are_reduced_as_fields() -> None:
    program = analysed(GOLDEN / "reduction" / "fields.c")
    variant = applied(program, "reduction")
    code = variant.code
    assert "Tally t;" in code
    assert "t.mixed = cudaify_bit_xor::identity<decltype(t.mixed)>();" in code
    assert "t.any = cudaify_bit_or::identity<decltype(t.any)>();" in code
    assert "t.sum = cudaify_plus()(t.sum, partial_t_sum[b]);" in code
    assert variant.offloaded == ("tally",)
    assert variant.steps[-1].method == "reduction"
    assert "t.count (+)" in variant.steps[-1].detail


def test_after_offload_both_loops_run_on_the_gpu_with_one_helper_block() -> None:
    program = analysed(GOLDEN / "reduction" / "after_offload.c")
    variant = applied(program, "offload", "reduction")
    code = variant.code
    assert variant.methods == ("offload", "reduction")
    assert code.count("/* ---- cudaify runtime helpers ---- */") == 1
    assert code.count("/* ---- cudaify pattern helpers ---- */") == 1
    assert code.index("cudaify runtime helpers") < code.index(
        "__global__ void scale_and_sum_kernel"
    )
    assert "scale_and_sum_reduce<<<" in code and "scale_and_sum_kernel<<<" in code
    # applying it again finds nothing left to do
    again = REDUCTION.applies(variant, Context(program))
    assert again is not None and "already rewrote" in again


REFUSALS = {
    "break": (
        "double f(int n, const double *x)\n{\n    double s = 0.0;\n"
        "    for (int i = 0; i < n; i++) {\n        if (x[i] < 0) break;\n        s += x[i];\n"
        "    }\n    return s;\n}\n",
        "",
    ),
    "escaping_struct": (
        "typedef struct { double sum; double scale; } Acc;\n"
        "double f(int n, const double *x)\n{\n    Acc a = {0.0, 2.0};\n"
        "    for (int i = 0; i < n; i++)\n        a.sum += a.scale * x[i];\n    return a.sum;\n}\n",
        "",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_refusals_say_where_and_why(case: str, program_of) -> None:
    source, _ = REFUSALS[case]
    program = program_of(
        source + "int main(void) { double x[3] = {1, 2, 3}; return (int)f(3, x); }\n"
    )
    reason = REDUCTION.applies(Variant(program.source), Context(program))
    assert reason is not None
    assert REDUCTION.apply_rule(Variant(program.source), Context(program)).variant is None


def test_a_struct_used_beyond_its_reduced_fields_is_refused(program_of) -> None:
    program = program_of(
        "typedef struct { double sum; double scale; } Acc;\n"
        "double f(int n, const double *x, Acc a)\n{\n"
        "    for (int i = 0; i < n; i++)\n        a.sum += a.scale * x[i];\n    return a.sum;\n}\n"
        "int main(void) { double x[3] = {1, 2, 3}; Acc a = {0.0, 2.0}; return (int)f(3, x, a); }\n"
    )
    reason = REDUCTION.applies(Variant(program.source), Context(program))
    assert reason is not None
    assert reason.startswith(f"{program.path}:4:5: reduction: cannot rewrite loop 'i' in 'f'")
    assert reason.endswith("'a' is used in the loop other than through its reduced fields")


def test_a_function_template_is_refused_not_broken(program_of) -> None:
    """The kernel of a template's loop would need the template's parameters; the rule
    says so instead of emitting a kernel between `template <...>` and the function."""
    program = program_of(
        "#include <cstdio>\n#include <vector>\n"
        "template <typename T>\ndouble total(const std::vector<T> &v)\n{\n"
        "    double s = 0.0;\n"
        "    for (std::size_t i = 0; i < v.size(); i++)\n        s += static_cast<double>(v[i]);\n"
        "    return s;\n}\n"
        'int main() { std::vector<float> v(5000, 1.0f); std::printf("%f\\n", total(v)); }\n',
        "input.cpp",
    )
    outcome = REDUCTION.apply_rule(Variant(program.source), Context(program))
    assert outcome.variant is None
    assert outcome.reason.endswith(
        "'total' is a function template: its kernel would need its parameters"
    )


def test_check_wants_a_block_reduction_and_a_launch() -> None:
    program = analysed(GOLDEN / "reduction" / "sums.c")
    before = Variant(program.source)
    problems = REDUCTION.check(before, before, Context(program))
    assert [p.message for p in problems] == ["the answer changes nothing but comments and layout"]
    assert REDUCTION.check(before, applied(program, "reduction"), Context(program)) == []


@pytest.mark.gpu
@pytest.mark.parametrize("case", sorted(CASES))
def test_golden_output_prints_what_gcc_prints(case: str, tmp_path) -> None:
    same_output_as_gcc(
        GOLDEN / "reduction" / f"{case}.c", GOLDEN / "reduction" / f"{case}.cu", tmp_path
    )


def test_argmin_and_argmax_keep_their_payloads_with_the_chosen_iteration() -> None:
    program = analysed(GOLDEN / "reduction" / "argmin.c")
    nearest = next(f for f in program.functions if f.name == "nearest").loops[0]
    assert [r.label for r in nearest.reductions] == [
        "d0 (min)",
        "k (kept with d0: argmin/argmax)",
        "bx (kept with d0: argmin/argmax)",
    ]
    last_max = next(f for f in program.functions if f.name == "last_max").loops[0]
    assert [(r.var, r.op, r.key, r.strict) for r in last_max.reductions] == [
        ("m", "max", "", True),
        ("at", "payload", "m", False),  # >=: the last of equal values wins
    ]
    variant = applied(program, "reduction")
    code = variant.code
    # each payload's assignment records the iteration it was made in
    assert "k = i; cudaify_at_d0 = t_i;" in code
    # the first of equal keys for <, the last for >=
    assert "cudaify_at_d0_d0 == d0 && cudaify_at_d0_cudaify_at_d0 < cudaify_at_d0" in code
    assert "cudaify_at_m_m == m && cudaify_at_m_cudaify_at_m > cudaify_at_m" in code
    # the host keeps the values from before the loop unless the loop's own test changes them
    assert "if (partial_at_d0_at >= 0 && partial_d0[partial_at_d0_best] < d0) {" in code
    assert "if (partial_at_m_at >= 0 && partial_m[partial_at_m_best] >= m) {" in code
    assert "d0 (argmin of k, bx)" in variant.steps[-1].detail


@pytest.mark.parametrize("case", ["argmin", "find_first"])
def test_choices_emulated_on_the_cpu_print_what_gcc_prints(case: str, tmp_path) -> None:
    """Every thread of each block on a CPU thread, real warp shuffles. argmin: ties inside
    a warp, across warps and across blocks, a floor no value reaches; find-first: hits in
    the first block and a later one, no hit at all, the loop variable as the answer."""
    from emulation import gcc_output

    source = GOLDEN / "reduction" / f"{case}.c"
    emulated = _emulated(applied(analysed(source), "reduction").code, tmp_path)
    assert emulated.ok, emulated.errors()
    assert emulated.text() == gcc_output(source, tmp_path)


def _emulated(code: str, tmp_path: Path, *flags: str):  # type: ignore[no-untyped-def]
    """`code` run by the CPU emulator with real warp shuffles (warp_emulation.h)."""
    import re

    from emulation import run_emulated

    code = re.sub(r"#include <cuda/std/\w+>\n", "", code)
    header = Path(__file__).resolve().parent / "warp_emulation.h"
    return run_emulated(code, tmp_path, timeout=600, flags=("-include", str(header), *flags))


ARG_REFUSED = {
    # the payload reads the key before the key changes: it depends on the thread's history
    "payload_reads_the_key": "if (x[i] < m) { k = m; m = x[i]; }",
    # an array element is no payload: another iteration may write it
    "payload_is_an_element": "if (x[i] < m) { m = x[i]; y[0] = i; }",
    # the payload is also written outside the if
    "payload_written_outside": "if (x[i] < m) { m = x[i]; k = i; } k = k + 1;",
}


@pytest.mark.parametrize("case", sorted(ARG_REFUSED))
def test_what_is_no_argmin_is_refused(case: str, program_of) -> None:
    program = program_of(
        "double f(int n, const double *x, double *y)\n{\n"
        "    double m = 1e300;\n    double k = -1;\n"
        f"    for (int i = 0; i < n; i++) {{\n        {ARG_REFUSED[case]}\n    }}\n"
        "    return m + k;\n}\n"
        "int main(void) { double x[3] = {3, 1, 2}, y[1]; return (int)f(3, x, y); }\n"
    )
    (loop,) = next(f for f in program.functions if f.name == "f").loops
    assert "payload" not in {r.op for r in loop.reductions}
    assert REDUCTION.apply_rule(Variant(program.source), Context(program)).variant is None


def test_a_find_first_loop_stops_each_thread_at_its_first_hit() -> None:
    program = analysed(GOLDEN / "reduction" / "find_first.c")
    first_above = next(f for f in program.functions if f.name == "first_above").loops[0]
    assert first_above.pattern == "find_first" and first_above.early_exit
    assert [r.label for r in first_above.reductions] == ["idx (first)", "v (first)"]
    assert "finds the first i whose test holds (an early exit), keeping idx, v" in (
        first_above.reason
    )
    variant = applied(program, "reduction")
    code = variant.code
    # the break records the iteration and leaves the thread's own loop
    assert "{ cudaify_found = t_i; break; }" in code
    # the earliest hit wins; the values before the loop stay when nothing was found
    assert "if (partial_found_at >= 0) {\n" in code
    # a loop variable declared outside ends where the loop stopped
    assert "i = (long)(0 + (partial_found_2_at >= 0 ? partial_found_2_at : trips_i_2));" in code
    assert "the first 'i' whose test holds (keeping idx, v)" in variant.steps[-1].detail


FIRST_REFUSED = {
    # an else branch: more than a search
    "else_branch": "if (x[i] > t) { k = i; break; } else { k = -2; }",
    # a write before the break: the loop does more than stop
    "writes_an_array": "if (x[i] > t) { y[0] = i; break; }",
    # the kept value depends on another kept value
    "chained_payloads": "if (x[i] > t) { k = i; j = k + 1; break; }",
    # two ways out
    "two_breaks": "if (x[i] > t) { k = i; break; } if (x[i] < -t) break;",
    # a return after a write: the loop does more than stop
    "write_then_return": "if (x[i] > t) { y[0] = i; return i; }",
    # a return and a statement before the test: the host could not evaluate the answer alone
    "computed_before_return": "k = x[i] * 2; if (k > t) return k;",
    # a return in an else branch
    "return_in_else": "if (x[i] > t) k = i; else return j;",
}


@pytest.mark.parametrize("case", sorted(FIRST_REFUSED))
def test_what_is_no_find_first_stays_sequential(case: str, program_of) -> None:
    program = program_of(
        "double f(int n, const double *x, double *y, double t)\n{\n"
        "    double k = -1, j = 0;\n"
        f"    for (int i = 0; i < n; i++) {{\n        {FIRST_REFUSED[case]}\n    }}\n"
        "    return k + j;\n}\n"
        "int main(void) { double x[3] = {3, 1, 2}, y[1]; return (int)f(3, x, y, 1.5); }\n"
    )
    (loop,) = next(f for f in program.functions if f.name == "f").loops
    assert loop.pattern == "sequential" and loop.early_exit
    assert REDUCTION.apply_rule(Variant(program.source), Context(program)).variant is None


BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks" / "cpp"


@pytest.mark.parametrize(
    "name",
    ["nearest_argmin", "first_match", "min_max_pair", "count_if_lambda", "find_first_negative"],
)
def test_cpp_idioms_emulated_print_what_gpp_prints(name: str, tmp_path) -> None:
    """The C++ benchmarks of the idioms (a vector of structs, a lambda, one that captures
    the function's parameters, std::min and std::max on the device, a `return i` at the
    first hit and -1 after the loop), small."""
    from emulation import gcc_output

    source = BENCHMARKS / f"{name}.cpp"
    variant = applied(analysed(source), "reduction")
    assert variant.methods == ("reduction",)
    emulated = _emulated(variant.code, tmp_path, "-DBENCH_SMALL")
    assert emulated.ok, emulated.errors()
    assert emulated.text() == gcc_output(source, tmp_path, flags=("-DBENCH_SMALL",))


def test_a_search_that_returns_at_its_first_hit() -> None:
    """`if (C) return E;` is a find-first: each thread stops at its first hit, and the
    host runs the return at the earliest one, with the loop variable set there."""
    program = analysed(BENCHMARKS / "find_first_negative.cpp")
    (loop,) = next(f for f in program.functions if f.name == "first_negative").loops
    assert loop.pattern == "find_first" and loop.reductions == ()
    code = applied(program, "reduction").code
    assert "{ cudaify_found = t_i; break; }" in code
    assert (
        "if (partial_found_at >= 0) {\n"
        "            const int i = (int)(0 + partial_found_at);\n"
        "            return i;\n"
        "        }\n"
    ) in code


def test_a_lambda_s_own_return_is_not_the_search_s_exit(program_of) -> None:
    """A test through a lambda that returns: the search's exit is still the one `return`
    (or `break`) of the loop itself."""
    program = program_of(
        "int f(int n, const double *x, double t)\n{\n"
        "    auto above = [t](double v) { return v > t; };\n"
        "    for (int i = 0; i < n; i++)\n        if (above(x[i])) return i;\n"
        "    return -1;\n}\n"
        "int main(void) { double x[3] = {3, 1, 2}; return f(3, x, 1.5); }\n",
        "input.cpp",
    )
    (loop,) = next(f for f in program.functions if f.name == "f").loops
    assert loop.pattern == "find_first"
    variant = REDUCTION.apply_rule(Variant(program.source), Context(program)).variant
    assert variant is not None
    assert "if (above(x[i])) { cudaify_found = t_i; break; }" in variant.code
    assert "return v > t;" in variant.code  # the lambda, defined again in the kernel


def test_a_payload_named_like_the_block_s_counters_keeps_its_value(program_of, tmp_path) -> None:
    """The block's choice sits in the kernel beside the loop's variables: an argmin whose
    payload is called `offset` (and key `lane`) prints what gcc prints."""
    from emulation import gcc_output

    program = program_of(
        "#include <stdio.h>\n"
        "double f(int n, const double *x, long *where)\n{\n"
        "    double lane = 1e300;\n    long offset = -1;\n"
        "    for (int i = 0; i < n; i++) {\n"
        "        if (x[i] < lane) { lane = x[i]; offset = i; }\n    }\n"
        "    *where = offset;\n    return lane;\n}\n"
        "int main(void)\n{\n    static double x[20000];\n"
        "    for (int i = 0; i < 20000; i++) x[i] = (i * 7919) % 20011 + 0.5;\n"
        "    long w;\n    double b = f(20000, x, &w);\n"
        '    printf("%f %ld\\n", b, w);\n    return 0;\n}\n'
    )
    code = applied(program, "reduction").code
    emulated = _emulated(code, tmp_path)
    assert emulated.ok, emulated.errors()
    assert emulated.text() == gcc_output(Path(program.path), tmp_path)
