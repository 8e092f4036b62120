"""`sort`: run a `std::sort` or `std::stable_sort` of arithmetic keys with CUB's radix sort.

A statement that is only the call is recognised: `std::sort(B, E);` or
`std::stable_sort(B, E);` (unqualified `sort` too, when the program defines no function of
that name), with an optional third argument that orders ascending (`std::less<T>()`,
`std::less<>{}`, a lambda `[](T a, T b) { return a < b; }`) or descending
(`std::greater<...>`, `return a > b;`). The range is a std::vector's `v.begin() [+ A]` to
`v.end()` or `v.begin() + B`, or a pointer's or an array's `p [+ A]` to `p + B`, over keys
of one arithmetic type; A and B have no side effects.

CUB's DeviceRadixSort is stable and orders keys as `<` does (it takes -0.0 and +0.0 as
equal), so its result is std::stable_sort's exactly, and std::sort's up to the order of
keys that compare equal, which only a -0.0 beside a +0.0 can show in the output; the run's
comparison with the original's output decides. NaN keys have no order under `<`: the same.

The keys move as offload's arrays move (declared, allocated, copied in, copied back and
freed in the block, each line at one indentation), so that `data_residency` keeps them on
the device across calls. CUB's spare buffer and temporary storage are static and only grow;
when the sorted keys end in the spare buffer, a kernel copies them back."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tree_sitter import Node, Tree

from cudaify.core import Problem, Variant
from cudaify.frontend.edits import Edit, apply_edits
from cudaify.frontend.facts import Program
from cudaify.transforms import csource as cs
from cudaify.transforms import pattern_support as ps
from cudaify.transforms.base import Context, Method, Outcome
from cudaify.transforms.kernel_codegen import device_free, device_malloc, where_kernels_go

SORTS = ("sort", "stable_sort")
CUB_INCLUDE = "#include <cub/device/device_radix_sort.cuh> /* cudaify: CUB's radix sort */"
HELPERS_MARKER = "/* ---- cudaify sort helpers ---- */"
HELPERS = (
    HELPERS_MARKER
    + """
/* Sorted keys that CUB left in its spare buffer, copied back into the keys' own. */
template <class CudaifyT>
__global__ void cudaify_copy_keys(CudaifyT *to, const CudaifyT *from, long long count)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;
         i += (long long)gridDim.x * blockDim.x)
        to[i] = from[i];
}

