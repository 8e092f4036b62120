"""What the pattern methods (reduction, atomic_privatize, scan, wavefront) share: finding
an analysed loop in a variant that may already hold other kernels, the device helpers
they emit once per program, and the kernel's view of the names a loop uses.

The offload method rewrites the analysed source; the pattern methods also follow it, so
they work on a variant whose bytes differ from the analysed ones. A loop is found again
by its exact text inside its function: the rules only touch loops that no earlier step
rewrote, and they refuse when the text is gone or ambiguous."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from tree_sitter import Node, Tree

from cudaify.core import Variant
from cudaify.frontend.edits import Edit, apply_edits
from cudaify.frontend.facts import ArrayData, Function, Loop, Program, Span
from cudaify.transforms import csource as cs
from cudaify.transforms import std_device
from cudaify.transforms.base import Context, Method, Outcome
from cudaify.transforms.kernel_codegen import (
    QUALIFIERS,
    Level,
    Refuse,
    byte_size,
    device_free,
    device_malloc,
    element_type,
    host_address,
    host_only_parts,
    node_key,
    paren,
    reindent,
    used_after,
    where_kernels_go,
)
from cudaify.transforms.offload import PRELUDE
from cudaify.transforms.prelude import marker, runtime_text

PlanT = TypeVar("PlanT")

RUNTIME_MARKER = marker(PRELUDE)
PATTERN_MARKER = "/* ---- cudaify pattern helpers ---- */"

INCLUDES_MARKER = "/* ---- cudaify pattern includes ---- */"
# Library headers go first in the file: a program's macros (`#define N 1024`) would
# otherwise rewrite the libraries' template parameters.
PATTERN_INCLUDES = (
    INCLUDES_MARKER
    + """
#include <string.h>
#include <math.h>
#include <type_traits>
"""
)

# Device helpers for the pattern kernels. Templates over the element type, so that
# typedefs and struct fields need no spelling of their type: the reductions shuffle any
# value of at most 8 bytes through an integer of its size.
PATTERN_PRELUDE = runtime_text("pattern_helpers.cuh")

OPERATORS = {
    "+": "cudaify_plus",
    "*": "cudaify_times",
    "min": "cudaify_minimum",
    "max": "cudaify_maximum",
    "&": "cudaify_bit_and",
    "|": "cudaify_bit_or",
    "^": "cudaify_bit_xor",
    "&&": "cudaify_logical_and",
    "||": "cudaify_logical_or",
}


@dataclass(frozen=True)
class Located:
    """An analysed loop found in a variant: its facts with byte spans moved into the
    variant, its syntax node there, and the variant's tree and bytes."""

    function: Function
    outer: Loop  # the outermost loop of its nest, as analysed (data regions hang on it)
    loop: Loop  # spans moved into the variant
    node: Node
    tree: Tree
    source: bytes


def shifted(loop: Loop, delta: int) -> Loop:
    """The loop facts with every byte offset moved by `delta`."""

    def move(span: Span) -> Span:
        return Span(span.start + delta, span.end + delta)

    return replace(
        loop,
        span=move(loop.span),
        body_span=move(loop.body_span),
        children=tuple(shifted(child, delta) for child in loop.children),
    )


def locate(code: str, program: Program, function: Function, outer: Loop, loop: Loop) -> Located:
    """Find `loop` (analysed in `program`) in the variant `code`, by its text inside its
    function: it must be there exactly once."""
    original = program.source.encode("utf-8", errors="surrogateescape")
    original_node = cs.node_at(cs.parse(original), loop.span.start, "for_statement")
    if original_node is None:
        raise Refuse(f"no `for` statement at line {loop.line} of the analysed program")
    needle = original[original_node.start_byte : original_node.end_byte]
    source = code.encode("utf-8", errors="surrogateescape")
    tree = cs.parse(source)
    definition = cs.function_nodes(tree, source).get(function.name)
    if definition is None:
        raise Refuse(f"function '{function.name}' is not defined in this variant")
    if definition.parent is not None and definition.parent.type == "template_declaration":
        # its kernel would need the template's header and arguments (offload repeats them)
        raise Refuse(
            f"'{function.name}' is a function template: its kernel would need its parameters"
        )
    region = source[definition.start_byte : definition.end_byte]
    found = region.find(needle)
    if found < 0:
        raise Refuse("an earlier step already rewrote this loop")
    if region.find(needle, found + 1) >= 0:
        raise Refuse("the loop's text occurs twice in its function")
    delta = definition.start_byte + found - original_node.start_byte
    _require_not_a_fallback(tree, source, definition.start_byte + found)
    moved = shifted(loop, delta)
    node = cs.node_at(tree, moved.span.start, "for_statement")
    if node is None:
        raise Refuse(f"the loop at line {loop.line} does not parse as a `for` statement")
    return Located(function, outer, moved, node, tree, source)


