"""`shared_tiling`: stage the values a block's threads share in shared memory.

Four shapes of offload kernel, each recognised by syntax (kernel_nest) and refused when
unsure:

1. Matrix-multiply-like 2-D kernels (rows i on y, columns j on x) whose body is
   `<prologue> for (k ...) <k body> <epilogue>`, the k loop's bounds the same for every
   thread, and the k body reading some array through a subscript that depends on k and on
   exactly one of i and j (`a[i*n+k]`, `b[k][j]`, `a[p*m+i]`: any expression, row- or
   column-major, flat or not), always (not under a condition), from an array the kernel
   never writes, with an index made only of i or j, k and names the kernel never changes.
   Each block owns a TILE x TILE tile of outputs and walks k one TILE at a time: it loads
   the TILE x TILE values its threads will read (the same expression, evaluated at the
   tile's i or j and k; the address's unit-stride index on threadIdx.x so that the loads
   coalesce; zeros past the edges), waits at a barrier, runs the k body for the stage's k
   values with the staged reads replaced by shared-memory reads, and waits again before
   the next load. Each thread keeps its own k order: its sums are bit-identical.
2. The same in 1-D kernels for the reads that depend on k alone (`x[k]`, `pos[3*j+1]`):
   all 256 threads of a block share each staged element.
3. Stencils (1-D or 2-D, loop variables stepping by one): reads of a read-only array at
   constant offsets from the thread's own point (`u[i-1][j]`, `in[(i+1)*n+j]`: offsets
   found by comparing the index polynomials). Each block loads its tile plus the halo;
   a slot is loaded only when the source reads that element from some iteration, so no
   load touches memory the source does not.
4. Transposes: 2-D kernels with no inner loop whose stores (`out[j*n+i] = ...`,
   `b[j][i] = f(a[i][j])`) all walk memory along one mapped loop while some read walks it
   along the other one (its last subscript moves by one with that loop) and also moves
   with the stores' loop, always (not under a condition), from an array the kernel never
   writes, with an index made only of i, j and names the kernel never changes. One warp
   then reads or writes a strided column. Blocks of 32 x 8 threads take 32 x 32 tiles of
   iterations: they load the staged reads with threadIdx.x on the reads' unit-stride loop
   into a 32 x 33 tile (the pad column keeps a warp's column reads on 32 banks), wait,
   and run the body, unchanged but for the staged reads, with threadIdx.x on the stores'
   loop, so that both the loads and the stores coalesce. Each iteration still runs once,
   in one thread, on the values the source reads.

Barriers: the grid-stride loops become loops over tiles whose trip counts depend on the
block only; threads past the edge of the iteration space load, wait and skip the work,
so every thread of a block reaches every barrier. The launches get the block shape the
tiles assume; the kernel traps if it is ever launched with another one."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tree_sitter import Node

from cudaify.core import Problem, Variant
from cudaify.frontend.edits import Edit, apply_edits
from cudaify.transforms import csource as cs
from cudaify.transforms import kernel_nest as kn
from cudaify.transforms.base import Context, Method, Outcome

TILE = 16  # 2-D kernels: TILE x TILE threads, TILE iterations of k per stage
TILE_1D = 256  # 1-D kernels: offload's block size, as many iterations of k per stage
MOST_TILES = 4  # staged reads per kernel: 4 * 16 * 17 * 8 bytes at most, far below 48 KiB
_QUALIFIERS = {"const", "volatile", "restrict", "__restrict__", "__restrict"}
_CONDITIONAL = frozenset(
    {
        "if_statement",
        "conditional_expression",
        "for_statement",
        "while_statement",
        "do_statement",
        "switch_statement",
        "case_statement",
        # unevaluated operands: the source never reads them
        "sizeof_expression",
        "alignof_expression",
        "decltype",
    }
)
# Element types a tile may hold: arithmetic types, whose size keeps the tiles small.
ARITHMETIC = frozenset(
    "float double char short int long signed unsigned bool _Bool half __half size_t "
    "int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t ptrdiff_t".split()
)
_FLOATING = frozenset({"float", "double", "half", "__half"})


@dataclass(frozen=True)
class KLoop:
    """The inner sequential loop `for (T k = first; k < bound; k += step)`."""

    node: Node
    var: str
    var_type: str
    first: str
    bound: str
    step: int
    inclusive: bool
    body: Node


@dataclass(frozen=True)
class Operand:
    """One staged read: every occurrence of `text` in the k body reads the tile."""

    text: str
    nodes: tuple[Node, ...]
    role: str  # "rows" (depends on i) | "cols" (depends on j) | "k" (k alone, 1-D kernels)
    k_contiguous: bool  # the address's unit stride is along k (else along i or j)
    elem_type: str
    tile: str  # the shared array's name


@dataclass(frozen=True)
class TilePlan:
    kernel: kn.Kernel
    kloop: KLoop
    prologue: tuple[Node, ...]
    epilogue: tuple[Node, ...]
    operands: tuple[Operand, ...]
    names: dict[str, str]  # role of a new name -> its fresh spelling


class SharedTiling(Method):
    name = "shared_tiling"
    summary = (
        "stage reused tiles of global arrays in shared memory (matrix products, stencils, "
        "transposes)"
    )
    category = "memory"
    follows = ("offload", "coalesce", "readonly_cache")
    instruction = (
        "The kernel computes a 2-D output (i on y, j on x) with an inner loop over k that reads "
        "one operand depending on (i, k) and one depending on (k, j). Give each block a "
        "TILE x TILE tile of outputs (TILE = 16, launch dim3(16, 16) blocks) and walk k one "
        "tile at a time: all threads of the block cooperatively load the TILE x TILE slices "
        "of both operands into __shared__ arrays (pad the inner dimension by one; put the "
        "operand's unit-stride index on threadIdx.x so loads coalesce; store 0 for slots past "
        "the end of the matrices), __syncthreads(), accumulate from shared memory, and "
        "__syncthreads() again before the next load. Every thread of the block must reach "
        "every __syncthreads(): loop over tiles with bounds that depend only on blockIdx and "
        "gridDim, and let threads outside the matrix load and wait but skip the arithmetic and "
        "the store. Keep each thread's own k order so the sums do not change. For a 1-D kernel "
        "stage the values every thread reads (x[k]) 256 at a time; for a stencil stage the "
        "block's tile plus its halo once and read the neighbours from shared memory. For a "
        "transpose-like 2-D kernel without an inner loop (out[j * n + i] = f(in[i * m + j])) "
        "use 32 x 8 blocks over 32 x 32 tiles: load the input tile with threadIdx.x on the "
        "input's unit-stride index into a [32][33] __shared__ array, __syncthreads(), then let "
        "threadIdx.x walk the output's unit-stride index and read the transposed slot."
    )

    def applies(self, variant: Variant, ctx: Context) -> str | None:
        plans, reasons = _plans(variant.code)
        if plans:
            return None
        return reasons[0] if reasons else "no kernel to tile (run offload first)"

    def apply_rule(self, variant: Variant, ctx: Context) -> Outcome:
        plans, reasons = _plans(variant.code)
        if not plans:
            return Outcome(None, reasons[0] if reasons else "no kernel to tile (run offload first)")
        code = _emit(variant.code, plans)
        detail = "; ".join(_describe(plan) for plan in plans)
        return Outcome(variant.then(self.name, code, "rule", detail=detail))

    def check(self, before: Variant, after: Variant, ctx: Context) -> list[Problem]:
        """A launched kernel declares more __shared__ arrays than before and calls
        __syncthreads; no barrier that some threads of a block may skip."""
        from cudaify.transforms import postcondition as pc

        common = pc.common_problems(self.name, before.code, after.code)
        if common:
            return common
        problems = tiling_problems(after.code)
        if not pc.kernel_gained(before.code, after.code, pc.staged_tiles):
            problems.append(
                Problem("shared_tiling", "no launched kernel stages a new tile in shared memory")
            )
        return problems


def tiling_problems(code: str) -> list[Problem]:
    """The postcondition: shared memory and barriers present, and no barrier that some
    threads of a block may skip."""
    problems = []
    source = code.encode("utf-8", errors="surrogateescape")
    nodes = list(cs.walk(cs.parse(source).root_node))
    if not any(n.type == "__shared__" for n in nodes):
        problems.append(Problem("shared_tiling", "no __shared__ array is declared"))
    if not any(
        n.type == "call_expression" and cs.call_name(n, source) == "__syncthreads" for n in nodes
    ):
        problems.append(Problem("shared_tiling", "no __syncthreads() barrier"))
    for line, why in kn.divergent_barriers(code):
        problems.append(Problem("shared_tiling", why, line=line))
    return problems


def _describe(plan: Plan) -> str:
    if isinstance(plan, TransposePlan):
        return _describe_transpose(plan)
    if isinstance(plan, HaloPlan):
        staged = ", ".join(
            f"{h.array} ({len(set(h.offsets))} points, halo {h.low}..{h.high})" for h in plan.halos
        )
        shape = "x".join(str(t) for t in reversed(_halo_threads(plan.kernel)))
        return f"{plan.kernel.name}: {shape} stencil tiles with halos of {staged}"
    return _describe_product(plan)


def _describe_product(plan: TilePlan) -> str:
    staged = ", ".join(f"{o.text} ({o.role})" for o in plan.operands)
    size = f"{TILE}x{TILE}" if plan.kernel.rows is not None else f"{TILE_1D}-element"
    return f"{plan.kernel.name}: {size} shared tiles over '{plan.kloop.var}' of {staged}"


# ---- choosing the kernels -------------------------------------------------------------


def _plans(code: str) -> tuple[list[Plan], list[str]]:
    try:
        found = kn.offload_kernels(code)
    except kn.Refuse as refusal:
        return [], [str(refusal)]
    source, tree, taken = found.source, found.tree, found.taken
    plans: list[Plan] = []
    reasons: list[str] = []
    for definition in found.definitions:
        try:
            kernel = kn.read_kernel(definition, tree, source)
        except kn.Refuse as refusal:
            reasons.append(f"shared_tiling: {refusal}")
            continue
        try:
            plans.append(_plan(kernel, taken))
        except kn.Refuse as refusal:
            try:
                plans.append(_halo_plan(kernel, taken))
            except kn.Refuse as no_halo:
                try:
                    plans.append(_transpose_plan(kernel, taken))
                except kn.Refuse as no_transpose:
                    reasons.append(
                        f"shared_tiling: {refusal}; as a stencil: {no_halo}; "
                        f"as a transpose: {no_transpose}"
                    )
    return plans, reasons


def _plan(kernel: kn.Kernel, taken: set[str]) -> TilePlan:
    source = kernel.source
    for statement in kernel.cols.statements:
        feature = kn.uses_block_features(statement, source)
        if feature is not None:
            raise kn.Refuse(f"kernel '{kernel.name}' already uses '{cs.text(feature, source)}'")
    written = kn.written_names(kernel)
    for level in kernel.levels:
        _require_plain_index(level, kernel, written)
    body = list(kernel.cols.statements)
    loops = [s for s in body if s.type == "for_statement"]
    if len(loops) != 1:
        raise kn.Refuse(
            f"kernel '{kernel.name}': the body needs exactly one inner loop, not {len(loops)}"
        )
    kloop = _kloop(loops[0], kernel, written)
    at = body.index(loops[0])
    prologue, epilogue = tuple(body[:at]), tuple(body[at + 1 :])
    kn.require_no_jumps(list(prologue) + list(epilogue), source, f"kernel '{kernel.name}'")
    kn.require_no_jumps([kloop.body], source, f"the '{kloop.var}' loop")
    for statement in prologue:
        _require_harmless_declaration(statement, kernel)
    operands = _operands(kernel, kloop, written, taken)
    if not operands:
        raise kn.Refuse(
            f"kernel '{kernel.name}': no read in the '{kloop.var}' loop depends on "
            f"'{kloop.var}' and one of the mapped loops from an array the kernel does not write"
        )
    names = {
        role: kn.fresh(base, taken)
        for role, base in (
            ("tile_i", "tile_row"),
            ("tile_j", "tile_col"),
            ("tile_k", f"tile_{kloop.var}"),
            ("span", f"span_{kloop.var}"),
            ("trips", f"trips_{kloop.var}"),
            ("count", f"count_{kloop.var}"),
            ("t_k", f"t_{kloop.var}"),
            ("kk", f"kk_{kloop.var}"),
            ("active", "active"),
        )
    }
    return TilePlan(kernel, kloop, prologue, epilogue, operands, names)


def product_plan(kernel: kn.Kernel, taken: set[str]) -> TilePlan:
    """The first shape's recognition, for methods that build on it (gemm_tiling): the k
    loop, prologue, epilogue and the reads it would stage, or Refuse with the reason."""
    return _plan(kernel, taken)


def element_type(kernel: kn.Kernel, name: str, depth: int) -> str | None:
    """The arithmetic element type of the kernel parameter `name` reached through `depth`
    subscripts, None when it is not one."""
    return _element_type(kernel, name, depth)


def array_base(access: Node) -> Node | None:
    """The array identifier of `a[..]` or `a[..][..]`."""
    return _base(access)


def array_indices(access: Node) -> list[Node]:
    """The subscripts of an access, outermost first."""
    return _indices(access)


def read_only(kernel: kn.Kernel, name: str) -> bool:
    """Whether the kernel only ever reads elements of `name`."""
    return _read_only(kernel, name)


def _require_plain_index(level: kn.Mapped, kernel: kn.Kernel, written: set[str]) -> None:
    """`int i = (int)t_i;` may be evaluated again for other iteration numbers."""
    value = kn.initializer(level.declaration)
    source = kernel.source
    if value is None or not kn.effect_free(value):
        raise kn.Refuse(
            f"kernel '{kernel.name}': '{level.var}' is not a plain function of '{level.counter}'"
        )
    for ident in cs.identifiers_in(value):
        if cs.text(ident, source) != level.counter and not kn.is_invariant(ident, kernel, written):
            raise kn.Refuse(
                f"kernel '{kernel.name}': '{level.var}' depends on '{cs.text(ident, source)}'"
            )
    if level.var in written:
        raise kn.Refuse(f"kernel '{kernel.name}' assigns the loop variable '{level.var}'")


def _kloop(loop: Node, kernel: kn.Kernel, written: set[str]) -> KLoop:
    """The inner loop, when it counts up with bounds that every thread sees alike."""
    source = kernel.source
    init = loop.child_by_field_name("initializer")
    condition = loop.child_by_field_name("condition")
    update = loop.child_by_field_name("update")
    body = loop.child_by_field_name("body")
    where = f"line {cs.line_of(loop)}"
    while condition is not None and condition.type == "parenthesized_expression":
        inner = [c for c in condition.named_children if c.type != "comment"]
        condition = inner[0] if len(inner) == 1 else None  # `(k < n)`, as schedule writes it
    if init is None or condition is None or update is None or body is None:
        raise kn.Refuse(f"{where}: the inner loop is not a counted for loop")
    var = kn.declared_variable(init, source)
    first_node = kn.initializer(init) if var else None
    if var is None or first_node is None:
        raise kn.Refuse(f"{where}: the inner loop does not declare its variable in its header")
    var_type = " ".join(cs.base_type(init, source).split())
    if condition.type != "binary_expression":
        raise kn.Refuse(f"{where}: the inner loop's test is not `{var} < bound`")
    left, right = condition.child_by_field_name("left"), condition.child_by_field_name("right")
    operator = cs.text(condition.child_by_field_name("operator"), source)
    if left is None or right is None or cs.text(left, source) != var or operator not in ("<", "<="):
        raise kn.Refuse(f"{where}: the inner loop's test is not `{var} < bound`")
    step = _step(update, var, source)
    if step is None:
        raise kn.Refuse(f"{where}: the inner loop does not count up by a constant")
    for part in (first_node, right):
        if not kn.effect_free(part) or not all(
            kn.is_invariant(i, kernel, written) for i in cs.identifiers_in(part)
        ):
            raise kn.Refuse(f"{where}: the bounds of '{var}' differ between threads")
        if not _integral(part, kernel):
            raise kn.Refuse(f"{where}: a bound of '{var}' is not an integer")
    if var in cs.names_written(body, source):
        raise kn.Refuse(f"{where}: the body assigns the loop variable '{var}'")
    return KLoop(
        loop,
        var,
        var_type,
        cs.text(first_node, source),
        cs.text(right, source),
        step,
        operator == "<=",
        body,
    )


def _integral(expression: Node, kernel: kn.Kernel) -> bool:
    """No floating-point literal or variable in a loop bound (the trip count is computed
    in integers). Macros are taken as integers."""
    source = kernel.source
    for node in cs.walk(expression):
        if node.type == "number_literal":
            text = cs.text(node, source).lower()
            if not text.startswith("0x") and any(c in text for c in ".ef"):
                return False
        if node.type == "identifier":
            declared = cs.visible(kernel.tree, source, cs.text(node, source), node.start_byte)
            if declared is not None and _FLOATING & set(declared.base.split()):
                return False
    return True


def _step(update: Node, var: str, source: bytes) -> int | None:
    text = kn.compact(cs.text(update, source))
    if text in (f"{var}++", f"++{var}"):
        return 1
    for pattern in (f"{var}+=", f"{var}={var}+"):
        if text.startswith(pattern) and text[len(pattern) :].isdigit():
            step = int(text[len(pattern) :])
            return step if step > 0 else None
    return None


def _require_harmless_declaration(statement: Node, kernel: kn.Kernel) -> None:
    """Threads past the edge run the prologue's declarations too (they must stay in scope
    for the k loop): those may not touch memory, except a plain arithmetic variable whose
    initializer then runs only in active threads. Other statements run only when active."""
    if statement.type != "declaration" or kn.effect_free(statement):
        return
    if _guardable(statement, kernel.source) is None:
        raise kn.Refuse(
            f"line {cs.line_of(statement)}: a declaration before the inner loop touches memory"
        )


def _guardable(declaration: Node, source: bytes) -> tuple[str, str, str] | None:
    """(type, name, initializer) of `T x = e;` with a non-const arithmetic T."""
    name = kn.declared_variable(declaration, source)
    value = kn.initializer(declaration)
    words = cs.base_type(declaration, source).split()
    if name is None or value is None or not words or not set(words) <= ARITHMETIC:
        return None
    return " ".join(words), name, cs.text(value, source)


# ---- the staged reads -----------------------------------------------------------------


def _operands(
    kernel: kn.Kernel, kloop: KLoop, written: set[str], taken: set[str]
) -> tuple[Operand, ...]:
    source = kernel.source
    by_text: dict[str, list[Node]] = {}
    roles: dict[str, tuple[str, bool, str]] = {}
    for node in cs.walk(kloop.body):
        if node.type != "subscript_expression" or _is_inner_subscript(node):
            continue
        found = _stageable(node, kernel, kloop, written)
        if found is None:
            continue
        text = kn.compact(cs.text(node, source))
        by_text.setdefault(text, []).append(node)
        roles[text] = found
    operands = []
    for text, nodes in list(by_text.items())[:MOST_TILES]:
        role, contiguous, elem = roles[text]
        array = _base(nodes[0])
        tile = kn.fresh(f"tile_{cs.text(array, source) if array is not None else 'x'}", taken)
        operands.append(
            Operand(cs.text(nodes[0], source), tuple(nodes), role, contiguous, elem, tile)
        )
    return tuple(operands)


def _is_inner_subscript(node: Node) -> bool:
    """`a[i]` inside `a[i][k]`: only the whole access is a candidate."""
    parent = node.parent
    return (
        parent is not None
        and parent.type == "subscript_expression"
        and (parent.child_by_field_name("argument") == node)
    )


def _base(node: Node) -> Node | None:
    while node.type == "subscript_expression":
        argument = node.child_by_field_name("argument")
        if argument is None:
            return None
        node = argument
    return node if node.type == "identifier" else None


def _indices(node: Node) -> list[Node]:
    found = []
    while node.type == "subscript_expression":
        index = node.child_by_field_name("indices") or node.child_by_field_name("index")
        if index is None:
            return []
        if index.type == "subscript_argument_list":
            inner = [c for c in index.named_children if c.type != "comment"]
            if len(inner) != 1:
                return []
            index = inner[0]
        found.append(index)
        argument = node.child_by_field_name("argument")
        if argument is None:
            return []
        node = argument
    return list(reversed(found))


def _stageable(
    access: Node, kernel: kn.Kernel, kloop: KLoop, written: set[str]
) -> tuple[str, bool, str] | None:
    """(role, k contiguous, element type) when `access` may be read from a tile."""
    source = kernel.source
    array = _base(access)
    indices = _indices(access)
    if array is None or not indices or not _evaluated_every_iteration(access, kloop):
        return None
    name = cs.text(array, source)
    elem = _element_type(kernel, name, len(indices))
    if elem is None or not _read_only(kernel, name):
        return None
    mapped = [level.var for level in kernel.levels]
    seen: set[str] = set()
    for index in indices:
        if not kn.effect_free(index):
            return None
        for ident in cs.identifiers_in(index):
            what = _resolve(ident, kernel, kloop, written)
            if what is None:
                return None
            seen.add(what)
    if kloop.var not in seen:
        return None
    used = [var for var in mapped if var in seen]
    if kernel.rows is None:
        # 1-D: the block shares the reads that depend on k alone (x[k], pos[3 * k + 1])
        return ("k", True, elem) if not used else None
    if len(used) != 1:
        return None
    role = "rows" if used[0] == kernel.rows.var else "cols"
    return role, _k_contiguous(indices[-1], kloop.var, used[0], source), elem


def _resolve(ident: Node, kernel: kn.Kernel, kloop: KLoop, written: set[str]) -> str | None:
    """The mapped variable or k the identifier is, "" for an invariant name, None else."""
    source = kernel.source
    name = cs.text(ident, source)
    declared = cs.visible(kernel.tree, source, name, ident.start_byte)
    if name == kloop.var:
        init = kloop.node.child_by_field_name("initializer")
        ok = declared is not None and init is not None and declared.start == init.start_byte
        return name if ok else None
    for level in kernel.levels:
        if name == level.var:
            ok = declared is not None and declared.start == level.declaration.start_byte
            return name if ok else None
    return "" if kn.is_invariant(ident, kernel, written) else None


def _evaluated_every_iteration(access: Node, kloop: KLoop) -> bool:
    """Staging loads the value before the k body runs: the body must read it on every
    iteration, or the load could touch memory the source never touches."""
    node = access.parent
    while node is not None and node != kloop.node:
        if node.type in _CONDITIONAL:
            return False
        if node.type == "binary_expression":
            operator = node.child_by_field_name("operator")
            right = node.child_by_field_name("right")
            if operator is not None and operator.type in ("&&", "||") and right is not None:
                if right.start_byte <= access.start_byte and access.end_byte <= right.end_byte:
                    return False
        node = node.parent
    return node == kloop.node


def _read_only(kernel: kn.Kernel, name: str) -> bool:
    """Every use of the array in the kernel is a read of an element (no store, no address
    taken, no pointer arithmetic, not passed to a function)."""
    source = kernel.source
    for ident in cs.identifiers_in(kernel.body):
        if cs.text(ident, source) != name:
            continue
        node = ident
        while (
            node.parent is not None
            and node.parent.type == "subscript_expression"
            and (node.parent.child_by_field_name("argument") == node)
        ):
            node = node.parent
        if node == ident:
            return False  # the pointer itself is used
        parent = node.parent
        while parent is not None and parent.type == "parenthesized_expression":
            node, parent = parent, parent.parent
        if parent is None:
            continue
        if parent.type == "assignment_expression" and parent.child_by_field_name("left") == node:
            return False
        if parent.type == "update_expression":
            return False
        if parent.type == "pointer_expression" and cs.text(parent, source).startswith("&"):
            return False
    return True


def _element_type(kernel: kn.Kernel, name: str, depth: int) -> str | None:
    """The element type when `name` is a kernel parameter that `depth` subscripts reach
    through exactly (`float *a` with a[...], `float (*a)[N]` with a[..][..])."""
    source = kernel.source
    for param in cs.parameter_nodes(kernel.definition):
        if param.type != "parameter_declaration":
            continue
        names = cs.declared_names(param, source, "param")
        if not names or names[0].name != name:
            continue
        declarator = param.child_by_field_name("declarator")
        if declarator is None:
            return None
        shape = cs.text(declarator, source)
        if shape.count("*") + shape.count("[") != depth or "&" in shape:
            return None
        words = [w for w in cs.base_type(param, source).split() if w not in _QUALIFIERS]
        if not words or not set(words) <= ARITHMETIC:
            return None
        return " ".join(words)
    return None


def _k_contiguous(last: Node, k: str, mapped: str, source: bytes) -> bool:
    """Whether the address moves by one element when k does (else when the mapped
    variable does): that index goes on threadIdx.x so that a warp's loads coalesce."""
    values = {name: 1009 + 17 * position for position, name in enumerate(_names(last, source))}
    base = kn.evaluate(last, source, values)
    if base is None:
        return True
    values_k = dict(values, **{k: values.get(k, 0) + 1})
    values_m = dict(values, **{mapped: values.get(mapped, 0) + 1})
    along_k = kn.evaluate(last, source, values_k)
    along_m = kn.evaluate(last, source, values_m)
    if along_k is not None and abs(along_k - base) == 1:
        return True
    return not (along_m is not None and abs(along_m - base) == 1)


