"""`segmented`: one warp per iteration of a kernel's loop, its lanes sharing the inner loops.

offload gives each iteration of a parallel loop its own thread, and the thread runs the
inner loops alone: a sum over each row or segment, a row's maximum, an argmax per query.
With one row per thread, the threads of a warp read 32 different rows, and a short grid
leaves most of the GPU idle. Hand-written CUDA runs such segmented reductions with one
warp per row; so does this rule. It rewrites offload's 1-D kernels:

- the grid-stride loop counts warps, not threads: iteration `t` runs on warp `t` (every
  lane of it), and the launch gives each block of 256 threads 8 iterations;
- each inner loop that the analysis calls a reduction (sum, product, min, max, argmin,
  argmax, bitwise) or parallel is shared by the warp's lanes, lane `l` taking iterations
  `l, l + 32, ...`: each lane runs the body unchanged on its own copy of every reduction
  variable, started at the operator's identity (declared in a block of its own, so the
  body needs no renaming); warp shuffles then combine the copies in every lane, lane 0's
  result is given to all, and the variable's value before the loop is combined with it,
  as the reduction method does for a whole loop (argmin and argmax keep the iteration of
  their choice and pick by (value, iteration), the loop's tie rule);
- an inner scan in the accumulator form (`acc += term; out[k] = f(acc);`, or the store
  first for an exclusive scan; +, *, &, |, ^; pure local declarations before) runs 32
  iterations at a time: each lane evaluates its term (the identity past the bound), a warp
  scan gives every lane its inclusive prefix, the lane stores what its iteration would have
  stored (the running value before the tile combined with its prefix, or with the previous
  lane's for the exclusive form), and the tile's total carries on to the next tile;
- statements between the inner loops run in every lane when they write only the thread's
  own variables (every lane computes the same values: all of them hold the same
  combined results); a statement that writes memory runs in lane 0;
- `__syncwarp()` after each shared loop and each lane-0 statement makes their writes
  visible to the other lanes before anything reads them.

schedule's 1-D kernels name no analysed loop: there an inner loop is shared only when its
body is accumulations read from the text, `acc = acc + term;` (`-`, `*`, the compound
forms), each into a scalar of the kernel or an element whose subscripts the loop leaves
alone (`tmp[i]`, as PolyBench's matrix-vector products keep their sums), and the resets isl
fuses into such a loop (`if (j == 0) y[i] = 0.0;` before y's accumulation: run before the
loop, where it runs at all): each lane runs them on registers of its own from the
identity, and lane 0 combines the warp's results into the elements. No term may read an
accumulator, call anything but math functions, or read an array whose address moves with
the loop other than one element a step in its last subscript. Where a loop reads down
columns instead (the lanes would read rows apart), the rows layout shares it: blocks of
32 x 32 threads, 32 side-by-side iterations per block, the block's 32 rows taking the
loop's iterations in turn and meeting in shared memory.

Preconditions: a 1-D kernel of offload's shape whose comment names its source loop (the
analysis facts of its inner loops are matched to the kernel's `for` statements in
order), or, without one, the accumulations above; every statement of the body is one of
the kinds above; each shared loop counts up by a constant step from a declared variable
and cannot exit early. Float sums combine in another order (within the comparison
tolerance, as the reduction method's)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from tree_sitter import Node, Tree

from cudaify.core import Problem, Variant
from cudaify.frontend.edits import Edit, apply_edits
from cudaify.frontend.facts import Function, Loop, Program, Reduction, Span
from cudaify.transforms import csource as cs
from cudaify.transforms import kernel_nest as kn
from cudaify.transforms import pattern_support as ps
from cudaify.transforms.base import Context, Method, Outcome
from cudaify.transforms.kernel_codegen import IDENT, MATH_FUNCTIONS, QUALIFIERS
from cudaify.transforms.offload import MOST_BLOCKS
from cudaify.transforms.prelude import runtime_text
from cudaify.transforms.reduction import ArgGroup, Reduced, marked_body

WARP = 32
THREADS = 256  # threads per block: THREADS / WARP iterations of the kernel's loop each
# the rows layout: a block of WARP iterations (x) by ROWS rows (y) that share their loops
ROWS = 32

WARP_MARKER = "/* ---- cudaify warp helpers ---- */"
WARP_HELPERS = runtime_text("warp_helpers.cuh")

_COMMENT = re.compile(
    r"/\* Loop nest '(\w+)' of (\w+)\(\) \(line (\d+)\): one thread per iteration\."
)
_CASTS = frozenset({"static_cast", "const_cast", "reinterpret_cast"})
_PURE_CALLS = MATH_FUNCTIONS | _CASTS


@dataclass(frozen=True)
class Shared:
    """An inner loop the warp's lanes share: its `for` node, facts, and what it combines."""

    node: Node
    loop: Loop
    var_type: str
    first: str  # the lower bound's text
    bound: str  # the condition's right side
    inclusive: bool
    reduced: tuple[Reduced, ...]
    groups: tuple[ArgGroup, ...]
    scan: ScanForm | None = None
    # a reduction or parallel loop's body as the lanes run it (each payload's assignment
    # followed by the record of its iteration, `counter`), and its indentation
    counter: str = ""
    body: str = ""
    body_indent: str = ""
    # accumulators in memory (`tmp[i]`, a scheduled kernel's), one per `reduced` ("" for a
    # scalar): the lanes run the body on registers of their own, and lane 0 combines their
    # result into it
    elements: tuple[str, ...] = ()
    # first-run resets taken out of the loop (`y[i] = 0.0`, their targets): run before it
    # where it runs at all
    resets: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class ScanForm:
    """A scan loop's body: pure local declarations, then `acc OP= term;` and a store of a
    value of `acc`, `target = f(acc);` (inclusive: the update first; exclusive: the store
    first)."""

    acc: str
    acc_type: str
    functor: str
    op: str
    declarations: tuple[Node, ...]
    term: Node
    store: Node  # the store's expression statement
    inclusive: bool


@dataclass(frozen=True)
class KernelPlan:
    kernel: kn.Kernel
    function: str
    line: int
    lane: str
    shared: tuple[Shared, ...]
    lane_zero: tuple[Node, ...]  # statements that write memory: lane 0 runs them
    taken: frozenset[str]
    launches: tuple[Edit, ...]  # every launch resized: a warp per iteration
    # `lanes`: a warp per iteration; `rows`: 32 side-by-side iterations per block, whose
    # 32 rows (threadIdx.y) share the inner loops (a loop that reads down columns)
    layout: str = "lanes"
    base: str = ""  # rows: the first iteration of the block's turn
    inside: str = ""  # rows: whether the thread's iteration is one of the loop's


class Segmented(Method):
    name = "segmented"
    summary = (
        "one warp per iteration of a kernel's loop: its lanes share inner reductions and scans"
    )
    category = "mapping"
    follows = ("offload", "schedule", "data_residency")
    instruction = (
        "In the 1-D kernel, give each iteration of the grid-stride loop a whole warp: the "
        "loop counts warps ((blockIdx.x * blockDim.x + threadIdx.x) / 32, stepping by "
        "blockDim.x * gridDim.x / 32) and the launch has 8 iterations per 256-thread block. "
        "Each inner loop that reduces (sum, min, max, argmax) or is parallel is shared by the "
        "lanes: lane l runs iterations l, l + 32, ... on its own copy of each reduction "
        "variable started at the operator's identity, then __shfl_xor_sync combines the "
        "copies in every lane and the value before the loop is combined with the result "
        "(for argmax keep the iteration, first of equal values for >). Statements that write "
        "memory outside the inner loops run in lane 0; put __syncwarp() after them and after "
        "each shared loop."
    )

    def applies(self, variant: Variant, ctx: Context) -> str | None:
        plans, reasons = plan_kernels(variant.code, ctx.program)
        return None if plans else _first(reasons)

    def apply_rule(self, variant: Variant, ctx: Context) -> Outcome:
        plans, reasons = plan_kernels(variant.code, ctx.program)
        if not plans:
            return Outcome(None, _first(reasons))
        code = _emit(variant.code, plans)
        detail = "; ".join(_describe(plan) for plan in plans)
        functions = tuple(dict.fromkeys(plan.function for plan in plans))
        return Outcome(variant.then(self.name, code, "rule", detail=detail, offloaded=functions))

    def check(self, before: Variant, after: Variant, ctx: Context) -> list[Problem]:
        """segmented_problems, in a kernel this step made or changed."""
        from cudaify.transforms import postcondition as pc

        common = pc.common_problems(self.name, before.code, after.code)
        if common:
            return common
        problems = segmented_problems(after.code)
        old, new = pc.parsed(before.code), pc.parsed(after.code)
        if not problems and not any(
            _warp_stride_loop(kernel, new.data) is not None
            for kernel in pc.changed_kernels(old, new).values()
        ):
            problems.append(
                Problem("segmented", "no kernel of this step gives each iteration a warp")
            )
        return problems


