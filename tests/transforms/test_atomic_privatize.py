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
    "bytes": ("atomic_privatize",),
    "clamped": ("atomic_privatize",),
    "weighted": ("offload", "atomic_privatize"),
    "words": ("atomic_privatize",),
}
ATOMIC = get("atomic_privatize")


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden_output_is_stable_and_compiles(case: str, update_golden: bool, tmp_path) -> None:
    program = analysed(GOLDEN / "atomic_privatize" / f"{case}.c")
    variant = applied(program, *CASES[case])
    expected = GOLDEN / "atomic_privatize" / f"{case}.cu"
    if update_golden:
        expected.write_text(variant.code)
    assert expected.exists(), f"{expected.name} is missing: rerun with --update-golden to write it"
    assert variant.code == expected.read_text(), f"rerun with --update-golden to accept {case}.cu"
    assert structural_problems(program, variant.code, ATOMIC) == []
    assert nvcc_errors(variant.code, tmp_path) == ""


def test_updates_become_device_helper_calls_with_the_earlier_loops_extent() -> None:
    program = analysed(GOLDEN / "atomic_privatize" / "bytes.c")
    code = applied(program, "atomic_privatize").code
    kernel = code[code.index("__global__ void histogram_atomic") : code.index("\nvoid histogram(")]
    assert (
        "cudaify_add_at(hist, local_hist, extent_hist, (long long)(buf[i]), (1u), d_outside);"
        in kernel
    )
    assert "hist[buf[i]]" not in kernel
    host = code[code.index("\nvoid histogram(") :]
    # the extent comes from the loop that zeroes hist[0..256)
    assert "(size_t)(256) * sizeof(unsigned int)" in host
    # one private copy per warp: 8 copies of 1 KB fit in 16 KB
    assert "const int copies = shared_bytes > 49152 ? 0 : fit >= 8 ? 8 : " in host
    assert "<<<blocks, 256, (size_t)copies * shared_bytes>>>" in host
    # the original loops stay as the host's fallback
    fallback = host[host.index("/* cudaify: host fallback") :]
    assert "hist[b] = 0u;" in fallback and "hist[buf[i]] += 1u;" in fallback


def test_the_zeroing_loop_right_before_becomes_a_device_memset() -> None:
    program = analysed(GOLDEN / "atomic_privatize" / "bytes.c")
    code = applied(program, "atomic_privatize").code
    host = code[code.index("\nvoid histogram(") :]
    device = host[: host.index("/* cudaify: host fallback")]
    assert "hist[b] = 0u;" not in device
    assert (
        "CUDAIFY_CHECK(cudaMemsetAsync(d_hist, 0, (size_t)(256) * sizeof(unsigned int)));" in device
    )
    # nothing to put back: the host's run zeroes again
    assert "cudaMemcpyDeviceToDevice" not in device
    detail = applied(program, "atomic_privatize").steps[-1].detail
    assert detail.endswith("(hist zeroed on the device)")


def test_arrays_not_zeroed_before_are_saved_and_put_back_for_the_host(program_of) -> None:
    program = program_of(
        "void f(int n, const int *key, int m, long long *h)\n{\n"
        "    for (int b = 0; b < 64; b++)\n        h[b] = h[b] / 2;\n"
        "    for (int i = 0; i < n; i++)\n        h[key[i] % m] += 2;\n}\n"
        "int main(void) { int k[2] = {1, 2}; long long h[64] = {0}; f(2, k, 64, h);\n"
        "    return (int)h[1]; }\n"
    )
    code = applied(program, "atomic_privatize").code
    host = code[code.index("\nvoid f(") :]
    device = host[: host.index("/* cudaify: host fallback")]
    assert "h[b] = h[b] / 2;" in host[: host.index("{\n        /* cudaify: these updates")]
    assert "cudaMemsetAsync(d_h," not in device
    copy = "(size_t)(64) * sizeof(long long), cudaMemcpyDeviceToDevice));"
    assert f"CUDAIFY_CHECK(cudaMemcpyAsync(d_saved, d_h, {copy}" in device
    assert "if (outside) { /* the host runs the loop on the values it had */\n" in device
    assert f"CUDAIFY_CHECK(cudaMemcpyAsync(d_h, d_saved, {copy}" in device


def test_data_residency_maps_every_array_of_the_launch() -> None:
    program = analysed(GOLDEN / "atomic_privatize" / "clamped.c")
    variant = applied(program, "atomic_privatize", "data_residency")
    assert variant.methods == ("atomic_privatize", "data_residency")
    code = variant.code
    for mapped in ("key", "count", "weight", "hist"):
        assert f"cudaify_map({mapped}, " in code
        assert f"cudaify_malloc((void **)&d_{mapped}," not in code
    # one scope around both loops of main that call the wrappers (the key and hist
    # arrays stay on the device from the first to the second); no host statement inside
    # the wrapper's device block needed a barrier
    main = code[code.index("int main(void)") :]
    assert code.count("cudaify_scope_begin();") == 1
    begin, end = main.index("cudaify_scope_begin();"), main.index("cudaify_scope_end();")
    assert (
        begin
        < main.index("for (int r = 0; r < 4; r++)")
        < main.index("for (int r = 0; r < 3; r++)")
        < end
    )
    device = code[code.index("\nvoid clamped(") : code.index("/* cudaify: host fallback")]
    assert "cudaify_host_" not in device


