"""`narrow_counters`: 32-bit grid-stride counters where a launch's sizes allow them.

The mappings (offload, schedule) count each grid level's iterations in a `long long`, since
a trip count read from the program may exceed 2^31. Counting, comparing and stepping in
64 bits costs each thread a few dependent instructions before its first load, which
shows in short memory-bound kernels (by hand, on an H200: a 7-point 3-D stencil 79 -> 71
us, a 2-D Jacobi step 8.2 -> 5.7 us, a 1-D stencil 6.4 -> 5.1 us).

The rule moves the kernel's body into a `__device__` function template over the counter
type, with every grid-stride level of the mapping's shape counting in that type, and makes
the kernel call it with `int` when every such level's trip count and grid stride fit
(`0 <= trips <= INT_MAX - blockDim * gridDim`: a counter then never passes INT_MAX, since
it is below the trip count before each step), else with `long long`, the code as it was.
The choice is the same for every thread of a launch (parameters and the launch's shape),
so the kernel's name, its launches and the host code are unchanged. A counter's other uses
in the body read `(long long)t`: the body computes exactly what it computed before.

A level counts in the narrow type only where the trip count is a parameter the kernel never
writes and the body never writes the counter or takes its address. Function templates'
kernels are left alone."""

from __future__ import annotations

import re

from tree_sitter import Node

from cudaify.core import Problem, Variant
from cudaify.frontend.edits import Edit, apply_edits
from cudaify.transforms import csource as cs
from cudaify.transforms import kernel_text as kt
from cudaify.transforms.base import Context, Method, Outcome
from cudaify.transforms.kernel_codegen import fresh_name

COUNTER = "cudaify_counter_t"  # the device function's template parameter
NARROW = "int"
WIDE = "long long"
INT_MAX = "2147483647LL"
NOTHING = (
    "no kernel counts a grid-stride loop of the mapping's shape in a long long (kernels whose "
    "threads combine values are left alone)"
)


class NarrowCounters(Method):
    name = "narrow_counters"
    summary = "32-bit grid-stride counters, chosen per launch where the sizes fit"
    category = "compute"
    follows = (
        "offload",
        "schedule",
        "data_residency",
        "coalesce",
        "readonly_cache",
        "unroll",
        "fast_math",
        "launch_tuning",
    )
    instruction = (
        "For each __global__ kernel whose grid-stride loops count in long long (`for (long "
        "long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < trips; t += (long "
        "long)blockDim.x * gridDim.x)`): move its body into a `template <typename "
        f"{COUNTER}> static __device__ __forceinline__ void` function with the same "
        f"parameters, where those loops count in {COUNTER} (`t < ({COUNTER})trips`, the "
        "casts of blockDim too) and every other use of the counter reads `(long long)t`. "
        "The kernel's body becomes `if (trips >= 0 && trips <= 2147483647LL - (long long)"
        "blockDim.x * gridDim.x) f<int>(params); else f<long long>(params);`, one such term "
        "per loop. Change nothing else: not the launches, not the host code."
    )

    def applies(self, variant: Variant, ctx: Context) -> str | None:
        edits, _ = _plan(variant.code)
        return None if edits else NOTHING

    def apply_rule(self, variant: Variant, ctx: Context) -> Outcome:
        edits, details = _plan(variant.code)
        if not edits:
            return Outcome(None, NOTHING)
        code = kt.decode(apply_edits(kt.encode(variant.code), edits))
        return Outcome(variant.then(self.name, code, "rule", detail="; ".join(details)))

    def check(self, before: Variant, after: Variant, ctx: Context) -> list[Problem]:
        """A kernel launched from host code the program runs chooses, by a test of its
        launch's shape, between a device function template's `int` and `long long`
        instances, which it calls with its own parameters in order; that template counts
        a grid-stride loop in its type parameter."""
        from cudaify.transforms import postcondition as pc

        problems = pc.common_problems(self.name, before.code, after.code)
        if problems:
            return problems
        new = pc.parsed(after.code)
        templates = _device_templates(new.root, new.data)
        for kernel in pc.launched_kernels(pc.parsed(before.code), new).values():
            if _dispatched(kernel, templates, new.data) is not None:
                return []
        return [
            Problem(
                self.name,
                "no launched kernel chooses between int and long long instances of a "
                "device function that counts its grid-stride loop in its type parameter",
            )
        ]