def _names(node: Node, source: bytes) -> list[str]:
    return list(dict.fromkeys(cs.text(i, source) for i in cs.identifiers_in(node)))


# ---- emitting -------------------------------------------------------------------------


def _emit(code: str, plans: list[Plan]) -> str:
    source = code.encode("utf-8", errors="surrogateescape")
    edits: list[Edit] = []
    for plan in plans:
        kernel = plan.kernel
        sites = kn.launches(kernel.tree, source, kernel.name)
        if isinstance(plan, TilePlan):
            text = _kernel_body(plan)
            for launch in sites:
                edits += _launch_edits(launch, plan, source)
        elif isinstance(plan, HaloPlan):
            text = _halo_body(plan)
            for launch in sites:
                edits += _halo_launch_edits(launch, plan, source)
        else:
            text = _transpose_body(plan)
            for launch in sites:
                edits += _transpose_launch_edits(launch, plan, source)
        edits.append(
            Edit(kernel.body.start_byte, kernel.body.end_byte, text, f"tile {kernel.name}")
        )
    return apply_edits(source, edits).decode("utf-8", errors="surrogateescape")


def _launch_edits(launch: kn.Launch, plan: TilePlan, source: bytes) -> list[Edit]:
    kernel = plan.kernel
    cols = kn.launch_argument(launch, kernel, kernel.cols.trips, source)
    if kernel.rows is None:
        grid = f"cudaify_blocks({cs.text(cols, source)}, {TILE_1D}, 2147483647u)"
        shape = (grid, str(TILE_1D))
        return kn.resize_launch(launch, kernel.tree, source, shape, (cols,), "tile-sized blocks")
    rows = kn.launch_argument(launch, kernel, kernel.rows.trips, source)
    grid = (
        f"cudaify_blocks({cs.text(cols, source)}, {TILE}, 2147483647u), "
        f"cudaify_blocks({cs.text(rows, source)}, {TILE}, 65535u)"
    )
    shape = (grid, f"{TILE}, {TILE}")
    return kn.resize_launch(launch, kernel.tree, source, shape, (rows, cols), "tile-shaped blocks")


