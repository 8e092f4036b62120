"""`reduction`: run a loop whose only carried dependences are reductions as a kernel.

Each thread runs a grid-stride share of the iterations with its own copy of every
reduction variable, started at the operator's identity: the loop body runs unchanged on
that copy, so `s += x`, `s -= x`, `if (x > m) m = x` and struct fields (`t.sum += x`)
need no rewriting. Each block then combines its threads (warp shuffles, then shared
memory) and writes one partial per block; the host combines the partials, in block
order, into the variable's value before the loop (`s = s0 + p0 + p1 + ...`,
`m = max(m0, ...)`). The second pass on the host works for every type and operator
(no atomic exists for a float minimum or a 64-bit product) and costs a copy of at most
MOST_BLOCKS values. The partials' device buffer is a function-local static allocated on the
first call, so a reduction called in a time loop allocates and frees nothing per call.

argmin and argmax (`if (d < m) { m = d; k = i; }`): the analysis ties each payload `k` to
its key `m`. Each thread also records the iteration of its choice; warps, blocks and the
host then choose by (key, iteration): the best key, and among equal keys the first
iteration for < and > or the last for <= and >=, as the sequential loop does."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tree_sitter import Node

from cudaify.core import Problem, Variant
from cudaify.frontend.facts import ArrayData, Function, Loop, Program, Reduction
from cudaify.transforms import csource as cs
from cudaify.transforms import pattern_support as ps
from cudaify.transforms import std_device
from cudaify.transforms.base import Context
from cudaify.transforms.kernel_codegen import (
    IDENT,
    QUALIFIERS,
    Level,
    array_param,
    body_statements,
    called_lambdas,
    definition_node,
    device_code,
    device_helpers,
    first_statement,
    fresh_name,
    grid_stride_header,
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
    unrollable,
    unrolled_grid_stride,
)

THREADS = 256  # a multiple of 32: the block reduction works on whole warps
MOST_BLOCKS = 1024  # enough to fill a large GPU; the grid-stride loop covers the rest


@dataclass(frozen=True)
class Reduced:
    """One reduction variable: its C name (`s`, `t.mass`), the operator's functor, the
    kernel's type for it and the names of its partials."""

    var: str
    op: str
    functor: str
    device_type: str  # kernel parameter element type of the partials
    partials: str  # device buffer (host name) and kernel parameter
    host_partials: str  # host copy of the partials


@dataclass(frozen=True)
class ArgGroup:
    """argmin / argmax: the key (`m`) and the payloads kept with it (`k`, assigned with
    it in `if (v < m) { m = v; k = i; }`), and the iteration that set them in each
    thread (`at`, -1 for none) that breaks ties the way the loop does: the first of equal
    keys for < and >, the last for <= and >=."""

    key: Reduced | None  # None: find-first (the first iteration whose test holds)
    payloads: tuple[Reduced, ...]
    strict: bool
    at: str  # the kernel's per-thread iteration of the choice
    at_partials: str
    host_at_partials: str

    @property
    def beats(self) -> str:
        """The key's comparison that makes a new value win (as the loop writes it)."""
        assert self.key is not None
        return ("<" if self.key.op == "min" else ">") + ("" if self.strict else "=")

    @property
    def values(self) -> tuple[Reduced, ...]:
        """What moves with the chosen iteration: the key (if any) and the payloads."""
        return (self.key, *self.payloads) if self.key is not None else self.payloads

    def better(self, value: str, at: str, current: str, current_at: str) -> str:
        """C: (value, at) replaces (current, current_at) in the combination."""
        if self.key is None:  # find-first: the earliest iteration
            return f"({at} >= 0 && ({current_at} < 0 || {at} < {current_at}))"
        strictly = "<" if self.key.op == "min" else ">"
        later = ">" if not self.strict else "<"
        return (
            f"({at} >= 0 && ({current_at} < 0 || {value} {strictly} {current} || "
            f"({value} == {current} && {at} {later} {current_at})))"
        )


