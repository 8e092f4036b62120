"""`atomic_privatize`: run a loop of irregular updates (`hist[key[i]] += 1`,
`w[bin] += x[i]`) as a kernel whose updates are atomic additions.

Precondition: every array the loop writes is written only by `A[index] += value`,
`A[index] -= value`, `A[index]++` or `A[index]--` statements (additions commute, so
any order of the updates gives the sequential sums, up to float rounding), and the loop
reads none of those arrays otherwise. The updated range is `A[0 .. extent)`, where the
extent is the array's known size or the range an earlier, unconditional loop of the same
function writes (`for (b = 0; b < nbins; b++) count[b] = 0;`).

Each block keeps private copies of the updated arrays in shared memory when they fit
(PRIVATE_BYTES): one per warp when the arrays are small (up to REPLICA_BYTES for all the
copies), so that the warps of a block do not contend for the same bins; it updates them
with shared-memory atomics and adds their sums to the device copy at the end. Larger
arrays are updated on the device copy directly.

The host side moves each array with one allocate / copy in / copy back / free sequence at
one level of its block, the shape `data_residency` turns into `cudaify_map` /
`cudaify_unmap`, and touches no host memory between them, so the arrays can stay on the
device across calls. When the statement right before the loop only zeroes updated arrays
over their whole extent (`for (b = 0; b < nbins; b++) count[b] = 0;`), that loop moves
into the device side as a `cudaMemsetAsync` of the device copy. An index outside
[0, extent) cannot be handled on the device: the kernel flags it, the device copy is
put back as it was (saved before the launch; zeroed arrays need no saving), and the
host runs the original loops (the zeroing one too), so the result is always the
sequential one."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from tree_sitter import Node, Tree

from cudaify.core import Problem, Variant
from cudaify.frontend.edits import Edit, apply_edits
from cudaify.frontend.facts import ArrayData, Function, Loop, Program
from cudaify.transforms import csource as cs
from cudaify.transforms import pattern_support as ps
from cudaify.transforms.base import Context
from cudaify.transforms.kernel_codegen import (
    IDENT,
    Level,
    array_param,
    device_helpers,
    element_type,
    first_statement,
    fresh_name,
    grid_stride_header,
    kernel_argument,
    line_indent,
    mapped_levels,
    narrowed,
    reindent,
    require_enough_work,
    require_no_array_sizeof,
    require_no_jumps,
)

THREADS = 256
WARPS = THREADS // 32
MOST_BLOCKS = 1024
PRIVATE_BYTES = 48 * 1024  # shared memory a block may use without opting in
# Per-warp copies while all of them fit here: few enough bytes that a block's shared
# memory does not limit how many blocks an SM holds.
REPLICA_BYTES = 16 * 1024

# Element types with a 4- or 8-byte atomicAdd (integers through their unsigned type).
ATOMIC_TYPES = frozenset(
    [
        "int",
        "signed",
        "signed int",
        "unsigned",
        "unsigned int",
        "long",
        "long int",
        "unsigned long",
        "unsigned long int",
        "long long",
        "long long int",
        "unsigned long long",
        "unsigned long long int",
        "float",
        "double",
        "size_t",
        "ssize_t",
        "ptrdiff_t",
        "int32_t",
        "uint32_t",
        "int64_t",
        "uint64_t",
    ]
)


@dataclass(frozen=True)
class Update:
    """One irregular update statement: the expression's bytes, array, index, value."""

    start: int
    end: int
    array: str
    index: str
    value: str
    subtract: bool


@dataclass(frozen=True)
class Target:
    """An updated array: its copied range [0, extent) and the kernel's names for it."""

    data: ArrayData  # count = the extent, first = 0, access = readwrite
    device: str
    local: str
    extent: str  # kernel parameter holding the extent
    offset: str  # kernel variable: its byte offset in a block's private copy


@dataclass(frozen=True)
class AtomicPlan:
    located: ps.Located
    level: Level
    arrays: tuple[ArrayData, ...]  # read-only arrays
    targets: tuple[Target, ...]
    updates: tuple[Update, ...]
    scalars: tuple[tuple[str, str], ...]
    privates: tuple[tuple[str, str], ...]
    helpers: tuple[str, ...]
    kernel: str
    devices: tuple[tuple[str, str], ...]
    names: dict[str, str]  # blocks, copies, shared_bytes, outside, d_outside, shared, k, ...
    body: str
    body_indent: str
    indent: str
    original: str  # the loop's text: the host fallback
    zeroing: Zeroing | None  # the loop before it that zeroes updated arrays, moved in


@dataclass(frozen=True)
class Zeroing:
    """The statement before the update loop: a loop that only stores zero into updated
    arrays over their whole extent. It runs on the device as memsets instead."""

    start: int  # its first byte in the variant
    text: str
    arrays: frozenset[str]


