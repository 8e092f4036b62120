"""`wavefront`: run a 2-D loop nest with true dependences along anti-diagonals.

The nest `for i { for j { body } }` (perfectly nested, step 1, inner bounds free of `i`)
runs as one kernel launch per anti-diagonal `(i - first_i) + (j - first_j) = wave`, one
thread per cell of the diagonal, waves in increasing order.

Legality, proven from the affine accesses: every access to an array the nest writes is
`a[i + p][j + q]` (delinearized by the analysis) with constant p, q. Two accesses to the
same element from iterations d = (di, dj) apart, at least one a write, are ordered by
the sequential loops as the lexicographically positive one of d and -d; the wavefront
runs them in that order exactly when di + dj > 0 for it (its source lies on an earlier
diagonal). That covers Gauss-Seidel in place (reads of (i-1, j) and (i, j-1) see new
values, reads of (i+1, j) and (i, j+1) old ones) and DP tables reading (i-1, j),
(i, j-1), (i-1, j-1). Any other dependence (d = (1, -1): same diagonal) is refused, as
are scalars carried from one iteration to the next."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations_with_replacement
from typing import Any

from cudaify.core import Problem, Variant
from cudaify.frontend import dependence as dep
from cudaify.frontend.affine import (
    Poly,
    add,
    const,
    degree,
    delinearize,
    mul,
    poly_text,
    symbol,
    to_affine,
)
from cudaify.frontend.facts import Access, Affine, ArrayData, Function, Loop, Program
from cudaify.transforms import csource as cs
from cudaify.transforms import pattern_support as ps
from cudaify.transforms.base import Context
from cudaify.transforms.kernel_codegen import (
    IDENT,
    Level,
    array_param,
    body_statements,
    device_helpers,
    first_statement,
    fresh_name,
    kernel_argument,
    kernel_arrays,
    line_indent,
    mapped_levels,
    narrowed,
    paren,
    reindent,
    require_enough_work,
    require_no_array_sizeof,
    require_no_jumps,
    value_at,
)

THREADS = 256
TILE = 32  # cells per side of a tile: one warp per block walks the tile's diagonals


@dataclass(frozen=True)
class WavePlan:
    located: ps.Located
    levels: tuple[Level, Level]  # i, j
    arrays: tuple[ArrayData, ...]
    scalars: tuple[tuple[str, str], ...]
    helpers: tuple[str, ...]
    kernel: str
    devices: tuple[tuple[str, str], ...]
    names: dict[str, str]
    body: str
    body_indent: str
    indent: str
    distances: tuple[tuple[int, int], ...]
    tiled: bool  # every distance has di >= 0 and dj >= 0: tiles run as units
    continues: bool  # the body has a `continue` of its own
    distributed: str = ""  # a host loop of the statements before the inner loop, run first


class Wavefront(ps.LoopPatternMethod):
    name = "wavefront"
    summary = "run a 2-D nest with true dependences one anti-diagonal at a time"
    category = "pattern"
    follows = ("sequential", "offload")
    instruction = (
        "The 2-D loop nest carries dependences whose distance vectors (di, dj) all have "
        "di + dj > 0. Move the inner body into a __global__ kernel that computes one cell "
        "of an anti-diagonal per thread (i = first + k, j = wave - i), and in the host "
        "function copy the arrays to the device once, launch the kernel once per "
        "anti-diagonal in increasing order, then copy back. Check every CUDA call."
    )

    nothing = "no 2-D nest with dependences"

    def plans(self, variant: Variant, program: Program) -> tuple[list[Any], list[str]]:
        return _plans(variant, program)

    def emit(self, code: str, plans: list[Any]) -> str:
        return _emit(code, plans)

    def describe_plan(self, plan: Any) -> str:
        return _describe(plan)

    def check(self, before: Variant, after: Variant, ctx: Context) -> list[Problem]:
        """A host loop (over the diagonals) encloses a launch of a new kernel that is
        passed the loop's variable, in a function whose 2-D nest is gone."""
        from cudaify.transforms import postcondition as pc

        common = pc.common_problems(self.name, before.code, after.code)
        if common:
            return common
        old, new = pc.parsed(before.code), pc.parsed(after.code)
        changed = pc.changed_kernels(old, new)
        nests = {
            name
            for name, loops in pc.replaced_loops(old, new).items()
            if any(pc.host_loops(old, loop)[1:] for loop in loops)
        }
        for launch in pc.host_launches(old, new):
            if launch.kernel not in changed or launch.function is None:
                continue
            launcher = pc.function_of(launch.call, new)
            if not pc.reaching_functions(old, new, launcher) & nests:
                continue
            if pc.launched_per_iteration(new, launch):
                return []
        return [
            Problem(
                "wavefront",
                "no host loop launches a new kernel with its diagonal in place of a 2-D nest",
            )
        ]


