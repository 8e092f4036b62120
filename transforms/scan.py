"""`scan`: run a prefix-sum loop with CUB's device-wide scan.

Two spellings are recognised, with `i` the loop variable (step 1) and E any expression
free of side effects that reads neither the accumulator nor the output:
- an accumulator: `acc += E; out[i] = acc;` (inclusive) or `out[i] = acc; acc += E;`
  (exclusive); `acc` ends with its sequential final value;
- the output's own previous element: `out[i] = out[i - 1] + E;` (or `E + out[i - 1]`),
  where `out[first - 1]` is the starting value.
A first kernel evaluates the terms E, `cub::DeviceScan::InclusiveSum` scans them, a second
kernel adds the starting value and stores the results (shifted by one for the exclusive
form). Fewer passes over memory where the loop allows (a scan is bound by the bytes it
moves): when E is an element `a[i]` of an array of the sums' type, CUB reads it where it
lies (no terms kernel); when an inclusive form stores the sums' own type,
`cub::DeviceScan::InclusiveScanInit` seeds the scan with the starting value (the
accumulator's, or the recurrence's `out[first - 1]`, copied from the device) and writes the
output itself (no store kernel). Both: one pass, reading a and writing out.
The arrays move as offload's launches move theirs: each one (the output included) is
declared, allocated, copied in, copied back when written and freed in the launch's block, so
that a following `data_residency` turns the pairs into maps and keeps them on the device
across calls. The recurrence's starting value `out[first - 1]` lies in the output's mapped
range and is read from the output's device copy (by the store kernel, or copied to the host
to seed CUB): the block touches no host memory outside its transfers, which is what lets
`data_residency` run it inside a residency scope. Only the terms, sums and CUB's temporary
storage are the scan's own: function-local static buffers that only grow, so a scan called
in a loop does not allocate them again (a cudaFree waits for the device, and 128 MB
allocations are not free).
The affine recurrence `out[i] = m * out[i - 1] + E` is a scan of the maps x -> m x + E
under composition. CUB's single-pass scan of such a struct ran at 0.9 TB/s of the bytes
the loop must move on an H200 (its tile states are not one machine word), so it runs as
`cudaify_scan` (runtime/scan_passes.cuh): two passes over the items (each block composes
its share; each block composes the shares' totals before its own, then scans its share
again from there), the terms computed where they are read (a functor of the index, no
terms buffer) and the results stored as the loop stores them (a functor, no sums buffer).
It reads the inputs twice and writes the output once: 0.25 ms for 2^24 doubles where the
three kernels around CUB's scan took 0.72 ms (in three passes, then; 0.19 ms in two)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from tree_sitter import Node

from cudaify.core import Problem, Variant
from cudaify.frontend.facts import ArrayData, Function, Loop, Program
from cudaify.transforms import csource as cs
from cudaify.transforms import pattern_support as ps
from cudaify.transforms.base import Context
from cudaify.transforms.kernel_codegen import (
    QUALIFIERS,
    Level,
    array_param,
    byte_size,
    device_helpers,
    element_type,
    fresh_name,
    grid_stride_header,
    host_address,
    kernel_argument,
    kernel_arrays,
    line_indent,
    mapped_levels,
    narrowed,
    paren,
    require_enough_work,
    require_no_array_sizeof,
    require_no_jumps,
    value_at,
)
from cudaify.transforms.prelude import runtime_text

THREADS = 256
# the two-pass scan of a struct (the affine recurrence's maps), and its first line (which
# still says three: a block's marker is the same in every version of it)
SCAN_PASSES = runtime_text("scan_passes.cuh")
SCAN_PASSES_MARKER = "/* ---- cudaify scan in three passes ---- */"
SCAN_PASSES_CALL = "cudaify_scan"
CUB_INCLUDE = "#include <cub/device/device_scan.cuh> /* cudaify: CUB's device-wide scan */"
# x[i] = m * x[i-1] + e is a scan of the affine maps x -> m x + e under composition.
AFFINE_HELPERS = """/* cudaify: x -> cudaify_mul * x + cudaify_add; a scan composes such maps */
template <class CudaifyT>
struct cudaify_affine {
    CudaifyT cudaify_mul, cudaify_add;
};
struct cudaify_compose {
    template <class CudaifyT>
    __host__ __device__ cudaify_affine<CudaifyT>
    operator()(const cudaify_affine<CudaifyT> &first, const cudaify_affine<CudaifyT> &then) const
    {
        return {then.cudaify_mul * first.cudaify_mul,
                then.cudaify_mul * first.cudaify_add + then.cudaify_add};
    }
};"""


@dataclass(frozen=True)
class ScanForm:
    """What the loop computes: out[i] = start + (sum of the terms up to i)."""

    output: str  # the array written at [i]
    term: Node  # E
    accumulator: str | None  # the scalar of the accumulator form
    exclusive: bool
    multiplier: Node | None = None  # m of out[i] = m * out[i - 1] + E


# the sum CUB's InclusiveScanInit takes: libcu++'s plus from CUDA 12 on, which CUB knows for
# a sum and scans with its tuned policy (on an H200, 2^24 doubles: 87 us a call against 99
# us with a functor of its own, 2^24 long longs 81 against 98 us, the same sums); a functor
# of its own before
SUM_HELPER = """/* cudaify: the sum a seeded CUB scan adds with (libcu++'s: CUB tunes for it) */
#if __CUDACC_VER_MAJOR__ >= 12
#include <cuda/std/functional>
typedef ::cuda::std::plus<> cudaify_sum;
#else
struct cudaify_sum {
    template <class CudaifyT>
    __host__ __device__ CudaifyT operator()(const CudaifyT &a, const CudaifyT &b) const
    {
        return a + b;
    }
};
#endif"""


