from __future__ import annotations

from pathlib import Path

import pytest
from transforms_support import GOLDEN, analysed

from cudaify.core import Variant, toolchain
from cudaify.frontend.facts import Program
from cudaify.transforms import get
from cudaify.transforms import offload as offload_module
from cudaify.transforms.base import Context
from cudaify.transforms.structure import structural_problems

INPUTS = {
    path.stem: path
    for path in sorted((GOLDEN / "offload").iterdir())
    if path.suffix in (".c", ".cpp")
}
CASES = sorted(INPUTS)
OFFLOAD = get("offload")


def offloaded(program: Program) -> Variant:
    outcome = OFFLOAD.apply_rule(Variant(program.source), Context(program))
    assert outcome.variant is not None, outcome.reason
    return outcome.variant


def nvcc_compiles(code: str, directory: Path, *extra: str) -> str:
    """nvcc's diagnostics, or "" when `code` compiles to an object file."""
    source = directory / "candidate.cu"
    source.write_text(code)
    nvcc = toolchain.find_tool("nvcc")
    argv = [nvcc, "-arch=sm_80", *extra, "-c", str(source), "-o", str(directory / "candidate.o")]
    done = toolchain.run(argv, timeout=240)
    return "" if done.ok else done.errors() + done.text()


def test_there_are_golden_cases() -> None:
    assert len(CASES) >= 8


@pytest.mark.parametrize("case", CASES)
def test_golden_output_is_stable_and_compiles(case: str, update_golden: bool, tmp_path) -> None:
    program = analysed(INPUTS[case])
    variant = offloaded(program)
    expected = GOLDEN / "offload" / f"{case}.cu"
    if update_golden:
        expected.write_text(variant.code)
    assert expected.exists(), f"{expected.name} is missing: rerun with --update-golden to write it"
    assert variant.code == expected.read_text(), f"rerun with --update-golden to accept {case}.cu"
    assert structural_problems(program, variant.code, OFFLOAD) == []
    assert nvcc_compiles(variant.code, tmp_path) == ""


def test_the_step_and_the_offloaded_functions_are_recorded() -> None:
    program = analysed(GOLDEN / "offload" / "saxpy.c")
    variant = offloaded(program)
    assert variant.offloaded == ("saxpy",)
    assert variant.methods == ("offload",)
    assert variant.node == "offload"
    assert variant.steps[0].applied_by == "rule"
    assert "saxpy_kernel" in variant.steps[0].detail


@pytest.mark.parametrize("case", ["saxpy", "static2d", "linear2d", "matvec", "scalars"])
def test_code_outside_the_offloaded_function_is_byte_identical(case: str) -> None:
    """The output is the input with two insertions: the kernel (with the helpers emitted
    once) before the function, the host side in place of the loop nest."""
    program = analysed(GOLDEN / "offload" / f"{case}.c")
    code = offloaded(program).code.encode()
    source = program.source.encode()
    function = program.function(variant_function(program))
    assert function is not None
    loop = function.loops[0]
    loop_end = source.index(b"\n", loop.span.end)  # the nest ends its line
    kernels_at = code.index(b"/* ---- cudaify runtime helpers")
    assert code[:kernels_at] == source[:kernels_at]
    assert code.endswith(source[loop_end:])
    middle = code[kernels_at : len(code) - len(source[loop_end:])]
    kernels, host = middle.split(source[kernels_at : loop.span.start])
    assert b"__global__" in kernels and b"__global__" not in host
    assert host.startswith(b"{\n") and b"<<<" in host
    assert source[function.span.start : loop.span.start] in code


def variant_function(program: Program) -> str:
    names = [fn.name for fn in program.functions if fn.name != "main"]
    assert len(names) == 1
    return names[0]


def test_helpers_only_gain_host_device_qualifiers() -> None:
    program = analysed(GOLDEN / "offload" / "helper.c")
    code = offloaded(program).code
    assert code.count("__host__ __device__ static double smooth(double v)") == 2  # proto + def
    assert code.count("__host__ __device__ static double square(double v)") == 1
    tail_start = program.source.index("static double square")
    assert code.endswith(
        program.source[tail_start:].replace(
            "static double s", "__host__ __device__ static double s"
        )
    )