def _first(reasons: list[str]) -> str:
    return reasons[0] if reasons else "no 1-D kernel of offload's shape"


def _describe(plan: KernelPlan) -> str:
    parts = []
    for shared in plan.shared:
        combined = _combined_names(shared)
        what = f" combining {', '.join(combined)}" if combined else ""
        if shared.scan is not None:
            form = "inclusive" if shared.scan.inclusive else "exclusive"
            what = f" scanning {shared.scan.acc} ({shared.scan.op}, {form})"
        parts.append(f"'{shared.loop.var}'{_line(shared.loop.line)}{what}")
    if plan.layout == "rows":
        return (
            f"{plan.kernel.name}: {WARP} side-by-side '{plan.kernel.cols.var}' per block of "
            f"{plan.function}(){_line(plan.line)}, its {ROWS} rows sharing loop {', '.join(parts)}"
        )
    return (
        f"{plan.kernel.name}: one warp per '{plan.kernel.cols.var}' of {plan.function}()"
        f"{_line(plan.line)}, its lanes sharing loop {', '.join(parts)}"
    )


def _combined_names(shared: Shared) -> list[str]:
    """What a shared loop's lanes combine: `acc (+)`, `tmp[i] (+)`, `best (argmax)`."""
    elements = shared.elements or ("",) * len(shared.reduced)
    names = [f"{e or r.var} ({r.op})" for r, e in zip(shared.reduced, elements, strict=True)]
    names += [f"{g.key.var} (arg{g.key.op})" for g in shared.groups if g.key is not None]
    return names


# ---- the postcondition ----------------------------------------------------------------


def segmented_problems(code: str) -> list[Problem]:
    """A launched kernel whose grid-stride loop counts warps and, inside it, a loop whose
    lanes combine their values with the warp helpers (or share the iterations)."""
    source = code.encode("utf-8", errors="surrogateescape")
    tree = cs.parse(source)
    warped = set()
    for definition in kn.kernels(tree, source):
        name = cs.function_name(definition, source)
        if name is not None and _warp_stride_loop(definition, source) is not None:
            warped.add(name)
    launched = {
        cs.call_name(n.parent, source)
        for n in cs.walk(tree.root_node)
        if n.type == "kernel_call_syntax" and n.parent is not None
    }
    if not warped & launched:
        return [
            Problem(
                "segmented",
                "no launched kernel whose grid-stride loop gives each iteration a warp and "
                "whose inner loops its lanes share",
            )
        ]
    return []


def _warp_stride_loop(definition: Node, source: bytes) -> Node | None:
    """The kernel's outer loop when it counts warps (`.../ 32`, stepping by a 32nd of the
    grid) and holds a loop that strides by 32 lanes, or when it takes turns of 32
    iterations per block (the rows layout) and holds a loop that strides by 32 rows and a
    barrier where the rows meet, else None."""
    body = definition.child_by_field_name("body")
    if body is None:
        return None
    for loop in kn.statements_of(body):
        if loop.type != "for_statement":
            continue
        init, update = loop.child_by_field_name("initializer"), loop.child_by_field_name("update")
        if init is None or update is None:
            continue
        head = kn.compact(cs.text(init, source))
        step = kn.compact(cs.text(update, source))
        warps = re.search(
            r"\(blockIdx\.x\*\(longlong\)blockDim\.x\+threadIdx\.x\)/32", head
        ) and re.search(r"\+=\(longlong\)blockDim\.x\*gridDim\.x/32$", step)
        turns = re.search(r"=\(longlong\)blockIdx\.x\*32;", head) and re.search(
            r"\+=\(longlong\)32\*gridDim\.x$", step
        )
        if not warps and not (
            turns
            and any(
                n.type == "call_expression" and cs.call_name(n, source) == "__syncthreads"
                for n in cs.walk(loop)
            )
        ):
            continue
        for inner in cs.walk(loop):
            if inner is loop or inner.type != "for_statement":
                continue
            inner_update = inner.child_by_field_name("update")
            if inner_update is not None and re.fullmatch(
                r"\w+\+=32", kn.compact(cs.text(inner_update, source))
            ):
                return loop
    return None


# ---- planning ---------------------------------------------------------------------------


def _named_loop(definition: Node, source: bytes) -> re.Match[str] | None:
    """offload's comment above a kernel, naming its source loop (var, function, line)."""
    comment = definition.prev_named_sibling
    if comment is None or comment.type != "comment":
        return None
    return _COMMENT.match(cs.text(comment, source))


def plan_kernels(code: str, program: Program) -> tuple[list[KernelPlan], list[str]]:
    source = code.encode("utf-8", errors="surrogateescape")
    tree = cs.parse(source)
    taken = kn.taken_names(tree, source)
    plans: list[KernelPlan] = []
    reasons: list[str] = []
    for definition in kn.kernels(tree, source):
        name = cs.function_name(definition, source) or "?"
        try:
            # kernel-local names: each kernel may use the same ones
            plans.append(_plan(definition, tree, source, program, set(taken)))
        except (kn.Refuse, ps.Refuse) as refusal:
            found = _named_loop(definition, source)
            where = f"{program.path}:{found.group(3)}: " if found is not None else ""
            reasons.append(f"{where}segmented: kernel '{name}': {refusal}")
    return plans, reasons


def _plan(
    definition: Node, tree: Tree, source: bytes, program: Program, taken: set[str]
) -> KernelPlan:
    kernel = kn.read_kernel(definition, tree, source)
    if kernel.rows is not None:
        raise kn.Refuse("it maps two loops (a warp per iteration needs a 1-D kernel)")
    if _named_loop(definition, source) is None:
        # no analysed loop behind it (schedule's kernels): its inner loops are read from
        # their text, and only plain accumulations are shared, by a warp's lanes where
        # they read along rows, by a block's rows where they read down columns
        try:
            return _planned(kernel, tree, source, set(taken), "lanes")
        except _Strided as strided:
            try:
                return _planned(kernel, tree, source, set(taken), "rows")
            except kn.Refuse as refusal:
                raise kn.Refuse(f"{strided}; a block's rows: {refusal}") from None
    found, root = _source_loop(definition, source, program, kernel)
    fors = _loops_in(kernel.cols.statements)
    facts = list(root.walk()[1:])
    if [_loop_var(n, source) for n in fors] != [loop.var for loop in facts]:
        raise kn.Refuse(
            f"its inner loops are not those of the loop at line {root.line} of {found.name}()"
        )
    fact_of = {n.start_byte: loop for n, loop in zip(fors, facts, strict=True)}

    def share(node: Node) -> Shared:
        return _shared(node, fact_of[node.start_byte], kernel, taken)

    return _planned(kernel, tree, source, taken, "lanes", share, found.name, root.line)


