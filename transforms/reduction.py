"""`reduction`: run a loop whose only carried dependences are reductions as a kernel.

Each thread runs a grid-stride share of the iterations with its own copy of every
reduction variable, started at the operator's identity: the loop body runs unchanged on
that copy, so `s += x`, `s -= x`, `if (x > m) m = x` and struct fields (`t.sum += x`)
need no rewriting. Each block then combines its threads (warp shuffles, then shared
memory) and writes one partial per block; the host combines the partials, in block
order, into the variable's value before the loop (`s = s0 + p0 + p1 + ...`,
`m = max(m0, ...)`). The second pass on the host works for every type and operator
(no atomic exists for a float minimum or a 64-bit product) and costs a copy of at most
MOST_BLOCKS values. The partials' device buffer is a function-local static allocated on the
first call, so a reduction called in a time loop allocates and frees nothing per call."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tree_sitter import Node

from cudaify.core import Problem, Variant
from cudaify.frontend.edits import Edit, apply_edits
from cudaify.frontend.facts import ArrayData, Function, Loop, Program, Reduction
from cudaify.transforms import csource as cs
from cudaify.transforms import pattern_support as ps
from cudaify.transforms.base import Context
from cudaify.transforms.offload import (
    Level,
    _array_param,
    _arrays,
    _first_statement,
    _fresh,
    _grid_stride_header,
    _helpers,
    _kernel_argument,
    _levels,
    _line_indent,
    _narrowed,
    _paren,
    _reindent,
    _require_enough_work,
    _require_no_array_sizeof,
    _require_no_jumps,
    _statements,
)

THREADS = 256  # a multiple of 32: the block reduction works on whole warps
MOST_BLOCKS = 1024  # enough to fill a large GPU; the grid-stride loop covers the rest


@dataclass(frozen=True)
class Reduced:
    """One reduction variable: its C name (`s`, `t.mass`), the operator's functor, the
    kernel's type for it and the names of its partials."""

    var: str
    op: str
    functor: str
    device_type: str  # kernel parameter element type of the partials
    partials: str  # device buffer (host name) and kernel parameter
    host_partials: str  # host copy of the partials


@dataclass(frozen=True)
class ReductionPlan:
    located: ps.Located
    level: Level
    arrays: tuple[ArrayData, ...]
    scalars: tuple[tuple[str, str], ...]
    privates: tuple[tuple[str, str], ...]
    locals_: tuple[str, ...]  # kernel declarations of the per-thread copies
    reduced: tuple[Reduced, ...]
    helpers: tuple[str, ...]
    kernel: str
    devices: tuple[tuple[str, str], ...]
    blocks: str
    block_index: str
    body: str
    body_indent: str
    indent: str


class ReductionMethod(ps.LoopPatternMethod):
    name = "reduction"
    summary = "run a reduction loop as a kernel: per-thread partials, block shuffles, a host pass"
    category = "pattern"
    follows = ("sequential", "offload")
    instruction = (
        "Turn the reduction loop into a __global__ kernel with a grid-stride loop: each thread "
        "accumulates its iterations into a private copy of every reduction variable started "
        "at the operator's identity (0 for +, 1 for *, +inf for min, -inf for max, ~0 for &). "
        "Combine the threads of a block with __shfl_down_sync inside each warp and shared "
        "memory across warps, and write one partial per block (or atomicAdd it). In the host "
        "function copy the partials back and combine them with the variable's value before "
        "the loop (s = s0 + total, m = max(m0, ...)); keep struct fields as fields. Copy in "
        "the arrays the loop reads, copy back those it writes, check every CUDA call."
    )

    nothing = "no reduction loop outside main"

    def plans(self, variant: Variant, program: Program) -> tuple[list[Any], list[str]]:
        return _plans(variant, program)

    def emit(self, code: str, plans: list[Any]) -> str:
        return _emit(code, plans)

    def describe_plan(self, plan: Any) -> str:
        return _describe(plan)

    def check(self, before: Variant, after: Variant, ctx: Context) -> list[Problem]:
        tree = cs.parse(after.code.encode("utf-8", errors="surrogateescape"))
        source = after.code.encode("utf-8", errors="surrogateescape")
        launched = {
            cs.text(n.child_by_field_name("function"), source)
            for n in cs.walk(tree.root_node)
            if n.type == "call_expression"
            and n.child_by_field_name("function") is not None
            and any(c.type == "kernel_call_syntax" for c in n.children)
        }
        problems = []
        if "cudaify_block_reduce" not in after.code:
            problems.append(
                Problem("reduction", "no block reduction (cudaify_block_reduce) is made")
            )
        if not launched:
            problems.append(Problem("reduction", "no kernel launch (<<<grid, block>>>) is made"))
        return problems


