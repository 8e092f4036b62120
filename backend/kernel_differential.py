"""Kernel-level differential testing with pycuda.

The host-level test (differential.py) calls the candidate's host function, which copies,
launches and copies back: it tests the wrapper. This one loads the candidate's kernels
alone, with pycuda, from a cubin built for the GPU, runs them on random inputs at several
sizes (1, under a warp, just past a block, a large odd size) and compares what they write
with the original C function, built into a shared library and called through ctypes on
the same inputs. A kernel that is right only for the program's own n fails here.

A function's kernels stand for the whole function only when the function is nothing but
its loop nests, each offloaded as one kernel in source order (`<function>_kernel...`).
Each kernel parameter must then be one of: an array the frontend knows the extent of (the
device pointer carries the host array's name), a parameter of the function passed by
value, or the trip count `trips_<var>` of a loop of the nest, computed here from the
loop's bounds. Each trip count must drive a grid-stride loop, so any grid covers it.
Anything else is skipped, with the reason."""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tree_sitter as ts

from cudaify.backend.cache import Cache
from cudaify.backend.compile import Build, compile_cubin, compile_reference
from cudaify.backend.differential import (
    Outcome,
    array_arguments,
    ctype_of,
    eval_count,
    exported,
    plan_cases,
)
from cudaify.core import toolchain
from cudaify.frontend.facts import Function, Loop, Program
from cudaify.transforms import csource as cs

CHILD = Path(__file__).with_name("kernel_child.py")
BLOCK = {1: {"x": 256}, 2: {"x": 32, "y": 8}, 3: {"x": 32, "y": 4, "z": 2}}
MOST_BLOCKS = {"x": 2147483647, "y": 65535, "z": 65535}
_TRIPS = re.compile(r"trips_(\w+?)(?:_\d+)?")
_DIMENSION = re.compile(r"\b(?:gridDim|blockIdx)\.([xyz])\b")
_BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_LINE_COMMENT = re.compile(r"//[^\n]*")
# What a function may hold besides its loop nests: declarations without initializers
# (loop counters declared up front) and a bare return.
_DECLARATION = re.compile(
    r"(?:(?:const|unsigned|signed|long|short|register)\s+)*[A-Za-z_]\w*\s*\**\s*"
    r"[A-Za-z_]\w*(?:\s*,\s*\**\s*[A-Za-z_]\w*)*|return"
)


class _Skip(Exception):
    """Internal: why the kernels of a function cannot be tested alone."""


@dataclass(frozen=True)
class KernelParam:
    name: str
    type: str
    pointer: bool


@dataclass(frozen=True)
class Kernel:
    """A `__global__` function of the candidate."""

    name: str
    start: int  # first byte of the definition (where `extern "C"` goes)
    params: tuple[KernelParam, ...]
    dims: tuple[tuple[str, str], ...]  # (parameter, grid dimension) of grid-stride loops


def find_kernels(code: str, function: str) -> list[Kernel]:
    """The kernels generated from `function` (named `<function>_kernel...`), in order."""
    data = code.encode("utf-8", errors="surrogateescape")
    tree = cs.parse(data)
    found = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "function_definition":
            kernel = _kernel(node, data, f"{function}_kernel")
            if kernel is not None:
                found.append(kernel)
        elif node.type in ("translation_unit", "declaration_list", "namespace_definition"):
            stack.extend(node.named_children)
    return sorted(found, key=lambda k: k.start)


def _kernel(node: ts.Node, data: bytes, prefix: str) -> Kernel | None:
    if not any(child.type == "__global__" for child in node.children):
        return None
    declarator = node.child_by_field_name("declarator")
    if declarator is None or declarator.type != "function_declarator":
        return None
    name_node = declarator.child_by_field_name("declarator")
    body = node.child_by_field_name("body")
    if name_node is None or body is None:
        return None
    name = _text(name_node, data)
    if not name.startswith(prefix):
        return None
    params = _params(declarator.child_by_field_name("parameters"), data)
    return Kernel(name, node.start_byte, params, _grid_stride_dims(body, data, params))


