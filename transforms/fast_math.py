"""`fast_math`: hardware intrinsics for single-precision math inside kernels.

`expf`, `logf`, `sinf`, `cosf`, `powf`... compile to accurate software sequences; their
intrinsics (`__expf`, `__logf`, `__sinf`, ...) run on the special function units in a few
instructions, with a larger but bounded error (a few ulp; `__sinf`/`__cosf` lose accuracy
far from zero). `1.0f / sqrtf(x)` becomes `rsqrtf(x)`. Only the bodies of `__global__`
kernels change: the intrinsics do not exist on the host, and `__host__ __device__`
helpers must still compile for it. Double-precision calls are left alone.

Whether the results stay within the output tolerance is the second half of the
precondition and cannot be decided from the text: the search's verification decides it
by running the variant against the reference, and a variant that drifts loses."""

from __future__ import annotations

from tree_sitter import Node

from cudaify.core import Problem, Variant
from cudaify.frontend.edits import Edit, apply_edits
from cudaify.transforms import csource as cs
from cudaify.transforms import kernel_text as kt
from cudaify.transforms.base import Context, Method, Outcome

INTRINSICS = {
    "expf": "__expf",
    "exp10f": "__exp10f",
    "logf": "__logf",
    "log2f": "__log2f",
    "log10f": "__log10f",
    "sinf": "__sinf",
    "cosf": "__cosf",
    "tanf": "__tanf",
    "powf": "__powf",
    "sincosf": "__sincosf",
}
# what a model may call instead of the table's choice: CUDA's fast single-precision math
FAST_INTRINSICS = frozenset(INTRINSICS.values()) | {"rsqrtf", "__fdividef", "__frsqrt_rn"}
PRECISE_MATH = frozenset(INTRINSICS) | {"sqrtf"}
_ONE = {"1.0f", "1.f", "1.0F", "1.F", "1.0e0f"}


class FastMath(Method):
    name = "fast_math"
    summary = "single-precision math intrinsics (__expf, __sinf, rsqrtf) inside kernels"
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
        "unroll",
        "launch_tuning",
    )
    instruction = (
        "Inside __global__ kernels only, replace single-precision math calls by their "
        "intrinsics: expf -> __expf, logf -> __logf, sinf -> __sinf, cosf -> __cosf, tanf -> "
        "__tanf, powf -> __powf, exp10f -> __exp10f, log2f -> __log2f, log10f -> __log10f, "
        "and 1.0f / sqrtf(x) -> rsqrtf(x). Leave host code, __host__ __device__ functions and "
        "double-precision math unchanged."
    )

    def applies(self, variant: Variant, ctx: Context) -> str | None:
        edits, _ = _plan(variant.code)
        return None if edits else "no kernel calls single-precision math with an intrinsic"

    def apply_rule(self, variant: Variant, ctx: Context) -> Outcome:
        edits, details = _plan(variant.code)
        if not edits:
            return Outcome(None, "no kernel calls single-precision math with an intrinsic")
        code = kt.decode(apply_edits(kt.encode(variant.code), edits))
        return Outcome(variant.then(self.name, code, "rule", detail="; ".join(details)))

    def check(self, before: Variant, after: Variant, ctx: Context) -> list[Problem]:
        """A launched kernel calls fast intrinsics in place of precise math calls (more of
        the one, fewer of the other); intrinsics appear only inside kernels."""
        from cudaify.transforms import postcondition as pc

        problems = pc.common_problems(self.name, before.code, after.code)
        if problems:
            return problems
        fast, precise = pc.call_count(FAST_INTRINSICS), pc.call_count(PRECISE_MATH)
        if not any(
            fast(new, node) > (fast(old, was) if was is not None else 0)
            and (was is None or precise(new, node) < precise(old, was))
            for old, was, new, node in pc.kernel_pairs(before.code, after.code)
        ):
            problems.append(
                Problem("fast_math", "no launched kernel calls a fast intrinsic in place of math")
            )
        data = kt.encode(after.code)
        tree = cs.parse(data)
        kernel_ranges = [(k.node.start_byte, k.node.end_byte) for k in kt.kernels(data)]
        intrinsics = set(INTRINSICS.values())
        for name, call in cs.calls_in(tree.root_node, data):
            if name not in intrinsics:
                continue
            if not any(a <= call.start_byte < b for a, b in kernel_ranges):
                problems.append(
                    Problem(
                        "fast_math", f"'{name}' is used outside a kernel", line=cs.line_of(call)
                    )
                )
        return problems


def _plan(code: str) -> tuple[list[Edit], list[str]]:
    data = kt.encode(code)
    edits: list[Edit] = []
    details: list[str] = []
    for kernel in kt.kernels(data):
        counts: dict[str, int] = {}
        body = kernel.node.child_by_field_name("body")
        if body is None:
            continue
        reciprocal = _reciprocal_roots(body, data)
        inside = [(n.start_byte, n.end_byte) for n in reciprocal]
        for node in reciprocal:
            edits.append(_rsqrt_edit(node, data))
            counts["rsqrtf"] = counts.get("rsqrtf", 0) + 1
        for name, call in cs.calls_in(body, data):
            if name not in INTRINSICS or call.children[0].type != "identifier":
                continue
            if any(a <= call.start_byte < b for a, b in inside):
                continue  # inside a 1/sqrtf rewritten as a whole
            function = call.children[0]
            edits.append(Edit(function.start_byte, function.end_byte, INTRINSICS[name], name))
            counts[INTRINSICS[name]] = counts.get(INTRINSICS[name], 0) + 1
        if counts:
            used = ", ".join(f"{name} x{count}" for name, count in sorted(counts.items()))
            details.append(f"{kernel.name}: {used}")
    return edits, details


def _reciprocal_roots(body: Node, data: bytes) -> list[Node]:
    """`1.0f / sqrtf(x)` expressions."""
    found = []
    for node in cs.walk(body):
        if node.type != "binary_expression":
            continue
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        operator = node.child_by_field_name("operator")
        if left is None or right is None or operator is None or cs.text(operator, data) != "/":
            continue
        if cs.text(left, data).strip() not in _ONE or right.type != "call_expression":
            continue
        if cs.call_name(right, data) == "sqrtf" and right.children[0].type == "identifier":
            found.append(node)
    return found


def _rsqrt_edit(node: Node, data: bytes) -> Edit:
    call = node.child_by_field_name("right")
    assert call is not None
    arguments = call.child_by_field_name("arguments")
    text = cs.text(arguments, data) if arguments is not None else "()"
    return Edit(node.start_byte, node.end_byte, f"rsqrtf{text}", "1/sqrtf")