def _describe(plan: ReductionPlan) -> str:
    loop = plan.located.loop
    what = ", ".join(f"{r.var} ({r.op})" for r in plan.reduced)
    where = f"{plan.located.function.name}: loop '{loop.var}' at line {loop.line}"
    return f"{where} -> {plan.kernel}: {what}"


# ---- choosing the loops ---------------------------------------------------------------


def _plans(variant: Variant, program: Program) -> tuple[list[ReductionPlan], list[str]]:
    return ps.plan_loops(variant.code, program, ("reduction",), "reduction", _plan)


def _plan(
    code: str, program: Program, function: Function, outer: Loop, loop: Loop, taken: set[str]
) -> ReductionPlan:
    if loop.early_exit:
        raise ps.Refuse("the loop can exit early (break, return or goto)")
    if not loop.reductions:
        raise ps.Refuse("the analysis names no reduction variable")
    _require_enough_work([loop])
    located = ps.locate(code, program, function, outer, loop)
    nest, tree, source = located.node, located.tree, located.source
    body = nest.child_by_field_name("body")
    if body is None:
        raise ps.Refuse("the loop has no body")
    _require_no_jumps(nest)
    arrays = ps.unique_arrays(
        tuple(_narrowed(a, loop) for a in _arrays(function, outer, nest, tree, source))
    )
    _require_no_array_sizeof(nest, arrays, source)
    roots = {r.var.split(".")[0] for r in loop.reductions}
    (level,) = _levels([located.loop], tree, source, taken)
    scalars, privates = ps.scalars_of(located, arrays, roots, {loop.var})
    locals_, reduced = _reduced(located, loop.reductions, taken)
    return ReductionPlan(
        located=located,
        level=level,
        arrays=arrays,
        scalars=scalars,
        privates=privates,
        locals_=locals_,
        reduced=reduced,
        helpers=_helpers(nest, tree, source, program),
        kernel=_fresh(f"{function.name}_reduce", taken),
        devices=tuple((a.name, _fresh(f"d_{a.name}", taken)) for a in arrays),
        blocks=_fresh("blocks", taken),
        block_index=_fresh("b", taken),
        body=_statements(body, source),
        body_indent=_line_indent(source, _first_statement(body).start_byte),
        indent=_line_indent(source, located.loop.span.start),
    )


def _reduced(
    located: ps.Located, reductions: tuple[Reduction, ...], taken: set[str]
) -> tuple[tuple[str, ...], tuple[Reduced, ...]]:
    """The kernel's per-thread copies (declarations, identity initialisations) and the
    partials of every reduction variable."""
    declarations: list[str] = []
    reduced: list[Reduced] = []
    declared_roots: set[str] = set()
    for reduction in reductions:
        functor = ps.OPERATORS.get(reduction.op)
        if functor is None:
            raise ps.Refuse(f"no device combination for the operator '{reduction.op}'")
        path = reduction.var.split(".")
        if not all(ps._IDENT.fullmatch(part) for part in path):
            raise ps.Refuse(f"reduction variable '{reduction.var}' is not a name or a field")
        root = path[0]
        base = _root_type(located, root)
        if len(path) == 1:
            device_type = base
            declarations.append(f"{base} {root} = {functor}::identity<{base}>();")
        else:
            if root not in declared_roots:
                _require_only_reduced_fields(located, root, reductions)
                declarations.append(f"{base} {root};")
                declared_roots.add(root)
            field = reduction.var
            declarations.append(f"{field} = {functor}::identity<decltype({field})>();")
            device_type = f"decltype(cudaify_declval<{base}>().{'.'.join(path[1:])})"
        stem = reduction.var.replace(".", "_")
        reduced.append(
            Reduced(
                var=reduction.var,
                op=reduction.op,
                functor=functor,
                device_type=device_type,
                partials=_fresh(f"d_partial_{stem}", taken),
                host_partials=_fresh(f"partial_{stem}", taken),
            )
        )
    return tuple(declarations), tuple(reduced)


