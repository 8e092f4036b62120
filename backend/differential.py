"""Differential testing of one offloaded function.

The reference's C function and the candidate's host function of the same signature (the
one that copies, launches the kernels and copies back) are each built into a shared
library and called, in a separate process, on the same random inputs at several sizes,
including sizes that are not multiples of any block size and extents that differ from
each other. This catches what the program's single input hides: a bounds check off by
one, a grid too small for n, swapped extents.

A function is testable when the frontend knows every pointer parameter's extent (its
`ArrayData.count`, an expression of integer parameters) and every other parameter is
either such a size or a floating-point scalar. Anything else is skipped, with the reason."""

from __future__ import annotations

import ast
import re
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cudaify.backend.cache import Cache
from cudaify.backend.compile import COMPILE_TIMEOUT, Build, compile_cuda, compile_reference
from cudaify.core import Problem, toolchain
from cudaify.frontend.facts import Function, Program

CHILD = Path(__file__).with_name("differential_child.py")
SYMBOL = "cudaify_diff_fn"
# n = 1, under a warp, just past a 256-thread block, and a larger odd size; each further
# size parameter gets a slightly larger value so swapped extents show.
SIZE_BASES = (1, 31, 257, 1001)
MAX_ELEMENTS = 1 << 21
CTYPES = {
    "float": "c_float",
    "double": "c_double",
    "char": "c_byte",
    "signed char": "c_byte",
    "unsigned char": "c_ubyte",
    "short": "c_short",
    "unsigned short": "c_ushort",
    "int": "c_int",
    "unsigned": "c_uint",
    "unsigned int": "c_uint",
    "long": "c_long",
    "unsigned long": "c_ulong",
    "long long": "c_longlong",
    "unsigned long long": "c_ulonglong",
    "size_t": "c_size_t",
    "int32_t": "c_int32",
    "uint32_t": "c_uint32",
    "int64_t": "c_int64",
    "uint64_t": "c_uint64",
    "_Bool": "c_bool",
    "bool": "c_bool",
}
_QUALIFIERS = re.compile(r"\b(const|volatile|restrict|__restrict__|__restrict|signed(?= char))\b")


@dataclass(frozen=True)
class Outcome:
    status: str  # "passed" | "failed" | "skipped"
    detail: str
    cases: int = 0

    @property
    def problem(self) -> Problem | None:
        if self.status != "failed":
            return None
        return Problem("differential", self.detail)


def ctype_of(type_text: str) -> str | None:
    text = _QUALIFIERS.sub("", type_text).replace("*", " ")
    return CTYPES.get(" ".join(text.split()))


def eval_count(expression: str, sizes: dict[str, int]) -> int | None:
    """Value of a C extent like `n*m` or `(n + 2)`, or None if it is anything else."""
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError:
        return None

    def value(node: ast.AST) -> int | None:
        if isinstance(node, ast.Expression):
            return value(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.Name):
            return sizes.get(node.id)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            inner = value(node.operand)
            return None if inner is None else -inner
        if isinstance(node, ast.BinOp):
            left, right = value(node.left), value(node.right)
            if left is None or right is None:
                return None
            if isinstance(node.op, ast.Add):
                return left + right
            if isinstance(node.op, ast.Sub):
                return left - right
            if isinstance(node.op, ast.Mult):
                return left * right
            if isinstance(node.op, (ast.Div, ast.FloorDiv)) and right:
                return left // right
        return None

    return value(tree)


@dataclass(frozen=True)
class _Array:
    name: str
    ctype: str
    count: str
    first: str
    written: bool


def array_arguments(function: Function) -> dict[str, _Array]:
    found: dict[str, _Array] = {}
    for _, arrays in function.data:
        for data in arrays:
            ctype = ctype_of(data.elem_type)
            if data.count is None or ctype is None:
                continue
            previous = found.get(data.name)
            written = data.access != "read" or (previous is not None and previous.written)
            # One array in several nests: the extent that covers them all.
            count = data.count if previous is None else f"max({previous.count}, {data.count})"
            found[data.name] = _Array(data.name, ctype, count, data.first, written)
    return found