@dataclass(frozen=True)
class ScanPlan:
    located: ps.Located
    level: Level
    form: ScanForm
    term: str
    arrays: tuple[ArrayData, ...]  # read by the terms
    output: ArrayData
    scalars: tuple[tuple[str, str], ...]
    helpers: tuple[str, ...]
    value_type: str  # the type the sums are taken in
    scan_type: str  # the scanned element: the value type, or its affine map
    multiplier: str
    output_type: str
    names: dict[str, str]
    devices: tuple[tuple[str, str], ...]
    indent: str
    # the array CUB scans as it lies (the terms are its elements), or None: a terms kernel
    read_in_place: ArrayData | None = None
    # CUB writes the output, seeded with the starting value: no store kernel
    stores_directly: bool = False


class Scan(ps.LoopPatternMethod):
    name = "scan"
    summary = "run a prefix-sum loop as terms, CUB's device-wide inclusive sum, and stores"
    category = "pattern"
    follows = ("sequential", "offload")
    instruction = (
        "Replace the prefix-sum loop (acc += a[i]; out[i] = acc; or out[i] = out[i-1] + a[i]) "
        "by a kernel that computes every term into a device buffer, "
        "cub::DeviceScan::InclusiveSum (or ExclusiveSum) over it (#include <cub/cub.cuh>; "
        "call it once with NULL storage to get the temporary size, allocate it, call it "
        "again), and a kernel that adds the starting value and stores the results. Write "
        "the final accumulator back when the program uses it after the loop. Check every "
        "CUDA call."
    )

    nothing = "no scan loop outside main"

    def plans(self, variant: Variant, program: Program) -> tuple[list[Any], list[str]]:
        return _plans(variant, program)

    def emit(self, code: str, plans: list[Any]) -> str:
        return _emit(code, plans)

    def describe_plan(self, plan: Any) -> str:
        return _describe(plan)

    def check(self, before: Variant, after: Variant, ctx: Context) -> list[Problem]:
        """A host function lost a loop and calls a device-wide scan in its place, over the
        loop's arrays: the scan's arguments are their device copies (through transfers and
        the kernels that fill them), or the statement holding the scan moves them. The
        scan is CUB's or thrust's, or `cudaify_scan` where the program holds that helper
        exactly as cudaify ships it (runtime/scan_passes.cuh)."""
        from cudaify.transforms import postcondition as pc

        common = pc.common_problems(self.name, before.code, after.code)
        if common:
            return common
        old, new = pc.parsed(before.code), pc.parsed(after.code)
        replaced = pc.replaced_loops(old, new)
        for name, call in pc.calls(new.root, new):
            passes = name == SCAN_PASSES_CALL and pc.shipped(new, SCAN_PASSES)
            if not SCAN_CALL.fullmatch(name) and not passes:
                continue
            function = cs.enclosing_function(call)
            if function is None or pc.is_kernel(function) or pc.is_device_only(function):
                continue
            scanned = {n for arg in pc.arguments(call) for n in pc.identifiers(arg, new)}
            around = pc.identifiers(pc.statement_in(function, call), new)
            for owner in pc.reaching_functions(old, new, pc.function_of(call, new)):
                written = {
                    a for loop in replaced.get(owner, []) for a in pc.arrays_written(loop, old)
                }
                flows = pc.aliases(new, function, written, through_launches=True)
                if written & around or flows & scanned:
                    return []
        return [
            Problem(
                "scan",
                "no device-wide scan (cub::DeviceScan, or cudaify_scan as shipped) over a "
                "replaced loop's arrays is made",
            )
        ]