def _planned(
    kernel: kn.Kernel,
    tree: Tree,
    source: bytes,
    taken: set[str],
    layout: str,
    share: Callable[[Node], Shared] | None = None,
    function: str = "",
    line: int = 0,
) -> KernelPlan:
    """The plan of `kernel` in `layout`: its inner loops shared by `share` (the analysed
    loops'), else read as accumulations; the other statements run by every lane or by
    lane 0."""
    if share is None:
        function = _launching_function(kernel, tree, source)

        def share(node: Node) -> Shared:
            return _accumulation(node, kernel, taken, layout)

    shared: list[Shared] = []
    lane_zero: list[Node] = []
    for statement in kernel.cols.statements:
        if statement.type == "for_statement":
            shared.append(share(statement))
        elif _writes_memory(statement, source):
            _require_lane_zero(statement, source)
            lane_zero.append(statement)
        else:
            _require_uniform(statement, source)
            if layout == "rows" and _reads_memory(statement):
                # every row runs it, and a thread past the last iteration too
                raise kn.Refuse(f"{_quoted(statement, source)} reads memory in every thread")
    if not shared:
        raise kn.Refuse("its loop body has no inner loop for the lanes to share")
    launches = _launch_edits(kernel, tree, source, layout)
    return KernelPlan(
        kernel=kernel,
        function=function,
        line=line,
        lane=kn.fresh("cudaify_lane" if layout == "lanes" else "cudaify_row", taken),
        layout=layout,
        base=kn.fresh("cudaify_base", taken) if layout == "rows" else "",
        inside=kn.fresh("cudaify_in", taken) if layout == "rows" else "",
        shared=tuple(shared),
        lane_zero=tuple(lane_zero),
        taken=frozenset(taken),
        launches=tuple(launches),
    )


def _source_loop(
    definition: Node, source: bytes, program: Program, kernel: kn.Kernel
) -> tuple[Function, Loop]:
    """The analysed loop the kernel runs, named by offload's comment above it."""
    found = _named_loop(definition, source)
    if found is None:
        raise kn.Refuse("no comment names the loop nest it runs (offload's kernels have one)")
    var, name, line = found.group(1), found.group(2), int(found.group(3))
    function = next((f for f in program.functions if f.name == name), None)
    loops = [loop for outer in function.loops for loop in outer.walk()] if function else []
    root = next((loop for loop in loops if loop.line == line and loop.var == var), None)
    if function is None or root is None or var != kernel.cols.var:
        raise kn.Refuse(f"the loop '{var}' at line {line} of {name}() is not in the analysis")
    return function, root


def _launching_function(kernel: kn.Kernel, tree: Tree, source: bytes) -> str:
    """The host function that launches the kernel (the first launch's)."""
    for launch in kn.launches(tree, source, kernel.name):
        function = cs.enclosing_function(launch.call)
        name = cs.function_name(function, source) if function is not None else None
        if name:
            return name
    raise kn.Refuse(f"kernel '{kernel.name}' is never launched")


# the operators of an accumulation `acc = acc OP term` / `acc OP= term`, and how the lanes'
# results combine: each lane starts at the identity, so `acc - t1 - t2` leaves -(t1 + t2)
_ACCUMULATING = {"+": "+", "-": "+", "*": "*"}


class _Strided(kn.Refuse):
    """The lanes would read rows apart: the block's rows may share the loop instead."""


@dataclass(frozen=True)
class _Accumulated:
    """One accumulation of a loop body read from its text: `target OP= term`."""

    statement: Node
    target: Node
    text: str  # the target's text, spaces removed: `tmp[i]`
    base: str  # the scalar or the array it stores into
    op: str  # + - *
    term: Node
    uses: tuple[Node, ...]  # the target and its own reading on the right


def _accumulation(node: Node, kernel: kn.Kernel, taken: set[str], layout: str) -> Shared:
    """An inner loop no analysis describes (a scheduled kernel's), shared when its body is
    accumulations, `acc = acc + term;` (or `-`, `*`, the compound forms, `term + acc`),
    each into its own scalar of the kernel or element whose subscripts the loop never
    changes (`tmp[i]`), no term reading an accumulator; and, as isl writes a reset fused
    into the loop, `if (v == first) acc = value;` before that accumulator's own
    statement (it runs once, where the loop runs at all: it is run before the loop,
    under that test). Anything else is refused."""
    source = kernel.source
    var = _loop_var(node, source)
    where = f"loop '{var}'"
    body = node.child_by_field_name("body")
    init = node.child_by_field_name("initializer")
    first_value = kn.initializer(init) if init is not None else None
    first = kn.compact(cs.text(first_value, source)) if first_value is not None else "?"
    found: list[_Accumulated] = []
    resets: list[tuple[Node, str]] = []  # (the assignment, its target's text)
    for statement in kn.statements_of(body) if body is not None else []:
        if statement.type == "if_statement":
            reset = _first_reset(statement, var, first, source)
            if reset is None:
                raise kn.Refuse(f"{where}: {_quoted(statement, source)} is not a first-run reset")
            resets.append(reset)
            continue
        item = _accumulated(statement, var, kernel, where)
        if any(item.text == other.text for other in found):
            raise kn.Refuse(f"{where}: `{item.text}` accumulates twice")
        found.append(item)
    if not found:
        raise kn.Refuse(f"{where}: its body is not one accumulation `acc = acc + term;`")
    bases = {item.base for item in found}
    for assignment, target in resets:
        later = [item for item in found if item.text == target]
        value = assignment.child_by_field_name("right")
        if (
            not later
            or later[0].statement.start_byte < assignment.start_byte
            or [r for _, r in resets].count(target) > 1
            or value is None
            or not _pure(value, source)
            or bases & _names(value, source)
        ):
            raise kn.Refuse(f"{where}: the reset of `{target}` is not before its accumulation")
    for item in found:
        read = bases & _names(item.term, source)
        if read:
            raise kn.Refuse(
                f"{where}: the term reads '{sorted(read)[0]}', which the loop accumulates into"
            )
        _require_side_by_side(item.term, var, kernel, layout, where)
    reduced = tuple(_register(item, kernel, taken, where) for item in found)
    indent = kn.line_indent(source, found[0].statement.start_byte)
    lines = [_in_register(item, r.var, source) for item, r in zip(found, reduced, strict=True)]
    loop = _header_loop(node, var, source)
    return replace(
        _shared(node, loop, kernel, taken, reduced=reduced),
        body=f"\n{indent}".join(lines),
        body_indent=indent,
        elements=tuple(item.text if item.target.type != "identifier" else "" for item in found),
        resets=tuple((cs.text(assignment, source), target) for assignment, target in resets),
    )


def _in_register(item: _Accumulated, register: str, source: bytes) -> str:
    """The accumulation's text, an element's uses replaced by the lane's register."""
    start, end = item.statement.start_byte, item.statement.end_byte
    if item.target.type == "identifier":
        return source[start:end].decode("utf-8", errors="surrogateescape")
    edits = [
        Edit(n.start_byte - start, n.end_byte - start, register, "the lane's register")
        for n in item.uses
    ]
    return apply_edits(source[start:end], edits).decode("utf-8", errors="surrogateescape")


def _names(node: Node, source: bytes) -> set[str]:
    return {cs.text(n, source) for n in cs.identifiers_in(node)}