class AtomicPrivatize(ps.LoopPatternMethod):
    name = "atomic_privatize"
    summary = "irregular updates as atomics, on block-private shared-memory copies when small"
    category = "pattern"
    follows = ("sequential", "offload")
    instruction = (
        "Turn the loop of irregular updates (hist[key[i]] += v) into a __global__ kernel "
        "with a grid-stride loop whose updates are atomicAdd calls. When the updated array "
        "is small (at most 48 KB), give each block a private copy in shared memory (one per "
        "warp when they all fit in 16 KB): zero it, __syncthreads(), update it with "
        "shared-memory atomics, __syncthreads(), then add each bin's sum over the copies "
        "to the global array with one atomicAdd. When the loop before zeroes the array, "
        "zero the device copy with cudaMemsetAsync instead. Copy the arrays in before the "
        "launch and back after it, each with one cudaMalloc, cudaMemcpy in, cudaMemcpy out "
        "and cudaFree at the same level; check every CUDA call."
    )

    nothing = "no irregular-update loop"

    def plans(self, variant: Variant, program: Program) -> tuple[list[Any], list[str]]:
        return _plans(variant, program)

    def emit(self, code: str, plans: list[Any]) -> str:
        return _emit(code, plans)

    def describe_plan(self, plan: Any) -> str:
        return _describe(plan)

    def check(self, before: Variant, after: Variant, ctx: Context) -> list[Problem]:
        """A new or changed kernel, launched from host code with an array that a loop of
        the launching function updated (or its device copy), keeps private copies (shared,
        local or per-block arrays) and merges with atomics."""
        from cudaify.transforms import postcondition as pc

        common = pc.common_problems(self.name, before.code, after.code)
        if common:
            return common
        old, new = pc.parsed(before.code), pc.parsed(after.code)
        changed = pc.changed_kernels(old, new)
        for launch in pc.host_launches(old, new):
            kernel = changed.get(launch.kernel)
            if kernel is None or launch.function is None:
                continue
            if not pc.atomic_calls(new, kernel):
                continue
            if not pc.private_copies(new, kernel):
                continue
            if not pc.takes_over(old, new, launch):
                continue
            updated = pc.loop_arrays(
                old, pc.reaching_functions(old, new, pc.function_of(launch.call, new))
            )
            passed = {n for arg in pc.arguments(launch.call) for n in pc.identifiers(arg, new)}
            if pc.aliases(new, launch.function, updated) & passed:
                return []
        return [
            Problem(
                "atomic_privatize",
                "no launched kernel updates an array of the loop through private copies "
                "merged with atomics",
            )
        ]


def _describe(plan: AtomicPlan) -> str:
    loop = plan.located.loop
    what = ", ".join(f"{t.data.name}[0..{t.data.count})" for t in plan.targets)
    where = f"{plan.located.function.name}: loop '{loop.var}' at line {loop.line}"
    zeroed = ""
    if plan.zeroing is not None:
        zeroed = f" ({', '.join(sorted(plan.zeroing.arrays))} zeroed on the device)"
    return f"{where} -> {plan.kernel}: {what}{zeroed}"


# ---- choosing the loops ---------------------------------------------------------------


def _plans(variant: Variant, program: Program) -> tuple[list[AtomicPlan], list[str]]:
    return ps.plan_loops(variant.code, program, ("atomic_update",), "atomic_privatize", _plan)


def _plan(
    code: str, program: Program, function: Function, outer: Loop, loop: Loop, taken: set[str]
) -> AtomicPlan:
    if loop.early_exit:
        raise ps.Refuse("the loop can exit early (break, return or goto)")
    require_enough_work([loop])
    located = ps.locate(code, program, function, outer, loop)
    nest, tree, source = located.node, located.tree, located.source
    body = nest.child_by_field_name("body")
    if body is None:
        raise ps.Refuse("the loop has no body")
    require_no_jumps(nest)
    written = sorted({a.array for a in loop.accesses if a.is_write})
    if not written:
        raise ps.Refuse("the loop writes no array")
    updates = _updates(located, set(written))
    all_data = function.arrays_for(outer)
    targets = tuple(_target(located, program, function, name, all_data, taken) for name in written)
    arrays = _read_arrays(located, loop, set(written), all_data)
    require_no_array_sizeof(nest, arrays + tuple(t.data for t in targets), source)
    (level,) = mapped_levels([located.loop], tree, source, taken)
    scalars, privates = ps.scalars_of(located, arrays, set(written), {loop.var})
    keys = (
        "blocks",
        "copies",
        "fit",
        "shared_bytes",
        "outside",
        "d_outside",
        "k",
        "slab",
        "mine",
        "copy",
        "sum",
        "d_saved",
        "saved_room",
        "saved_bytes",
    )
    names = {key: fresh_name(key, taken) for key in keys}
    names["shared"] = fresh_name("cudaify_shared", taken)
    return AtomicPlan(
        located=located,
        level=level,
        arrays=arrays,
        targets=targets,
        updates=updates,
        scalars=scalars,
        privates=privates,
        helpers=device_helpers(nest, tree, source, program),
        kernel=fresh_name(f"{function.name}_atomic", taken),
        devices=tuple((a.name, fresh_name(f"d_{a.name}", taken)) for a in arrays),
        names=names,
        body=_rewritten_body(body, source, updates, targets, names["d_outside"]),
        body_indent=line_indent(source, first_statement(body).start_byte),
        indent=line_indent(source, located.loop.span.start),
        original=cs.text(nest, source),
        zeroing=_zeroing(located, targets),
    )