@dataclass(frozen=True)
class ReductionPlan:
    located: ps.Located
    level: Level
    arrays: tuple[ArrayData, ...]
    scalars: tuple[tuple[str, str], ...]
    privates: tuple[tuple[str, str], ...]
    locals_: tuple[str, ...]  # kernel declarations of the per-thread copies
    reduced: tuple[Reduced, ...]  # combined with their operator (cudaify_block_reduce)
    groups: tuple[ArgGroup, ...]  # argmin / argmax: combined with their payloads
    helpers: tuple[str, ...]
    kernel: str
    devices: tuple[tuple[str, str], ...]
    blocks: str
    block_index: str
    body: str
    body_indent: str
    indent: str
    lambdas: tuple[str, ...] = ()  # the local lambdas the loop calls, defined in the kernel
    uses_std: bool = False  # the kernel needs std_device.STD_PRELUDE (std::min, complex, ...)
    returned: str | None = None  # find-first: the `return ...;` the host runs at the first hit


class ReductionMethod(ps.LoopPatternMethod):
    name = "reduction"
    summary = "run a reduction loop as a kernel: per-thread partials, block shuffles, a host pass"
    category = "pattern"
    follows = ("sequential", "offload")
    instruction = (
        "Turn the reduction loop into a __global__ kernel with a grid-stride loop: each thread "
        "accumulates its iterations into a private copy of every reduction variable started "
        "at the operator's identity (0 for +, 1 for *, +inf for min, -inf for max, ~0 for &). "
        "Combine the threads of a block with __shfl_down_sync inside each warp and shared "
        "memory across warps, and write one partial per block (or atomicAdd it). In the host "
        "function copy the partials back and combine them with the variable's value before "
        "the loop (s = s0 + total, m = max(m0, ...)); keep struct fields as fields. For an "
        "argmin or argmax (if (d < m) { m = d; k = i; }) keep the iteration with the value and "
        "choose the first of equal values for < (the last for <=). Copy in "
        "the arrays the loop reads, copy back those it writes, check every CUDA call."
    )

    nothing = "no reduction loop outside main"

    def plans(self, variant: Variant, program: Program) -> tuple[list[Any], list[str]]:
        return _plans(variant, program)

    def emit(self, code: str, plans: list[Any]) -> str:
        return _emit(code, plans)

    def describe_plan(self, plan: Any) -> str:
        return _describe(plan)

    def check(self, before: Variant, after: Variant, ctx: Context) -> list[Problem]:
        """A new or changed kernel, launched from host code, combines its threads' values:
        warp shuffles, a shared array between barriers, atomics or a CUB block/warp reduce,
        in its own code or the device functions it calls; a new one takes over a loop of
        the function that launches it."""
        from cudaify.transforms import postcondition as pc

        common = pc.common_problems(self.name, before.code, after.code)
        if common:
            return common
        old, new = pc.parsed(before.code), pc.parsed(after.code)
        changed = pc.changed_kernels(old, new)
        for launch in pc.host_launches(old, new):
            kernel = changed.get(launch.kernel)
            if kernel is not None and pc.combines_threads(new, kernel):
                if pc.takes_over(old, new, launch):
                    return []
        return [
            Problem(
                "reduction",
                "no launched kernel combines its threads' values (a block reduction)",
            )
        ]


def _group_label(g: ArgGroup, var: str) -> str:
    kept = ", ".join(p.var for p in g.payloads)
    if g.key is None:
        return f"the first '{var}' whose test holds" + (f" (keeping {kept})" if kept else "")
    return f"{g.key.var} (arg{g.key.op} of {kept})"


def _describe(plan: ReductionPlan) -> str:
    loop = plan.located.loop
    what = ", ".join(
        [f"{r.var} ({r.op})" for r in plan.reduced]
        + [_group_label(g, loop.var) for g in plan.groups]
    )
    where = f"{plan.located.function.name}: loop '{loop.var}' at line {loop.line}"
    return f"{where} -> {plan.kernel}: {what}"