# cub's device-wide scans, and thrust's run with a device policy or on device vectors
SCAN_CALL = re.compile(
    r"cub::DeviceScan::(?:Inclusive|Exclusive)(?:Sum|Scan)(?:Init)?(?:ByKey)?"
    r"|thrust::(?:inclusive|exclusive)_scan(?:_by_key)?"
)


def _describe(plan: ScanPlan) -> str:
    loop = plan.located.loop
    kind = "exclusive" if plan.form.exclusive else "inclusive"
    return (
        f"{plan.located.function.name}: loop '{loop.var}' at line {loop.line} -> {kind} "
        f"scan of {plan.form.output}"
    )


def _plans(variant: Variant, program: Program) -> tuple[list[ScanPlan], list[str]]:
    return ps.plan_loops(variant.code, program, ("scan",), "scan", _plan)


def _plan(
    code: str, program: Program, function: Function, outer: Loop, loop: Loop, taken: set[str]
) -> ScanPlan:
    if loop.early_exit or loop.children:
        raise ps.Refuse("the loop has inner loops or can exit early")
    if loop.step != 1:
        raise ps.Refuse(f"the loop's step is {loop.step}, not 1")
    require_enough_work([loop])
    located = ps.locate(code, program, function, outer, loop)
    nest, tree, source = located.node, located.tree, located.source
    require_no_jumps(nest)
    form = _form(located)
    every = ps.unique_arrays(
        tuple(narrowed(a, loop) for a in kernel_arrays(function, outer, nest, tree, source))
    )
    output = next((a for a in every if a.name == form.output), None)
    if output is None or output.dims:
        raise ps.Refuse(f"'{form.output}' is not a one-dimensional array the analysis knows")
    parts = [form.term] + ([form.multiplier] if form.multiplier is not None else [])
    term_names = {cs.text(n, source) for part in parts for n in cs.identifiers_in(part)}
    arrays = tuple(a for a in every if a.name != form.output and a.name in term_names)
    require_no_array_sizeof(nest, every, source)
    output_type = element_type(output)
    value_type = _value_type(located, form, output_type)
    if form.multiplier is not None and value_type not in ("float", "double"):
        raise ps.Refuse(f"the affine recurrence is on {value_type}, not float or double")
    if ps.integral_type(value_type) and not ps.integral_value(form.term, located):
        raise ps.Refuse(
            f"cannot prove that '{cs.text(form.term, source)}' is an integer, as the sums are "
            f"{value_type}"
        )
    (level,) = mapped_levels([located.loop], tree, source, taken)
    skip = {form.output} | ({form.accumulator} if form.accumulator else set())
    scalars, privates = ps.scalars_of(located, arrays, skip, {loop.var})
    if privates:
        raise ps.Refuse(f"the loop also writes '{privates[0][1]}'")
    keys: tuple[str, ...] = ("terms", "sums", "storage", "storage_bytes", "start")
    keys += ("total", "blocks", "capacity", "storage_capacity", "totals")
    names = {key: fresh_name(key, taken) for key in keys}
    names["terms_kernel"] = fresh_name(f"{function.name}_scan_terms", taken)
    names["store_kernel"] = fresh_name(f"{function.name}_scan_store", taken)
    term = cs.text(form.term, source)
    plain = form.multiplier is None
    return ScanPlan(
        located=located,
        level=level,
        form=form,
        term=term,
        arrays=arrays,
        output=output,
        scalars=scalars,
        helpers=device_helpers(nest, tree, source, program),
        value_type=value_type,
        scan_type=value_type if form.multiplier is None else f"cudaify_affine<{value_type}>",
        multiplier="" if form.multiplier is None else cs.text(form.multiplier, source),
        output_type=output_type,
        names=names,
        devices=tuple((a.name, fresh_name(f"d_{a.name}", taken)) for a in arrays + (output,)),
        indent=line_indent(source, located.loop.span.start),
        read_in_place=_element_of(term, arrays, loop.var, value_type) if plain else None,
        stores_directly=plain and not form.exclusive and output_type == value_type,
    )


