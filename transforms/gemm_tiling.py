"""`gemm_tiling`: the hand-written register-blocked matrix product, as a rule.

Precondition: a 2-D offload (or schedule) kernel that shared_tiling's first shape
recognises (`<prologue> for (k ...) <k body> <epilogue>`, k bounds the same for every
thread, reads that depend on k and on one of i and j from arrays the kernel never writes;
shared_tiling.product_plan, reused, not copied), and, on top of it, a product-sum:
- the staged reads have one floating element type (float or double), and some read
  depends on i and some on j;
- every k body statement is `X += E`, `X -= E` or `X = X + E`, where X is a scalar the
  prologue declares or one element of an output array (`C[i][j]`, indices of i, j and
  names the kernel never changes, the array touched nowhere else by another subscript),
  and E is made of the staged reads, i, j, k and unchanged names with + - * / and casts,
  one of its products multiplying a read of i by a read of j (no call, no condition);
- the prologue declares arithmetic scalars and runs expression statements, the epilogue
  runs expression statements; an output element the k body accumulates into is also
  touched by a top-level prologue or epilogue statement (so that its address is one the
  source touches).

- or such a kernel whose body is one guard `if (G) { ... }` (no else; declarations
  without a value may come before it, as schedule hoists them), G made of the mapped
  variables, names the kernel never changes, integers, + - * and comparisons: a triangle
  (`i >= j`), a band.

Rule: blocks of 16 x 16 threads own a BM x BN tile of outputs (128 x 128 for float,
64 x 64 for double) and walk k BK at a time (8, 16). Each thread owns a TM x TN micro-tile
(8 x 8, 4 x 4) in registers: rows `(r / V) * (BM / (TM / V)) + threadIdx.y * V + r % V`
(V = 4 floats or 2 doubles, so the fragments it reads from shared memory are aligned
float4 / double2 vectors and a quarter-warp's reads fall on distinct banks), columns alike
with threadIdx.x. Per k step the block loads the A-like reads into `tile[BK][BM + V]`
(stored k-major, i.e. transposed when k is the unit-stride index; the pad keeps the
stores on distinct banks) and the B-like reads into `tile[BK][BN + V]`: each thread loads
groups of V elements along the read's unit-stride index, with one float4 / double2 load
when that index provably moves by one element with the loop (polynomial slope 1, k step
1), all V elements are inside the iteration space and the address is 16-byte aligned at
run time, else V scalar loads (zeros past the edges), under `__builtin_expect(!loaded, 0)`:
the cost model then prices the vector load, not the rare fallback. The groups are fetched into
registers one stage ahead: a stage's groups are stored into the tiles after the barrier
that ends the stage before, then the next stage's loads are issued (in flight while the
block computes), then after a barrier each thread reads its fragments and runs the k body
once per output of its micro-tile, in the k order of the source, and waits again. The
prologue's scalars become `T x[TM][TN]` register arrays; an output element the k body
accumulates into is loaded into a register array after the prologue and stored back
before the epilogue (only when the k loop runs at least once: then the source touches it
in the loop). Each output's statements run in their order on the values the source uses:
without a split (below) the sums are bit-identical to one thread per output (nvcc's FMA
contraction aside, as everywhere: fp_exact).
Outputs past the edges (any sizes) compute on zeros and store nothing; every thread
reaches every barrier. Under a guard, each tile first marks (in shared flags) the rows and
columns that hold an output G keeps, loads only their operand slices (the source reads no
others), and is skipped by the whole block where none does (`__syncthreads_or`, the same
answer in every thread); G joins the in-bounds test of the prologue and epilogue, so the
outputs it drops are computed on what was staged and never stored. Guarded float products
launch the narrow tiles: the host does not know how much of the box G keeps.

Split k: where every output is a float or double scalar of the prologue (no element
accumulated in memory, no guard) and the prologue only declares scalars with initializers
free of effects, the launch asks a host function written beside the kernel (`K_splits`)
how many blocks share each tile's k: where the tiles are at most half the
multiprocessors (`atb`: 48 tiles on 132), as many as fill them in one wave (2 for atb),
each share at least SPLIT_LEAST iterations, else 1 (a large product runs as before; float
products split only on the narrow tiles' path). Block z of a tile runs
the stages z, z + gridDim.z, ... (every block walks the stage loop, so the loop reads as
the whole k), its scalars starting from zero; it stores its partial sums, and the last of
the tile's blocks to arrive (an atomic count per tile, reset by that block) runs the
prologue again and adds the partials in block order, then runs the epilogue. The result
does not depend on which block arrives last, but the sums are grouped by share, not in
the source's order: like `reduction`, the output is then checked against the CPU's with
the tolerance. The partials and the counts are static device arrays (SPLIT_SLOTS and
SPLIT_TILES, zeroed when the module loads), so the host function only asks the
multiprocessor count and does arithmetic: data_residency reads it as host code that touches
no mapped memory. The cost model counts such a kernel's work as one block per tile does it
(the split's branches are marked unlikely: most launches do not split)."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tree_sitter import Node

from cudaify.core import Problem, Variant
from cudaify.frontend.edits import Edit, apply_edits
from cudaify.transforms import csource as cs
from cudaify.transforms import kernel_nest as kn
from cudaify.transforms import shared_tiling as st
from cudaify.transforms.base import Context, Method, Outcome

if TYPE_CHECKING:
    from cudaify.transforms.postcondition import Source

THREADS = (16, 16)  # threadIdx.x (columns) x threadIdx.y (rows)


@dataclass(frozen=True)
class Shape:
    """The tiles for one element type."""

    block_m: int  # BM: output rows per block
    block_n: int  # BN
    step_k: int  # BK: iterations of k per stage
    micro_m: int  # TM: output rows per thread
    micro_n: int  # TN
    vector: str  # the 16-byte vector type
    width: int  # its elements


SHAPES = {
    "float": Shape(128, 128, 8, 8, 8, "float4", 4),
    "double": Shape(64, 64, 16, 4, 4, "double2", 2),
}
# Where the wide tiles would leave multiprocessors idle (fewer 128 x 128 tiles than the GPU
# has multiprocessors: a 900 x 900 float product makes 64 of them on an H100's 132), the
# launch takes these, four times as many blocks; the kernel runs the path its grid was
# sized for (any grid computes every output on either path).
NARROW = {"float": Shape(64, 64, 16, 4, 4, "float4", 4)}
# Split k (see _merge) where the output tiles are at most half the multiprocessors: as many
# blocks per tile as fit SPLIT_LOAD blocks a multiprocessor in one wave, each at least
# SPLIT_LEAST iterations of k, at most SPLIT_MOST blocks a tile. Measured on an H100 (atb,
# 48 tiles of 64 x 64, k = 1536): 1 block a tile 0.079 ms, 2 0.058, 3 0.085, 4 0.078, 6 0.098,
# 8 0.091, 12 0.079: a second wave costs more than the share of k it saves.
SPLIT_LOAD = 1
SPLIT_LEAST = 128
SPLIT_MOST = 32
# the partial sums' slots (8 bytes each) and the tiles' arrival counts: static device arrays,
# zeroed when the module loads (16 MiB and 16 KiB); a launch that would need more does not
# split
SPLIT_SLOTS = 1 << 21
SPLIT_TILES = 4096
_LANES = "xyzw"
_ACCUMULATE = frozenset({"+=", "-="})
_ARITHMETIC_OPS = frozenset({"+", "-", "*", "/"})


@dataclass(frozen=True)
class Accumulator:
    """An output element the k body accumulates into, held in registers over the k loop."""

    text: str  # `C[i][j]`
    nodes: tuple[Node, ...]  # its occurrences in the k body
    elem_type: str
    registers: str  # the register array's name


@dataclass(frozen=True)
class GemmPlan:
    tile: st.TilePlan
    shape: Shape
    elem_type: str
    locals: dict[int, tuple[str, str]]  # declaration start -> (type, name) of prologue scalars
    accumulators: tuple[Accumulator, ...]
    vectorized: dict[str, bool]  # operand tile -> whether its groups load as one vector
    names: dict[str, str]
    guard: Node | None = None  # G of a body `if (G) { ... }`: the outputs stored
    # the prologue scalars the k body sums into, where k may be split over blocks (see
    # _split_sums); empty where it may not
    split: tuple[str, ...] = ()


class GemmTiling(Method):
    name = "gemm_tiling"
    summary = (
        "register-blocked matrix product: block tiles staged in shared memory, a micro-tile "
        "of outputs per thread in registers, vectorized loads"
    )
    category = "compute"
    follows = ("offload", "schedule")
    leads_to = ("data_residency", "fp_exact")
    # it stages what shared_tiling stages and computes several outputs per thread, as
    # register_tiling does: until the graph has its own statistics it ranks just ahead
    supersedes = ("shared_tiling", "register_tiling")
    instruction = (
        "The kernel is a matrix product: C[i][j] accumulates over k products of a read of "
        "(i, k) and a read of (k, j). Write the classic register-blocked kernel: 16 x 16 "
        "threads per block, each block a 128 x 128 tile of outputs for float (64 x 64 for "
        "double), each thread an 8 x 8 (4 x 4) micro-tile of outputs in registers. Walk k "
        "8 (16) at a time: the block loads the A slice into __shared__ T As[BK][BM + 4] "
        "(transposed, k-major) and the B slice into Bs[BK][BN + 4], with float4 / double2 "
        "loads where the address is 16-byte aligned and the unit-stride index moves by one, "
        "else scalar loads, zeros past the edges; __syncthreads(); each thread reads its A "
        "and B fragments from shared memory as vectors and updates its micro-tile, then "
        "__syncthreads() before the next load. Keep each output's k order and arithmetic "
        "exactly as written (same alpha/beta prologue and epilogue per output), hold an "
        "output element accumulated in memory in a register over the k loop, let threads "
        "past the edges load, wait and store nothing, for any sizes."
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
        from cudaify.transforms import postcondition as pc

        common = pc.common_problems(self.name, before.code, after.code)
        return common or gemm_problems(before.code, after.code)


def gemm_problems(before: str, after: str) -> list[Problem]:
    """The postcondition: shared_tiling's (tiles staged, every barrier reached by every
    thread of a block), and a launched kernel gained a 2-D register array: the micro-tile
    of outputs each thread computes."""
    from cudaify.transforms import postcondition as pc

    problems = [Problem("gemm_tiling", p.message, line=p.line) for p in st.tiling_problems(after)]
    if not pc.kernel_gained(before, after, pc.staged_tiles):
        problems.append(
            Problem("gemm_tiling", "no launched kernel stages a new tile in shared memory")
        )
    if not pc.kernel_gained(before, after, micro_tiles):
        problems.append(
            Problem("gemm_tiling", "no launched kernel keeps a micro-tile of outputs per thread")
        )
    return problems


def micro_tiles(source: Source, kernel: Node) -> int:
    """Two-dimensional arrays the kernel declares in its own (non-shared) scope."""
    from cudaify.transforms import postcondition as pc

    found = 0
    for declarator in pc.local_arrays(source, kernel):
        inner = declarator.child_by_field_name("declarator")
        declaration = declarator.parent
        while declaration is not None and declaration.type != "declaration":
            declaration = declaration.parent
        if declaration is None or any(c.type == "__shared__" for c in cs.walk(declaration)):
            continue
        if inner is not None and inner.type == "array_declarator":
            found += 1
    return found


def _describe(plan: GemmPlan) -> str:
    shape, tile = plan.shape, plan.tile
    staged = ", ".join(
        f"{o.text} ({o.role}{', vector' if plan.vectorized[o.tile] else ''})" for o in tile.operands
    )
    held = "".join(f"; {a.text} held in registers" for a in plan.accumulators)
    if plan.guard is not None:
        kept = " ".join(cs.text(plan.guard, tile.kernel.source).split())
        held += f"; only the outputs where {kept}, tiles with none skipped"
    return (
        f"{tile.kernel.name}: {shape.block_m}x{shape.block_n} {plan.elem_type} tiles, "
        f"{shape.micro_m}x{shape.micro_n} outputs per thread, {shape.step_k} iterations of "
        f"'{tile.kloop.var}' per stage, staging {staged}{held}"
    )


# ---- recognition ------------------------------------------------------------------------


def _plans(code: str) -> tuple[list[GemmPlan], list[str]]:
    try:
        found = kn.offload_kernels(code)
    except kn.Refuse as refusal:
        return [], [str(refusal)]
    source, tree, taken = found.source, found.tree, found.taken
    plans, reasons = [], []
    for definition in found.definitions:
        try:
            kernel = kn.read_kernel(definition, tree, source)
            if kernel.rows is None:
                raise kn.Refuse(f"kernel '{kernel.name}' is not 2-D (no output tile)")
            kernel, guard = _unguarded(kernel)
            tile = st.product_plan(kernel, set(taken))  # its own names: only the tiles stay
            taken |= {operand.tile for operand in tile.operands}
            plans.append(_plan(tile, taken, guard))
        except kn.Refuse as refusal:
            reasons.append(f"gemm_tiling: {refusal}")
    return plans, reasons


_GUARD_OPERATORS = frozenset({"<", "<=", ">", ">=", "==", "!=", "&&", "||", "+", "-", "*"})


def _unguarded(kernel: kn.Kernel) -> tuple[kn.Kernel, Node | None]:
    """A body that is one `if (G) { ... }` (no else; after declarations without a value),
    G a pure condition on the mapped variables and names the kernel never changes (a
    triangle `i >= j`, a band): the kernel as if the body were those declarations and the
    braces' statements, and G. Any other body as it is."""
    statements = kernel.cols.statements
    # `float sum;` before the if, as schedule hoists it: it holds nothing yet, and with the
    # if the last statement nothing reads it outside the braces, so it moves into them
    hoisted = tuple(statements[:-1])
    if not statements or statements[-1].type != "if_statement":
        return kernel, None
    for statement in hoisted:
        if statement.type != "declaration" or any(
            d.type == "init_declarator" for d in statement.children_by_field_name("declarator")
        ):
            return kernel, None
    branch = statements[-1]
    condition = branch.child_by_field_name("condition")
    consequence = branch.child_by_field_name("consequence")
    if condition is None or consequence is None:
        return kernel, None
    source = kernel.source
    where = f"line {cs.line_of(branch)}"
    if branch.child_by_field_name("alternative") is not None:
        raise kn.Refuse(f"{where}: the body is an if with an else, not a guard")
    written = kn.written_names(kernel)
    mapped = {level.var for level in kernel.levels}
    for node in cs.walk(condition):
        if node.type == "binary_expression":
            operator = node.child_by_field_name("operator")
            if operator is not None and operator.type in _GUARD_OPERATORS:
                continue
        elif node.type == "unary_expression" and cs.text(node, source)[:1] in "!-+":
            continue
        elif node.type == "identifier":
            if cs.text(node, source) in mapped or kn.is_invariant(node, kernel, written):
                continue
        elif node.type in ("condition_clause", "parenthesized_expression", "number_literal") or (
            not node.is_named
        ):
            continue
        raise kn.Refuse(
            f"{where}: the guard '{cs.text(condition, source)}' reads "
            f"'{cs.text(node, source)}': only the mapped variables, unchanged names and "
            "arithmetic comparisons may decide which outputs are computed"
        )
    inner = hoisted + tuple(kn.statements_of(consequence))
    return dataclasses.replace(
        kernel, cols=dataclasses.replace(kernel.cols, statements=inner)
    ), condition