# ---- choosing the loops ---------------------------------------------------------------


def _plans(variant: Variant, program: Program) -> tuple[list[ReductionPlan], list[str]]:
    patterns = ("reduction", "find_first")
    return ps.plan_loops(variant.code, program, patterns, "reduction", _plan)


def _plan(
    code: str, program: Program, function: Function, outer: Loop, loop: Loop, taken: set[str]
) -> ReductionPlan:
    finds = loop.pattern == "find_first"
    if loop.early_exit and not finds:
        raise ps.Refuse("the loop can exit early (break, return or goto)")
    if not loop.reductions and not finds:
        raise ps.Refuse("the analysis names no reduction variable")
    require_enough_work([loop])
    located = ps.locate(code, program, function, outer, loop)
    nest, tree, source = located.node, located.tree, located.source
    body = nest.child_by_field_name("body")
    if body is None:
        raise ps.Refuse("the loop has no body")
    if not finds:  # a find-first loop's one jump is its break (see the analysis)
        require_no_jumps(nest)
    arrays = ps.unique_arrays(
        tuple(narrowed(a, loop) for a in kernel_arrays(function, outer, nest, tree, source))
    )
    require_no_array_sizeof(nest, arrays, source)
    roots = {r.var.split(".")[0] for r in loop.reductions}
    (level,) = mapped_levels([located.loop], tree, source, taken)
    # `if (C) return E;`: the host returns E at the first hit (the analysis saw to it that
    # the body is that `if` alone, so E reads the loop variable and what the loop reads)
    answer = _returned(body) if finds else None
    if finds and answer is None and not loop.reductions and not level.declared_outside:
        raise ps.Refuse("the search keeps nothing: no value set where it stops, no index after it")
    definition = definition_node(tree, located.function.span.start)
    lambdas = called_lambdas(nest, definition, source) if definition is not None else []
    scalars, privates = ps.scalars_of(located, arrays, roots, {loop.var}, lambdas=tuple(lambdas))
    body_text = body_statements(body, source)
    texts = [cs.text(node, source) for node in lambdas] + [body_text]
    uses_std = any(std_device.uses_std(text) for text in texts)
    locals_, reduced = _reduced(located, loop.reductions, taken)
    reduced, groups = _arg_groups(loop.reductions, reduced, taken)
    if finds:
        groups = (_first_group(reduced, taken),)
        reduced = ()
    locals_ += tuple(f"long long {g.at} = -1;" for g in groups)
    if finds:
        body_text = _break_marked(body, source, groups[0], level.index)
    elif groups:
        body_text = marked_body(body, source, groups, level.index)
    return ReductionPlan(
        located=located,
        level=level,
        arrays=arrays,
        scalars=scalars,
        privates=privates,
        locals_=locals_,
        reduced=reduced,
        groups=groups,
        helpers=device_helpers(nest, tree, source, program, tuple(lambdas)),
        kernel=fresh_name(f"{function.name}_reduce", taken),
        devices=tuple((a.name, fresh_name(f"d_{a.name}", taken)) for a in arrays),
        blocks=fresh_name("blocks", taken),
        block_index=fresh_name("b", taken),
        body=device_code(body_text, body),
        body_indent=line_indent(source, first_statement(body).start_byte),
        indent=line_indent(source, located.loop.span.start),
        lambdas=tuple(
            reindent(
                device_code(cs.text(node, source), node),
                line_indent(source, node.start_byte),
                "    ",
            )
            for node in lambdas
        ),
        uses_std=uses_std,
        returned=cs.text(answer, source) if answer is not None else None,
    )


def _returned(body: Node) -> Node | None:
    """The search's `return` statement, when its exit is one (not a `break`)."""
    found = _jumps(body, ("return_statement",))
    return found[0] if len(found) == 1 else None