def test_decrements_subtract_and_both_arrays_are_privatized() -> None:
    program = analysed(GOLDEN / "atomic_privatize" / "weighted.c")
    variant = applied(program, "offload", "atomic_privatize")
    code = variant.code
    assert variant.methods == ("offload", "atomic_privatize")
    kernel = code[code.index("__global__ void bin_atomic") :]
    assert "cudaify_subtract_at(count, local_count, extent_count, (long long)(k), (1)," in kernel
    # offload ran the zeroing loop on the device already: the arrays are saved instead
    assert "cudaMemsetAsync(d_count" not in code and "cudaMemsetAsync(d_weight" not in code
    assert "cudaMemcpyAsync(d_saved + (cudaify_aligned(" in code
    assert "cudaify_add_at(weight, local_weight, extent_weight, (long long)(k), (w[i])," in kernel
    assert "cudaify_aligned((size_t)(nbins) * sizeof(int)) + " in code
    # the fallback loop is not rewritten a second time
    again = ATOMIC.applies(variant, Context(program))
    assert again is not None


SOURCES = {
    "read_of_updated": (
        "void f(int n, const int *key, int *h)\n{\n    for (int b = 0; b < 64; b++)\n"
        "        h[b] = 0;\n    for (int i = 0; i < n; i++)\n        h[key[i]] += h[0];\n}\n",
        "",
    ),
    "fractional_into_int": (
        "void f(int n, const int *key, const double *w, int *h)\n{\n"
        "    for (int b = 0; b < 64; b++)\n        h[b] = 0;\n"
        "    for (int i = 0; i < n; i++)\n        h[key[i] & 63] += w[i];\n}\n",
        "",
    ),
    "unknown_extent": (
        "void f(int n, const int *key, int *h)\n{\n"
        "    for (int i = 0; i < n; i++)\n        h[key[i]] += 1;\n}\n"
        # callers passing arrays of different sizes: no one extent for h
        "void g(void) { int k[2] = {0, 1}; int h[8]; f(2, k, h); }\n",
        "",
    ),
}


@pytest.mark.parametrize("case", sorted(SOURCES))
def test_refusals(case: str, program_of) -> None:
    source, _ = SOURCES[case]
    program = program_of(
        source + "int main(void) { int k[2] = {1, 2}; double w[2] = {0.5, 0.5}; int h[64];\n"
        "    (void)w; f(2, k, h); return h[1]; }\n"
        if "double" not in source
        else source + "int main(void) { int k[2] = {1, 2}; double w[2] = {0.5, 0.5}; int h[64];\n"
        "    f(2, k, w, h); return h[1]; }\n"
    )
    reason = ATOMIC.applies(Variant(program.source), Context(program))
    assert reason is not None
    assert ATOMIC.apply_rule(Variant(program.source), Context(program)).variant is None


def test_refusal_reasons_name_the_problem(program_of) -> None:
    program = program_of(
        "void f(int n, const int *key, const double *w, int *h)\n{\n"
        "    for (int b = 0; b < 64; b++)\n        h[b] = 0;\n"
        "    for (int i = 0; i < n; i++)\n        h[key[i] & 63] += w[i];\n}\n"
        "int main(void) { int k[2] = {1, 2}; double w[2] = {0.5, 0.5}; int h[64];\n"
        "    f(2, k, w, h); return h[1]; }\n"
    )
    reason = ATOMIC.applies(Variant(program.source), Context(program))
    assert reason is not None
    assert reason.startswith(f"{program.path}:5:5: atomic_privatize: cannot rewrite loop 'i'")
    assert reason.endswith("cannot prove that 'w[i]' is an integer, as 'h' holds int")
    program = program_of(
        "void f(int n, const int *key, int *h)\n{\n"
        "    for (int i = 0; i < n; i++)\n        h[key[i]] += 1;\n}\n"
        "void g(void) { int k[2] = {0, 1}; int h[8] = {0}; f(2, k, h); }\n"
        "int main(void) { int k[2] = {1, 2}; int h[64] = {0}; f(2, k, h); return h[1]; }\n"
    )
    reason = ATOMIC.applies(Variant(program.source), Context(program))
    assert reason is not None and "the extent of 'h' is unknown" in reason
    # one fixed-size array at every call gives the extent
    program = program_of(
        program.source.replace("void g(void)", "static void unused(void)").replace(
            "f(2, k, h); }\nint main", "(void)k; (void)h; }\nint main"
        )
    )
    assert ATOMIC.applies(Variant(program.source), Context(program)) is None


ZEROING = {
    "zeroes_all": ("h[b] = 0;", "int h[64]", True),
    "float_zero": ("h[b] = 0.0f;", "float h[64]", True),
    "hex_zero": ("h[b] = 0x0u;", "int h[64]", True),
    "negative_zero": ("h[b] = -0.0f;", "float h[64]", False),
    "not_zero": ("h[b] = 1;", "int h[64]", False),
    "part_of_the_extent": ("h[b] = 0;", "int h[64]", False),  # b < 32: h's extent is 64
    "another_array": ("h[b] = 0; g[b] = 0;", "int h[64]", False),
}