def _plan(tile: st.TilePlan, taken: set[str], guard: Node | None = None) -> GemmPlan:
    kernel = tile.kernel
    where = f"kernel '{kernel.name}'"
    accumulators = _accumulators(tile, taken)
    types = {o.elem_type for o in tile.operands}
    if len(types) != 1 or not types <= set(SHAPES):
        raise kn.Refuse(f"{where}: the staged reads are not all float or all double")
    roles = {o.role for o in tile.operands}
    if roles != {"rows", "cols"}:
        raise kn.Refuse(f"{where}: no staged read depends on each of the two mapped loops")
    elem = types.pop()
    locals_ = _prologue_locals(tile)
    _require_plain_epilogue(tile)
    _require_product_sums(tile, locals_, accumulators)
    vectorized = {o.tile: _unit_stride(o, tile) for o in tile.operands}
    names = {
        role: kn.fresh(base, taken)
        for role, base in (
            ("tile_i", "tile_row"),
            ("tile_j", "tile_col"),
            ("tile_k", f"tile_{tile.kloop.var}"),
            ("fetch_k", f"next_{tile.kloop.var}"),
            ("span", f"span_{tile.kloop.var}"),
            ("trips", f"trips_{tile.kloop.var}"),
            ("count", f"count_{tile.kloop.var}"),
            ("t_k", f"t_{tile.kloop.var}"),
            ("kk", f"kk_{tile.kloop.var}"),
            ("active", "active"),
            ("tid", "thread"),
            ("q", "part"),
            ("group", "group"),
            ("outer", "slot_outer"),
            ("inner", "slot_inner"),
            ("loaded", "loaded"),
            ("address", "address"),
            ("packed", "packed"),
            ("half", "half"),
            ("r", "out_r"),
            ("c", "out_c"),
            ("narrow", "narrow"),
            ("chooser", f"{kernel.name}_tile"),
            ("live:rows", "live_rows"),
            ("live:cols", "live_cols"),
            ("any", "any_live"),
            ("live_tile", "live_tile"),
            ("arrived", "arrived"),
            ("last", "last_split"),
            ("split", "split"),
            ("region", "region"),
            ("tile_index", "tile_index"),
            ("partials", f"{kernel.name}_partials"),
            ("arrivals", f"{kernel.name}_arrivals"),
            ("splits", f"{kernel.name}_splits"),
        )
    }
    for operand in tile.operands:
        names[f"frag:{operand.tile}"] = kn.fresh(f"frag_{operand.tile[5:]}", taken)
        names[f"staged:{operand.tile}"] = kn.fresh(f"staged_{operand.tile[5:]}", taken)
    for _, name in locals_.values():
        names[f"local:{name}"] = kn.fresh(f"{name}_tile", taken)
    split = _split_sums(tile, locals_, accumulators, guard)
    return GemmPlan(
        tile, SHAPES[elem], elem, locals_, accumulators, vectorized, names, guard, split
    )