def _require_not_a_fallback(tree: Tree, source: bytes, start: int) -> None:
    """A loop kept on the host as the fallback of an earlier step stays as it is."""
    node = cs.node_at(tree, start, "for_statement")
    while node is not None and node.type != "function_definition":
        if node.type == "compound_statement":
            named = [c for c in node.named_children]
            if (
                named
                and named[0].type == "comment"
                and cs.text(named[0], source).startswith(FALLBACK_COMMENT)
            ):
                raise Refuse("the loop is the host fallback of an earlier rewrite")
        node = node.parent


FALLBACK_COMMENT = "/* cudaify: host fallback"


def candidates(function: Function, patterns: tuple[str, ...]) -> list[tuple[Loop, Loop]]:
    """(outermost loop, loop) for every loop of `function` whose pattern is one of
    `patterns` and that no parallel loop encloses (those nests are offload's)."""
    found: list[tuple[Loop, Loop]] = []

    def visit(outer: Loop, loop: Loop) -> None:
        if loop.pattern in patterns:
            found.append((outer, loop))
            return
        if loop.parallel and loop.pattern == "plain":
            return
        for child in loop.children:
            visit(outer, child)

    for outer in function.loops:
        visit(outer, outer)
    return found


class LoopPatternMethod(Method):
    """A method that rewrites loops of one analysed pattern outside main. Subclasses say
    what to do with a program (`plans`), how to rewrite the code (`emit`) and how to
    describe a plan; applying and refusing work the same for all of them."""

    nothing: str = ""  # the reason when the program has no candidate loop at all

    def plans(self, variant: Variant, program: Program) -> tuple[list[Any], list[str]]:
        raise NotImplementedError

    def emit(self, code: str, plans: list[Any]) -> str:
        raise NotImplementedError

    def describe_plan(self, plan: Any) -> str:
        raise NotImplementedError

    def applies(self, variant: Variant, ctx: Context) -> str | None:
        plans, reasons = self.plans(variant, ctx.program)
        return None if plans else (reasons[0] if reasons else self.nothing)

    def apply_rule(self, variant: Variant, ctx: Context) -> Outcome:
        plans, reasons = self.plans(variant, ctx.program)
        if not plans:
            return Outcome(None, reasons[0] if reasons else self.nothing)
        code = self.emit(variant.code, plans)
        functions = tuple(dict.fromkeys(plan.located.function.name for plan in plans))
        detail = "; ".join(self.describe_plan(plan) for plan in plans)
        return Outcome(variant.then(self.name, code, "rule", detail=detail, offloaded=functions))


def plan_loops(
    code: str,
    program: Program,
    patterns: tuple[str, ...],
    method: str,
    plan: Callable[[str, Program, Function, Loop, Loop, set[str]], PlanT],
    accept: Callable[[Loop], bool] = lambda loop: True,
) -> tuple[list[PlanT], list[str]]:
    """A plan for every loop of one of `patterns` outside main that `plan` accepts (it
    raises Refuse with the reason otherwise), and the reasons for the others. A function
    that another plan calls as a helper keeps its own loop on the host."""
    source = code.encode("utf-8", errors="surrogateescape")
    taken = identifiers(source, cs.parse(source))
    plans: list[PlanT] = []
    reasons: list[str] = []
    for function in program.functions:
        if function.name == "main":
            continue
        for outer, loop in candidates(function, patterns):
            if not accept(loop):
                continue
            try:
                plans.append(plan(code, program, function, outer, loop, taken))
            except Refuse as refusal:
                reasons.append(where(program, function, loop, method, str(refusal)))
    helpers = {name for made in plans for name in made.helpers}  # type: ignore[attr-defined]
    kept = [made for made in plans if made.located.function.name not in helpers]  # type: ignore[attr-defined]
    return kept, reasons


def where(program: Program, function: Function, loop: Loop, method: str, why: str) -> str:
    return (
        f"{program.path}:{loop.line}:{loop.column}: {method}: cannot rewrite loop '{loop.var}' "
        f"in '{function.name}': {why}"
    )


