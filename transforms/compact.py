"""`compact`: run a loop that appends to a std::vector with push_back on the GPU.

Recognised, with `i` the loop variable (step 1, a known trip count): a body of local
declarations with initialisers, then exactly one append to a std::vector `out` of an
arithmetic type, either plain (`out.push_back(V);`) or under a condition with no else
(`if (C) out.push_back(V);`). Nothing else in the body writes memory or names `out`; C, V
and the initialisers have no side effects. Such a loop appends, in the order of i, V of every
iteration whose C holds.

- Under a condition it is a stream compaction: a kernel evaluates C and V of every
  iteration (V only where C holds), CUB's DeviceSelect::Flagged gathers the kept values in
  order, and the host appends them: `out.resize(size + kept)` and one copy into
  `out.data() + size`.
- Without one it is a set of indexed writes: the kernel stores V of iteration t at
  position t of a device buffer, and the host appends all of them the same way.

The arrays the loop reads move as offload's do (declared, allocated, copied in and freed
at one indentation), so `data_residency` can keep them on the device across calls. The
values, flags and CUB's storage are static buffers that only grow; `emplace_back` of one
argument is the same append."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tree_sitter import Node

from cudaify.core import Problem, Variant
from cudaify.frontend.facts import ArrayData, Function, Loop, Program
from cudaify.transforms import csource as cs
from cudaify.transforms import pattern_support as ps
from cudaify.transforms.base import Context
from cudaify.transforms.kernel_codegen import (
    Level,
    array_param,
    device_helpers,
    fresh_name,
    grid_stride_header,
    kernel_argument,
    kernel_arrays,
    line_indent,
    mapped_levels,
    narrowed,
    paren,
    require_enough_work,
    require_no_array_sizeof,
    require_no_jumps,
)

THREADS = 256
APPENDS = ("push_back", "emplace_back")
CUB_INCLUDE = "#include <cub/device/device_select.cuh> /* cudaify: CUB's stream compaction */"


@dataclass(frozen=True)
class CompactPlan:
    located: ps.Located
    level: Level
    output: str  # the std::vector appended to
    output_type: str  # its element type
    declarations: tuple[str, ...]  # the body's local declarations, as written
    condition: str | None  # C, or None for a plain append
    value: str  # V
    arrays: tuple[ArrayData, ...]
    scalars: tuple[tuple[str, str], ...]
    helpers: tuple[str, ...]
    names: dict[str, str]
    devices: tuple[tuple[str, str], ...]
    indent: str


class Compact(ps.LoopPatternMethod):
    name = "compact"
    summary = (
        "run a push_back loop as indexed writes, or with a condition as CUB's stream compaction"
    )
    category = "pattern"
    follows = ("sequential", "offload", "schedule", "reduction", "scan", "sort")
    instruction = (
        "Replace the loop that appends to a std::vector with push_back (under a condition "
        "or not) by a kernel that computes, for every iteration, the condition into a flag "
        "array and the appended value into a value array, cub::DeviceSelect::Flagged over "
        "them (#include <cub/device/device_select.cuh>; call it once with NULL storage to "
        "get the temporary size, allocate it, call it again) into a device buffer and a "
        "device count, then on the host resize the vector by the count and copy the "
        "selected values to its end, in order. Check every CUDA call."
    )

    nothing = "no push_back loop outside main"

    def plans(self, variant: Variant, program: Program) -> tuple[list[Any], list[str]]:
        return ps.plan_loops(
            variant.code,
            program,
            ("sequential",),
            "compact",
            _plan,
            accept=lambda loop: any(call in APPENDS for call in loop.calls),
        )

    def emit(self, code: str, plans: list[Any]) -> str:
        return _emit(code, plans)

    def describe_plan(self, plan: Any) -> str:
        loop = plan.located.loop
        kind = "stream compaction" if plan.condition is not None else "indexed writes"
        return (
            f"{plan.located.function.name}: loop '{loop.var}' at line {loop.line} -> "
            f"{kind} appended to {plan.output}"
        )

    def check(self, before: Variant, after: Variant, ctx: Context) -> list[Problem]:
        from cudaify.transforms import postcondition as pc

        common = pc.common_problems(self.name, before.code, after.code)
        return common or compact_problems(before.code, after.code)


# ---- the plan ----------------------------------------------------------------------------


def _plan(
    code: str, program: Program, function: Function, outer: Loop, loop: Loop, taken: set[str]
) -> CompactPlan:
    if loop.early_exit or loop.children:
        raise ps.Refuse("the loop has inner loops or can exit early")
    if loop.step != 1:
        raise ps.Refuse(f"the loop's step is {loop.step}, not 1")
    require_enough_work([loop])
    located = ps.locate(code, program, function, outer, loop)
    nest, tree, source = located.node, located.tree, located.source
    require_no_jumps(nest)
    declarations, condition, append = _body(located)
    output, value = _append(append, source)
    declared = cs.visible(tree, source, output, nest.start_byte)
    element = ps.indexed_element(declared) if declared is not None else None
    if declared is None or element is None or "vector" not in declared.base:
        raise ps.Refuse(f"'{output}' is not a std::vector")
    element = " ".join(element.replace("const", " ").split())
    if not ps.arithmetic(element):
        raise ps.Refuse(f"'{output}' holds '{element}', not an arithmetic type")
    parts = [*declarations, value] + ([condition] if condition is not None else [])
    for part in parts:
        _require_pure(part, located, output)
    every = ps.unique_arrays(
        tuple(narrowed(a, loop) for a in kernel_arrays(function, outer, nest, tree, source))
    )
    if any(a.name == output for a in every):
        raise ps.Refuse(f"the loop also indexes '{output}'")
    if any(a.access in ("write", "readwrite") for a in every):
        written = next(a.name for a in every if a.access in ("write", "readwrite"))
        raise ps.Refuse(f"the loop also writes '{written}'")
    require_no_array_sizeof(nest, every, source)
    (level,) = mapped_levels([located.loop], tree, source, taken)
    scalars, privates = ps.scalars_of(located, every, {output}, {loop.var})
    if privates:
        raise ps.Refuse(f"the loop also writes '{privates[0][1]}'")
    keys: tuple[str, ...] = ("values", "flags", "selected", "count", "capacity", "storage")
    keys += ("storage_bytes", "storage_capacity", "kept", "size", "blocks")
    names = {key: fresh_name(f"{key}_{output}", taken) for key in keys}
    names["kernel"] = fresh_name(f"{function.name}_append", taken)
    return CompactPlan(
        located=located,
        level=level,
        output=output,
        output_type=element,
        declarations=tuple(cs.text(d, source) for d in declarations),
        condition=cs.text(condition, source) if condition is not None else None,
        value=cs.text(value, source),
        arrays=every,
        scalars=scalars,
        helpers=device_helpers(nest, tree, source, program),
        names=names,
        devices=tuple((a.name, fresh_name(f"d_{a.name}", taken)) for a in every),
        indent=line_indent(source, located.loop.span.start),
    )


def _body(located: ps.Located) -> tuple[list[Node], Node | None, Node]:
    """(local declarations, the condition or None, the append call)."""
    body = located.node.child_by_field_name("body")
    if body is None:
        raise ps.Refuse("the loop has no body")
    statements = (
        [c for c in body.named_children if c.type != "comment"]
        if body.type == "compound_statement"
        else [body]
    )
    if not statements:
        raise ps.Refuse("the loop's body is empty")
    *declarations, last = statements
    for declaration in declarations:
        if declaration.type != "declaration" or "=" not in cs.text(declaration, located.source):
            raise ps.Refuse(
                f"line {cs.line_of(declaration)}: only local declarations with initialisers may "
                "come before the append"
            )
    condition = None
    if last.type == "if_statement":
        if last.child_by_field_name("alternative") is not None:
            raise ps.Refuse(f"line {cs.line_of(last)}: the append's if has an else")
        condition_node = last.child_by_field_name("condition")
        condition = condition_node.named_children[0] if condition_node is not None else None
        consequence = last.child_by_field_name("consequence")
        inner = (
            [c for c in consequence.named_children if c.type != "comment"]
            if consequence is not None and consequence.type == "compound_statement"
            else [consequence]
        )
        if len(inner) != 1 or inner[0] is None or condition is None:
            raise ps.Refuse(f"line {cs.line_of(last)}: the if holds more than the append")
        last = inner[0]
    if last.type != "expression_statement" or not last.named_children:
        raise ps.Refuse(f"line {cs.line_of(last)}: the last statement is not an append")
    return declarations, condition, last.named_children[0]


def _append(call: Node, source: bytes) -> tuple[str, Node]:
    """(the vector, the appended value) of `out.push_back(V)`."""
    function = call.child_by_field_name("function") if call.type == "call_expression" else None
    arguments = call.child_by_field_name("arguments") if function is not None else None
    if function is None or function.type != "field_expression" or arguments is None:
        raise ps.Refuse(f"line {cs.line_of(call)}: the last statement is not out.push_back(value)")
    target = function.child_by_field_name("argument")
    field = function.child_by_field_name("field")
    values = [a for a in arguments.named_children if a.type != "comment"]
    if target is None or target.type != "identifier" or field is None:
        raise ps.Refuse(f"line {cs.line_of(call)}: the append is not on a named vector")
    if cs.text(field, source) not in APPENDS or "->" in cs.text(function, source):
        raise ps.Refuse(f"line {cs.line_of(call)}: the last statement is not out.push_back(value)")
    if len(values) != 1:
        raise ps.Refuse(f"line {cs.line_of(call)}: the append has {len(values)} arguments")
    return cs.text(target, source), values[0]


def _require_pure(part: Node, located: ps.Located, output: str) -> None:
    source = located.source
    for node in cs.walk(part):
        if node.type in ("assignment_expression", "update_expression", "comma_expression"):
            raise ps.Refuse(f"line {cs.line_of(node)}: '{cs.text(part, source)}' has a side effect")
        if node.type == "identifier" and cs.text(node, source) == output:
            raise ps.Refuse(f"line {cs.line_of(node)}: the loop reads '{output}', which it grows")
        target = node.child_by_field_name("argument") if node.type == "field_expression" else None
        if target is not None and cs.text(target, source) == output:
            continue  # its identifier below says what is wrong
        if node.type == "field_expression":
            raise ps.Refuse(
                f"line {cs.line_of(node)}: '{cs.text(node, source)}' calls or reads a member"
            )


# ---- emitting ----------------------------------------------------------------------------


def _emit(code: str, plans: list[CompactPlan]) -> str:
    includes = (CUB_INCLUDE,) if any(p.condition is not None for p in plans) else ()
    return ps.rewrite_loops(
        code, plans, _kernel, _host_text, "the appends run on the GPU", includes
    )


def _kernel(plan: CompactPlan) -> str:
    loop, names, level = plan.located.loop, plan.names, plan.level
    params = [array_param(a) for a in plan.arrays]
    params += [f"{type_} {name}" for type_, name in plan.scalars]
    params += [f"long long {level.trips}", f"{plan.output_type} *{names['values']}"]
    if plan.condition is not None:
        params.append(f"unsigned char *{names['flags']}")
    t = level.index
    body = [f"        {line.strip()}" for line in plan.declarations]
    stored = f"{names['values']}[{t}] = ({plan.output_type})({plan.value});"
    if plan.condition is None:
        body.append(f"        {stored}")
        what = "the value every iteration appends, at its own position"
    else:
        body += [
            f"        const bool cudaify_keep = ({plan.condition});",
            f"        {names['flags']}[{t}] = cudaify_keep ? 1 : 0;",
            "        if (cudaify_keep)",
            f"            {stored}",
        ]
        what = "whether each iteration appends (a flag) and what (a value)"
    lines = [
        f"/* Loop '{loop.var}' of {plan.located.function.name}() (line {loop.line}), appending "
        f"to {plan.output}: {what}. */",
        f"__global__ void {names['kernel']}({', '.join(params)})",
        "{",
        *grid_stride_header(level, "    "),
        *body,
        "    }",
        "}",
    ]
    return "\n".join(lines) + "\n\n"


def _host_text(plan: CompactPlan) -> str:
    ind = plan.indent + "    "
    inner = ind + "    "
    loop, level = plan.located.loop, plan.level
    inclusive = 1 if loop.upper_inclusive else 0
    how = "CUB's DeviceSelect::Flagged" if plan.condition is not None else "indexed writes"
    lines = [
        "{",
        f"{ind}/* cudaify: these push_backs run on the GPU: {plan.names['kernel']}, {how}; "
        f"the values are appended to {plan.output} in order */",
        f"{ind}const long long {level.trips} = cudaify_trips({loop.lower}, {loop.upper}, 1, "
        f"{inclusive});",
        f"{ind}if ({level.trips} > 0) {{",
    ]
    lines += [inner + line for line in _device_side(plan)]
    lines.append(ind + "}")
    if level.declared_outside:
        lines.append(f"{ind}{loop.var} = ({level.var_type})({paren(loop.lower)} + {level.trips});")
    lines.append(plan.indent + "}")
    return "\n".join(lines)


def _device_side(plan: CompactPlan) -> list[str]:
    names, level, out, kind = plan.names, plan.level, plan.output, plan.output_type
    devices = dict(plan.devices)
    trips = level.trips
    lines = ps.copy_in(plan.arrays, devices)
    lines += _scratch(plan)
    arguments = [kernel_argument(a, devices[a.name]) for a in plan.arrays]
    arguments += [name for _, name in plan.scalars]
    arguments += [trips, names["values"]]
    if plan.condition is not None:
        arguments.append(names["flags"])
    lines += [
        f"const unsigned int {names['blocks']} = cudaify_blocks({trips}, {THREADS}, 2147483647u);",
        f"{names['kernel']}<<<{names['blocks']}, {THREADS}>>>({', '.join(arguments)});",
        "CUDAIFY_CHECK(cudaGetLastError());",
    ]
    kept, appended = names["kept"], names["values"]
    if plan.condition is not None:
        lines += _select(plan)
        appended = names["selected"]
    else:
        lines.append(f"const long long {kept} = {trips};")
    size = names["size"]
    lines += [
        f"const size_t {size} = {out}.size();",
        f"{out}.resize({size} + (size_t){kept});",
        f"if ({kept} > 0)",
        f"    CUDAIFY_CHECK(cudaMemcpy({out}.data() + {size}, {appended}, (size_t){kept} * "
        f"sizeof({kind}), cudaMemcpyDeviceToHost));",
    ]
    return lines + ps.frees([devices[a.name] for a in plan.arrays])


def _scratch(plan: CompactPlan) -> list[str]:
    """The values (and flags, the selected values and their count): static, they only grow."""
    names, trips, kind = plan.names, plan.level.trips, plan.output_type
    values, capacity = names["values"], names["capacity"]
    buffers = [(values, kind)]
    if plan.condition is not None:
        buffers += [(names["flags"], "unsigned char"), (names["selected"], kind)]
    lines = [f"static {type_} *{name} = NULL;" for name, type_ in buffers]
    lines += [f"static long long {capacity} = 0;", f"if ({trips} > {capacity}) {{"]
    lines.append(f"    if ({capacity} > 0) {{")
    lines += [f"        CUDAIFY_CHECK(cudaFree({name}));" for name, _ in buffers]
    lines.append("    }")
    lines += [
        f"    CUDAIFY_CHECK(cudaMalloc((void **)&{name}, (size_t){trips} * sizeof({type_})));"
        for name, type_ in buffers
    ]
    lines += [f"    {capacity} = {trips};", "}"]
    return lines


def _select(plan: CompactPlan) -> list[str]:
    names, trips = plan.names, plan.level.trips
    values, flags, selected = names["values"], names["flags"], names["selected"]
    count, kept, storage_bytes = names["count"], names["kept"], names["storage_bytes"]

    def flagged(memory: str) -> str:
        return (
            f"cub::DeviceSelect::Flagged({memory}, {storage_bytes}, {values}, {flags}, "
            f"{selected}, {count}, {trips})"
        )

    return [
        "/* CUB keeps the flagged values in order and counts them */",
        f"static long long *{count} = NULL;",
        f"if ({count} == NULL)",
        f"    CUDAIFY_CHECK(cudaMalloc((void **)&{count}, sizeof(long long)));",
        *ps.cub_with_storage(flagged, names["storage"], storage_bytes, names["storage_capacity"]),
        f"long long {kept} = 0;",
        f"CUDAIFY_CHECK(cudaMemcpy(&{kept}, {count}, sizeof(long long), cudaMemcpyDeviceToHost));",
    ]


# ---- the postcondition -------------------------------------------------------------------


def compact_problems(before: str, after: str) -> list[Problem]:
    """Fewer host loops append to a vector, and each function that lost one launches a kernel
    and appends to that vector what comes back from the device: a resize followed by a copy
    from the device into its end."""
    lost_total = 0
    problems = []
    loops_before, loops_after = _appending_loops(before), _appending_loops(after)
    appended = _device_appends(after)
    for function, vectors in loops_before.items():
        for vector in vectors:
            lost = vectors.count(vector) - loops_after.get(function, []).count(vector)
            if lost <= 0:
                continue
            lost_total += 1
            if (function, vector) not in appended:
                problems.append(
                    Problem(
                        "compact",
                        f"{function}() no longer appends to {vector} in a loop, and no launch "
                        "and device copy append to it instead",
                    )
                )
    if lost_total == 0:
        problems.append(Problem("compact", "no push_back loop was replaced"))
    return sorted(set(problems), key=lambda p: p.message)


def _appending_loops(code: str) -> dict[str, list[str]]:
    """The vectors appended to inside host loops, per function (one entry per loop)."""
    source = code.encode("utf-8", errors="surrogateescape")
    tree = cs.parse(source)
    found: dict[str, list[str]] = {}
    for function, definition in cs.function_nodes(tree, source).items():
        for node in cs.walk(definition):
            if node.type not in cs.LOOP_TYPES:
                continue
            for call in cs.walk(node):
                if call.type != "call_expression":
                    continue
                try:
                    vector, _ = _append(call, source)
                except ps.Refuse:
                    continue
                found.setdefault(function, []).append(vector)
    return found


def _device_appends(code: str) -> set[tuple[str, str]]:
    """(function, vector) where a block launches a kernel, resizes the vector and copies
    from the device into it."""
    source = code.encode("utf-8", errors="surrogateescape")
    tree = cs.parse(source)
    found = set()
    for function, definition in cs.function_nodes(tree, source).items():
        for block in cs.walk(definition):
            if block.type != "compound_statement":
                continue
            nodes = list(cs.walk(block))
            if not any(n.type == "kernel_call_syntax" for n in nodes):
                continue
            for call in nodes:
                if call.type != "call_expression" or cs.call_name(call, source) != "cudaMemcpy":
                    continue
                spelled = cs.text(call, source)
                arguments = call.child_by_field_name("arguments")
                first = arguments.named_children[0] if arguments is not None else None
                if first is None or "cudaMemcpyDeviceToHost" not in spelled:
                    continue
                target = cs.text(first, source).split(".data()")[0].strip()
                resized = f"{target}.resize(" in cs.text(block, source)
                if ".data()" in cs.text(first, source) and resized:
                    found.add((function, target))
    return found