def _tile_size(plan: TilePlan) -> int:
    return TILE if plan.kernel.rows is not None else TILE_1D


def _kernel_body(plan: TilePlan) -> str:
    kernel, names = plan.kernel, plan.names
    source = kernel.source
    one = "    "
    size = _tile_size(plan)
    if kernel.rows is None:
        shape, check = f"{TILE_1D}", f"blockDim.x != {TILE_1D} || blockDim.y != 1"
    else:
        shape, check = f"{TILE} x {TILE}", f"blockDim.x != {TILE} || blockDim.y != {TILE}"
    lines = [
        "{",
        f"{one}/* cudaify shared_tiling: blocks of {shape} threads own a tile of outputs and "
        f"stage {size} iterations of '{plan.kloop.var}' at a time. */",
        f"{one}if ({check}) __trap();",
    ]
    for operand in plan.operands:
        dims = f"[{TILE_1D}]" if operand.role == "k" else f"[{TILE}][{TILE + 1}]"
        lines.append(f"{one}__shared__ {operand.elem_type} {operand.tile}{dims};")
    indent = one
    starts = []
    for level in kernel.levels:
        start = names["tile_i"] if level is kernel.rows else names["tile_j"]
        d = level.dim
        lines.append(
            f"{indent}for (long long {start} = blockIdx.{d} * {size}LL; {start} < {level.trips}; "
            f"{start} += {size}LL * gridDim.{d}) {{"
        )
        starts.append(start)
        indent += one
    for level, start in zip(kernel.levels, starts, strict=True):
        lines.append(f"{indent}const long long {level.counter} = {start} + threadIdx.{level.dim};")
    inside = " && ".join(f"{level.counter} < {level.trips}" for level in kernel.levels)
    lines.append(f"{indent}const bool {names['active']} = {inside};")
    lines += [indent + kn.moved(level.declaration, source, indent) for level in kernel.levels]
    lines += _guarded(plan.prologue, plan, indent)
    lines += _k_tiles(plan, indent)
    if plan.epilogue:
        lines.append(f"{indent}if ({names['active']}) {{")
        lines += [indent + one + kn.moved(s, source, indent + one) for s in plan.epilogue]
        lines.append(f"{indent}}}")
    for _ in kernel.levels:
        indent = indent[: -len(one)]
        lines.append(f"{indent}}}")
    lines.append("}")
    return "\n".join(lines)