def _element_of(
    term: str, arrays: tuple[ArrayData, ...], var: str, value_type: str
) -> ArrayData | None:
    """The one-dimensional array whose element at the loop variable is the whole term, in
    the sums' own type (`a[i]`, a of long, summed as long), or None."""
    match = re.fullmatch(rf"\s*(\w+)\s*\[\s*{re.escape(var)}\s*\]\s*", term)
    if match is None:
        return None
    found = next((a for a in arrays if a.name == match.group(1)), None)
    if found is None or found.dims or element_type(found) != value_type:
        return None
    return found


def _statements(located: ps.Located) -> list[Node]:
    body = located.node.child_by_field_name("body")
    if body is None:
        return []
    if body.type == "compound_statement":
        inner = [c for c in body.named_children if c.type != "comment"]
    else:
        inner = [body]
    if not all(s.type == "expression_statement" and s.named_children for s in inner):
        raise ps.Refuse("the body is not a sequence of plain expression statements")
    return [s.named_children[0] for s in inner]


def _form(located: ps.Located) -> ScanForm:
    statements = _statements(located)
    if len(statements) == 2:
        return _accumulator_form(statements, located)
    if len(statements) == 1:
        return _recurrence_form(statements[0], located)
    raise ps.Refuse(f"the body has {len(statements)} statements; a scan has one or two")


def _assignment(node: Node, source: bytes) -> tuple[str, Node, Node] | None:
    if node.type != "assignment_expression":
        return None
    operator = node.child_by_field_name("operator")
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    if operator is None or left is None or right is None:
        return None
    return cs.text(operator, source), left, right


def _store_at(left: Node, located: ps.Located, offset: int = 0) -> str | None:
    """The array name when `left` is `a[i]` (or `a[i - 1]` for offset -1)."""
    if left.type != "subscript_expression":
        return None
    array = left.child_by_field_name("argument")
    index = left.child_by_field_name("index")
    if index is None:
        indices = left.child_by_field_name("indices")
        index = (
            indices.named_children[0] if indices is not None and indices.named_children else None
        )
    if array is None or array.type != "identifier" or index is None:
        return None
    spelled = re.sub(r"\s+", "", cs.text(index, located.source))
    wanted = located.loop.var + (f"-{-offset}" if offset < 0 else "")
    return cs.text(array, located.source) if spelled == wanted else None


def _accumulator_form(statements: list[Node], located: ps.Located) -> ScanForm:
    source = located.source
    found = [_assignment(s, source) for s in statements]
    parts = [part for part in found if part is not None]
    if len(parts) != 2:
        raise ps.Refuse("the body's statements are not assignments")
    for update_at, store_at in ((0, 1), (1, 0)):
        op, acc_node, term = parts[update_at]
        store_op, left, value = parts[store_at]
        if op != "+=" or store_op != "=" or acc_node.type != "identifier":
            continue
        accumulator = cs.text(acc_node, source)
        output = _store_at(left, located)
        if output is None or cs.text(value, source).strip() != accumulator:
            continue
        _require_pure_term(term, located, {accumulator, output})
        return ScanForm(output, term, accumulator, exclusive=store_at < update_at)
    raise ps.Refuse("the body is not `acc += E; out[i] = acc;` (or the exclusive order)")