def _first_reset(statement: Node, var: str, first: str, source: bytes) -> tuple[Node, str] | None:
    """`if (v == first) target = value;` (braces allowed, no else): the assignment and its
    target's text, else None."""
    condition = statement.child_by_field_name("condition")
    consequence = statement.child_by_field_name("consequence")
    if condition is None or consequence is None or statement.child_by_field_name("alternative"):
        return None
    test = _unparenthesized(
        condition.named_children[-1] if condition.type == "condition_clause" else condition
    )
    if test.type != "binary_expression":
        return None
    operator = test.child_by_field_name("operator")
    sides = {
        kn.compact(cs.text(n, source))
        for n in (test.child_by_field_name("left"), test.child_by_field_name("right"))
        if n is not None
    }
    if operator is None or cs.text(operator, source) != "==" or sides != {var, first}:
        return None
    inner = kn.statements_of(consequence)
    if len(inner) != 1 or inner[0].type != "expression_statement":
        return None
    target, assigned, _ = _assignment_parts(inner[0], source)
    if target is None or assigned != "=":
        return None
    expression = inner[0].named_children[0]
    return expression, kn.compact(cs.text(_unparenthesized(target), source))


def _accumulated(statement: Node, var: str, kernel: kn.Kernel, where: str) -> _Accumulated:
    """`statement` read as an accumulation, or Refuse."""
    source = kernel.source
    if statement.type != "expression_statement":
        raise kn.Refuse(f"{where}: its body is not one accumulation `acc = acc + term;`")
    target, operator, right = _assignment_parts(statement, source)
    if target is None or right is None:
        raise kn.Refuse(f"{where}: its body is not one accumulation `acc = acc + term;`")
    target = _unparenthesized(target)
    accumulator = kn.compact(cs.text(target, source))
    uses = [target]
    if operator == "=":
        right = _unparenthesized(right)
        sign = right.child_by_field_name("operator")
        op = cs.text(sign, source) if sign is not None else ""
        sides = [right.child_by_field_name("left"), right.child_by_field_name("right")]
        if right.type != "binary_expression" or op not in _ACCUMULATING or None in sides:
            raise kn.Refuse(f"{where}: `{accumulator} = ...` is not `{accumulator} + term`")
        own = [n for n in sides if n is not None and kn.compact(cs.text(n, source)) == accumulator]
        if not own or (op == "-" and own[0] is not sides[0]):
            raise kn.Refuse(f"{where}: `{accumulator} = ...` is not `{accumulator} {op} term`")
        uses.append(own[0])
        term = sides[1] if own[0] is sides[0] else sides[0]
    elif operator[:-1] in _ACCUMULATING and operator.endswith("="):
        op, term = operator[:-1], right
    else:
        raise kn.Refuse(f"{where}: `{operator}` does not accumulate")
    assert term is not None
    base = _accumulator_base(target, var, kernel, where)
    if not _pure(term, source):
        raise kn.Refuse(f"{where}: the term writes memory or calls a function with effects")
    return _Accumulated(statement, target, accumulator, base, op, term, tuple(uses))


def _require_side_by_side(term: Node, var: str, kernel: kn.Kernel, layout: str, where: str) -> None:
    """The lanes (consecutive values of the loop's variable) or the rows' side-by-side
    iterations (consecutive values of the kernel's) read neighbouring elements."""
    source = kernel.source
    if layout == "lanes" and (strided := _strided_read(term, var, source=source)) is not None:
        raise _Strided(f"{where}: the lanes would read `{strided}` rows apart, not side by side")
    if layout == "rows" and (
        strided := _strided_read(term, kernel.cols.var, kernel.cols.counter, source=source)
    ):
        raise kn.Refuse(f"{where}: the iterations side by side would read `{strided}` apart")


def _register(item: _Accumulated, kernel: kn.Kernel, taken: set[str], where: str) -> Reduced:
    """The register each lane accumulates `item` in: the kernel's scalar itself (each lane
    declares its own copy), or a fresh one for an element."""
    declared = cs.visible(kernel.tree, kernel.source, item.base, item.target.start_byte)
    if declared is None:
        raise kn.Refuse(f"{where}: '{item.base}' is not declared in the kernel")
    element = item.target.type != "identifier"
    if not element and (declared.scope != "local" or declared.kind != "scalar"):
        raise kn.Refuse(f"{where}: '{item.base}' is not a scalar declared in the kernel")
    device_type = " ".join(QUALIFIERS.sub("", declared.base).split())
    if not device_type or "auto" in device_type.split():
        raise kn.Refuse(f"{where}: the type of '{item.base}' is not known")
    local = kn.fresh(f"cudaify_acc_{item.base}", taken) if element else item.base
    taken.add(local)
    partials = kn.fresh(f"cudaify_lanes_{item.base}", taken)
    taken.add(partials)
    op = _ACCUMULATING[item.op]
    return Reduced(local, op, ps.OPERATORS[op], device_type, partials, "")


def _line(line: int) -> str:
    """` (line N)` for a loop of the source; nothing for one of a scheduled kernel, whose
    lines are the generated code's."""
    return f" (line {line})" if line else ""


def _unparenthesized(node: Node) -> Node:
    while node.type == "parenthesized_expression" and node.named_children:
        node = node.named_children[0]
    return node


def _accumulator_base(target: Node, var: str, kernel: kn.Kernel, where: str) -> str:
    """The name an accumulator stores into: itself, or the array of `a[i][k]`, whose
    subscripts read no memory, nor the loop's variable."""
    source = kernel.source
    current = target
    while current.type == "subscript_expression":
        for index in current.named_children[1:]:
            if not kn.effect_free(index) or var in _names(index, source):
                raise kn.Refuse(
                    f"{where}: the element `{kn.compact(cs.text(target, source))}` moves with "
                    "the loop or reads memory"
                )
        current = _unparenthesized(current.named_children[0])
    if current.type != "identifier":
        raise kn.Refuse(f"{where}: it accumulates into `{cs.text(target, source)}`")
    return cs.text(current, source)


def _strided_read(term: Node, *names: str, source: bytes) -> str | None:
    """An element the term reads whose address moves with `names` (a loop's variable)
    other than by one element a step (in a subscript before the last, or multiplied in
    the last), else None: threads that take consecutive iterations read side by side only
    where the variable steps the last subscript by one."""

    def moves(index: Node) -> bool:
        return bool(_names(index, source) & set(names))

    for node in cs.walk(term):
        if node.type != "subscript_expression" or (
            node.parent is not None and node.parent.type == "subscript_expression"
        ):
            continue  # the outermost subscript of each access
        text = kn.compact(cs.text(node, source))
        last = node.named_children[1:]
        inner = _unparenthesized(node.named_children[0])
        if any(moves(i) for i in last) and any(
            n.type == "binary_expression"
            and cs.text(n.child_by_field_name("operator") or n, source) in ("*", "/", "<<")
            and moves(n)
            for i in last
            for n in cs.walk(i)
        ):
            return text
        while inner.type == "subscript_expression":
            if any(moves(i) for i in inner.named_children[1:]):
                return text
            inner = _unparenthesized(inner.named_children[0])
    return None


def _reads_memory(node: Node) -> bool:
    """An element, a dereference or a field through a pointer anywhere in `node`."""
    return any(
        n.type in ("subscript_expression", "pointer_expression")
        or (n.type == "field_expression" and any(c.type == "->" for c in n.children))
        for n in cs.walk(node)
    )


def _pure(node: Node, source: bytes) -> bool:
    """No assignment, increment or call other than math functions and casts."""
    for n in cs.walk(node):
        if n.type in ("assignment_expression", "update_expression", "lambda_expression"):
            return False
        if n.type == "call_expression" and cs.call_name(n, source) not in _PURE_CALLS:
            return False
    return True


def _header_loop(node: Node, var: str, source: bytes) -> Loop:
    """What `_shared` needs of a loop the analysis never saw, read from its header: the
    variable, a constant step (0 when it has none) and no early exit (its body is
    accumulations and first-run resets, `_accumulation`'s)."""
    update = node.child_by_field_name("update")
    text = kn.compact(cs.text(update, source)) if update is not None else ""
    step = 0
    if text in (f"{var}++", f"++{var}"):
        step = 1
    elif (match := re.fullmatch(rf"{re.escape(var)}\+=(\d+)", text)) is not None:
        step = int(match.group(1))
    body = node.child_by_field_name("body")
    assert body is not None
    return Loop(
        var=var,
        lower="",
        upper="",
        step=step,
        upper_inclusive=False,
        line=0,
        column=0,
        depth=1,
        span=Span(node.start_byte, node.end_byte),
        body_span=Span(body.start_byte, body.end_byte),
        var_declared_in_header=var != "?",
        pattern="reduction",
    )