"""
)
THREADS = 256
_ORDER_FUNCTORS = {"less": False, "greater": True}


@dataclass(frozen=True)
class SortPlan:
    """One sort call statement and how its keys run through CUB."""

    function: str
    start: int  # the statement's bytes in the variant
    end: int
    indent: str
    call: str  # the call's text, for the comment and the description
    host: str  # the address of the first key
    count: str  # how many keys
    key_type: str
    descending: bool
    where: str  # file:line:col in the analysed program


class Sort(Method):
    name = "sort"
    summary = "run std::sort / std::stable_sort of arithmetic keys as CUB's device radix sort"
    category = "pattern"
    follows = ("sequential", "offload", "schedule", "reduction", "scan", "atomic_privatize")
    instruction = (
        "Replace the std::sort (or std::stable_sort) call over arithmetic keys by: copy the "
        "range to a device buffer (cudaMalloc, cudaMemcpy), sort it with "
        "cub::DeviceRadixSort::SortKeys (SortKeysDescending for std::greater) over a "
        "cub::DoubleBuffer (#include <cub/device/device_radix_sort.cuh>; call it once with "
        "NULL storage to get the temporary size, allocate it, call it again), copy the "
        "result back from the buffer CUB names current, free the buffers. Check every CUDA "
        "call. Change nothing else."
    )

    def applies(self, variant: Variant, ctx: Context) -> str | None:
        plans, reasons = plan_sorts(variant.code, ctx.program)
        return None if plans else (reasons[0] if reasons else "no std::sort call")

    def apply_rule(self, variant: Variant, ctx: Context) -> Outcome:
        plans, reasons = plan_sorts(variant.code, ctx.program)
        if not plans:
            return Outcome(None, reasons[0] if reasons else "no std::sort call")
        code = emit(variant.code, plans)
        functions = tuple(dict.fromkeys(plan.function for plan in plans))
        detail = "; ".join(describe(plan) for plan in plans)
        return Outcome(variant.then(self.name, code, "rule", detail=detail, offloaded=functions))

    def check(self, before: Variant, after: Variant, ctx: Context) -> list[Problem]:
        from cudaify.transforms import postcondition as pc

        common = pc.common_problems(self.name, before.code, after.code)
        return common or sort_problems(before.code, after.code)


# ---- finding the calls ---------------------------------------------------------------------


def sort_calls(tree: Tree, source: bytes) -> list[tuple[str, Node]]:
    """(function name, call) for every host call of std::sort or std::stable_sort that is a
    statement of its own."""
    user = set(cs.all_function_nodes(tree, source))
    found = []
    for name, definitions in cs.all_function_nodes(tree, source).items():
        for definition in definitions:
            head = cs.text(definition, source).split("{", 1)[0]
            if "__global__" in head or "__device__" in head:
                continue
            for node in cs.walk(definition):
                if node.type == "call_expression" and _is_std_sort(node, source, user):
                    found.append((name, node))
    return found


def _is_std_sort(call: Node, source: bytes, user: set[str]) -> bool:
    function = call.child_by_field_name("function")
    if function is None:
        return False
    spelled = cs.text(function, source).replace(" ", "")
    if spelled in ("std::sort", "std::stable_sort"):
        return True
    return spelled in SORTS and spelled not in user


def plan_sorts(code: str, program: Program) -> tuple[list[SortPlan], list[str]]:
    source = code.encode("utf-8", errors="surrogateescape")
    tree = cs.parse(source)
    plans: list[SortPlan] = []
    reasons: list[str] = []
    for function, call in sort_calls(tree, source):
        where = _where(program, function, cs.text(call, source), call)
        try:
            plans.append(_plan(tree, source, function, call, where))
        except ps.Refuse as refusal:
            reasons.append(
                f"{where}: sort: cannot run '{cs.text(call, source)}' on the GPU: {refusal}"
            )
    return plans, reasons


def _where(program: Program, function: str, call_text: str, call: Node) -> str:
    """The call's place in the analysed program (the variant's lines differ once other
    steps have rewritten it), looked for in its own function first (another function may
    sort the same range); the variant's place when its text is not found there."""
    source = program.source.encode("utf-8", errors="surrogateescape")
    needle = call_text.encode("utf-8", errors="surrogateescape")
    spans = [f.span for f in program.functions if f.name == function]
    found = source.find(needle, spans[0].start, spans[0].end) if spans else -1
    if found < 0:
        found = source.find(needle)
    if found < 0:
        return f"{program.path}:{call.start_point[0] + 1}:{call.start_point[1] + 1}"
    line = source.count(b"\n", 0, found) + 1
    column = found - (source.rfind(b"\n", 0, found) + 1) + 1
    return f"{program.path}:{line}:{column}"


def _plan(tree: Tree, source: bytes, function: str, call: Node, where: str) -> SortPlan:
    statement = call.parent
    if statement is None or statement.type != "expression_statement":
        raise ps.Refuse("its value is used (only a call that is a statement of its own is)")
    arguments = call.child_by_field_name("arguments")
    args = [a for a in arguments.named_children if a.type != "comment"] if arguments else []
    if len(args) not in (2, 3):
        raise ps.Refuse(
            f"it has {len(args)} arguments (an execution policy or none is not handled)"
        )
    descending = _descending(args[2], source) if len(args) == 3 else False
    host, count, key_type = _range(tree, source, args[0], args[1])
    if not ps.arithmetic(key_type):
        raise ps.Refuse(f"its keys are '{key_type}', not of an arithmetic type CUB sorts by bits")
    line_start = source.rfind(b"\n", 0, statement.start_byte) + 1
    indent = source[line_start : statement.start_byte].decode("utf-8", "surrogateescape")
    if indent.strip():
        raise ps.Refuse("another statement shares its line")
    return SortPlan(
        function=function,
        start=line_start,
        end=statement.end_byte,
        indent=indent,
        call=cs.text(call, source),
        host=host,
        count=count,
        key_type=key_type,
        descending=descending,
        where=where,
    )