def _jumps(body: Node, kinds: tuple[str, ...]) -> list[Node]:
    """The statements of `kinds` in `body` that leave the loop (not a lambda's own)."""

    def in_lambda(node: Node) -> bool:
        parent = node.parent
        while parent is not None and parent != body:
            if parent.type == "lambda_expression":
                return True
            parent = parent.parent
        return False

    return [n for n in cs.walk(body) if n.type in kinds and not in_lambda(n)]


def _reduced(
    located: ps.Located, reductions: tuple[Reduction, ...], taken: set[str]
) -> tuple[tuple[str, ...], tuple[Reduced, ...]]:
    """The kernel's per-thread copies (declarations, identity initialisations) and the
    partials of every reduction variable."""
    declarations: list[str] = []
    reduced: list[Reduced] = []
    declared_roots: set[str] = set()
    for reduction in reductions:
        if reduction.op in ("payload", "first"):
            base = _root_type(located, reduction.var)
            declarations.append(f"{base} {reduction.var}{{}};")  # set with its key
            reduced.append(
                Reduced(
                    var=reduction.var,
                    op=reduction.op,
                    functor="",
                    device_type=base,
                    partials=fresh_name(f"d_partial_{reduction.var}", taken),
                    host_partials=fresh_name(f"partial_{reduction.var}", taken),
                )
            )
            continue
        functor = ps.OPERATORS.get(reduction.op)
        if functor is None:
            raise ps.Refuse(f"no device combination for the operator '{reduction.op}'")
        path = reduction.var.split(".")
        if not all(IDENT.fullmatch(part) for part in path):
            raise ps.Refuse(f"reduction variable '{reduction.var}' is not a name or a field")
        root = path[0]
        base = _root_type(located, root)
        if len(path) == 1:
            device_type = base
            declarations.append(f"{base} {root} = {functor}::identity<{base}>();")
        else:
            if root not in declared_roots:
                _require_only_reduced_fields(located, root, reductions)
                declarations.append(f"{base} {root};")
                declared_roots.add(root)
            field = reduction.var
            declarations.append(f"{field} = {functor}::identity<decltype({field})>();")
            device_type = f"decltype(cudaify_declval<{base}>().{'.'.join(path[1:])})"
        stem = reduction.var.replace(".", "_")
        reduced.append(
            Reduced(
                var=reduction.var,
                op=reduction.op,
                functor=functor,
                device_type=device_type,
                partials=fresh_name(f"d_partial_{stem}", taken),
                host_partials=fresh_name(f"partial_{stem}", taken),
            )
        )
    return tuple(declarations), tuple(reduced)


def _arg_groups(
    reductions: tuple[Reduction, ...], reduced: tuple[Reduced, ...], taken: set[str]
) -> tuple[tuple[Reduced, ...], tuple[ArgGroup, ...]]:
    """The plain reductions, and the argmin / argmax groups: each min or max variable
    with the payloads the analysis tied to it."""
    by_var = {r.var: r for r in reduced}
    payloads: dict[str, list[Reduction]] = {}
    for reduction in reductions:
        if reduction.op == "payload":
            payloads.setdefault(reduction.key, []).append(reduction)
    groups = []
    for key, kept in payloads.items():
        found = by_var.get(key)
        if found is None or found.op not in ("min", "max"):
            raise ps.Refuse(f"'{kept[0].var}' is kept with '{key}', which is no min or max here")
        if len({r.strict for r in kept}) != 1:
            raise ps.Refuse(f"'{key}' is compared both strictly and not")
        stem = key.replace(".", "_")
        groups.append(
            ArgGroup(
                key=found,
                payloads=tuple(by_var[r.var] for r in kept),
                strict=kept[0].strict,
                at=fresh_name(f"cudaify_at_{stem}", taken),
                at_partials=fresh_name(f"d_partial_at_{stem}", taken),
                host_at_partials=fresh_name(f"partial_at_{stem}", taken),
            )
        )
    grouped = {r.var for g in groups for r in g.values}
    return tuple(r for r in reduced if r.var not in grouped), tuple(groups)