def _params(parameters: ts.Node | None, data: bytes) -> tuple[KernelParam, ...]:
    found = []
    for param in parameters.named_children if parameters else ():
        if param.type != "parameter_declaration":
            continue
        declarator = param.child_by_field_name("declarator")
        type_node = param.child_by_field_name("type")
        name = declarator
        while name is not None and name.type != "identifier":
            name = name.child_by_field_name("declarator") or (
                name.named_children[0] if name.named_children else None
            )
        if name is None or type_node is None or declarator is None:
            continue
        pointer = declarator.type != "identifier"  # T *p, T (*p)[N], T p[]
        found.append(KernelParam(_text(name, data), _text(type_node, data), pointer))
    return tuple(found)


def _grid_stride_dims(
    body: ts.Node, data: bytes, params: Sequence[KernelParam]
) -> tuple[tuple[str, str], ...]:
    """For each trip-count parameter, the grid dimension of the loop it bounds, when that
    loop strides by the grid (`i += blockDim.x * gridDim.x`)."""
    trips = {p.name for p in params if _TRIPS.fullmatch(p.name)}
    dims: dict[str, str] = {}
    stack = [body]
    while stack:
        node = stack.pop()
        stack.extend(node.named_children)
        if node.type != "for_statement":
            continue
        condition = node.child_by_field_name("condition")
        update = node.child_by_field_name("update")
        if condition is None or update is None or "gridDim" not in _text(update, data):
            continue
        header = _text(condition, data) + " " + _text(update, data)
        named = [t for t in trips if re.search(rf"\b{t}\b", _text(condition, data))]
        dimension = _DIMENSION.search(header)
        for name in named:
            if dimension is not None:
                dims.setdefault(name, dimension.group(1))
    return tuple(sorted(dims.items()))


def _text(node: ts.Node, data: bytes) -> str:
    return data[node.start_byte : node.end_byte].decode("utf-8", errors="surrogateescape")


def plan_launches(
    function: Function, kernels: Sequence[Kernel], source: str
) -> tuple[list[dict[str, Any]], str]:
    """One spec per test case: the ctypes case of the host-level test plus the kernel
    launches that stand for the function; or ([], why the kernels cannot be tested)."""
    try:
        _require_only_nests(function, kernels, source)
        cases, why = plan_cases(function)
        if not cases:
            raise _Skip(why)
        return [_with_launches(function, kernels, case) for case in cases], ""
    except _Skip as skip:
        return [], str(skip)


def _require_only_nests(function: Function, kernels: Sequence[Kernel], source: str) -> None:
    if not kernels:
        raise _Skip("it has no kernel")
    if function.return_type.strip() != "void":
        raise _Skip("it returns a value, which kernels do not")
    if len(kernels) != len(function.loops):
        raise _Skip(
            f"{len(kernels)} kernel(s) for {len(function.loops)} loop nest(s): the kernels "
            "are not the whole function"
        )
    data = source.encode("utf-8", errors="surrogateescape")
    outside = data[function.body_span.start : function.body_span.end]
    for loop in sorted(function.loops, key=lambda loop: loop.span.start, reverse=True):
        start = loop.span.start - function.body_span.start
        end = loop.span.end - function.body_span.start
        outside = outside[:start] + b";" + outside[end:]
    text = outside.decode("utf-8", errors="surrogateescape").strip()
    text = _LINE_COMMENT.sub("", _BLOCK_COMMENT.sub("", text)).strip().strip("{}")
    for statement in text.split(";"):
        if statement.strip() and not _DECLARATION.fullmatch(statement.strip()):
            raise _Skip(f"it does more than its loop nests ('{statement.strip()[:40]}')")


def _with_launches(
    function: Function, kernels: Sequence[Kernel], case: dict[str, Any]
) -> dict[str, Any]:
    values = _case_values(function, case)
    launches = [
        _launch(function, kernel, loop, case, values)
        for kernel, loop in zip(kernels, function.loops, strict=True)
    ]
    return {**case, "launches": launches}


