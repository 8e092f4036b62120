from __future__ import annotations

import pytest
from pattern_golden import applied, nvcc_errors, same_output_as_gcc
from transforms_support import GOLDEN, analysed

from cudaify.core import Variant
from cudaify.transforms import get
from cudaify.transforms.base import Context
from cudaify.transforms.structure import structural_problems

CASES = {
    "bytes": ("atomic_privatize",),
    "weighted": ("offload", "atomic_privatize"),
    "words": ("atomic_privatize",),
}
ATOMIC = get("atomic_privatize")


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden_output_is_stable_and_compiles(case: str, update_golden: bool, tmp_path) -> None:
    program = analysed(GOLDEN / "atomic_privatize" / f"{case}.c")
    variant = applied(program, *CASES[case])
    expected = GOLDEN / "atomic_privatize" / f"{case}.cu"
    if update_golden or not expected.exists():
        expected.write_text(variant.code)
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
    assert "const int privatize = shared_bytes <= 49152;" in host
    # the original loop stays as the host's fallback
    assert "/* cudaify: host fallback" in host and "hist[buf[i]] += 1u;" in host


def test_decrements_subtract_and_both_arrays_are_privatized() -> None:
    program = analysed(GOLDEN / "atomic_privatize" / "weighted.c")
    variant = applied(program, "offload", "atomic_privatize")
    code = variant.code
    assert variant.methods == ("offload", "atomic_privatize")
    kernel = code[code.index("__global__ void bin_atomic") :]
    assert "cudaify_subtract_at(count, local_count, extent_count, (long long)(k), (1)," in kernel
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


def test_check_wants_atomics_and_a_launch() -> None:
    program = analysed(GOLDEN / "atomic_privatize" / "bytes.c")
    before = Variant(program.source)
    assert len(ATOMIC.check(before, before, Context(program))) == 2
    assert ATOMIC.check(before, applied(program, "atomic_privatize"), Context(program)) == []


@pytest.mark.gpu
@pytest.mark.parametrize("case", sorted(CASES))
def test_golden_output_prints_what_gcc_prints(case: str, tmp_path) -> None:
    same_output_as_gcc(
        GOLDEN / "atomic_privatize" / f"{case}.c",
        GOLDEN / "atomic_privatize" / f"{case}.cu",
        tmp_path,
    )