def _describe(plan: WavePlan) -> str:
    loop = plan.located.loop
    shown = ", ".join(f"({di}, {dj})" for di, dj in plan.distances) or "none"
    unit = f" of {TILE}x{TILE} tiles" if plan.tiled else ""
    return (
        f"{plan.located.function.name}: nest '{loop.var}, {loop.children[0].var}' at line "
        f"{loop.line} -> {plan.kernel} per anti-diagonal{unit} (dependence distances {shown})"
    )


def _plans(variant: Variant, program: Program) -> tuple[list[WavePlan], list[str]]:
    return ps.plan_loops(
        variant.code, program, ("sequential", "scan"), "wavefront", _plan, accept=_two_deep
    )


def _two_deep(loop: Loop) -> bool:
    """A 2-D nest: exactly one inner loop, itself without loops."""
    return len(loop.children) == 1 and not loop.children[0].children


def _plan(
    code: str, program: Program, function: Function, outer: Loop, loop: Loop, taken: set[str]
) -> WavePlan:
    inner = loop.children[0]
    if loop.early_exit or inner.early_exit:
        raise ps.Refuse("the nest can exit early (break, return or goto)")
    if loop.step != 1 or inner.step != 1:
        raise ps.Refuse("a loop's step is not 1")
    bound_names = set(IDENT.findall(inner.lower + " " + inner.upper))
    if loop.var in bound_names:
        raise ps.Refuse(f"the inner bounds depend on '{loop.var}' (not a rectangle)")
    require_enough_work([loop, inner])
    distances = _distances(loop, inner)
    located = ps.locate(code, program, function, outer, loop)
    nest, tree, source = located.node, located.tree, located.source
    distributed = _distributed(located, loop, inner)
    require_no_jumps(nest)
    written = cs.names_written(nest, source)
    outer_bounds = set(IDENT.findall(loop.lower + " " + loop.upper))
    if (bound_names | outer_bounds) & written:
        raise ps.Refuse("a loop bound changes inside the nest")
    inner_node = cs.node_at(tree, located.loop.children[0].span.start, "for_statement")
    body = inner_node.child_by_field_name("body") if inner_node is not None else None
    if body is None:
        raise ps.Refuse("the inner loop has no body")
    arrays = ps.unique_arrays(
        tuple(narrowed(a, loop) for a in kernel_arrays(function, outer, nest, tree, source))
    )
    require_no_array_sizeof(nest, arrays, source)
    levels = mapped_levels([located.loop, located.loop.children[0]], tree, source, taken)
    scalars, privates = ps.scalars_of(located, arrays, set(), {loop.var, inner.var}, 2)
    carried = [name for _, name in privates if name not in (loop.var, inner.var)]
    if carried:
        raise ps.Refuse(f"the scalar '{carried[0]}' is written in the nest and declared outside it")
    keys = ("wave", "first", "count", "k", "tiles_i", "tiles_j", "tile_i", "tile_j", "step", "row")
    names = {key: fresh_name(key, taken) for key in keys}
    return WavePlan(
        located=located,
        levels=(levels[0], levels[1]),
        arrays=arrays,
        scalars=scalars,
        helpers=device_helpers(nest, tree, source, program),
        kernel=fresh_name(f"{function.name}_wave", taken),
        devices=tuple((a.name, fresh_name(f"d_{a.name}", taken)) for a in arrays),
        names=names,
        body=body_statements(body, source),
        body_indent=line_indent(source, first_statement(body).start_byte),
        indent=line_indent(source, located.loop.span.start),
        distances=distances,
        tiled=all(di >= 0 and dj >= 0 for di, dj in distances),
        continues=_continues(body),
        distributed=distributed,
    )