def _guarded(statements: tuple[Node, ...], plan: TilePlan, indent: str) -> list[str]:
    """Declarations stay in the tile loop's scope; other statements run when active."""
    source = plan.kernel.source
    lines = []
    active = plan.names["active"]
    for statement in statements:
        if statement.type == "declaration" and kn.effect_free(statement):
            lines.append(indent + kn.moved(statement, source, indent))
            continue
        if statement.type == "declaration":  # checked by _require_harmless_declaration
            type_, name, value = _guardable(statement, source)  # type: ignore[misc]
            lines.append(f"{indent}{type_} {name} = {active} ? ({value}) : ({type_})0;")
            continue
        inner = indent + "    "
        lines.append(f"{indent}if ({plan.names['active']}) {{")
        lines.append(inner + kn.moved(statement, source, inner))
        lines.append(f"{indent}}}")
    return lines


def _k_tiles(plan: TilePlan, indent: str) -> list[str]:
    k, names = plan.kloop, plan.names
    one = "    "
    inner = indent + one
    extra = " + 1" if k.inclusive else ""
    tk = names["tile_k"]
    lines = [
        f"{indent}const long long {names['span']} = "
        f"(long long)({k.bound}) - (long long)({k.first}){extra};",
        f"{indent}const long long {names['trips']} = {_trips(names['span'], k.step)};",
        f"{indent}for (long long {tk} = 0; {tk} < {names['trips']}; {tk} += {_tile_size(plan)}) {{",
    ]
    for operand in plan.operands:
        lines += _load(operand, plan, inner)
    lines.append(f"{inner}__syncthreads();")
    lines.append(f"{inner}if ({names['active']}) {{")
    lines += _compute(plan, inner + one)
    lines.append(f"{inner}}}")
    lines.append(f"{inner}__syncthreads();")
    lines.append(f"{indent}}}")
    return lines