def _descending(order: Node, source: bytes) -> bool:
    """Whether the comparator orders by `>`; ps.Refuse when it is not one of the plain
    orders (std::less / std::greater, or a lambda returning `a < b` or `a > b`)."""
    spelled = cs.text(order, source)
    functor = re.fullmatch(
        r"\s*(?:std::)?(less|greater)\s*<[^<>]*>\s*(?:\(\s*\)|\{\s*\})\s*", spelled
    )
    if functor:
        return _ORDER_FUNCTORS[functor.group(1)]
    if order.type == "lambda_expression":
        return _lambda_order(order, source)
    raise ps.Refuse(
        f"its comparator '{spelled}' is not std::less, std::greater or a plain '<' or '>'"
    )


def _lambda_order(lambda_node: Node, source: bytes) -> bool:
    declarator = lambda_node.child_by_field_name("declarator")
    body = lambda_node.child_by_field_name("body")
    params = declarator.child_by_field_name("parameters") if declarator is not None else None
    names = []
    for param in params.named_children if params is not None else []:
        found = [d.name for d in cs.declared_names(param, source, "param")]
        names += found
    statements = [s for s in body.named_children if s.type != "comment"] if body else []
    spelled = cs.text(lambda_node, source)
    if len(names) != 2 or len(statements) != 1 or statements[0].type != "return_statement":
        raise ps.Refuse(
            f"its comparator '{spelled}' is not a lambda of two keys that returns a < b or a > b"
        )
    value = statements[0].named_children[0] if statements[0].named_children else None
    compared = value.child_by_field_name("operator") if value is not None else None
    if value is None or value.type != "binary_expression" or compared is None:
        raise ps.Refuse(f"its comparator '{spelled}' does not return a plain comparison")
    left = cs.text(value.child_by_field_name("left"), source).strip()
    right = cs.text(value.child_by_field_name("right"), source).strip()
    operator = cs.text(compared, source)
    if operator not in ("<", ">") or {left, right} != set(names) or left == right:
        raise ps.Refuse(f"its comparator '{spelled}' is not a plain '<' or '>' of its two keys")
    return (operator == ">") == (left == names[0])


def _range(tree: Tree, source: bytes, first: Node, last: Node) -> tuple[str, str, str]:
    """(address of the first key, how many keys, the key type) of [first, last)."""
    base, low = _offset(first, source)
    end_base, high = _offset(last, source)
    for part in (low, high):
        if part is not None:
            _require_pure(part, source)
    container = _member(base, source, ("begin", "cbegin"))
    if container is not None:
        declared = _declared(tree, source, container, base)
        element = ps.indexed_element(declared) if declared.kind != "pointer" else None
        if element is None or "vector" not in declared.base:
            raise ps.Refuse(f"'{container}' is not a std::vector")
        host = f"{container}.data()" + (f" + ({cs.text(low, source)})" if low is not None else "")
        start = f"({cs.text(low, source)})" if low is not None else "0"
        if _member(end_base, source, ("end", "cend")) == container and high is None:
            return host, _minus(f"(long long)({container}.size())", start), element.strip()
        if _member(end_base, source, ("begin", "cbegin")) == container and high is not None:
            return host, _minus(f"(long long)({cs.text(high, source)})", start), element.strip()
        raise ps.Refuse(f"its range does not end at {container}.end() or {container}.begin() + n")
    if base.type != "identifier" or end_base.type != "identifier" or high is None:
        raise ps.Refuse("its range is neither a std::vector's begin()..end() nor p..p + n")
    pointer = cs.text(base, source)
    if cs.text(end_base, source) != pointer:
        raise ps.Refuse("its range starts and ends in different arrays")
    declared = _declared(tree, source, pointer, base)
    if declared.kind not in ("pointer", "array"):
        raise ps.Refuse(f"'{pointer}' is not a pointer or an array")
    start = f"({cs.text(low, source)})" if low is not None else "0"
    host = pointer + (f" + {start}" if low is not None else "")
    return host, _minus(f"(long long)({cs.text(high, source)})", start), declared.base.strip()


def _minus(end: str, start: str) -> str:
    return end if start == "0" else f"{end} - {start}"