def _loops_in(statements: tuple[Node, ...]) -> list[Node]:
    """The `for` statements under `statements`, in source order (not a lambda's own)."""
    found = []
    for statement in statements:
        for node in cs.walk(statement):
            if node.type == "for_statement" and not _in_lambda(node, statement):
                found.append(node)
    return found


def _in_lambda(node: Node, top: Node) -> bool:
    parent = node.parent
    while parent is not None and parent != top.parent:
        if parent.type == "lambda_expression":
            return True
        parent = parent.parent
    return False


def _loop_var(node: Node, source: bytes) -> str:
    init = node.child_by_field_name("initializer")
    if init is not None and init.type == "declaration":
        declared = kn.declared_variable(init, source)
        if declared is not None:
            return declared
    return "?"


def _shared(
    node: Node,
    loop: Loop,
    kernel: kn.Kernel,
    taken: set[str],
    reduced: tuple[Reduced, ...] | None = None,
) -> Shared:
    """The shared loop `node` with its facts `loop`; `reduced` replaces the reductions the
    facts name (an accumulation read from the text)."""
    source = kernel.source
    where = f"loop '{loop.var}'{_line(loop.line)}"
    if loop.early_exit:
        raise kn.Refuse(f"{where} can exit early")
    if not loop.var_declared_in_header:
        raise kn.Refuse(f"{where}: its variable is declared before it")
    if loop.step <= 0:
        raise kn.Refuse(f"{where} does not count up by a constant step")
    if loop.pattern not in ("reduction", "scan") and not loop.parallel:
        raise kn.Refuse(f"{where} is {loop.pattern}: {loop.reason or 'not a reduction'}")
    init = node.child_by_field_name("initializer")
    condition = node.child_by_field_name("condition")
    condition = _unparenthesized(condition) if condition is not None else None
    first = kn.initializer(init) if init is not None else None
    if init is None or condition is None or first is None:
        raise kn.Refuse(f"{where} has no `T {loop.var} = first; {loop.var} < bound` header")
    operator = condition.child_by_field_name("operator")
    left, right = condition.child_by_field_name("left"), condition.child_by_field_name("right")
    if (
        condition.type != "binary_expression"
        or operator is None
        or cs.text(operator, source) not in ("<", "<=")
        or left is None
        or right is None
        or cs.text(left, source) != loop.var
    ):
        raise kn.Refuse(f"{where}: its test is not `{loop.var} < bound` or `<=`")
    var_type = cs.base_type(init, source)
    groups: tuple[ArgGroup, ...] = ()
    if reduced is None:
        reduced, groups = _combined(loop.reductions, node, kernel, taken)
    if loop.pattern == "scan":
        scan, counter, body, body_indent = _scan_form(node, loop, kernel), "", "", ""
    else:
        scan = None
        counter = kn.fresh(f"cudaify_t_{loop.var}", set(taken))
        body, body_indent = _body_text(node, source)
        if groups:
            body_node = node.child_by_field_name("body")
            assert body_node is not None
            try:
                body = marked_body(body_node, source, groups, counter)
            except ps.Refuse as refusal:
                raise kn.Refuse(str(refusal)) from None
    return Shared(
        node=node,
        loop=loop,
        var_type=var_type,
        first=cs.text(first, source),
        bound=cs.text(right, source),
        inclusive=cs.text(operator, source) == "<=",
        reduced=reduced,
        groups=groups,
        scan=scan,
        counter=counter,
        body=body,
        body_indent=body_indent,
    )


_SCAN_OPERATORS = {"+=": "+", "*=": "*", "&=": "&", "|=": "|", "^=": "^"}


def _scan_form(node: Node, loop: Loop, kernel: kn.Kernel) -> ScanForm:
    """The accumulator form of a scan loop's body, or Refuse saying what differs."""
    source = kernel.source
    where = f"scan loop '{loop.var}' (line {loop.line})"
    body = node.child_by_field_name("body")
    statements = kn.statements_of(body) if body is not None else []
    declarations = [n for n in statements if n.type == "declaration"]
    rest = statements[len(declarations) :]
    if len(rest) != 2 or any(n.type != "expression_statement" for n in rest):
        raise kn.Refuse(
            f"{where}: its body is not local declarations, then `acc += term;` and "
            "`out[...] = f(acc);` in either order"
        )
    parts = [_assignment_parts(n, source) for n in rest]
    update_at = next((k for k, (_, op, _) in enumerate(parts) if op in _SCAN_OPERATORS), None)
    if update_at is None:
        raise kn.Refuse(f"{where}: no `acc += term;` (or *=, &=, |=, ^=) updates the running value")
    acc_node, op, term = parts[update_at]
    target, store_op, stored = parts[1 - update_at]
    if acc_node is None or acc_node.type != "identifier" or term is None:
        raise kn.Refuse(f"{where}: the running value is not a plain variable")
    acc = cs.text(acc_node, source)
    if store_op != "=" or target is None or stored is None or _is_local(target, source):
        raise kn.Refuse(f"{where}: the other statement is not a store to memory")
    if not any(cs.text(n, source) == acc for n in cs.identifiers_in(stored)):
        raise kn.Refuse(f"{where}: the store does not read '{acc}'")
    _require_uniform(stored, source)
    if _writes_memory(stored, source):
        raise kn.Refuse(f"{where}: the stored value writes memory")
    for piece in [*declarations, term, target]:
        _require_uniform(piece, source)
        if _writes_memory(piece, source) or any(
            cs.text(n, source) == acc for n in cs.identifiers_in(piece)
        ):
            raise kn.Refuse(f"{where}: {_quoted(piece, source)} reads '{acc}' or writes memory")
    acc_type = _declared_type(acc, node, kernel)
    operator = _SCAN_OPERATORS[op]
    return ScanForm(
        acc=acc,
        acc_type=acc_type,
        functor=ps.OPERATORS[operator],
        op=operator,
        declarations=tuple(declarations),
        term=term,
        store=rest[1 - update_at],
        inclusive=update_at == 0,
    )


def _assignment_parts(statement: Node, source: bytes) -> tuple[Node | None, str, Node | None]:
    """(left, operator, right) of an expression statement that is an assignment."""
    expression = statement.named_children[0] if statement.named_children else None
    if expression is None or expression.type != "assignment_expression":
        return None, "", None
    operator = expression.child_by_field_name("operator")
    return (
        expression.child_by_field_name("left"),
        cs.text(operator, source) if operator is not None else "",
        expression.child_by_field_name("right"),
    )


