from __future__ import annotations

from pathlib import Path

import pytest
from emulation import run_emulated
from transforms_support import GOLDEN, analysed

from cudaify.core import Variant, toolchain
from cudaify.frontend.facts import Program
from cudaify.transforms import get
from cudaify.transforms.base import Context
from cudaify.transforms.shared_tiling import tiling_problems
from cudaify.transforms.structure import structural_problems

CASES = sorted(p.stem for p in (GOLDEN / "shared_tiling").glob("*.c"))
OFFLOAD = get("offload")
TILING = get("shared_tiling")


def offloaded(program: Program) -> Variant:
    outcome = OFFLOAD.apply_rule(Variant(program.source), Context(program))
    assert outcome.variant is not None, outcome.reason
    return outcome.variant


def tiled(program: Program) -> Variant:
    outcome = TILING.apply_rule(offloaded(program), Context(program))
    assert outcome.variant is not None, outcome.reason
    return outcome.variant


def refusal(program: Program) -> str:
    variant = offloaded(program)
    reason = TILING.applies(variant, Context(program))
    outcome = TILING.apply_rule(variant, Context(program))
    assert outcome.variant is None
    assert reason == outcome.reason and reason
    return reason


def nvcc_compiles(code: str, directory: Path) -> str:
    source = directory / "candidate.cu"
    source.write_text(code)
    nvcc = toolchain.find_tool("nvcc")
    argv = [nvcc, "-arch=sm_80", "-c", str(source), "-o", str(directory / "candidate.o")]
    done = toolchain.run(argv, timeout=240)
    return "" if done.ok else done.errors() + done.text()


def test_there_are_golden_cases() -> None:
    assert len(CASES) >= 4


@pytest.mark.parametrize("case", CASES)
def test_golden_output_is_stable_and_compiles(case: str, update_golden: bool, tmp_path) -> None:
    program = analysed(GOLDEN / "shared_tiling" / f"{case}.c")
    before = offloaded(program)
    variant = TILING.apply_rule(before, Context(program)).variant
    assert variant is not None
    expected = GOLDEN / "shared_tiling" / f"{case}.cu"
    if update_golden:
        expected.write_text(variant.code)
    assert expected.exists(), f"{expected.name} is missing: rerun with --update-golden to write it"
    assert variant.code == expected.read_text(), f"rerun with --update-golden to accept {case}.cu"
    assert structural_problems(program, variant.code, TILING, before) == []
    assert nvcc_compiles(variant.code, tmp_path) == ""


def test_both_operands_of_a_matrix_product_are_staged_and_the_launch_uses_tile_blocks() -> None:
    variant = tiled(analysed(GOLDEN / "shared_tiling" / "matmul_flat.c"))
    code = variant.code
    assert variant.methods == ("offload", "shared_tiling")
    assert "tiles over 'k' of a[i * m + k] (rows), b[k * p + j] (cols)" in variant.steps[-1].detail
    assert "__shared__ float tile_a[16][17];" in code
    assert "__shared__ float tile_b[16][17];" in code
    assert "sum += tile_a[threadIdx.y][kk_k] * tile_b[kk_k][threadIdx.x];" in code
    assert "const dim3 block(16, 16);" in code
    assert "cudaify_blocks(trips_i, 16, 65535u)" in code
    # every thread reaches both barriers: tile loops bounded by block-uniform values
    assert code.count("__syncthreads();") == 2
    assert "for (long long tile_row = blockIdx.y * 16LL; tile_row < trips_i;" in code


def test_the_unit_stride_index_of_each_operand_goes_on_threadidx_x() -> None:
    code = tiled(analysed(GOLDEN / "shared_tiling" / "atb_columns.c")).code
    # a[p * m + i]: i has unit stride, so i runs along x in the load and the tile is [p][i]
    assert "const long long t_i = tile_row + threadIdx.x;" in code
    assert "sum += tile_a[kk_p][threadIdx.y] * tile_b[kk_p][threadIdx.x];" in code