def _first_group(kept: tuple[Reduced, ...], taken: set[str]) -> ArgGroup:
    """find-first as a choice with no key: the earliest iteration whose test held, and
    the values the loop set there."""
    return ArgGroup(
        key=None,
        payloads=kept,
        strict=True,
        at=fresh_name("cudaify_found", taken),
        at_partials=fresh_name("d_partial_found", taken),
        host_at_partials=fresh_name("partial_found", taken),
    )


def _break_marked(body: Node, source: bytes, group: ArgGroup, index: str) -> str:
    """The body's statements with its `break;` or `return ...;` (the search's one jump)
    recording the iteration first: a thread stops at its first hit, as the loop does."""
    if body.type == "compound_statement" and len(body.children) >= 2:
        start, end = body.children[0].end_byte, body.children[-1].start_byte
    else:
        start, end = body.start_byte, body.end_byte
    breaks = _jumps(body, ("break_statement", "return_statement"))
    if len(breaks) != 1:
        raise ps.Refuse("the search's break was not found")
    found = breaks[0]
    text = (
        source[start : found.start_byte]
        + f"{{ {group.at} = {index}; break; }}".encode()
        + source[found.end_byte : end]
    )
    return text.decode("utf-8", errors="surrogateescape").strip()


def marked_body(body: Node, source: bytes, groups: tuple[ArgGroup, ...], index: str) -> str:
    """The body's statements, each payload's assignment followed by the record of the
    iteration it was made in (`cudaify_at_m = i_index;`)."""
    at_of = {p.var: g.at for g in groups for p in g.payloads}
    if body.type != "compound_statement" or len(body.children) < 2:
        raise ps.Refuse("an argmin or argmax body without braces")
    start = body.children[0].end_byte
    raw = source[start : body.children[-1].start_byte]
    marks: list[tuple[int, str]] = []
    for node in cs.walk(body):
        if node.type != "expression_statement" or not node.named_children:
            continue
        assignment = node.named_children[0]
        left = assignment.child_by_field_name("left")
        operator = assignment.child_by_field_name("operator")
        if assignment.type != "assignment_expression" or left is None or operator is None:
            continue
        name = cs.text(left, source)
        if cs.text(operator, source) == "=" and name in at_of:
            marks.append((node.end_byte - start, f" {at_of[name]} = {index};"))
    if not marks:
        raise ps.Refuse("the payloads' assignments were not found")
    pieces, last = [], 0
    for offset, mark in sorted(marks):
        pieces.append(raw[last:offset].decode("utf-8", errors="surrogateescape") + mark)
        last = offset
    pieces.append(raw[last:].decode("utf-8", errors="surrogateescape"))
    return "".join(pieces).strip()


def _root_type(located: ps.Located, root: str) -> str:
    declared = cs.visible(located.tree, located.source, root, located.node.start_byte)
    if declared is None:
        raise ps.Refuse(f"the declaration of '{root}' was not found")
    if declared.kind not in ("scalar", "reference"):
        raise ps.Refuse(f"reduction variable '{root}' is a {declared.kind}")
    base = " ".join(QUALIFIERS.sub("", declared.base).split())
    words = base.split()
    if "auto" in words or "static" in words or (words.count("long") and "double" in words):
        raise ps.Refuse(f"'{root}' has type '{base}', which the device reduction does not take")
    return base


def _require_only_reduced_fields(
    located: ps.Located, root: str, reductions: tuple[Reduction, ...]
) -> None:
    """A struct whose fields are reduced is used in the loop only through those fields:
    the kernel's copy holds nothing else."""
    fields = {r.var for r in reductions}
    source = located.source
    for ident in cs.identifiers_in(located.node):
        if cs.text(ident, source) != root:
            continue
        node: Node = ident
        while node.parent is not None and node.parent.type == "field_expression":
            if cs.text(node.parent, source).replace(" ", "") in fields:
                break
            node = node.parent
        parent = node.parent
        if parent is None or parent.type != "field_expression":
            raise ps.Refuse(f"'{root}' is used in the loop other than through its reduced fields")
        if cs.text(parent, source).replace(" ", "") not in fields:
            raise ps.Refuse(f"'{root}' is used in the loop other than through its reduced fields")