def _combined(
    reductions: tuple[Reduction, ...], node: Node, kernel: kn.Kernel, taken: set[str]
) -> tuple[tuple[Reduced, ...], tuple[ArgGroup, ...]]:
    """The loop's reduction variables (plain) and its argmin / argmax groups."""
    by_var: dict[str, Reduced] = {}
    for reduction in reductions:
        if reduction.op not in ps.OPERATORS and reduction.op != "payload":
            raise kn.Refuse(f"no warp combination for the operator '{reduction.op}'")
        if not IDENT.fullmatch(reduction.var):
            raise kn.Refuse(f"reduction variable '{reduction.var}' is not a plain name")
        by_var[reduction.var] = Reduced(
            var=reduction.var,
            op=reduction.op,
            functor=ps.OPERATORS.get(reduction.op, ""),
            device_type=_declared_type(reduction.var, node, kernel),
            partials=kn.fresh(f"cudaify_lanes_{reduction.var}", taken),
            host_partials="",
        )
    groups: list[ArgGroup] = []
    for reduction in reductions:
        if reduction.op != "payload":
            continue
        key = by_var.get(reduction.key)
        if key is None or key.op not in ("min", "max"):
            raise kn.Refuse(f"'{reduction.var}' is kept with '{reduction.key}', no min or max")
        existing = next((g for g in groups if g.key is key), None)
        if existing is not None:
            if existing.strict != reduction.strict:
                raise kn.Refuse(f"'{key.var}' is compared both strictly and not")
            groups[groups.index(existing)] = ArgGroup(
                key=key,
                payloads=(*existing.payloads, by_var[reduction.var]),
                strict=existing.strict,
                at=existing.at,
                at_partials=existing.at_partials,
                host_at_partials="",
            )
            continue
        groups.append(
            ArgGroup(
                key=key,
                payloads=(by_var[reduction.var],),
                strict=reduction.strict,
                at=kn.fresh(f"cudaify_at_{key.var}", taken),
                at_partials=kn.fresh(f"cudaify_lanes_at_{key.var}", taken),
                host_at_partials="",
            )
        )
    grouped = {r.var for g in groups for r in g.values}
    return tuple(r for r in by_var.values() if r.var not in grouped), tuple(groups)


def _declared_type(name: str, node: Node, kernel: kn.Kernel) -> str:
    declared = cs.visible(kernel.tree, kernel.source, name, node.start_byte)
    if declared is None or declared.kind != "scalar":
        raise kn.Refuse(f"'{name}' is not a scalar declared in the kernel")
    base = " ".join(QUALIFIERS.sub("", declared.base).split())
    if "auto" in base.split() or "static" in base.split():
        raise kn.Refuse(f"'{name}' has type '{base}', which the warp combination does not take")
    return base


# ---- which statements write memory ------------------------------------------------------


def _targets(node: Node) -> list[Node]:
    """What the assignments and increments under `node` write (parentheses removed)."""
    found = []
    for n in cs.walk(node):
        target = None
        if n.type == "assignment_expression":
            target = n.child_by_field_name("left")
        elif n.type == "update_expression":
            target = n.child_by_field_name("argument")
        while target is not None and target.type == "parenthesized_expression":
            target = target.named_children[0] if target.named_children else None
        if target is not None:
            found.append(target)
    return found


def _is_local(target: Node, source: bytes) -> bool:
    """A plain name or a field of one (`s`, `p.x`): the thread's own variable."""
    while target.type == "field_expression" and cs.text(target, source).find("->") < 0:
        argument = target.child_by_field_name("argument")
        if argument is None:
            return False
        target = argument
    return target.type == "identifier"


def _writes_memory(statement: Node, source: bytes) -> bool:
    return any(not _is_local(t, source) for t in _targets(statement))


def _quoted(statement: Node, source: bytes) -> str:
    """A statement's text on one line, shortened: the kernel's line numbers are not the
    source's, its text is."""
    text = " ".join(cs.text(statement, source).split())
    return f"`{text if len(text) <= 60 else text[:57] + '...'}`"


def _require_lane_zero(statement: Node, source: bytes) -> None:
    """A statement lane 0 runs alone writes memory only: the other lanes never need a
    variable it sets."""
    quoted = _quoted(statement, source)
    if statement.type != "expression_statement":
        raise kn.Refuse(f"{quoted} writes memory outside the inner loops")
    if any(_is_local(t, source) for t in _targets(statement)):
        raise kn.Refuse(f"{quoted} writes both memory and a variable")


def _require_uniform(statement: Node, source: bytes) -> None:
    """A statement every lane runs: its calls are pure (math, casts), its `for` loops (none
    here: those are shared) and lambdas write nothing outside themselves."""
    quoted = _quoted(statement, source)
    for node in cs.walk(statement):
        if node.type == "for_statement":
            raise kn.Refuse(f"{quoted} holds a loop that is not one of the body's own")
        if node.type == "call_expression":
            name = cs.call_name(node, source)
            if name not in _PURE_CALLS:
                raise kn.Refuse(
                    f"every lane would run {quoted}, and '{name or cs.text(node, source)}' "
                    "may have effects"
                )
        if node.type in ("new_expression", "delete_expression", "gnu_asm_expression"):
            raise kn.Refuse(f"every lane would run {quoted}, a {node.type}")


# ---- emitting -----------------------------------------------------------------------------


def _emit(code: str, plans: list[KernelPlan]) -> str:
    source = code.encode("utf-8", errors="surrogateescape")
    first = min(plan.kernel.definition.start_byte for plan in plans)
    comment = plans[0].kernel.definition.prev_named_sibling
    at = (
        min(first, comment.start_byte)
        if comment is not None and comment.type == "comment"
        else first
    )
    edits, helpers = ps.prelude_edits(source, at)
    if WARP_MARKER.encode() not in source:
        helpers += WARP_HELPERS
    if helpers:
        edits.append(Edit(at, at, helpers, "the warp helpers"))
    for plan in plans:
        edits += _kernel_edits(plan)
        edits += plan.launches
    return apply_edits(source, edits).decode("utf-8", errors="surrogateescape")


def _kernel_edits(plan: KernelPlan) -> list[Edit]:
    kernel, source = plan.kernel, plan.kernel.source
    cols = kernel.cols
    edits = []
    comment = kernel.definition.prev_named_sibling
    if comment is not None and comment.type == "comment":
        text = cs.text(comment, source).replace(
            "one thread per iteration.",
            "one warp per iteration, its lanes sharing the inner loops.",
        )
        edits.append(Edit(comment.start_byte, comment.end_byte, text, "the kernel's mapping"))
    if plan.layout == "rows":
        return edits + _rows_edits(plan)
    indent = kn.line_indent(source, cols.node.start_byte)
    init = cols.node.child_by_field_name("initializer")
    update = cols.node.child_by_field_name("update")
    assert init is not None and update is not None
    t = cols.counter
    edits.append(
        Edit(
            init.start_byte,
            init.end_byte,
            f"long long {t} = (blockIdx.x * (long long)blockDim.x + threadIdx.x) / {WARP};",
            "one warp per iteration",
        )
    )
    edits.append(
        Edit(
            update.start_byte,
            update.end_byte,
            f"{t} += (long long)blockDim.x * gridDim.x / {WARP}",
            "the grid's warps",
        )
    )
    lane = f"const int {plan.lane} = threadIdx.x % {WARP};\n{indent}"
    edits.append(Edit(cols.node.start_byte, cols.node.start_byte, lane, "the thread's lane"))
    return edits + _body_edits(plan, f"{plan.lane} == 0", "__syncwarp();", _shared_text)


def _body_edits(
    plan: KernelPlan,
    writer: str,
    meet: str,
    shared_text: Callable[[KernelPlan, Shared, set[str]], str],
) -> list[Edit]:
    """The body's statements that write memory run where `writer` holds, the threads then
    meet (`meet`); the shared loops become `shared_text`'s."""
    source = plan.kernel.source
    edits = []
    for statement in plan.lane_zero:
        at = kn.line_indent(source, statement.start_byte)
        moved = kn.moved(statement, source, at + "    ")
        text = f"if ({writer})\n{at}    {moved}\n{at}{meet}"
        edits.append(Edit(statement.start_byte, statement.end_byte, text, "one thread writes"))
    for shared in plan.shared:
        text = shared_text(plan, shared, set(plan.taken))
        edits.append(Edit(shared.node.start_byte, shared.node.end_byte, text, "shared loop"))
    return edits