def _sizes_of(function: Function, arrays: dict[str, _Array]) -> list[str]:
    names = set()
    for array in arrays.values():
        names |= set(re.findall(r"[A-Za-z_]\w*", array.count + " " + array.first))
    return [p.name for p in function.params if p.name in names and not p.is_pointer]


def _testable(function: Function, known: Collection[str] = ()) -> str:
    """Why `function` cannot be called on synthetic inputs, or "". `known`: parameters
    whose values the caller gives (the program's own, for the region harness): an integer
    among them needs no meaning, it is passed as the program passes it."""
    arrays = array_arguments(function)
    sizes = {*_sizes_of(function, arrays), *known}
    for param in function.params:
        if param.is_pointer and param.name not in arrays:
            return f"the extent of '{param.name}' is unknown"
        if not param.is_pointer and ctype_of(param.type) is None:
            return f"parameter '{param.name}' has type '{param.type}'"
        if (
            not param.is_pointer
            and param.name not in sizes
            and "c_float" != ctype_of(param.type) != "c_double"
        ):
            return f"the meaning of integer parameter '{param.name}' is unknown"
    return ""


def plan_cases(function: Function) -> tuple[list[dict[str, Any]], str]:
    """The argument lists to test with, or ([], why the function is not testable)."""
    arrays = array_arguments(function)
    sizes = _sizes_of(function, arrays)
    why = _testable(function)
    if why:
        return [], why
    cases = []
    for number, base in enumerate(SIZE_BASES):
        values = {name: base + 2 * index for index, name in enumerate(sizes)}
        case = _case(function, arrays, values, seed=1000 + number)
        if case is not None:
            cases.append(case)
    return cases, "" if cases else "no size keeps the arrays within the test's memory"


def case_at(
    function: Function, sizes: dict[str, int], seed: int, max_elements: int
) -> tuple[dict[str, Any] | None, str]:
    """The arguments of one call of `function` at the given sizes (every integer parameter
    an extent depends on; any other integer parameter is called with its value here), or
    (None, why not)."""
    why = _testable(function, sizes)
    if why:
        return None, why
    arrays = array_arguments(function)
    missing = [name for name in _sizes_of(function, arrays) if name not in sizes]
    if missing:
        return None, f"the value of '{missing[0]}' is unknown"
    case = _case(function, arrays, sizes, seed, max_elements)
    return case, "" if case is not None else f"its arrays exceed {max_elements} elements"


def _case(
    function: Function,
    arrays: dict[str, _Array],
    sizes: dict[str, int],
    seed: int,
    max_elements: int = MAX_ELEMENTS,
) -> dict[str, Any] | None:
    lengths = {}
    for array in arrays.values():
        count = _extent(array.count, sizes)
        first = _extent(array.first, sizes)
        if count is None or first is None:
            return None
        lengths[array.name] = max(0, first + count)
    if sum(lengths.values()) > max_elements:
        return None
    # Integer arrays may hold indices: keep them within every array's extent.
    index_range = [0, max(1, min(lengths.values(), default=1))]
    args: list[dict[str, Any]] = []
    for index, param in enumerate(function.params):
        if param.is_pointer:
            array = arrays[param.name]
            integer = array.ctype not in ("c_float", "c_double")
            args.append(
                {
                    "kind": "array",
                    "name": param.name,
                    "ctype": array.ctype,
                    "length": lengths[param.name],
                    "compare": array.written,
                    "integer": integer,
                    "range": index_range,
                }
            )
        elif param.name in sizes:
            args.append(
                {"kind": "scalar", "ctype": ctype_of(param.type), "value": sizes[param.name]}
            )
        else:
            args.append(
                {"kind": "scalar", "ctype": ctype_of(param.type), "value": 0.75 + 0.125 * index}
            )
    return {"sizes": sizes, "seed": seed, "args": args, "returns": function.return_type != "void"}


def _extent(expression: str, sizes: dict[str, int]) -> int | None:
    parts = re.fullmatch(r"max\((.*), (.*)\)", expression)
    if parts:
        first, second = _extent(parts.group(1), sizes), _extent(parts.group(2), sizes)
        return None if first is None or second is None else max(first, second)
    return eval_count(expression, sizes)