def _case_values(function: Function, case: dict[str, Any]) -> dict[str, int | float]:
    values: dict[str, int | float] = {}
    for param, arg in zip(function.params, case["args"], strict=True):
        if arg["kind"] == "scalar":
            values[param.name] = arg["value"]
    return values


def _launch(
    function: Function,
    kernel: Kernel,
    root: Loop,
    case: dict[str, Any],
    values: dict[str, int | float],
) -> dict[str, Any]:
    arrays = array_arguments(function)
    scalars = {p.name: p for p in function.params if not p.is_pointer}
    chain = _perfect_chain(root)
    dims = dict(kernel.dims)
    args: list[dict[str, Any]] = []
    trips: dict[str, int] = {}
    for param in kernel.params:
        if param.pointer:
            if param.name not in arrays:
                raise _Skip(f"{kernel.name}: pointer '{param.name}' is no array of the function")
            args.append({"kind": "array", "name": param.name})
            continue
        ctype = ctype_of(param.type)
        if ctype is None:
            raise _Skip(f"{kernel.name}: parameter '{param.name}' has type '{param.type}'")
        if param.name in scalars:
            args.append({"kind": "scalar", "ctype": ctype, "value": values[param.name]})
            continue
        count = _trip_count(param.name, chain, values)
        if count is None:
            raise _Skip(f"{kernel.name}: parameter '{param.name}' is not known to the function")
        if param.name not in dims:
            raise _Skip(f"{kernel.name}: '{param.name}' bounds no grid-stride loop")
        trips[param.name] = count
        args.append({"kind": "scalar", "ctype": ctype, "value": count})
    if not trips:
        raise _Skip(f"{kernel.name}: no grid-stride loop over a trip count; its grid is unknown")
    grid, block = _shape({dims[name]: count for name, count in trips.items()})
    return {"kernel": kernel.name, "args": args, "grid": grid, "block": block}


def _perfect_chain(root: Loop) -> list[Loop]:
    chain = [root]
    while chain[-1].perfectly_nested and chain[-1].children:
        chain.append(chain[-1].children[0])
    return chain


