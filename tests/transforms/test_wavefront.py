from __future__ import annotations

import os
from pathlib import Path

import pytest
from emulation import run_emulated
from pattern_golden import applied, nvcc_errors, same_output_as_gcc
from transforms_support import GOLDEN, analysed

from cudaify.core import Variant, toolchain
from cudaify.transforms import get
from cudaify.transforms.base import Context
from cudaify.transforms.structure import structural_problems

WAVEFRONT = get("wavefront")


def test_golden_output_is_stable_and_compiles(update_golden: bool, tmp_path) -> None:
    program = analysed(GOLDEN / "wavefront" / "sweeps.c")
    variant = applied(program, "wavefront")
    expected = GOLDEN / "wavefront" / "sweeps.cu"
    if update_golden:
        expected.write_text(variant.code)
    assert expected.exists(), f"{expected.name} is missing: rerun with --update-golden to write it"
    assert variant.code == expected.read_text(), "rerun with --update-golden to accept sweeps.cu"
    assert structural_problems(program, variant.code, WAVEFRONT) == []
    assert nvcc_errors(variant.code, tmp_path) == ""


def test_distances_are_computed_from_the_affine_accesses() -> None:
    program = analysed(GOLDEN / "wavefront" / "sweeps.c")
    variant = applied(program, "wavefront")
    detail = variant.steps[-1].detail
    assert "sweep: nest 'i, j' at line 10 -> sweep_wave per anti-diagonal of 32x32 tiles" in detail
    assert "(dependence distances (0, 1), (1, 0))" in detail
    assert "(dependence distances (0, 1), (1, 0), (1, 1))" in detail
    code = variant.code
    # every distance has di >= 0 and dj >= 0: tiles of cells run as units
    assert "const long long tile_i = first + blockIdx.x, tile_j = wave - tile_i;" in code
    assert "int i = (int)(1 + t_i);" in code
    assert "int j = (int)(1 + t_j);" in code
    assert "for (long long wave = 0; wave < tiles_i + tiles_j - 1; wave++) {" in code
    assert "sweep_wave<<<(unsigned int)count, 32>>>" in code
    # loop variables declared outside the nest end with the values the loops leave
    assert "if (trips_i_2 > 0) j = (int)(1 + trips_j_2);" in code


SOURCES = {
    "same_diagonal": (
        "#define M 64\nvoid f(int n, double a[M][M])\n{\n"
        "    for (int i = 1; i < n; i++)\n        for (int j = 0; j < n - 1; j++)\n"
        "            a[i][j] = a[i - 1][j + 1] + 1.0;\n}\n",
        "distance (1, -1)",
    ),
    "carried_scalar": (
        "#define M 64\nvoid f(int n, double a[M][M])\n{\n    double carry = 0.0;\n"
        "    for (int i = 1; i < n; i++)\n        for (int j = 1; j < n; j++) {\n"
        "            carry = carry * 0.5 + a[i - 1][j];\n            a[i][j] = carry;\n"
        "        }\n}\n",
        "",
    ),
}


def test_a_distance_against_the_columns_keeps_one_launch_per_cell_diagonal(program_of) -> None:
    """(2, -1): a later row reads a column to the right, so a tile may not run before the
    tile to its upper right; the cell wavefront still keeps the order."""
    program = program_of(
        "#define M 64\nvoid f(int n, double a[M][M])\n{\n"
        "    for (int i = 2; i < n; i++)\n        for (int j = 0; j < n - 1; j++)\n"
        "            a[i][j] = a[i - 2][j + 1] + 1.0;\n}\n"
        "int main(void) { static double a[M][M]; f(M, a); return (int)a[3][3]; }\n"
    )
    variant = applied(program, "wavefront")
    detail = variant.steps[-1].detail
    assert "per anti-diagonal (dependence distances (2, -1))" in detail
    assert "tiles" not in variant.code
    assert "k < count" in variant.code