def _continues(body: Any) -> bool:
    """Whether the body has a `continue` that is not inside a loop of its own."""
    for node in cs.walk(body):
        if node.type != "continue_statement":
            continue
        parent = node.parent
        while parent is not None and parent != body and parent.type not in LOOP_TYPES:
            parent = parent.parent
        if parent is None or parent == body:
            return True
    return False


LOOP_TYPES = cs.LOOP_TYPES


def _offsets(access: Access, i: str, j: str) -> tuple[int, int]:
    """(p, q) of an access `a[i + p][j + q]`; refuses any other shape."""
    subscripts = access.subscripts
    if len(subscripts) != 2 or subscripts[0] is None or subscripts[1] is None:
        raise ps.Refuse(f"line {access.line}: '{access.array}' is not indexed as a[i + p][j + q]")
    first, second = subscripts
    if first.terms != ((i, 1),) or second.terms != ((j, 1),):
        raise ps.Refuse(
            f"line {access.line}: '{access.array}[{first.text}][{second.text}]' is not "
            f"indexed as {access.array}[{i} + p][{j} + q]"
        )
    return first.const, second.const


def _distances(loop: Loop, inner: Loop) -> tuple[tuple[int, int], ...]:
    """The dependence distances of the nest, each lexicographically positive; refuses
    one that the anti-diagonal order would not keep."""
    written = {a.array for a in inner.accesses if a.is_write}
    found: set[tuple[int, int]] = set()
    for array in sorted(written):
        accesses = [a for a in inner.accesses if a.array == array]
        offsets = [(_offsets(a, loop.var, inner.var), a.is_write) for a in accesses]
        for (first, w1), (second, w2) in combinations_with_replacement(offsets, 2):
            if not (w1 or w2):
                continue
            d = (first[0] - second[0], first[1] - second[1])
            if d == (0, 0):
                continue
            forward = d if d > (0, 0) else (-d[0], -d[1])
            if forward[0] + forward[1] <= 0:
                raise ps.Refuse(
                    f"'{array}' has the dependence distance {forward}: its iterations share "
                    "an anti-diagonal or run against it"
                )
            found.add(forward)
    if not found:
        raise ps.Refuse("the nest carries no dependence through arrays (offload's work)")
    return tuple(sorted(found))


# ---- emitting ---------------------------------------------------------------------------


def _emit(code: str, plans: list[WavePlan]) -> str:
    return ps.rewrite_loops(
        code, plans, _kernel_text, _host_text, "the nest runs by anti-diagonals"
    )


def _kernel_text(plan: WavePlan) -> str:
    if plan.tiled:
        return _tiled_kernel_text(plan)
    outer, inner = plan.levels
    names = plan.names
    k, wave, first, count = names["k"], names["wave"], names["first"], names["count"]
    params = [array_param(a) for a in plan.arrays]
    params += [f"{type_} {name}" for type_, name in plan.scalars]
    params += [f"long long {wave}", f"long long {first}", f"long long {count}"]
    loop = plan.located.loop
    lines = [
        f"/* Loop nest '{loop.var}, {loop.children[0].var}' of {plan.located.function.name}() "
        f"(line {loop.line}): one anti-diagonal, one thread per cell. */",
        f"__global__ void {plan.kernel}({', '.join(params)})",
        "{",
        f"    for (long long {k} = blockIdx.x * (long long)blockDim.x + threadIdx.x; "
        f"{k} < {count};",
        f"         {k} += (long long)blockDim.x * gridDim.x) {{",
        f"        {outer.var_type} {outer.loop.var} = {value_at(outer, f'({first} + {k})')};",
        f"        {inner.var_type} {inner.loop.var} = "
        f"{value_at(inner, f'({wave} - {first} - {k})')};",
        "        " + reindent(plan.body, plan.body_indent, "        "),
        "    }",
        "}",
    ]
    return "\n".join(lines) + "\n\n"