@pytest.mark.parametrize("case", sorted(ZEROING))
def test_only_a_loop_that_zeroes_updated_arrays_over_their_extent_moves(case, program_of) -> None:
    from cudaify.transforms.atomic_privatize import _plans

    store, declared, moves = ZEROING[case]
    bound = "32" if case == "part_of_the_extent" else "64"
    element = declared.split()[0]
    program = program_of(
        f"{element} g[64];\n"
        f"void f(int n, const int *key, {element} *h)\n{{\n"
        f"    for (int b = 0; b < {bound}; b++) {{ {store} }}\n"
        "    for (int i = 0; i < n; i++)\n        h[key[i] & 63] += 1;\n}\n"
        f"int main(void) {{ int k[2] = {{1, 2}}; {declared}; f(2, k, h); return (int)h[1]; }}\n"
    )
    plans, reasons = _plans(Variant(program.source), program)
    assert len(plans) == 1, reasons
    assert (plans[0].zeroing is not None) == moves


def test_a_statement_between_keeps_the_zeroing_loop_on_the_host(program_of) -> None:
    from cudaify.transforms.atomic_privatize import _plans

    program = program_of(
        "void f(int n, const int *key, int *h)\n{\n"
        "    for (int b = 0; b < 64; b++)\n        h[b] = 0;\n"
        "    h[0] = n;\n"
        "    for (int i = 0; i < n; i++)\n        h[key[i] & 63] += 1;\n}\n"
        "int main(void) { int k[2] = {1, 2}; int h[64]; f(2, k, h); return h[0]; }\n"
    )
    plans, reasons = _plans(Variant(program.source), program)
    assert len(plans) == 1, reasons
    assert plans[0].zeroing is None
    code = applied(program, "atomic_privatize").code
    assert "cudaMemsetAsync(d_h," not in code and "cudaMemcpyAsync(d_saved" in code


def test_check_wants_atomics_and_a_launch() -> None:
    program = analysed(GOLDEN / "atomic_privatize" / "bytes.c")
    before = Variant(program.source)
    problems = ATOMIC.check(before, before, Context(program))
    assert [p.message for p in problems] == ["the answer changes nothing but comments and layout"]
    assert ATOMIC.check(before, applied(program, "atomic_privatize"), Context(program)) == []


@pytest.mark.gpu
@pytest.mark.parametrize("case", sorted(CASES))
def test_golden_output_prints_what_gcc_prints(case: str, tmp_path) -> None:
    same_output_as_gcc(
        GOLDEN / "atomic_privatize" / f"{case}.c",
        GOLDEN / "atomic_privatize" / f"{case}.cu",
        tmp_path,
    )


EMULATED = {
    "clamped": ("atomic_privatize",),
    "clamped_resident": ("atomic_privatize", "data_residency"),
}


@pytest.mark.parametrize("case", sorted(EMULATED))
def test_emulated_on_the_cpu_prints_what_gcc_prints(case: str, tmp_path) -> None:
    """Every path of the kernels and host code: per-warp copies, one copy, global
    atomics, the zeroing on the device, saving and putting back, the host's run."""
    from emulation import gcc_output

    source = GOLDEN / "atomic_privatize" / f"{case.split('_')[0]}.c"
    emulated = _emulated(applied(analysed(source), *EMULATED[case]).code, tmp_path)
    assert emulated.ok, emulated.errors()
    assert emulated.text() == gcc_output(source, tmp_path)


def test_histograms_into_std_vectors_emulated_print_what_gpp_prints(tmp_path) -> None:
    """std::vector<int> bins and std::vector<float>/<unsigned char> inputs: the elements
    are copied through .data(), the extent is .size() (the benchmark, small)."""
    from emulation import gcc_output

    source = Path(__file__).resolve().parents[2] / "benchmarks" / "cpp" / "histogram_vector.cpp"
    variant = applied(analysed(source), "atomic_privatize")
    assert "value_bins.data()" in variant.code and "pixel_bins.data()" in variant.code
    emulated = _emulated(variant.code, tmp_path, "-DBENCH_SMALL")
    assert emulated.ok, emulated.errors()
    assert emulated.text() == gcc_output(source, tmp_path, flags=("-DBENCH_SMALL",))


def _emulated(code: str, tmp_path: Path, *flags: str):  # type: ignore[no-untyped-def]
    """`code` run by the CPU emulator of atomics and dynamic shared memory."""
    import re

    from emulation import run_emulated

    code = re.sub(r"#include <cuda/std/\w+>\n", "", code)
    code = re.sub(
        r"extern __shared__ unsigned long long (\w+)\[\];",
        r"unsigned long long *\1 = cudaify_emulated_dynamic_shared;",
        code,
    )
    header = Path(__file__).resolve().parent / "atomic_emulation.h"
    return run_emulated(code, tmp_path, timeout=600, flags=("-include", str(header), *flags))