# a launch that splits k: marked unlikely, since most launches do not (a product with enough
# tiles); the cost model then counts a kernel's work as one block per tile does it
_SPLIT = "__builtin_expect(gridDim.z > 1, 0)"


def _split_sums(
    tile: st.TilePlan,
    locals_: dict[int, tuple[str, str]],
    accumulators: tuple[Accumulator, ...],
    guard: Node | None,
) -> tuple[str, ...]:
    """The prologue scalars the k body sums into, when k may be split over several blocks
    of one output tile: every output is a float or double scalar of the prologue (no
    element accumulated in memory), and the prologue only declares scalars with initializers
    free of effects, so that every block may run it and the block that adds the partial
    sums runs it again. Empty otherwise (and under a guard)."""
    if guard is not None or accumulators:
        return ()
    source = tile.kernel.source
    for statement in tile.prologue:
        if statement.start_byte not in locals_:
            return ()  # an expression statement runs once per output
        if cs.has_side_effects(kn.initializer(statement)):
            return ()
    types = {name: type_ for type_, name in locals_.values()}
    sums: list[str] = []
    for statement in _k_statements(tile):
        left = statement.named_children[0].child_by_field_name("left")
        assert left is not None  # _require_product_sums read it
        target = kn.compact(cs.text(left, source))
        if types.get(target) not in SHAPES:
            return ()
        if target not in sums:
            sums.append(target)
    return tuple(sums)


def _prologue_locals(tile: st.TilePlan) -> dict[int, tuple[str, str]]:
    """Arithmetic scalars the prologue declares; anything but those and expression
    statements is refused."""
    source = tile.kernel.source
    found = {}
    for statement in tile.prologue:
        if statement.type == "expression_statement":
            continue
        if statement.type != "declaration":
            raise kn.Refuse(
                f"line {cs.line_of(statement)}: the prologue runs a {statement.type}, not an "
                "expression or a scalar declaration"
            )
        words = cs.base_type(statement, source).split()
        declarators = statement.children_by_field_name("declarator")
        named = [
            d.child_by_field_name("declarator") if d.type == "init_declarator" else d
            for d in declarators
        ]
        name = cs.text(named[0], source) if len(named) == 1 and named[0] is not None else None
        if (
            name is None
            or named[0] is None
            or named[0].type != "identifier"
            or not words
            or not set(words) <= st.ARITHMETIC | {"const"}
        ):
            raise kn.Refuse(
                f"line {cs.line_of(statement)}: the prologue declares something other than "
                "one arithmetic scalar"
            )
        found[statement.start_byte] = (" ".join(w for w in words if w != "const"), name)
    return found


def _require_plain_epilogue(tile: st.TilePlan) -> None:
    for statement in tile.epilogue:
        if statement.type != "expression_statement":
            raise kn.Refuse(
                f"line {cs.line_of(statement)}: the epilogue runs a {statement.type}, not an "
                "expression statement"
            )


def _k_statements(tile: st.TilePlan) -> list[Node]:
    body = tile.kloop.body
    return kn.statements_of(body) if body.type == "compound_statement" else [body]


def _accumulators(tile: st.TilePlan, taken: set[str]) -> tuple[Accumulator, ...]:
    """The output elements the k body updates in memory (`C[i][j] += ...`)."""
    kernel = tile.kernel
    source = kernel.source
    staged = {_key(n) for o in tile.operands for n in o.nodes}
    by_text: dict[str, list[Node]] = {}
    for statement in _k_statements(tile):
        for node in cs.walk(statement):
            if node.type != "subscript_expression" or _key(node) in staged:
                continue
            parent = node.parent
            if parent is not None and parent.type == "subscript_expression":
                if parent.child_by_field_name("argument") == node:
                    continue
            text = kn.compact(cs.text(node, source))
            if any(_key(n) in staged for n in cs.walk(node)):
                continue
            by_text.setdefault(text, []).append(node)
    found = []
    for text, nodes in by_text.items():
        found.append(_accumulator(text, nodes, tile, taken))
    return tuple(found)


def _accumulator(text: str, nodes: list[Node], tile: st.TilePlan, taken: set[str]) -> Accumulator:
    kernel = tile.kernel
    source = kernel.source
    access = nodes[0]
    shown = cs.text(access, source)
    array = st.array_base(access)
    indices = st.array_indices(access)
    name = cs.text(array, source) if array is not None else shown
    elem = st.element_type(kernel, name, len(indices)) if array is not None else None
    if array is None or not indices or elem is None or st.read_only(kernel, name):
        raise kn.Refuse(
            f"line {cs.line_of(access)}: the '{tile.kloop.var}' loop reads '{shown}', which "
            "is not staged (not a product of the two operands)"
        )
    written = kn.written_names(kernel)
    mapped = {level.var: level for level in kernel.levels}
    for index in indices:
        for ident in cs.identifiers_in(index):
            what = cs.text(ident, source)
            if what in mapped or kn.is_invariant(ident, kernel, written):
                continue
            raise kn.Refuse(
                f"line {cs.line_of(access)}: '{shown}' reads '{name}', which the kernel "
                f"writes, at an index of '{what}': an output array read as an operand"
            )
    for ident in cs.identifiers_in(kernel.body):
        if cs.text(ident, source) != name:
            continue
        outer = ident
        while (
            outer.parent is not None
            and outer.parent.type == "subscript_expression"
            and outer.parent.child_by_field_name("argument") == outer
        ):
            outer = outer.parent
        if kn.compact(cs.text(outer, source)) != text:
            raise kn.Refuse(
                f"line {cs.line_of(outer)}: the kernel also touches '{cs.text(outer, source)}' "
                f"besides the output element '{shown}'"
            )
    if not any(_touches(s, text, source) for s in tile.prologue + tile.epilogue):
        raise kn.Refuse(
            f"'{shown}' is touched only inside the '{tile.kloop.var}' loop: no statement "
            "outside it says its address is one the source uses"
        )
    registers = kn.fresh(f"acc_{name}", taken)
    return Accumulator(shown, tuple(nodes), elem, registers)