def _updates(located: ps.Located, written: set[str]) -> tuple[Update, ...]:
    """Every use of a written array, each of which must be an update statement."""
    source = located.source
    found: list[Update] = []
    for ident in cs.identifiers_in(located.node):
        name = cs.text(ident, source)
        if name not in written:
            continue
        subscript = ident.parent
        if subscript is None or subscript.type != "subscript_expression":
            raise ps.Refuse(f"'{name}' is used other than as {name}[index]")
        if subscript.child_by_field_name("argument") != ident:
            raise ps.Refuse(f"'{name}' is used inside another subscript")
        found.append(_update(subscript, name, source, written))
    return tuple(found)


def _update(subscript: Node, name: str, source: bytes, written: set[str]) -> Update:
    statement = subscript.parent
    index = _index_node(subscript)
    if statement is None or index is None:
        raise ps.Refuse(f"'{name}' is used other than by updates")
    if statement.type == "assignment_expression":
        operator = statement.child_by_field_name("operator")
        op = cs.text(operator, source) if operator is not None else ""
        value = statement.child_by_field_name("right")
        if statement.child_by_field_name("left") != subscript or op not in ("+=", "-="):
            raise ps.Refuse(f"line {cs.line_of(statement)}: '{name}' is written by '{op}'")
        if value is None:
            raise ps.Refuse(f"line {cs.line_of(statement)}: no value")
        value_text, subtract = cs.text(value, source), op == "-="
        parts = [index, value]
    elif statement.type == "update_expression":
        value_text = "1"
        subtract = "--" in cs.text(statement, source)
        parts = [index]
    else:
        raise ps.Refuse(f"line {cs.line_of(subscript)}: '{name}' is read, not only updated")
    if statement.parent is None or statement.parent.type != "expression_statement":
        raise ps.Refuse(f"line {cs.line_of(statement)}: the update's value is used")
    for part in parts:
        _require_pure(part, source, written, name)
    return Update(
        start=statement.start_byte,
        end=statement.end_byte,
        array=name,
        index=cs.text(index, source),
        value=value_text,
        subtract=subtract,
    )


def _index_node(subscript: Node) -> Node | None:
    index = subscript.child_by_field_name("index")
    if index is not None:
        return index
    arguments = subscript.child_by_field_name("indices")  # newer grammars: a list
    if arguments is not None and len(arguments.named_children) == 1:
        return arguments.named_children[0]
    return None


def _require_pure(part: Node, source: bytes, written: set[str], name: str) -> None:
    for node in cs.walk(part):
        if node.type in ("assignment_expression", "update_expression"):
            raise ps.Refuse(f"line {cs.line_of(node)}: the update of '{name}' has a side effect")
        if node.type == "identifier" and cs.text(node, source) in written:
            raise ps.Refuse(
                f"line {cs.line_of(node)}: an update reads '{cs.text(node, source)}', "
                "which the loop updates"
            )


def _target(
    located: ps.Located,
    program: Program,
    function: Function,
    name: str,
    all_data: tuple[ArrayData, ...],
    taken: set[str],
) -> Target:
    mine = [d for d in all_data if d.name == name]
    if not mine:
        raise ps.Refuse(f"no data region for '{name}'")
    data = mine[0]
    if data.dims or data.kind == "field":
        raise ps.Refuse(f"'{name}' is not a one-dimensional array")
    element = element_type(data)
    if element not in ATOMIC_TYPES:
        raise ps.Refuse(f"'{name}' holds {element}, which has no atomicAdd")
    extent = next((d.count for d in mine if d.count is not None and d.first.strip() == "0"), None)
    if extent is None:
        extent = _extent_from_earlier_loop(program, function, located_loop(located), name)
    _require_integral_values(located, name, element)
    copy = replace(data, count=extent, first="0", access="readwrite")
    return Target(
        data=copy,
        device=fresh_name(f"d_{name}", taken),
        local=fresh_name(f"local_{name}", taken),
        extent=fresh_name(f"extent_{name}", taken),
        offset=fresh_name(f"offset_{name}", taken),
    )