def test_a_continue_in_the_body_still_reaches_the_barrier(program_of) -> None:
    program = program_of(
        "#define M 64\nvoid f(int n, double a[M][M])\n{\n"
        "    for (int i = 1; i < n; i++)\n        for (int j = 1; j < n; j++) {\n"
        "            if (j % 3 == 0)\n                continue;\n"
        "            a[i][j] = a[i - 1][j] + a[i][j - 1];\n        }\n}\n"
        "int main(void) { static double a[M][M]; f(M, a); return (int)a[3][3]; }\n"
    )
    code = applied(program, "wavefront").code
    assert "t_j < trips_j) do {" in code
    assert "} while (0);\n        __syncthreads();" in code


def test_golden_output_emulated_on_the_cpu_prints_what_gcc_prints(tmp_path) -> None:
    """Each block's threads walk their tile's cell diagonals with a barrier between them
    (the emulator runs a block's threads as std::threads and the barrier as a std::barrier)."""
    from cudaify.backend.compare import compare

    source = GOLDEN / "wavefront" / "sweeps.c"
    gcc = toolchain.find_tool("gcc")
    reference = toolchain.run([gcc, "-O2", str(source), "-o", str(tmp_path / "ref"), "-lm"])
    assert reference.ok, reference.errors()
    expected = toolchain.run([str(tmp_path / "ref")], timeout=120)
    # the pattern prelude includes libcu++ headers and device helpers this kernel never calls
    flags = ("-I", str(_cccl_include()), "-fpermissive")
    code = (GOLDEN / "wavefront" / "sweeps.cu").read_text()
    actual = run_emulated(code, tmp_path, flags=flags)
    assert actual.ok, actual.errors() + actual.text()
    assert compare(expected.text(), actual.text()) is None


def _cccl_include() -> Path:
    """The CUDA toolkit's libcu++ headers (nvcc may be a wrapper script elsewhere)."""
    nvcc = Path(toolchain.find_tool("nvcc")).resolve()
    homes = [nvcc.parent.parent, Path(os.environ.get("CUDA_HOME", "/usr/local/cuda"))]
    homes.append(Path("/usr/local/cuda"))
    for home in homes:
        if (home / "include" / "cccl" / "cuda" / "std").is_dir():
            return home / "include" / "cccl"
    pytest.skip("the CUDA toolkit's cccl headers were not found")


@pytest.mark.parametrize("case", sorted(SOURCES))
def test_refusals(case: str, program_of) -> None:
    source, words = SOURCES[case]
    program = program_of(
        source + "int main(void) { static double a[M][M]; f(M, a); return (int)a[3][3]; }\n"
    )
    reason = WAVEFRONT.applies(Variant(program.source), Context(program))
    assert reason is not None and words in reason
    assert WAVEFRONT.apply_rule(Variant(program.source), Context(program)).variant is None


def test_check_wants_launches_per_diagonal() -> None:
    program = analysed(GOLDEN / "wavefront" / "sweeps.c")
    before = Variant(program.source)
    assert len(WAVEFRONT.check(before, before, Context(program))) == 1
    assert WAVEFRONT.check(before, applied(program, "wavefront"), Context(program)) == []


@pytest.mark.gpu
def test_golden_output_prints_what_gcc_prints(tmp_path) -> None:
    same_output_as_gcc(
        GOLDEN / "wavefront" / "sweeps.c", GOLDEN / "wavefront" / "sweeps.cu", tmp_path
    )