def _tiled_kernel_text(plan: WavePlan) -> str:
    outer, inner = plan.levels
    names = plan.names
    wave, first, step, row = names["wave"], names["first"], names["step"], names["row"]
    tile_i, tile_j = names["tile_i"], names["tile_j"]
    params = [array_param(a) for a in plan.arrays]
    params += [f"{type_} {name}" for type_, name in plan.scalars]
    params += [f"long long {wave}", f"long long {first}"]
    params += [f"long long {outer.trips}", f"long long {inner.trips}"]
    loop = plan.located.loop
    # `continue` skips the rest of one cell's body: in `do { } while (0)` it still
    # reaches the barrier
    body = "        " + reindent(plan.body, plan.body_indent, "            ")
    opened, closed = ("do {", "} while (0);") if plan.continues else ("{", "}")
    lines = [
        f"/* Loop nest '{loop.var}, {loop.children[0].var}' of {plan.located.function.name}() "
        f"(line {loop.line}): the {TILE}x{TILE} tiles of one anti-diagonal of tiles, one "
        "block each; a block walks its tile's cell diagonals, one cell per thread. */",
        f"__global__ void __launch_bounds__({TILE}) {plan.kernel}({', '.join(params)})",
        "{",
        f"    const long long {tile_i} = {first} + blockIdx.x, {tile_j} = {wave} - {tile_i};",
        f"    const long long {inner.index} = {tile_j} * {TILE} + threadIdx.x;",
        f"    for (int {step} = 0; {step} < {2 * TILE - 1}; {step}++) {{",
        f"        const int {row} = {step} - (int)threadIdx.x;",
        f"        const long long {outer.index} = {tile_i} * {TILE} + {row};",
        f"        if ({row} >= 0 && {row} < {TILE} && {outer.index} < {outer.trips} && "
        f"{inner.index} < {inner.trips}) {opened}",
        f"            {outer.var_type} {outer.loop.var} = {value_at(outer, outer.index)};",
        f"            {inner.var_type} {inner.loop.var} = {value_at(inner, inner.index)};",
        "    " + body,
        f"        {closed}",
        "        __syncthreads();",
        "    }",
        "}",
    ]
    return "\n".join(lines) + "\n\n"


def _tiled_launches(plan: WavePlan, arguments: list[str]) -> list[str]:
    outer, inner = plan.levels
    names = plan.names
    wave, first, count = names["wave"], names["first"], names["count"]
    tiles_i, tiles_j = names["tiles_i"], names["tiles_j"]
    arguments = [*arguments, wave, first, outer.trips, inner.trips]
    return [
        f"const long long {tiles_i} = ({outer.trips} + {TILE - 1}) / {TILE}, "
        f"{tiles_j} = ({inner.trips} + {TILE - 1}) / {TILE};",
        f"for (long long {wave} = 0; {wave} < {tiles_i} + {tiles_j} - 1; {wave}++) {{",
        f"    const long long {first} = {wave} >= {tiles_j} ? {wave} - {tiles_j} + 1 : 0;",
        f"    const long long {count} = ({wave} < {tiles_i} ? {wave} : {tiles_i} - 1) "
        f"- {first} + 1;",
        f"    {plan.kernel}<<<(unsigned int){count}, {TILE}>>>({', '.join(arguments)});",
        "    CUDAIFY_CHECK(cudaGetLastError());",
        "}",
    ]


def _point_launches(plan: WavePlan, arguments: list[str]) -> list[str]:
    outer, inner = plan.levels
    names = plan.names
    wave, first, count = names["wave"], names["first"], names["count"]
    arguments = [*arguments, wave, first, count]
    return [
        f"for (long long {wave} = 0; {wave} < {outer.trips} + {inner.trips} - 1; {wave}++) {{",
        f"    const long long {first} = {wave} >= {inner.trips} ? {wave} - {inner.trips} + 1 : 0;",
        f"    const long long {count} = ({wave} < {outer.trips} ? {wave} : {outer.trips} - 1) "
        f"- {first} + 1;",
        f"    {plan.kernel}<<<cudaify_blocks({count}, {THREADS}, 2147483647u), {THREADS}>>>"
        f"({', '.join(arguments)});",
        "    CUDAIFY_CHECK(cudaGetLastError());",
        "}",
    ]