def _extent_from_earlier_loop(program: Program, function: Function, loop: Loop, name: str) -> str:
    """The count of `name` that an earlier loop, a statement of the function body itself
    and with no condition inside, writes from index 0: the array holds at least that
    many elements, and the count's names do not change in the function. Proven on the
    analysed program (an earlier step may have offloaded that loop since)."""
    source = program.source.encode("utf-8", errors="surrogateescape")
    tree = cs.parse(source)
    definition = cs.node_at(tree, function.span.start, "function_definition")
    if definition is None:
        definition = cs.function_nodes(tree, source).get(function.name)
    if definition is None:
        raise ps.Refuse("the enclosing function was not found")
    written = cs.names_written(definition, source)
    params = _params(definition, source)
    for earlier in function.loops:
        if earlier.span.start >= loop.span.start:
            break
        node = cs.node_at(tree, earlier.span.start, "for_statement")
        if node is None or node.parent != definition.child_by_field_name("body"):
            continue
        if _conditional(node):
            continue
        for data in function.arrays_for(earlier):
            if data.name != name or data.count is None or data.first.strip() != "0":
                continue
            if data.access not in ("write", "readwrite"):
                continue
            names = set(IDENT.findall(data.count))
            if names & written:
                continue
            if any(_is_variable(tree, source, n, node.start_byte) for n in names - params):
                continue
            return data.count
    raise ps.Refuse(f"the extent of '{name}' is unknown (no earlier loop writes it from 0)")


def located_loop(located: ps.Located) -> Loop:
    """The loop as analysed (spans of the analysed program)."""
    for outer in located.function.loops:
        for loop in outer.walk():
            if loop.line == located.loop.line and loop.column == located.loop.column:
                return loop
    raise ps.Refuse("the loop's facts were not found")


def _params(definition: Node, source: bytes) -> set[str]:
    names: set[str] = set()
    for param in cs.parameter_nodes(definition):
        if param.type == "parameter_declaration":
            names.update(d.name for d in cs.declared_names(param, source, "param"))
    return names


def _is_variable(tree: Tree, source: bytes, name: str, at: int) -> bool:
    """A local or global variable (a macro or an enum constant is no variable)."""
    declared = cs.visible(tree, source, name, at)
    return declared is not None and declared.kind != "function"


def _conditional(loop: Node) -> bool:
    kinds = {
        "if_statement",
        "switch_statement",
        "conditional_expression",
        "continue_statement",
        "break_statement",
        "return_statement",
        "goto_statement",
        "while_statement",
        "do_statement",
    }
    return any(node.type in kinds for node in cs.walk(loop))


def _require_integral_values(located: ps.Located, name: str, element: str) -> None:
    """An integer array plus a fractional value rounds at every step: the device's
    single conversion would differ. Only values that are surely integers are taken."""
    if element in ("float", "double"):
        return
    source = located.source
    for ident in cs.identifiers_in(located.node):
        if cs.text(ident, source) != name or ident.parent is None:
            continue
        statement = ident.parent.parent
        if statement is None or statement.type != "assignment_expression":
            continue
        value = statement.child_by_field_name("right")
        if value is not None and not ps.integral_value(value, located):
            raise ps.Refuse(
                f"line {cs.line_of(value)}: cannot prove that '{cs.text(value, source)}' "
                f"is an integer, as '{name}' holds {element}"
            )


def _read_arrays(
    located: ps.Located, loop: Loop, written: set[str], all_data: tuple[ArrayData, ...]
) -> tuple[ArrayData, ...]:
    """The arrays the loop only reads, each with its known range."""
    source, tree, nest = located.source, located.tree, located.node
    named = {cs.text(n, source) for n in cs.identifiers_in(nest)}
    needed: list[ArrayData] = []
    for data in ps.unique_arrays(tuple(d for d in all_data if d.name not in written)):
        if not IDENT.fullmatch(data.name):
            raise ps.Refuse(f"array '{data.name}' ({data.kind}) is not offloaded by the rule yet")
        if data.name not in named:
            continue
        if cs.visible(tree, source, data.name, nest.start_byte) is None:
            continue  # declared inside the loop
        if data.kind == "field":
            raise ps.Refuse(f"array '{data.name}' ({data.kind}) is not offloaded by the rule yet")
        counts = {d.count for d in all_data if d.name == data.name}
        if data.count is None or None in counts:
            raise ps.Refuse(f"the extent of array '{data.name}' is unknown")
        if "*" in data.elem_type:
            raise ps.Refuse(f"array '{data.name}' holds pointers into host memory")
        needed.append(replace(narrowed(data, loop), access="read"))
    return tuple(needed)