def _key(node: Node) -> tuple[int, int, str]:
    """Tree-sitter makes a new Node object per visit: nodes are compared by their span."""
    return (node.start_byte, node.end_byte, node.type)


def _touches(statement: Node, text: str, source: bytes) -> bool:
    return any(
        n.type == "subscript_expression" and kn.compact(cs.text(n, source)) == text
        for n in cs.walk(statement)
    )


def _require_product_sums(
    tile: st.TilePlan, locals_: dict[int, tuple[str, str]], accumulators: tuple[Accumulator, ...]
) -> None:
    """Every k body statement adds a sum of products of the staged reads to a per-output
    scalar or output element."""
    source = tile.kernel.source
    targets = {kn.compact(a.text) for a in accumulators} | {name for _, name in locals_.values()}
    roles = {_key(n): o.role for o in tile.operands for n in o.nodes}
    for statement in _k_statements(tile):
        where = f"line {cs.line_of(statement)}"
        expression = statement.named_children[0] if statement.named_children else None
        if (
            statement.type != "expression_statement"
            or expression is None
            or expression.type != "assignment_expression"
        ):
            raise kn.Refuse(f"{where}: the '{tile.kloop.var}' loop body is not a product-sum")
        left = expression.child_by_field_name("left")
        right = expression.child_by_field_name("right")
        operator = cs.text(expression.child_by_field_name("operator"), source)
        assert left is not None and right is not None
        target = kn.compact(cs.text(left, source))
        if target not in targets:
            raise kn.Refuse(
                f"{where}: '{cs.text(left, source)}' is neither a prologue scalar nor an "
                "output element"
            )
        if operator == "=":
            right = _added_to(right, target, source)
            if right is None:
                raise kn.Refuse(
                    f"{where}: '{cs.text(expression, source)}' is not a sum into "
                    f"'{cs.text(left, source)}' (a reduction that is not a product-sum)"
                )
        elif operator not in _ACCUMULATE:
            raise kn.Refuse(
                f"{where}: '{operator}' accumulates something other than a sum of products"
            )
        _require_arithmetic(right, tile, where)
        if not _has_product(right, roles):
            raise kn.Refuse(
                f"{where}: '{cs.text(right, source)}' multiplies no read of the rows by a read "
                "of the columns: not a product-sum"
            )


def _added_to(right: Node, target: str, source: bytes) -> Node | None:
    """E of `X = X + E`."""
    while right.type == "parenthesized_expression" and right.named_child_count == 1:
        right = right.named_children[0]
    if right.type != "binary_expression":
        return None
    operator = right.child_by_field_name("operator")
    first = right.child_by_field_name("left")
    if operator is None or operator.type != "+" or first is None:
        return None
    if kn.compact(cs.text(first, source)) != target:
        return None
    return right.child_by_field_name("right")


def _require_arithmetic(expression: Node, tile: st.TilePlan, where: str) -> None:
    kernel = tile.kernel
    source = kernel.source
    staged = {_key(n) for o in tile.operands for n in o.nodes}
    pending = [expression]
    while pending:
        node = pending.pop()
        if _key(node) in staged or node.type in ("identifier", "number_literal"):
            continue
        if node.type in ("parenthesized_expression", "cast_expression", "type_descriptor"):
            pending += node.named_children
            continue
        if node.type in ("primitive_type", "sized_type_specifier", "type_qualifier"):
            continue
        if node.type == "binary_expression":
            operator = node.child_by_field_name("operator")
            if operator is not None and operator.type in _ARITHMETIC_OPS:
                pending += node.named_children
                continue
        if node.type == "unary_expression" and cs.text(node, source).startswith(("-", "+")):
            pending += node.named_children
            continue
        raise kn.Refuse(
            f"{where}: '{cs.text(node, source)}' in the '{tile.kloop.var}' loop is not a "
            "staged read, a name or arithmetic: not a product-sum"
        )


def _has_product(expression: Node, roles: dict[tuple[int, int, str], str]) -> bool:
    for node in cs.walk(expression):
        if node.type != "binary_expression":
            continue
        operator = node.child_by_field_name("operator")
        if operator is None or operator.type != "*":
            continue
        seen = {roles[_key(n)] for n in cs.walk(node) if _key(n) in roles}
        if seen == {"rows", "cols"}:
            return True
    return False


def _unit_stride(operand: st.Operand, tile: st.TilePlan) -> bool:
    """Whether V consecutive iterations along the read's unit-stride loop read V adjacent
    elements: its last index moves by exactly one (the others not at all), and that loop's
    variable moves by one per iteration."""
    kernel = tile.kernel
    source = kernel.source
    node = operand.nodes[0]
    indices = st.array_indices(node)
    if not indices:
        return False
    if operand.k_contiguous:
        if tile.kloop.step != 1:
            return False
        var = tile.kloop.var
    else:
        level = kernel.rows if operand.role == "rows" else kernel.cols
        assert level is not None
        value = kn.initializer(level.declaration)
        poly = kn.polynomial(value, source) if value is not None else None
        if poly is None or kn.derivative(poly, level.counter) != {(): 1}:
            return False
        var = level.var
    last = kn.polynomial(indices[-1], source)
    if last is None or kn.derivative(last, var) != {(): 1}:
        return False
    for index in indices[:-1]:
        if var in {cs.text(i, source) for i in cs.identifiers_in(index)}:
            return False
    return True


# ---- emitting ---------------------------------------------------------------------------


def _emit(code: str, plans: list[GemmPlan]) -> str:
    source = code.encode("utf-8", errors="surrogateescape")
    edits: list[Edit] = []
    for plan in plans:
        kernel = plan.tile.kernel
        for launch in kn.launches(kernel.tree, source, kernel.name):
            edits += _launch_edits(launch, plan, source)
        text = _kernel_body(plan)
        if plan.elem_type in NARROW and plan.guard is None:
            text += "\n\n" + _chooser(plan)
        if plan.split:
            text += "\n\n" + _splits_function(plan)
            at = kernel.definition.start_byte
            symbols = (
                f"/* cudaify gemm_tiling: the partial sums of '{kernel.name}' where blocks "
                "share a tile's k, and how many of a tile's blocks have arrived */\n"
                f"static __device__ unsigned long long {plan.names['partials']}[{SPLIT_SLOTS}];\n"
                f"static __device__ unsigned int {plan.names['arrivals']}[{SPLIT_TILES}];\n\n"
            )
            edits.append(Edit(at, at, symbols, f"gemm split {kernel.name}"))
        edits.append(
            Edit(kernel.body.start_byte, kernel.body.end_byte, text, f"gemm {kernel.name}")
        )
    return apply_edits(source, edits).decode("utf-8", errors="surrogateescape")


def _launch_edits(launch: kn.Launch, plan: GemmPlan, source: bytes) -> list[Edit]:
    kernel, shape = plan.tile.kernel, plan.shape
    assert kernel.rows is not None
    cols = kn.launch_argument(launch, kernel, kernel.cols.trips, source)
    rows = kn.launch_argument(launch, kernel, kernel.rows.trips, source)
    across, down = str(shape.block_n), str(shape.block_m)
    if plan.elem_type in NARROW and plan.guard is not None:
        # a guard keeps part of the box, how much the host does not know: the narrow
        # tiles leave fewer multiprocessors idle and waste less along its edge (syrk's
        # 1536^2 triangle: 78 live wide tiles on 132 multiprocessors, 0.131 ms; narrow
        # 0.072 ms on an H200)
        across = down = str(NARROW[plan.elem_type].block_m)
    elif plan.elem_type in NARROW:  # square tiles, chosen at run time
        across = down = f"{plan.names['chooser']}({cs.text(rows, source)}, {cs.text(cols, source)})"
    grid = (
        f"cudaify_blocks({cs.text(cols, source)}, {across}, 2147483647u), "
        f"cudaify_blocks({cs.text(rows, source)}, {down}, 65535u)"
    )
    block = f"{THREADS[0]}, {THREADS[1]}"
    edits = kn.resize_launch(
        launch, kernel.tree, source, (grid, block), (rows, cols), "gemm-tiled blocks"
    )
    trips = _host_trips(launch, plan, source) if plan.split else None
    if trips is None:
        return edits
    splits = (
        f"{plan.names['splits']}({cs.text(rows, source)}, {cs.text(cols, source)}, {trips}, "
        f"{across})"
    )
    configuration = launch.configuration
    if any(e.start <= configuration.start_byte < e.end for e in edits):  # the <<<...>>> rewritten
        return kn.resize_launch(
            launch,
            kernel.tree,
            source,
            (f"{grid}, {splits}", block),
            (rows, cols),
            "gemm-tiled blocks",
        )
    # the grid's declaration was resized: the launch asks for the split where it runs
    part = next(c for c in configuration.named_children if c.type != "comment")
    name = cs.text(part, source)
    text = f"dim3({name}.x, {name}.y, {splits})"
    return [*edits, Edit(part.start_byte, part.end_byte, text, "gemm split k")]


