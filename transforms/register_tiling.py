"""`register_tiling`: each thread computes FACTOR outputs of the kernel (thread
coarsening / register blocking), so that values one output loads serve the others from
registers.

Precondition: an offload kernel (1-D, or 2-D with y outside x) whose body has no
return/goto and no break/continue that leaves a top-level statement, and that uses no
thread or block features of its own.

Rule: the coarsened dimension is y in a 2-D kernel (rows i, i + blockDim.y, ... : the
threads of a warp still walk consecutive j) and x in a 1-D kernel (i, i + blockDim.x, ...:
each load instruction still coalesces). Its grid-stride loop steps FACTOR times further.
When all FACTOR outputs of a thread exist, their bodies run interleaved: the locals
declared at the top of the body get one copy per output (sum_0 ... sum_3: registers), a
loop whose header is the same for every output (`for (int k = 0; k < n; k++)`, nested
ones too) runs once with the FACTOR copies of its body inside, in order, and every other
statement is repeated once per output. Loads the copies share (`b[k * n + j]` for rows
that share j) are then common subexpressions of one loop body. At the edge of the
iteration space the thread runs its outputs one after another with the original body.

Interleaving the statements of different outputs is what running them on different
threads already does: offload only maps loops proven free of dependences between
iterations. Each output's own statements keep their order, and nothing runs that the
source would not run."""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from cudaify.core import Problem, Variant
from cudaify.frontend.edits import Edit, apply_edits
from cudaify.transforms import csource as cs
from cudaify.transforms import kernel_nest as kn
from cudaify.transforms.base import Context, Method, Outcome
from cudaify.transforms.kernel_codegen import grid_blocks
from cudaify.transforms.offload import MOST_BLOCKS

FACTOR = 4
THREADS = {1: (256,), 2: (32, 8)}  # offload's blocks: the kernel works with any shape


@dataclass(frozen=True)
class CoarsenPlan:
    kernel: kn.Kernel
    level: kn.Mapped  # the coarsened dimension
    body: tuple[Node, ...]  # the statements computing one output
    copies: tuple[dict[tuple[int, str], str], ...]  # per output: (declared at, name) -> name
    names: dict[str, str]


class RegisterTiling(Method):
    name = "register_tiling"
    summary = (
        "each thread computes several outputs, their accumulators and shared loads in registers"
    )
    category = "compute"
    follows = ("offload", "shared_tiling", "coalesce")
    instruction = (
        "Coarsen the kernel: each thread computes 4 outputs instead of one, along y in a 2-D "
        "kernel (rows i, i + blockDim.y, i + 2*blockDim.y, i + 3*blockDim.y, so a warp still "
        "reads consecutive columns) or along x in a 1-D kernel (i, i + blockDim.x, ...), and "
        "the grid shrinks by 4 in that dimension (the grid-stride loop steps 4 times further). "
        "Keep one copy of each accumulator per output in registers (sum0..sum3, or an array "
        "indexed only by constants in fully unrolled loops), run the inner loop once with the "
        "4 outputs' bodies inside so a value loaded once serves all 4, and check the bounds "
        "of each output: where not all 4 exist, compute the existing ones one by one."
    )

    def applies(self, variant: Variant, ctx: Context) -> str | None:
        plans, reasons = _plans(variant.code)
        if plans:
            return None
        return reasons[0] if reasons else "no kernel to coarsen (run offload first)"

    def apply_rule(self, variant: Variant, ctx: Context) -> Outcome:
        plans, reasons = _plans(variant.code)
        if not plans:
            return Outcome(
                None, reasons[0] if reasons else "no kernel to coarsen (run offload first)"
            )
        code = _emit(variant.code, plans)
        detail = "; ".join(_describe(plan) for plan in plans)
        return Outcome(variant.then(self.name, code, "rule", detail=detail))

    def check(self, before: Variant, after: Variant, ctx: Context) -> list[Problem]:
        from cudaify.transforms import postcondition as pc

        common = pc.common_problems(self.name, before.code, after.code)
        return common or coarsening_problems(before.code, after.code)