def _rewritten_body(
    body: Node, source: bytes, updates: tuple[Update, ...], targets: tuple[Target, ...], flag: str
) -> str:
    """The body's statements with every update replaced by a call of the device helper."""
    by_array = {t.data.name: t for t in targets}
    start, end = body.start_byte, body.end_byte
    if body.type == "compound_statement" and len(body.children) >= 2:
        start, end = body.children[0].end_byte, body.children[-1].start_byte
    edits = []
    for update in updates:
        target = by_array[update.array]
        helper = "cudaify_subtract_at" if update.subtract else "cudaify_add_at"
        call = (
            f"{helper}({update.array}, {target.local}, {target.extent}, "
            f"(long long)({update.index}), ({update.value}), {flag})"
        )
        edits.append(Edit(update.start - start, update.end - start, call, "atomic update"))
    text = apply_edits(source[start:end], edits).decode("utf-8", errors="surrogateescape")
    return text.strip()


def _zeroing(located: ps.Located, targets: tuple[Target, ...]) -> Zeroing | None:
    """The loop right before the update loop when it only zeroes updated arrays over
    their extents, or None: `for (T v = 0; v < E; v++) A[v] = 0;`, E a side-effect-free
    expression of scalars and constants that the analysis finds to be A's extent.
    Nothing runs between the two loops, so E means the same at both."""
    nest, source = located.node, located.source
    before = nest.prev_named_sibling
    if before is None or before.type != "for_statement" or nest.parent is None:
        return None
    if nest.parent.type != "compound_statement":
        return None
    var = _counting_variable(before, source)
    condition = before.child_by_field_name("condition")
    body = before.child_by_field_name("body")
    if var is None or condition is None or body is None:
        return None
    if not _plain_bound(condition, var, located):
        return None
    zeroed = _zeroed_arrays(body, var, source)
    if not zeroed or not _zeroes_extents(located, before, zeroed, targets):
        return None
    return Zeroing(before.start_byte, cs.text(before, source), frozenset(zeroed))


def _zeroes_extents(
    located: ps.Located, before: Node, zeroed: set[str], targets: tuple[Target, ...]
) -> bool:
    """Whether the analysis says loop `before` writes [0, extent) of every array in
    `zeroed`, with the extents the targets took (both spelled by the analysis, macros
    expanded)."""
    try:
        analysed = located_loop(located)
    except ps.Refuse:
        return False
    start = before.start_byte - (located.loop.span.start - analysed.span.start)
    loop = next(
        (
            candidate
            for outer in located.function.loops
            for candidate in outer.walk()
            if candidate.span.start == start
        ),
        None,
    )
    if loop is None:
        return False
    extents = {t.data.name: t.data.count for t in targets}
    for name in zeroed:
        regions = [d for d in located.function.arrays_for(loop) if d.name == name]
        if not any(
            d.first.strip() == "0" and d.count is not None and d.count == extents.get(name)
            for d in regions
        ):
            return False
    return True


def _spelled(expression: str) -> str:
    return "".join(expression.split())


def _counting_variable(loop: Node, source: bytes) -> str | None:
    """v of `for (T v = 0; ...; v++ | ++v | v += 1)` with T an integer type."""
    init, update = loop.child_by_field_name("initializer"), loop.child_by_field_name("update")
    if init is None or update is None or init.type != "declaration":
        return None
    type_node = init.child_by_field_name("type")
    declarators = [c for c in init.named_children if c.type == "init_declarator"]
    if type_node is None or len(declarators) != 1:
        return None
    name, value = (
        declarators[0].child_by_field_name("declarator"),
        declarators[0].child_by_field_name("value"),
    )
    if name is None or name.type != "identifier" or value is None or not _zero(value, source):
        return None
    if not ps.integral_type(cs.text(type_node, source)):
        return None
    var = cs.text(name, source)
    spelled = _spelled(cs.text(update, source))
    return var if spelled in (f"{var}++", f"++{var}", f"{var}+=1") else None


def _plain_bound(condition: Node, var: str, located: ps.Located) -> bool:
    """Whether the condition is `v < E` with E naming only scalars and constants and
    free of side effects (the host's run evaluates it again)."""
    source = located.source
    if condition.type != "binary_expression":
        return False
    operator = condition.child_by_field_name("operator")
    left, right = condition.child_by_field_name("left"), condition.child_by_field_name("right")
    if operator is None or left is None or right is None or cs.text(operator, source) != "<":
        return False
    if left.type != "identifier" or cs.text(left, source) != var:
        return False
    for node in cs.walk(right):
        if node.type in (
            "call_expression",
            "assignment_expression",
            "update_expression",
            "subscript_expression",
            "field_expression",
            "pointer_expression",
        ):
            return False
        if node.type != "identifier":
            continue
        name = cs.text(node, source)
        declared = cs.visible(located.tree, source, name, node.start_byte)
        if name == var or (declared is not None and declared.kind != "scalar"):
            return False
    return True


