from __future__ import annotations

import re
from pathlib import Path

import pytest
from pattern_golden import applied, emulated_output_problem, gpu_output_problem, matches_golden
from transforms_support import GOLDEN, analysed

from cudaify.core import Variant
from cudaify.transforms import get
from cudaify.transforms.base import Context
from cudaify.transforms.sort import plan_sorts, sort_problems

SORT = get("sort")
KEYS = GOLDEN / "sort" / "keys.cpp"
HEADER = Path(__file__).resolve().parent / "sort_emulation.h"


def test_golden_output_is_stable_and_compiles(update_golden: bool, tmp_path) -> None:
    matches_golden(KEYS, "sort", update_golden, tmp_path)


def test_each_range_and_order_is_read_from_the_call() -> None:
    program = analysed(KEYS)
    plans, reasons = plan_sorts(program.source, program)
    found = {(p.function, p.host, p.count, p.key_type, p.descending) for p in plans}
    assert found == {
        ("whole", "keys.data()", "(long long)(keys.size())", "int", False),
        ("middle", "keys.data() + (from)", "(long long)(to) - (from)", "unsigned", False),
        ("pointer_range", "values", "(long long)(n)", "float", False),
        ("descending", "keys.data()", "(long long)(keys.size())", "long", True),
        ("by_lambda", "keys", "(long long)(n)", "short", True),  # b < a
        ("stable", "values.data()", "(long long)(values.size())", "double", False),
    }
    # a comparator of anything but the keys themselves stays on the host, and says so
    assert len(reasons) == 1
    assert reasons[0].startswith(f"{KEYS}:54:5: sort: cannot run")
    assert "is not a plain '<' or '>' of its two keys" in reasons[0]


@pytest.mark.parametrize("methods", [("sort",), ("sort", "data_residency")])
def test_emulated_on_the_cpu_prints_what_gpp_prints(methods: tuple[str, ...], tmp_path) -> None:
    """The emulated CUB leaves the sorted keys in the spare buffer: without the copy back,
    or with a range copied wrong, the output differs."""
    code = applied(analysed(KEYS), *methods).code
    if "data_residency" in methods:
        assert code.count("cudaify_map(") >= 6 and "cudaify_scope_begin();" in code
    assert emulated_output_problem(code, KEYS, tmp_path, HEADER) is None


REFUSED = {
    "struct keys": (
        "struct P { int x; };\nbool operator<(const P &a, const P &b) { return a.x < b.x; }\n"
        "void f(std::vector<P> &v) { std::sort(v.begin(), v.end()); }\n",
        "not of an arithmetic type",
    ),
    "two containers": (
        "void f(std::vector<int> &a, std::vector<int> &b) { std::sort(a.begin(), b.end()); }\n",
        "does not end at a.end()",
    ),
    "a bound with a side effect": (
        "void f(int *p, int n) { std::sort(p, p + n--); }\n",
        "has a side effect",
    ),
    "a comparator object": (
        "struct By { bool operator()(int a, int b) const { return a % 10 < b % 10; } };\n"
        "void f(std::vector<int> &v) { std::sort(v.begin(), v.end(), By()); }\n",
        "is not std::less, std::greater",
    ),
    "a lambda of one key": (
        "void f(std::vector<int> &v) { std::sort(v.begin(), v.end(), "
        "[](int a, int b) { return a < 0; }); }\n",
        "is not a plain '<' or '>' of its two keys",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refusals_name_the_call_and_why(case: str, tmp_path) -> None:
    body, why = REFUSED[case]
    path = tmp_path / "refused.cpp"
    path.write_text(
        "#include <algorithm>\n#include <vector>\n" + body + "int main() { return 0; }\n"
    )
    program = analysed(path)
    reason = SORT.applies(Variant(program.source), Context(program))
    assert reason is not None and "sort: cannot run 'std::sort(" in reason, reason
    assert why in reason, reason


def test_a_user_function_called_sort_is_not_std_sort(tmp_path) -> None:
    path = tmp_path / "own.cpp"
    path.write_text(
        "void sort(int *p, int *e) { for (; p < e; p++) *p = 0; }\n"
        "void f(int *p, int n) { sort(p, p + n); }\nint main() { return 0; }\n"
    )
    program = analysed(path)
    assert SORT.applies(Variant(program.source), Context(program)) == "no std::sort call"


def test_the_postcondition_refuses_decoys() -> None:
    program = analysed(KEYS)
    before = program.source
    after = applied(program, "sort").code
    assert sort_problems(before, after) == []
    # the input plus a comment naming CUB's sort
    commented = before + "\n/* cub::DeviceRadixSort::SortKeys(storage, bytes, keys, n); */\n"
    assert [p.message for p in sort_problems(before, commented)] == [
        "no std::sort call was replaced by a device sort"
    ]
    # a sort deleted, CUB asked only for its storage size
    deleted = before.replace(
        "    std::sort(keys.begin(), keys.end());\n",
        "    { size_t b = 0; cub::DoubleBuffer<int> k(0, 0);\n"
        "      cub::DeviceRadixSort::SortKeys(nullptr, b, k, 10); }\n",
    )
    assert [p.message for p in sort_problems(before, deleted)] == [
        "whole() lost 1 sort(s) but has no device sort for them"
    ]
    # CUB's sort with storage, but the keys never copied back
    block = after[after.index("long long whole(") :]
    block = block[: block.index("\n}\n")]
    uncopied = after.replace(
        block, re.sub(r"CUDAIFY_CHECK\(cudaMemcpy\(keys\.data\(\)[^\n]*\n", "", block)
    )
    assert "whole() lost 1 sort(s) but has no device sort for them" in [
        p.message for p in sort_problems(before, uncopied)
    ]
    # the device sort moved out of the function that lost its call, into one never called
    start = after.index("long long whole(std::vector<int> &keys)\n{\n") + len(
        "long long whole(std::vector<int> &keys)\n{\n"
    )
    end = after.index("    long long sum = 0;", start)
    device_block = after[start:end]
    moved = after[:start] + after[end:]
    moved = moved.replace(
        "int main(void)",
        "void unused(std::vector<int> &keys)\n{\n" + device_block + "}\n\nint main(void)",
    )
    assert [p.message for p in sort_problems(before, moved)] == [
        "whole() lost 1 sort(s) but has no device sort for them"
    ]


@pytest.mark.gpu
@pytest.mark.parametrize("methods", [("sort",), ("sort", "data_residency")])
def test_sorted_on_the_gpu_prints_what_gpp_prints(methods: tuple[str, ...], tmp_path) -> None:
    code = applied(analysed(KEYS), *methods).code
    assert gpu_output_problem(code, KEYS, tmp_path) is None


def test_the_same_call_in_two_functions_is_placed_in_each(tmp_path) -> None:
    """A call's place is looked for in its own function: two functions sorting the same
    range with the same comparator each get their own line."""
    path = tmp_path / "twice.cpp"
    path.write_text(
        "#include <algorithm>\n#include <vector>\n"
        "struct By { bool operator()(int a, int b) const { return a % 10 < b % 10; } };\n"
        "void f(std::vector<int> &v) { std::sort(v.begin(), v.end(), By()); }\n"
        "void g(std::vector<int> &v) { std::sort(v.begin(), v.end(), By()); }\n"
        "int main() { return 0; }\n"
    )
    program = analysed(path)
    _, reasons = plan_sorts(program.source, program)
    assert sorted(r.split(": sort: ")[0] for r in reasons) == [f"{path}:4:31", f"{path}:5:31"]