def test_mapping_puts_the_innermost_parallel_loop_on_x() -> None:
    code = offloaded(analysed(GOLDEN / "offload" / "static2d.c")).code
    kernel = code[code.index("__global__") : code.index("void add(void)")]
    assert kernel.index("blockIdx.y") < kernel.index("int i =") < kernel.index("blockIdx.x")
    assert kernel.index("blockIdx.x") < kernel.index("int j =")
    assert "double (*c)[M]" in kernel and "c[i][j] = a[i][j] + 2.0 * b[i][j];" in kernel


def test_inner_sequential_loop_stays_in_the_thread() -> None:
    code = offloaded(analysed(GOLDEN / "offload" / "matvec.c")).code
    kernel = code[code.index("__global__") : code.index("\nvoid matvec(")]
    assert "blockIdx.y" not in kernel
    assert "for (int j = 0; j < n; j++)" in kernel
    assert "sum += A[i * n + j] * x[j];" in kernel


def test_loop_variable_declared_outside_gets_its_final_value() -> None:
    code = offloaded(analysed(GOLDEN / "offload" / "scalars.c")).code
    host = code[code.index("int update(") :]
    assert "k = (long)(lo + trips_k * 2);" in host
    kernel = code[code.index("__global__") : code.index("int update(")]
    for parameter in ("double *v", "double gain", "double offset", "double bias"):
        assert parameter in kernel


def test_three_perfectly_nested_parallel_loops_use_a_3d_grid(program_of, tmp_path) -> None:
    program = program_of(
        """\
#define N 16
void fill(int n, double out[N][N][N])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            for (int k = 0; k < n; k++)
                out[i][j][k] = i * 100.0 + j * 10.0 + k;
}
int main(void) { static double out[N][N][N]; fill(N, out); return (int)out[1][2][3]; }
"""
    )
    code = offloaded(program).code
    kernel = code[code.index("__global__") : code.index("void fill(")]
    for axis, var in (("z", "i"), ("y", "j"), ("x", "k")):
        assert kernel.index(f"blockIdx.{axis}") < kernel.index(f"int {var} =")
    assert "const dim3 block(32, 4, 2);" in code
    assert nvcc_compiles(code, tmp_path) == ""