def _zeroed_arrays(body: Node, var: str, source: bytes) -> set[str]:
    """The arrays of a body made only of `A[v] = 0;` statements, or an empty set."""
    statements = body.named_children if body.type == "compound_statement" else [body]
    zeroed: set[str] = set()
    for statement in statements:
        if statement.type != "expression_statement" or len(statement.named_children) != 1:
            return set()
        store = statement.named_children[0]
        if store.type != "assignment_expression":
            return set()
        operator = store.child_by_field_name("operator")
        left, right = store.child_by_field_name("left"), store.child_by_field_name("right")
        if operator is None or cs.text(operator, source) != "=" or left is None or right is None:
            return set()
        if left.type != "subscript_expression" or not _zero(right, source):
            return set()
        array, index = left.child_by_field_name("argument"), _index_node(left)
        if array is None or array.type != "identifier" or index is None:
            return set()
        if index.type != "identifier" or cs.text(index, source) != var:
            return set()
        zeroed.add(cs.text(array, source))
    return zeroed


def _zero(node: Node, source: bytes) -> bool:
    """A number literal whose value is zero (all its bits zero in any arithmetic type;
    a minus sign would make a float -0.0)."""
    if node.type != "number_literal":
        return False
    spelled = cs.text(node, source).lower().replace("'", "")
    if spelled.startswith("-"):  # the grammar may take the sign into the literal
        return False
    if spelled.startswith("0x"):
        digits = spelled[2:].rstrip("ul")
        return bool(digits) and all(c == "0" for c in digits)
    try:
        return float(spelled.rstrip("ulf")) == 0.0
    except ValueError:
        return False


# ---- emitting ---------------------------------------------------------------------------


def _emit(code: str, plans: list[AtomicPlan]) -> str:
    source = code.encode("utf-8", errors="surrogateescape")
    tree = cs.parse(source)
    edits: list[Edit] = []
    by_position: dict[int, list[AtomicPlan]] = {}
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
        if plan.zeroing is not None:
            start = plan.zeroing.start  # the zeroing loop becomes memsets on the device
        edits.append(Edit(start, end, _host_text(plan), "the updates run on the GPU"))
    helpers = tuple(dict.fromkeys(h for plan in plans for h in plan.helpers))
    edits += ps.device_edits(helpers, tree, source)
    return apply_edits(source, edits).decode("utf-8", errors="surrogateescape")


def _copy_bytes(t: Target) -> str:
    """Bytes of one private copy of `t` in the kernel."""
    return f"cudaify_aligned((size_t){t.extent} * sizeof({element_type(t.data)}))"


def _sum_type(t: Target) -> str:
    """The type a bin's copies are summed in: integers wrap in the unsigned type, as
    the atomic addition itself does."""
    element = element_type(t.data)
    return element if element in ("float", "double") else "unsigned long long"


def _kernel_text(plan: AtomicPlan) -> str:
    loop, names = plan.located.loop, plan.names
    params = [array_param(a) for a in plan.arrays]
    params += [f"{type_} {name}" for type_, name in plan.scalars]
    params.append(f"long long {plan.level.trips}")
    for t in plan.targets:
        params += [f"{element_type(t.data)} *{t.data.name}", f"long long {t.extent}"]
    params += [f"int {names['copies']}", f"int *{names['d_outside']}"]
    updated = ", ".join(t.data.name for t in plan.targets)
    lines = [
        f"/* Irregular updates of {updated} in loop '{loop.var}' of "
        f"{plan.located.function.name}() (line {loop.line}): atomics on block-private "
        f"copies in shared memory when they fit (one per warp, {names['copies']} of "
        "them, when small), else on the device copy. */",
        f"__global__ void {plan.kernel}({', '.join(params)})",
        "{",
        f"    extern __shared__ unsigned long long {names['shared']}[]; /* 8-byte aligned */",
    ]
    lines += _private_copies(plan)
    lines += grid_stride_header(plan.level, "    ")
    inner = "        "
    lines += [f"{inner}{type_} {name};" for type_, name in plan.privates]
    lines.append(inner + reindent(plan.body, plan.body_indent, inner))
    lines.append("    }")
    lines += _merge(plan)
    lines.append("}")
    return "\n".join(lines) + "\n\n"


