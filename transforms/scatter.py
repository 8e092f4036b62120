"""`scatter`: run a store through an index array on the GPU, checking at run time that the
index array never repeats a value.

Recognised, with `i` the loop variable (step 1): a body that is one store
`out[idx[i]] OP E;` (OP one of `=`, `+=`, `-=`, `*=`, ...), where `idx` is an array of
integers the loop does not write, `out` a one-dimensional array of known extent that E does
not read, and E free of side effects. Iterations then touch different elements exactly
when `idx[lo..hi)` has no repeated value and every value lies in `out`'s range: a
permutation, or any one-to-one map. The analysis cannot know that; the device checks it.

The kernel marks each target in a table of `out`'s extent (`atomicAdd` on a zeroed int per
element): a value already marked, or outside the range, raises a flag, and the store still
runs. The device copy of `out` is saved before the launch; when the flag is raised it is put
back, and the host runs the original loop on the values it had (the fallback). The arrays
move as `atomic_privatize`'s do: allocated, copied in, saved, launched, flag read, restored
if need be, copied back and freed at one indentation, so `data_residency` can map them. The
mark table and the saved copy are static buffers that only grow."""

from __future__ import annotations

import re
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
    byte_size,
    device_helpers,
    element_type,
    fresh_name,
    grid_stride_header,
    kernel_argument,
    kernel_arrays,
    line_indent,
    mapped_levels,
    narrowed,
    require_enough_work,
    require_no_array_sizeof,
    require_no_jumps,
)

THREADS = 256
_STORES = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="}


@dataclass(frozen=True)
class ScatterPlan:
    located: ps.Located
    level: Level
    output: ArrayData
    index: str  # the index array
    offset: str  # a constant added to idx[i] ("" for none)
    operator: str
    value: str  # E
    arrays: tuple[ArrayData, ...]  # read: the index array among them
    scalars: tuple[tuple[str, str], ...]
    helpers: tuple[str, ...]
    names: dict[str, str]
    devices: tuple[tuple[str, str], ...]
    original: str
    indent: str


class Scatter(ps.LoopPatternMethod):
    name = "scatter"
    summary = "run a store through an index array, checked on the device to repeat no index"
    category = "pattern"
    follows = ("sequential", "offload", "schedule", "reduction", "scan", "sort", "compact")
    instruction = (
        "Replace the loop that stores through an index array (out[idx[i]] = E) by a kernel "
        "that, for each i, marks idx[i] in a zeroed int table of out's extent with atomicAdd "
        "and raises a device flag when the index is out of range or already marked, and "
        "stores E. Save the device copy of out before the launch; when the flag is raised, "
        "put it back and run the original loop on the host. Check every CUDA call."
    )

    nothing = "no store through an index array outside main"

    def plans(self, variant: Variant, program: Program) -> tuple[list[Any], list[str]]:
        return ps.plan_loops(
            variant.code, program, ("sequential",), "scatter", _plan, accept=_indirect_store
        )

    def emit(self, code: str, plans: list[Any]) -> str:
        return _emit(code, plans)

    def describe_plan(self, plan: Any) -> str:
        loop = plan.located.loop
        return (
            f"{plan.located.function.name}: loop '{loop.var}' at line {loop.line} -> scatter "
            f"into {plan.output.name} through {plan.index}, checked on the device"
        )

    def check(self, before: Variant, after: Variant, ctx: Context) -> list[Problem]:
        from cudaify.transforms import postcondition as pc

        common = pc.common_problems(self.name, before.code, after.code)
        return common or scatter_problems(after.code)


def _indirect_store(loop: Loop) -> bool:
    return not loop.children and any(
        a.is_write and not a.affine and len(a.subscripts) == 1 for a in loop.accesses
    )


# ---- the plan ----------------------------------------------------------------------------