def coarsening_problems(before: str, after: str) -> list[Problem]:
    """The postcondition: a launched kernel has more grid-stride loops whose step covers
    several outputs per thread (a constant factor times the grid), and no barrier was
    added (a coarsened thread must not wait for itself)."""
    from cudaify.transforms import postcondition as pc

    problems = []
    if not pc.kernel_gained(before, after, pc.coarsened_strides):
        problems.append(
            Problem("register_tiling", f"no grid-stride loop covers {FACTOR} outputs per thread")
        )
    barriers = frozenset({"__syncthreads"})
    old, new = pc.parsed(before), pc.parsed(after)
    if pc.device_call_count(new, barriers) > pc.device_call_count(old, barriers):
        problems.append(Problem("register_tiling", "coarsening added a __syncthreads() barrier"))
    return problems


def _describe(plan: CoarsenPlan) -> str:
    level = plan.level
    return (
        f"{plan.kernel.name}: {FACTOR} outputs per thread along '{level.var}' "
        f"({level.dim}, stride blockDim.{level.dim})"
    )


# ---- choosing the kernels -------------------------------------------------------------


def _plans(code: str) -> tuple[list[CoarsenPlan], list[str]]:
    try:
        found = kn.offload_kernels(code)
    except kn.Refuse as refusal:
        return [], [str(refusal)]
    source, tree, taken = found.source, found.tree, found.taken
    plans, reasons = [], []
    for definition in found.definitions:
        try:
            plans.append(_plan(kn.read_kernel(definition, tree, source), taken))
        except kn.Refuse as refusal:
            reasons.append(f"register_tiling: {refusal}")
    return plans, reasons


def _plan(kernel: kn.Kernel, taken: set[str]) -> CoarsenPlan:
    source = kernel.source
    body = kernel.cols.statements
    if not body:
        raise kn.Refuse(f"kernel '{kernel.name}' has an empty body")
    for statement in body:
        feature = kn.uses_block_features(statement, source)
        if feature is not None:
            raise kn.Refuse(f"kernel '{kernel.name}' already uses '{cs.text(feature, source)}'")
    kn.require_no_jumps(list(body), source, f"kernel '{kernel.name}'")
    level = kernel.rows if kernel.rows is not None else kernel.cols
    written = kn.written_names(kernel)
    if level.var in written:
        raise kn.Refuse(f"kernel '{kernel.name}' assigns the loop variable '{level.var}'")
    value = kn.initializer(level.declaration)
    if value is None or not kn.effect_free(value):
        raise kn.Refuse(
            f"kernel '{kernel.name}': '{level.var}' is not a plain function of '{level.counter}'"
        )
    owned = _per_output_names(kernel, level, body)
    copies = tuple(
        {key: kn.fresh(f"{name}_{r}", taken) for key, name in owned.items()} for r in range(FACTOR)
    )
    names = {
        "base": kn.fresh(f"base_{level.var}", taken),
        "r": kn.fresh("output", taken),
    }
    return CoarsenPlan(kernel, level, tuple(body), copies, names)


def _per_output_names(
    kernel: kn.Kernel, level: kn.Mapped, body: tuple[Node, ...]
) -> dict[tuple[int, str], str]:
    """The names each output needs its own copy of: the iteration number, the loop
    variable, and the locals declared by the statements the rule repeats (at the top of
    the body or of a fused loop's body), keyed by (where declared, name)."""
    source = kernel.source
    owned = {
        (-1, level.counter): level.counter,
        (level.declaration.start_byte, level.var): level.var,
    }
    pending = list(body)
    while pending:
        statement = pending.pop()
        if statement.type == "declaration":
            for declared in cs.declared_names(statement, source, "local"):
                owned[(statement.start_byte, declared.name)] = declared.name
        elif _fusable(statement, kernel, level):
            loop_body = statement.child_by_field_name("body")
            if loop_body is not None:
                pending.extend(kn.statements_of(loop_body))
    return owned


def _fusable(statement: Node, kernel: kn.Kernel, level: kn.Mapped) -> bool:
    """A for loop whose header is the same for every output: it declares its variable,
    the body does not assign it, and the header reads only it, names the kernel never
    changes and the variables of enclosing fused loops."""
    if statement.type != "for_statement":
        return False
    source = kernel.source
    init = statement.child_by_field_name("initializer")
    body = statement.child_by_field_name("body")
    var = kn.declared_variable(init, source) if init is not None else None
    if var is None or body is None or var in cs.names_written(body, source):
        return False
    written = kn.written_names(kernel)
    for field in ("initializer", "condition", "update"):
        part = statement.child_by_field_name(field)
        if part is None:
            return False
        for ident in cs.identifiers_in(part):
            if cs.text(ident, source) == var:
                continue
            if not (
                kn.is_invariant(ident, kernel, written)
                or _fused_loop_variable(ident, kernel, level)
            ):
                return False
        if field != "update" and not kn.effect_free(part):
            return False
    return True