def _private_copies(plan: AtomicPlan) -> list[str]:
    """The kernel's opening: where each array's copy lies in a copy's slab, this warp's
    slab, and every slab zeroed."""
    names = plan.names
    copies, slab, mine, shared, k = (
        names["copies"],
        names["slab"],
        names["mine"],
        names["shared"],
        names["k"],
    )
    lines = []
    previous = "0"
    for t in plan.targets:
        lines.append(f"    const size_t {t.offset} = {previous};")
        previous = f"{t.offset} + {_copy_bytes(t)}"
    lines.append(f"    const size_t {slab} = {previous};")
    lines += [f"    {element_type(t.data)} *{t.local} = NULL;" for t in plan.targets]
    lines += [
        f"    if ({copies} > 0) {{",
        f"        unsigned char *{mine} = (unsigned char *){shared} +",
        f"            (size_t)((threadIdx.x / 32) % {copies}) * {slab};",
    ]
    for t in plan.targets:
        elem = element_type(t.data)
        lines.append(f"        {t.local} = ({elem} *)({mine} + {t.offset});")
    lines += [
        f"        for (long long {k} = threadIdx.x; {k} < (long long)({copies} * {slab} / 8); "
        f"{k} += blockDim.x)",
        f"            {shared}[{k}] = 0;",
        "        __syncthreads();",
        "    }",
    ]
    return lines


def _merge(plan: AtomicPlan) -> list[str]:
    """The kernel's end: each bin's sum over the block's copies, added to the device
    copy with one atomic addition."""
    names = plan.names
    copies, slab, shared, k = names["copies"], names["slab"], names["shared"], names["k"]
    copy, total = names["copy"], names["sum"]
    lines = [f"    if ({copies} > 0) {{", "        __syncthreads();"]
    for t in plan.targets:
        elem, sum_type = element_type(t.data), _sum_type(t)
        lines += [
            f"        for (long long {k} = threadIdx.x; {k} < {t.extent}; {k} += blockDim.x) {{",
            f"            {sum_type} {total} = 0;",
            f"            for (int {copy} = 0; {copy} < {copies}; {copy}++)",
            f"                {total} += ((const {elem} *)((const unsigned char *){shared} +",
            f"                    (size_t){copy} * {slab} + {t.offset}))[{k}];",
            f"            if ({total} != 0)",
            f"                cudaify_atomic_add(&{t.data.name}[{k}], ({elem}){total});",
            "        }",
        ]
    lines.append("    }")
    return lines


def _host_text(plan: AtomicPlan) -> str:
    ind = plan.indent + "    "
    inner = ind + "    "
    loop, level, names = plan.located.loop, plan.level, plan.names
    inclusive = 1 if loop.upper_inclusive else 0
    extents = dict.fromkeys(f"({t.data.count}) > 0" for t in plan.targets)
    work = " && ".join([f"{level.trips} > 0", *extents])
    lines = [
        "{",
        f"{ind}/* cudaify: these updates run on the GPU as {plan.kernel} */",
        f"{ind}const long long {level.trips} = cudaify_trips({loop.lower}, {loop.upper}, "
        f"{loop.step}, {inclusive});",
        f"{ind}int {names['outside']} = !({work});",
        f"{ind}if (!{names['outside']}) {{",
    ]
    lines += [inner + line for line in _device_side(plan)]
    lines.append(ind + "}")
    lines += _fallback(plan, ind)
    lines.append(plan.indent + "}")
    return "\n".join(lines)


def _device_side(plan: AtomicPlan) -> list[str]:
    """Allocate, copy in, launch, copy back and free at one level, and no host memory
    touched in between (the shape data_residency maps)."""
    names = plan.names
    devices = dict(plan.devices)
    devices.update({t.data.name: t.device for t in plan.targets})
    every = plan.arrays + tuple(t.data for t in plan.targets)
    outside, d_outside = names["outside"], names["d_outside"]
    lines = ps.copy_in(every, devices)
    lines += [
        f"static int *{d_outside} = NULL; /* kept for later calls */",
        f"if ({d_outside} == NULL)",
        f"    CUDAIFY_CHECK(cudaMalloc((void **)&{d_outside}, sizeof(int)));",
        f"CUDAIFY_CHECK(cudaMemsetAsync({d_outside}, 0, sizeof(int)));",
    ]
    lines += _zero_or_save(plan)
    lines += _launch(plan, devices)
    lines += [
        f"CUDAIFY_CHECK(cudaMemcpy(&{outside}, {d_outside}, sizeof(int), cudaMemcpyDeviceToHost));"
    ]
    lines += _restore(plan)
    lines += ps.copy_out(tuple(t.data for t in plan.targets), devices)
    lines += ps.frees([devices[a.name] for a in every])
    return lines


