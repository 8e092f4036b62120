"""`readonly_cache`: `const ... __restrict__` on kernel pointers, so loads use the
read-only data path.

A kernel pointer parameter that is only read through (`x[i]`, `*x`, `a[i][j]` as a value)
becomes `const T *__restrict__`; one that is written through becomes `T *__restrict__`.
With both, nvcc may keep loaded values in registers across stores and route read-only
loads through the non-coherent texture path (LDG.NC, what `__ldg` asks for by hand).

`__restrict__` promises that no two pointer parameters of a launch reach the same memory
where one of them is written. The offload gives each array its own device buffer, but
data residency hands out the one device copy of a host range to every map of it, so the
promise must hold on the host: at every call of the function that launches the kernel,
the arrays the kernel takes must come from distinct variables. When a call passes the same
variable twice (or two offsets of one), or a parameter is used other than by subscript,
the kernel keeps its parameters as they are."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tree_sitter import Node

from cudaify.core import Problem, Variant
from cudaify.frontend.edits import Edit, apply_edits
from cudaify.frontend.facts import Program
from cudaify.transforms import csource as cs
from cudaify.transforms import kernel_text as kt
from cudaify.transforms.base import Context, Method, Outcome

RESTRICT = "__restrict__"


class _Refuse(Exception):
    """Internal: why one kernel keeps its parameters."""


@dataclass(frozen=True)
class _Param:
    name: str
    node: Node  # the parameter_declaration
    star: Node  # the `*` of its pointer declarator
    read_only: bool


class ReadonlyCache(Method):
    name = "readonly_cache"
    summary = "const __restrict__ kernel pointers: loads through the read-only cache"
    category = "memory"
    follows = (
        "offload",
        "reduction",
        "atomic_privatize",
        "data_residency",
        "coalesce",
        "shared_tiling",
        "unroll",
        "fast_math",
        "launch_tuning",
    )
    instruction = (
        "In every __global__ kernel, qualify pointer parameters that are only read as "
        "`const T *__restrict__` and the other pointer parameters as `T *__restrict__`, so "
        "that read-only loads go through the read-only (non-coherent) cache; use __ldg for "
        "such loads if the compiler needs the hint. Only do this when no two pointer "
        "arguments of a launch can refer to the same memory. Change nothing else."
    )

    def applies(self, variant: Variant, ctx: Context) -> str | None:
        edits, details, reasons = _plan(variant.code, ctx.program)
        return None if edits else _first(reasons)

    def apply_rule(self, variant: Variant, ctx: Context) -> Outcome:
        edits, details, reasons = _plan(variant.code, ctx.program)
        if not edits:
            return Outcome(None, _first(reasons))
        code = kt.decode(apply_edits(kt.encode(variant.code), edits))
        return Outcome(variant.then(self.name, code, "rule", detail="; ".join(details)))

    def check(self, before: Variant, after: Variant, ctx: Context) -> list[Problem]:
        """A launched kernel gained `__restrict__` pointer parameters or `__ldg` loads;
        every kernel that had its parameters qualified has all pointers restricted."""
        from cudaify.transforms import postcondition as pc

        problems = pc.common_problems(self.name, before.code, after.code)
        if problems:
            return problems
        restricted = pc.leaf_count(frozenset({RESTRICT, "__restrict"}), pc.head)
        loads = pc.call_count(frozenset({"__ldg"}))
        if not (
            pc.kernel_gained(before.code, after.code, restricted)
            or pc.kernel_gained(before.code, after.code, loads)
        ):
            problems.append(
                Problem("readonly_cache", "no launched kernel gained restricted or __ldg loads")
            )
        data = kt.encode(after.code)
        for kernel in kt.kernels(data):
            try:
                params = _pointer_params(kernel.node, data)
            except _Refuse:
                continue  # a kernel the rule does not touch
            marked = [p for p in params if RESTRICT in cs.text(p.node, data)]
            if marked and len(marked) != len(params):
                problems.append(
                    Problem(
                        "readonly_cache",
                        f"kernel '{kernel.name}' restricts some pointer parameters but not all",
                        line=cs.line_of(kernel.node),
                    )
                )
        return problems


def _first(reasons: list[str]) -> str:
    return reasons[0] if reasons else "no kernel takes a pointer parameter"


def _plan(code: str, program: Program) -> tuple[list[Edit], list[str], list[str]]:
    data = kt.encode(code)
    edits: list[Edit] = []
    details: list[str] = []
    reasons: list[str] = []
    for kernel in kt.kernels(data):
        try:
            params = _pointer_params(kernel.node, data)
            if not params:
                raise _Refuse("it takes no pointer parameter")
            if any(RESTRICT in cs.text(p.node, data) for p in params):
                raise _Refuse("its pointers are already restricted")
            _require_distinct_at_calls(kernel, params, program)
        except _Refuse as refusal:
            reasons.append(f"kernel '{kernel.name}': {refusal}")
            continue
        for param in params:
            edits.extend(_qualify(param, data))
        read_only = [p.name for p in params if p.read_only]
        details.append(
            f"{kernel.name}: {len(params)} pointers restricted, read-only: "
            + (", ".join(read_only) if read_only else "none")
        )
    return edits, details, reasons


def _pointer_params(kernel: Node, data: bytes) -> list[_Param]:
    body = kernel.child_by_field_name("body")
    found = []
    for param in cs.parameter_nodes(kernel):
        declarator = param.child_by_field_name("declarator")
        star = _first_star(declarator)
        if star is None:
            continue
        names = cs.declared_names(param, data, "param")
        if not names:
            continue
        name = names[0].name
        uses = _uses(body, name, data) if body is not None else "other"
        if uses == "other":
            raise _Refuse(f"pointer '{name}' is used other than by subscript")
        found.append(_Param(name, param, star, uses == "read"))
    return found


def _first_star(declarator: Node | None) -> Node | None:
    """The `*` of the outermost pointer declarator (`*x`, `(*a)[8]`)."""
    node = declarator
    while node is not None:
        if node.type == "pointer_declarator":
            star = next((c for c in node.children if c.type == "*"), None)
            nested = node.child_by_field_name("declarator")
            if nested is not None and nested.type == "pointer_declarator":
                return None  # a pointer to pointer: leave it alone
            return star
        if node.type in ("parenthesized_declarator", "array_declarator"):
            node = node.child_by_field_name("declarator") or (
                node.named_children[0] if node.named_children else None
            )
            continue
        return None
    return None


def _uses(body: Node, name: str, data: bytes) -> str:
    """ "read" when every use of `name` reads an element, "write" when some write one,
    "other" when the pointer itself is used (copied, passed, compared)."""
    kind = "read"
    for ident in cs.identifiers_in(body):
        if cs.text(ident, data) != name:
            continue
        top = ident
        parent = ident.parent
        if parent is not None and parent.type == "pointer_expression":
            if cs.text(parent, data).startswith("*"):
                top = parent
        elif (
            parent is not None and parent.type == "field_expression" and parent.children[0] == ident
        ):
            top = parent  # p->x
        elif parent is not None and parent.type == "subscript_expression":
            if parent.children[0] == ident:
                top = parent
        if top == ident:
            return "other"
        # the element's fields and sub-elements are the element too: a.x[i] = v writes a
        while (
            top.parent is not None
            and top.parent.children[0] == top
            and top.parent.type
            in (
                "subscript_expression",
                "field_expression",
                "parenthesized_expression",
            )
        ):
            top = top.parent
        if _is_written(top, data):
            kind = "write"
    return kind


def _is_written(element: Node, data: bytes) -> bool:
    parent = element.parent
    while parent is not None and parent.type == "parenthesized_expression":
        element, parent = parent, parent.parent
    if parent is None:
        return False
    if parent.type == "assignment_expression":
        return parent.child_by_field_name("left") == element
    if parent.type == "update_expression":
        return True
    if parent.type == "pointer_expression" and cs.text(parent, data).startswith("&"):
        return True
    return False


def _require_distinct_at_calls(kernel: kt.Kernel, params: list[_Param], program: Program) -> None:
    """At every call of the host function that launches the kernel, the arrays the kernel
    takes come from distinct variables (when one of two is written)."""
    function = program.function(kernel.function) if kernel.function else None
    if function is None:
        raise _Refuse("the host function that launches it is not in the analysis")
    position = {param.name: index for index, param in enumerate(function.params)}
    mine = [p for p in params if p.name in position]
    written = {p.name for p in params if not p.read_only}
    for caller in program.functions:
        for call in caller.calls:
            if call.callee != function.name:
                continue
            bases: dict[str, str] = {}
            for param in mine:
                index = position[param.name]
                if index >= len(call.arguments):
                    raise _Refuse(f"a call at line {call.line} passes too few arguments")
                base = _base(call.arguments[index])
                for other, other_base in bases.items():
                    if base == other_base and (param.name in written or other in written):
                        raise _Refuse(
                            f"the call at line {call.line} of '{caller.name}' passes "
                            f"'{base}' for both '{other}' and '{param.name}'"
                        )
                bases[param.name] = base


def _base(argument: str) -> str:
    """The variable an argument expression starts from: `a + n` -> a, `(float *)b` -> b."""
    text = re.sub(r"\([^()]*\*\s*\)", " ", argument)  # casts to pointer types
    words = re.findall(r"[A-Za-z_]\w*", text)
    return words[0] if words else argument


def _qualify(param: _Param, data: bytes) -> list[Edit]:
    edits = [Edit(param.star.end_byte, param.star.end_byte, RESTRICT + " ", "restrict")]
    base = cs.base_type(param.node, data)
    if param.read_only and "const" not in base.split():
        edits.append(Edit(param.node.start_byte, param.node.start_byte, "const ", "read-only"))
    return edits
