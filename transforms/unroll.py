"""`unroll`: `#pragma unroll` on the sequential loops inside kernels whose trip count is a
compile-time constant.

A loop of at most 32 iterations known at compile time (a 5x5 filter, the 3 dimensions of
a point) is unrolled completely: its index becomes a constant in every copy, so array
subscripts fold and small local arrays stay in registers. A longer constant loop is
unrolled by 4, which trades loop overhead for instruction-level parallelism. Trip
counts come from the analysis (macros and constant expressions already evaluated);
loops whose bounds depend on run-time values are left alone. Unrolling never changes
what a thread computes."""

from __future__ import annotations

from tree_sitter import Node

from cudaify.core import Problem, Variant
from cudaify.frontend.edits import Edit, apply_edits
from cudaify.frontend.facts import Loop, Program
from cudaify.transforms import csource as cs
from cudaify.transforms import kernel_text as kt
from cudaify.transforms.base import Context, Method, Outcome

FULL_UNROLL_LIMIT = 32
PARTIAL_FACTOR = 4


class Unroll(Method):
    name = "unroll"
    summary = "#pragma unroll on constant-trip sequential loops inside kernels"
    category = "compute"
    follows = (
        "offload",
        "reduction",
        "atomic_privatize",
        "data_residency",
        "coalesce",
        "readonly_cache",
        "shared_tiling",
        "register_tiling",
        "fast_math",
        "launch_tuning",
    )
    instruction = (
        "Inside each __global__ kernel, put `#pragma unroll` right before every sequential "
        "inner for loop whose trip count is a compile-time constant of at most 32 (filter "
        "taps, small dimensions), and `#pragma unroll 4` before longer loops with constant "
        "bounds. Do not touch the grid-stride loops or loops with run-time bounds, and do "
        "not change the loop bodies."
    )

    def applies(self, variant: Variant, ctx: Context) -> str | None:
        edits, _details, reasons = _plan(variant.code, ctx.program)
        return None if edits else _first(reasons)

    def apply_rule(self, variant: Variant, ctx: Context) -> Outcome:
        edits, details, reasons = _plan(variant.code, ctx.program)
        if not edits:
            return Outcome(None, _first(reasons))
        code = kt.decode(apply_edits(kt.encode(variant.code), edits))
        return Outcome(variant.then(self.name, code, "rule", detail="; ".join(details)))

    def check(self, before: Variant, after: Variant, ctx: Context) -> list[Problem]:
        """A launched kernel has more loops under `#pragma unroll`, or fewer loops and more
        statements (a loop replicated by hand); every `#pragma unroll` is inside a kernel,
        right before a for loop."""
        from cudaify.transforms import postcondition as pc

        problems = pc.common_problems(self.name, before.code, after.code)
        if problems:
            return problems
        if not (
            pc.kernel_gained(before.code, after.code, pc.unroll_pragmas)
            or pc.loop_replicated(before.code, after.code)
        ):
            problems.append(
                Problem("unroll", "no loop of a launched kernel is unrolled or replicated")
            )
        data = kt.encode(after.code)
        tree = cs.parse(data)
        kernel_ranges = [(k.node.start_byte, k.node.end_byte) for k in kt.kernels(data)]
        for node in cs.walk(tree.root_node):
            if node.type != "preproc_call" or not cs.text(node, data).startswith("#pragma unroll"):
                continue
            inside = any(a <= node.start_byte < b for a, b in kernel_ranges)
            following = node.next_named_sibling
            if not inside or following is None or following.type != "for_statement":
                problems.append(
                    Problem(
                        "unroll",
                        "#pragma unroll is not right before a loop of a kernel",
                        line=cs.line_of(node),
                    )
                )
        return problems


def _first(reasons: list[str]) -> str:
    return reasons[0] if reasons else "no kernel to unroll loops in"