def _trips(span: str, step: int) -> str:
    if step == 1:
        return f"{span} > 0 ? {span} : 0"
    return f"{span} > 0 ? ({span} + {step - 1}) / {step} : 0"


def _k_value(plan: TilePlan, iteration: str) -> str:
    k = plan.kloop
    step = f" * {k.step}" if k.step != 1 else ""
    return f"{k.var_type} {k.var} = ({k.var_type})(({k.first}) + {iteration}{step});"


def _load(operand: Operand, plan: TilePlan, indent: str) -> list[str]:
    """The block's cooperative load of one tile: each thread loads one slot."""
    if operand.role == "k":
        return _load_shared_by_all(operand, plan, indent)
    kernel, names = plan.kernel, plan.names
    level = kernel.rows if operand.role == "rows" else kernel.cols
    assert level is not None
    start = names["tile_i"] if operand.role == "rows" else names["tile_j"]
    # the unit-stride index runs along threadIdx.x
    mapped_thread, k_thread = ("y", "x") if operand.k_contiguous else ("x", "y")
    tk = names["t_k"]
    one = "    "
    slot = f"{operand.tile}[threadIdx.y][threadIdx.x]"
    source = kernel.source
    return [
        f"{indent}{{",
        f"{indent}{one}const long long {level.counter} = {start} + threadIdx.{mapped_thread};",
        f"{indent}{one}const long long {tk} = {names['tile_k']} + threadIdx.{k_thread};",
        f"{indent}{one}if ({level.counter} < {level.trips} && {tk} < {names['trips']}) {{",
        f"{indent}{one * 2}" + kn.moved(level.declaration, source, indent + one * 2),
        f"{indent}{one * 2}{_k_value(plan, tk)}",
        f"{indent}{one * 2}{slot} = {operand.text};",
        f"{indent}{one}}} else {{",
        f"{indent}{one * 2}{slot} = {{}};",
        f"{indent}{one}}}",
        f"{indent}}}",
    ]


def _load_shared_by_all(operand: Operand, plan: TilePlan, indent: str) -> list[str]:
    names = plan.names
    tk = names["t_k"]
    one = "    "
    slot = f"{operand.tile}[threadIdx.x]"
    return [
        f"{indent}{{",
        f"{indent}{one}const long long {tk} = {names['tile_k']} + threadIdx.x;",
        f"{indent}{one}if ({tk} < {names['trips']}) {{",
        f"{indent}{one * 2}{_k_value(plan, tk)}",
        f"{indent}{one * 2}{slot} = {operand.text};",
        f"{indent}{one}}} else {{",
        f"{indent}{one * 2}{slot} = {{}};",
        f"{indent}{one}}}",
        f"{indent}}}",
    ]


def _compute(plan: TilePlan, indent: str) -> list[str]:
    """The k body for this stage's k values, staged reads taken from the tiles. A full
    2-D stage runs a fully unrolled constant-count loop."""
    names = plan.names
    count, tk = names["count"], names["tile_k"]
    size = _tile_size(plan)
    lines = [
        f"{indent}const int {count} = (int)({names['trips']} - {tk} < {size} ? "
        f"{names['trips']} - {tk} : {size});",
    ]
    if size != TILE:  # a long stage: one loop, unrolled a little
        return lines + [f"{indent}#pragma unroll 4", *_k_loop(plan, count, indent)]
    one = "    "
    return lines + [
        f"{indent}if ({count} == {TILE}) {{",
        f"{indent}{one}#pragma unroll",
        *_k_loop(plan, str(TILE), indent + one),
        f"{indent}}} else {{",
        *_k_loop(plan, count, indent + one),
        f"{indent}}}",
    ]


def _k_loop(plan: TilePlan, count: str, indent: str) -> list[str]:
    kk, tk = plan.names["kk"], plan.names["tile_k"]
    inner = indent + "    "
    body = _staged_body(plan, kk, inner)
    # the staged body may no longer read k itself: then k is not declared (no warning)
    uses_k = re.search(rf"\b{re.escape(plan.kloop.var)}\b", body) is not None
    declare = [f"{inner}{_k_value(plan, f'({tk} + {kk})')}"] if uses_k else []
    return [
        f"{indent}for (int {kk} = 0; {kk} < {count}; {kk}++) {{",
        *declare,
        f"{inner}{body}",
        f"{indent}}}",
    ]


def _staged_body(plan: TilePlan, kk: str, indent: str) -> str:
    """The k body's text with every staged read replaced by its tile slot."""
    body = plan.kloop.body
    source = plan.kernel.source
    edits = []
    for operand in plan.operands:
        mapped = "threadIdx.y" if operand.role == "rows" else "threadIdx.x"
        slot = (
            f"{operand.tile}[{kk}]"
            if operand.role == "k"
            else (
                f"{operand.tile}[{mapped}][{kk}]"
                if operand.k_contiguous
                else f"{operand.tile}[{kk}][{mapped}]"
            )
        )
        for node in operand.nodes:
            edits.append(
                Edit(
                    node.start_byte - body.start_byte,
                    node.end_byte - body.start_byte,
                    slot,
                    "staged",
                )
            )
    text = apply_edits(source[body.start_byte : body.end_byte], edits).decode(
        "utf-8", errors="surrogateescape"
    )
    old = kn.line_indent(source, plan.kloop.node.start_byte)
    return kn.reindent(text, old, indent)


# ---- stencils: tiles with halos ---------------------------------------------------------

MOST_OFFSET = 4  # the widest halo staged, in iterations of a mapped loop


@dataclass(frozen=True)
class Halo:
    """The reads of one array at constant offsets from the thread's own iteration. An
    access reads `reference` evaluated `offset` iterations away (per mapped level, outer
    first); the tile holds every point from `low` to the tile's edge plus `high`."""

    array: str
    elem_type: str
    reference: str  # the text of the first access
    nodes: tuple[Node, ...]
    offsets: tuple[tuple[int, ...], ...]  # per node
    low: tuple[int, ...]  # min offset per level (<= 0)
    high: tuple[int, ...]  # max offset per level (>= 0)
    tile: str


@dataclass(frozen=True)
class HaloPlan:
    kernel: kn.Kernel
    halos: tuple[Halo, ...]
    names: dict[str, str]


def _halo_threads(kernel: kn.Kernel) -> tuple[int, ...]:
    """Threads per block, outer level first (offload's shapes: 256, or 8 rows of 32)."""
    return (8, 32) if kernel.rows is not None else (256,)


def _halo_plan(kernel: kn.Kernel, taken: set[str]) -> HaloPlan:
    source = kernel.source
    body = list(kernel.cols.statements)
    for statement in body:
        feature = kn.uses_block_features(statement, source)
        if feature is not None:
            raise kn.Refuse(f"kernel '{kernel.name}' already uses '{cs.text(feature, source)}'")
    kn.require_no_jumps(body, source, f"kernel '{kernel.name}'")
    written = kn.written_names(kernel)
    for level in kernel.levels:
        _require_plain_index(level, kernel, written)
        _require_unit_step(level, source)
    reads: dict[str, list[Node]] = {}
    for statement in body:
        for node in cs.walk(statement):
            if node.type == "subscript_expression" and not _is_inner_subscript(node):
                if _always_read(node, statement) and _point_read(node, kernel, written):
                    reads.setdefault(cs.text(_base(node), source), []).append(node)  # type: ignore[arg-type]
    halos: list[Halo] = []
    for array, nodes in reads.items():
        halo = _halo(array, nodes, kernel, taken)
        if halo is not None and len(halos) < MOST_TILES:
            halos.append(halo)
    if not halos:
        raise kn.Refuse("no read-only array is read at two constant offsets by every thread")
    names = {
        "tile_i": kn.fresh("tile_row", taken),
        "tile_j": kn.fresh("tile_col", taken),
        "slot": kn.fresh("slot", taken),
        "active": kn.fresh("active", taken),
    }
    return HaloPlan(kernel, tuple(halos), names)


