from __future__ import annotations

from pathlib import Path

import pytest
from pattern_golden import applied, emulated_output_problem, gpu_output_problem, matches_golden
from transforms_support import GOLDEN, analysed

from cudaify.core import Variant
from cudaify.transforms import get
from cudaify.transforms.base import Context
from cudaify.transforms.compact import compact_problems

COMPACT = get("compact")
APPENDS = GOLDEN / "compact" / "appends.cpp"
HEADER = Path(__file__).resolve().parent / "select_emulation.h"


def test_golden_output_is_stable_and_compiles(update_golden: bool, tmp_path) -> None:
    matches_golden(APPENDS, "compact", update_golden, tmp_path)


def test_filters_compact_and_plain_appends_write_by_index() -> None:
    program = analysed(APPENDS)
    plans, reasons = COMPACT.plans(Variant(program.source), program)
    assert [COMPACT.describe_plan(p) for p in plans] == [
        "keep_large: loop 'i' at line 11 -> stream compaction appended to out",
        "squares: loop 'i' at line 21 -> indexed writes appended to out",
        "odd_positions: loop 'i' at line 27 -> stream compaction appended to out",
    ]
    code = applied(program, "compact").code
    # the filter's value is computed only where the condition holds
    assert "const bool cudaify_keep = (x > limit && twice < 1900.0f);" in code
    assert "if (cudaify_keep)\n            values_out[t_i] = (float)(twice - limit);" in code
    # a plain append needs no flags and no CUB: every value lands at its own position
    squares = code[code.index("void squares(") :]
    squares = squares[: squares.index("\n}\n")]
    assert "cub::" not in squares and "const long long kept_out_2 = trips_i_2;" in squares
    # the vector keeps what it held: the values go after its old size
    assert "out.resize(size_out + (size_t)kept_out);" in code
    assert (
        "cudaMemcpy(out.data() + size_out, selected_out, (size_t)kept_out * sizeof(float)" in code
    )
    assert "long i = (long)(3 + t_i_3);" in code or "int i = (int)(3 + t_i_3);" in code
    assert [r.split(": compact: ")[1] for r in reasons] == [
        "cannot rewrite loop 'i' in 'running': line 37: the loop reads 'out', which it grows",
        "cannot rewrite loop 'i' in 'split': line 44: the append's if has an else",
        "cannot rewrite loop 'i' in 'twice': line 53: only local declarations with "
        "initialisers may come before the append",
    ]


def test_emulated_on_the_cpu_prints_what_gpp_prints(tmp_path) -> None:
    """Separate "device" buffers: a value appended out of order, twice or not at all, or
    the vector's old elements lost, changes the counts and the weighted sums."""
    code = applied(analysed(APPENDS), "compact").code
    assert emulated_output_problem(code, APPENDS, tmp_path, HEADER) is None


REFUSED = {
    "a struct": (
        "struct P { int x; };\nvoid f(const std::vector<int> &v, std::vector<P> &out) {\n"
        "    for (int i = 0; i < 5000; i++)\n        out.push_back(P{v[i]});\n}\n",
        "holds 'P', not an arithmetic type",
    ),
    "a side effect": (
        "int k;\nvoid f(const std::vector<int> &v, std::vector<int> &out) {\n"
        "    for (int i = 0; i < 5000; i++)\n        out.push_back(k++ + v[i]);\n}\n",
        "has a side effect",
    ),
    "another write": (
        "void f(std::vector<int> &v, std::vector<int> &out) {\n"
        "    for (int i = 0; i < 5000; i++) {\n        const int x = v[i];\n"
        "        v[i] = 0;\n        out.push_back(x);\n    }\n}\n",
        "only local declarations with initialisers may come before the append",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refusals_say_why(case: str, tmp_path) -> None:
    body, why = REFUSED[case]
    path = tmp_path / "refused.cpp"
    path.write_text("#include <vector>\n" + body + "int main() { return 0; }\n")
    program = analysed(path)
    reason = COMPACT.applies(Variant(program.source), Context(program))
    assert reason is not None and "compact: cannot rewrite loop 'i' in 'f'" in reason, reason
    assert why in reason, reason


def test_the_postcondition_refuses_decoys() -> None:
    program = analysed(APPENDS)
    before = program.source
    after = applied(program, "compact").code
    assert compact_problems(before, after) == []
    commented = (
        before + "\n/* out.resize(n); cudaMemcpy(out.data(), d, n, cudaMemcpyDeviceToHost); */\n"
    )
    assert [p.message for p in compact_problems(before, commented)] == [
        "no push_back loop was replaced"
    ]
    # the loop deleted, nothing appended instead
    start = before.index(
        "    for (int i = 0; i < n; i++)\n        out.push_back(a[i] * a[i] + 0.5);"
    )
    deleted = before[:start] + before[start:].split(";", 1)[1]
    assert [p.message for p in compact_problems(before, deleted)] == [
        "squares() no longer appends to out in a loop, and no launch and device copy append "
        "to it instead"
    ]
    # a launch that computes the values, but they are never copied into the vector
    squares = after[after.index("void squares(") :]
    squares = squares[: squares.index("\n}\n")]
    unappended = after.replace(
        squares, squares.replace("cudaMemcpy(out.data()", "cudaMemcpy(scratch")
    )
    assert [p.message for p in compact_problems(before, unappended)] == [
        "squares() no longer appends to out in a loop, and no launch and device copy append "
        "to it instead"
    ]


@pytest.mark.gpu
def test_appended_on_the_gpu_prints_what_gpp_prints(tmp_path) -> None:
    code = applied(analysed(APPENDS), "compact").code
    assert gpu_output_problem(code, APPENDS, tmp_path) is None