def _host_trips(launch: kn.Launch, plan: GemmPlan, source: bytes) -> str | None:
    """The k loop's trip count as the launching code can compute it: its bounds with the
    kernel's parameters replaced by the launch's arguments (other names: macros and
    file-scope constants, seen alike from both). None where a bound reads anything else."""
    kernel, k = plan.tile.kernel, plan.tile.kloop

    def host(text: str) -> str | None:
        out, at = [], 0
        for match in re.finditer(r"\b[A-Za-z_]\w*\b", text):
            name = match.group(0)
            out.append(text[at : match.start()])
            at = match.end()
            if name in kernel.params:
                try:
                    argument = kn.launch_argument(launch, kernel, name, source)
                except kn.Refuse:
                    return None
                out.append(f"({cs.text(argument, source)})")
                continue
            declared = cs.visible(kernel.tree, source, name, launch.call.start_byte)
            if name in st.ARITHMETIC or declared is None and not _declared_in(kernel, name):
                out.append(name)  # a type, or a macro
            elif (
                declared is not None
                and declared.scope == "global"
                and ("const" in declared.base.split())
            ):
                out.append(name)
            else:
                return None
        return "".join(out) + text[at:]

    bound, first = host(k.bound), host(k.first)
    if bound is None or first is None:
        return None
    extra = " + 1" if k.inclusive else ""
    span = f"((long long)({bound}) - (long long)({first}){extra})"
    return f"({span} + {k.step - 1}) / {k.step}" if k.step != 1 else span


def _declared_in(kernel: kn.Kernel, name: str) -> bool:
    """Whether the kernel declares `name` itself (a local of the kernel, not a macro)."""
    return any(
        cs.text(n, kernel.source) == name and n.parent is not None and "declarator" in n.parent.type
        for n in cs.walk(kernel.definition)
    )


def _offset(index: str, micro: int, block: int, width: int, thread: str) -> str:
    """The block-relative row (column) of a thread's output `index` of `micro`."""
    chunks = micro // width
    return f"({index} / {width}) * {block // chunks} + {thread} * {width} + {index} % {width}"


def _kernel_body(plan: GemmPlan) -> str:
    tile, shape, names = plan.tile, plan.shape, plan.names
    kernel = tile.kernel
    assert kernel.rows is not None
    one = "    "
    lines = [
        "{",
        f"{one}/* cudaify gemm_tiling: blocks of {THREADS[0]} x {THREADS[1]} threads own "
        f"{_owned(shape)}; {shape.step_k} iterations of '{tile.kloop.var}' are staged at a "
        "time. */",
        f"{one}if (blockDim.x != {THREADS[0]} || blockDim.y != {THREADS[1]}) __trap();",
        f"{one}const int {names['tid']} = threadIdx.y * {THREADS[0]} + threadIdx.x;",
    ]
    narrow = NARROW.get(plan.elem_type)
    if narrow is None:
        lines += _paths(plan, one)
    else:
        wide = [
            f"(long long)gridDim.{level.dim} > ({level.trips} + {extent - 1}) / {extent}"
            for level, extent in ((kernel.rows, shape.block_m), (kernel.cols, shape.block_n))
        ]
        lines += [
            f"{one}/* a grid sized for {_owned(narrow)} (more blocks than the wide tiles "
            "need): the GPU has more multiprocessors than wide tiles */",
            f"{one}const bool {names['narrow']} = {' || '.join(wide)};",
            f"{one}if ({names['narrow']}) {{",
            *_paths(dataclasses.replace(plan, shape=narrow), one * 2),
            f"{one}}} else {{",
            # the host splits k only where the tiles are fewer than the multiprocessors,
            # and then launches the narrow ones: the wide path need not add partials (were
            # it launched split, every block would compute and store the same sums)
            *_tiles(dataclasses.replace(plan, split=()), one * 2),
            f"{one}}}",
        ]
    lines.append("}")
    return "\n".join(lines)


def _paths(plan: GemmPlan, indent: str) -> list[str]:
    """The tiles' loops, and where k may be split, a path of their own for a split launch:
    a launch that does not split runs the code it ran before split k existed (measured on
    an H100: one path for both made matmul's unsplit 900^3 product 0.101 ms against 0.070)."""
    if not plan.split:
        return _tiles(plan, indent)
    return [
        f"{indent}if ({_SPLIT}) {{  /* k split over the blocks of each tile */",
        *_tiles(plan, indent + "    "),
        f"{indent}}} else {{",
        *_tiles(dataclasses.replace(plan, split=()), indent + "    "),
        f"{indent}}}",
    ]


def _owned(shape: Shape) -> str:
    return (
        f"{shape.block_m} x {shape.block_n} outputs, each thread {shape.micro_m} x "
        f"{shape.micro_n} of them in registers"
    )


def _chooser(plan: GemmPlan) -> str:
    """The host function that picks the launch's square tile: the wide one where the GPU
    has a multiprocessor for each wide tile or fewer, else the narrow one."""
    wide, narrow = plan.shape.block_m, NARROW[plan.elem_type].block_m
    return "\n".join(
        [
            f"/* cudaify gemm_tiling: {wide} x {wide} tiles where there are at least as many as "
            f"multiprocessors, else {narrow} x {narrow} */",
            f"static int {plan.names['chooser']}(long long rows, long long cols)",
            "{",
            *_processors(),
            f"    return ((rows + {wide - 1}) / {wide}) * ((cols + {wide - 1}) / {wide}) < "
            f"processors ? {narrow} : {wide};",
            "}",
        ]
    )


def _tiles(plan: GemmPlan, indent: str) -> list[str]:
    """The shared tiles and the loops over block tiles, at one shape."""
    tile, shape, names = plan.tile, plan.shape, plan.names
    kernel = tile.kernel
    assert kernel.rows is not None
    one = "    "
    tm, tn = shape.micro_m, shape.micro_n
    lines = []
    for operand in tile.operands:
        extent = shape.block_m if operand.role == "rows" else shape.block_n
        lines.append(
            f"{indent}alignas(16) __shared__ {operand.elem_type} "
            f"{operand.tile}[{shape.step_k}][{extent + shape.width}];"
        )
    if plan.guard is not None:
        lines += [
            f"{indent}__shared__ bool {names['live:rows']}[{shape.block_m}];",
            f"{indent}__shared__ bool {names['live:cols']}[{shape.block_n}];",
        ]
    outer = indent
    for level, start, extent in (
        (kernel.rows, names["tile_i"], shape.block_m),
        (kernel.cols, names["tile_j"], shape.block_n),
    ):
        d = level.dim
        lines.append(
            f"{indent}for (long long {start} = blockIdx.{d} * {extent}LL; {start} < "
            f"{level.trips}; {start} += {extent}LL * gridDim.{d}) {{"
        )
        indent += one
    for type_, name in plan.locals.values():
        lines.append(f"{indent}{type_} {names['local:' + name]}[{tm}][{tn}];")
    for acc in plan.accumulators:
        lines.append(f"{indent}{acc.elem_type} {acc.registers}[{tm}][{tn}];")
    k = tile.kloop
    extra = " + 1" if k.inclusive else ""
    span = names["span"]
    lines.append(
        f"{indent}const long long {span} = (long long)({k.bound}) - (long long)({k.first}){extra};"
    )
    trips = _trips(span, k.step)
    lines.append(f"{indent}const long long {names['trips']} = {trips};")
    work = indent
    if plan.guard is not None:
        lines += _live_flags(plan, indent)
        lines.append(f"{indent}if ({names['live_tile']}) {{")
        work = indent + one
    lines += _per_output(plan, work, _prologue(plan))
    if plan.split:  # from here on, this block's share of the sums
        lines += _per_output(plan, work, [f"@{_slot(plan, name)} = {{}};" for name in plan.split])
    lines += _k_stages(plan, work)
    if plan.split:
        lines += _merge(plan, work)
    lines += _per_output(plan, work, _epilogue(plan))
    if plan.guard is not None:
        lines.append(f"{indent}}}")
    for _ in range(2):
        indent = indent[: -len(one)]
        lines.append(f"{indent}}}")
    assert indent == outer
    return lines