def _plan(code: str) -> tuple[list[Edit], list[str]]:
    data = kt.encode(code)
    tree = cs.parse(data)
    taken: set[str] | None = None  # the program's names, read once a kernel is narrowed
    edits: list[Edit] = []
    details: list[str] = []
    combining = _combining_kernels(code)
    for kernel in kt.kernels(data):
        node, body = kernel.node, kernel.node.child_by_field_name("body")
        if body is None or (node.parent is not None and node.parent.type == "template_declaration"):
            continue
        if kernel.name in combining:
            continue
        parameters = _parameter_names(node, data)
        if parameters is None:
            continue
        written = cs.names_written(body, data)
        loops = []
        for level in kernel.levels:
            loop = cs.node_at(tree, level.start, "for_statement")
            if loop is None or level.trips not in parameters or level.trips in written:
                continue
            counter = _counter(loop, data)
            inner = loop.child_by_field_name("body")
            if counter is None or inner is None or counter in cs.names_written(inner, data):
                continue
            loops.append((loop, counter, level))
        if not loops:
            continue
        if taken is None:
            taken = {cs.text(n, data) for n in cs.walk(tree.root_node) if "identifier" in n.type}
        function = fresh_name(f"{kernel.name}_counted", taken)
        text = _narrowed_body(body, data, loops)
        signature = cs.text(node.child_by_field_name("declarator") or node, data)
        signature = signature.replace(kernel.name, function, 1)
        template = (
            f"template <typename {COUNTER}>\n"
            f"static __device__ __forceinline__ void {signature}\n{text}\n\n"
        )
        tests = dict.fromkeys(
            f"{level.trips} >= 0 && {level.trips} <= {INT_MAX} - "
            f"(long long)blockDim.{level.dim} * gridDim.{level.dim}"
            for _, _, level in loops
        )
        arguments = ", ".join(parameters)
        test = " &&\n        ".join(tests)
        dispatch = (
            "{\n"
            f"    if ({test})\n"
            f"        {function}<{NARROW}>({arguments});\n"
            "    else\n"
            f"        {function}<{WIDE}>({arguments});\n"
            "}"
        )
        edits.append(Edit(node.start_byte, node.start_byte, template, "the counted body"))
        edits.append(Edit(body.start_byte, body.end_byte, dispatch, "choose the counter"))
        levels = ", ".join(level.var for _, _, level in loops)
        details.append(f"{kernel.name}: {levels}")
    return edits, details


def _combining_kernels(code: str) -> set[str]:
    """The kernels whose threads combine values (shuffles, atomics, block reductions): on an
    H100 both such kernels measured ran slower narrowed (a sum's grid-stride loop with a
    warp-shuffle and atomicAdd epilogue, 21.1 -> 24.2 and 26.3 -> 30.2 us), where every map
    and stencil measured ran 12-24% faster."""
    from cudaify.transforms import postcondition as pc

    source = pc.parsed(code)
    return {name for name, node in pc.kernels(source).items() if pc.combines_threads(source, node)}


def _parameter_names(definition: Node, data: bytes) -> list[str] | None:
    """The names of a kernel's parameters in order, or None where one has no plain name
    (unnamed, variadic): the kernel cannot forward them."""
    names = []
    for parameter in cs.parameter_nodes(definition):
        if parameter.type != "parameter_declaration":
            return None
        declared = cs.declared_names(parameter, data, "param")
        if not declared:
            return None
        names.append(declared[0].name)
    return names


def _counter(loop: Node, data: bytes) -> str | None:
    init = loop.child_by_field_name("initializer")
    declarator = cs.find_child(init, "init_declarator") if init is not None else None
    name = declarator.child_by_field_name("declarator") if declarator is not None else None
    return cs.text(name, data) if name is not None and name.type == "identifier" else None


def _narrowed_body(body: Node, data: bytes, loops: list[tuple[Node, str, kt.Level]]) -> str:
    """The kernel's body with each loop of `loops` counting in COUNTER and its counter's
    other uses widened to long long."""
    base = body.start_byte
    edits = []
    for loop, counter, level in loops:
        init = loop.child_by_field_name("initializer")
        update = loop.child_by_field_name("update")
        inner = loop.child_by_field_name("body")
        assert init is not None and update is not None and inner is not None
        d = level.dim
        header = (
            f"{COUNTER} {counter} = blockIdx.{d} * ({COUNTER})blockDim.{d} + threadIdx.{d}; "
            f"{counter} < ({COUNTER}){level.trips}; "
            f"{counter} += ({COUNTER})blockDim.{d} * gridDim.{d}"
        )
        edits.append(Edit(init.start_byte - base, update.end_byte - base, header, "narrow"))
        for use in cs.identifiers_in(inner):
            if cs.text(use, data) == counter:
                start, end = use.start_byte - base, use.end_byte - base
                edits.append(Edit(start, end, f"((long long){counter})", "widen a use"))
    return kt.decode(apply_edits(data[base : body.end_byte], edits))


# ---- the postcondition ---------------------------------------------------------------------