def _plan(
    code: str, program: Program, function: Function, outer: Loop, loop: Loop, taken: set[str]
) -> ScatterPlan:
    if loop.early_exit:
        raise ps.Refuse("the loop can exit early")
    if loop.step != 1:
        raise ps.Refuse(f"the loop's step is {loop.step}, not 1")
    require_enough_work([loop])
    located = ps.locate(code, program, function, outer, loop)
    nest, tree, source = located.node, located.tree, located.source
    require_no_jumps(nest)
    operator, target, value = _store(located)
    output, index, offset = _target(target, located)
    _require_pure(value, located, output)
    every = ps.unique_arrays(
        tuple(narrowed(a, loop) for a in kernel_arrays(function, outer, nest, tree, source))
    )
    by_name = {a.name: a for a in every}
    if output not in by_name or by_name[output].count is None or by_name[output].dims:
        raise ps.Refuse(f"the extent of '{output}' is not known as a one-dimensional array")
    if index not in by_name or by_name[index].access != "read":
        raise ps.Refuse(f"the index array '{index}' is written in the loop or unknown")
    declared = cs.visible(tree, source, index, nest.start_byte)
    element = ps.indexed_element(declared) if declared is not None else None
    if element is None or not ps.integral_type(element):
        raise ps.Refuse(f"the index array '{index}' does not hold integers")
    written = [a.name for a in every if a.name != output and a.access != "read"]
    if written:
        raise ps.Refuse(f"the loop also writes '{written[0]}'")
    require_no_array_sizeof(nest, every, source)
    (level,) = mapped_levels([located.loop], tree, source, taken)
    arrays = tuple(a for a in every if a.name != output)
    scalars, privates = ps.scalars_of(located, arrays + (by_name[output],), set(), {loop.var})
    if privates:
        raise ps.Refuse(f"the loop also writes '{privates[0][1]}'")
    keys = ("marks", "mark_room", "saved", "repeated", "d_repeated", "blocks")
    names = {key: fresh_name(key, taken) for key in keys}
    names["kernel"] = fresh_name(f"{function.name}_scatter", taken)
    original = source[located.loop.span.start : nest.end_byte].decode("utf-8", "surrogateescape")
    return ScatterPlan(
        located=located,
        level=level,
        output=by_name[output],
        index=index,
        offset=offset,
        operator=operator,
        value=cs.text(value, source),
        arrays=arrays,
        scalars=scalars,
        helpers=device_helpers(nest, tree, source, program),
        names=names,
        devices=tuple((a.name, fresh_name(f"d_{a.name}", taken)) for a in every),
        original=original,
        indent=line_indent(source, located.loop.span.start),
    )


def _store(located: ps.Located) -> tuple[str, Node, Node]:
    body = located.node.child_by_field_name("body")
    statements = (
        [c for c in body.named_children if c.type != "comment"]
        if body is not None and body.type == "compound_statement"
        else [body]
    )
    if len(statements) != 1 or statements[0] is None:
        raise ps.Refuse("the body is not one store")
    statement = statements[0]
    expression = statement.named_children[0] if statement.named_children else None
    if statement.type != "expression_statement" or expression is None:
        raise ps.Refuse("the body is not one store")
    if expression.type != "assignment_expression":
        raise ps.Refuse("the body is not an assignment")
    operator = expression.child_by_field_name("operator")
    left, right = expression.child_by_field_name("left"), expression.child_by_field_name("right")
    spelled = cs.text(operator, located.source) if operator is not None else ""
    if left is None or right is None or spelled not in _STORES:
        raise ps.Refuse("the body is not an assignment")
    return spelled, left, right


def _target(target: Node, located: ps.Located) -> tuple[str, str, str]:
    """(out, idx, offset) of `out[idx[i]]` or `out[idx[i] + c]`."""
    source = located.source
    if target.type != "subscript_expression":
        raise ps.Refuse("the store is not to an array element")
    array = target.child_by_field_name("argument")
    indices = target.child_by_field_name("indices")
    subscript = target.child_by_field_name("index") or (
        indices.named_children[0] if indices is not None and indices.named_children else None
    )
    if array is None or array.type != "identifier" or subscript is None:
        raise ps.Refuse("the store is not to an element of a named array")
    spelled = re.sub(r"\s+", "", cs.text(subscript, source))
    found = re.fullmatch(rf"([A-Za-z_]\w*)\[{re.escape(located.loop.var)}\]([+-]\d+)?", spelled)
    if found is None:
        raise ps.Refuse(f"the store's subscript '{spelled}' is not idx[{located.loop.var}]")
    return cs.text(array, source), found.group(1), found.group(2) or ""