def _recurrence_form(statement: Node, located: ps.Located) -> ScanForm:
    source = located.source
    parts = _assignment(statement, source)
    if parts is None or parts[0] != "=":
        raise ps.Refuse("the body is not an assignment")
    _, left, right = parts
    output = _store_at(left, located)
    if output is None or right.type != "binary_expression":
        raise ps.Refuse("the body is not `out[i] = out[i - 1] + E`")
    operator = right.child_by_field_name("operator")
    a, b = right.child_by_field_name("left"), right.child_by_field_name("right")
    if operator is None or cs.text(operator, source) != "+" or a is None or b is None:
        raise ps.Refuse("the recurrence is not a sum (out[i] = out[i - 1] + E)")
    for previous, term in ((a, b), (b, a)):
        if _store_at(previous, located, -1) == output:
            _require_pure_term(term, located, {output})
            return ScanForm(output, term, None, exclusive=False)
    for product, term in ((a, b), (b, a)):
        multiplier = _times_previous(product, located, output)
        if multiplier is not None:
            _require_pure_term(term, located, {output})
            _require_pure_term(multiplier, located, {output})
            return ScanForm(output, term, None, exclusive=False, multiplier=multiplier)
    raise ps.Refuse("the recurrence is not out[i - 1] + E or m * out[i - 1] + E")


def _times_previous(node: Node, located: ps.Located, output: str) -> Node | None:
    """m when `node` is `m * out[i - 1]` or `out[i - 1] * m`."""
    while node.type == "parenthesized_expression" and node.named_children:
        node = node.named_children[0]
    operator = node.child_by_field_name("operator")
    if node.type != "binary_expression" or operator is None:
        return None
    if cs.text(operator, located.source) != "*":
        return None
    a, b = node.child_by_field_name("left"), node.child_by_field_name("right")
    for previous, multiplier in ((a, b), (b, a)):
        if previous is not None and _store_at(previous, located, -1) == output:
            return multiplier
    return None


def _require_pure_term(term: Node, located: ps.Located, forbidden: set[str]) -> None:
    source = located.source
    for node in cs.walk(term):
        if node.type in ("assignment_expression", "update_expression", "comma_expression"):
            raise ps.Refuse(f"line {cs.line_of(node)}: the term has a side effect")
        if node.type == "identifier" and cs.text(node, source) in forbidden:
            raise ps.Refuse(
                f"line {cs.line_of(node)}: the term reads '{cs.text(node, source)}', "
                "which the scan writes"
            )


def _value_type(located: ps.Located, form: ScanForm, output_type: str) -> str:
    if form.accumulator is None:
        return output_type
    declared = cs.visible(located.tree, located.source, form.accumulator, located.node.start_byte)
    if declared is None or declared.kind not in ("scalar", "reference"):
        raise ps.Refuse(f"the declaration of '{form.accumulator}' was not found")
    if declared.scope == "global":
        raise ps.Refuse(f"the accumulator '{form.accumulator}' is a global variable")
    spelled = " ".join(QUALIFIERS.sub("", declared.base).split())
    if "auto" in spelled.split() or "static" in spelled.split():
        raise ps.Refuse(f"the accumulator has type '{spelled}'")
    return spelled


# ---- emitting ---------------------------------------------------------------------------


def _emit(code: str, plans: list[ScanPlan]) -> str:
    includes: tuple[str, ...] = (CUB_INCLUDE,) if any(not p.multiplier for p in plans) else ()
    includes += (AFFINE_HELPERS, SCAN_PASSES) if any(p.multiplier for p in plans) else ()
    includes += (SUM_HELPER,) if any(p.stores_directly for p in plans) else ()
    return ps.rewrite_loops(code, plans, _kernels, _host_text, "the scan runs on the GPU", includes)