def identifiers(source: bytes, tree: Tree) -> set[str]:
    return {cs.text(n, source) for n in cs.walk(tree.root_node) if n.type.endswith("identifier")}


# ---- helpers emitted once per program --------------------------------------------------


def prelude_edits(source: bytes, at: int, includes: tuple[str, ...] = ()) -> tuple[list[Edit], str]:
    """Edits and text that make the runtime helpers (offload's) and the pattern helpers
    defined before byte `at`: a block found after `at` moves up to `at`; the returned
    text goes at `at`, before the kernels. The library headers (and `includes`, more
    `#include` lines) go at the top of the file."""
    edits: list[Edit] = []
    text = ""
    headers = _includes_text(source, includes)
    if headers and at == 0:
        text = headers
    elif headers:
        edits.append(Edit(0, 0, headers, "library headers before the program's macros"))
    blocks = ((RUNTIME_MARKER, PRELUDE), (PATTERN_MARKER, PATTERN_PRELUDE))
    for mark, block in blocks:
        position = source.find(mark.encode())
        if 0 <= position < at:
            continue
        if position >= 0:
            end = position + len(block.encode())
            if source[position:end] != block.encode():
                raise Refuse("the variant's helper block differs from the one this version emits")
            edits.append(Edit(position, end, "", "the helpers move before the new kernels"))
        text += block
    return edits, text


def _includes_text(source: bytes, includes: tuple[str, ...]) -> str:
    """The header block and the `includes` lines the variant lacks."""
    text = "" if INCLUDES_MARKER.encode() in source else PATTERN_INCLUDES
    for line in includes:
        if line.encode() not in source:
            text += line + "\n"
    return text + "\n" if text else ""


def rewrite_loops(
    code: str,
    plans: list[Any],
    kernel_text: Callable[[Any], str],
    host_text: Callable[[Any], str],
    reason: str,
    includes: tuple[str, ...] = (),
    more_helpers: str = "",
) -> str:
    """`code` with each plan's loop (`plan.located`) replaced by `host_text(plan)`, its
    kernels (`kernel_text(plan)`) placed before the loop's function, the runtime and pattern
    helpers (and `more_helpers`) before the first kernels, `includes` at the top of the file,
    and `__host__ __device__` on the user functions the kernels call (`plan.helpers`)."""
    source = code.encode("utf-8", errors="surrogateescape")
    tree = cs.parse(source)
    by_position: dict[int, list[Any]] = {}
    for plan in plans:
        by_position.setdefault(kernel_position(plan.located), []).append(plan)
    first = min(by_position)
    edits, helpers_text = prelude_edits(source, first, includes)
    helpers_text += more_helpers
    for at, group in sorted(by_position.items()):
        kernels = "".join(kernel_text(plan) for plan in group)
        edits.append(Edit(at, at, (helpers_text if at == first else "") + kernels, "kernels"))
    for plan in plans:
        start, end = plan.located.loop.span.start, plan.located.node.end_byte
        edits.append(Edit(start, end, host_text(plan), reason))
    helpers = tuple(dict.fromkeys(h for plan in plans for h in plan.helpers))
    edits += device_edits(helpers, tree, source)
    return apply_edits(source, edits).decode("utf-8", errors="surrogateescape")


def cub_with_storage(
    call: Callable[[str], str], storage: str, storage_bytes: str, capacity: str
) -> list[str]:
    """A CUB device-wide call, `call(memory)` (the text of the call given its temporary
    storage), made twice: with no storage, which sets `storage_bytes` to what it needs, then
    with a function-local static buffer that only grows, so a call repeated in a loop
    allocates it once."""
    return [
        f"size_t {storage_bytes} = 0;",
        f"static void *{storage} = NULL;",
        f"static size_t {capacity} = 0;",
        f"CUDAIFY_CHECK({call('nullptr')});",
        f"if ({storage_bytes} > {capacity}) {{",
        f"    if ({storage} != NULL)",
        f"        CUDAIFY_CHECK(cudaFree({storage}));",
        f"    CUDAIFY_CHECK(cudaMalloc(&{storage}, {storage_bytes}));",
        f"    {capacity} = {storage_bytes};",
        "}",
        f"CUDAIFY_CHECK({call(storage)});",
    ]