def _trip_count(name: str, chain: Sequence[Loop], values: dict[str, int | float]) -> int | None:
    """Iterations of the loop of `chain` that `trips_<var>` counts, for these values."""
    if not _TRIPS.fullmatch(name):
        return None
    # `trips_i`, or `trips_i_2` when a second nest of the file also counts `i`.
    spelled = name[len("trips_") :]
    names = (spelled, re.sub(r"_\d+$", "", spelled))
    loop = next((loop for var in names for loop in chain if loop.var == var), None)
    if loop is None:
        return None
    sizes = {k: v for k, v in values.items() if isinstance(v, int)}
    lower, upper = eval_count(loop.lower, sizes), eval_count(loop.upper, sizes)
    if lower is None or upper is None or loop.step == 0:
        return None
    span = upper - lower if loop.step > 0 else lower - upper
    span += 1 if loop.upper_inclusive else 0
    stride = abs(loop.step)
    return max(0, (span + stride - 1) // stride)


def _shape(trips: dict[str, int]) -> tuple[list[int], list[int]]:
    """Grid and block covering each dimension's trip count (grid-stride loops do the rest)."""
    threads = BLOCK.get(len(trips), BLOCK[3])
    block = [threads.get(d, 1) if d in trips else 1 for d in "xyz"]
    grid = [
        max(1, min((trips[d] + size - 1) // size, MOST_BLOCKS[d])) if d in trips else 1
        for d, size in zip("xyz", block, strict=True)
    ]
    return grid, block


def exported_kernels(code: str, kernels: Sequence[Kernel]) -> str:
    """The candidate with each kernel given C linkage, so pycuda finds it by its name."""
    data = code.encode("utf-8", errors="surrogateescape")
    for kernel in sorted(kernels, key=lambda k: k.start, reverse=True):
        data = data[: kernel.start] + b'extern "C" ' + data[kernel.start :]
    return data.decode("utf-8", errors="surrogateescape")


def pycuda_available() -> bool:
    return importlib.util.find_spec("pycuda") is not None


def kernel_differential_test(
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
    """Run the kernels of `function_name` alone on random inputs at several sizes and
    compare with the original function. Never raises for the candidate."""
    function = program.function(function_name)
    if function is None:
        return Outcome("skipped", f"no facts about '{function_name}'")
    kernels = find_kernels(candidate_code, function_name)
    cases, why = plan_launches(function, kernels, program.source)
    if not cases:
        return Outcome("skipped", f"the kernels of '{function_name}' cannot be tested: {why}")
    if not pycuda_available():
        return Outcome("skipped", "pycuda is not installed (pip install 'cudaify[gpu]')")
    source_dir = Path(program.path).resolve().parent if program.path else None
    reference = compile_reference(
        exported(program.source, function_name, program.language == "c++"),
        program.language,
        program.flags,
        cache=cache,
        source_dir=source_dir,
        shared=True,
    )
    cubin = compile_cubin(
        exported_kernels(candidate_code, kernels),
        program.flags,
        arch,
        cache=cache,
        source_dir=source_dir,
    )
    for build, who in ((reference, "reference"), (cubin, "candidate's kernels")):
        if not build.ok:
            lines = build.diagnostics.splitlines() or [""]
            first = next((line for line in lines if "error" in line), lines[0])
            return Outcome("skipped", f"the {who} do(es) not build: {first.strip()}")
    return _run_child(function, reference, cubin, cases, rtol, atol, timeout)


def _run_child(
    function: Function,
    reference: Build,
    cubin: Build,
    cases: list[dict[str, Any]],
    rtol: float,
    atol: float,
    timeout: float,
) -> Outcome:
    spec = {
        "reference": str(reference.binary),
        "cubin": str(cubin.binary),
        "restype": None if function.return_type == "void" else ctype_of(function.return_type),
        "cases": cases,
        "rtol": rtol,
        "atol": atol,
    }
    lines, done = toolchain.run_helper(CHILD, spec, timeout)
    return outcome_of(function.name, lines, cases, done, timeout)


def outcome_of(
    name: str,
    lines: list[dict[str, Any]],
    cases: list[dict[str, Any]],
    done: toolchain.Completed,
    timeout: float,
) -> Outcome:
    """The verdict from the child's JSON lines and how it ended."""
    skipped = next((line["skip"] for line in lines if "skip" in line), None)
    if skipped is not None:
        return Outcome("skipped", f"{name} kernels: {skipped}")
    results = [line for line in lines if "problem" in line]
    failed = next((line for line in results if line["problem"]), None)
    if failed is not None:
        where = _sizes(failed["sizes"])
        return Outcome("failed", f"{name} kernels ({where}): {failed['problem']}", len(results))
    if done.ok and len(results) == len(cases):
        return Outcome("passed", f"{name}: kernels agree at {len(cases)} sizes", len(cases))
    where = _sizes(cases[min(len(results), len(cases) - 1)]["sizes"])
    calling = next((line["calling"] for line in reversed(lines) if "calling" in line), None)
    if calling == "reference":
        return Outcome("skipped", f"{name}({where}): the reference fails on synthetic inputs")
    if done.timed_out:
        return Outcome("failed", f"{name} kernels ({where}): did not finish in {timeout:g} s")
    last = (done.errors().strip().splitlines() or [""])[-1][:200]
    return Outcome("failed", f"{name} kernels ({where}): the run failed: {last}".rstrip())


def _sizes(sizes: dict[str, int]) -> str:
    return ", ".join(f"{name}={value}" for name, value in sizes.items())


__all__ = [
    "Kernel",
    "KernelParam",
    "exported_kernels",
    "find_kernels",
    "kernel_differential_test",
    "plan_launches",
    "pycuda_available",
]