def _kernels(plan: ScanPlan) -> str:
    if plan.multiplier:
        return _functors(plan)
    loop, names, level = plan.located.loop, plan.names, plan.level
    params = _term_inputs(plan)
    params += [f"long long {level.trips}", f"{plan.scan_type} *{names['terms']}"]
    out = plan.form.output
    store_params = [f"const {plan.scan_type} *{names['sums']}"]
    if plan.form.accumulator is not None:
        store_params.append(f"{plan.value_type} {names['start']}")
    store_params += [f"long long {level.trips}", f"{plan.output_type} *{out}"]
    t = level.index
    if plan.multiplier:
        at = f"{names['sums']}[{t}]"
        stored = f"{at}.cudaify_mul * {names['start']} + {at}.cudaify_add"
    elif plan.form.exclusive:
        stored = f"{t} > 0 ? {names['start']} + {names['sums']}[{t} - 1] : {names['start']}"
    else:
        stored = f"{names['start']} + {names['sums']}[{t}]"
    header = grid_stride_header(level, "    ")
    lines: list[str] = []
    if plan.read_in_place is None:
        lines += [
            f"/* Scan loop '{loop.var}' of {plan.located.function.name}() (line {loop.line}): "
            "the terms of the prefix sum, one per thread. */",
            f"__global__ void {names['terms_kernel']}({', '.join(params)})",
            "{",
            *header,
            f"        {names['terms']}[{t}] = {_term_value(plan)};",
            "    }",
            "}",
            "",
        ]
    if plan.stores_directly:
        return "\n".join(lines) + "\n" if lines else ""
    lines += [
        f"/* The starting value plus the scanned terms, stored as the loop stores them; "
        f"{out} points at the first element the loop writes. */",
        f"__global__ void {names['store_kernel']}({', '.join(store_params)})",
        "{",
    ]
    if plan.form.accumulator is None:
        lines.append(
            f"    const {plan.value_type} {names['start']} = {out}[-1]; "
            "/* the element before the first one written */"
        )
    lines += [
        *header[:2],
        f"        {out}[{t}] = ({plan.output_type})({stored});",
        "    }",
        "}",
    ]
    return "\n".join(lines) + "\n\n"


def _functors(plan: ScanPlan) -> str:
    """The two-pass scan's term (the affine map of iteration t, read from the arrays
    where it is needed) and store (the starting value mapped by the composition of the
    maps up to t, stored as the loop stores it; `out` points at the first element the loop
    writes, so the start is out[-1])."""
    loop, names, level = plan.located.loop, plan.names, plan.level
    t, out = level.index, plan.form.output
    members = _term_inputs(plan)
    sums = names["sums"]
    stored = f"{sums}.cudaify_mul * {out}[-1] + {sums}.cudaify_add"
    return (
        "\n".join(
            [
                f"/* Scan loop '{loop.var}' of {plan.located.function.name}() (line {loop.line}): "
                "its iteration t's map, the term of the scan. */",
                f"struct {names['terms_kernel']} {{",
                *(f"    {member};" for member in members),
                f"    __device__ {plan.scan_type} operator()(long long {t}) const",
                "    {",
                f"        {level.var_type} {loop.var} = {value_at(level, t)};",
                f"        return {_term_value(plan)};",
                "    }",
                "};",
                "",
                f"/* The starting value {out}[-1] mapped by the maps up to iteration t, stored as "
                f"the loop stores it ({out} points at the first element the loop writes). */",
                f"struct {names['store_kernel']} {{",
                f"    {plan.output_type} *{out};",
                f"    __device__ void operator()(long long {t}, const {plan.scan_type} &{sums})"
                " const",
                "    {",
                f"        {out}[{t}] = ({plan.output_type})({stored});",
                "    }",
                "};",
            ]
        )
        + "\n\n"
    )


def _term_inputs(plan: ScanPlan) -> list[str]:
    """What a term reads, declared: the terms kernel's parameters, the term functor's
    members (the arrays, then the loop's scalars)."""
    return [array_param(a) for a in plan.arrays] + [f"{t} {name}" for t, name in plan.scalars]


def _term_arguments(plan: ScanPlan, devices: dict[str, str]) -> list[str]:
    """The values `_term_inputs` take at the launch or in the functor: the device copies
    (indexed as the host arrays), then the scalars."""
    return [kernel_argument(a, devices[a.name]) for a in plan.arrays] + [
        name for _, name in plan.scalars
    ]


def _term_value(plan: ScanPlan) -> str:
    value = f"({plan.value_type})({plan.term})"
    if not plan.multiplier:
        return value
    return f"{plan.scan_type}{{({plan.value_type})({plan.multiplier}), {value}}}"


