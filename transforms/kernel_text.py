"""What the kernel-level methods read from a CUDA variant: its kernels, their grid-stride
headers (which loop runs on which grid dimension), their launches and the `dim3` shapes
of those launches. Read from the text with tree-sitter-cuda, so that variants written by
any method (or the SLM) in the offload's shape are understood."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from tree_sitter import Node

from cudaify.transforms import csource as cs

# `for (long long t_i = blockIdx.y * (long long)blockDim.y + threadIdx.y; t_i < trips_i;
#       t_i += (long long)blockDim.y * gridDim.y) {` as the offload writes it
GRID_STRIDE = re.compile(
    r"for \(long long (?P<index>\w+) = blockIdx\.(?P<dim>[xyz]) \* \(long long\)blockDim\.(?P=dim)"
    r" \+ threadIdx\.(?P=dim); (?P=index) < (?P<trips>\w+);(?P<gap>\s*)(?P=index) \+= "
    r"\(long long\)blockDim\.(?P=dim) \* gridDim\.(?P=dim)\)"
)
# `int i = (int)t_i;` or `int i = (int)(1 + t_i);`: the loop variable of a level
LOOP_VARIABLE = r"[A-Za-z_][\w ]*?\s(?P<var>\w+) = \([^;]*\b{index}\b[^;]*;"
NEST_COMMENT = re.compile(
    r"/\* Loop nest '(?P<vars>[^']*)' of (?P<function>\w+)\(\) \(line (?P<line>\d+)\)"
)


@dataclass(frozen=True)
class Level:
    """One grid-stride level of a kernel: loop variable `var` runs on dimension `dim`."""

    var: str
    dim: str
    trips: str
    start: int  # byte range of the header text `for (...)` in the variant
    end: int


@dataclass(frozen=True)
class Kernel:
    name: str
    node: Node  # the __global__ function definition
    levels: tuple[Level, ...]
    function: str  # the host function the nest came from ("" when unknown)
    line: int  # the nest's line in the input (0 when unknown)


@dataclass(frozen=True)
class Shape:
    """A `const dim3 NAME(a, b, c);` declaration, or a `dim3(a, b, c)` written in the launch
    itself (`name` empty, as `schedule` writes its launches): its arguments and their byte
    range."""

    name: str
    args: tuple[str, ...]
    start: int  # byte range of the parenthesised arguments, parentheses included
    end: int


@dataclass(frozen=True)
class Launch:
    kernel: str
    call: Node
    grid: Shape | None
    block: Shape | None


def encode(code: str) -> bytes:
    return code.encode("utf-8", errors="surrogateescape")


def decode(data: bytes) -> str:
    return data.decode("utf-8", errors="surrogateescape")


def is_kernel(definition: Node) -> bool:
    return any(child.type == "__global__" for child in definition.children)


def kernels(data: bytes) -> list[Kernel]:
    """Every `__global__` function of the variant, with its grid-stride levels."""
    return list(_kernels(data))


# A search asks the same variant's kernels and launches of many passes (their checks, the
# cost model): a walk of the whole tree each time was a fifth of its Python time.
@functools.lru_cache(maxsize=64)
def _kernels(data: bytes) -> tuple[Kernel, ...]:
    tree = cs.parse(data)
    found = []
    for node in cs.walk(tree.root_node):
        if node.type != "function_definition" or not is_kernel(node):
            continue
        name = cs.function_name(node, data) or ""
        found.append(Kernel(name, node, _levels(node, data), *_origin(node, data)))
    return tuple(found)


def _levels(definition: Node, data: bytes) -> tuple[Level, ...]:
    text = cs.text(definition, data)
    base = definition.start_byte
    levels = []
    for match in GRID_STRIDE.finditer(text):
        index = match.group("index")
        pattern = re.compile(LOOP_VARIABLE.replace("{index}", re.escape(index)))
        var = pattern.search(text, match.end())
        start = base + len(encode(text[: match.start()]))
        end = base + len(encode(text[: match.end()]))
        name = var.group("var") if var else index
        levels.append(Level(name, match.group("dim"), match.group("trips"), start, end))
    return tuple(levels)


def _origin(definition: Node, data: bytes) -> tuple[str, int]:
    """The host function and line of the nest, from the comment the offload writes above."""
    previous = definition.prev_sibling
    if previous is None or previous.type != "comment":
        return "", 0
    match = NEST_COMMENT.search(cs.text(previous, data))
    return (match.group("function"), int(match.group("line"))) if match else ("", 0)


def launches(data: bytes) -> list[Launch]:
    """Every `K<<<grid, block>>>(...)` with the `dim3` shapes it names, when declared in
    the same block before it."""
    return list(_launches(data))


@functools.lru_cache(maxsize=64)
def _launches(data: bytes) -> tuple[Launch, ...]:
    tree = cs.parse(data)
    found = []
    for node in cs.walk(tree.root_node):
        if node.type != "call_expression":
            continue
        syntax = next((c for c in node.children if c.type == "kernel_call_syntax"), None)
        if syntax is None:
            continue
        name = cs.text(node.children[0], data).strip()
        configuration = [c for c in syntax.named_children]
        grid = _shape(node, configuration[0], data) if configuration else None
        block = _shape(node, configuration[1], data) if len(configuration) > 1 else None
        found.append(Launch(name, node, grid, block))
    return tuple(found)


_SHAPE = r"const dim3 {name}\((?P<args>[^;]*)\);"


def _shape(launch: Node, argument: Node, data: bytes) -> Shape | None:
    """The launch's `dim3(...)` argument, or the last `const dim3 name(...)` before the
    launch in an enclosing block that it names."""
    if argument.type == "call_expression" and cs.call_name(argument, data) == "dim3":
        arguments = argument.child_by_field_name("arguments")
        if arguments is None:
            return None
        values = tuple(cs.text(a, data).strip() for a in arguments.named_children)
        return Shape("", values, arguments.start_byte, arguments.end_byte)
    name = cs.text(argument, data)
    scope = launch.parent
    while scope is not None and scope.type != "compound_statement":
        scope = scope.parent
    if scope is None or not re.fullmatch(r"\w+", name):
        return None
    text = decode(data[scope.start_byte : launch.start_byte])
    matches = list(re.finditer(_SHAPE.replace("{name}", re.escape(name)), text))
    if not matches:
        return None
    match = matches[-1]
    from cudaify.transforms.data_residency import split_arguments

    open_at = match.start("args") - 1
    start = scope.start_byte + len(encode(text[:open_at]))
    end = scope.start_byte + len(encode(text[: match.end("args") + 1]))
    return Shape(name, split_arguments(match.group("args")), start, end)