def _require_pure(value: Node, located: ps.Located, output: str) -> None:
    source = located.source
    for node in cs.walk(value):
        if node.type in ("assignment_expression", "update_expression", "comma_expression"):
            raise ps.Refuse(f"line {cs.line_of(node)}: the stored value has a side effect")
        if node.type == "identifier" and cs.text(node, source) == output:
            raise ps.Refuse(f"line {cs.line_of(node)}: the stored value reads '{output}'")


# ---- emitting ----------------------------------------------------------------------------


def _emit(code: str, plans: list[ScatterPlan]) -> str:
    return ps.rewrite_loops(code, plans, _kernel, _host_text, "the scatter runs on the GPU")


def _kernel(plan: ScatterPlan) -> str:
    loop, names, level, out = plan.located.loop, plan.names, plan.level, plan.output
    params = [array_param(a) for a in plan.arrays] + [array_param(out)]
    params += [f"{type_} {name}" for type_, name in plan.scalars]
    params += [f"long long {level.trips}", "long long cudaify_first", "long long cudaify_extent"]
    params += ["int *cudaify_marks", "int *cudaify_repeated"]
    lines = [
        f"/* Loop '{loop.var}' of {plan.located.function.name}() (line {loop.line}): a store "
        f"through {plan.index}, each target marked; a repeated or outside one raises the flag. */",
        f"__global__ void {names['kernel']}({', '.join(params)})",
        "{",
        *grid_stride_header(level, "    "),
        f"        const long long cudaify_at = (long long)({plan.index}[{loop.var}]){plan.offset};",
        "        const long long cudaify_mark = cudaify_at - cudaify_first;",
        "        if (cudaify_mark < 0 || cudaify_mark >= cudaify_extent ||",
        "            atomicAdd(&cudaify_marks[cudaify_mark], 1) != 0) {",
        "            *cudaify_repeated = 1;",
        "            continue;",
        "        }",
        f"        {out.name}[cudaify_at] {plan.operator} {plan.value};",
        "    }",
        "}",
    ]
    return "\n".join(lines) + "\n\n"


def _host_text(plan: ScatterPlan) -> str:
    ind = plan.indent + "    "
    inner = ind + "    "
    loop, level, names = plan.located.loop, plan.level, plan.names
    inclusive = 1 if loop.upper_inclusive else 0
    repeated = names["repeated"]
    lines = [
        "{",
        f"{ind}/* cudaify: this scatter runs on the GPU as {names['kernel']}, checked to repeat "
        f"no index of {plan.index} */",
        f"{ind}const long long {level.trips} = cudaify_trips({loop.lower}, {loop.upper}, 1, "
        f"{inclusive});",
        f"{ind}int {repeated} = !({level.trips} > 0 && ({plan.output.count}) > 0);",
        f"{ind}if (!{repeated}) {{",
    ]
    lines += [inner + line for line in _device_side(plan)]
    lines.append(ind + "}")
    why = f"no work for the GPU, or {plan.index} repeats an index or leaves the array"
    lines += ps.host_fallback(repeated, why, (plan.original,), plan.indent, ind, level)
    lines.append(plan.indent + "}")
    return "\n".join(lines)