def _host_text(plan: ScanPlan) -> str:
    ind = plan.indent + "    "
    inner = ind + "    "
    loop, level = plan.located.loop, plan.level
    inclusive = 1 if loop.upper_inclusive else 0
    if plan.multiplier:
        steps = [f"{SCAN_PASSES_CALL} (two passes)"]
    else:
        steps = [] if plan.read_in_place is not None else [plan.names["terms_kernel"]]
        steps.append(f"cub::DeviceScan::{_cub_function(plan)}")
        steps += [] if plan.stores_directly else [plan.names["store_kernel"]]
    lines = [
        "{",
        f"{ind}/* cudaify: this scan runs on the GPU: {', '.join(steps)} */",
        f"{ind}const long long {level.trips} = cudaify_trips({loop.lower}, {loop.upper}, 1, "
        f"{inclusive});",
        f"{ind}if ({level.trips} > 0) {{",
    ]
    lines += [inner + line for line in _device_side(plan)]
    lines.append(ind + "}")
    if level.declared_outside:
        lines.append(f"{ind}{loop.var} = ({level.var_type})({paren(loop.lower)} + {level.trips});")
    lines.append(plan.indent + "}")
    return "\n".join(lines)


def _cub_function(plan: ScanPlan) -> str:
    if plan.multiplier:
        return "InclusiveScan"
    return "InclusiveScanInit" if plan.stores_directly else "InclusiveSum"


def _cub_call(plan: ScanPlan, storage: str, storage_bytes: str, terms: str, sums: str) -> str:
    operands = [storage, storage_bytes, terms, sums]
    if plan.stores_directly:  # `sums` is the output: the starting value seeds the scan
        operands += ["cudaify_sum()", plan.names["start"]]
    elif plan.multiplier:
        operands.append("cudaify_compose()")
    operands.append(plan.level.trips)
    return f"cub::DeviceScan::{_cub_function(plan)}({', '.join(operands)})"


def _device_side(plan: ScanPlan) -> list[str]:
    """Offload's transfers around the scan: every array (the output too, whose copy in
    also brings the recurrence's starting value) is declared, allocated and copied in
    first, copied back and freed last, each line at the block's indentation, so that
    `data_residency` can map them. The scan's scratch buffers are static and only grow."""
    names, level, form, output = plan.names, plan.level, plan.form, plan.output
    devices = dict(plan.devices)
    trips, d_out = level.trips, devices[output.name]
    mapped = plan.arrays + (output,)
    lines = ps.copy_in(mapped, devices)
    lower = plan.located.loop.lower
    out_at = _element_address(output, d_out, lower)
    if form.accumulator is not None:
        lines.append(f"const {plan.value_type} {names['start']} = {form.accumulator};")
    elif plan.stores_directly:  # the recurrence's start, the element before the first written
        lines += [
            f"{plan.value_type} {names['start']};",
            f"CUDAIFY_CHECK(cudaMemcpy(&{names['start']}, {out_at} - 1, "
            f"sizeof({plan.value_type}), cudaMemcpyDeviceToHost));",
        ]
    if plan.multiplier:
        return lines + _passes(plan, devices, out_at) + _copy_back(plan, devices)
    source = plan.read_in_place
    terms = (
        names["terms"] if source is None else _element_address(source, devices[source.name], lower)
    )
    sums = out_at if plan.stores_directly else names["sums"]
    lines += _scratch(plan)
    arguments = _term_arguments(plan, devices)
    arguments += [trips, names["terms"]]
    store_arguments = [names["sums"]]
    store_arguments += [names["start"]] if form.accumulator is not None else []
    store_arguments += [trips, out_at]
    blocks = names["blocks"]
    if source is None or not plan.stores_directly:
        lines.append(
            f"const unsigned int {blocks} = cudaify_blocks({trips}, {THREADS}, 2147483647u);"
        )
    if source is None:
        lines += [
            f"{names['terms_kernel']}<<<{blocks}, {THREADS}>>>({', '.join(arguments)});",
            "CUDAIFY_CHECK(cudaGetLastError());",
        ]
    lines += _cub_scan(plan, terms, sums)
    if not plan.stores_directly:
        lines += [
            f"{names['store_kernel']}<<<{blocks}, {THREADS}>>>({', '.join(store_arguments)});",
            "CUDAIFY_CHECK(cudaGetLastError());",
        ]
    if form.accumulator is not None:
        # the last sum; stored directly, the output's last element holds the start as well
        value, total = plan.value_type, names["total"]
        lines += [
            f"{value} {total};",
            f"CUDAIFY_CHECK(cudaMemcpy(&{total}, {sums} + ({trips} - 1), "
            f"sizeof({value}), cudaMemcpyDeviceToHost));",
            f"{form.accumulator} = "
            + (total if plan.stores_directly else f"{names['start']} + {total}")
            + ";",
        ]
    return lines + _copy_back(plan, devices)