def _require_unit_step(level: kn.Mapped, source: bytes) -> None:
    """Offsets of the loop variable are offsets of the iteration number: `i = lower + t`."""
    value = kn.initializer(level.declaration)
    poly = kn.polynomial(value, source) if value is not None else None
    slope = kn.derivative(poly, level.counter) if poly is not None else None
    if slope != {(): 1}:
        raise kn.Refuse(f"'{level.var}' does not step by one")


def _always_read(access: Node, statement: Node) -> bool:
    """Read by every thread that runs the statement (no condition, loop or short circuit)."""
    node = access.parent
    while node is not None and node != statement.parent:
        if node.type in _CONDITIONAL:
            return False
        if node.type == "binary_expression":
            operator = node.child_by_field_name("operator")
            right = node.child_by_field_name("right")
            if operator is not None and operator.type in ("&&", "||") and right is not None:
                if right.start_byte <= access.start_byte and access.end_byte <= right.end_byte:
                    return False
        node = node.parent
    return True


def _point_read(access: Node, kernel: kn.Kernel, written: set[str]) -> bool:
    """A read of a read-only arithmetic array whose indices use only the mapped loop
    variables and names the kernel never changes."""
    source = kernel.source
    array = _base(access)
    indices = _indices(access)
    if array is None or not indices:
        return False
    name = cs.text(array, source)
    if _element_type(kernel, name, len(indices)) is None or not _read_only(kernel, name):
        return False
    for index in indices:
        if not kn.effect_free(index):
            return False
        for ident in cs.identifiers_in(index):
            what = _resolve_mapped(ident, kernel, written)
            if what is None:
                return False
    return True


def _resolve_mapped(ident: Node, kernel: kn.Kernel, written: set[str]) -> str | None:
    source = kernel.source
    name = cs.text(ident, source)
    for level in kernel.levels:
        if name == level.var:
            declared = cs.visible(kernel.tree, source, name, ident.start_byte)
            ok = declared is not None and declared.start == level.declaration.start_byte
            return name if ok else None
    return "" if kn.is_invariant(ident, kernel, written) else None


def _halo(array: str, nodes: list[Node], kernel: kn.Kernel, taken: set[str]) -> Halo | None:
    """The array's reads as offsets from the first one, when every read is one."""
    source = kernel.source
    reference = [kn.polynomial(i, source) for i in _indices(nodes[0])]
    variables = [level.var for level in kernel.levels]
    slopes = []
    for poly in reference:
        if poly is None:
            return None
        per_level = [kn.derivative(poly, var) for var in variables]
        if any(s is None or any(v in m for m in s for v in variables) for s in per_level):
            return None  # not linear in the mapped variables
        slopes.append(per_level)
    offsets = []
    for node in nodes:
        polys = [kn.polynomial(i, source) for i in _indices(node)]
        if len(polys) != len(reference) or any(p is None for p in polys):
            return None
        offset = _offset(polys, reference, slopes)  # type: ignore[arg-type]
        if offset is None:
            return None
        offsets.append(offset)
    if len(set(offsets)) < 2:
        return None  # no neighbour is shared
    elem = _element_type(kernel, array, len(reference))
    assert elem is not None
    low = tuple(min(0, *(o[d] for o in offsets)) for d in range(len(variables)))
    high = tuple(max(0, *(o[d] for o in offsets)) for d in range(len(variables)))
    tile = kn.fresh(f"tile_{array}", taken)
    return Halo(
        array, elem, cs.text(nodes[0], source), tuple(nodes), tuple(offsets), low, high, tile
    )


def _offset(
    polys: list[kn.Poly], reference: list[kn.Poly], slopes: list[list[kn.Poly]]
) -> tuple[int, ...] | None:
    """d with access(q) == reference(q + d) for every q, when one is small enough."""
    import itertools

    span = range(-MOST_OFFSET, MOST_OFFSET + 1)
    for offset in itertools.product(span, repeat=len(slopes[0])):
        if all(
            kn.added(poly, kn.scaled(ref, -1)) == _combination(slope, offset)
            for poly, ref, slope in zip(polys, reference, slopes, strict=True)
        ):
            return tuple(offset)
    return None


def _combination(slopes: list[kn.Poly], offset: tuple[int, ...]) -> kn.Poly:
    total: kn.Poly = {}
    for slope, amount in zip(slopes, offset, strict=True):
        total = kn.added(total, kn.scaled(slope, amount))
    return total


def _halo_launch_edits(launch: kn.Launch, plan: HaloPlan, source: bytes) -> list[Edit]:
    kernel = plan.kernel
    threads = _halo_threads(kernel)
    reads, blocks = [], []
    for level, count in zip(reversed(kernel.levels), reversed(threads), strict=True):
        argument = kn.launch_argument(launch, kernel, level.trips, source)
        reads.append(argument)
        most = "2147483647u" if level.dim == "x" else "65535u"
        blocks.append(f"cudaify_blocks({cs.text(argument, source)}, {count}, {most})")
    shape = (", ".join(blocks), ", ".join(str(t) for t in reversed(threads)))
    return kn.resize_launch(launch, kernel.tree, source, shape, tuple(reads), "tile-shaped blocks")


def _halo_body(plan: HaloPlan) -> str:
    kernel, names = plan.kernel, plan.names
    source = kernel.source
    threads = _halo_threads(kernel)
    one = "    "
    check = " || ".join(
        f"blockDim.{level.dim} != {count}"
        for level, count in zip(kernel.levels, threads, strict=True)
    )
    if kernel.rows is None:
        check += " || blockDim.y != 1"
    lines = [
        "{",
        f"{one}/* cudaify shared_tiling: each block stages its tile of the stencil's inputs, "
        "halo included, in shared memory. */",
        f"{one}if ({check}) __trap();",
    ]
    for halo in plan.halos:
        dims = "".join(
            f"[{count + high - low}]"
            for count, low, high in zip(threads, halo.low, halo.high, strict=True)
        )
        lines.append(f"{one}__shared__ {halo.elem_type} {halo.tile}{dims};")
    indent = one
    starts = []
    for level, count in zip(kernel.levels, threads, strict=True):
        start = names["tile_i"] if level is kernel.rows else names["tile_j"]
        d = level.dim
        lines.append(
            f"{indent}for (long long {start} = blockIdx.{d} * {count}LL; {start} < {level.trips}; "
            f"{start} += {count}LL * gridDim.{d}) {{"
        )
        starts.append(start)
        indent += one
    for halo in plan.halos:
        lines += _halo_load(halo, plan, starts, indent)
    lines.append(f"{indent}__syncthreads();")
    for level, start in zip(kernel.levels, starts, strict=True):
        lines.append(f"{indent}const long long {level.counter} = {start} + threadIdx.{level.dim};")
    inside = " && ".join(f"{level.counter} < {level.trips}" for level in kernel.levels)
    lines.append(f"{indent}if ({inside}) {{")
    inner = indent + one
    lines += [inner + kn.moved(level.declaration, source, inner) for level in kernel.levels]
    lines += [inner + _halo_statement(s, plan, inner) for s in kernel.cols.statements]
    lines.append(f"{indent}}}")
    lines.append(f"{indent}__syncthreads();")
    for _ in kernel.levels:
        indent = indent[: -len(one)]
        lines.append(f"{indent}}}")
    lines.append("}")
    return "\n".join(lines)