def trip_count(loop: Loop) -> int | None:
    """The loop's iterations when its bounds are compile-time constants."""
    low, high = loop.lower_affine, loop.upper_affine
    if low is None or high is None or low.terms or high.terms or loop.step == 0:
        return None
    span = high.const - low.const if loop.step > 0 else low.const - high.const
    if loop.upper_inclusive:
        span += 1
    stride = abs(loop.step)
    return max(0, (span + stride - 1) // stride)


def _plan(code: str, program: Program) -> tuple[list[Edit], list[str], list[str]]:
    data = kt.encode(code)
    edits: list[Edit] = []
    details: list[str] = []
    reasons: list[str] = []
    for kernel in kt.kernels(data):
        mapped = {level.var for level in kernel.levels}
        inner = _facts_loops(program, kernel.function, kernel.line, mapped)
        loops, done = _inner_for_nodes(kernel, data)
        if not loops:
            why = "its inner loops are already unrolled" if done else "it has no sequential loop"
            reasons.append(f"kernel '{kernel.name}': {why}")
            continue
        used: set[int] = set()
        for node in loops:
            var = _loop_variable(node, data)
            fact = next(
                (i for i, loop in enumerate(inner) if loop.var == var and i not in used), None
            )
            if fact is None:
                reasons.append(f"kernel '{kernel.name}': loop '{var}' is not in the analysis")
                continue
            used.add(fact)
            trips = trip_count(inner[fact])
            if trips is None:
                reasons.append(f"kernel '{kernel.name}': loop '{var}' has run-time bounds")
                continue
            if trips <= 1:
                continue
            pragma = (
                "#pragma unroll"
                if trips <= FULL_UNROLL_LIMIT
                else f"#pragma unroll {PARTIAL_FACTOR}"
            )
            edits.extend(_insert_pragma(node, pragma, data))
            how = "fully" if trips <= FULL_UNROLL_LIMIT else f"by {PARTIAL_FACTOR}"
            details.append(f"{kernel.name}: loop '{var}' ({trips} iterations) unrolled {how}")
    return edits, details, reasons


def _facts_loops(program: Program, function: str, line: int, mapped: set[str]) -> list[Loop]:
    """The analysed loops under the kernel's nest that are not mapped, in source order."""
    fn = program.function(function)
    if fn is None:
        return []
    for outer in fn.loops:
        for loop in outer.walk():
            if loop.line == line:
                return [inner for inner in loop.walk()[1:] if inner.var not in mapped]
    return []


def _inner_for_nodes(kernel: kt.Kernel, data: bytes) -> tuple[list[Node], int]:
    """The kernel's for loops that are not grid-stride headers and carry no pragma yet,
    and how many carry one."""
    headers = {(level.start, level.end) for level in kernel.levels}
    found = []
    done = 0
    for node in cs.walk(kernel.node):
        if node.type != "for_statement":
            continue
        if any(start == node.start_byte for start, _ in headers):
            continue
        previous = node.prev_named_sibling
        if previous is not None and previous.type == "preproc_call":
            if cs.text(previous, data).startswith("#pragma unroll"):
                done += 1
                continue
        found.append(node)
    return found, done


def _loop_variable(node: Node, data: bytes) -> str:
    init = node.child_by_field_name("initializer")
    if init is None:
        return ""
    if init.type == "declaration":
        names = cs.declared_names(init, data, "local")
        return names[0].name if names else ""
    if init.type == "assignment_expression":
        left = init.child_by_field_name("left")
        return cs.text(left, data) if left is not None else ""
    return ""


def _insert_pragma(node: Node, pragma: str, data: bytes) -> list[Edit]:
    line_start = data.rfind(b"\n", 0, node.start_byte) + 1
    indent = kt.decode(data[line_start : node.start_byte])
    if node.parent is not None and node.parent.type == "compound_statement" and not indent.strip():
        return [Edit(line_start, line_start, f"{indent}{pragma}\n", pragma)]
    # the loop is the body of another statement: give it braces to hold the pragma
    inner = indent if not indent.strip() else ""
    return [
        Edit(node.start_byte, node.start_byte, f"{{\n{inner}{pragma}\n{inner}", pragma),
        Edit(node.end_byte, node.end_byte, f"\n{inner}}}", pragma),
    ]