def _root_type(located: ps.Located, root: str) -> str:
    declared = cs.visible(located.tree, located.source, root, located.node.start_byte)
    if declared is None:
        raise ps.Refuse(f"the declaration of '{root}' was not found")
    if declared.kind not in ("scalar", "reference"):
        raise ps.Refuse(f"reduction variable '{root}' is a {declared.kind}")
    base = " ".join(ps._QUALIFIERS.sub("", declared.base).split())
    words = base.split()
    if "auto" in words or "static" in words or (words.count("long") and "double" in words):
        raise ps.Refuse(f"'{root}' has type '{base}', which the device reduction does not take")
    return base


def _require_only_reduced_fields(
    located: ps.Located, root: str, reductions: tuple[Reduction, ...]
) -> None:
    """A struct whose fields are reduced is used in the loop only through those fields:
    the kernel's copy holds nothing else."""
    fields = {r.var for r in reductions}
    source = located.source
    for ident in cs.identifiers_in(located.node):
        if cs.text(ident, source) != root:
            continue
        node: Node = ident
        while node.parent is not None and node.parent.type == "field_expression":
            if cs.text(node.parent, source).replace(" ", "") in fields:
                break
            node = node.parent
        parent = node.parent
        if parent is None or parent.type != "field_expression":
            raise ps.Refuse(f"'{root}' is used in the loop other than through its reduced fields")
        if cs.text(parent, source).replace(" ", "") not in fields:
            raise ps.Refuse(f"'{root}' is used in the loop other than through its reduced fields")


# ---- emitting ---------------------------------------------------------------------------


def _emit(code: str, plans: list[ReductionPlan]) -> str:
    source = code.encode("utf-8", errors="surrogateescape")
    tree = cs.parse(source)
    edits: list[Edit] = []
    by_position: dict[int, list[ReductionPlan]] = {}
    for plan in plans:
        by_position.setdefault(ps.kernel_position(plan.located), []).append(plan)
    first = min(by_position)
    moves, helpers_text = ps.prelude_edits(source, first)
    edits += moves
    for at, group in sorted(by_position.items()):
        kernels = "".join(_kernel_text(plan) for plan in group)
        edits.append(Edit(at, at, (helpers_text if at == first else "") + kernels, "kernels"))
    for plan in plans:
        start, end = plan.located.loop.span.start, plan.located.node.end_byte
        edits.append(Edit(start, end, _host_text(plan), "the reduction runs on the GPU"))
    helpers = tuple(dict.fromkeys(h for plan in plans for h in plan.helpers))
    edits += ps.device_edits(helpers, tree, source)
    return apply_edits(source, edits).decode("utf-8", errors="surrogateescape")