def _fused_loop_variable(ident: Node, kernel: kn.Kernel, level: kn.Mapped) -> bool:
    """Whether the identifier is the variable of an enclosing loop that is itself fused."""
    source = kernel.source
    declared = cs.visible(kernel.tree, source, cs.text(ident, source), ident.start_byte)
    if declared is None or declared.scope != "header":
        return False
    node = ident.parent
    while node is not None and node != level.node:
        if node.type == "for_statement":
            init = node.child_by_field_name("initializer")
            if init is not None and init.start_byte == declared.start:
                return _fusable(node, kernel, level)
        node = node.parent
    return False


# ---- emitting -------------------------------------------------------------------------


def _emit(code: str, plans: list[CoarsenPlan]) -> str:
    source = code.encode("utf-8", errors="surrogateescape")
    edits: list[Edit] = []
    for plan in plans:
        kernel = plan.kernel
        text = _kernel_body(plan)
        edits.append(
            Edit(kernel.body.start_byte, kernel.body.end_byte, text, f"coarsen {kernel.name}")
        )
        for launch in kn.launches(kernel.tree, source, kernel.name):
            edits += _launch_edits(launch, plan, source)
    return apply_edits(source, edits).decode("utf-8", errors="surrogateescape")


def _launch_edits(launch: kn.Launch, plan: CoarsenPlan, source: bytes) -> list[Edit]:
    kernel = plan.kernel
    threads = THREADS[len(kernel.levels)]
    reads, per_block, most = [], [], []
    for position, level in enumerate(reversed(kernel.levels)):  # x first
        reads.append(kn.launch_argument(launch, kernel, level.trips, source))
        per_block.append(threads[position] * (FACTOR if level is plan.level else 1))
        most.append(f"{MOST_BLOCKS[level.dim]}u")
    blocks = grid_blocks([cs.text(read, source) for read in reads], tuple(per_block), most)
    shape = (", ".join(blocks), ", ".join(str(t) for t in threads))
    return kn.resize_launch(launch, kernel.tree, source, shape, tuple(reads), "coarsened grid")


def _kernel_body(plan: CoarsenPlan) -> str:
    kernel, level, names = plan.kernel, plan.level, plan.names
    source = kernel.source
    one = "    "
    base, d = names["base"], level.dim
    lines = [
        "{",
        f"{one}/* cudaify register_tiling: each thread computes {FACTOR} outputs along "
        f"'{level.var}', blockDim.{d} apart. */",
        f"{one}for (long long {base} = blockIdx.{d} * (long long)blockDim.{d} * {FACTOR} + "
        f"threadIdx.{d}; {base} < {level.trips};",
        f"{one}     {base} += (long long)blockDim.{d} * gridDim.{d} * {FACTOR}) {{",
    ]
    indent = one * 2
    if kernel.rows is not None:  # the x loop stays, inside
        cols = kernel.cols
        body = cols.node.child_by_field_name("body")
        assert body is not None
        header = source[cols.node.start_byte : body.start_byte].decode("utf-8", "surrogateescape")
        lines.append(
            indent
            + kn.reindent(header.rstrip(), kn.line_indent(source, cols.node.start_byte), indent)
            + " {"
        )
        lines.append(indent + one + kn.moved(cols.declaration, source, indent + one))
        lines += _outputs(plan, indent + one)
        lines.append(indent + "}")
    else:
        lines += _outputs(plan, indent)
    lines += [f"{one}}}", "}"]
    return "\n".join(lines)