def _device_templates(root: Node, data: bytes) -> dict[str, tuple[str, Node]]:
    """Device-only function templates of one type parameter: name -> (parameter, definition)."""
    found = {}
    for node in root.children:
        if node.type != "template_declaration":
            continue
        definition = cs.unwrap_template(node)
        listed = node.child_by_field_name("parameters")
        if definition is None or listed is None or len(listed.named_children) != 1:
            continue
        parameter = listed.named_children[0]
        names = [c for c in parameter.named_children if c.type == "type_identifier"]
        qualifiers = {c.type for c in definition.children}
        if parameter.type != "type_parameter_declaration" or not names:
            continue
        if "__device__" not in qualifiers or "__global__" in qualifiers or "__host__" in qualifiers:
            continue
        name = cs.function_name(definition, data)
        if name:
            found[name] = (cs.text(names[-1], data), definition)
    return found


def _dispatched(kernel: Node, templates: dict[str, tuple[str, Node]], data: bytes) -> str | None:
    """f, where `kernel`'s body is `if (test of blockDim and gridDim) f<int>(params); else
    f<long long>(params);` for a template f of `templates` that counts a grid-stride loop
    in its type parameter; else None."""
    body = kernel.child_by_field_name("body")
    statements = [c for c in body.named_children if c.type != "comment"] if body else []
    if len(statements) != 1 or statements[0].type != "if_statement":
        return None
    choice = statements[0]
    condition = choice.child_by_field_name("condition")
    otherwise = choice.child_by_field_name("alternative")
    if condition is None or otherwise is None:
        return None
    tested = cs.text(condition, data)
    if "blockDim" not in tested or "gridDim" not in tested:
        return None
    parameters = _parameter_names(kernel, data)
    calls = [
        _instance_called(branch, data, parameters)
        for branch in (choice.child_by_field_name("consequence"), otherwise)
    ]
    if calls[0] is None or calls[1] is None or calls[0][0] != calls[1][0]:
        return None
    if (calls[0][1], calls[1][1]) != (NARROW, WIDE) or calls[0][0] not in templates:
        return None
    parameter, definition = templates[calls[0][0]]
    return calls[0][0] if _counts_in(definition, parameter, data) else None


def _instance_called(
    branch: Node | None, data: bytes, parameters: list[str] | None
) -> tuple[str, str] | None:
    """(function, type argument) of a branch that is one call `f<T>(the kernel's
    parameters in order);`, else None."""
    while branch is not None and branch.type in ("compound_statement", "else_clause"):
        inner = [c for c in branch.named_children if c.type != "comment"]
        if len(inner) != 1:
            return None
        branch = inner[0]
    if branch is None or branch.type != "expression_statement" or not branch.named_children:
        return None
    call = branch.named_children[0]
    function = call.child_by_field_name("function") if call.type == "call_expression" else None
    if function is None or function.type != "template_function":
        return None
    name = function.child_by_field_name("name")
    listed = function.child_by_field_name("arguments")
    arguments = call.child_by_field_name("arguments")
    if name is None or listed is None or arguments is None:
        return None
    passed = [cs.text(a, data).strip() for a in arguments.named_children if a.type != "comment"]
    if parameters is None or passed != parameters:
        return None
    spelled = " ".join(cs.text(listed, data).strip("<> \t\n").split())
    return cs.text(name, data), spelled


def _counts_in(definition: Node, parameter: str, data: bytes) -> bool:
    """Whether a for loop of `definition` declares its counter of type `parameter` and
    starts it from the block and thread indices."""
    for node in cs.walk(definition):
        if node.type != "for_statement":
            continue
        init = node.child_by_field_name("initializer")
        if init is None or init.type != "declaration":
            continue
        declared = init.child_by_field_name("type")
        text = cs.text(init, data)
        if declared is not None and cs.text(declared, data) == parameter:
            if "blockIdx." in text and "threadIdx." in text:
                return True
    return False


# ---- reading a narrowed program as it was --------------------------------------------------


def widened(code: str) -> str:
    """`code` with each kernel that chooses its counter type (see `_dispatched`) holding
    its counted body again, the counters `long long`: the same work in the text the cost
    model and the roofline read. `code` itself where no kernel chooses."""
    if f"<{NARROW}>(" not in code or f"<{WIDE}>(" not in code:
        return code
    data = kt.encode(code)
    tree = cs.parse(data)
    templates = _device_templates(tree.root_node, data)
    if not templates:
        return code
    edits = []
    for kernel in kt.kernels(data):
        body = kernel.node.child_by_field_name("body")
        function = _dispatched(kernel.node, templates, data)
        if body is None or function is None:
            continue
        parameter, definition = templates[function]
        counted = definition.child_by_field_name("body")
        if counted is None:
            continue
        text = cs.text(counted, data)
        name = re.escape(parameter)
        text = re.sub(rf"<\s*\(\s*{name}\s*\)\s*(\w+)\s*;", r"< \1;", text)
        text = re.sub(rf"\b{name}\b", WIDE, text)
        text = re.sub(r"\(\(long long\)(\w+)\)", r"\1", text)
        edits.append(Edit(body.start_byte, body.end_byte, text, "the counted body"))
    return kt.decode(apply_edits(data, edits)) if edits else code