def _live_flags(plan: GemmPlan, indent: str) -> list[str]:
    """Under a guard: which rows and columns of the block's tile hold an output the
    guard keeps (only their operand slices are loaded: the source reads no other), and
    whether any does (a tile with none is skipped; the vote is the same in every thread).
    The barrier first: the tile before may still be reading the flags."""
    shape, names = plan.shape, plan.names
    rows, cols, any_ = names["live:rows"], names["live:cols"], names["any"]
    row = _offset(names["r"], shape.micro_m, shape.block_m, shape.width, "threadIdx.y")
    col = _offset(names["c"], shape.micro_n, shape.block_n, shape.width, "threadIdx.x")
    one = "    "
    lines = [f"{indent}__syncthreads();"]
    for flags, extent in ((rows, shape.block_m), (cols, shape.block_n)):
        lines.append(
            f"{indent}for (int {names['q']} = {names['tid']}; {names['q']} < {extent}; "
            f"{names['q']} += {THREADS[0] * THREADS[1]}) {flags}[{names['q']}] = false;"
        )
    lines += [f"{indent}__syncthreads();", f"{indent}bool {any_} = false;"]
    lines += _per_output(
        plan,
        indent,
        [
            f"@if ({names['active']}) {{",
            f"@{one}{rows}[{row}] = true;",
            f"@{one}{cols}[{col}] = true;",
            f"@{one}{any_} = true;",
            "@}",
        ],
    )
    lines.append(f"{indent}const int {names['live_tile']} = __syncthreads_or({any_});")
    return lines


def _slot(plan: GemmPlan, name: str) -> str:
    """A prologue scalar's register slot for the output being run."""
    names = plan.names
    return f"{names['local:' + name]}[{names['r']}][{names['c']}]"


def _merge(plan: GemmPlan, indent: str) -> list[str]:
    """Where k is split over gridDim.z blocks of one tile: each block stores its partial
    sums (8 bytes a slot, one region per summed scalar), and the last of the tile's blocks
    to arrive runs the prologue again and adds every partial to its scalars in the order of
    the blocks, so the result is the same whichever block arrives last; it also resets the
    tile's arrival count for the next launch. The others go on to their next tile."""
    names, shape, kernel = plan.names, plan.shape, plan.tile.kernel
    assert kernel.rows is not None
    rows, cols = kernel.rows, kernel.cols
    one = "    "
    region, split = names["region"], names["split"]
    partials, arrivals = names["partials"], names["arrivals"]

    def partial(position: int, block: str) -> str:
        type_ = next(t for t, n in plan.locals.values() if n == plan.split[position])
        base = f"(unsigned char *){partials}"
        base = f"{base} + {position} * {region}" if position else base
        row = f"(long long){block} * ({rows.trips}) + {rows.counter}"
        index = f"({row}) * ({cols.trips}) + {cols.counter}"
        return f"(({type_} *)({base}))[{index}]"

    store = [f"@if ({names['active']}) {{"]
    store += [
        f"@{one}{partial(p, 'blockIdx.z')} = {_slot(plan, n)};" for p, n in enumerate(plan.split)
    ]
    store.append("@}")
    add = [
        f"@if ({names['active']}) {{",
        f"@{one}for (unsigned int {split} = 0; {split} < gridDim.z; {split}++) {{",
    ]
    add += [
        f"@{one * 2}{_slot(plan, n)} += __ldcg(&{partial(p, split)});"
        for p, n in enumerate(plan.split)
    ]
    add += [f"@{one}}}", "@}"]
    across = f"(({cols.trips}) + {shape.block_n - 1}) / {shape.block_n}"
    index = (
        f"({names['tile_i']} / {shape.block_m}) * ({across}) + {names['tile_j']} / {shape.block_n}"
    )
    return [
        f"{indent}/* k split over gridDim.z blocks: store this block's partial sums; the last "
        "block of the tile adds them in block order */",
        *[
            f"{indent}const long long {region} = (long long)gridDim.z * ({rows.trips}) * "
            f"({cols.trips}) * 8;"
            for _ in plan.split[1:2]
        ],
        *_per_output(plan, indent, store),
        f"{indent}__threadfence();",
        f"{indent}__syncthreads();",
        f"{indent}int {names['arrived']} = 0;",
        f"{indent}if ({names['tid']} == 0) {{",
        f"{indent}{one}const long long {names['tile_index']} = {index};",
        f"{indent}{one}{names['arrived']} = atomicAdd(&{arrivals}[{names['tile_index']}], 1u) "
        "== gridDim.z - 1u;",
        f"{indent}{one}if ({names['arrived']}) {arrivals}[{names['tile_index']}] = 0u;",
        f"{indent}}}",
        f"{indent}const int {names['last']} = __syncthreads_or({names['arrived']});",
        f"{indent}if (!{names['last']}) continue;",
        f"{indent}__threadfence();",
        *_per_output(plan, indent, _prologue(plan)),
        *_per_output(plan, indent, add),
    ]


def _splits_function(plan: GemmPlan) -> str:
    """The host function that picks how many blocks share each tile's k (1: none); a
    launch whose partial sums or tiles would not fit the static arrays does not split."""
    names = plan.names
    regions = len(plan.split)
    return "\n".join(
        [
            "/* cudaify gemm_tiling: where the output tiles are at most half the "
            "multiprocessors, k is split over the blocks of a tile that fill them in one wave, "
            f"each a share of at least {SPLIT_LEAST} iterations */",
            f"static unsigned int {names['splits']}(long long rows, long long cols, long long "
            "trips, long long tile)",
            "{",
            *_processors(),
            "    if (rows <= 0 || cols <= 0 || tile <= 0 || trips <= 0)",
            "        return 1u;",
            "    const long long tiles = ((rows + tile - 1) / tile) * ((cols + tile - 1) / tile);",
            f"    long long splits = {SPLIT_LOAD}LL * processors / tiles;",
            f"    if (splits > trips / {SPLIT_LEAST})",
            f"        splits = trips / {SPLIT_LEAST};",
            f"    if (splits > {SPLIT_MOST})",
            f"        splits = {SPLIT_MOST};",
            "    if (splits < 2)",
            "        return 1u;",
            f"    if (tiles > {SPLIT_TILES} || "
            f"(double)splits * rows * cols * {regions} > {SPLIT_SLOTS}.0)",
            "        return 1u;",
            "    return (unsigned int)splits;",
            "}",
        ]
    )


def _processors() -> list[str]:
    """Host lines that set `processors` to the device's multiprocessor count, once."""
    return [
        "    static int processors = 0;",
        "    if (processors == 0) {",
        "        int device = 0;",
        "        if (cudaGetDevice(&device) != cudaSuccess || "
        "cudaDeviceGetAttribute(&processors, cudaDevAttrMultiProcessorCount, device) "
        "!= cudaSuccess || processors < 1) {",
        "            (void)cudaGetLastError();",
        "            processors = 1;",
        "        }",
        "    }",
    ]


def _trips(span: str, step: int) -> str:
    if step == 1:
        return f"{span} > 0 ? {span} : 0"
    return f"{span} > 0 ? ({span} + {step - 1}) / {step} : 0"