def host_fallback(
    flag: str, why: str, originals: tuple[str, ...], indent: str, ind: str, level: Level
) -> list[str]:
    """Lines at `ind`: when `flag` is set, the host runs the original loops (`originals`,
    written at `indent`), a comment saying `why`; otherwise a loop variable declared before
    the loop ends where the loop would have left it."""
    loop, body = level.loop, ind + "    "
    lines = [f"{ind}if ({flag}) {{", f"{body}{FALLBACK_COMMENT}: {why} */"]
    lines += [body + reindent(text, indent, body) for text in originals]
    lines.append(f"{ind}}}")
    if level.declared_outside:
        step = f" * {loop.step}" if loop.step != 1 else ""
        value = f"({level.var_type})({paren(loop.lower)} + {level.trips}{step})"
        lines.append(f"{ind}else {loop.var} = {value};")
    return lines


def kernel_position(located: Located) -> int:
    definition = cs.node_at(located.tree, _function_start(located), "function_definition")
    start = definition.start_byte if definition is not None else located.node.start_byte
    return where_kernels_go(located.tree, located.source, start)


def _function_start(located: Located) -> int:
    node: Node | None = located.node
    while node is not None and node.type != "function_definition":
        node = node.parent
    return node.start_byte if node is not None else located.node.start_byte


def device_edits(names: tuple[str, ...], tree: Tree, source: bytes) -> list[Edit]:
    """`__host__ __device__` on the user functions a kernel calls that lack it."""
    definitions = cs.function_nodes(tree, source)
    edits: list[Edit] = []
    for name in names:
        definition = definitions[name]
        if "__device__" in cs.text(definition, source).split("{", 1)[0]:
            continue  # an earlier step already made it a device function
        for node in (definition, *cs.prototypes(tree, source, name)):
            edits.append(
                Edit(node.start_byte, node.start_byte, "__host__ __device__ ", f"{name} on device")
            )
    return edits


# ---- the names a kernel needs ------------------------------------------------------------


def scalars_of(
    located: Located,
    arrays: tuple[ArrayData, ...],
    skip: set[str],
    mapped: set[str],
    header_depth: int = 1,
    lambdas: tuple[Node, ...] = (),
) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]:
    """(type, name) of the scalars the loop reads (passed by value) and of those it
    writes that need one copy per thread; `skip` holds names the method handles itself.
    `lambdas`: the local lambdas the loop calls, defined again in the kernel: what they
    capture travels too."""
    nest, tree, source = located.node, located.tree, located.source
    outer_node = cs.node_at(tree, located.loop.span.start, "for_statement") or nest
    array_names = {a.name for a in arrays}
    inside = cs.names_declared_in(nest, source)
    for node in lambdas:
        inside |= std_device.lambda_locals(node, source)
    written = cs.names_written(nest, source)
    scanned = [nest, *lambdas]
    called = {
        node_key(n.child_by_field_name("function"))
        for node in scanned
        for _, n in cs.calls_in(node, source)
    }
    headers = {node_key(n) for n in host_only_parts(nest, header_depth)}
    scalars: dict[str, str] = {}
    privates: dict[str, str] = {}
    for ident in [i for node in scanned for i in cs.identifiers_in(node)]:
        name = cs.text(ident, source)
        ignored = name in mapped or name in array_names or name in inside or name in skip
        if ignored or node_key(ident) in called or node_key(ident) in headers:
            continue
        declared = cs.visible(tree, source, name, nest.start_byte)
        if declared is None or declared.kind == "function":
            continue  # a macro, an enum constant or a function: visible to the kernel too
        if declared.kind in ("pointer", "array"):
            raise Refuse(f"it uses {declared.kind} '{name}' whose extent is unknown")
        if name not in written:
            scalars[name] = " ".join(declared.base.split())
            continue
        if declared.scope == "global":
            raise Refuse(f"it writes the global variable '{name}'")
        if used_after(nest, outer_node, name, tree, source):
            raise Refuse(f"'{name}' is written in the loop and used after it")
        privates[name] = " ".join(QUALIFIERS.sub("", declared.base).split())
    return (
        tuple((t, n) for n, t in scalars.items()),
        tuple((t, n) for n, t in privates.items()),
    )


CONTAINER = re.compile(r"(?:const\s+)?(?:std::)?(?:vector|array)\s*<\s*([^,<>]+?)\s*(?:,[^<>]*)?>")


def indexed_element(declared: cs.Declared) -> str | None:
    """The type `name[i]` has: a pointer's or an array's base, or the element type of a
    std::vector or std::array (by value or by reference), whose operator[] is the
    element's reference."""
    if declared.kind in ("pointer", "array"):
        return declared.base
    if declared.kind in ("scalar", "reference"):
        found = CONTAINER.fullmatch(declared.base.strip())
        return found.group(1) if found else None
    return None