def exported(source: str, name: str, cxx: bool) -> str:
    """The source with a pointer to `name` exported under a C name: static functions
    and C++ mangling stay out of the way. Appended, so no line number moves."""
    linkage = 'extern "C" ' if cxx else ""
    return f"{source}\n{linkage}void *{SYMBOL} = (void *)&{name};\n"


def candidate_library(
    program: Program,
    function_name: str,
    candidate_code: str,
    arch: str,
    cache: Cache,
    timeout: float = COMPILE_TIMEOUT,
) -> Build:
    """The candidate built as a shared library exporting `function_name` (see exported),
    nvcc cut at `timeout` seconds."""
    source_dir = Path(program.path).resolve().parent if program.path else None
    return compile_cuda(
        exported(candidate_code, function_name, True),
        program.flags,
        arch,
        cache=cache,
        source_dir=source_dir,
        shared=True,
        timeout=timeout,
    )


def differential_test(
    program: Program,
    function_name: str,
    candidate_code: str,
    *,
    arch: str,
    cache: Cache,
    rtol: float = 1e-4,
    atol: float = 1e-9,
    timeout: float = 120.0,
) -> Outcome:
    """Call `function_name` from the reference and from the candidate on the same random
    inputs at several sizes and compare what they write. Never raises for the candidate."""
    function = program.function(function_name)
    if function is None:
        return Outcome("skipped", f"no facts about '{function_name}'")
    cases, why = plan_cases(function)
    if not cases:
        return Outcome("skipped", f"'{function_name}' is not testable alone: {why}")
    source_dir = Path(program.path).resolve().parent if program.path else None
    reference = compile_reference(
        exported(program.source, function_name, program.language == "c++"),
        program.language,
        program.flags,
        cache=cache,
        source_dir=source_dir,
        shared=True,
    )
    candidate = candidate_library(program, function_name, candidate_code, arch, cache)
    for build, who in ((reference, "reference"), (candidate, "candidate")):
        if not build.ok:
            first = (build.diagnostics.splitlines() or [""])[0]
            return Outcome("skipped", f"the {who} does not build as a library: {first}")
    return _run_child(function, reference, candidate, cases, rtol, atol, timeout)


def _run_child(
    function: Function,
    reference: Build,
    candidate: Build,
    cases: list[dict[str, Any]],
    rtol: float,
    atol: float,
    timeout: float,
) -> Outcome:
    restype = None if function.return_type == "void" else ctype_of(function.return_type)
    spec = {
        "reference": str(reference.binary),
        "candidate": str(candidate.binary),
        "restype": restype,
        "cases": cases,
        "rtol": rtol,
        "atol": atol,
    }
    lines, done = toolchain.run_helper(CHILD, spec, timeout)
    results = [line for line in lines if "problem" in line]
    failed = next((line for line in results if line["problem"]), None)
    name = function.name
    if failed is not None:
        return Outcome(
            "failed", f"{name}({_sizes(failed['sizes'])}): {failed['problem']}", len(results)
        )
    if done.ok and len(results) == len(cases):
        return Outcome("passed", f"{name}: {len(cases)} sizes agree", len(cases))
    sizes = _sizes(cases[min(len(results), len(cases) - 1)]["sizes"])
    calling = next((line["calling"] for line in reversed(lines) if "calling" in line), None)
    if calling == "reference":
        # The original itself fails on our inputs: the facts do not describe its needs.
        return Outcome("skipped", f"{name}({sizes}): the reference fails on synthetic inputs")
    if done.timed_out:
        return Outcome("failed", f"{name}({sizes}): did not finish in {timeout:g} s", len(results))
    how = f"signal {done.signal}" if done.signal else f"exit code {done.returncode}"
    last = (done.errors().strip().splitlines() or [""])[-1][:200]
    return Outcome(
        "failed", f"{name}({sizes}): the call failed ({how}) {last}".rstrip(), len(results)
    )


def _sizes(sizes: dict[str, int]) -> str:
    return ", ".join(f"{name}={value}" for name, value in sizes.items())