def _per_output(plan: GemmPlan, indent: str, body: list[str]) -> list[str]:
    """`body` (statements at relative indent, `@` marking the per-output block's indent)
    run for each output of the thread's micro-tile, with its t_i, t_j and `active`."""
    shape, names, kernel = plan.shape, plan.names, plan.tile.kernel
    assert kernel.rows is not None
    one = "    "
    r, c = names["r"], names["c"]
    inner = indent + one * 2
    rows, cols = kernel.rows, kernel.cols
    row = _offset(r, shape.micro_m, shape.block_m, shape.width, "threadIdx.y")
    col = _offset(c, shape.micro_n, shape.block_n, shape.width, "threadIdx.x")
    text = "\n".join(body)
    lines = [
        f"{indent}#pragma unroll",
        f"{indent}for (int {r} = 0; {r} < {shape.micro_m}; {r}++) {{",
        f"{indent}{one}#pragma unroll",
        f"{indent}{one}for (int {c} = 0; {c} < {shape.micro_n}; {c}++) {{",
    ]
    active = _mentions(text, names["active"])
    used = [level for level in (rows, cols) if _mentions(text, level.var)]
    if plan.guard is not None and active:
        used = [rows, cols]  # the guard reads the mapped variables
    if used or active:
        lines += [
            f"{inner}const long long {rows.counter} = {names['tile_i']} + {row};",
            f"{inner}const long long {cols.counter} = {names['tile_j']} + {col};",
        ]
    declarations = [inner + kn.moved(level.declaration, kernel.source, inner) for level in used]
    if plan.guard is not None:
        lines += declarations
    if active:
        guard = ""
        if plan.guard is not None:
            guard = " && " + " ".join(cs.text(plan.guard, kernel.source).split())
        lines.append(
            f"{inner}const bool {names['active']} = {rows.counter} < {rows.trips} && "
            f"{cols.counter} < {cols.trips}{guard};"
        )
    if plan.guard is None:
        lines += declarations
    lines += [line.replace("@", inner, 1) for line in body]
    lines += [f"{indent}{one}}}", f"{indent}}}"]
    return lines


def _mentions(text: str, name: str) -> bool:
    return re.search(rf"\b{re.escape(name)}\b", text) is not None


def _prologue(plan: GemmPlan) -> list[str]:
    """Per output: its scalars zeroed, then, inside the matrix, the prologue with the
    scalars as register-array slots, and the accumulated output elements loaded."""
    tile, names = plan.tile, plan.names
    source = tile.kernel.source
    one = "    "
    slot = f"[{names['r']}][{names['c']}]"
    lines = [f"@{names['local:' + name]}{slot} = {{}};" for _, name in plan.locals.values()]
    lines += [f"@{acc.registers}{slot} = {{}};" for acc in plan.accumulators]
    lines.append(f"@if ({names['active']}) {{")
    for statement in tile.prologue:
        if statement.start_byte in plan.locals:
            _, name = plan.locals[statement.start_byte]
            value = kn.initializer(statement)
            if value is not None:
                text = _renamed(value, plan, {})
                lines.append(f"@{one}{names['local:' + name]}{slot} = {text};")
            continue
        lines.append(f"@{one}" + _renamed(statement, plan, {}))
    if plan.accumulators:
        lines.append(f"@{one}if ({names['trips']} > 0) {{")
        lines += [f"@{one * 2}{a.registers}{slot} = {a.text};" for a in plan.accumulators]
        lines.append(f"@{one}}}")
    lines.append("@}")
    del source
    return lines


def _epilogue(plan: GemmPlan) -> list[str]:
    tile, names = plan.tile, plan.names
    one = "    "
    slot = f"[{names['r']}][{names['c']}]"
    lines = [f"@if ({names['active']}) {{"]
    if plan.accumulators:
        lines.append(f"@{one}if ({names['trips']} > 0) {{")
        lines += [f"@{one * 2}{a.text} = {a.registers}{slot};" for a in plan.accumulators]
        lines.append(f"@{one}}}")
    lines += [f"@{one}" + _renamed(s, plan, {}) for s in tile.epilogue]
    lines.append("@}")
    return lines


def _renamed(node: Node, plan: GemmPlan, extra: dict[tuple[int, int, str], str]) -> str:
    """The node's text with prologue scalars as this output's register slots and the
    nodes in `extra` (by id) replaced."""
    tile, names = plan.tile, plan.names
    kernel = tile.kernel
    source = kernel.source
    slot = f"[{names['r']}][{names['c']}]"
    edits = []
    replaced: list[tuple[int, int]] = []
    for sub in cs.walk(node):
        if _key(sub) in extra:
            replaced.append((sub.start_byte, sub.end_byte))
            edits.append(
                Edit(
                    sub.start_byte - node.start_byte,
                    sub.end_byte - node.start_byte,
                    extra[_key(sub)],
                    "gemm slot",
                )
            )
    for ident in cs.identifiers_in(node):
        if any(a <= ident.start_byte < b for a, b in replaced):
            continue
        declared = cs.visible(kernel.tree, source, cs.text(ident, source), ident.start_byte)
        if declared is None or declared.start not in plan.locals:
            continue
        _, name = plan.locals[declared.start]
        edits.append(
            Edit(
                ident.start_byte - node.start_byte,
                ident.end_byte - node.start_byte,
                f"{names['local:' + name]}{slot}",
                "per-output scalar",
            )
        )
    text = apply_edits(source[node.start_byte : node.end_byte], edits).decode(
        "utf-8", errors="surrogateescape"
    )
    return " ".join(line.strip() for line in text.splitlines())


def _k_stages(plan: GemmPlan, indent: str) -> list[str]:
    """The walk over k, BK at a time. Each stage's slices are fetched into registers one
    stage ahead: the global loads of stage s + 1 are in flight while the block computes on
    stage s from shared memory, and they are stored there after the barrier that ends it."""
    names, shape = plan.names, plan.shape
    one = "    "
    inner = indent + one
    tk, count, fetch_k = names["tile_k"], names["count"], names["fetch_k"]
    loads = {o.tile: _load(o, plan) for o in plan.tile.operands}
    lines = [
        f"{indent}{o.elem_type} {names['staged:' + o.tile]}[{_per_thread(o, plan)}][{shape.width}];"
        for o in plan.tile.operands
    ]
    first, ahead = "0", str(shape.step_k)
    if plan.split:  # the blocks of one tile take its stages in turns (gridDim.z of them)
        first = f"(long long)blockIdx.z * {shape.step_k}"
        ahead = f"{shape.step_k}LL * gridDim.z"
    lines.append(f"{indent}long long {fetch_k} = {first};")
    for fetch, _ in loads.values():
        lines += [indent + line for line in fetch]
    lines.append(
        f"{indent}for (long long {tk} = 0; {tk} < {names['trips']}; {tk} += {shape.step_k}) {{"
    )
    if plan.split:
        # every block walks every stage and runs its own: the loop reads as the whole k
        lines.append(f"{inner}if (({tk} / {shape.step_k}) % gridDim.z != blockIdx.z) continue;")
    for _, store in loads.values():
        lines += [inner + line for line in store]
    lines += [
        f"{inner}__syncthreads();",
        f"{inner}{fetch_k} = {tk} + {ahead};",
        f"{inner}if ({fetch_k} < {names['trips']}) {{",
    ]
    for fetch, _ in loads.values():
        lines += [inner + one + line for line in fetch]
    lines += [
        f"{inner}}}",
        f"{inner}const int {count} = (int)({names['trips']} - {tk} < {shape.step_k} ? "
        f"{names['trips']} - {tk} : {shape.step_k});",
        f"{inner}if ({count} == {shape.step_k}) {{",
        f"{inner}{one}#pragma unroll",
        *_k_loop(plan, str(shape.step_k), inner + one),
        f"{inner}}} else {{",
        *_k_loop(plan, count, inner + one),
        f"{inner}}}",
        f"{inner}__syncthreads();",
        f"{indent}}}",
    ]
    return lines