def _offset(node: Node, source: bytes) -> tuple[Node, Node | None]:
    """`base + offset` split in two; other expressions are their own base."""
    while node.type == "parenthesized_expression" and node.named_children:
        node = node.named_children[0]
    operator = node.child_by_field_name("operator")
    if (
        node.type == "binary_expression"
        and operator is not None
        and cs.text(operator, source) == "+"
    ):
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if left is not None and right is not None:
            return left, right
    return node, None


def _member(node: Node, source: bytes, members: tuple[str, ...]) -> str | None:
    """`v` of `v.begin()` (members named in `members`, no arguments), else None."""
    if node.type != "call_expression":
        return None
    function = node.child_by_field_name("function")
    arguments = node.child_by_field_name("arguments")
    if function is None or function.type != "field_expression" or arguments is None:
        return None
    if arguments.named_children:
        return None
    target = function.child_by_field_name("argument")
    field = function.child_by_field_name("field")
    if target is None or field is None or target.type != "identifier":
        return None
    if cs.text(field, source) not in members or cs.text(function, source).count("->"):
        return None
    return cs.text(target, source)


def _declared(tree: Tree, source: bytes, name: str, at: Node) -> cs.Declared:
    declared = cs.visible(tree, source, name, at.start_byte)
    if declared is None:
        raise ps.Refuse(f"'{name}' is not declared where it is sorted")
    return declared


def _require_pure(node: Node, source: bytes) -> None:
    """An offset evaluated once for the copies: no assignment, increment or call other
    than a container's size()."""
    for part in cs.walk(node):
        if part.type in ("assignment_expression", "update_expression"):
            raise ps.Refuse(f"its range bound '{cs.text(node, source)}' has a side effect")
        if part.type == "call_expression" and _member(part, source, ("size",)) is None:
            raise ps.Refuse(f"its range bound '{cs.text(node, source)}' calls a function")


# ---- the rewrite -------------------------------------------------------------------------


def emit(code: str, plans: list[SortPlan]) -> str:
    source = code.encode("utf-8", errors="surrogateescape")
    tree = cs.parse(source)
    definitions = cs.function_nodes(tree, source)
    positions = [
        where_kernels_go(tree, source, definitions[p.function].start_byte)
        for p in plans
        if p.function in definitions
    ]
    first = min(positions) if positions else min(p.start for p in plans)
    edits, text = ps.prelude_edits(source, first, (CUB_INCLUDE,))
    if HELPERS_MARKER.encode() not in source:
        text += HELPERS
    edits.append(Edit(first, first, text, "runtime and sort helpers"))
    for plan in plans:
        edits.append(Edit(plan.start, plan.end, _block(plan), f"{plan.call} runs on the GPU"))
    return apply_edits(source, edits).decode("utf-8", errors="surrogateescape")


def _block(plan: SortPlan) -> str:
    """The call's replacement, offload's transfer lines around CUB's sort."""
    key, count, host = plan.key_type, "cudaify_sort_count", plan.host
    size = f"(size_t)({count}) * sizeof({key})"
    sort = "SortKeysDescending" if plan.descending else "SortKeys"
    cub = f"cub::DeviceRadixSort::{sort}"
    inner = [
        f"{key} *d_cudaify_keys = NULL;",
        device_malloc("d_cudaify_keys", size),
        f"CUDAIFY_CHECK(cudaMemcpy(d_cudaify_keys, {host}, {size}, cudaMemcpyHostToDevice));",
        "/* CUB's spare buffer and temporary storage: static, they only grow */",
        f"static {key} *cudaify_spare = NULL;",
        "static long long cudaify_spare_count = 0;",
        f"if ({count} > cudaify_spare_count) {{",
        "    if (cudaify_spare != NULL)",
        "        CUDAIFY_CHECK(cudaFree(cudaify_spare));",
        f"    CUDAIFY_CHECK(cudaMalloc((void **)&cudaify_spare, {size}));",
        f"    cudaify_spare_count = {count};",
        "}",
        f"cub::DoubleBuffer<{key}> cudaify_buffers(d_cudaify_keys, cudaify_spare);",
        *ps.cub_with_storage(
            lambda memory: f"{cub}({memory}, cudaify_storage_bytes, cudaify_buffers, {count})",
            "cudaify_storage",
            "cudaify_storage_bytes",
            "cudaify_storage_capacity",
        ),
        "if (cudaify_buffers.Current() != d_cudaify_keys) {",
        f"    cudaify_copy_keys<<<cudaify_blocks({count}, {THREADS}, 2147483647u), {THREADS}>>>("
        f"d_cudaify_keys, cudaify_buffers.Current(), {count});",
        "    CUDAIFY_CHECK(cudaGetLastError());",
        "}",
        f"CUDAIFY_CHECK(cudaMemcpy({host}, d_cudaify_keys, {size}, cudaMemcpyDeviceToHost));",
        device_free("d_cudaify_keys"),
    ]
    ind, step = plan.indent, "    "
    order = "descending" if plan.descending else "ascending"
    lines = [
        f"{ind}{{",
        f"{ind}{step}/* cudaify: {plan.call} runs on the GPU as CUB's radix sort ({order}; "
        "stable, keys ordered as '<' orders them) */",
        f"{ind}{step}const long long {count} = {plan.count};",
        f"{ind}{step}if ({count} > 1) {{",
        *[f"{ind}{step}{step}{line}" for line in inner],
        f"{ind}{step}}}",
        f"{ind}}}",
    ]
    return "\n".join(lines)