def _copy_back(plan: ScanPlan, devices: dict[str, str]) -> list[str]:
    """The output copied back, then every array's device copy freed."""
    output = plan.output
    host = host_address(output, writable=True)
    return [
        f"CUDAIFY_CHECK(cudaMemcpy({host}, {devices[output.name]}, {byte_size(output)}, "
        "cudaMemcpyDeviceToHost));",
        *ps.frees([devices[a.name] for a in plan.arrays + (output,)]),
    ]


def _passes(plan: ScanPlan, devices: dict[str, str], out_at: str) -> list[str]:
    """The two-pass scan of the affine maps: its functors built from the device copies,
    the shares' totals a static buffer allocated once."""
    names, totals, scanned = plan.names, plan.names["totals"], plan.scan_type
    arguments = _term_arguments(plan, devices)
    return [
        f"static {scanned} *{totals} = NULL; /* the shares' totals (runtime: scan_passes) */",
        f"if ({totals} == NULL)",
        f"    CUDAIFY_CHECK(cudaMalloc((void **)&{totals}, CUDAIFY_SCAN_SHARES * "
        f"sizeof(*{totals})));",
        f"{SCAN_PASSES_CALL}<{scanned}>({names['terms_kernel']}{{{', '.join(arguments)}}}, "
        f"{names['store_kernel']}{{{out_at}}}, {plan.level.trips}, cudaify_compose(), {totals});",
        "CUDAIFY_CHECK(cudaGetLastError());",
    ]


def _element_address(data: ArrayData, device: str, index: str) -> str:
    """The device address of `data[index]` in a copy of `data` from its first element."""
    first, index = data.first.strip(), index.strip()
    if first == index:
        return device
    if first == "0":
        return f"{device} + {paren(index)}"
    return f"{device} + ({paren(index)} - {paren(first)})"


def _scratch(plan: ScanPlan) -> list[str]:
    """The terms and their sums, those the scan needs (none when CUB reads the input and
    writes the output): static buffers that only grow."""
    names, trips, scanned = plan.names, plan.level.trips, plan.scan_type
    buffers = [] if plan.read_in_place is not None else [names["terms"]]
    buffers += [] if plan.stores_directly else [names["sums"]]
    if not buffers:
        return []
    capacity = names["capacity"]
    return [
        f"static {scanned} {', '.join(f'*{b} = NULL' for b in buffers)};",
        f"static long long {capacity} = 0;",
        f"if ({trips} > {capacity}) {{",
        f"    if ({capacity} > 0) {{",
        *(f"        CUDAIFY_CHECK(cudaFree({b}));" for b in buffers),
        "    }",
        *(
            f"    CUDAIFY_CHECK(cudaMalloc((void **)&{b}, (size_t){trips} * sizeof(*{b})));"
            for b in buffers
        ),
        f"    {capacity} = {trips};",
        "}",
    ]


def _cub_scan(plan: ScanPlan, terms: str, sums: str) -> list[str]:
    """CUB's scan of the terms into the sums, with its temporary storage kept (it only grows)."""
    names = plan.names
    storage_bytes = names["storage_bytes"]
    return [
        "/* CUB tells the temporary storage it needs (asked with no storage), then scans */",
        *ps.cub_with_storage(
            lambda memory: _cub_call(plan, memory, storage_bytes, terms, sums),
            names["storage"],
            storage_bytes,
            names["storage_capacity"],
        ),
    ]