def _device_side(plan: ScatterPlan) -> list[str]:
    names, out, trips = plan.names, plan.output, plan.level.trips
    devices = dict(plan.devices)
    every = plan.arrays + (out,)
    d_out = devices[out.name]
    marks, mark_room, saved = names["marks"], names["mark_room"], names["saved"]
    repeated, d_repeated, blocks = names["repeated"], names["d_repeated"], names["blocks"]
    count = f"(long long)({out.count})"
    lines = ps.copy_in(every, devices)
    lines += [
        "/* the mark table, the flag and the saved copy: static, they only grow */",
        f"static int *{marks} = NULL;",
        f"static long long {mark_room} = 0;",
        f"static {element_type(out)} *{saved} = NULL;",
        f"static int *{d_repeated} = NULL;",
        f"if ({count} > {mark_room}) {{",
        f"    if ({mark_room} > 0) {{",
        f"        CUDAIFY_CHECK(cudaFree({marks}));",
        f"        CUDAIFY_CHECK(cudaFree({saved}));",
        "    }",
        f"    CUDAIFY_CHECK(cudaMalloc((void **)&{marks}, (size_t){count} * sizeof(int)));",
        f"    CUDAIFY_CHECK(cudaMalloc((void **)&{saved}, {byte_size(out)}));",
        f"    {mark_room} = {count};",
        "}",
        f"if ({d_repeated} == NULL)",
        f"    CUDAIFY_CHECK(cudaMalloc((void **)&{d_repeated}, sizeof(int)));",
        f"CUDAIFY_CHECK(cudaMemsetAsync({d_repeated}, 0, sizeof(int)));",
        f"CUDAIFY_CHECK(cudaMemsetAsync({marks}, 0, (size_t){count} * sizeof(int)));",
        f"CUDAIFY_CHECK(cudaMemcpyAsync({saved}, {d_out}, {byte_size(out)}, "
        "cudaMemcpyDeviceToDevice));",
    ]
    arguments = [kernel_argument(a, devices[a.name]) for a in every]
    arguments += [name for _, name in plan.scalars]
    arguments += [trips, f"(long long)({out.first})", count, marks, d_repeated]
    lines += [
        f"const unsigned int {blocks} = cudaify_blocks({trips}, {THREADS}, 2147483647u);",
        f"{names['kernel']}<<<{blocks}, {THREADS}>>>({', '.join(arguments)});",
        "CUDAIFY_CHECK(cudaGetLastError());",
        f"CUDAIFY_CHECK(cudaMemcpy(&{repeated}, {d_repeated}, sizeof(int), "
        "cudaMemcpyDeviceToHost));",
        f"if ({repeated}) /* the host runs the loop on the values it had */",
        f"    CUDAIFY_CHECK(cudaMemcpy({d_out}, {saved}, {byte_size(out)}, "
        "cudaMemcpyDeviceToDevice));",
    ]
    lines += ps.copy_out((out,), devices)
    return lines + ps.frees([devices[a.name] for a in every])


# ---- the postcondition -------------------------------------------------------------------


def scatter_problems(after: str) -> list[Problem]:
    """A kernel that marks its targets with atomicAdd and raises a flag, launched from a
    block that reads the flag back and keeps the original loop as the host fallback."""
    source = after.encode("utf-8", errors="surrogateescape")
    tree = cs.parse(source)
    kernels = {}
    for name, definition in cs.function_nodes(tree, source).items():
        head = cs.text(definition, source).split("{", 1)[0]
        calls = {n for n, _ in cs.calls_in(definition, source)}
        if "__global__" in head and "atomicAdd" in calls:
            kernels[name] = definition
    launched = False
    for node in cs.walk(tree.root_node):
        if node.type != "kernel_call_syntax" or node.parent is None:
            continue
        call = node.parent
        if cs.call_name(call, source) not in kernels:
            continue
        block = call.parent
        while block is not None and not (
            block.type == "compound_statement" and _has_fallback(block, source)
        ):
            block = block.parent
        launched = launched or block is not None
    if not launched:
        return [
            Problem(
                "scatter",
                "no launch of a kernel that marks its targets with atomicAdd, with the original "
                "loop kept as the host fallback",
            )
        ]
    return []


def _has_fallback(block: Node, source: bytes) -> bool:
    for node in block.named_children:
        if node.type != "if_statement":
            continue
        consequence = node.child_by_field_name("consequence")
        if consequence is None:
            continue
        named = consequence.named_children
        has_comment = any(
            n.type == "comment" and cs.text(n, source).startswith(ps.FALLBACK_COMMENT)
            for n in named
        )
        if has_comment and any(n.type in cs.LOOP_TYPES for n in named):
            return True
    return False