def describe(plan: SortPlan) -> str:
    order = "descending" if plan.descending else "ascending"
    return (
        f"{plan.where}: {plan.call} in {plan.function}() as CUB's radix sort of "
        f"{plan.key_type} keys ({order})"
    )


# ---- the postcondition -------------------------------------------------------------------


def sort_problems(before: str, after: str) -> list[Problem]:
    """Each function has as many host sort calls fewer as it has new device radix sorts that
    copy keys in and out of the device around a CUB call with real storage; and at least
    one call went."""
    counts_before = _per_function(before)
    counts_after = _per_function(after)
    removed_total = 0
    problems = []
    for function, (sorts, devices) in counts_before.items():
        sorts_after, devices_after = counts_after.get(function, (0, 0))
        removed = sorts - sorts_after
        if removed < 0:
            problems.append(Problem("sort", f"{function}() sorts on the host more than before"))
        elif devices_after - devices < removed:
            problems.append(
                Problem(
                    "sort", f"{function}() lost {removed} sort(s) but has no device sort for them"
                )
            )
        removed_total += max(removed, 0)
    if removed_total == 0:
        problems.append(Problem("sort", "no std::sort call was replaced by a device sort"))
    return problems


def _per_function(code: str) -> dict[str, tuple[int, int]]:
    """(host sort calls, device sorts) per function. A device sort is a CUB radix sort call
    given real storage (not the size query) in a block that also copies to the device and
    back."""
    source = code.encode("utf-8", errors="surrogateescape")
    tree = cs.parse(source)
    counts: dict[str, tuple[int, int]] = {}
    host_sorts: dict[str, int] = {}
    for function, _ in sort_calls(tree, source):
        host_sorts[function] = host_sorts.get(function, 0) + 1
    for function, definition in cs.function_nodes(tree, source).items():
        devices = 0
        for node in cs.walk(definition):
            if node.type == "call_expression" and _is_device_sort(node, source):
                devices += 1
        counts[function] = (host_sorts.get(function, 0), devices)
    return counts


def _is_device_sort(call: Node, source: bytes) -> bool:
    function = call.child_by_field_name("function")
    if function is None or not re.fullmatch(
        r"cub::DeviceRadixSort::SortKeys(?:Descending)?", cs.text(function, source).replace(" ", "")
    ):
        return False
    arguments = call.child_by_field_name("arguments")
    first = (
        arguments.named_children[0] if arguments is not None and arguments.named_children else None
    )
    if first is None or cs.text(first, source).strip() in ("nullptr", "NULL", "0"):
        return False
    block = call.parent
    while block is not None and block.type != "compound_statement":
        block = block.parent
    if block is None:
        return False
    copies = [
        cs.text(n, source)
        for n in cs.walk(block)
        if n.type == "call_expression" and cs.call_name(n, source) == "cudaMemcpy"
    ]
    return any("cudaMemcpyHostToDevice" in c for c in copies) and any(
        "cudaMemcpyDeviceToHost" in c for c in copies
    )