def test_one_array_read_along_both_mapped_loops_gets_two_tiles() -> None:
    variant = tiled(analysed(GOLDEN / "shared_tiling" / "gram.c"))
    assert "x[i * d + k] (rows), x[j * d + k] (cols)" in variant.steps[-1].detail
    # x[j * d + k] has unit stride along k: the tile is [j][k], read as [threadIdx.x][kk]
    assert "dot += tile_x[threadIdx.y][kk_k] * tile_x_2[threadIdx.x][kk_k];" in variant.code
    # `k <= d - 1` counts d iterations
    assert "(long long)(d - 1) - (long long)(0) + 1;" in variant.code


def test_a_strided_k_loop_keeps_its_values_and_unstaged_reads_stay() -> None:
    code = tiled(analysed(GOLDEN / "shared_tiling" / "static2d.c")).code
    assert "int k = (int)((1) + t_k * 2);" in code
    assert "(span_k + 1) / 2" in code
    # c is written by the kernel: its reads are never staged
    assert "c[i][j] = alpha * acc + beta * c[i][j];" in code


MATVEC = """\
void mv(int n, int m, const float *a, const float *x, float *y)
{
    for (int i = 0; i < n; i++) {
        float s = 0.0f;
        for (int k = 0; k < m; k++)
            s += a[i * m + k] * x[k];
        y[i] = s;
    }
}
int main(void) { float a[4096], x[64], y[64]; mv(64, 64, a, x, y); return (int)y[0]; }
"""


def nest(k_loop: str, before: str = "float s = 0.0f;", after: str = "c[i * n + j] = s;") -> str:
    return (
        "void f(int n, int m, float lim, const float *a, const float *b, float *c)\n{\n"
        "    for (int i = 0; i < n; i++)\n        for (int j = 0; j < n; j++) {\n"
        f"            {before}\n            {k_loop}\n            {after}\n        }}\n}}\n"
        "int main(void) { float a[4096], b[4096], c[4096]; f(64, 64, 2.0f, a, b, c); "
        "return (int)c[0]; }\n"
    )


ROW_SUMS = MATVEC.replace("a[i * m + k] * x[k]", "a[i * m + k] * a[i * m + k]")


def test_a_one_dimensional_kernel_shares_the_reads_that_depend_on_k_alone(program_of) -> None:
    variant = tiled(program_of(MATVEC))
    assert "mv_kernel: 256-element shared tiles over 'k' of x[k] (k)" in variant.steps[-1].detail
    assert "s += a[i * m + k] * tile_x[kk_k];" in variant.code
    assert "const dim3 block(256);" in variant.code
    assert "if (blockDim.x != 256 || blockDim.y != 1) __trap();" in variant.code


def test_a_one_dimensional_kernel_without_shared_reads_is_refused(program_of) -> None:
    assert "no read in the 'k' loop depends on 'k'" in refusal(program_of(ROW_SUMS))


def test_a_program_without_kernels_is_refused(program_of) -> None:
    program = program_of(MATVEC)
    reason = TILING.applies(Variant(program.source), Context(program))
    assert reason is not None and "offload first" in reason


def test_a_k_range_computed_per_thread_is_refused(program_of) -> None:
    program = program_of(
        nest(
            "for (int k = 0; k < top; k++) s += a[i * m + k] * b[k * n + j];",
            before="float s = 0.0f; int top = m;",
        )
    )
    assert "the bounds of 'k' differ between threads" in refusal(program)


def test_a_floating_point_bound_is_refused() -> None:
    program = analysed(GOLDEN / "shared_tiling" / "matmul_flat.c")
    code = offloaded(program).code
    assert "k < m;" in code
    variant = Variant(code.replace("k < m;", "k < m * 1.5f;"))
    reason = TILING.applies(variant, Context(program))
    assert reason is not None and "a bound of 'k' is not an integer" in reason


def test_reads_under_a_condition_are_not_staged(program_of) -> None:
    program = program_of(
        nest("for (int k = 0; k < m; k++) if (k % 2) s += a[i * m + k] * b[k * n + j];")
    )
    assert "no read in the 'k' loop depends on 'k'" in refusal(program)