def _host_text(plan: WavePlan) -> str:
    ind = plan.indent + "    "
    inner_ind = ind + "    "
    outer, inner = plan.levels
    unit = f" of {TILE}x{TILE} tiles" if plan.tiled else ""
    lines = [
        "{",
        f"{ind}/* cudaify: this loop nest runs on the GPU as {plan.kernel}, one launch per "
        f"anti-diagonal{unit} */",
    ]
    if plan.distributed:
        lines.append(f"{ind}/* cudaify: the statements before the inner loop, distributed */")
        lines += [ind + line for line in plan.distributed.split("\n")]
    for level in plan.levels:
        loop = level.loop
        inclusive = 1 if loop.upper_inclusive else 0
        lines.append(
            f"{ind}const long long {level.trips} = cudaify_trips({loop.lower}, {loop.upper}, "
            f"1, {inclusive});"
        )
    lines.append(f"{ind}if ({outer.trips} > 0 && {inner.trips} > 0) {{")
    devices = dict(plan.devices)
    body = ps.copy_in(plan.arrays, devices)
    arguments = [kernel_argument(a, devices[a.name]) for a in plan.arrays]
    arguments += [name for _, name in plan.scalars]
    launches = _tiled_launches if plan.tiled else _point_launches
    body += launches(plan, arguments)
    body += ps.copy_out(plan.arrays, devices)
    body += ps.frees([devices[a.name] for a in plan.arrays])
    lines += [inner_ind + line for line in body]
    lines.append(ind + "}")
    lines += _final_values(plan, ind)
    lines.append(plan.indent + "}")
    return "\n".join(lines)


def _final_values(plan: WavePlan, ind: str) -> list[str]:
    outer, inner = plan.levels
    lines = []
    if outer.declared_outside:
        value = f"({outer.var_type})({paren(outer.loop.lower)} + {outer.trips})"
        lines.append(f"{ind}{outer.loop.var} = {value};")
    if inner.declared_outside:
        value = f"({inner.var_type})({paren(inner.loop.lower)} + {inner.trips})"
        lines.append(f"{ind}if ({outer.trips} > 0) {inner.loop.var} = {value};")
    return lines


# ---- loop distribution: statements of the outer body before the inner loop -------------


@dataclass(frozen=True)
class _Touch:
    """One array reference in the nest: its dimensions as affine forms (delinearized
    rows when the index is a Horner form), their row lengths, whether it writes, and
    the in-range facts the analysis proved for it (0 <= dimension < length)."""

    array: str
    dims: tuple[Affine, ...]
    lengths: tuple[str, ...]
    is_write: bool
    proven: bool


def _distributed(located: ps.Located, loop: Loop, inner: Loop) -> str:
    """The host loop `for (header) { statements }` that runs the statements of the outer
    body before the inner loop ahead of the whole nest ("" for a perfect nest); refuses
    when that could reorder two accesses of one element.

    Distribution runs every pre-statement instance S1(i1) before every cell S2(i2, j);
    originally S1(i1) runs after S2(i2, j) exactly when i2 < i1, so it is legal when no
    pair of accesses to one element (one a write) has i2 < i1: an isl emptiness test
    over both iteration domains."""
    if loop.perfectly_nested:
        return ""
    source, nest = located.source, located.node
    body = nest.child_by_field_name("body")
    inner_node = cs.node_at(located.tree, located.loop.children[0].span.start, "for_statement")
    if body is None or body.type != "compound_statement" or inner_node is None:
        raise ps.Refuse("the nest is not perfectly nested")
    statements = [c for c in body.named_children if c.type != "comment"]
    position = next((k for k, s in enumerate(statements) if s == inner_node), None)
    if position is None:
        raise ps.Refuse("the nest is not perfectly nested")
    if position + 1 < len(statements):
        raise ps.Refuse("statements follow the inner loop (only earlier ones are distributed)")
    pre = statements[:position]
    for statement in pre:
        _require_distributable(statement, source)
    delta = located.loop.span.start - loop.span.start
    facts = {a.span.start + delta: a for a in inner.accesses}
    firsts = [_touch(n, source, {loop.var}, None) for s in pre for n in _references(s)]
    cells = [
        _touch(n, source, {loop.var, inner.var}, facts.get(n.start_byte))
        for n in _references(inner_node)
    ]
    _require_only_subscripted(inner_node, source, {t.array for t in firsts})
    for first in firsts:
        for cell in cells:
            if first.array == cell.array and (first.is_write or cell.is_write):
                _require_kept_order(first, cell, loop, inner)
    header = source[located.loop.span.start : body.start_byte].decode("utf-8", "surrogateescape")
    return "\n".join([header.strip() + " {", *("    " + cs.text(s, source) for s in pre), "}"])