def test_distributed_golden_is_stable_and_compiles(update_golden: bool, tmp_path) -> None:
    """`table[i * w] = i;` before the inner loop runs in a host loop of its own first."""
    program = analysed(GOLDEN / "wavefront" / "dp_rows.c")
    variant = applied(program, "wavefront")
    expected = GOLDEN / "wavefront" / "dp_rows.cu"
    if update_golden:
        expected.write_text(variant.code)
    assert expected.exists(), f"{expected.name} is missing: rerun with --update-golden to write it"
    assert variant.code == expected.read_text(), "rerun with --update-golden to accept dp_rows.cu"
    assert structural_problems(program, variant.code, WAVEFRONT) == []
    assert nvcc_errors(variant.code, tmp_path) == ""
    code = variant.code
    host_loop = code.index("for (int i = 1; i <= la; i++) {\n            table[i * w] = i;\n")
    assert host_loop < code.index("cudaMemcpy(d_table") < code.index("edit_distance_wave<<<")
    # the cells' kernel holds the inner body only, tiled: every distance is >= 0
    kernel = code[code.index("__global__ void __launch_bounds__(32) edit_distance_wave") :]
    kernel = kernel[: kernel.index("\n}\n")]
    assert "table[i * w] = i;" not in kernel
    assert "(dependence distances (0, 1), (1, 0), (1, 1))" in variant.steps[-1].detail


def test_distributed_golden_emulated_on_the_cpu_prints_what_gcc_prints(tmp_path) -> None:
    from cudaify.backend.compare import compare

    source = GOLDEN / "wavefront" / "dp_rows.c"
    gcc = toolchain.find_tool("gcc")
    reference = toolchain.run([gcc, "-O2", str(source), "-o", str(tmp_path / "ref"), "-lm"])
    assert reference.ok, reference.errors()
    expected = toolchain.run([str(tmp_path / "ref")], timeout=120)
    flags = ("-I", str(_cccl_include()), "-fpermissive")
    code = (GOLDEN / "wavefront" / "dp_rows.cu").read_text()
    actual = run_emulated(code, tmp_path, flags=flags)
    assert actual.ok, actual.errors() + actual.text()
    assert "edit_distance=" in actual.text()
    assert compare(expected.text(), actual.text()) is None


@pytest.mark.gpu
def test_distributed_golden_prints_what_gcc_prints(tmp_path) -> None:
    same_output_as_gcc(
        GOLDEN / "wavefront" / "dp_rows.c", GOLDEN / "wavefront" / "dp_rows.cu", tmp_path
    )


DISTRIBUTION_REFUSALS = {
    # the first column copies the previous row's second cell: written by a cell of an
    # earlier i, so the host loop would read it before the kernels write it
    "reads_an_earlier_cell": (
        "        table[i * w] = table[(i - 1) * w + 1];\n",
        "distribution would reorder them",
    ),
    "writes_a_scalar": ("        last = i;\n", "writes a scalar"),
    "calls_a_function": ("        table[i * w] = abs(i);\n", "calls a function"),
}


@pytest.mark.parametrize("case", sorted(DISTRIBUTION_REFUSALS))
def test_distribution_refusals(case: str, program_of) -> None:
    statement, words = DISTRIBUTION_REFUSALS[case]
    program = program_of(
        "#include <stdlib.h>\nint last;\n"
        "void f(int n, int *table)\n{\n    int w = n + 1;\n"
        "    for (int i = 1; i <= n; i++) {\n"
        + statement
        + "        for (int j = 1; j <= n; j++)\n"
        "            table[i * w + j] = table[(i - 1) * w + j] + table[i * w + j - 1];\n"
        "    }\n}\n"
        "int main(void) { static int t[65 * 65]; f(64, t); return t[100] + last; }\n"
    )
    reason = WAVEFRONT.applies(Variant(program.source), Context(program))
    assert reason is not None and words in reason, reason
    assert WAVEFRONT.apply_rule(Variant(program.source), Context(program)).variant is None


def test_statements_after_the_inner_loop_are_not_distributed(program_of) -> None:
    program = program_of(
        "void f(int n, int *table)\n{\n    int w = n + 1;\n"
        "    for (int i = 1; i <= n; i++) {\n        for (int j = 1; j <= n; j++)\n"
        "            table[i * w + j] = table[(i - 1) * w + j] + table[i * w + j - 1];\n"
        "        table[i * w] = i;\n    }\n}\n"
        "int main(void) { static int t[65 * 65]; f(64, t); return t[100]; }\n"
    )
    reason = WAVEFRONT.applies(Variant(program.source), Context(program))
    assert reason is not None and "statements follow the inner loop" in reason