def test_only_the_unconditional_operand_is_staged(program_of) -> None:
    program = program_of(
        nest("for (int k = 0; k < m; k++) s += a[i * m + k] * (k < 3 ? b[k * n + j] : 1.0f);")
    )
    variant = tiled(program)
    assert "of a[i * m + k] (rows)" in variant.steps[-1].detail
    assert "(k < 3 ? b[k * n + j] : 1.0f)" in variant.code


def test_a_loop_that_can_stop_early_is_refused(program_of) -> None:
    program = program_of(
        nest(
            "for (int k = 0; k < m; k++) { s += a[i * m + k] * b[k * n + j]; if (s > 9.0f) break; }"
        )
    )
    reason = refusal(program)
    assert "leaves its loop early" in reason or "cannot offload" in reason


def test_a_prologue_load_runs_only_in_threads_inside_the_matrix(program_of, tmp_path) -> None:
    program = program_of(
        nest(
            "for (int k = 0; k < m; k++) s += a[i * m + k] * b[k * n + j];",
            before="float s = c[i * n + j];",
        )
    )
    code = tiled(program).code
    assert "float s = active ? (c[i * n + j]) : (float)0;" in code
    assert nvcc_compiles(code, tmp_path) == ""


def test_the_check_accepts_the_rule_output_and_finds_divergent_barriers() -> None:
    code = tiled(analysed(GOLDEN / "shared_tiling" / "matmul_flat.c")).code
    assert tiling_problems(code) == []
    guarded = code.replace(
        "                __syncthreads();\n                if (active)",
        "                if (threadIdx.x < 3) __syncthreads();\n                if (active)",
        1,
    )
    assert guarded != code
    assert any("inside a if statement" in p.message for p in tiling_problems(guarded))
    per_thread = code.replace(
        "tile_k < trips_k; tile_k += 16", "tile_k < trips_k - threadIdx.x; tile_k += 16"
    )
    assert per_thread != code
    assert any("differs between threads" in p.message for p in tiling_problems(per_thread))
    untiled = offloaded(analysed(GOLDEN / "shared_tiling" / "matmul_flat.c")).code
    kinds = {p.message for p in tiling_problems(untiled)}
    assert kinds == {"no __shared__ array is declared", "no __syncthreads() barrier"}


def test_a_tiled_kernel_is_not_tiled_again() -> None:
    program = analysed(GOLDEN / "shared_tiling" / "matmul_flat.c")
    variant = tiled(program)
    reason = TILING.applies(variant, Context(program))
    assert reason is not None and "grid-stride" in reason


@pytest.mark.parametrize("case", CASES)
def test_golden_output_emulated_on_the_cpu_prints_what_gcc_prints(case: str, tmp_path) -> None:
    """Every thread a std::thread, every barrier a std::barrier: what the tiles compute,
    synchronisation included, without a GPU."""
    from cudaify.backend.compare import compare

    source = GOLDEN / "shared_tiling" / f"{case}.c"
    gcc = toolchain.find_tool("gcc")
    reference = toolchain.run([gcc, "-O2", str(source), "-o", str(tmp_path / "ref"), "-lm"])
    assert reference.ok, reference.errors()
    expected = toolchain.run([str(tmp_path / "ref")], timeout=120)
    code = (GOLDEN / "shared_tiling" / f"{case}.cu").read_text()
    actual = run_emulated(code, tmp_path)
    assert actual.ok, actual.errors() + actual.text()
    assert compare(expected.text(), actual.text()) is None


@pytest.mark.gpu
@pytest.mark.parametrize("case", CASES)
def test_golden_output_prints_what_gcc_prints(case: str, tmp_path) -> None:
    from cudaify.backend.compare import compare

    source = GOLDEN / "shared_tiling" / f"{case}.c"
    gcc = toolchain.find_tool("gcc")
    reference = toolchain.run([gcc, "-O2", str(source), "-o", str(tmp_path / "ref"), "-lm"])
    assert reference.ok, reference.errors()
    expected = toolchain.run([str(tmp_path / "ref")], timeout=120)
    nvcc = toolchain.find_tool("nvcc")
    built = toolchain.run(
        [nvcc, "-O2", str(GOLDEN / "shared_tiling" / f"{case}.cu"), "-o", str(tmp_path / "gpu")],
        timeout=240,
    )
    assert built.ok, built.errors()
    actual = toolchain.run([str(tmp_path / "gpu")], timeout=120)
    assert actual.returncode == expected.returncode, actual.errors()
    assert compare(expected.text(), actual.text()) is None


