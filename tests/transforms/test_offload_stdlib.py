"""Offloading C++ written the usual way (issue 23): std::complex, std::min/max, std::pair,
struct copies and local lambdas get kernels with device equivalents (cuda::std, a lambda
redefined in the kernel), which compile with nvcc and print what g++'s build prints when
run on the CPU emulation (cuda::std works there too: libcu++ is a host library as well)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_offload import nvcc_compiles

from cudaify.core import Variant, toolchain
from cudaify.frontend.analyze import analyze
from cudaify.frontend.cxx_compat import to_cxx
from cudaify.frontend.facts import Program
from cudaify.frontend.parse import parse
from cudaify.transforms import get
from cudaify.transforms.base import Context

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks" / "cpp"
SMALL = ("-DBENCH_SMALL",)
OFFLOAD = get("offload")
CASES = {
    "dft_complex": ("dft", ["cuda::std::polar(", "reinterpret_cast<cuda::std::complex<double> *>"]),
    "closest_pair_lambda": ("nearest_distances", ["auto distance = [](", "cudaify_min(best,"]),
    "map_lambda_vector": ("map_samples", ["auto transform = [gain](", "cuda::std::pow("]),
    "pair_envelope": ("widen", ["cuda::std::pair<double, double> e = envelope[i];"]),
}


def small_program(path: Path) -> Program:
    compat = to_cxx(parse(str(path), SMALL)).text.encode("utf-8", "surrogateescape")
    return analyze(str(path), SMALL, source=compat)


def cccl_include() -> str:
    nvcc = Path(toolchain.find_tool("nvcc")).resolve()
    for root in (nvcc.parent.parent, Path("/usr/local/cuda")):
        if (root / "include" / "cccl" / "cuda" / "std" / "complex").exists():
            return str(root / "include" / "cccl")
    return str(nvcc.parent.parent / "include")


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_hot_function_gets_a_kernel_that_compiles_and_prints_what_gcc_prints(
    case: str, tmp_path: Path
) -> None:
    from emulation import SERIAL_HEADER, run_emulated

    function, expected_lines = CASES[case]
    source = BENCHMARKS / f"{case}.cpp"
    outcome = OFFLOAD.apply_rule(
        Variant(small_program(source).source), Context(small_program(source))
    )
    assert outcome.variant is not None, outcome.reason
    assert outcome.variant.offloaded == (function,)
    code = outcome.variant.code
    kernel = code[code.index(f"__global__ void {function}_kernel") :]
    kernel = kernel[: kernel.index("\n}\n")]
    for line in expected_lines:
        assert line in code
    assert "std::" not in kernel.replace("cuda::std::", "").replace("std::size_t", "")
    assert nvcc_compiles(code, tmp_path) == ""
    emulated = run_emulated(
        code, tmp_path, flags=(*SMALL, "-I" + cccl_include()), header=SERIAL_HEADER
    )
    assert emulated.ok, emulated.errors()
    compiler = toolchain.find_tool("g++")
    built = toolchain.run([compiler, "-O2", *SMALL, str(source), "-o", str(tmp_path / "ref")])
    assert built.ok, built.errors()
    assert emulated.text() == toolchain.run([str(tmp_path / "ref")], timeout=120).text()


def test_a_captured_value_changed_after_the_lambda_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "late.cpp"
    path.write_text(
        "#include <vector>\n"
        "void scale(std::vector<double> &x, double g) {\n"
        "    auto f = [g](double v) { return g * v; };\n"
        "    g = 2.0;\n"
        "    for (int i = 0; i < 5000; i++)\n"
        "        x[i] = f(x[i]);\n"
        "}\nint main() { std::vector<double> x(5000, 1.0); scale(x, 3.0); return (int)x[0]; }\n"
    )
    program = small_program(path)
    reason = OFFLOAD.applies(Variant(program.source), Context(program))
    assert reason is not None
    assert "lambda 'f' uses 'g', which changes after the lambda is defined (line 4)" in reason