# ---- emitting ---------------------------------------------------------------------------


def _emit(code: str, plans: list[ReductionPlan]) -> str:
    needs_std = any(plan.uses_std for plan in plans) and std_device.STD_MARKER not in code
    return ps.rewrite_loops(
        code,
        plans,
        _kernel_text,
        _host_text,
        "the reduction runs on the GPU",
        more_helpers=std_device.STD_PRELUDE if needs_std else "",
    )


def _kernel_text(plan: ReductionPlan) -> str:
    loop = plan.located.loop
    params = [array_param(a) for a in plan.arrays]
    params += [f"{type_} {name}" for type_, name in plan.scalars]
    params.append(f"long long {plan.level.trips}")
    params += [f"{r.device_type} *{r.partials}" for r in plan.reduced]
    for g in plan.groups:
        params += [f"{r.device_type} *{r.partials}" for r in g.values]
        params.append(f"long long *{g.at_partials}")
    names = ", ".join(
        [r.var for r in plan.reduced] + [r.var for g in plan.groups for r in g.values]
    )
    lines = [
        f"/* Reduction loop '{loop.var}' of {plan.located.function.name}() (line {loop.line}) "
        f"on {names}: per-thread copies, one partial per block. */",
        f"__global__ void {plan.kernel}({', '.join(params)})",
        "{",
    ]
    lines += [f"    {declaration}" for declaration in plan.locals_]
    lines += ["    " + text for text in plan.lambdas]

    def body_at(inner: str) -> list[str]:
        declared = [f"{inner}{type_} {name};" for type_, name in plan.privates]
        return [*declared, inner + reindent(plan.body, plan.body_indent, inner)]

    if unrollable(plan.body):
        lines += unrolled_grid_stride(plan.level, "    ", body_at)
    else:
        lines += grid_stride_header(plan.level, "    ")
        lines += body_at("        ")
        lines.append("    }")
    for r in plan.reduced:
        lines.append(f"    {r.var} = cudaify_block_reduce({r.var}, {r.functor}());")
    for g in plan.groups:
        lines += _arg_block_reduce(g)
    lines.append("    if (threadIdx.x == 0) {")
    for r in plan.reduced:
        lines.append(f"        {r.partials}[blockIdx.x] = {r.var};")
    for g in plan.groups:
        for r in g.values:
            lines.append(f"        {r.partials}[blockIdx.x] = {r.var};")
        lines.append(f"        {g.at_partials}[blockIdx.x] = {g.at};")
    lines.append("    }")
    lines.append("}")
    return "\n".join(lines) + "\n\n"


SHIFT, LANE, WARP = "cudaify_shift", "cudaify_lane", "cudaify_warp"