def test_a_stencil_stages_its_tile_and_halo_once_per_block() -> None:
    variant = tiled(analysed(GOLDEN / "shared_tiling" / "jacobi.c"))
    code = variant.code
    assert "sweep_kernel: 32x8 stencil tiles with halos of u (6 points" in variant.steps[-1].detail
    # 8 rows + 3 below the first read; 32 columns + one on each side
    assert "__shared__ float tile_u[11][34];" in code
    assert "tile_u[slot / 34][slot % 34] = u[i - 1][j];" in code
    # u[i + 2][j] is three rows below u[i - 1][j], the reference read
    assert "0.01f * tile_u[threadIdx.y + 3][threadIdx.x + 1]" in code
    # a slot is loaded only when the source reads that element from some iteration
    assert "(t_i - (3) >= 0 && t_i - (3) < trips_i && t_j >= 0 && t_j < trips_j)" in code
    assert code.count("__syncthreads();") == 2
    assert "const dim3 block(32, 8);" in code


def test_a_1d_stencil_gets_a_256_point_tile_with_its_halo() -> None:
    code = tiled(analysed(GOLDEN / "shared_tiling" / "heat.c")).code
    assert "__shared__ double tile_u[258];" in code
    assert "next[i] = tile_u[threadIdx.x + 1] + alpha * (tile_u[threadIdx.x + 0]" in code


BLUR = """\
void blur(int w, int h, const float *k, const float *in, float *out)
{
    for (int y = 1; y < h - 1; y++)
        for (int x = 1; x < w - 1; x++) {
            float acc = 0.0f;
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++)
                    acc += k[(dy + 1) * 3 + dx + 1] * in[(y + dy) * w + x + dx];
            out[y * w + x] = acc;
        }
}
int main(void) { float k[9], in[4096], out[4096]; blur(64, 64, k, in, out); return (int)out[70]; }
"""


def test_neighbours_chosen_by_inner_loops_are_not_a_constant_offset_stencil(program_of) -> None:
    reason = refusal(program_of(BLUR))
    assert "as a stencil: no read-only array is read at two constant offsets" in reason


# ---- transposes ----------------------------------------------------------------------------


ARRAYS = (("const ", "in"), ("const ", "x"), ("const ", "y"), ("", "out"), ("", "z"))


def transposing(statement: str, element: str = "float", before: str = "") -> str:
    """A rows x cols nest over flat arrays with `statement` as its body: in and y are
    read, x is a vector, out and z are written."""
    arrays = ", ".join(f"{kind}{element} *{name}" for kind, name in ARRAYS)
    return (
        f"void f(int rows, int cols, {element} s, {arrays})\n{{\n"
        "    for (int i = 0; i < rows; i++)\n        for (int j = 0; j < cols; j++) {\n"
        f"            {before}\n            {statement}\n        }}\n}}\n"
        f"int main(void) {{ static {element} in[3750], x[50], y[3750], out[3750], z[3750]; "
        "for (int k = 0; k < 3750; k++) { in[k] = (k * 7) % 13; y[k] = k % 5; } "
        "for (int k = 0; k < 50; k++) x[k] = k % 3; "
        "f(75, 50, 3, in, x, y, out, z); long long sum = 0; "
        "for (int k = 0; k < 3750; k++) sum += (long long)(out[k] * (1 + k % 3)); "
        'printf("%lld\\n", sum); return 0; }\n'
    )


def with_stdio(code: str) -> str:
    return "#include <stdio.h>\n" + code