def _rows_edits(plan: KernelPlan) -> list[Edit]:
    """The rows layout: the grid-stride loop takes turns of WARP side-by-side iterations
    per block (every thread of the block runs every turn, so the barriers are reached by
    all; a thread past the last iteration runs no shared loop and writes nothing), row 0
    runs the statements that write memory, and the rows share the inner loops."""
    kernel, source = plan.kernel, plan.kernel.source
    cols = kernel.cols
    indent = kn.line_indent(source, cols.node.start_byte)
    inner = kn.line_indent(source, cols.declaration.start_byte)
    init = cols.node.child_by_field_name("initializer")
    condition = cols.node.child_by_field_name("condition")
    update = cols.node.child_by_field_name("update")
    assert init is not None and condition is not None and update is not None
    t, base, inside = cols.counter, plan.base, plan.inside
    turn = f"(long long){WARP} * gridDim.x"
    edits = [
        Edit(
            init.start_byte,
            init.end_byte,
            f"long long {base} = (long long)blockIdx.x * {WARP};",
            "a block's turn: 32 iterations",
        ),
        Edit(condition.start_byte, condition.end_byte, f"{base} < {cols.trips}", "turns"),
        Edit(update.start_byte, update.end_byte, f"{base} += {turn}", "the grid's turns"),
        Edit(
            cols.declaration.start_byte,
            cols.declaration.start_byte,
            f"const long long {t} = {base} + threadIdx.x;\n"
            f"{inner}const bool {inside} = {t} < {cols.trips};\n{inner}",
            "the thread's iteration",
        ),
        Edit(
            cols.node.start_byte,
            cols.node.start_byte,
            f"const int {plan.lane} = threadIdx.y;\n{indent}",
            "the thread's row",
        ),
    ]
    # 1024 threads a block: the compiler keeps to the registers that lets (a kernel that
    # needed more would not launch at all)
    edits += kn.launch_bounds_edits(kernel.definition, WARP * ROWS)
    writer = f"{inside} && {plan.lane} == 0"
    return edits + _body_edits(plan, writer, "__syncthreads();", _rows_text)


def _rows_text(plan: KernelPlan, shared: Shared, taken: set[str]) -> str:
    """A shared loop of accumulations in the rows layout: row r runs iterations r, r +
    ROWS, ... on registers from the identity, the rows' results meet in shared memory,
    every row adds them up in row order (all rows hold the same totals), and row 0
    combines each into its element (a scalar takes it in every row)."""
    source = plan.kernel.source
    loop, row = shared.loop, plan.lane
    elements = shared.elements or ("",) * len(shared.reduced)
    indent = kn.line_indent(source, shared.node.start_byte)
    i1, i2 = indent + "    ", indent + "    " * 2
    first = kn.fresh(f"cudaify_first_{loop.var}", taken | {shared.counter})
    rows = {
        r.var: kn.fresh(f"cudaify_rows_{r.partials.removeprefix('cudaify_lanes_')}", taken)
        for r in shared.reduced
    }
    other = kn.fresh("cudaify_r", taken)
    step = f" * {loop.step}" if loop.step != 1 else ""
    test = "<=" if shared.inclusive else "<"
    counter, body_at = shared.counter, i2 + "        "
    lines = [
        *_reset_lines(shared, f"{plan.inside} && {row} == 0", "__syncthreads();", indent),
        f"{indent}{{ /* the block's rows share loop '{loop.var}'; they combine "
        f"{', '.join(_combined_names(shared))} */",
        *(f"{i1}__shared__ {r.device_type} {rows[r.var]}[{ROWS}][{WARP}];" for r in shared.reduced),
        f"{i1}const long long {first} = (long long)({shared.first});",
        *(f"{i1}{r.device_type} {r.partials};" for r in shared.reduced),
        f"{i1}{{",
        *(
            f"{i2}{r.device_type} {r.var} = {r.functor}::identity<{r.device_type}>();"
            for r in shared.reduced
        ),
        f"{i2}if ({plan.inside})",
        f"{i2}    for (long long {counter} = {row};; {counter} += {ROWS}) {{",
        f"{body_at}{shared.var_type} {loop.var} = ({shared.var_type})({first} + {counter}{step});",
        f"{body_at}if (!({loop.var} {test} {shared.bound}))",
        f"{body_at}    break;",
        body_at + kn.reindent(shared.body, shared.body_indent, body_at),
        f"{i2}    }}",
        *(f"{i2}{rows[r.var]}[{row}][threadIdx.x] = {r.var};" for r in shared.reduced),
        f"{i1}}}",
        f"{i1}__syncthreads();",
    ]
    for r in shared.reduced:
        lines += [
            f"{i1}{r.partials} = {rows[r.var]}[0][threadIdx.x];",
            f"{i1}for (int {other} = 1; {other} < {ROWS}; {other}++)",
            f"{i1}    {r.partials} = {r.functor}()({r.partials}, "
            f"{rows[r.var]}[{other}][threadIdx.x]);",
        ]
    lines.append(f"{i1}__syncthreads();")
    for r, element in zip(shared.reduced, elements, strict=True):
        if element:
            lines += [
                f"{i1}if ({plan.inside} && {row} == 0)",
                f"{i1}    {element} = {r.functor}()({element}, {r.partials});",
            ]
        else:
            lines.append(f"{i1}{r.var} = {r.functor}()({r.var}, {r.partials});")
    lines += [f"{indent}}}", f"{indent}__syncthreads();"]
    return "\n".join(lines)[len(indent) :]  # the edit starts after the loop's indentation


def _body_text(node: Node, source: bytes) -> tuple[str, str]:
    """The statements of a loop body (without braces) and their indentation."""
    body = node.child_by_field_name("body")
    assert body is not None
    statements = kn.statements_of(body)
    if body.type == "compound_statement" and len(body.children) >= 2:
        start, end = body.children[0].end_byte, body.children[-1].start_byte
        text = source[start:end].decode("utf-8", errors="surrogateescape").strip()
    else:
        text = cs.text(body, source)
    first = statements[0] if statements else body
    return text, kn.line_indent(source, first.start_byte)


def _shared_text(plan: KernelPlan, shared: Shared, taken: set[str]) -> str:
    if shared.scan is not None:
        return _scan_text(plan, shared, shared.scan, taken)
    source = plan.kernel.source
    loop = shared.loop
    indent = kn.line_indent(source, shared.node.start_byte)
    i1, i2 = indent + "    ", indent + "    " * 2
    counter = shared.counter
    first = kn.fresh(f"cudaify_first_{loop.var}", taken | {counter})
    values = [*shared.reduced, *(r for g in shared.groups for r in g.values)]
    combined = _combined_names(shared)
    what = f"; they combine {', '.join(combined)}" if combined else ""
    step = f" * {loop.step}" if loop.step != 1 else ""
    test = "<=" if shared.inclusive else "<"
    lines = [
        *_reset_lines(shared, f"{plan.lane} == 0", "__syncwarp();", indent),
        f"{indent}{{ /* the warp's lanes share loop '{loop.var}'{_line(loop.line)}{what} */",
        f"{i1}const long long {first} = (long long)({shared.first});",
    ]
    lines += [f"{i1}{r.device_type} {r.partials};" for r in values]
    lines += [f"{i1}long long {g.at_partials};" for g in shared.groups]
    inner = i1
    if values:
        lines.append(f"{i1}{{")
        inner = i2
        for r in shared.reduced:
            lines.append(f"{i2}{r.device_type} {r.var} = {r.functor}::identity<{r.device_type}>();")
        for g in shared.groups:
            assert g.key is not None
            key = g.key
            lines.append(
                f"{i2}{key.device_type} {key.var} = {key.functor}::identity<{key.device_type}>();"
            )
            lines += [f"{i2}{p.device_type} {p.var}{{}};" for p in g.payloads]
            lines.append(f"{i2}long long {g.at} = -1;")
    body_at = inner + "    "
    lines += [
        f"{inner}for (long long {counter} = {plan.lane};; {counter} += {WARP}) {{",
        f"{body_at}{shared.var_type} {loop.var} = ({shared.var_type})({first} + {counter}{step});",
        f"{body_at}if (!({loop.var} {test} {shared.bound}))",
        f"{body_at}    break;",
        body_at + kn.reindent(shared.body, shared.body_indent, body_at),
        f"{inner}}}",
    ]
    for r in shared.reduced:
        lines.append(f"{i2}{r.partials} = cudaify_warp_allreduce({r.var}, {r.functor}());")
    for g in shared.groups:
        lines += _group_allreduce(g, i2)
    if values:
        lines.append(f"{i1}}}")
    elements = shared.elements or ("",) * len(shared.reduced)
    for r, element in zip(shared.reduced, elements, strict=True):
        if element:  # memory: lane 0 alone reads and writes it
            lines.append(f"{i1}if ({plan.lane} == 0)")
            lines.append(f"{i1}    {element} = {r.functor}()({element}, {r.partials});")
        else:
            lines.append(f"{i1}{r.var} = {r.functor}()({r.var}, {r.partials});")
    for g in shared.groups:
        assert g.key is not None
        lines.append(f"{i1}if ({g.at_partials} >= 0 && {g.key.partials} {g.beats} {g.key.var}) {{")
        lines += [f"{i2}{r.var} = {r.partials};" for r in g.values]
        lines.append(f"{i1}}}")
    lines.append(f"{indent}}}")
    lines.append(f"{indent}__syncwarp();")
    return "\n".join(lines)[len(indent) :]  # the edit starts after the loop's indentation


