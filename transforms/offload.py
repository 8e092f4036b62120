"""`offload`: run a parallel loop nest as a CUDA kernel, one thread per iteration.

The rule turns each parallel loop nest outside `main` into a `__global__` kernel and
replaces the nest, inside the original function (same signature), by the host side:
allocate, copy in, launch, check, copy out, free. Everything else in the file keeps its
bytes, except `__host__ __device__` added to the user functions the kernel calls.

Mapping: up to three perfectly nested parallel levels become the grid's x/y/z
dimensions, the innermost level on x so that consecutive threads touch consecutive
elements (coalescing). Each mapped level is a grid-stride loop: when the grid covers the
trip count every thread runs one iteration; when it cannot (y and z hold at most 65535
blocks) the threads stride over the rest. Inner loops that are not mapped stay
sequential inside the thread.

main's own loops stay on the host in this version: offloading them needs outlining
the nest into a function first."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from tree_sitter import Node, Tree

from cudaify.core import Problem, Variant
from cudaify.frontend.edits import Edit, apply_edits
from cudaify.frontend.facts import ArrayData, Function, Generator, Loop, Program
from cudaify.transforms import csource as cs
from cudaify.transforms import std_device
from cudaify.transforms.base import Context, Method, Outcome
from cudaify.transforms.kernel_codegen import (
    IDENT,
    QUALIFIERS,
    Level,
    Refuse,
    array_param,
    body_statements,
    byte_size,
    called_lambdas,
    definition_node,
    device_code,
    device_free,
    device_helpers,
    device_malloc,
    element_type,
    first_statement,
    for_node,
    fresh_name,
    grid_blocks,
    grid_stride_header,
    host_address,
    host_only_parts,
    kernel_argument,
    kernel_arrays,
    line_indent,
    mapped_levels,
    narrowed,
    node_key,
    paren,
    reindent,
    require_enough_work,
    require_no_array_sizeof,
    require_no_jumps,
    used_after,
    where_kernels_go,
)
from cudaify.transforms.prelude import runtime_text

THREADS = {1: (256,), 2: (32, 8), 3: (32, 4, 2)}  # block shape per mapped rank, x first
MOST_BLOCKS = {"x": 2147483647, "y": 65535, "z": 65535}

PRELUDE = runtime_text("runtime_helpers.cuh")


@dataclass(frozen=True)
class NestPlan:
    """Everything needed to emit one kernel and its host side."""

    function: Function
    root: Loop
    levels: tuple[Level, ...]
    arrays: tuple[ArrayData, ...]
    scalars: tuple[tuple[str, str], ...]  # (type, name) passed by value
    privates: tuple[tuple[str, str], ...]  # (type, name) written: one copy per thread
    helpers: tuple[str, ...]  # user functions the kernel calls, transitively
    kernel: str
    device_names: tuple[tuple[str, str], ...]  # array -> its device buffer's host name
    grid: str
    block: str
    body: str  # the statements of the innermost mapped loop's body, as in the source
    indent: str  # indentation of the nest's `for` line
    body_indent: str  # indentation of the body's first statement in the source
    end: int  # byte after the nest (tree-sitter's: libclang's extent omits a final `;`)
    # A function template's kernel repeats its template header; launches name its
    # parameters (a value parameter cannot be deduced from the arguments).
    template: str = ""
    template_args: tuple[str, ...] = ()
    # Flag scalars every writer sets to one value (benign races): each thread keeps a
    # copy and one that changed it stores it to a device word the host copies back.
    flags: tuple[tuple[str, str], ...] = ()  # (type, name)
    # A condition the benign races need; when it fails the host runs `original`.
    precondition: str = ""
    original: str = ""
    # Declarations of the local lambdas the nest calls, in device form: the kernel
    # defines them again at the top of its body (a lambda defined in device code runs
    # on the device), capturing the kernel's copies of what they capture.
    lambdas: tuple[str, ...] = ()
    uses_std: bool = False  # the kernel needs std_device.STD_PRELUDE
    # Generator states the loop carries (pattern "generator"): the kernel is given the
    # state before the loop, each iteration starts from it jumped ahead, and the host
    # leaves the state where the whole loop would (`jump_text`).
    generators: tuple[Generator, ...] = ()


class Offload(Method):
    name = "offload"
    summary = "run a parallel loop nest as a CUDA kernel, one thread per iteration"
    category = "mapping"
    # Works on the analysed host program: the first GPU step of every trajectory.
    follows = ("sequential",)
    instruction = (
        "Move the parallel loop nest into a __global__ kernel. Map the innermost parallel "
        "loop to threadIdx.x/blockIdx.x (consecutive threads touch consecutive elements), "
        "outer parallel loops to y and z, and use grid-stride loops so any trip count is "
        "covered; keep inner sequential loops inside the thread. In the original function "
        "(same signature) allocate device buffers with cudaMalloc for every array the nest "
        "uses, copy every array it reads or writes to the device, launch the kernel, check "
        "cudaGetLastError(), copy the written arrays back and cudaFree every buffer; check "
        "every CUDA call. Pass scalars by value. Mark user functions called from the kernel "
        "__host__ __device__. Leave the rest of the program unchanged."
    )

    def applies(self, variant: Variant, ctx: Context) -> str | None:
        plans, reasons = _plans(variant, ctx.program)
        if plans:
            return None
        return reasons[0] if reasons else "no parallel loop nest outside main"

    def apply_rule(self, variant: Variant, ctx: Context) -> Outcome:
        plans, reasons = _plans(variant, ctx.program)
        if not plans:
            return Outcome(None, reasons[0] if reasons else "no parallel loop nest outside main")
        code = emit(ctx.program, plans)
        functions = tuple(dict.fromkeys(plan.function.name for plan in plans))
        detail = "; ".join(_describe(plan) for plan in plans)
        return Outcome(variant.then(self.name, code, "rule", detail=detail, offloaded=functions))

    def check(self, before: Variant, after: Variant, ctx: Context) -> list[Problem]:
        """A host loop is gone and its function launches a new kernel in its place."""
        from cudaify.transforms import postcondition as pc

        common = pc.common_problems(self.name, before.code, after.code)
        return common or pc.offloaded_problems(self.name, before.code, after.code)


def _describe(plan: NestPlan) -> str:
    loops = ", ".join(level.loop.var for level in plan.levels)
    return (
        f"{plan.function.name}: loop nest at line {plan.root.line} ({loops}) -> "
        f"{plan.kernel}, {len(plan.levels)}-D grid"
    )


# ---- choosing the nests -------------------------------------------------------------


def _plans(variant: Variant, program: Program) -> tuple[list[NestPlan], list[str]]:
    """Plans for every nest the rule can offload, and the reasons for those it cannot."""
    if "__global__" in variant.code:
        return [], ["the program already runs kernels (offload applies to the host program)"]
    if variant.code != program.source:
        return [], ["offload rewrites the analysed host program; this variant differs from it"]
    source = program.source.encode("utf-8", errors="surrogateescape")
    tree = cs.parse(source)
    taken = {cs.text(n, source) for n in cs.walk(tree.root_node) if n.type.endswith("identifier")}
    plans: list[NestPlan] = []
    reasons: list[str] = []
    for function in program.functions:
        # kernels are global names; the host block's names only need to be new in the function
        local = set(taken)
        for outer in function.loops:
            nests = _candidate_nests(outer) if function.name != "main" else []
            for root in nests or [outer]:
                try:
                    plan = _plan(program, function, outer, root, tree, source, local)
                    plans.append(replace(plan, kernel=fresh_name(f"{function.name}_kernel", taken)))
                except Refuse as refusal:
                    reasons.append(_where(program, function, root, str(refusal)))
            if nests and nests[0] is not outer:
                reasons.append(_where(program, function, outer, _not_parallel(outer)))
    # main's loops always stay on the host: its reasons are the least informative
    reasons.sort(key=lambda reason: "in 'main'" in reason)
    return _without_helper_hosts(plans, program, reasons)


_SCOPE_WORDS = {
    "field_declaration_list": "a class",
    "template_declaration": "a template",
    "declaration_list": "a linkage block",
}


def _require_free_function(function: Function, tree: Tree) -> Node:
    """Kernels are emitted before the function: at file or namespace scope, not inside a
    class (a member's loop reads `this`). A function template's kernel is a template with
    the same parameters. Returns the node the kernels go before (the definition, or the
    template declaration around it)."""
    outer = definition_node(tree, function.span.start)
    if outer is None:
        raise Refuse(f"the definition of '{function.name}' was not found (stale analysis?)")
    if outer.type == "template_declaration":
        _require_plain_template(function, outer, tree)
    parent = outer.parent
    at_file_scope = parent is not None and parent.type == "translation_unit"
    in_namespace = (
        parent is not None
        and parent.type == "declaration_list"
        and parent.parent is not None
        and parent.parent.type == "namespace_definition"
    )
    if not (at_file_scope or in_namespace):
        kind = parent.type if parent is not None else ""
        where = _SCOPE_WORDS.get(kind, kind.replace("_", " ") or "an unknown scope")
        raise Refuse(f"'{function.name}' is defined inside {where}")
    return outer


def _require_plain_template(function: Function, template: Node, tree: Tree) -> None:
    """A template whose parameters the kernel can repeat and the launch can name: named
    type and value parameters, no packs, no template template parameters."""
    parameters = template.child_by_field_name("parameters")
    names = template_parameter_names(template)
    if parameters is None or not names or len(names) != len(parameters.named_children):
        raise Refuse(f"'{function.name}' is a template with parameters the rule cannot repeat")
    for child in parameters.named_children:
        if child.type not in _PLAIN_TEMPLATE_PARAMETERS:
            raise Refuse(f"'{function.name}' has a {child.type.replace('_', ' ')}")


_PLAIN_TEMPLATE_PARAMETERS = frozenset(
    {
        "type_parameter_declaration",
        "parameter_declaration",
        "optional_type_parameter_declaration",
        "optional_parameter_declaration",
    }
)


def template_parameter_names(template: Node) -> list[str]:
    """The names a template declares, in order (a parameter without a name counts as
    one the rule cannot name)."""
    parameters = template.child_by_field_name("parameters")
    names: list[str] = []
    for child in parameters.named_children if parameters is not None else []:
        found = [
            n
            for n in cs.walk(child)
            if n.type in ("identifier", "type_identifier") and _declares(n, child)
        ]
        if len(found) != 1 or found[0].text is None:
            return []
        names.append(found[0].text.decode("utf-8", errors="surrogateescape"))
    return names


def _declares(name: Node, parameter: Node) -> bool:
    """Whether identifier `name` is the name a template parameter declares (not its type
    or its default)."""
    if parameter.type in ("type_parameter_declaration", "optional_type_parameter_declaration"):
        return name.parent == parameter and parameter.child_by_field_name("default_type") != name
    declarator = parameter.child_by_field_name("declarator")
    return declarator is not None and name == declarator


def _candidate_nests(loop: Loop) -> list[Loop]:
    """The loop when it is a parallel nest, else the parallel nests inside it: the sweep
    inside a time-step loop runs as one kernel per time step. A generator loop with more
    than an inner loop in its body maps only itself (each thread runs the inner loop): its
    inner nests go on the grid instead, one launch an iteration, unless their trip counts
    are known to be too few for a launch (a draw per coordinate of a particle). Channels of
    samples filled channel by channel would otherwise run as a thread per channel."""
    if loop.parallel and loop.pattern == "plain":
        return [loop]
    inner = [nest for child in loop.children for nest in _candidate_nests(child)]
    if loop.pattern == "generator" and (_nested(loop) or not _worth_a_launch(inner)):
        return [loop]
    return inner


def _nested(loop: Loop) -> bool:
    """Whether `loop`'s body is its one inner loop, or becomes it once the declarations
    before that loop run in each of its iterations (Loop.prologue)."""
    return bool(loop.children) and (loop.perfectly_nested or loop.prologue is not None)


def _worth_a_launch(nests: list[Loop]) -> bool:
    """Whether any of `nests` could be offloaded for its work alone (require_enough_work)."""
    for nest in nests:
        try:
            require_enough_work(_mapped_loops(nest))
        except Refuse:
            continue
        return True
    return False


def _without_helper_hosts(
    plans: list[NestPlan], program: Program, reasons: list[str]
) -> tuple[list[NestPlan], list[str]]:
    """A function a kernel calls runs on the device: its own nests stay as they are."""
    helpers = {name for plan in plans for name in plan.helpers}
    kept = [plan for plan in plans if plan.function.name not in helpers]
    for plan in plans:
        if plan.function.name in helpers:
            why = f"'{plan.function.name}' is called from another offloaded loop"
            reasons.append(_where(program, plan.function, plan.root, why))
    return kept, reasons


def _where(program: Program, function: Function, loop: Loop, why: str) -> str:
    return (
        f"{program.path}:{loop.line}:{loop.column}: cannot offload loop '{loop.var}' "
        f"in '{function.name}': {why}"
    )


def _plan(
    program: Program,
    function: Function,
    outer: Loop,
    root: Loop,
    tree: Tree,
    source: bytes,
    taken: set[str],
) -> NestPlan:
    """How to offload nest `root`, which is `outer` or inside it (the analysis gives data
    regions for outermost loops: a superset of what an inner nest touches)."""
    if function.name == "main":
        raise Refuse("main's loops stay on the host in this version (outlining comes later)")
    outer_definition = _require_free_function(function, tree)
    _require_parallel(root)
    loops = _mapped_loops(root)
    require_enough_work(loops)
    nest = for_node(tree, root)
    innermost = for_node(tree, loops[-1])
    body = innermost.child_by_field_name("body")
    if body is None:
        raise Refuse("the loop has no body")
    require_no_jumps(nest)
    arrays = tuple(
        _widened(narrowed(data, root), nest.start_byte, tree, source)
        for data in kernel_arrays(function, outer, nest, tree, source)
    )
    levels = mapped_levels(loops, tree, source, taken)
    outer_node = for_node(tree, outer)
    template, template_args = _template_of(outer_definition, source)
    benign = set(root.benign)
    lambdas = called_lambdas(nest, outer_definition, source)
    generated = {g.var for g in root.generators}
    scalars, privates = _scalars(
        nest, outer_node, levels, arrays, tree, source, benign, tuple(lambdas), generated
    )
    flags = tuple((t, n) for t, n in privates if n in benign)
    privates = tuple((t, n) for t, n in privates if n not in benign)
    scalars = tuple((t, n) for t, n in scalars if n not in template_args)
    helpers = device_helpers(nest, tree, source, program, tuple(lambdas))
    require_no_array_sizeof(nest, arrays, source)
    _require_no_vector_members(nest, levels, arrays, source)
    for node in lambdas:
        _require_no_vector_members(node, (), arrays, source)
    lambda_texts = tuple(device_code(cs.text(node, source), node) for node in lambdas)
    body_indent = line_indent(source, first_statement(body).start_byte)
    # the mapped levels' prologues run in each thread, before the innermost body
    moved = [
        source[loop.prologue.start : loop.prologue.end].decode("utf-8", errors="surrogateescape")
        for loop in loops[:-1]
        if loop.prologue is not None
    ]
    body_text = device_code(f"\n{body_indent}".join([*moved, body_statements(body, source)]), body)
    types = [a.elem_type for a in arrays] + [t for t, _ in scalars + privates]
    for type_ in types:
        device_code(type_, body)
    return NestPlan(
        function=function,
        root=root,
        levels=levels,
        arrays=arrays,
        scalars=scalars,
        privates=privates,
        helpers=helpers,
        kernel="",  # named by the caller: kernel names are unique in the whole program
        device_names=tuple((a.name, fresh_name(f"d_{a.name}", taken)) for a in arrays),
        grid=fresh_name("grid", taken),
        block=fresh_name("block", taken),
        body=body_text,
        indent=line_indent(source, root.span.start),
        body_indent=body_indent,
        end=nest.end_byte,
        template=template,
        template_args=template_args,
        flags=flags,
        precondition=root.precondition,
        original=cs.text(nest, source),
        lambdas=lambda_texts,
        uses_std=any(
            std_device.uses_std(t)
            for t in [*(cs.text(n, source) for n in lambdas), body_statements(body, source), *types]
        ),
        generators=root.generators,
    )


def _template_of(definition: Node, source: bytes) -> tuple[str, tuple[str, ...]]:
    """The template header (`template <int R, typename T>`) and parameter names of a
    function template; empty for a plain function."""
    if definition.type != "template_declaration":
        return "", ()
    parameters = definition.child_by_field_name("parameters")
    assert parameters is not None  # checked by _require_plain_template
    header = "template " + " ".join(cs.text(parameters, source).split())
    return header, tuple(template_parameter_names(definition))


def _require_parallel(root: Loop) -> None:
    if root.parallel and root.pattern == "plain" and not root.early_exit:
        return
    if root.pattern == "generator" and root.generators and not root.early_exit:
        return  # each iteration's generator state is jumped to
    raise Refuse(_not_parallel(root))


def _not_parallel(root: Loop) -> str:
    if root.early_exit:
        return "the loop can exit early (break, return or goto)"
    if root.pattern != "plain" and root.pattern != "sequential":
        what = _PATTERN_WORDS.get(root.pattern, f"a {root.pattern} loop")
        return f"the loop is {what} (try the '{_method_for(root.pattern)}' method)"
    return root.reason or "the loop is not proven parallel"


_PATTERN_WORDS = {
    "reduction": "a reduction",
    "scan": "a scan",
    "atomic_update": "an irregular update of shared elements",
}


def _method_for(pattern: str) -> str:
    return {"reduction": "reduction", "scan": "scan", "atomic_update": "atomic_privatize"}.get(
        pattern, pattern
    )


def _mapped_loops(root: Loop) -> list[Loop]:
    """The root and up to two perfectly nested parallel levels whose bounds do not
    depend on the outer mapped variables (a rectangular grid)."""
    loops = [root]
    states = {g.var for g in root.generators}
    while len(loops) < 3 and _nested(loops[-1]):
        child = loops[-1].children[0]
        outer_vars = {loop.var for loop in loops}
        bound_names = set(IDENT.findall(child.lower)) | set(IDENT.findall(child.upper))
        if states:  # the same states, each level's iteration jumping its own steps
            usable = child.pattern == "generator" and {g.var for g in child.generators} == states
        else:
            usable = child.parallel and child.pattern == "plain"
        usable = usable and not child.early_exit
        if not usable or bound_names & outer_vars or child.step == 0:
            break
        loops.append(child)
    return loops


_OPERAND = re.compile(r"(?<![\w.>:])([A-Za-z_]\w*)(?!\s*[\w(])")


def _widened(data: ArrayData, at: int, tree: Tree, source: bytes) -> ArrayData:
    """The element count and offset computed in 64 bits: `n * m` in int overflows for
    arrays past 2^31 elements, which a GPU holds easily."""

    def widen(match: re.Match[str]) -> str:
        declared = cs.visible(tree, source, match.group(1), at)
        if declared is None or declared.kind not in ("scalar", "reference"):
            return match.group(0)
        return f"(long long){match.group(1)}"

    if data.count is None or not re.search(r"[*+]", data.count):
        return data  # a single name or a constant cannot overflow on its own
    return replace(data, count=_OPERAND.sub(widen, data.count))


def _scalars(
    nest: Node,
    outer: Node,
    levels: tuple[Level, ...],
    arrays: tuple[ArrayData, ...],
    tree: Tree,
    source: bytes,
    benign: set[str] = frozenset(),  # type: ignore[assignment]
    lambdas: tuple[Node, ...] = (),
    generated: set[str] = frozenset(),  # type: ignore[assignment]
) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]:
    """Names the nest uses that are declared outside it: read-only ones travel by value,
    written ones (privatizable temporaries, inner loop counters) get one copy per thread;
    the `generated` states are neither (NestPlan.generators)."""
    mapped = {level.loop.var for level in levels}
    array_names = {a.name for a in arrays}
    inside = cs.names_declared_in(nest, source)
    written = cs.names_written(nest, source)
    scanned = [nest, *lambdas]
    for node in lambdas:
        inside |= std_device.lambda_locals(node, source)
    called = {
        node_key(n.child_by_field_name("function"))
        for node in scanned
        for _, n in cs.calls_in(node, source)
    }
    # The host computes the trip counts: only the lower bounds are evaluated in the kernel.
    headers = {node_key(n) for n in host_only_parts(nest, len(levels))}
    scalars: dict[str, str] = {}
    privates: dict[str, str] = {}
    for ident in [i for node in scanned for i in cs.identifiers_in(node)]:
        name = cs.text(ident, source)
        if name in mapped or name in array_names or name in inside or node_key(ident) in called:
            continue
        if name in generated:
            continue
        if node_key(ident) in headers:
            continue
        declared = cs.visible(tree, source, name, nest.start_byte)
        if declared is None or declared.kind == "function":
            continue  # a macro, an enum constant or a function: visible to the kernel too
        if declared.kind in ("pointer", "array"):
            raise Refuse(f"it uses {declared.kind} '{name}' whose extent is unknown")
        spelled = QUALIFIERS.sub("", declared.base).strip() if name in written else declared.base
        if name not in written:
            scalars[name] = " ".join(spelled.split())
            continue
        if declared.scope == "global":
            raise Refuse(f"it writes the global variable '{name}'")
        if declared.kind == "reference":
            raise Refuse(f"it writes through the reference '{name}'")
        if name not in benign and used_after(nest, outer, name, tree, source):
            raise Refuse(f"'{name}' is written in the loop and used after it")
        privates[name] = " ".join(spelled.split())
    return tuple((t, n) for n, t in scalars.items()), tuple((t, n) for n, t in privates.items())


def _require_no_vector_members(
    nest: Node, levels: tuple[Level, ...], arrays: tuple[ArrayData, ...], source: bytes
) -> None:
    """In the kernel a std::vector is a plain pointer to its elements: `v[i]` still works,
    `v.size()` does not (the host evaluates the mapped loops' own tests)."""
    vectors = {a.name for a in arrays if a.kind == "vector"}
    host_only = {node_key(n) for n in host_only_parts(nest, len(levels))}
    for node in cs.walk(nest):
        if node.type != "field_expression":
            continue
        argument = node.child_by_field_name("argument")
        if argument is None or node_key(argument) in host_only:
            continue
        if cs.text(argument, source) in vectors:
            raise Refuse(
                f"line {cs.line_of(node)}: the kernel cannot use '{cs.text(node, source)}'"
            )


# ---- emitting -----------------------------------------------------------------------


def emit(program: Program, plans: list[NestPlan]) -> str:
    """The program with every planned nest offloaded."""
    source = program.source.encode("utf-8", errors="surrogateescape")
    tree = cs.parse(source)
    edits: list[Edit] = []
    by_function: dict[int, list[NestPlan]] = {}
    for plan in plans:
        by_function.setdefault(plan.function.span.start, []).append(plan)
    # the runtime helpers go with the kernels that come first in the file
    for position, start in enumerate(sorted(by_function)):
        group = by_function[start]
        name = group[0].function.name
        kernels = "".join(kernel_text(plan) for plan in group)
        at = where_kernels_go(tree, source, start)
        prelude = PRELUDE + (std_device.STD_PRELUDE if any(p.uses_std for p in plans) else "")
        text = (prelude if position == 0 else "") + kernels
        edits.append(Edit(at, at, text, f"kernels of {name}"))
        for plan in group:
            start = plan.root.span.start
            edits.append(Edit(start, plan.end, host_text(plan), f"offload {name}"))
    helpers = dict.fromkeys(h for plan in plans for h in plan.helpers)
    for helper in helpers:
        edits.extend(_device_edits(helper, tree, source))
    return apply_edits(source, edits).decode("utf-8", errors="surrogateescape")


def _device_edits(name: str, tree: Tree, source: bytes) -> list[Edit]:
    """`__host__ __device__` on the definition and every prototype of `name`."""
    definition = cs.function_nodes(tree, source)[name]
    nodes = [definition, *cs.prototypes(tree, source, name)]
    return [
        Edit(node.start_byte, node.start_byte, "__host__ __device__ ", f"{name} runs on the device")
        for node in nodes
    ]


def kernel_text(plan: NestPlan) -> str:
    params = [std_device.device_text(array_param(a)) for a in plan.arrays]
    params += [f"{std_device.device_text(type_)} {name}" for type_, name in plan.scalars]
    params += [f"long long {level.trips}" for level in plan.levels]
    params += [f"{type_} *{name}_flag, {type_} {name}_in" for type_, name in plan.flags]
    params += [f"{g.type} {g.var}_start" for g in plan.generators]
    params += [f"unsigned long long {name}" for name, _ in _steps_arguments(plan)]
    loops = ", ".join(level.loop.var for level in plan.levels)
    lines = [
        *(jump_text(plan, g) for g in plan.generators),
        f"/* Loop nest '{loops}' of {plan.function.name}() (line {plan.root.line}): one thread "
        "per iteration. */",
        *([plan.template] if plan.template else []),
        f"__global__ void {plan.kernel}({', '.join(params)})",
        "{",
    ]
    indent = "    "
    lines += [f"{indent}{type_} {name} = {name}_in;" for type_, name in plan.flags]
    for level in plan.levels:
        lines += grid_stride_header(level, indent)
        indent += "    "
    lines += [f"{indent}{std_device.device_text(type_)} {name};" for type_, name in plan.privates]
    for g in plan.generators:  # each mapped level's iteration number t counts from 0
        offset = " + ".join(
            f"(unsigned long long){level.index} * {_steps_operand(g, level)}"
            for level in plan.levels
        )
        lines.append(f"{indent}{g.type} {g.var} = {jump_name(plan, g)}({g.var}_start, {offset});")
    lines += [indent + reindent(text, plan.body_indent, indent) for text in plan.lambdas]
    lines.append(indent + reindent(plan.body, plan.body_indent, indent))
    for _ in plan.levels:
        indent = indent[:-4]
        lines.append(indent + "}")
    lines += [f"{indent}if ({name} != {name}_in) *{name}_flag = {name};" for _, name in plan.flags]
    lines.append("}")
    return "\n".join(lines) + "\n\n"


def _level_generator(generator: Generator, level: Level) -> Generator:
    """`generator`'s state as the loop of `level` advances it (its own steps an iteration)."""
    return next(g for g in level.loop.generators if g.var == generator.var)


def _steps_operand(generator: Generator, level: Level) -> str:
    """The steps an iteration of `level` takes, in the kernel: a number, or the parameter
    the host computes them into (they hang on the trip counts of loops inside)."""
    steps = _level_generator(generator, level)
    if steps.constant is not None:
        return f"{steps.constant}ull"
    return f"{generator.var}_steps_{level.loop.var}"


def _steps_arguments(plan: NestPlan) -> list[tuple[str, str]]:
    """(kernel parameter, host expression) of each level's steps that are not a number."""
    found = []
    for g in plan.generators:
        for level in plan.levels:
            steps = _level_generator(g, level)
            if steps.constant is None:
                found.append((_steps_operand(g, level), f"(unsigned long long)({steps.steps})"))
    return found


def jump_name(plan: NestPlan, generator: Generator) -> str:
    return f"{plan.kernel}_jump_{generator.var}"


def jump_text(plan: NestPlan, generator: Generator) -> str:
    """A function that advances `generator`'s state k steps at once: the step x -> a x + c
    composed with itself by squaring, the powers that k's bits select applied in turn (all
    powers of one map commute), in the state's unsigned type (modulo 2^bits, as the
    program's own arithmetic). log2(k) rounds where the program took k."""
    t, a, c = generator.type, generator.multiplier, generator.increment
    return "\n".join(
        [
            f"/* generator state '{generator.var}' of {plan.function.name}(): k steps of "
            f"x * {a} + {c} at once */",
            f"__host__ __device__ static inline {t} {jump_name(plan, generator)}({t} x, "
            "unsigned long long k)",
            "{",
            f"    {t} multiplier = ({t})1, increment = ({t})0;",
            f"    {t} a = ({t}){a}ull, c = ({t}){c}ull;",
            "    while (k != 0ull) {",
            "        if (k & 1ull) {",
            "            multiplier = multiplier * a;",
            "            increment = increment * a + c;",
            "        }",
            "        c = c * a + c; /* the step applied twice: x -> a (a x + c) + c */",
            "        a = a * a;",
            "        k >>= 1;",
            "    }",
            "    return x * multiplier + increment;",
            "}",
            "",
        ]
    )


def host_text(plan: NestPlan) -> str:
    """What replaces the nest in the host function."""
    ind = plan.indent + "    "
    inner = ind + "    "
    levels = plan.levels
    lines = ["{", f"{ind}/* cudaify: this loop nest runs on the GPU as {plan.kernel} */"]
    for level in levels:
        loop = level.loop
        inclusive = 1 if loop.upper_inclusive else 0
        lines.append(
            f"{ind}const long long {level.trips} = cudaify_trips({loop.lower}, {loop.upper}, "
            f"{loop.step}, {inclusive});"
        )
    nonempty = " && ".join(f"{level.trips} > 0" for level in levels)
    if plan.precondition:
        # the parallel run is only equivalent when the benign races' condition holds
        lines.append(f"{ind}if (!({plan.precondition})) {{")
        lines.append(inner + reindent(plan.original, plan.indent, inner))
        lines.append(f"{ind}}} else if ({nonempty}) {{")
    else:
        lines.append(f"{ind}if ({nonempty}) {{")
    lines += [inner + line for line in _transfer_in(plan)]
    lines += [inner + line for line in _launch(plan)]
    lines += [inner + line for line in _transfer_out(plan)]
    for g in plan.generators:  # where the loop would have left it
        trips = plan.levels[0].trips
        steps = f"{g.constant}ull" if g.constant is not None else f"({g.steps})"
        jumped = f"{jump_name(plan, g)}({g.var}, (unsigned long long){trips} * {steps})"
        lines.append(f"{inner}{g.var} = {jumped};")
    lines.append(ind + "}")
    lines += [ind + line for line in _final_values(plan)]
    lines.append(plan.indent + "}")
    return "\n".join(lines)


def _transfer_in(plan: NestPlan) -> list[str]:
    devices = dict(plan.device_names)
    lines = []
    for data in plan.arrays:
        lines.append(f"{element_type(data)} *{devices[data.name]} = NULL;")
    for data in plan.arrays:
        device = devices[data.name]
        lines.append(device_malloc(device, byte_size(data)))
    # Written arrays are copied in too: elements the nest does not write must keep
    # their values when the range is copied back.
    for data in plan.arrays:
        device, host = devices[data.name], host_address(data, writable=False)
        lines.append(
            f"CUDAIFY_CHECK(cudaMemcpy({device}, {host}, {byte_size(data)}, "
            "cudaMemcpyHostToDevice));"
        )
    for type_, name in plan.flags:
        lines += [
            f"{type_} *d_{name}_flag = NULL;",
            device_malloc(f"d_{name}_flag", f"sizeof({type_})"),
            f"CUDAIFY_CHECK(cudaMemcpy(d_{name}_flag, &{name}, sizeof({type_}), "
            "cudaMemcpyHostToDevice));",
        ]
    return lines


def _launch(plan: NestPlan) -> list[str]:
    devices = dict(plan.device_names)
    threads = THREADS[len(plan.levels)]
    by_dim = {level.dim: level for level in plan.levels}
    dims = [d for d in ("x", "y", "z") if d in by_dim]
    blocks = grid_blocks(
        [by_dim[d].trips for d in dims], threads, [f"{MOST_BLOCKS[d]}u" for d in dims]
    )
    arguments = [_device_argument(a, kernel_argument(a, devices[a.name])) for a in plan.arrays]
    arguments += [_device_scalar(type_, name) for type_, name in plan.scalars]
    arguments += [level.trips for level in plan.levels]
    arguments += [f"d_{name}_flag, {name}" for _, name in plan.flags]
    arguments += [g.var for g in plan.generators]
    arguments += [value for _, value in _steps_arguments(plan)]
    return [
        f"const dim3 {plan.block}({', '.join(str(t) for t in threads)});",
        f"const dim3 {plan.grid}({', '.join(blocks)});",
        f"{kernel_name(plan)}<<<{plan.grid}, {plan.block}>>>({', '.join(arguments)});",
        "CUDAIFY_CHECK(cudaGetLastError());",
    ]


def _device_argument(data: ArrayData, argument: str) -> str:
    """The host pointer as the kernel's parameter type (`std::complex<double> *` ->
    `cuda::std::complex<double> *`: the same layout)."""
    device = std_device.device_text(argument)
    if device != argument:
        return device  # a cast to the array shape, already in device types
    elem = element_type(data)
    if std_device.device_text(elem) == elem:
        return argument
    return f"reinterpret_cast<{std_device.device_text(elem)} *>({argument})"


def _device_scalar(type_: str, name: str) -> str:
    device = std_device.device_text(type_)
    if device == type_:
        return name
    plain = " ".join(QUALIFIERS.sub("", device).split())
    return f"*reinterpret_cast<const {plain} *>(&{name})"


def kernel_name(plan: NestPlan) -> str:
    """The kernel as a launch names it: with the template's arguments for a template."""
    if not plan.template:
        return plan.kernel
    return f"{plan.kernel}<{', '.join(plan.template_args)}>"


def _transfer_out(plan: NestPlan) -> list[str]:
    devices = dict(plan.device_names)
    lines = []
    for data in plan.arrays:
        if data.access in ("write", "readwrite"):
            host = host_address(data, writable=True)
            lines.append(
                f"CUDAIFY_CHECK(cudaMemcpy({host}, {devices[data.name]}, {byte_size(data)}, "
                "cudaMemcpyDeviceToHost));"
            )
    for type_, name in plan.flags:
        lines += [
            f"CUDAIFY_CHECK(cudaMemcpy(&{name}, d_{name}_flag, sizeof({type_}), "
            "cudaMemcpyDeviceToHost));",
            device_free(f"d_{name}_flag"),
        ]
    if len(lines) == 0:
        lines.append("CUDAIFY_CHECK(cudaDeviceSynchronize());")
    lines += [device_free(devices[a.name]) for a in plan.arrays]
    return lines


def _final_values(plan: NestPlan) -> list[str]:
    """Loop variables declared outside the loop end with the value the loop leaves."""
    lines = []
    for position, level in enumerate(plan.levels):
        if not level.declared_outside:
            continue
        loop = level.loop
        step = f" * {loop.step}" if loop.step != 1 else ""
        value = f"({level.var_type})({paren(loop.lower)} + {level.trips}{step})"
        guard = " && ".join(f"{outer.trips} > 0" for outer in plan.levels[:position])
        statement = f"{loop.var} = {value};"
        lines.append(f"if ({guard}) {statement}" if guard else statement)
    return lines