def _halo_load(halo: Halo, plan: HaloPlan, starts: list[str], indent: str) -> list[str]:
    """Every thread loads slots of the tile, one block-stride apart; a slot is loaded
    only when some thread's read in the source reads that element."""
    kernel = plan.kernel
    source = kernel.source
    threads = _halo_threads(kernel)
    sizes = [
        count + high - low for count, low, high in zip(threads, halo.low, halo.high, strict=True)
    ]
    slot = plan.names["slot"]
    one = "    "
    total = 1
    for size in sizes:
        total *= size
    first = "threadIdx.y * blockDim.x + threadIdx.x" if kernel.rows is not None else "threadIdx.x"
    per_block = 1
    for count in threads:
        per_block *= count
    lines = [f"{indent}for (int {slot} = {first}; {slot} < {total}; {slot} += {per_block}) {{"]
    inner = indent + one
    positions = _slot_positions(slot, sizes)
    for level, start, position, low in zip(kernel.levels, starts, positions, halo.low, strict=True):
        lines.append(f"{inner}const long long {level.counter} = {start} + ({position}) + ({low});")
    read_by = []
    for offset in sorted(set(halo.offsets)):
        parts = []
        for level, amount in zip(kernel.levels, offset, strict=True):
            point = f"{level.counter} - ({amount})" if amount else level.counter
            parts.append(f"{point} >= 0 && {point} < {level.trips}")
        read_by.append("(" + " && ".join(parts) + ")")
    lines.append(f"{inner}if ({' || '.join(read_by)}) {{")
    deeper = inner + one
    lines += [deeper + kn.moved(level.declaration, source, deeper) for level in kernel.levels]
    index = "".join(f"[{p}]" for p in positions)
    lines.append(f"{deeper}{halo.tile}{index} = {halo.reference};")
    lines += [f"{inner}}}", f"{indent}}}"]
    return lines


def _slot_positions(slot: str, sizes: list[int]) -> list[str]:
    if len(sizes) == 1:
        return [slot]
    return [f"{slot} / {sizes[1]}", f"{slot} % {sizes[1]}"]


def _halo_statement(statement: Node, plan: HaloPlan, indent: str) -> str:
    kernel = plan.kernel
    source = kernel.source
    edits = []
    for halo in plan.halos:
        for node, offset in zip(halo.nodes, halo.offsets, strict=True):
            if not (
                statement.start_byte <= node.start_byte and node.end_byte <= statement.end_byte
            ):
                continue
            index = "".join(
                f"[threadIdx.{level.dim} + {amount - low}]"
                for level, amount, low in zip(kernel.levels, offset, halo.low, strict=True)
            )
            start, end = (
                node.start_byte - statement.start_byte,
                node.end_byte - statement.start_byte,
            )
            edits.append(Edit(start, end, f"{halo.tile}{index}", "staged"))
    text = apply_edits(source[statement.start_byte : statement.end_byte], edits).decode(
        "utf-8", errors="surrogateescape"
    )
    return kn.reindent(text, kn.line_indent(source, statement.start_byte), indent)


# ---- transposes: read the tile along one loop, write it along the other -------------------

TILE_T = 32  # a transpose's tile: 32 x 32 elements, one warp-wide row of each at a time
ROWS_T = 8  # its block: 32 x 8 threads, each moving TILE_T / ROWS_T elements per phase
STATIC_SHARED_BYTES = 48 * 1024  # what one block may declare statically


@dataclass(frozen=True)
class Staged:
    """A read of a transpose's body served from a tile: every occurrence of `text`."""

    text: str
    nodes: tuple[Node, ...]
    elem_type: str
    tile: str


@dataclass(frozen=True)
class TransposePlan:
    """The body runs unchanged for each iteration, but the block's threads take the
    iterations of a tile in two orders: `read_along` on threadIdx.x while the staged reads
    are loaded, `store_along` on threadIdx.x while the body runs and stores."""

    kernel: kn.Kernel
    reads: tuple[Staged, ...]
    read_along: kn.Mapped
    store_along: kn.Mapped
    stores: tuple[str, ...]  # the stored accesses, for the description
    names: dict[str, str]


def _transpose_plan(kernel: kn.Kernel, taken: set[str]) -> TransposePlan:
    source = kernel.source
    if kernel.rows is None:
        raise kn.Refuse("a transpose needs a 2-D kernel")
    body = list(kernel.cols.statements)
    for statement in body:
        feature = kn.uses_block_features(statement, source)
        if feature is not None:
            raise kn.Refuse(f"kernel '{kernel.name}' already uses '{cs.text(feature, source)}'")
        loop = next((n for n in cs.walk(statement) if n.type in cs.LOOP_TYPES), None)
        if loop is not None:
            raise kn.Refuse(
                f"line {cs.line_of(loop)}: kernel '{kernel.name}' has an inner loop; "
                "a transpose's body has none"
            )
    kn.require_no_jumps(body, source, f"kernel '{kernel.name}'")
    written = kn.written_names(kernel)
    for level in kernel.levels:
        _require_plain_index(level, kernel, written)
    stores = _stores(kernel)
    store_along = _common_unit_stride(stores, kernel)
    read_along = kernel.cols if store_along is kernel.rows else kernel.rows
    reads = _transposed_reads(kernel, body, store_along, read_along, written, taken)
    names = {
        "tile_i": kn.fresh("tile_row", taken),
        "tile_j": kn.fresh("tile_col", taken),
        "part": kn.fresh("part", taken),
    }
    store_texts = tuple(cs.text(s, source) for s in stores)
    return TransposePlan(kernel, reads, read_along, store_along, store_texts, names)


def _stores(kernel: kn.Kernel) -> list[Node]:
    """The array elements the body assigns (`out[j * n + i] = ...`, `b[j][i] += ...`);
    Refuse for a store through anything else than a subscript or a local name."""
    source = kernel.source
    found = []
    for statement in kernel.cols.statements:
        for node in cs.walk(statement):
            if node.type == "assignment_expression":
                target = node.child_by_field_name("left")
            elif node.type == "update_expression":
                target = node.child_by_field_name("argument")
            else:
                continue
            while target is not None and target.type == "parenthesized_expression":
                target = target.named_children[0] if target.named_children else None
            if target is None or target.type == "identifier":
                continue
            if target.type != "subscript_expression" or _base(target) is None:
                raise kn.Refuse(
                    f"line {cs.line_of(node)}: kernel '{kernel.name}' stores through "
                    f"'{cs.text(target, source)}', not an array element"
                )
            found.append(target)
    if not found:
        raise kn.Refuse(f"kernel '{kernel.name}' stores no array element")
    return found


def _common_unit_stride(stores: list[Node], kernel: kn.Kernel) -> kn.Mapped:
    """The mapped loop along which every store walks memory one element at a time."""
    source = kernel.source
    along = None
    for store in stores:
        walking = [level for level in kernel.levels if _walks(store, level.var, source)]
        if len(walking) != 1 or (along is not None and walking[0] is not along):
            raise kn.Refuse(
                f"line {cs.line_of(store)}: the store to '{cs.text(store, source)}' does not "
                "walk memory along the same one mapped loop as the other stores"
            )
        along = walking[0]
    assert along is not None
    return along


def _walks(access: Node, var: str, source: bytes) -> bool:
    """Whether the access's address moves by one element when `var` grows by one: its
    last subscript moves by one and the others stay. The other names take arbitrary
    values: a wrong guess costs speed, never correctness."""
    indices = _indices(access)
    if not indices or not any(var in _names(index, source) for index in indices):
        return False
    names = dict.fromkeys(name for index in indices for name in _names(index, source))
    values = {name: 1009 + 17 * position for position, name in enumerate(names)}
    moved = dict(values, **{var: values[var] + 1})
    for position, index in enumerate(indices):
        before, after = kn.evaluate(index, source, values), kn.evaluate(index, source, moved)
        if before is None or after is None:
            return False
        last = position == len(indices) - 1
        if abs(after - before) != (1 if last else 0):
            return False
    return True