def _saved(plan: AtomicPlan) -> list[tuple[Target, str]]:
    """The arrays the device side saves before the launch (those not zeroed), each with
    its byte offset in the saved buffer."""
    zeroed = plan.zeroing.arrays if plan.zeroing is not None else frozenset()
    found = []
    offset = "0"
    for t in plan.targets:
        if t.data.name in zeroed:
            continue
        found.append((t, offset))
        offset = _plus(offset, f"cudaify_aligned({_bytes(t.data)})")
    return found


def _plus(offset: str, more: str) -> str:
    return more if offset == "0" else f"{offset} + {more}"


def _at(pointer: str, offset: str) -> str:
    return pointer if offset == "0" else f"{pointer} + ({offset})"


def _bytes(data: ArrayData) -> str:
    return f"(size_t)({data.count}) * sizeof({element_type(data)})"


def _zero_or_save(plan: AtomicPlan) -> list[str]:
    """Zeroed arrays start from zero on the device; the others are saved, so that an
    index outside the device copy can put them back for the host's run."""
    zeroed = plan.zeroing.arrays if plan.zeroing is not None else frozenset()
    lines = [
        f"CUDAIFY_CHECK(cudaMemsetAsync({t.device}, 0, {_bytes(t.data)}));"
        for t in plan.targets
        if t.data.name in zeroed
    ]
    saved = _saved(plan)
    if not saved:
        return lines
    names = plan.names
    d_saved, room, total = names["d_saved"], names["saved_room"], names["saved_bytes"]
    last, last_offset = saved[-1]
    lines += [
        f"const size_t {total} = {_plus(last_offset, f'cudaify_aligned({_bytes(last.data)})')};",
        f"static char *{d_saved} = NULL; /* kept for later calls */",
        f"static size_t {room} = 0;",
        f"if ({room} < {total}) {{",
        f"    if ({d_saved} != NULL)",
        f"        CUDAIFY_CHECK(cudaFree({d_saved}));",
        f"    CUDAIFY_CHECK(cudaMalloc((void **)&{d_saved}, {total}));",
        f"    {room} = {total};",
        "}",
    ]
    lines += [
        f"CUDAIFY_CHECK(cudaMemcpyAsync({_at(d_saved, offset)}, {t.device}, {_bytes(t.data)}, "
        "cudaMemcpyDeviceToDevice));"
        for t, offset in saved
    ]
    return lines


def _restore(plan: AtomicPlan) -> list[str]:
    saved = _saved(plan)
    if not saved:
        return []
    names = plan.names
    lines = [f"if ({names['outside']}) {{ /* the host runs the loop on the values it had */"]
    lines += [
        f"    CUDAIFY_CHECK(cudaMemcpyAsync({t.device}, {_at(names['d_saved'], offset)}, "
        f"{_bytes(t.data)}, cudaMemcpyDeviceToDevice));"
        for t, offset in saved
    ]
    lines.append("}")
    return lines


def _launch(plan: AtomicPlan, devices: dict[str, str]) -> list[str]:
    names = plan.names
    shared_bytes, copies, fit, blocks = (
        names["shared_bytes"],
        names["copies"],
        names["fit"],
        names["blocks"],
    )
    sizes = " + ".join(
        f"cudaify_aligned((size_t)({t.data.count}) * sizeof({element_type(t.data)}))"
        for t in plan.targets
    )
    lines = [
        f"const size_t {shared_bytes} = {sizes};",
        f"const size_t {fit} = {REPLICA_BYTES} / {shared_bytes};",
        f"const int {copies} = {shared_bytes} > {PRIVATE_BYTES} ? 0 : "
        f"{fit} >= {WARPS} ? {WARPS} : {fit} >= 1 ? (int){fit} : 1;",
        f"const unsigned int {blocks} = "
        f"cudaify_blocks({plan.level.trips}, {THREADS}, {MOST_BLOCKS}u);",
    ]
    arguments = [kernel_argument(a, devices[a.name]) for a in plan.arrays]
    arguments += [name for _, name in plan.scalars]
    arguments.append(plan.level.trips)
    for t in plan.targets:
        arguments += [t.device, f"(long long)({t.data.count})"]
    arguments += [copies, names["d_outside"]]
    lines += [
        f"{plan.kernel}<<<{blocks}, {THREADS}, (size_t){copies} * {shared_bytes}>>>"
        f"({', '.join(arguments)});",
        "CUDAIFY_CHECK(cudaGetLastError());",
    ]
    return lines


def _fallback(plan: AtomicPlan, ind: str) -> list[str]:
    """No work for the device, or an index outside the copied range: the host runs the
    original loops (the zeroing one too when it moved to the device)."""
    zeroing = (plan.zeroing.text,) if plan.zeroing is not None else ()
    why = "no work for the GPU, or an index fell outside the copied range"
    return ps.host_fallback(
        plan.names["outside"], why, (*zeroing, plan.original), plan.indent, ind, plan.level
    )