def test_a_transpose_loads_along_the_read_and_stores_along_the_store() -> None:
    variant = tiled(analysed(GOLDEN / "shared_tiling" / "transpose_flat.c"))
    code = variant.code
    assert (
        "transpose_scale_kernel: 32x32 shared tiles of in[i * cols + j], loaded along 'j' "
        "and stored to out[j * rows + i] along 'i'"
    ) in variant.steps[-1].detail
    assert "__shared__ float tile_in[32][33];" in code
    # loads: threadIdx.x walks j, in's unit-stride index
    assert "const long long t_j = tile_col + threadIdx.x;" in code
    assert "tile_in[part][threadIdx.x] = in[i * cols + j];" in code
    # stores: threadIdx.x walks i, out's unit-stride index, reading the transposed slot
    assert "const long long t_i = tile_row + threadIdx.x;" in code
    assert "out[j * rows + i] = alpha * tile_in[threadIdx.x][part] + beta;" in code
    assert code.count("__syncthreads();") == 2
    assert "const dim3 block(32, 8);" in code
    assert "cudaify_blocks(trips_j, 32, 2147483647u), cudaify_blocks(trips_i, 32, 65535u)" in code


def test_a_strided_read_under_a_coalesced_store_is_staged_the_other_way() -> None:
    code = tiled(analysed(GOLDEN / "shared_tiling" / "transpose_2d.c")).code
    assert "__shared__ double tile_a[32][33];" in code
    # a[j][i] walks i: the loads put i on x; b[i][j] walks j: the stores put j on x
    assert "tile_a[threadIdx.x][part] = a[j][i];" in code
    assert (
        "b[i][j] = sqrt(tile_a[part][threadIdx.x] + shift) - 0.25 * tile_a[part][threadIdx.x];"
        in code
    )


@pytest.mark.parametrize("element", ["int", "double"])
def test_a_transpose_of_any_element_type_matches_the_cpu(
    element: str, program_of, tmp_path
) -> None:
    from cudaify.backend.compare import compare

    source = with_stdio(transposing("out[j * rows + i] = s * in[i * cols + j] - x[j];", element))
    program = program_of(source)
    code = tiled(program).code
    assert f"__shared__ {element} tile_in[32][33];" in code
    # x[j] is one element per warp once i is on x: a broadcast, left in global memory
    assert "out[j * rows + i] = s * tile_in[threadIdx.x][part] - x[j];" in code
    assert nvcc_compiles(code, tmp_path) == ""
    gcc = toolchain.find_tool("gcc")
    (tmp_path / "ref.c").write_text(source)
    built = toolchain.run([gcc, "-O2", str(tmp_path / "ref.c"), "-o", str(tmp_path / "ref")])
    assert built.ok, built.errors()
    expected = toolchain.run([str(tmp_path / "ref")], timeout=60)
    actual = run_emulated(code, tmp_path)
    assert actual.ok, actual.errors() + actual.text()
    assert compare(expected.text(), actual.text()) is None


def test_every_read_walking_the_other_loop_gets_its_tile(program_of) -> None:
    statement = (
        "out[j * rows + i] = in[i * cols + j] * y[i * cols + j] + in[i * cols + j] + "
        "z[j * rows + i];"
    )
    variant = tiled(program_of(with_stdio(transposing(statement))))
    assert "shared tiles of in[i * cols + j], y[i * cols + j]," in variant.steps[-1].detail
    assert (
        "out[j * rows + i] = tile_in[threadIdx.x][part] * tile_y[threadIdx.x][part] + "
        "tile_in[threadIdx.x][part] + z[j * rows + i];"
    ) in variant.code


def test_a_transpose_whose_read_array_is_written_is_refused(program_of) -> None:
    program = program_of(
        "void lower_half(int n, float *a)\n{\n    for (int i = 0; i < n; i++)\n"
        "        for (int j = 0; j < n; j++)\n"
        "            a[(j + n) * n + i] = 2.0f * a[i * n + j];\n}\n"
        "int main(void) { float a[2 * 64 * 64] = {0}; lower_half(64, a); return (int)a[4096]; }\n"
    )
    reason = refusal(program)
    assert "as a transpose:" in reason
    assert "'a[i * n + j]' reads an array the kernel writes" in reason