def _k_value(plan: GemmPlan, iteration: str) -> str:
    k = plan.tile.kloop
    step = f" * {k.step}" if k.step != 1 else ""
    return f"{k.var_type} {k.var} = ({k.var_type})(({k.first}) + {iteration}{step});"


def _per_thread(operand: st.Operand, plan: GemmPlan) -> int:
    """The groups of V elements of one operand's slice each thread loads per stage."""
    shape = plan.shape
    extent = shape.block_m if operand.role == "rows" else shape.block_n
    return shape.step_k * extent // shape.width // (THREADS[0] * THREADS[1])


def _load(operand: st.Operand, plan: GemmPlan) -> tuple[list[str], list[str]]:
    """The block's load of one operand's slice of the stage from `fetch_k` on, in two
    parts (lines at relative indent): the fetch, groups of V elements along its
    unit-stride index into the thread's staging registers, one vector load each where it
    can, else V scalar loads (zeros outside the iteration space); and the store of those
    registers into the shared tile."""
    tile, shape, names = plan.tile, plan.shape, plan.names
    kernel = tile.kernel
    level = kernel.rows if operand.role == "rows" else kernel.cols
    assert level is not None
    start = names["tile_i"] if operand.role == "rows" else names["tile_j"]
    extent = shape.block_m if operand.role == "rows" else shape.block_n
    width = shape.width
    along = shape.step_k if operand.k_contiguous else extent
    staged = names[f"staged:{operand.tile}"]
    one = "    "
    q, group, outer, inner_ = names["q"], names["group"], names["outer"], names["inner"]
    head = [
        "#pragma unroll",
        f"for (int {q} = 0; {q} < {_per_thread(operand, plan)}; {q}++) {{",
        f"{one}const int {group} = {names['tid']} + {q} * {THREADS[0] * THREADS[1]};",
        f"{one}const int {outer} = {group} / {along // width};",
        f"{one}const int {inner_} = ({group} % {along // width}) * {width};",
    ]
    tkv = names["t_k"]

    def counters(element: str) -> tuple[str, str]:
        plus = f" + {element}" if element else ""
        if operand.k_contiguous:
            return f"{start} + {outer}", f"{names['fetch_k']} + {inner_}{plus}"
        return f"{start} + {inner_}{plus}", f"{names['fetch_k']} + {outer}"

    def slot(element: str) -> str:
        plus = f" + {element}" if element else ""
        if operand.k_contiguous:
            return f"{operand.tile}[{inner_}{plus}][{outer}]"
        return f"{operand.tile}[{outer}][{inner_}{plus}]"

    source = kernel.source
    declaration = kn.moved(level.declaration, source, "")
    loaded = names["loaded"]

    def live(element: str) -> str:
        """Under a guard, that the element's row (column) of the tile holds a kept output."""
        if plan.guard is None:
            return ""
        plus = f" + {element}" if element else ""
        at = outer if operand.k_contiguous else f"{inner_}{plus}"
        return f" && {names['live:' + operand.role]}[{at}]"

    body = one
    fetch = list(head)
    if plan.vectorized[operand.tile]:
        mapped, k_at = counters("")
        last_m, last_k = (
            (mapped, f"{k_at} + {width - 1}")
            if operand.k_contiguous
            else (f"{mapped} + {width - 1}", k_at)
        )
        address, packed = names["address"], names["packed"]
        vector_rows = 1 if operand.k_contiguous else width  # mapped rows (columns) it spans
        fetch += [
            f"{body}bool {loaded} = false;",
            f"{body}{{",
            f"{body}{one}const long long {level.counter} = {mapped};",
            f"{body}{one}const long long {tkv} = {k_at};",
            f"{body}{one}if ({last_m} < {level.trips} && {last_k} < {names['trips']}"
            f"{''.join(live(str(e) if e else '') for e in range(vector_rows))}) {{",
            f"{body}{one * 2}{declaration}",
            f"{body}{one * 2}{_k_value(plan, tkv)}",
            f"{body}{one * 2}const {operand.elem_type} *{address} = &({operand.text});",
            f"{body}{one * 2}if (((unsigned long long){address} & 15ull) == 0) {{",
            f"{body}{one * 3}const {shape.vector} {packed} = "
            f"*reinterpret_cast<const {shape.vector} *>({address});",
        ]
        fetch += [
            f"{body}{one * 3}{staged}[{q}][{e}] = {packed}.{_LANES[e]};" for e in range(width)
        ]
        fetch += [
            f"{body}{one * 3}{loaded} = true;",
            f"{body}{one * 2}}}",
            f"{body}{one}}}",
            f"{body}}}",
            f"{body}if (__builtin_expect(!{loaded}, 0)) {{",
        ]
    else:
        fetch.append(f"{body}{{")
    scalar = body + one
    for e in range(width):
        element = str(e) if e else ""
        mapped, k_at = counters(element)
        fetch += [
            f"{scalar}{{",
            f"{scalar}{one}const long long {level.counter} = {mapped};",
            f"{scalar}{one}const long long {tkv} = {k_at};",
            f"{scalar}{one}if ({level.counter} < {level.trips} && {tkv} < {names['trips']}"
            f"{live(element)}) {{",
            f"{scalar}{one * 2}{declaration}",
            f"{scalar}{one * 2}{_k_value(plan, tkv)}",
            f"{scalar}{one * 2}{staged}[{q}][{e}] = {operand.text};",
            f"{scalar}{one}}} else {{",
            f"{scalar}{one * 2}{staged}[{q}][{e}] = {{}};",
            f"{scalar}{one}}}",
            f"{scalar}}}",
        ]
    fetch += [f"{body}}}", "}"]
    store = list(head)
    store += [f"{body}{slot(str(e) if e else '')} = {staged}[{q}][{e}];" for e in range(width)]
    store.append("}")
    return fetch, store


def _k_loop(plan: GemmPlan, count: str, indent: str) -> list[str]:
    """One k iteration of the stage per trip: the fragments read from shared memory as
    vectors, then the k body for every output of the micro-tile, each in k order."""
    tile, shape, names = plan.tile, plan.shape, plan.names
    kk, tk = names["kk"], names["tile_k"]
    one = "    "
    body = indent + one
    lines = [f"{indent}for (int {kk} = 0; {kk} < {count}; {kk}++) {{"]
    for operand in tile.operands:
        micro = shape.micro_m if operand.role == "rows" else shape.micro_n
        extent = shape.block_m if operand.role == "rows" else shape.block_n
        thread = "threadIdx.y" if operand.role == "rows" else "threadIdx.x"
        frag, half = names[f"frag:{operand.tile}"], names["half"]
        chunks = micro // shape.width
        lines += [
            f"{body}{operand.elem_type} {frag}[{micro}];",
            f"{body}#pragma unroll",
            f"{body}for (int {half} = 0; {half} < {chunks}; {half}++) {{",
            f"{body}{one}const {shape.vector} {names['packed']} = "
            f"*reinterpret_cast<const {shape.vector} *>(&{operand.tile}[{kk}]"
            f"[{half} * {extent // chunks} + {thread} * {shape.width}]);",
        ]
        lines += [
            f"{body}{one}{frag}[{half} * {shape.width} + {e}] = {names['packed']}.{_LANES[e]};"
            for e in range(shape.width)
        ]
        lines.append(f"{body}}}")
    statements = [_k_statement(s, plan) for s in _k_statements(tile)]
    text = "\n".join(statements)
    if _mentions(text, tile.kloop.var):
        lines.append(f"{body}{_k_value(plan, f'({tk} + {kk})')}")
    lines += _per_output(plan, body, [f"@{s}" for s in statements])
    lines.append(f"{indent}}}")
    return lines


def _k_statement(statement: Node, plan: GemmPlan) -> str:
    names = plan.names
    r, c = names["r"], names["c"]
    extra: dict[tuple[int, int, str], str] = {}
    for operand in plan.tile.operands:
        index = r if operand.role == "rows" else c
        for node in operand.nodes:
            extra[_key(node)] = f"{names['frag:' + operand.tile]}[{index}]"
    for acc in plan.accumulators:
        for node in acc.nodes:
            extra[_key(node)] = f"{acc.registers}[{r}][{c}]"
    return _renamed(statement, plan, extra)