def _arg_block_reduce(g: ArgGroup) -> list[str]:
    """The block's choice of (key, iteration, payloads), valid in thread 0: warp shuffles,
    then the warps' choices through shared memory, as cudaify_block_reduce does."""
    values = [(g.at, "long long")] + [(r.var, r.device_type) for r in g.values]
    stem = g.at

    # the block's own names carry the cudaify_ prefix: a key or payload of the loop may be
    # called `offset`, `lane` or `warp`, and these lines sit in the kernel beside them
    def shuffle(indent: str) -> list[str]:
        out = [f"{indent}for (int {SHIFT} = 16; {SHIFT} > 0; {SHIFT} /= 2) {{"]
        for name, type_ in values:
            out.append(f"{indent}    {type_} {stem}_{name} = cudaify_shfl_down({name}, {SHIFT});")
        key = g.key.var if g.key is not None else g.at
        better = g.better(f"{stem}_{key}", f"{stem}_{g.at}", key, g.at)
        moves = " ".join(f"{name} = {stem}_{name};" for name, _ in values)
        out.append(f"{indent}    if {better} {{ {moves} }}")
        out.append(f"{indent}}}")
        return out

    if g.key is None:
        what = "find-first: the earliest iteration whose test held wins, with what it set"
    else:
        what = (
            f"arg{g.key.op} of {g.key.var}: the {'first' if g.strict else 'last'} iteration "
            "of the best value wins, its payloads with it"
        )
    lines = [
        f"    {{ /* {what} */",
        f"        const int {LANE} = threadIdx.x % 32, {WARP} = threadIdx.x / 32;",
    ]
    lines += shuffle("        ")
    for name, type_ in values:
        lines.append(f"        __shared__ {type_} {stem}_warp_{name}[32];")
    lines.append("        __syncthreads();")
    lines.append(f"        if ({LANE} == 0) {{")
    for name, _ in values:
        lines.append(f"            {stem}_warp_{name}[{WARP}] = {name};")
    lines.append("        }")
    lines.append("        __syncthreads();")
    lines.append(f"        if ({WARP} == 0) {{")
    lines.append(f"            if ({LANE} < (int)(blockDim.x / 32)) {{")
    for name, _ in values:
        lines.append(f"                {name} = {stem}_warp_{name}[{LANE}];")
    lines.append("            } else {")
    lines.append(f"                {g.at} = -1;")
    lines.append("            }")
    lines += shuffle("            ")
    lines.append("        }")
    lines.append("    }")
    return lines


def _host_text(plan: ReductionPlan) -> str:
    ind = plan.indent + "    "
    inner = ind + "    "
    loop, level = plan.located.loop, plan.level
    inclusive = 1 if loop.upper_inclusive else 0
    first = next((g for g in plan.groups if g.key is None), None)
    lines = [
        "{",
        f"{ind}/* cudaify: this reduction runs on the GPU as {plan.kernel} */",
        f"{ind}const long long {level.trips} = cudaify_trips({loop.lower}, {loop.upper}, "
        f"{loop.step}, {inclusive});",
    ]
    if first is not None:
        lines.append(f"{ind}long long {found_name(first)} = -1; /* the first hit, if any */")
    lines.append(f"{ind}if ({level.trips} > 0) {{")
    body = _device_side(plan) + _combine(plan)
    lines += [inner + line for line in body]
    lines.append(ind + "}")
    if level.declared_outside:
        step = f" * {loop.step}" if loop.step != 1 else ""
        ran = level.trips
        if first is not None:  # the loop stopped at its first hit
            found = found_name(first)
            ran = f"({found} >= 0 ? {found} : {level.trips})"
        lines.append(f"{ind}{loop.var} = ({level.var_type})({paren(loop.lower)} + {ran}{step});")
    if first is not None and plan.returned is not None:  # the loop's return, at its first hit
        found = found_name(first)
        lines.append(f"{ind}if ({found} >= 0) {{")
        if not level.declared_outside:
            step = f" * {loop.step}" if loop.step != 1 else ""
            at = f"{paren(loop.lower)} + {found}{step}"
            lines.append(f"{inner}const {level.var_type} {loop.var} = ({level.var_type})({at});")
        lines.append(f"{inner}{plan.returned}")
        lines.append(ind + "}")
    lines.append(plan.indent + "}")
    return "\n".join(lines)