def _reset_lines(shared: Shared, writer: str, meet: str, indent: str) -> list[str]:
    """A loop's first-run resets, before it, each line indented: where the loop runs at all
    (its first value within its bound), an element's by `writer` alone, then the threads
    meet (`meet`); a scalar's by every thread."""
    test = "<=" if shared.inclusive else "<"
    runs = f"({shared.first}) {test} ({shared.bound})"
    elements = set(shared.elements) - {""}
    lines = []
    for assignment, target in shared.resets:
        memory = target in elements
        lines += [
            f"{indent}if ({writer} && {runs})" if memory else f"{indent}if ({runs})",
            f"{indent}    {assignment};",
        ]
        if memory:
            lines.append(f"{indent}{meet}")
    return lines


def _scan_text(plan: KernelPlan, shared: Shared, scan: ScanForm, taken: set[str]) -> str:
    """The loop 32 iterations at a time: each lane evaluates its term (the identity past the
    bound), a warp scan gives each lane its prefix, the lane stores the running value its
    iteration would have stored, and the tile's total carries to the next tile."""
    source = plan.kernel.source
    loop, lane = shared.loop, plan.lane
    indent = kn.line_indent(source, shared.node.start_byte)
    i1, i2, i3 = (indent + "    " * k for k in (1, 2, 3))
    first = kn.fresh(f"cudaify_first_{loop.var}", taken)
    tile = kn.fresh(f"cudaify_tile_{loop.var}", taken)
    inside = kn.fresh(f"cudaify_in_{loop.var}", taken)
    term = kn.fresh(f"cudaify_term_{scan.acc}", taken)
    prefix = kn.fresh(f"cudaify_prefix_{scan.acc}", taken)
    value = kn.fresh(f"cudaify_value_{scan.acc}", taken)
    type_, functor = scan.acc_type, scan.functor
    step = f" * {loop.step}" if loop.step != 1 else ""
    test = "<=" if shared.inclusive else "<"

    def declarations(at: str) -> list[str]:
        return [at + kn.moved(d, source, at) for d in scan.declarations]

    form = "inclusive" if scan.inclusive else "exclusive"
    lines = [
        f"{{ /* the warp's lanes share scan loop '{loop.var}' (line {loop.line}), 32 iterations "
        f"at a time: an {form} scan of {scan.acc} ({scan.op}) */",
        f"{i1}const long long {first} = (long long)({shared.first});",
        f"{i1}for (long long {tile} = 0;; {tile} += {WARP}) {{",
        f"{i2}{shared.var_type} {loop.var} = "
        f"({shared.var_type})({first} + ({tile} + {lane}){step});",
        f"{i2}const bool {inside} = {loop.var} {test} {shared.bound};",
        f"{i2}if (__ballot_sync(0xffffffffu, {inside}) == 0u)",
        f"{i2}    break;",
        f"{i2}{type_} {term} = {functor}::identity<{type_}>();",
        f"{i2}if ({inside}) {{",
        *declarations(i3),
        f"{i3}{term} = {cs.text(scan.term, source)};",
        f"{i2}}}",
        f"{i2}const {type_} {prefix} = cudaify_warp_inclusive_scan({term}, {functor}());",
    ]
    if scan.inclusive:
        lines.append(f"{i2}const {type_} {value} = {functor}()({scan.acc}, {prefix});")
    else:  # the lane before's prefix (every lane shuffles); lane 0 stores the running value
        before = kn.fresh(f"cudaify_before_{scan.acc}", taken)
        lines += [
            f"{i2}const {type_} {before} = cudaify_shfl_from({prefix}, ({lane} + {WARP - 1}) % "
            f"{WARP});",
            f"{i2}const {type_} {value} = {lane} == 0 ? {scan.acc} : {functor}()({scan.acc}, "
            f"{before});",
        ]
    lines += [
        f"{i2}if ({inside}) {{",
        f"{i3}const {type_} {scan.acc} = {value};",
        *declarations(i3),
        i3 + kn.moved(scan.store, source, i3),
        f"{i2}}}",
        f"{i2}{scan.acc} = {functor}()({scan.acc}, cudaify_shfl_from({prefix}, {WARP - 1}));",
        f"{i1}}}",
        f"{indent}}}",
        f"{indent}__syncwarp();",
    ]
    return "\n".join(lines)


def _group_allreduce(g: ArgGroup, indent: str) -> list[str]:
    """The warp's choice of (key, iteration, payloads) in every lane: xor shuffles that
    keep the better of each pair (a total order: the iterations differ), then lane 0's."""
    values = [(g.at, "long long")] + [(r.var, r.device_type) for r in g.values]
    assert g.key is not None
    mask = f"{g.at}_mask"
    # the other lane's values: numbered, since a payload may have any name
    other = {name: f"{g.at}_other{k}" for k, (name, _) in enumerate(values)}
    lines = [f"{indent}for (int {mask} = 16; {mask} > 0; {mask} /= 2) {{"]
    for name, type_ in values:
        lines.append(f"{indent}    const {type_} {other[name]} = cudaify_shfl_xor({name}, {mask});")
    better = g.better(other[g.key.var], other[g.at], g.key.var, g.at)
    moves = " ".join(f"{name} = {other[name]};" for name, _ in values)
    lines.append(f"{indent}    if {better} {{ {moves} }}")
    lines.append(f"{indent}}}")
    for name, _ in values:
        lines.append(f"{indent}{name} = cudaify_shfl_from({name}, 0);")
    lines.append(f"{indent}{g.at_partials} = {g.at};")
    lines += [f"{indent}{r.partials} = {r.var};" for r in g.values]
    return lines


def _launch_edits(
    kernel: kn.Kernel, tree: Tree, source: bytes, layout: str = "lanes"
) -> list[Edit]:
    edits = []
    found = kn.launches(tree, source, kernel.name)
    if not found:
        raise kn.Refuse(f"kernel '{kernel.name}' is never launched")
    per_block, block = (
        (THREADS // WARP, str(THREADS)) if layout == "lanes" else (WARP, f"{WARP}, {ROWS}")
    )
    for launch in found:
        trips = kn.launch_argument(launch, kernel, kernel.cols.trips, source)
        grid = f"cudaify_blocks({cs.text(trips, source)}, {per_block}, {MOST_BLOCKS['x']}u)"
        edits += kn.resize_launch(
            launch, tree, source, (grid, block), (trips,), f"{layout}: their shape"
        )
    return edits
