from __future__ import annotations

import re
from pathlib import Path

import pytest
from pattern_golden import applied, emulated_output_problem, gpu_output_problem, matches_golden
from transforms_support import GOLDEN, analysed

from cudaify.core import Variant
from cudaify.transforms import get
from cudaify.transforms.scatter import scatter_problems

SCATTER = get("scatter")
PERMUTE = GOLDEN / "scatter" / "permute.cpp"
HEADER = Path(__file__).resolve().parent / "atomic_emulation.h"


def test_golden_output_is_stable_and_compiles(update_golden: bool, tmp_path) -> None:
    matches_golden(PERMUTE, "scatter", update_golden, tmp_path)


def test_stores_through_index_arrays_are_found_and_the_others_say_why() -> None:
    program = analysed(PERMUTE)
    plans, reasons = SCATTER.plans(Variant(program.source), program)
    assert [SCATTER.describe_plan(p) for p in plans] == [
        "permute: loop 'i' at line 11 -> scatter into out through perm, checked on the device",
        "last_wins: loop 'i' at line 23 -> scatter into table through keys, checked on the device",
    ]
    assert [r.split(": scatter: ")[1] for r in reasons] == [
        "cannot rewrite loop 'i' in 'shifted_add': the extent of array 'acc' is unknown",
        "cannot rewrite loop 'i' in 'neighbours': line 30: the stored value reads 'out'",
        "cannot rewrite loop 'i' in 'self_index': line 36: the stored value has a side effect",
    ]
    code = applied(program, "scatter").code
    # each target is marked once; a repeat or an index outside the array raises the flag
    assert "atomicAdd(&cudaify_marks[cudaify_mark], 1) != 0) {" in code
    assert "const long long cudaify_at = (long long)(perm[i]);" in code
    # the flag puts the saved device copy back and the host runs the original loop
    assert "if (repeated_2) /* the host runs the loop on the values it had */" in code
    assert (
        "        if (repeated_2) {\n            /* cudaify: host fallback: no work for the GPU, "
        "or keys repeats an index or leaves the array */\n"
        "            for (int i = 0; i < n; i++)\n                table[keys[i]] = values[i];"
    ) in code


def test_emulated_on_the_cpu_prints_what_gpp_prints(tmp_path) -> None:
    """Separate "device" buffers: last_wins' keys repeat, so only the fallback (the saved
    copy put back, the host's loop) gives g++'s table; the permutations run on the device."""
    code = applied(analysed(PERMUTE), "scatter").code
    assert emulated_output_problem(code, PERMUTE, tmp_path, HEADER) is None


def test_without_the_check_a_repeated_index_gives_another_table(tmp_path) -> None:
    """The check is what keeps last_wins right: the same program with the flag never raised
    prints a different table, so the emulated test above can fail."""
    code = applied(analysed(PERMUTE), "scatter").code
    unchecked = code.replace("*cudaify_repeated = 1;", "(void)cudaify_repeated;")
    assert emulated_output_problem(unchecked, PERMUTE, tmp_path, HEADER) is not None


def test_the_postcondition_refuses_decoys() -> None:
    program = analysed(PERMUTE)
    after = applied(program, "scatter").code
    assert scatter_problems(after) == []
    message = (
        "no launch of a kernel that marks its targets with atomicAdd, with the original loop "
        "kept as the host fallback"
    )
    # the input plus comments
    commented = program.source + "\n/* atomicAdd(&marks[k], 1); kernel<<<1, 1>>>(); */\n"
    assert [p.message for p in scatter_problems(commented)] == [message]
    # the kernels kept, no fallback loop
    no_fallback = re.sub(r"/\* cudaify: host fallback[^\n]*\n", "", after)
    assert [p.message for p in scatter_problems(no_fallback)] == [message]
    # the kernels defined but never launched
    unlaunched = re.sub(r"\w+_scatter<<<[^\n]*\n", "", after)
    assert [p.message for p in scatter_problems(unlaunched)] == [message]


@pytest.mark.gpu
def test_scattered_on_the_gpu_prints_what_gpp_prints(tmp_path) -> None:
    code = applied(analysed(PERMUTE), "scatter").code
    assert gpu_output_problem(code, PERMUTE, tmp_path) is None