REFUSALS = {
    "reduction": (
        "double total(int n, const double *x)\n{\n    double s = 0.0;\n"
        "    for (int i = 0; i < n; i++)\n        s += x[i];\n    return s;\n}\n",
        "reduction",
    ),
    "io": (
        "#include <stdio.h>\nvoid show(int n, const double *x)\n{\n"
        '    for (int i = 0; i < n; i++)\n        printf("%f\\n", x[i]);\n}\n',
        "show",
    ),
    "dependence": (
        "/* x[i] = x[i + 1] */\nvoid shift(int n, double *x)\n{\n"
        "    for (int i = 0; i < n - 1; i++)\n        x[i] = x[i + 1];\n}\n",
        "shift",
    ),
    "main_only": (
        "int main(void)\n{\n    double x[10];\n    for (int i = 0; i < 10; i++)\n"
        "        x[i] = i;\n    return (int)x[3];\n}\n",
        "main",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_refusals_say_where_and_why(case: str, program_of) -> None:
    source, word = REFUSALS[case]
    if "int main" not in source:
        source += "int main(void) { return 0; }\n"
    program = program_of(source)
    variant = Variant(program.source)
    reason = OFFLOAD.applies(variant, Context(program))
    assert reason is not None and word in reason
    assert reason.startswith(f"{program.path}:4:5: cannot offload loop 'i'")
    assert OFFLOAD.apply_rule(variant, Context(program)).variant is None


def test_a_helper_using_a_global_is_refused(program_of) -> None:
    program = program_of(
        "double weight = 2.0;\nstatic double f(double v) { return weight * v; }\n"
        "void g(int n, double *x)\n{\n    for (int i = 0; i < n; i++)\n        x[i] = f(x[i]);\n}\n"
        "int main(void) { double x[4] = {1, 2, 3, 4}; g(4, x); return (int)x[2]; }\n"
    )
    reason = OFFLOAD.applies(Variant(program.source), Context(program))
    # the analysis may already see f as unsafe; the rule's own check names the global
    assert reason is not None and "cannot offload loop 'i' in 'g'" in reason
    assert "'weight'" in reason or "calls f" in reason


def test_a_temporary_used_after_the_loop_is_refused_or_not_parallel(program_of) -> None:
    program = program_of(
        "double g(int n, double *x)\n{\n    double t = 0.0;\n"
        "    for (int i = 0; i < n; i++) {\n        t = x[i] * 2.0;\n        x[i] = t;\n    }\n"
        "    return t;\n}\nint main(void) { double x[4] = {1, 2, 3, 4}; return (int)g(4, x); }\n"
    )
    reason = OFFLOAD.applies(Variant(program.source), Context(program))
    assert reason is not None and "cannot offload loop 'i' in 'g'" in reason


def test_a_variant_that_differs_from_the_analysed_source_is_refused() -> None:
    program = analysed(GOLDEN / "offload" / "saxpy.c")
    reason = OFFLOAD.applies(Variant(program.source + "\n"), Context(program))
    assert reason is not None and "differs" in reason
    done = offloaded(program)
    reason = OFFLOAD.applies(done, Context(program))
    assert reason is not None and "already" in reason


@pytest.mark.gpu
@pytest.mark.parametrize("case", CASES)
def test_golden_output_prints_what_gcc_prints(case: str, tmp_path) -> None:
    from cudaify.backend.compare import compare

    source = INPUTS[case]
    compiler = toolchain.find_tool("g++" if source.suffix == ".cpp" else "gcc")
    reference = toolchain.run([compiler, "-O2", str(source), "-o", str(tmp_path / "ref"), "-lm"])
    assert reference.ok, reference.errors()
    expected = toolchain.run([str(tmp_path / "ref")], timeout=120)
    nvcc = toolchain.find_tool("nvcc")
    built = toolchain.run(
        [nvcc, "-O2", str(GOLDEN / "offload" / f"{case}.cu"), "-o", str(tmp_path / "gpu")],
        timeout=240,
    )
    assert built.ok, built.errors()
    actual = toolchain.run([str(tmp_path / "gpu")], timeout=120)
    assert actual.returncode == expected.returncode, actual.errors()
    assert compare(expected.text(), actual.text()) is None


ROW_MEAN = """\
void rowmean(int n, int m, const double *a, double *b)
{
    int i, j;
    double t;
    for (i = 0; i < n; i++) {
        t = 0.0;
        for (j = 0; j < m; j++)
            t += a[i * m + j];
        b[i] = t / m;
    }
}
int main(void)
{
    double a[12], b[3];
    for (int k = 0; k < 12; k++)
        a[k] = k;
    rowmean(3, 4, a, b);
    return (int)b[2];
}
"""


def test_scalars_written_in_the_nest_get_one_copy_per_thread(program_of, tmp_path) -> None:
    code = offloaded(program_of(ROW_MEAN)).code
    kernel = code[code.index("__global__") : code.index("\nvoid rowmean(")]
    assert "double *a, double *b, int m, long long trips_i)" in kernel
    body = kernel[kernel.index("int i = (int)t_i;") :]
    assert body.index("double t;") < body.index("t = 0.0;")
    assert body.index("int j;") < body.index("for (j = 0; j < m; j++)")
    host = code[code.index("\nvoid rowmean(") :]
    assert "i = (int)(0 + trips_i);" in host
    assert nvcc_compiles(code, tmp_path) == ""


def test_an_inner_counter_read_after_the_nest_is_refused(program_of) -> None:
    source = ROW_MEAN.replace(
        "        b[i] = t / m;\n    }\n", "        b[i] = t / m;\n    }\n    b[0] += j;\n"
    )
    program = program_of(source)
    reason = OFFLOAD.applies(Variant(program.source), Context(program))
    # the analysis or the rule's own check refuses: j's final value would be lost
    assert reason is not None and "cannot offload loop 'i' in 'rowmean'" in reason
    assert "'j' is written in the loop and used after it" in reason or "scalar j " in reason


def test_a_nest_with_few_constant_iterations_stays_on_the_host(program_of) -> None:
    program = program_of(
        "#define DIM 8\nvoid corner(int c, float *center)\n{\n"
        "    for (int d = 0; d < DIM; d++)\n        center[d] = (float)((c >> d) & 1);\n}\n"
        "int main(void) { float x[DIM]; corner(5, x); return (int)x[2]; }\n"
    )
    reason = OFFLOAD.applies(Variant(program.source), Context(program))
    assert reason is not None and reason.endswith(
        "it runs only 8 iterations: a kernel launch costs more"
    )


def test_member_functions_stay_and_namespace_functions_are_offloaded(program_of, tmp_path) -> None:
    program = program_of(
        """\
struct Grid {
    double v[5000];
    void fill(double a)
    {
        for (int i = 0; i < 5000; i++)
            v[i] = a * i;
    }
};
namespace ops {
void twice(int n, double *x)
{
    for (int i = 0; i < n; i++)
        x[i] = 2.0 * x[i];
}
}
int main()
{
    static Grid g;
    g.fill(0.5);
    ops::twice(5000, g.v);
    return (int)g.v[10];
}
""",
        name="input.cpp",
    )
    variant = offloaded(program)
    assert variant.offloaded == ("twice",)
    code = variant.code
    assert code.index("namespace ops {") < code.index("__global__ void twice_kernel")
    reason = OFFLOAD.applies(Variant(program.source), Context(program))
    assert reason is None
    _, reasons = offload_module._plans(Variant(program.source), program)
    assert any(
        r.endswith("cannot offload loop 'i' in 'fill': 'fill' is defined inside a class")
        for r in reasons
    )
    assert nvcc_compiles(code, tmp_path) == ""


def _reference_output(source: Path, directory: Path, *flags: str) -> str:
    compiler = toolchain.find_tool("g++" if source.suffix == ".cpp" else "gcc")
    binary = directory / "reference"
    built = toolchain.run([compiler, "-O2", *flags, str(source), "-o", str(binary), "-lm"])
    assert built.ok, built.errors()
    return toolchain.run([str(binary)], timeout=120).text()


def test_a_function_template_gets_a_templated_kernel_launched_with_its_arguments(
    tmp_path,
) -> None:
    from emulation import run_emulated

    source = GOLDEN / "offload" / "template.cpp"
    code = offloaded(analysed(source)).code
    kernel = code[code.index("__global__ void smooth_kernel") - 40 :]
    assert kernel.index("template <int R, typename T>") < kernel.index("__global__")
    assert "__global__ void smooth_kernel(T *in, T *out, T gain, long long trips_i)" in code
    assert "smooth_kernel<R, T><<<grid, block>>>(d_in, d_out, gain, trips_i);" in code
    # the wrapper keeps the template's signature: both instantiations still call it
    assert "template <int R, typename T>\nvoid smooth(const std::vector<T> &in," in code
    emulated = run_emulated(code, tmp_path)
    assert emulated.ok, emulated.errors()
    assert emulated.text() == _reference_output(source, tmp_path)


ROWS = [
    case for case in CASES if "cudaify_rows(" in (GOLDEN / "offload" / f"{case}.cu").read_text()
]


def test_two_and_three_dimensional_grids_cap_their_rows() -> None:
    code = (GOLDEN / "offload" / "horner3d.cu").read_text()
    assert "cudaify_rows(trips_j, trips_k)" in code
    assert "cudaify_rows(trips_i, trips_k * trips_j)" in code
    assert {"horner3d", "linear2d", "static2d"} <= set(ROWS)


@pytest.mark.parametrize("case", ROWS)
def test_a_grid_one_row_high_prints_what_gcc_prints(case: str, tmp_path) -> None:
    """The runtime's thread cap at 1: one block along each dimension, the grid-stride
    loops reach every iteration."""
    from emulation import SERIAL_HEADER, gcc_output, run_emulated

    code = (GOLDEN / "offload" / f"{case}.cu").read_text()
    done = run_emulated(code, tmp_path, header=SERIAL_HEADER, flags=("-DCUDAIFY_GRID_THREADS=1",))
    assert done.ok, done.errors()
    assert done.text() == gcc_output(INPUTS[case], tmp_path)


def test_a_prologue_moves_into_the_inner_loop_and_both_levels_go_on_the_grid() -> None:
    """`double si = ...; int base = ...;` before the column loop run in each thread, after
    both grid levels' indices are known; the columns' launch is one 2-D grid, not a launch
    per row."""
    code = (GOLDEN / "offload" / "prologue.cu").read_text()
    kernel = code[code.index("__global__ void scale_rows_kernel(") :]
    kernel = kernel[: kernel.index("\n}\n")]
    assert "long long trips_i, long long trips_j)" in kernel
    column = kernel.index("int j = (int)t_j;")
    assert column < kernel.index("double si = sqrt(s[i]) * alpha;") < kernel.index("int base")
    assert code.count("scale_rows_kernel<<<") == 1
    fill = code[code.index("__global__ void fill_channels_kernel(") :]
    assert "(unsigned long long)t_c * state_steps_c + (unsigned long long)t_k * 1ull" in fill