def _kernel_text(plan: ReductionPlan) -> str:
    loop = plan.located.loop
    params = [_array_param(a) for a in plan.arrays]
    params += [f"{type_} {name}" for type_, name in plan.scalars]
    params.append(f"long long {plan.level.trips}")
    params += [f"{r.device_type} *{r.partials}" for r in plan.reduced]
    names = ", ".join(r.var for r in plan.reduced)
    lines = [
        f"/* Reduction loop '{loop.var}' of {plan.located.function.name}() (line {loop.line}) "
        f"on {names}: per-thread copies, one partial per block. */",
        f"__global__ void {plan.kernel}({', '.join(params)})",
        "{",
    ]
    lines += [f"    {declaration}" for declaration in plan.locals_]
    lines += _grid_stride_header(plan.level, "    ")
    inner = "        "
    lines += [f"{inner}{type_} {name};" for type_, name in plan.privates]
    lines.append(inner + _reindent(plan.body, plan.body_indent, inner))
    lines.append("    }")
    for r in plan.reduced:
        lines.append(f"    {r.var} = cudaify_block_reduce({r.var}, {r.functor}());")
    lines.append("    if (threadIdx.x == 0) {")
    for r in plan.reduced:
        lines.append(f"        {r.partials}[blockIdx.x] = {r.var};")
    lines.append("    }")
    lines.append("}")
    return "\n".join(lines) + "\n\n"


def _host_text(plan: ReductionPlan) -> str:
    ind = plan.indent + "    "
    inner = ind + "    "
    loop, level = plan.located.loop, plan.level
    inclusive = 1 if loop.upper_inclusive else 0
    lines = [
        "{",
        f"{ind}/* cudaify: this reduction runs on the GPU as {plan.kernel} */",
        f"{ind}const long long {level.trips} = cudaify_trips({loop.lower}, {loop.upper}, "
        f"{loop.step}, {inclusive});",
        f"{ind}if ({level.trips} > 0) {{",
    ]
    body = _device_side(plan) + _combine(plan)
    lines += [inner + line for line in body]
    lines.append(ind + "}")
    if level.declared_outside:
        step = f" * {loop.step}" if loop.step != 1 else ""
        lines.append(
            f"{ind}{loop.var} = ({level.var_type})({_paren(loop.lower)} + {level.trips}{step});"
        )
    lines.append(plan.indent + "}")
    return "\n".join(lines)


def _device_side(plan: ReductionPlan) -> list[str]:
    devices = dict(plan.devices)
    lines = ps.copy_in(plan.arrays, devices)
    lines.append(
        f"const unsigned int {plan.blocks} = cudaify_blocks({plan.level.trips}, {THREADS}, "
        f"{MOST_BLOCKS}u);"
    )
    for r in plan.reduced:
        # one buffer of the most partials serves every call: a wrapper called in a time
        # loop allocates once, and no call waits on a cudaFree
        lines.append(f"static cudaify_value_t<decltype({r.var})> *{r.partials} = NULL;")
        size = f"{MOST_BLOCKS} * sizeof(*{r.partials})"
        lines.append(f"if ({r.partials} == NULL)")
        lines.append(f"    CUDAIFY_CHECK(cudaMalloc((void **)&{r.partials}, {size}));")
    arguments = [_kernel_argument(a, devices[a.name]) for a in plan.arrays]
    arguments += [name for _, name in plan.scalars]
    arguments.append(plan.level.trips)
    arguments += [r.partials for r in plan.reduced]
    lines.append(f"{plan.kernel}<<<{plan.blocks}, {THREADS}>>>({', '.join(arguments)});")
    lines.append("CUDAIFY_CHECK(cudaGetLastError());")
    lines += ps.copy_out(plan.arrays, devices)
    return lines


def _combine(plan: ReductionPlan) -> list[str]:
    """Copy the partials back and fold them, in block order, into each variable."""
    b = plan.block_index
    lines = []
    for r in plan.reduced:
        lines.append(f"cudaify_value_t<decltype({r.var})> {r.host_partials}[{MOST_BLOCKS}];")
        lines.append(
            f"CUDAIFY_CHECK(cudaMemcpy({r.host_partials}, {r.partials}, "
            f"{plan.blocks} * sizeof(*{r.partials}), cudaMemcpyDeviceToHost));"
        )
    lines.append(f"for (unsigned int {b} = 0; {b} < {plan.blocks}; {b}++) {{")
    for r in plan.reduced:
        lines.append(f"    {r.var} = {r.functor}()({r.var}, {r.host_partials}[{b}]);")
    lines.append("}")
    lines += ps.frees([devices for _, devices in plan.devices])
    return lines