_INTEGRAL_WORDS = {"int", "unsigned", "signed", "long", "short", "char", "size_t", "ssize_t"}
_INTEGRAL_TYPES = re.compile(
    r"(?:std::)?(?:u?int(?:8|16|32|64)_t|size_t|ssize_t|ptrdiff_t|bool|_Bool)"
)


def integral_type(spelled: str) -> bool:
    """Whether `spelled` names an integer type (bool included), qualifiers aside."""
    words = [w for w in QUALIFIERS.sub("", spelled).replace("*", " ").split() if w]
    if not words:
        return False
    if len(words) == 1 and _INTEGRAL_TYPES.fullmatch(words[0]):
        return True
    return all(w in _INTEGRAL_WORDS for w in words)


def integral_value(node: Node, located: Located) -> bool:
    """Whether the expression `node` provably has an integer value: integer literals,
    characters, casts to integer types, integer variables and array elements, and their
    arithmetic without division."""
    source = located.source
    kind = node.type
    if kind == "number_literal":
        spelled = cs.text(node, source).lower()
        return spelled.startswith("0x") or not any(c in spelled for c in ".ef")
    if kind == "char_literal":
        return True
    if kind == "parenthesized_expression":
        return all(integral_value(child, located) for child in node.named_children)
    if kind == "cast_expression":
        type_node = node.child_by_field_name("type")
        return type_node is not None and integral_type(cs.text(type_node, source))
    if kind == "binary_expression":
        operator = node.child_by_field_name("operator")
        if operator is not None and cs.text(operator, source) == "/":
            return False
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        return (
            left is not None
            and right is not None
            and integral_value(left, located)
            and integral_value(right, located)
        )
    if kind == "identifier":
        declared = cs.visible(located.tree, source, cs.text(node, source), node.start_byte)
        return (
            declared is not None
            and declared.kind in ("scalar", "reference")
            and integral_type(declared.base)
        )
    if kind == "subscript_expression":
        array = node.child_by_field_name("argument")
        if array is None or array.type != "identifier":
            return False
        declared = cs.visible(located.tree, source, cs.text(array, source), node.start_byte)
        element = indexed_element(declared) if declared is not None else None
        return element is not None and integral_type(element)
    return False


_ARITHMETIC_WORDS = {
    "char",
    "short",
    "int",
    "long",
    "signed",
    "unsigned",
    "float",
    "double",
    "const",
}
_ARITHMETIC_TYPES = re.compile(r"(?:std::)?(?:u?int(?:8|16|32|64)_t|size_t|ssize_t|ptrdiff_t)")


def arithmetic(spelled: str) -> bool:
    """Whether `spelled` names one of C's arithmetic types (not bool), const or not."""
    words = spelled.replace("const", " ").split()
    if len(words) == 1 and _ARITHMETIC_TYPES.fullmatch(words[0]):
        return True
    return bool(words) and all(w in _ARITHMETIC_WORDS for w in words) and "bool" not in words


def unique_arrays(arrays: tuple[ArrayData, ...]) -> tuple[ArrayData, ...]:
    """One entry per array name (the analysis may list an array once per access region)."""
    by_name: dict[str, ArrayData] = {}
    for data in arrays:
        by_name.setdefault(data.name, data)
    return tuple(by_name.values())


def copy_in(arrays: tuple[ArrayData, ...], devices: dict[str, str]) -> list[str]:
    lines = [f"{element_type(a)} *{devices[a.name]} = NULL;" for a in arrays]
    for data in arrays:
        device = devices[data.name]
        lines.append(device_malloc(device, byte_size(data)))
    for data in arrays:
        device, host = devices[data.name], host_address(data, writable=False)
        lines.append(
            f"CUDAIFY_CHECK(cudaMemcpy({device}, {host}, {byte_size(data)}, "
            "cudaMemcpyHostToDevice));"
        )
    return lines


def copy_out(arrays: tuple[ArrayData, ...], devices: dict[str, str]) -> list[str]:
    lines = []
    for data in arrays:
        if data.access in ("write", "readwrite"):
            host = host_address(data, writable=True)
            lines.append(
                f"CUDAIFY_CHECK(cudaMemcpy({host}, {devices[data.name]}, {byte_size(data)}, "
                "cudaMemcpyDeviceToHost));"
            )
    return lines


def frees(names: list[str]) -> list[str]:
    return [device_free(name) for name in names]