def _transposed_reads(
    kernel: kn.Kernel,
    body: list[Node],
    store_along: kn.Mapped,
    read_along: kn.Mapped,
    written: set[str],
    taken: set[str],
) -> tuple[Staged, ...]:
    """The reads that walk memory along the other loop than the stores and also move with
    the stores' loop (`in[i * m + j]` under `out[j * n + i]`; not `x[j]`, a broadcast once
    the threads are transposed), each from an array the kernel never writes, read by
    every iteration."""
    source = kernel.source
    by_text: dict[str, list[Node]] = {}
    why_not: list[str] = []
    for statement in body:
        for node in cs.walk(statement):
            if node.type != "subscript_expression" or _is_inner_subscript(node):
                continue
            if not _walks(node, read_along.var, source):
                continue
            if not any(store_along.var in _names(i, source) for i in _indices(node)):
                continue
            text = cs.text(node, source)
            if not _read_only(kernel, cs.text(_base(node) or node, source)):
                why_not.append(f"'{text}' reads an array the kernel writes")
            elif not _always_read(node, statement):
                why_not.append(f"'{text}' is not read by every iteration")
            elif not _point_read(node, kernel, written):
                why_not.append(f"'{text}' has an index that is not a function of the loops")
            else:
                by_text.setdefault(kn.compact(text), []).append(node)
    if not by_text:
        found = f" ({'; '.join(why_not)})" if why_not else ""
        raise kn.Refuse(
            f"kernel '{kernel.name}': no read of an array the kernel never writes walks "
            f"memory along '{read_along.var}' while the stores walk along "
            f"'{store_along.var}'{found}: nothing to transpose in shared memory"
        )
    reads: list[Staged] = []
    room = STATIC_SHARED_BYTES
    for nodes in list(by_text.values())[:MOST_TILES]:
        array = cs.text(_base(nodes[0]), source)  # type: ignore[arg-type]
        elem = _element_type(kernel, array, len(_indices(nodes[0])))
        assert elem is not None  # _point_read
        size = TILE_T * (TILE_T + 1) * _most_bytes(elem)
        if size > room:
            break
        room -= size
        tile = kn.fresh(f"tile_{array}", taken)
        reads.append(Staged(cs.text(nodes[0], source), tuple(nodes), elem, tile))
    return tuple(reads)


def _most_bytes(elem: str) -> int:
    """An upper bound of the size of an arithmetic type."""
    return 16 if "double" in elem.split() and "long" in elem.split() else 8


def _describe_transpose(plan: TransposePlan) -> str:
    staged = ", ".join(read.text for read in plan.reads)
    stores = ", ".join(plan.stores)
    return (
        f"{plan.kernel.name}: {TILE_T}x{TILE_T} shared tiles of {staged}, loaded along "
        f"'{plan.read_along.var}' and stored to {stores} along '{plan.store_along.var}'"
    )


def _transpose_launch_edits(launch: kn.Launch, plan: TransposePlan, source: bytes) -> list[Edit]:
    kernel = plan.kernel
    assert kernel.rows is not None
    rows = kn.launch_argument(launch, kernel, kernel.rows.trips, source)
    cols = kn.launch_argument(launch, kernel, kernel.cols.trips, source)
    grid = (
        f"cudaify_blocks({cs.text(cols, source)}, {TILE_T}, 2147483647u), "
        f"cudaify_blocks({cs.text(rows, source)}, {TILE_T}, 65535u)"
    )
    shape = (grid, f"{TILE_T}, {ROWS_T}")
    return kn.resize_launch(launch, kernel.tree, source, shape, (rows, cols), "tile-shaped blocks")


def _transpose_body(plan: TransposePlan) -> str:
    kernel, names = plan.kernel, plan.names
    one = "    "
    lines = [
        "{",
        f"{one}/* cudaify shared_tiling: blocks of {TILE_T} x {ROWS_T} threads move "
        f"{TILE_T} x {TILE_T} tiles: threadIdx.x walks '{plan.read_along.var}' while the "
        f"block loads the tile, then '{plan.store_along.var}' while it computes and stores. */",
        f"{one}if (blockDim.x != {TILE_T} || blockDim.y != {ROWS_T}) __trap();",
    ]
    for read in plan.reads:
        # one column of padding: a warp reading a tile's column hits 32 different banks
        lines.append(f"{one}__shared__ {read.elem_type} {read.tile}[{TILE_T}][{TILE_T + 1}];")
    indent = one
    starts = {}
    for level in kernel.levels:
        start = names["tile_i"] if level is kernel.rows else names["tile_j"]
        d = level.dim
        lines.append(
            f"{indent}for (long long {start} = blockIdx.{d} * {TILE_T}LL; {start} < "
            f"{level.trips}; {start} += {TILE_T}LL * gridDim.{d}) {{"
        )
        starts[level.var] = start
        indent += one
    lines += _transpose_phase(plan, plan.read_along, starts, indent, _transpose_loads(plan))
    lines.append(f"{indent}__syncthreads();")
    lines += _transpose_phase(plan, plan.store_along, starts, indent, None)
    lines.append(f"{indent}__syncthreads();")
    for _ in kernel.levels:
        indent = indent[: -len(one)]
        lines.append(f"{indent}}}")
    lines.append("}")
    return "\n".join(lines)


def _transpose_loads(plan: TransposePlan) -> list[str]:
    slot = _transpose_slot(plan, plan.read_along)
    return [f"{read.tile}{slot} = {read.text};" for read in plan.reads]


def _transpose_slot(plan: TransposePlan, along: kn.Mapped) -> str:
    """The tile slot of the thread's iteration, rows first, when `along` is on x."""
    part = plan.names["part"]
    offsets = ["threadIdx.x" if level is along else part for level in plan.kernel.levels]
    return "".join(f"[{offset}]" for offset in offsets)


def _transpose_phase(
    plan: TransposePlan,
    along: kn.Mapped,
    starts: dict[str, str],
    indent: str,
    loads: list[str] | None,
) -> list[str]:
    """Each thread takes TILE_T / ROWS_T iterations of the tile, `along` on threadIdx.x:
    the loads when `loads` is given, else the body with the staged reads from the tiles."""
    kernel, part = plan.kernel, plan.names["part"]
    source = kernel.source
    one = "    "
    lines = [f"{indent}for (int {part} = threadIdx.y; {part} < {TILE_T}; {part} += {ROWS_T}) {{"]
    inner = indent + one
    for level in kernel.levels:
        offset = "threadIdx.x" if level is along else part
        lines.append(f"{inner}const long long {level.counter} = {starts[level.var]} + {offset};")
    inside = " && ".join(f"{level.counter} < {level.trips}" for level in kernel.levels)
    lines.append(f"{inner}if ({inside}) {{")
    deeper = inner + one
    lines += [deeper + kn.moved(level.declaration, source, deeper) for level in kernel.levels]
    if loads is not None:
        lines += [deeper + load for load in loads]
    else:
        slot = _transpose_slot(plan, along)
        lines += [deeper + _staged_statement(s, plan, slot, deeper) for s in kernel.cols.statements]
    lines += [f"{inner}}}", f"{indent}}}"]
    return lines


def _staged_statement(statement: Node, plan: TransposePlan, slot: str, indent: str) -> str:
    source = plan.kernel.source
    edits = [
        Edit(
            node.start_byte - statement.start_byte,
            node.end_byte - statement.start_byte,
            f"{read.tile}{slot}",
            "staged",
        )
        for read in plan.reads
        for node in read.nodes
        if statement.start_byte <= node.start_byte and node.end_byte <= statement.end_byte
    ]
    text = apply_edits(source[statement.start_byte : statement.end_byte], edits).decode(
        "utf-8", errors="surrogateescape"
    )
    return kn.reindent(text, kn.line_indent(source, statement.start_byte), indent)


Plan = TilePlan | HaloPlan | TransposePlan