def _device_side(plan: ReductionPlan) -> list[str]:
    devices = dict(plan.devices)
    lines = ps.copy_in(plan.arrays, devices)
    lines.append(
        f"const unsigned int {plan.blocks} = cudaify_blocks({plan.level.trips}, {THREADS}, "
        f"{MOST_BLOCKS}u);"
    )
    # one buffer of the most partials serves every call: a wrapper called in a time loop
    # allocates once, and no call waits on a cudaFree
    for type_, device, _host in _partials(plan):
        lines.append(f"static {type_} *{device} = NULL;")
        lines.append(f"if ({device} == NULL)")
        size = f"{MOST_BLOCKS} * sizeof(*{device})"
        lines.append(f"    CUDAIFY_CHECK(cudaMalloc((void **)&{device}, {size}));")
    arguments = [kernel_argument(a, devices[a.name]) for a in plan.arrays]
    arguments += [name for _, name in plan.scalars]
    arguments.append(plan.level.trips)
    arguments += [r.partials for r in plan.reduced]
    for g in plan.groups:
        arguments += [r.partials for r in g.values]
        arguments.append(g.at_partials)
    lines.append(f"{plan.kernel}<<<{plan.blocks}, {THREADS}>>>({', '.join(arguments)});")
    lines.append("CUDAIFY_CHECK(cudaGetLastError());")
    lines += ps.copy_out(plan.arrays, devices)
    return lines


def _arg_combine(g: ArgGroup, blocks: str, b: str) -> list[str]:
    """The blocks' choices, in block order, then the loop's own test against the values
    before it: the key and its payloads change only where the loop would have changed
    them (`m0 < best` keeps m0 and k0, as the sequential loop does)."""
    key = g.key
    best, at = f"{g.host_at_partials}_best", found_name(g)
    partial = f"{key.host_partials}" if key is not None else g.host_at_partials
    better = g.better(f"{partial}[{b}]", f"{g.host_at_partials}[{b}]", f"{partial}[{best}]", at)
    lines = ["{", f"    unsigned int {best} = 0;"]
    if key is not None:  # find-first declares it before the launch: the index needs it after
        lines.append(f"    long long {at} = -1;")
    lines += [
        f"    for (unsigned int {b} = 0; {b} < {blocks}; {b}++) {{",
        f"        if {better} {{",
        f"            {best} = {b};",
        f"            {at} = {g.host_at_partials}[{b}];",
        "        }",
        "    }",
    ]
    if key is not None:
        lines.append(f"    if ({at} >= 0 && {key.host_partials}[{best}] {g.beats} {key.var}) {{")
        lines.append(f"        {key.var} = {key.host_partials}[{best}];")
    else:
        lines.append(f"    if ({at} >= 0) {{")
    lines += [f"        {p.var} = {p.host_partials}[{best}];" for p in g.payloads]
    lines += ["    }", "}"]
    return lines


def found_name(g: ArgGroup) -> str:
    """The host's name for the chosen iteration (-1: none)."""
    return f"{g.host_at_partials}_at"


def _partials(plan: ReductionPlan) -> list[tuple[str, str, str]]:
    """(host type, device buffer, host copy) of every partial the kernel writes: the
    variables' first, then each choice's iteration."""
    values = [*plan.reduced, *(r for g in plan.groups for r in g.values)]
    partials = [
        (f"cudaify_value_t<decltype({r.var})>", r.partials, r.host_partials) for r in values
    ]
    partials += [("long long", g.at_partials, g.host_at_partials) for g in plan.groups]
    return partials


def _combine(plan: ReductionPlan) -> list[str]:
    """Copy the partials back and fold them, in block order, into each variable."""
    b = plan.block_index
    lines = []
    for type_, device, host in _partials(plan):
        lines.append(f"{type_} {host}[{MOST_BLOCKS}];")
        lines.append(
            f"CUDAIFY_CHECK(cudaMemcpy({host}, {device}, "
            f"{plan.blocks} * sizeof(*{device}), cudaMemcpyDeviceToHost));"
        )
    if plan.reduced:
        lines.append(f"for (unsigned int {b} = 0; {b} < {plan.blocks}; {b}++) {{")
        for r in plan.reduced:
            lines.append(f"    {r.var} = {r.functor}()({r.var}, {r.host_partials}[{b}]);")
        lines.append("}")
    for g in plan.groups:
        lines += _arg_combine(g, plan.blocks, b)
    lines += ps.frees([devices for _, devices in plan.devices])
    return lines