def test_a_transpose_with_an_inner_loop_is_refused(program_of) -> None:
    program = program_of(
        with_stdio(
            transposing(
                "for (int k = 0; k < 4; k++) t += in[i * cols + j] * (float)(k + 1);\n"
                "            out[j * rows + i] = t;",
                before="float t = 0.0f;",
            )
        )
    )
    reason = refusal(program)
    assert "as a transpose: line" in reason and "has an inner loop" in reason


def test_a_copy_that_is_not_transposed_needs_no_staging(program_of) -> None:
    reason = refusal(
        program_of(with_stdio(transposing("out[i * cols + j] = s * in[i * cols + j];")))
    )
    assert (
        "as a transpose: kernel 'f_kernel': no read of an array the kernel never writes walks "
        "memory along 'i' while the stores walk along 'j'"
    ) in reason


def test_a_transposed_read_under_a_condition_is_not_staged(program_of) -> None:
    statement = "out[j * rows + i] = j > 3 ? in[i * cols + j] : s;"
    reason = refusal(program_of(with_stdio(transposing(statement))))
    assert "'in[i * cols + j]' is not read by every iteration" in reason


def test_stores_along_different_loops_are_refused(program_of) -> None:
    statement = "out[j * rows + i] = in[i * cols + j];\n            z[i * cols + j] = 1;"
    reason = refusal(program_of(with_stdio(transposing(statement))))
    assert "does not walk memory along the same one mapped loop as the other stores" in reason


def test_the_check_accepts_the_transpose_and_finds_a_skipped_barrier() -> None:
    program = analysed(GOLDEN / "shared_tiling" / "transpose_flat.c")
    before = offloaded(program)
    after = TILING.apply_rule(before, Context(program)).variant
    assert after is not None
    assert TILING.check(before, after, Context(program)) == []
    guarded = after.code.replace(
        "            __syncthreads();\n            for (int part",
        "            if (threadIdx.y == 0) __syncthreads();\n            for (int part",
        1,
    )
    assert guarded != after.code
    problems = TILING.check(before, Variant(guarded, after.steps), Context(program))
    assert any("inside a if statement" in p.message for p in problems)


@pytest.mark.gpu
def test_the_transpose_benchmark_staged_on_a_gpu_prints_what_gcc_prints(tmp_path) -> None:
    from cudaify.backend.compare import compare

    source = Path(__file__).resolve().parents[2] / "benchmarks" / "linalg" / "transpose.c"
    variant = tiled(analysed(source))
    assert "loaded along 'j' and stored to out[j * rows + i] along 'i'" in variant.steps[-1].detail
    gcc = toolchain.find_tool("gcc")
    reference = toolchain.run([gcc, "-O2", str(source), "-o", str(tmp_path / "ref")])
    assert reference.ok, reference.errors()
    expected = toolchain.run([str(tmp_path / "ref")], timeout=120)
    (tmp_path / "transpose.cu").write_text(variant.code)
    nvcc = toolchain.find_tool("nvcc")
    built = toolchain.run(
        [nvcc, "-O2", str(tmp_path / "transpose.cu"), "-o", str(tmp_path / "gpu")], timeout=240
    )
    assert built.ok, built.errors()
    actual = toolchain.run([str(tmp_path / "gpu")], timeout=120)
    assert actual.returncode == expected.returncode == 0, actual.errors()
    assert compare(expected.text(), actual.text()) is None


def test_the_search_prices_tiles_dealt_to_the_threads_per_output() -> None:
    """The benchmark transpose (2900 x 1700 floats): the tiled kernel deals each 32 x 32
    tile's rows to 32 x 8 threads, 4 rows each, and both its global accesses are coalesced
    where the plain kernel's store is strided. Its price was 7.5x the plain kernel's (every
    dealt row read as 32 more outputs, every block loop as one output per thread), so the
    search built it after every other child; it is now the cheaper of the two."""
    from cudaify.backend.cost import predict

    program = analysed(Path(__file__).parents[2] / "benchmarks" / "linalg" / "transpose.c")
    plain, staged = predict(offloaded(program)), predict(tiled(program))
    assert plain is not None and staged is not None
    assert staged.kernel < plain.kernel / 2
