"""The schedule mapping on C++ written the usual way (issue 23): regions using modelled
standard-library operations (std::complex, <cmath>, std::min/max, std::pair, struct copies)
are static-control regions, and their kernels use the same device equivalents as offload's
(transforms/std_device.py); they compile with nvcc and print what g++'s build prints on the
CPU emulation, threads forward and reversed. Side-effecting calls still break a region, by
name."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_offload import nvcc_compiles
from test_offload_stdlib import BENCHMARKS, SMALL, cccl_include, small_program

from cudaify.core import Variant, toolchain
from cudaify.transforms import get
from cudaify.transforms.base import Context

SCHEDULE = get("schedule")
CASES = {
    "dft_complex": ["acc = cuda::std::complex<double>(0.0, 0.0);", "cuda::std::polar("],
    "closest_pair_lambda": ["    auto distance = [](", "cudaify_min(best, distance("],
}
CAPTURING = """#include <cmath>
#include <cstdio>
#include <vector>
struct Sample { float value; float weight; };
void map(const std::vector<Sample> &in, std::vector<Sample> &out, int n, float gain) {
    auto transform = [gain](const Sample &s) {
        Sample r = s;
        r.value = gain * std::pow(s.value, 1.5f) + std::exp(-s.weight);
        return r;
    };
    for (int i = 0; i < n; i++)
        out[i] = transform(in[i]);
}
int main() {
    std::vector<Sample> in(5000), out(5000);
    for (int i = 0; i < 5000; i++) { in[i].value = 1.0f + 0.001f * i; in[i].weight = 0.5f; }
    map(in, out, 5000, 0.75f);
    double total = 0.0;
    for (int i = 0; i < 5000; i++) total += out[i].value * out[i].weight;
    std::printf("%.6e %.6e\\n", total, (double)out[4999].value);
    return 0;
}
"""


def scheduled(path: Path) -> str:
    program = small_program(path)
    outcome = SCHEDULE.apply_rule(Variant(program.source), Context(program))
    assert outcome.variant is not None, outcome.reason
    return outcome.variant.code


def reference_output(source: Path, tmp_path: Path) -> str:
    compiler = toolchain.find_tool("g++")
    built = toolchain.run([compiler, "-O2", *SMALL, str(source), "-o", str(tmp_path / "ref")])
    assert built.ok, built.errors()
    return toolchain.run([str(tmp_path / "ref")], timeout=120).text()


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_hot_region_gets_a_kernel_that_prints_what_gcc_prints(
    case: str, tmp_path: Path
) -> None:
    source = BENCHMARKS / f"{case}.cpp"
    code = scheduled(source)
    for line in CASES[case]:
        assert line in code
    assert_prints_what_gcc_prints(code, source, tmp_path)


def test_a_capturing_lambda_is_defined_again_in_the_kernel(tmp_path: Path) -> None:
    source = tmp_path / "capture.cpp"
    source.write_text(CAPTURING)
    code = scheduled(source)
    kernel = code[code.index("__global__ void map_kernel") :]
    assert "float gain" in kernel[: kernel.index(")")]
    assert "auto transform = [gain](const Sample &s) {" in kernel
    assert "cuda::std::pow(" in kernel
    assert_prints_what_gcc_prints(code, source, tmp_path)


def test_a_capture_that_changes_after_the_lambda_is_refused(tmp_path: Path) -> None:
    source = tmp_path / "late.cpp"
    source.write_text(
        CAPTURING.replace(
            "    for (int i = 0; i < n; i++)\n",
            "    gain = 2.0f;\n    for (int i = 0; i < n; i++)\n",
        )
    )
    program = small_program(source)
    outcome = SCHEDULE.apply_rule(Variant(program.source), Context(program))
    assert outcome.variant is None
    assert "lambda 'transform' uses 'gain', which changes after the lambda is defined" in (
        outcome.reason or ""
    )


def assert_prints_what_gcc_prints(code: str, source: Path, tmp_path: Path) -> None:
    from emulation import SERIAL_HEADER, run_emulated

    for kernel in code.split("__global__ void ")[1:]:
        body = kernel[: kernel.index("\n}\n")]
        assert "std::" not in body.replace("cuda::std::", "").replace("std::size_t", "")
    assert nvcc_compiles(code, tmp_path) == ""
    expected = reference_output(source, tmp_path)
    for reverse in (False, True):
        emulated = run_emulated(
            code,
            tmp_path,
            flags=(*SMALL, "-I" + cccl_include()),
            header=SERIAL_HEADER,
            reverse=reverse,
        )
        assert emulated.ok, emulated.errors()
        assert emulated.text() == expected


def notes_of(tmp_path: Path, body: str) -> str:
    path = tmp_path / "decoy.cpp"
    path.write_text(
        "#include <complex>\n#include <cstdio>\n#include <iostream>\n#include <vector>\n"
        "int counter = 0;\n"
        "double bump(double v) { counter++; return v; }\n"
        "void f(std::vector<std::complex<double>> &x, std::vector<double> &y, int n) {\n"
        f"{body}}}\n"
        "int main() { std::vector<std::complex<double>> x(5000); std::vector<double> y(5000);\n"
        '  f(x, y, 5000); std::printf("%f\\n", y[3]); return 0; }\n'
    )
    program = small_program(path)
    function = next(fn for fn in program.functions if fn.name == "f")
    return "\n".join(function.scop_notes)


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ("    for (int i = 0; i < n; i++)\n        y[i] = bump(std::abs(x[i]));\n", "'bump'"),
        ("    std::vector<double> out;\n    for (int i = 0; i < n; i++)\n"
         "        out.push_back(std::abs(x[i]));\n", "push_back"),
        ("    for (int i = 0; i < n; i++)\n        std::cout << x[i];\n", "operator<<"),
    ],
)  # fmt: skip
def test_a_side_effecting_call_still_breaks_the_region_by_name(
    body: str, named: str, tmp_path: Path
) -> None:
    notes = notes_of(tmp_path, body)
    assert "not in a static-control region: calls" in notes
    assert named in notes


def test_complex_arithmetic_is_modelled_as_reads_and_a_read_write(tmp_path: Path) -> None:
    path = tmp_path / "acc.cpp"
    path.write_text(
        "#include <complex>\n#include <vector>\n"
        "void f(const std::vector<std::complex<double>> &x, std::vector<std::complex<double>> &y,"
        " int n) {\n"
        "    for (int i = 0; i < n; i++) {\n"
        "        std::complex<double> acc(0.0, 0.0);\n"
        "        for (int t = 0; t < n; t++)\n"
        "            acc += x[t] * std::polar(1.0, 0.5 * t);\n"
        "        y[i] = acc;\n"
        "    }\n}\n"
        "int main() { std::vector<std::complex<double>> x(100), y(100); f(x, y, 100); return 0; }\n"
    )
    program = small_program(path)
    function = next(fn for fn in program.functions if fn.name == "f")
    assert function.scop_notes == ()
    (scop,) = function.scops
    update = next(s for s in scop.statements if s.kind == "expression" and s.loops == (0, 1))
    acc = next(a for a in update.accesses if a.target == "acc")
    assert acc.is_read and acc.is_write and acc.scalar
    assert {a.target for a in update.accesses if a.is_read} == {"x", "acc"}
    assert update.reduction == ""  # a complex `+=` is not an atomicAdd


def test_a_loop_bounded_by_a_size_call_is_named_as_the_reason(tmp_path: Path) -> None:
    source = BENCHMARKS / "pair_envelope.cpp"
    program = small_program(source)
    widen = next(fn for fn in program.functions if fn.name == "widen")
    assert widen.scops == ()
    assert any(
        "loop 'i' has a bound that is not affine in the function's variables: envelope.size()"
        in note
        for note in widen.scop_notes
    )