def _require_distributable(statement: Any, source: bytes) -> None:
    """A pre-statement is an expression statement that stores only through subscripts
    and calls nothing: it shares no scalar with the cells and its accesses are all seen."""
    line = cs.line_of(statement)
    if statement.type != "expression_statement":
        raise ps.Refuse(f"line {line}: the statement before the inner loop is not an expression")
    for node in cs.walk(statement):
        if node.type == "call_expression":
            raise ps.Refuse(f"line {line}: the statement before the inner loop calls a function")
        if node.type == "pointer_expression":
            raise ps.Refuse(f"line {line}: the statement before the inner loop uses a pointer")
    if cs.names_written(statement, source):
        raise ps.Refuse(f"line {line}: the statement before the inner loop writes a scalar")


def _references(node: Any) -> list[Any]:
    """The outermost subscript expressions under `node` (a[i][j] once, not a[i] too)."""
    found = []
    for n in cs.walk(node):
        if n.type != "subscript_expression":
            continue
        parent = n.parent
        if (
            parent is not None
            and parent.type == "subscript_expression"
            and n == (parent.child_by_field_name("argument"))
        ):
            continue
        found.append(n)
    return found


def _require_only_subscripted(inner_node: Any, source: bytes, arrays: set[str]) -> None:
    """The cells name the pre-statements' arrays only as `a[...]`: no pointer or call
    reaches them behind the analysis' back."""
    for ident in cs.identifiers_in(inner_node):
        name = cs.text(ident, source)
        parent = ident.parent
        if name in arrays and (
            parent is None
            or parent.type != "subscript_expression"
            or ident != parent.child_by_field_name("argument")
        ):
            raise ps.Refuse(f"'{name}' is used in the nest other than as {name}[...]")


def _touch(node: Any, source: bytes, loop_vars: set[str], fact: Access | None) -> _Touch:
    indices = []
    base = node
    while base.type == "subscript_expression":
        index = base.child_by_field_name("index") or _index_of(base)
        indices.append(index)
        base = base.child_by_field_name("argument")
    if base is None or base.type != "identifier" or any(i is None for i in indices):
        raise ps.Refuse(f"line {cs.line_of(node)}: '{cs.text(node, source)}' is not a[...]")
    polys = [_poly(i, source) for i in reversed(indices)]
    what = f"line {cs.line_of(node)}: '{cs.text(node, source)}'"
    if any(p is None for p in polys):
        raise ps.Refuse(f"{what} has a subscript that is not a polynomial")
    dims, lengths = _dimensions([p for p in polys if p is not None], loop_vars, what)
    proven = (
        fact is not None
        and bool(lengths)
        and fact.affine
        and tuple((s.terms, s.const) for s in fact.subscripts if s is not None)
        == tuple((d.terms, d.const) for d in dims)
    )
    return _Touch(cs.text(base, source), dims, lengths, _is_written(node), proven)


def _index_of(subscript: Any) -> Any:
    """tree-sitter-cuda keeps the index in a `subscript_argument_list` for C++."""
    for child in subscript.named_children:
        if child.type == "subscript_argument_list" and child.named_children:
            return child.named_children[0]
    return None