def _outputs(plan: CoarsenPlan, indent: str) -> list[str]:
    level, names = plan.level, plan.names
    source = plan.kernel.source
    one = "    "
    base, d, r = names["base"], level.dim, names["r"]
    last = f"{base} + {FACTOR - 1}LL * blockDim.{d}"
    lines = [f"{indent}if ({last} < {level.trips}) {{"]
    inner = indent + one
    for output, copy in enumerate(plan.copies):
        offset = f" + {output}LL * blockDim.{d}" if output else ""
        lines.append(f"{inner}const long long {copy[(-1, level.counter)]} = {base}{offset};")
        lines.append(inner + _copy(level.declaration, copy, plan, inner))
    lines += _fused(list(plan.body), plan, inner)
    lines.append(f"{indent}}} else {{")
    lines += [
        f"{inner}for (int {r} = 0; {r} < {FACTOR}; {r}++) {{",
        f"{inner}{one}const long long {level.counter} = {base} + {r} * (long long)blockDim.{d};",
        f"{inner}{one}if ({level.counter} < {level.trips}) {{",
        f"{inner}{one * 2}" + kn.moved(level.declaration, source, inner + one * 2),
    ]
    lines += [inner + one * 2 + kn.moved(s, source, inner + one * 2) for s in plan.body]
    lines += [f"{inner}{one}}}", f"{inner}}}", f"{indent}}}"]
    return lines


def _fused(statements: list[Node], plan: CoarsenPlan, indent: str) -> list[str]:
    """The statements for all outputs: fused loops once, everything else per output."""
    kernel = plan.kernel
    source = kernel.source
    lines = []
    for statement in statements:
        if statement.type == "for_statement" and _fusable(statement, kernel, plan.level):
            body = statement.child_by_field_name("body")
            assert body is not None
            header = source[statement.start_byte : body.start_byte].decode(
                "utf-8", "surrogateescape"
            )
            old = kn.line_indent(source, statement.start_byte)
            lines.append(indent + kn.reindent(header.rstrip(), old, indent) + " {")
            lines += _fused(kn.statements_of(body), plan, indent + "    ")
            lines.append(indent + "}")
            continue
        lines += [indent + _copy(statement, copy, plan, indent) for copy in plan.copies]
    return lines


def _copy(
    statement: Node, names: dict[tuple[int, str], str], plan: CoarsenPlan, indent: str
) -> str:
    """The statement for one output: its per-output names renamed, re-indented."""
    kernel = plan.kernel
    source = kernel.source
    edits = []
    for ident in cs.identifiers_in(statement):
        new = _renamed(ident, statement, names, plan)
        if new is not None:
            start, end = (
                ident.start_byte - statement.start_byte,
                ident.end_byte - statement.start_byte,
            )
            edits.append(Edit(start, end, new, "per-output copy"))
    text = apply_edits(source[statement.start_byte : statement.end_byte], edits).decode(
        "utf-8", errors="surrogateescape"
    )
    return kn.reindent(text, kn.line_indent(source, statement.start_byte), indent)


def _renamed(
    ident: Node, statement: Node, names: dict[tuple[int, str], str], plan: CoarsenPlan
) -> str | None:
    kernel = plan.kernel
    source = kernel.source
    name = cs.text(ident, source)
    if name == plan.level.counter and (-1, name) in names and _is_counter(ident, plan):
        return names[(-1, name)]
    declaration = _declaring(ident)
    if declaration is not None and (declaration.start_byte, name) in names:
        return names[(declaration.start_byte, name)]
    declared = cs.visible(kernel.tree, source, name, ident.start_byte)
    if declared is not None and (declared.start, name) in names:
        return names[(declared.start, name)]
    return None


def _is_counter(ident: Node, plan: CoarsenPlan) -> bool:
    """The iteration number of the coarsened loop (declared in its header)."""
    kernel = plan.kernel
    declared = cs.visible(
        kernel.tree, kernel.source, cs.text(ident, kernel.source), ident.start_byte
    )
    init = plan.level.node.child_by_field_name("initializer")
    return declared is not None and init is not None and declared.start == init.start_byte


def _declaring(ident: Node) -> Node | None:
    """The declaration whose declarator names `ident`, if `ident` is being declared."""
    node = ident.parent
    child = ident
    while node is not None and node.type in (
        "init_declarator",
        "pointer_declarator",
        "array_declarator",
        "reference_declarator",
        "parenthesized_declarator",
    ):
        if node.type == "init_declarator" and node.child_by_field_name("declarator") != child:
            return None
        if node.type == "array_declarator" and node.child_by_field_name("declarator") != child:
            return None
        child, node = node, node.parent
    if node is not None and node.type == "declaration":
        for index, c in enumerate(node.children):
            if c == child and node.field_name_for_child(index) == "declarator":
                return node
    return None