def _dimensions(
    polys: list[Poly], loop_vars: set[str], what: str
) -> tuple[tuple[Affine, ...], tuple[str, ...]]:
    if len(polys) == 1 and degree(polys[0]) > 1:
        split = delinearize(polys[0], loop_vars)
        if split is None:
            raise ps.Refuse(f"{what} is not a row-major index")
        parts, lengths = split
        polys = list(parts)
    else:
        lengths = ()
    dims = tuple(to_affine(p, poly_text(p)) for p in polys)
    if any(d is None for d in dims):
        raise ps.Refuse(f"{what} has a subscript that is not affine")
    return tuple(d for d in dims if d is not None), tuple(lengths)


def _is_written(node: Any) -> bool:
    parent = node.parent
    while parent is not None and parent.type == "parenthesized_expression":
        node, parent = parent, parent.parent
    if parent is None:
        return False
    if parent.type == "assignment_expression":
        return node == parent.child_by_field_name("left")
    return parent.type == "update_expression"


def _poly(node: Any, source: bytes) -> Poly | None:
    """An integer expression of names, literals, +, - and * as a polynomial."""
    if node.type == "parenthesized_expression" and len(node.named_children) == 1:
        return _poly(node.named_children[0], source)
    if node.type == "identifier":
        return symbol(cs.text(node, source))
    if node.type == "number_literal":
        digits = cs.text(node, source).rstrip("uUlL")
        return const(int(digits, 0)) if digits.isdigit() or digits.startswith("0x") else None
    if node.type == "unary_expression" and cs.text(node, source).startswith("-"):
        operand = _poly(node.child_by_field_name("argument"), source)
        return None if operand is None else add({}, operand, -1)
    if node.type != "binary_expression":
        return None
    left = _poly(node.child_by_field_name("left"), source)
    right = _poly(node.child_by_field_name("right"), source)
    operator = node.child_by_field_name("operator")
    if left is None or right is None or operator is None:
        return None
    op = cs.text(operator, source)
    if op in ("+", "-"):
        return add(left, right, 1 if op == "+" else -1)
    return mul(left, right) if op == "*" else None


def _require_kept_order(first: _Touch, cell: _Touch, loop: Loop, inner: Loop) -> None:
    """Refuses when S1(i1) and S2(i2, j) with i2 < i1 may touch one element."""
    said = f"'{first.array}' is written before the inner loop and touched by its cells"
    if len(first.dims) != len(cell.dims) or first.lengths != cell.lengths:
        raise ps.Refuse(f"{said} with another shape of subscript")
    if first.lengths and not cell.proven:
        raise ps.Refuse(f"{said}: the cells' row-major index is not proven in range")
    space = dep.Space()
    outer_bound = _bound(loop)
    a_names, a_cons, a_dims = dep.domain((outer_bound,), "a", space)
    b_names, b_cons, b_dims = dep.domain((outer_bound, _bound(inner)), "b", space)
    cons = a_cons + b_cons
    for dim, n in zip(cell.dims[1:], cell.lengths, strict=True):
        value = dep.affine_text(dim, b_dims, space)
        cons += [f"0 <= {value}", f"{value} < {space.param(n)}"]
    names = a_names + b_names
    for dim, n in zip(first.dims[1:], first.lengths, strict=True):
        value = dep.affine_text(dim, a_dims, space)
        outside = f"({value} < 0 or {value} >= {space.param(n)})"
        if not dep.integer_set_empty(space, names, cons + [outside]):
            raise ps.Refuse(f"{said}: its row-major index is not proven in range")
    same = [
        f"{dep.affine_text(x, a_dims, space)} = {dep.affine_text(y, b_dims, space)}"
        for x, y in zip(first.dims, cell.dims, strict=True)
    ]
    if not dep.integer_set_empty(space, names, cons + same + ["b0 < a0"]):
        raise ps.Refuse(
            f"{said} in an earlier iteration of '{loop.var}': distribution would reorder them"
        )


def _bound(loop: Loop) -> dep.Bound:
    return dep.Bound(
        loop.var, loop.lower_affine, loop.upper_affine, loop.step, loop.upper_inclusive
    )
