"""`data_residency`: keep arrays on the device across repeated calls and time loops.

After `offload`, every call of an offloaded function allocates, copies in, launches,
copies out and frees: a function called in a loop moves its arrays twice per iteration.
The rule replaces each launch's allocate-and-copy pairs by `cudaify_map` / `cudaify_unmap`
on a present table (OpenACC's idea) emitted once into the file, and opens a *residency
scope* around loops whose iterations only launch work or touch no memory the device may
hold. Outside a scope a map behaves exactly as before (copy in; copy back and release at
unmap); inside, a host range mapped once stays on the device, later maps of a range it
contains copy nothing, and the scope's end copies written ranges back. Device buffers are
pooled, so no call allocates twice.

Host statements inside a scope (or inside an offloaded function, which may run in one)
that touch memory get a barrier before them: `cudaify_host_reads()` (copy written ranges
back; device copies stay valid) when the statement can only read memory,
`cudaify_host_writes()` (copy back and forget every mapping) when it may write or free it.
A scope is refused when a host statement could see device-held data without a barrier:
memory access in a loop header, an array declared inside the loop (its address is reused),
a return or goto out of it, a call of a user function that itself launches work but is not
an offloaded wrapper, or a mapped range whose base is a local of an offloaded function
(dead once it returns). The table is keyed by host address, so pointer swaps
(`t = a; a = b; b = t;`) between iterations keep both buffers resident."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Literal

from tree_sitter import Node, Tree

from cudaify.core import Problem, Variant
from cudaify.frontend.edits import Edit, apply_edits, shifted_offset
from cudaify.transforms import csource as cs
from cudaify.transforms import kernel_nest as kn
from cudaify.transforms.base import Context, Method, Outcome
from cudaify.transforms.kernel_codegen import (
    DEVICE_ALLOCATIONS,
    DEVICE_FREES,
    DEVICE_MALLOCS,
    MATH_FUNCTIONS,
    paren,
)
from cudaify.transforms.prelude import LAUNCHING_HELPERS, runtime_text

RUNTIME_MARKER = "/* ---- cudaify data residency ---- */"
PRELUDE_MARKER = "/* ---- cudaify runtime helpers ---- */"
_AFTER_PRELUDE = "static inline unsigned int cudaify_blocks("

# The present table and the buffer pool (maps, unmaps, scopes), pasted after the offload
# prelude's last helper.
RUNTIME = runtime_text("data_residency.cuh")

# Library functions that read their arguments and write no memory the program owns.
READ_ONLY_LIBRARY = MATH_FUNCTIONS | frozenset(
    """printf fprintf puts fputs putchar fputc putc fflush fwrite strlen strcmp strncmp memcmp
    abs labs llabs atoi atol atof strtod strtof strtol clock time rand
    static_cast const_cast reinterpret_cast dynamic_cast""".split()
)
# CUDA runtime queries: they write only what their pointer arguments point to (a host
# helper that asks the multiprocessor count once, gemm_tiling's tile and split choosers).
RUNTIME_QUERIES = frozenset(
    """cudaGetDevice cudaGetDeviceCount cudaDeviceGetAttribute cudaGetDeviceProperties
    cudaGetLastError cudaPeekAtLastError""".split()
)
# Types whose values hold no pointer: naming such a variable touches no mapped memory.
ARITHMETIC_WORDS = frozenset(
    """int long short char float double unsigned signed size_t ssize_t bool _Bool const
    volatile static register int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t
    uint64_t ptrdiff_t intptr_t uintptr_t auto""".split()
)
LOOPS = cs.LOOP_TYPES
# Const members of std::vector / std::array that read no element.
CONTAINER_OBSERVERS = frozenset({"size", "empty", "capacity", "max_size", "data"})
_STD_CONTAINER = re.compile(r"^(?:const\s+)?std::(?:vector|array)\s*<")
_STD_VECTOR = re.compile(r"^std::vector\s*<")
_DEVICE_CALLS = ("cudaify_map", "cudaify_unmap")


class _Refuse(Exception):
    """Internal: why a scope (or a function's residency) is not safe."""


class DataResidency(Method):
    name = "data_residency"
    summary = "keep arrays on the device across repeated calls and time loops"
    category = "memory"
    follows = (
        "offload",
        "segmented",
        "schedule",
        "reduction",
        "atomic_privatize",
        "scan",
        "sort",
        "compact",
        "scatter",
        "wavefront",
        "coalesce",
        "readonly_cache",
        "shared_tiling",
        "register_tiling",
        "unroll",
        "fast_math",
        "narrow_counters",
        "launch_tuning",
    )
    instruction = (
        "Keep arrays on the GPU across repeated calls of the offloaded functions. Emit, once, "
        "a present table keyed by host address ranges: cudaify_map(host, bytes, reads, writes) "
        "returns the device copy (copying in only when the range is not already present), "
        "cudaify_unmap does nothing inside a residency scope and copies back and releases "
        "outside one; cudaify_scope_begin()/cudaify_scope_end() around a loop (in main or "
        "in the function with a time loop) whose body only calls offloaded functions, swaps "
        "pointers or computes scalars; the scope's end copies written ranges back. Before any "
        "host statement inside the scope that reads arrays, copy written ranges back; before "
        "one that writes or frees them, copy back and forget all mappings. Reuse device "
        "buffers instead of cudaMalloc/cudaFree on every call. Change nothing else."
    )

    def applies(self, variant: Variant, ctx: Context) -> str | None:
        plan = _plan(variant.code)
        return None if plan.scopes else plan.reason()

    def apply_rule(self, variant: Variant, ctx: Context) -> Outcome:
        plan = _plan(variant.code)
        if not plan.scopes:
            return Outcome(None, plan.reason())
        detail = "; ".join(plan.scopes)
        return Outcome(variant.then(self.name, plan.code, "rule", detail=detail))

    def check(self, before: Variant, after: Variant, ctx: Context) -> list[Problem]:
        """Data stays on the device across launches: more residency scopes are opened in
        host code, or fewer transfers and allocations are made (in host loops, or in all:
        buffers reused); scopes and maps balanced, the runtime present."""
        from cudaify.transforms import postcondition as pc

        common = pc.common_problems(self.name, before.code, after.code)
        if common:
            return common
        problems = residency_problems(after.code)
        old, new = pc.parsed(before.code), pc.parsed(after.code)
        scopes = frozenset({"cudaify_scope_begin"})
        opened = pc.host_calls(new, scopes, in_loops=False) > pc.host_calls(old, scopes, False)
        hoisted = any(
            pc.host_calls(new, TRANSFERS, in_loops) < pc.host_calls(old, TRANSFERS, in_loops)
            for in_loops in (True, False)
        )
        if not (opened or hoisted):
            problems.append(
                Problem(
                    "data_residency",
                    "no residency scope was opened and no transfer or allocation was saved",
                )
            )
        return problems


# host calls that move or allocate device data: what residency takes out of loops
TRANSFERS = (
    frozenset({"cudaMemcpy", "cudaMemcpyAsync", "cudaMallocAsync", "cudaFreeAsync"})
    | {"cudaMemcpy2D", "cudaMemset", "cudaMemsetAsync"}
    | DEVICE_ALLOCATIONS
)


def residency_problems(code: str) -> list[Problem]:
    """Scopes balanced in each function, the runtime present, no raw transfer of a
    launch left beside a map."""
    problems = []
    if "cudaify_scope_begin()" in code and RUNTIME_MARKER not in code:
        problems.append(Problem("data_residency", "scopes are opened but the runtime is missing"))
    data = code.encode("utf-8", errors="surrogateescape")
    tree = cs.parse(data)
    for name, nodes in cs.all_function_nodes(tree, data).items():
        for node in nodes:
            calls = [c for c, _ in cs.calls_in(node, data)]
            if calls.count("cudaify_scope_begin") != calls.count("cudaify_scope_end"):
                problems.append(
                    Problem(
                        "data_residency",
                        f"'{name}' opens and closes a different number of residency scopes",
                        line=cs.line_of(node),
                    )
                )
            if calls.count("cudaify_map") != calls.count("cudaify_unmap"):
                problems.append(
                    Problem(
                        "data_residency",
                        f"'{name}' maps and unmaps a different number of ranges",
                        line=cs.line_of(node),
                    )
                )
    return problems


# ---- the plan ------------------------------------------------------------------------


@dataclass
class _Plan:
    code: str = ""
    scopes: list[str] = field(default_factory=list)  # one line per scope opened
    # the same before the edits: a line with {} for each line number, and the byte offsets
    # (in the mapped text) of the statements those are; `_plan` numbers them in the output
    opened: list[tuple[str, tuple[int, ...]]] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)

    def reason(self) -> str:
        return self.reasons[0] if self.reasons else "no loop repeats a launch"


def _plan(code: str) -> _Plan:
    plan = _Plan()
    if RUNTIME_MARKER in code:
        plan.reasons.append("data residency is already applied")
        return plan
    if PRELUDE_MARKER not in code or _AFTER_PRELUDE not in code:
        plan.reasons.append("no offloaded launch with cudaify's runtime helpers")
        return plan
    mapped, count = map_transfers(code)
    if count == 0:
        plan.reasons.append("no launch copies its arrays with cudaMalloc and cudaMemcpy")
        return plan
    data = mapped.encode("utf-8", errors="surrogateescape")
    tree = cs.parse(data)
    hidden = _hidden_launchers(tree, data)
    if hidden:
        # calls of class members or namespaced functions are not followed: one that
        # launches inside a scope could read device-held data without a barrier
        plan.reasons.append(f"'{hidden}' launches kernels from a class or namespace")
        return plan
    edits = _Scoper(data, tree, plan).edits()
    if not plan.opened:
        return plan
    edits.append(Edit(*[_runtime_position(data)] * 2, RUNTIME, "residency runtime"))
    written = apply_edits(data, edits)
    plan.code = written.decode("utf-8", errors="surrogateescape")
    plan.scopes = [
        line.format(*(_line_after(written, edits, at) for at in anchors))
        for line, anchors in plan.opened
    ]
    return plan


def _line_after(written: bytes, edits: list[Edit], offset: int) -> int:
    """The line of the written code where the statement at `offset` before `edits` now
    starts (what is inserted in front of it, such as a scope's opening, goes before it)."""
    return written.count(b"\n", 0, shifted_offset(edits, offset + 1) - 1) + 1


def _hidden_launchers(tree: Tree, data: bytes) -> str | None:
    """A function that launches kernels but is not a top-level function the rule can
    follow by name, or None."""
    top = {(n.start_byte, n.end_byte) for n in cs.function_nodes(tree, data).values()}
    for name, nodes in cs.all_function_nodes(tree, data).items():
        for node in nodes:
            if (node.start_byte, node.end_byte) in top:
                continue
            if _launch_calls(node, data):
                return name
    return None


# cub's device-wide algorithms (scan's, sort's and compact's calls) and the runtime's
# launching helpers (scan's cudaify_scan) launch kernels of their own: a function that calls
# one leaves device data written, as a launch does
_LIBRARY_LAUNCH = re.compile(
    r"^(?:cub::Device\w+::|(?:" + "|".join(sorted(LAUNCHING_HELPERS)) + r")(?:<|$))"
)


def _launch_calls(node: Node, data: bytes) -> list[Node]:
    """The calls in `node` that run device work: kernel launches (`k<<<...>>>(...)`) and
    calls of cub's device-wide algorithms."""
    found = []
    for n in cs.walk(node):
        if n.type == "kernel_call_syntax" and n.parent is not None:
            found.append(n.parent)
        elif n.type == "call_expression" and n.child_by_field_name("function") is not None:
            callee = kn.compact(cs.text(n.child_by_field_name("function"), data))
            if _LIBRARY_LAUNCH.match(callee):
                found.append(n)
    return found


def _runtime_position(data: bytes) -> int:
    """Right after the offload prelude's last helper."""
    start = data.index(_AFTER_PRELUDE.encode())
    close = data.index(b"\n}\n", start) + 3
    return close + 1 if data[close : close + 1] == b"\n" else close


# ---- allocate-and-copy pairs to maps ---------------------------------------------------


@dataclass(frozen=True)
class _Transfer:
    """One statement of a launch's data movement, found in the text."""

    kind: str  # declare | malloc | to_device | to_host | free
    device: str
    start: int  # the statement's line, newline included
    end: int
    args: tuple[str, ...]
    indent: str
    elem: str = ""
    guard: str = ""  # a copy in under `if (guard)`: the launch needs the old values only then


_STATEMENT = re.compile(
    r"^(?P<indent>[ \t]*)"
    r"(?:(?:if \((?P<guard>.*)\) )?"
    # the runtime's pooled allocation and free, or CUDA's own (a model may write those)
    r"CUDAIFY_CHECK\((?P<call>cudaify_malloc|cudaMalloc|cudaMemcpy|cudaify_free|cudaFree)"
    r"\((?P<args>.*)\)\);"
    # the element type may be a template's: std::pair<double, double>
    r"|(?P<elem>[A-Za-z_](?:[\w \t:<>,]*?[\w>])?)"
    r"[ \t]*\*[ \t]*(?P<name>\w+)[ \t]*=[ \t]*NULL;)[ \t]*\n",
    re.MULTILINE,
)


def split_arguments(text: str) -> tuple[str, ...]:
    """Top-level comma-separated arguments of a call's argument text."""
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        if char == "," and depth == 0:
            parts.append("".join(current).strip())
            current = []
            continue
        current.append(char)
    parts.append("".join(current).strip())
    return tuple(parts)


def _transfers(code: str) -> list[_Transfer]:
    found = []
    for match in _STATEMENT.finditer(code):
        indent, start, end = match.group("indent"), match.start(), match.end()
        if match.group("name"):
            found.append(
                _Transfer("declare", match.group("name"), start, end, (), indent, match["elem"])
            )
            continue
        args = split_arguments(match.group("args"))
        call = match.group("call")
        guard = match.group("guard") or ""
        if guard and not (call == "cudaMemcpy" and args[-1:] == ("cudaMemcpyHostToDevice",)):
            continue  # only a copy in may be conditional
        if call in DEVICE_MALLOCS and len(args) == 2 and args[0].startswith("(void **)&"):
            device = args[0].removeprefix("(void **)&").strip()
            found.append(_Transfer("malloc", device, start, end, args, indent))
        elif call in DEVICE_FREES and len(args) == 1:
            found.append(_Transfer("free", args[0], start, end, args, indent))
        elif call == "cudaMemcpy" and len(args) == 4 and args[3] == "cudaMemcpyHostToDevice":
            found.append(_Transfer("to_device", args[0], start, end, args, indent, guard=guard))
        elif call == "cudaMemcpy" and len(args) == 4 and args[3] == "cudaMemcpyDeviceToHost":
            found.append(_Transfer("to_host", args[1], start, end, args, indent))
    return found


def map_transfers(code: str) -> tuple[str, int]:
    """`code` with every device buffer that is declared, allocated, filled from the host,
    optionally copied back and freed, each exactly once in one block with the same byte
    count, turned into a map and an unmap. Returns the code and how many were turned."""
    edits: list[Edit] = []
    turned = 0
    for device, transfers in _buffer_lives(_transfers(code)):
        rewrite = _map_edits(device, transfers)
        if rewrite:
            edits.extend(rewrite)
            turned += 1
    data = code.encode("utf-8", errors="surrogateescape")
    # offsets so far are of the str; the generated code is ASCII around these lines, but the
    # user's text may not be: convert each offset once
    edits = [_to_bytes(code, edit) for edit in edits]
    return apply_edits(data, edits).decode("utf-8", errors="surrogateescape"), turned


def _buffer_lives(transfers: list[_Transfer]) -> list[tuple[str, list[_Transfer]]]:
    """The statements of each buffer's life, from its declaration to its free (blocks may
    reuse a device buffer's name)."""
    open_: dict[str, list[_Transfer]] = {}
    lives = []
    for transfer in transfers:
        if transfer.kind == "declare":
            open_[transfer.device] = [transfer]
        elif transfer.device in open_:
            open_[transfer.device].append(transfer)
            if transfer.kind == "free":
                lives.append((transfer.device, open_.pop(transfer.device)))
    return lives


def _to_bytes(code: str, edit: Edit) -> Edit:
    start = len(code[: edit.start].encode("utf-8", errors="surrogateescape"))
    end = start + len(code[edit.start : edit.end].encode("utf-8", errors="surrogateescape"))
    return Edit(start, end, edit.text, edit.reason)


def _map_edits(device: str, transfers: list[_Transfer]) -> list[Edit]:
    """A map and an unmap for one buffer's life. A buffer with no copy in (the launch
    writes every element first) or one under a condition maps with `reads` 0 or that
    condition: a range not yet on the device is then not copied."""
    kinds = sorted(t.kind for t in transfers)
    if kinds not in (
        sorted(["declare", "malloc", "to_device", "free"]),
        sorted(["declare", "malloc", "to_device", "to_host", "free"]),
        sorted(["declare", "malloc", "to_host", "free"]),
    ):
        return []
    one = {t.kind: t for t in transfers}
    size = one["malloc"].args[1]
    copied = one.get("to_device")
    if (copied is not None and copied.args[2] != size) or (
        "to_host" in one and one["to_host"].args[2] != size
    ):
        return []
    steps = ("declare", "malloc", "to_device", "free") if copied else ("declare", "malloc", "free")
    order = [one[k].start for k in steps]
    if order != sorted(order) or len({t.indent for t in transfers}) != 1:
        return []
    host_in = copied.args[1] if copied else one["to_host"].args[0]
    if re.fullmatch(r"&\s*[A-Za-z_]\w*", host_in.strip()):
        # a scalar's address (offload's `&changed` flag): a local whose address comes back
        # with each call, and whose value the host reads right after; it keeps its copies
        return []
    writes = 1 if "to_host" in one else 0
    host_out = one["to_host"].args[0] if writes else host_in
    reads = "0" if copied is None else f"({copied.guard})" if copied.guard else "1"
    declare, free = one["declare"], one["free"]
    elem = declare.elem
    mapped = (
        f"{declare.indent}{elem} *{device} = ({elem} *)cudaify_map({host_in}, {size}, {reads}, "
        f"{writes});\n"
    )
    unmapped = f"{free.indent}cudaify_unmap({host_out}, {device}, {size}, {writes});\n"
    edits = [
        Edit(declare.start, declare.end, mapped, f"map {device}"),
        Edit(one["malloc"].start, one["malloc"].end, "", f"{device} comes from the map"),
        Edit(free.start, free.end, unmapped, f"unmap {device}"),
    ]
    if copied is not None:
        edits.append(Edit(copied.start, copied.end, "", f"{device} comes from the map"))
    if writes:
        edits.append(Edit(one["to_host"].start, one["to_host"].end, "", "the unmap copies back"))
    return edits


# ---- where scopes and barriers go -------------------------------------------------------


_EXITS = frozenset({"exit", "_Exit", "quick_exit", "abort", "longjmp"})


def _array_named(argument: Node, data: bytes) -> str | None:
    """`v`, `*v` or `(T *)v` as a call's argument: the variable v."""
    node = _uncast(argument)
    if node.type == "pointer_expression" and cs.text(node, data).startswith("*"):
        node = node.child_by_field_name("argument") or node
    return cs.text(node, data) if node.type == "identifier" else None


def _uncast(node: Node) -> Node:
    """The expression inside casts and parentheses."""
    while node.type in ("cast_expression", "parenthesized_expression"):
        inner = node.child_by_field_name("value") if node.type == "cast_expression" else None
        node = inner if inner is not None else node.named_children[-1]
    return node


def _enclosed(jump: Node, top: Node) -> bool:
    """Whether a break or continue targets a loop (or, for break, a switch) inside `top`."""
    node = jump.parent
    while node is not None and node != top.parent:
        if node.type in LOOPS or (
            node.type == "switch_statement" and jump.type == "break_statement"
        ):
            return True
        if node == top:
            break
        node = node.parent
    return False


def _statements(node: Node) -> list[Node]:
    return [c for c in node.named_children if c.type not in ("comment",)]


class _Scoper:
    """Finds the loops that can hold a residency scope and the barriers they need."""

    def __init__(self, data: bytes, tree: Tree, plan: _Plan) -> None:
        self.data, self.tree, self.plan = data, tree, plan
        # the runtime's allocation helpers are read as CUDA's own calls: they set the
        # pointer they are given and touch no program memory
        self.functions = {
            name: node
            for name, node in cs.function_nodes(tree, data).items()
            if name not in DEVICE_ALLOCATIONS and name not in LAUNCHING_HELPERS
        }
        self.launching = {
            name for name, node in self.functions.items() if _launch_calls(node, data)
        }
        self._safe: dict[str, str | None] = {}
        self._reaches: dict[str, bool] = {}
        self._effects: dict[str, tuple[bool, bool]] = {}
        self._writes: dict[str, tuple[bool, frozenset[int]]] = {}
        # Variables declared from this offset on (in the scope's loop, or in the function
        # being classified) are private: a map never holds them.
        self._private: list[int] = []

    def _classify(self, node: Node, scope: Node | None, private_from: int) -> list[Edit]:
        self._private.append(private_from)
        try:
            return self.barriers(node, scope)
        finally:
            self._private.pop()

    def _is_private(self, declared: cs.Declared, node_start: int) -> bool:
        start = self._private[-1] if self._private else node_start
        if declared.start < start or declared.kind not in ("scalar", "array"):
            return False
        if declared.scope == "param" and declared.kind == "array":
            return False  # `double a[N]` as a parameter is the caller's memory
        return "static" not in self._declaration_words(declared.start)

    def visible(self, name: str, at: int) -> cs.Declared | None:
        """The declaration `name` resolves to at byte `at`. `std::vector<float> a(n);`
        parses as a function declaration (C++'s vexing parse): a local one, or a global
        one whose "parameter types" are variables, is taken for the object it is."""
        declared = cs.visible(self.tree, self.data, name, at)
        if declared is None or declared.kind != "function":
            return declared
        if declared.scope == "local" or self._constructs_object(declared):
            return replace(declared, kind="scalar")
        return declared

    def _constructs_object(self, declared: cs.Declared) -> bool:
        declaration = cs.node_at(self.tree, declared.start, "declaration")
        if declaration is None:
            return False
        for declarator in (n for n in cs.walk(declaration) if n.type == "function_declarator"):
            name = declarator.child_by_field_name("declarator")
            if name is None or cs.text(name, self.data) != declared.name:
                continue
            parameters = declarator.child_by_field_name("parameters")
            arguments = [p for p in parameters.named_children] if parameters else []
            return bool(arguments) and all(self._names_variable(a) for a in arguments)
        return False

    def _names_variable(self, parameter: Node) -> bool:
        """A "parameter" with no declarator whose type is the name of a variable."""
        kind = parameter.child_by_field_name("type")
        if parameter.type != "parameter_declaration" or kind is None:
            return False
        if parameter.child_by_field_name("declarator") is not None:
            return False
        if kind.type != "type_identifier":
            return False
        declared = cs.visible(self.tree, self.data, cs.text(kind, self.data), parameter.start_byte)
        return declared is not None and declared.kind != "function"

    # -- the result

    def edits(self) -> list[Edit]:
        found: dict[tuple[int, int, str], Edit] = {}
        for name, function in self.functions.items():
            body = function.child_by_field_name("body")
            if body is None:
                continue
            if name != "main" and self.reaches_launch(name) and self.wrapper_problem(name) is None:
                for edit in self._classify(body, None, function.start_byte):
                    found[(edit.start, edit.end, edit.text)] = edit
            for edit in self._scopes_in(name, body):
                found[(edit.start, edit.end, edit.text)] = edit
        return list(found.values())

    def _scopes_in(self, name: str, node: Node) -> list[Edit]:
        # a launch's own block (its maps, then the launches) runs no host code between
        # them: a run scope inside it would hold nothing
        if node.type == "compound_statement" and not self._maps_here(node):
            run = self._run_scope(name, _statements(node))
            if run is not None:
                return run
        edits: list[Edit] = []
        for child in _statements(node):
            if not self.has_device_work(child):
                continue
            if child.type in LOOPS:
                try:
                    self._require_scope_body(child)
                    inside = self._classify(child, child, child.start_byte)
                except _Refuse as refusal:
                    line = cs.line_of(child)
                    self.plan.reasons.append(
                        f"line {line}: no residency scope for the loop in '{name}': {refusal}"
                    )
                    edits.extend(self._scopes_in(name, child.child_by_field_name("body") or child))
                    continue
                edits.extend(inside)
                edits.extend(self._scope_edits(child))
                across = f"{name}: arrays stay on the device across the loop at line {{}}"
                self.plan.opened.append((across, (child.start_byte,)))
            else:
                edits.extend(self._scopes_in(name, child))
        return edits

    def _maps_here(self, block: Node) -> bool:
        """Whether one of the block's own statements maps a range (a launch's block)."""
        return any(
            n.type == "call_expression" and cs.call_name(n, self.data) == "cudaify_map"
            for statement in _statements(block)
            if statement.type == "declaration"
            for n in cs.walk(statement)
        )

    def _run_scope(self, name: str, statements: list[Node]) -> list[Edit] | None:
        """One scope around a block's statements from its first with device work to its
        last, when at least two have some (`init(a); compute(a, b); print(b);` in main):
        arrays one call leaves on the device stay there for the next. None when the block
        has fewer such statements or the run cannot hold a scope (the loops in it may then
        hold their own)."""
        working = [k for k, statement in enumerate(statements) if self.has_device_work(statement)]
        if len(working) < 2:
            return None
        run = statements[working[0] : working[-1] + 1]
        try:
            for statement in run:
                self._require_scope_body(statement)
                self._require_no_exit(statement)
            self._private.append(run[0].start_byte)
            try:
                inside = self._sequence(run, run[0])
            finally:
                self._private.pop()
        except _Refuse as refusal:
            self.plan.reasons.append(
                f"line {cs.line_of(run[0])}: no residency scope for the statements of "
                f"'{name}' from line {cs.line_of(run[0])} to {cs.line_of(run[-1])}: {refusal}"
            )
            return None
        indent = _indent_of(self.data, run[0].start_byte)
        dead = self._dead_after(run, statements[working[-1] + 1 :])
        discards = "".join(f"\n{indent}cudaify_discard({array});" for array in dead)
        inside += [
            Edit(
                run[0].start_byte,
                run[0].start_byte,
                f"cudaify_scope_begin();\n{indent}",
                "open scope",
            ),
            Edit(
                run[-1].end_byte,
                run[-1].end_byte,
                f"{discards}\n{indent}cudaify_scope_end();",
                "close scope",
            ),
        ]
        self.plan.opened.append(
            (
                f"{name}: arrays stay on the device from line {{}} to {{}} ({len(working)} "
                "statements launch work)",
                (run[0].start_byte, run[-1].start_byte),
            )
        )
        return inside

    def _dead_after(self, run: list[Node], after: list[Node]) -> list[str]:
        """Heap arrays of the function that the statements after the run only free: the
        run's results in them need not come back. A variable qualifies when every mention
        of it in the function is its declaration, an assignment to it, `free(v)` after
        the run, an element access before it, or an argument of a call in the run that
        launches work; and the run is the function body's own (no loop repeats it)."""
        body = run[0].parent
        function = body.parent if body is not None else None
        if function is None or function.type != "function_definition" or not after:
            return []
        end = run[-1].end_byte
        passed: dict[str, bool] = {}
        for statement in run:
            for call in (n for n in cs.walk(statement) if n.type == "call_expression"):
                if not self.reaches_launch(cs.call_name(call, self.data)):
                    continue
                for argument in _arguments(call):
                    name = _array_named(argument, self.data)
                    if name is not None:
                        passed[name] = True
        dead = []
        for name in passed:
            declared = self.visible(name, end)
            if declared is None or declared.scope != "local" or declared.kind != "pointer":
                continue
            if "static" in self._declaration_words(declared.start):
                continue
            declaration_end = self.data.find(b";", declared.start)
            mentions = [
                i
                for i in cs.identifiers_in(function)
                if cs.text(i, self.data) == name and i.start_byte > declaration_end
            ]
            if all(self._harmless(i, run, end) for i in mentions):
                dead.append(name)
        return dead

    def _harmless(self, ident: Node, run: list[Node], end: int) -> bool:
        """A mention of a variable that neither reads its elements after the run nor
        copies its address anywhere (see _dead_after)."""
        parent = ident.parent
        if parent is None:
            return False
        if parent.type == "assignment_expression" and parent.child_by_field_name("left") == ident:
            return True
        if parent.type in ("init_declarator", "pointer_declarator", "parenthesized_declarator"):
            return True
        if parent.type == "pointer_expression" and parent.parent is not None:
            parent = parent.parent  # `*A` (a pointer to a whole array) as an argument
        node: Node | None = parent
        while node is not None and node.type in ("cast_expression", "parenthesized_expression"):
            node = node.parent
        if node is not None and node.type == "argument_list":
            call = node.parent
            callee = cs.call_name(call, self.data) if call is not None else None
            if callee == "free" and len(node.named_children) == 1:
                return ident.start_byte > end
            inside = any(r.start_byte <= ident.start_byte < r.end_byte for r in run)
            return inside and self.reaches_launch(callee)
        if ident.start_byte < run[0].start_byte:
            # an element the host reads or writes before the run
            up = ident.parent
            while up is not None and up.type in ("parenthesized_expression", "pointer_expression"):
                up = up.parent
            return up is not None and up.type == "subscript_expression"
        return False

    def _require_no_exit(self, statement: Node) -> None:
        """Nothing leaves a run of statements before its scope closes: no break or continue
        of a loop around it, no exit()."""
        for n in cs.walk(statement):
            if n.type in ("break_statement", "continue_statement") and not _enclosed(n, statement):
                raise _Refuse(
                    f"line {cs.line_of(n)}: a {n.type.split('_')[0]} leaves the statements"
                )
            if n.type == "call_expression" and cs.call_name(n, self.data) in _EXITS:
                raise _Refuse(f"line {cs.line_of(n)}: the program can exit inside the statements")

    def _scope_edits(self, loop: Node) -> list[Edit]:
        indent = _indent_of(self.data, loop.start_byte)
        begin, end = "cudaify_scope_begin();", "cudaify_scope_end();"
        if loop.parent is not None and loop.parent.type != "compound_statement":
            return [
                Edit(loop.start_byte, loop.start_byte, "{ " + begin + " ", "open scope"),
                Edit(loop.end_byte, loop.end_byte, " " + end + " }", "close scope"),
            ]
        return [
            Edit(loop.start_byte, loop.start_byte, f"{begin}\n{indent}", "open scope"),
            Edit(loop.end_byte, loop.end_byte, f"\n{indent}{end}", "close scope"),
        ]

    # -- what a statement does

    def has_device_work(self, node: Node) -> bool:
        """Whether `node` launches a kernel or calls a function that does."""
        if _launch_calls(node, self.data):
            return True
        for n in cs.walk(node):
            if n.type == "call_expression" and self.reaches_launch(cs.call_name(n, self.data)):
                return True
        return False

    def reaches_launch(self, name: str | None) -> bool:
        if name is None or name not in self.functions:
            return False
        if name in self._reaches:
            return self._reaches[name]
        self._reaches[name] = name in self.launching
        for callee, _ in cs.calls_in(self.functions[name], self.data):
            if callee != name and self.reaches_launch(callee):
                self._reaches[name] = True
        return self._reaches[name]

    def barriers(self, node: Node, scope: Node | None) -> list[Edit]:
        """The barriers that statement `node` needs to run with device-held data around."""
        if not self.has_device_work(node):
            return self._host_statement(node, scope)
        if self.is_device_block(node):
            return []
        kind = node.type
        if kind == "compound_statement":
            return self._sequence(_statements(node), scope)
        if kind in LOOPS or kind == "if_statement":
            return self._control(node, scope)
        if kind in ("expression_statement", "declaration", "return_statement"):
            self._require_wrapper_call(node, scope)
            return []
        raise _Refuse(
            f"line {cs.line_of(node)}: a {kind.replace('_', ' ')} mixes launches and host code"
        )

    def _sequence(self, statements: list[Node], scope: Node | None) -> list[Edit]:
        """Barriers for a statement list: after one, the host statements that follow need
        none until device work runs again (a read barrier covers only reads)."""
        edits: list[Edit] = []
        covered = ""  # "", "reads" or "writes": what the last barrier already allows
        for statement in statements:
            found = self.barriers(statement, scope)
            if self.has_device_work(statement):
                covered = ""
                edits.extend(found)
                continue
            # only a barrier right before the statement runs every time; one inside a
            # branch of it covers nothing after it
            if len(found) == 1 and found[0].start == statement.start_byte:
                kind = _barrier_kind(found[0].text)
                if covered == "writes" or covered == kind != "at":
                    continue
                covered = kind if kind != "at" else covered
            edits.extend(found)
        return edits

    def _control(self, node: Node, scope: Node | None) -> list[Edit]:
        edits: list[Edit] = []
        for index, child in enumerate(node.children):
            role = node.field_name_for_child(index)
            if role in ("body", "consequence"):
                edits.extend(self.barriers(child, scope))
            elif role == "alternative":
                edits.extend(e for c in _statements(child) for e in self.barriers(c, scope))
            elif child.is_named and child.type != "comment":
                self._require_pure_header(child, scope)
        return edits

    def _require_pure_header(self, part: Node, scope: Node | None) -> None:
        """Loop and branch headers run between launches with no room for a barrier."""
        calls = [n for n in cs.walk(part) if n.type == "call_expression"]
        for call in calls:
            if self.reaches_launch(cs.call_name(call, self.data)):
                self._require_wrapper(call, scope)
        if self._touches_memory(part, skip=calls_of_wrappers(self, calls)):
            raise _Refuse(
                f"line {cs.line_of(part)}: a loop or branch header touches memory between launches"
            )

    def _require_wrapper_call(self, node: Node, scope: Node | None) -> None:
        """A statement with device work: `[scalar =] wrapper(args);` where the arguments
        only name addresses and scalars and nothing touches memory after the call."""
        calls = [n for n in cs.walk(node) if n.type == "call_expression"]
        wrappers = [c for c in calls if self.reaches_launch(cs.call_name(c, self.data))]
        if _launch_calls(node, self.data):
            raise _Refuse(f"line {cs.line_of(node)}: launches mixed with host code")
        for wrapper in wrappers:
            self._require_wrapper(wrapper, scope)
        if self._touches_memory(node, skip=wrappers):
            raise _Refuse(
                f"line {cs.line_of(node)}: a statement that calls an offloaded "
                "function also touches memory"
            )

    def _require_wrapper(self, call: Node, scope: Node | None) -> None:
        name = cs.call_name(call, self.data) or "?"
        problem = self.wrapper_problem(name)
        if problem:
            raise _Refuse(problem)
        for position, argument in enumerate(_arguments(call)):
            said = f"line {cs.line_of(argument)}: '{name}' gets '{cs.text(argument, self.data)}'"
            if any(_is_address_of(n, self.data) for n in cs.walk(argument)):
                if not _is_address_of(argument, self.data) or self._maps_parameter(name, position):
                    raise _Refuse(f"{said}, the address of a variable it may map")
                continue  # an out-parameter the host side writes: never in the table
            if _is_address(argument, self):
                if argument.type == "identifier" and self._copies_unmapped(name, position):
                    continue  # the callee gets a copy, and nothing reached from it is mapped
                self._require_lives_through(argument, scope, said)
            elif self._touches_memory(argument):
                raise _Refuse(f"{said}, which reads memory")

    def _maps_parameter(self, name: str, position: int) -> bool:
        """Whether launching function `name` may map (or hand to another launching
        function) what its parameter at `position` points to."""
        function = self.functions.get(name)
        if function is None:
            return True
        params = [
            d.name
            for node in cs.parameter_nodes(function)
            for d in cs.declared_names(node, self.data, "param")[:1]
        ]
        if position >= len(params):
            return True
        param = params[position]
        for call in (n for n in cs.walk(function) if n.type == "call_expression"):
            callee = cs.call_name(call, self.data)
            if callee in _DEVICE_CALLS or self.reaches_launch(callee):
                if param in {cs.text(i, self.data) for i in cs.identifiers_in(call)}:
                    return True
        return param in cs.names_written(function, self.data)

    def _copies_unmapped(self, name: str, position: int) -> bool:
        """Whether launching function `name` takes its parameter at `position` by value
        (no pointer, array or reference declarator) and maps nothing reached from it: the
        argument's own storage then never enters the table, so a local that dies inside
        the scope (a template type parameter's value, say) may be passed."""
        function = self.functions.get(name)
        if function is None:
            return False
        params = [
            declared
            for node in cs.parameter_nodes(function)
            for declared in cs.declared_names(node, self.data, "param")[:1]
        ]
        if position >= len(params) or params[position].kind != "scalar":
            return False
        return not self._maps_parameter(name, position)

    def _require_lives_through(self, argument: Node, scope: Node | None, said: str) -> None:
        """A mapped range must outlive the scope: a local of the calling function may be
        passed only from the function that holds the scope, declared before its loop."""
        for ident in cs.identifiers_in(argument):
            declared = self.visible(cs.text(ident, self.data), ident.start_byte)
            if declared is None or declared.scope in ("param", "global"):
                continue
            if declared.kind == "scalar" and not _compound_type(declared.base):
                continue
            if "static" in self._declaration_words(declared.start):
                continue
            if scope is not None and declared.start < scope.start_byte:
                continue
            raise _Refuse(f"{said}: the local '{declared.name}' may die before the scope ends")

    def wrapper_problem(self, name: str) -> str | None:
        """Why calls of launching function `name` cannot run inside a scope, or None."""
        if name in self._safe:
            return self._safe[name]
        self._safe[name] = f"'{name}' calls itself"
        self._safe[name] = self._wrapper_problem(name)
        return self._safe[name]

    def _wrapper_problem(self, name: str) -> str | None:
        function = self.functions[name]
        body = function.child_by_field_name("body")
        if body is None:
            return f"'{name}' has no body"
        for call in (n for n in cs.walk(function) if n.type == "call_expression"):
            if cs.call_name(call, self.data) != "cudaify_map":
                continue
            problem = self._local_base(call, function)
            if problem:
                return f"'{name}' {problem}"
        try:
            self._classify(body, None, function.start_byte)
        except _Refuse as refusal:
            return f"'{name}': {refusal}"
        return None

    def _local_base(self, call: Node, function: Node) -> str | None:
        """Mapped ranges of a function's locals die with the call: the table would keep them."""
        arguments = call.child_by_field_name("arguments")
        if arguments is None or not arguments.named_children:
            return "maps an unknown range"
        for ident in cs.identifiers_in(arguments.named_children[0]):
            declared = self.visible(cs.text(ident, self.data), ident.start_byte)
            if declared is None or declared.scope == "global":
                continue
            if declared.scope == "param":
                if declared.kind == "scalar" and _compound_type(declared.base):
                    return f"maps its by-value parameter '{declared.name}', a copy per call"
                continue
            if declared.kind in ("pointer", "array", "reference") or _compound_type(declared.base):
                static = "static" in self._declaration_words(declared.start)
                if not static:
                    return f"maps its local '{declared.name}', which dies when it returns"
        return None

    def _declaration_words(self, start: int) -> set[str]:
        end = self.data.find(b";", start)
        return set(re.findall(r"\w+", self.data[start:end].decode("utf-8", "surrogateescape")))

    def is_device_block(self, node: Node) -> bool:
        """A block that launches and names program memory only in its maps."""
        if node.type != "compound_statement":
            return False
        launches = _launch_calls(node, self.data)
        if not launches:
            return False
        maps = [
            n
            for n in cs.walk(node)
            if n.type == "call_expression" and cs.call_name(n, self.data) in _DEVICE_CALLS
        ]
        if not maps:
            return False
        for n in cs.walk(node):
            if n.type == "call_expression" and n not in launches:
                name = cs.call_name(n, self.data)
                if name in self.functions and self._effects_of(name)[0]:
                    return False  # a user function inside the block may touch memory
        skip = maps + launches
        return not self._touches_memory(node, skip=skip, declared_after=node.start_byte)

    # -- host statements

    def _host_statement(self, node: Node, scope: Node | None) -> list[Edit]:
        if _is_pointer_copy(node, self) or self._swaps_vectors(node):
            return []
        if not self._touches_memory(node):
            return []
        if node.type in ("if_statement", "compound_statement") and self._branch_is_pure(node):
            return [e for c in _bodies(node) for e in self._host_statement(c, scope)]
        target = self._single_store(node)
        ranged = self._ranged_barriers(node) if target is None else None
        if target is not None:
            spelled = cs.text(target, self.data)
            barrier = f"cudaify_host_writes_at(&({spelled}), sizeof({spelled}));"
        elif ranged is not None:
            barrier = ranged
        elif self._may_write(node):
            barrier = "cudaify_host_writes();"
        else:
            barrier = "cudaify_host_reads();"
        return _insert_before(node, barrier, self.data)

    # -- range-limited barriers

    def _ranged_barriers(self, node: Node) -> str | None:
        """Barriers for exactly the elements a host statement can touch, when it touches
        memory only as `a[index]` of named arrays or pointers of arithmetic elements, at an
        index the barrier can compute before the statement runs: an element (`a[n - 1]`),
        or, in a counted `for` loop, a range (`a[i + k]` for `i` from `lo` to `hi`). Reads
        copy back only those bytes (`cudaify_host_reads_at`); writes copy back and forget
        only the mappings they overlap (`cudaify_host_writes_at`), so the other arrays stay
        on the device. None when any access is out of that form."""
        counted = _counted_loop(node, self.data) if node.type == "for_statement" else None
        if node.type == "for_statement" and counted is None:
            return None
        if counted is None and any(n.type in LOOPS for n in cs.walk(node)):
            return None
        written = cs.names_written(node, self.data)
        variable = counted.variable if counted is not None else None
        if counted is not None:
            body = node.child_by_field_name("body")
            if body is None or variable in cs.names_written(body, self.data):
                return None
            if not all(
                self._invariant(part, node, written) for part in (counted.low, counted.high)
            ):
                return None
        if not self._pure_calls(node):
            return None
        barriers: list[str] = []
        for ident in cs.identifiers_in(node):
            access = self._element_access(ident, node)
            if access is None:
                continue
            if not isinstance(access, tuple):
                return None
            index, writes = access
            span = _index_span(index, variable, self.data)
            if span is None or not self._invariant(span.rest, node, written, variable):
                return None
            name = cs.text(ident, self.data)
            if span.offset is None:  # an element, the same in every iteration
                start, count = cs.text(index, self.data), "1"
            else:
                assert counted is not None
                low, high = cs.text(counted.low, self.data), cs.text(counted.high, self.data)
                start = _sum(low, span.offset)
                count = _sum(high, "1") if counted.inclusive else high
                count = count if low == "0" else f"{paren(count)} - {paren(low)}"
            where = name if start == "0" else f"{name} + {paren(start)}"
            call = "cudaify_host_writes_at" if writes else "cudaify_host_reads_at"
            barrier = f"{call}({where}, cudaify_bytes({count}, sizeof({name}[0])));"
            if barrier not in barriers:
                barriers.append(barrier)
        return "\n".join(barriers) if barriers else None

    def _element_access(self, ident: Node, node: Node) -> tuple[Node, bool] | Literal[False] | None:
        """For an identifier in host statement `node`: (the index, whether the element is
        assigned or incremented) when it names program memory as `a[index]`; None when it names
        no program memory; False when it names memory any other way (the address taken, a
        pointer passed or dereferenced, a struct, a pointer of pointers)."""
        if _is_call_target(ident):
            return None
        declared = self.visible(cs.text(ident, self.data), ident.start_byte)
        if declared is None or declared.kind == "function":
            return None
        if self._is_private(declared, node.start_byte):
            return None
        if declared.kind == "scalar" and not _compound_type(declared.base):
            return None
        if declared.kind not in ("pointer", "array") or _compound_type(declared.base):
            return False
        subscript = _indexing(ident)
        index = _subscript_index(subscript) if subscript is not None else None
        if subscript is None or index is None:
            return False
        outer: Node | None = subscript.parent
        inner: Node = subscript
        while outer is not None and outer.type == "parenthesized_expression":
            inner = outer
            outer = outer.parent
        if outer is not None and outer.child_by_field_name("argument") == inner:
            if outer.type == "field_expression" or outer.type == "pointer_expression":
                return False  # a member of an element, `*a[i]`, or `&a[i]` escaping
            if outer.type == "subscript_expression" and declared.kind == "pointer":
                return False  # `p[i][j]`: p[i] points to memory elsewhere
        if outer is not None and outer.type == "assignment_expression":
            return index, outer.child_by_field_name("left") == inner
        return index, outer is not None and outer.type == "update_expression"

    def _invariant(
        self, expression: Node, node: Node, written: set[str], variable: str | None = None
    ) -> bool:
        """Whether `expression` can be evaluated before statement `node` with the value it
        has in it: no memory, no calls, no name that `node` writes or declares (other than
        the loop's `variable`)."""
        if any(
            n.type in ("call_expression", "assignment_expression", "update_expression")
            for n in cs.walk(expression)
        ):
            return False
        for ident in cs.identifiers_in(expression):
            name = cs.text(ident, self.data)
            if name == variable:
                continue
            if name in written:
                return False
            declared = self.visible(name, ident.start_byte)
            if declared is None:
                continue  # a macro or enum constant
            if declared.start >= node.start_byte:
                return False
            if declared.kind != "scalar" or _compound_type(declared.base):
                return False
        return True

    def _pure_calls(self, node: Node) -> bool:
        """Every call in `node` is to a library function that writes no program memory,
        or to a user function that touches none."""
        for n in cs.walk(node):
            if n.type != "call_expression":
                continue
            name = cs.call_name(n, self.data)
            if name in self.functions:
                if self._effects_of(name)[0]:
                    return False
            elif name not in READ_ONLY_LIBRARY:
                return False
        return True

    def _single_store(self, node: Node) -> Node | None:
        """The target of `*p = v;`, `p->f = v;` or `p[k] = v;` (k constant) when storing
        it is all the statement does to memory: only the written bytes need a barrier."""
        if node.type != "expression_statement" or not node.named_children:
            return None
        assignment = node.named_children[0]
        if assignment.type != "assignment_expression":
            return None
        left, right = (
            assignment.child_by_field_name("left"),
            assignment.child_by_field_name("right"),
        )
        if left is None or right is None or self._touches_memory(right):
            return None
        if any(n.type == "call_expression" for n in cs.walk(right)):
            return None
        inner = left
        while inner.type == "parenthesized_expression" and inner.named_children:
            inner = inner.named_children[0]
        if inner.type == "pointer_expression" and cs.text(inner, self.data).startswith("*"):
            base = inner.child_by_field_name("argument")
        elif inner.type == "field_expression" and any(c.type == "->" for c in inner.children):
            base = inner.child_by_field_name("argument")
        elif inner.type == "subscript_expression":
            index = _subscript_index(inner)
            if index is None or index.type != "number_literal":
                return None
            base = inner.child_by_field_name("argument")
        else:
            return None
        if base is None or base.type != "identifier":
            return None
        return left

    def _branch_is_pure(self, node: Node) -> bool:
        if node.type == "compound_statement":
            return True
        condition = node.child_by_field_name("condition")
        return condition is not None and not self._touches_memory(condition)

    def _require_scope_body(self, loop: Node) -> None:
        """Nothing leaves the loop past the scope's end, and no array declared in it can be
        mapped (its address comes back every iteration with new contents): one that is
        only ever indexed by name, its address never taken or passed, stays on the host."""
        for n in cs.walk(loop):
            if n.type in ("return_statement", "goto_statement", "throw_statement"):
                raise _Refuse(
                    f"line {cs.line_of(n)}: a {n.type.split('_')[0]} leaves the loop "
                    "without closing the scope"
                )
            if n.type == "call_expression" and cs.call_name(n, self.data) in ("longjmp", "setjmp"):
                raise _Refuse(f"line {cs.line_of(n)}: a long jump can leave the loop")
            if n.type == "declaration" and any(
                d.kind == "array" and not self._only_indexed(d.name, n, loop)
                for d in cs.declared_names(n, self.data, "local")
            ):
                raise _Refuse(
                    f"line {cs.line_of(n)}: an array declared in the loop comes back "
                    "at the same address every iteration"
                )

    def _only_indexed(self, name: str, declaration: Node, loop: Node) -> bool:
        """Whether every use of the array `name` declared by `declaration` in `loop` is an
        element `name[k]` (not `&name[k]`): no pointer to it can reach a launch."""
        for ident in cs.identifiers_in(loop):
            if ident.start_byte < declaration.end_byte or cs.text(ident, self.data) != name:
                continue
            declared = self.visible(name, ident.start_byte)
            if declared is None or declared.start != declaration.start_byte:
                continue
            subscript = _indexing(ident)
            if subscript is None:
                return False
            if subscript.parent is not None and _is_address_of(subscript.parent, self.data):
                return False
        return True

    def _touches_memory(
        self, node: Node, skip: list[Node] | tuple[Node, ...] = (), declared_after: int = -1
    ) -> bool:
        """Whether evaluating `node` may read or write memory a map could hold: it names a
        pointer, array, reference or aggregate declared outside it, or calls a user
        function that does."""
        skip = [*skip, *(c for c in cs.walk(node) if self._observes_container(c))]
        skipped = [(s.start_byte, s.end_byte) for s in skip]
        for ident in cs.identifiers_in(node):
            if any(a <= ident.start_byte < b for a, b in skipped):
                continue
            name = cs.text(ident, self.data)
            if _is_call_target(ident):
                if name in self.functions and self._effects_of(name)[0]:
                    return True
                continue
            declared = self.visible(name, ident.start_byte)
            if declared is None or declared.kind == "function":
                continue
            if declared_after >= 0 and declared.start >= declared_after:
                continue
            if self._is_private(declared, node.start_byte):
                continue
            if declared.kind in ("pointer", "array", "reference") or _compound_type(declared.base):
                return True
        return False

    def _observes_container(self, call: Node) -> bool:
        """`v.size()` and the like on a variable declared `std::vector<...>` or
        `std::array<...>`: reads the container object, never its elements, and writes
        nothing. A kernel cannot copy or write a std::vector object (its members are host
        functions) and a std::array's size is a constant, so the host's bytes are current
        and no barrier is needed."""
        called = _member_call(call, self.data)
        if called is None or called[1] not in CONTAINER_OBSERVERS or _arguments(call):
            return False
        return self._declared_as(called[0], _STD_CONTAINER)

    def _swaps_vectors(self, node: Node) -> bool:
        """`a.swap(b);` or `std::swap(a, b);` of two std::vector variables: exchanges the
        containers' buffers, as a pointer swap does, and touches no element. The table is
        keyed by host address, so both buffers stay mapped."""
        if node.type != "expression_statement" or not node.named_children:
            return False
        call = node.named_children[0]
        function = call.child_by_field_name("function")
        if call.type != "call_expression" or function is None:
            return False
        called = _member_call(call, self.data)
        if called is not None and called[1] == "swap":
            operands = [called[0], *_arguments(call)]
        elif cs.text(function, self.data) == "std::swap":
            operands = _arguments(call)
        else:
            return False
        return len(operands) == 2 and all(self._declared_as(o, _STD_VECTOR) for o in operands)

    def _declared_as(self, node: Node, type_pattern: re.Pattern[str]) -> bool:
        """Whether `node` is a variable whose declared type matches `type_pattern`."""
        if node.type != "identifier":
            return False
        declared = self.visible(cs.text(node, self.data), node.start_byte)
        return declared is not None and type_pattern.match(declared.base) is not None

    def _calls_member(self, member: Node) -> bool:
        """`obj.f` called (a method that may write `obj`), other than a container observer."""
        return _is_call_target(member) and not (
            member.parent is not None and self._observes_container(member.parent)
        )

    def _may_write(self, node: Node) -> bool:
        """Whether a host statement may write or free program memory (else it only reads)."""
        for n in cs.walk(node):
            if n.type in ("assignment_expression", "update_expression"):
                target = n.child_by_field_name("left") or n.child_by_field_name("argument")
                if target is None or not self._writes_private(target, node.start_byte):
                    return True
            if _is_address_of(n, self.data) and not self._private_root(n, node.start_byte):
                return True
            if n.type == "call_expression" and not self._observes_container(n):
                name = cs.call_name(n, self.data)
                if name in self.functions:
                    unknown, written = self._param_writes(name)
                    arguments = _arguments(n)
                    if unknown or any(
                        i >= len(arguments) or not self._private_root(arguments[i], node.start_byte)
                        for i in written
                    ):
                        return True
                elif name not in READ_ONLY_LIBRARY:
                    return True
            if n.type in ("new_expression", "delete_expression", "field_expression") and (
                n.type != "field_expression" or self._calls_member(n)
            ):
                return True
        return False

    def _private_root(self, expression: Node, node_start: int) -> bool:
        """Whether an lvalue or address is reached from a private variable."""
        root = _root(expression)
        if root is None:
            return False
        declared = self.visible(cs.text(root, self.data), root.start_byte)
        return declared is not None and self._is_private(declared, node_start)

    def _param_writes(self, name: str) -> tuple[bool, frozenset[int]]:
        """(may write memory not reached from its pointer parameters, the positions of
        the pointer parameters it may write through) of user function `name`."""
        if name in self._writes:
            return self._writes[name]
        self._writes[name] = (True, frozenset())  # recursion: assume the worst
        function = self.functions[name]
        body = function.child_by_field_name("body")
        if body is None:
            return self._writes[name]
        params = [
            d.name
            for node in cs.parameter_nodes(function)
            for d in cs.declared_names(node, self.data, "param")[:1]
        ]
        unknown, written = False, set()
        moved = cs.names_written(body, self.data)
        self._private.append(function.start_byte)
        try:
            for target in self._write_targets(body):
                root = _root(target) if target is not None else None
                if root is None:
                    unknown = True
                    continue
                declared = self.visible(cs.text(root, self.data), root.start_byte)
                if declared is not None and declared.scope == "param" and declared.name in params:
                    if declared.name in moved:
                        unknown = True  # the parameter may point elsewhere by then
                    elif declared.kind in ("pointer", "array", "reference"):
                        written.add(params.index(declared.name))
                    continue
                if declared is None or not (
                    self._is_private(declared, body.start_byte) or _own_number(declared)
                ):
                    unknown = True
        finally:
            self._private.pop()
        self._writes[name] = (unknown, frozenset(written))
        return self._writes[name]

    def _write_targets(self, body: Node) -> list[Node | None]:
        """What a function body may write: lvalues, addresses it takes, the arguments its
        callees write through; None for anything unknown."""
        targets: list[Node | None] = []
        for n in cs.walk(body):
            if n.type in ("assignment_expression", "update_expression"):
                target = n.child_by_field_name("left") or n.child_by_field_name("argument")
                if target is None or not self._writes_private(target, body.start_byte):
                    targets.append(target)
            elif _is_address_of(n, self.data):
                targets.append(n)
            elif n.type == "call_expression" and not self._observes_container(n):
                callee = cs.call_name(n, self.data)
                if callee in self.functions:
                    unknown, written = self._param_writes(callee)
                    arguments = _arguments(n)
                    targets.extend(arguments[i] if i < len(arguments) else None for i in written)
                    if unknown:
                        targets.append(None)
                elif callee in RUNTIME_QUERIES:
                    # an `&x` argument is a target of its own (above); a pointer passed as
                    # it is, what it points to
                    targets.extend(
                        argument
                        for argument in _arguments(n)
                        if argument.type == "identifier"
                        and (d := self.visible(cs.text(argument, self.data), argument.start_byte))
                        is not None
                        and d.kind != "scalar"
                    )
                elif callee not in READ_ONLY_LIBRARY:
                    targets.append(None)
            elif n.type in ("new_expression", "delete_expression"):
                targets.append(None)
            elif n.type == "field_expression" and self._calls_member(n):
                targets.append(None)
        return targets

    def _writes_private(self, target: Node, node_start: int) -> bool:
        """Whether an assignment's target is a plain variable, or an element or `.` field
        of a private one (not through a pointer)."""
        plain = True
        while target.type in (
            "parenthesized_expression",
            "subscript_expression",
            "field_expression",
        ):
            if target.type == "field_expression" and any(c.type == "->" for c in target.children):
                return False
            inner = target.child_by_field_name("argument")
            if target.type == "parenthesized_expression":
                inner = target.named_children[0] if target.named_children else None
            if inner is None:
                return False
            plain = plain and target.type == "parenthesized_expression"
            target = inner
        if target.type != "identifier":
            return False
        declared = self.visible(cs.text(target, self.data), target.start_byte)
        if declared is None:
            return False
        if plain and declared.kind in ("scalar", "pointer"):
            return declared.scope != "global" or not _compound_type(declared.base)
        return self._is_private(declared, node_start)

    def _effects_of(self, name: str) -> tuple[bool, bool]:
        """(touches memory, may write memory) of user function `name`'s body, transitively:
        its parameters count only through what the caller passes."""
        if name in self._effects:
            return self._effects[name]
        self._effects[name] = (True, True)  # recursion: assume the worst
        function = self.functions[name]
        body = function.child_by_field_name("body")
        if body is None:
            return self._effects[name]
        unknown, written = self._param_writes(name)
        touches = self._touches_globals(body) or unknown
        self._effects[name] = (touches, unknown or bool(written))
        return self._effects[name]

    def _touches_globals(self, body: Node) -> bool:
        for ident in cs.identifiers_in(body):
            name = cs.text(ident, self.data)
            if _is_call_target(ident):
                if name in self.functions and self._effects_of(name)[0]:
                    return True
                continue
            declared = self.visible(name, ident.start_byte)
            if declared is None or declared.scope != "global" or declared.kind == "function":
                continue
            if declared.kind in ("pointer", "array", "reference") or _compound_type(declared.base):
                return True
        return False


def calls_of_wrappers(scoper: _Scoper, calls: list[Node]) -> list[Node]:
    return [c for c in calls if scoper.reaches_launch(cs.call_name(c, scoper.data))]


def _barrier_kind(text: str) -> str:
    if "_at(" in text:
        return "at"  # covers no other statement
    return "writes" if "cudaify_host_writes" in text else "reads"


@dataclass(frozen=True)
class _Counted:
    """`for (i = low; i < high; i += step)` (or `<=`), step a positive constant."""

    variable: str
    low: Node
    high: Node
    inclusive: bool


def _counted_loop(loop: Node, data: bytes) -> _Counted | None:
    initializer = loop.child_by_field_name("initializer")
    condition = loop.child_by_field_name("condition")
    update = loop.child_by_field_name("update")
    if initializer is None or condition is None or update is None:
        return None
    variable: str | None = None
    low: Node | None = None
    if initializer.type == "declaration":
        variable, low = kn.declared_variable(initializer, data), kn.initializer(initializer)
    elif initializer.type == "assignment_expression":
        assigned = _binary(initializer, data)
        if assigned is not None and assigned[1] == "=" and assigned[0].type == "identifier":
            variable, low = cs.text(assigned[0], data), assigned[2]
    if variable is None or low is None:
        return None
    compared = _binary(condition, data) if condition.type == "binary_expression" else None
    if compared is None:
        return None
    left, operator, right = compared
    if cs.text(left, data) != variable or operator not in ("<", "<="):
        return None
    if not _steps_up(update, variable, data):
        return None
    return _Counted(variable, low, right, operator == "<=")


def _binary(node: Node, data: bytes) -> tuple[Node, str, Node] | None:
    """(left, operator, right) of a binary or assignment expression with all three."""
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    operator = node.child_by_field_name("operator")
    if left is None or right is None or operator is None:
        return None
    return left, cs.text(operator, data), right


def _steps_up(update: Node, variable: str, data: bytes) -> bool:
    """`i++`, `++i` or `i += k` with k a positive literal."""
    if update.type == "update_expression":
        argument = update.child_by_field_name("argument")
        return (
            argument is not None
            and cs.text(argument, data) == variable
            and ("++" in cs.text(update, data))
        )
    step = _binary(update, data) if update.type == "assignment_expression" else None
    if step is None:
        return False
    left, operator, right = step
    return (
        cs.text(left, data) == variable
        and operator == "+="
        and right.type == "number_literal"
        and _positive_literal(cs.text(right, data))
    )


def _positive_literal(text: str) -> bool:
    try:
        return int(text.rstrip("uUlL"), 0) > 0
    except ValueError:
        return False


@dataclass(frozen=True)
class _Span:
    """An index `variable + offset` (offset None: an index without the variable) and
    the part of it the barrier must evaluate (`rest`)."""

    offset: str | None
    rest: Node


def _index_span(index: Node, variable: str | None, data: bytes) -> _Span | None:
    inner = index
    while inner.type == "parenthesized_expression" and inner.named_children:
        inner = inner.named_children[0]
    names = {cs.text(n, data) for n in cs.identifiers_in(inner)}
    if variable is None or variable not in names:
        return _Span(None, index)
    if inner.type == "identifier":
        return _Span("0", inner)
    summed = _binary(inner, data) if inner.type == "binary_expression" else None
    if summed is None or summed[1] not in ("+", "-"):
        return None
    left, sign, right = summed
    if cs.text(left, data) == variable and variable not in {
        cs.text(n, data) for n in cs.identifiers_in(right)
    }:
        offset = cs.text(right, data)
        return _Span(offset if sign == "+" else f"-({offset})", right)
    if (
        sign == "+"
        and cs.text(right, data) == variable
        and variable not in {cs.text(n, data) for n in cs.identifiers_in(left)}
    ):
        return _Span(cs.text(left, data), left)
    return None


def _sum(left: str, right: str) -> str:
    if right == "0":
        return left
    if left == "0":
        return right
    if right.startswith("-(") and right.endswith(")"):
        return f"{paren(left)} - {paren(right[2:-1])}"
    return f"{paren(left)} + {paren(right)}"


def _subscript_index(subscript: Node) -> Node | None:
    """The one index of `a[k]` (C++ grammars hold it in a list), or None."""
    index = subscript.child_by_field_name("index")
    if index is not None:
        return index
    listed = subscript.child_by_field_name("indices")
    if listed is None:
        return None
    named = [c for c in listed.named_children if c.type != "comment"]
    return named[0] if len(named) == 1 else None


def _indexing(ident: Node) -> Node | None:
    """The subscript expression `ident[k]` when `ident` is what it indexes, else None."""
    subscript = ident.parent
    if subscript is None or subscript.type != "subscript_expression":
        return None
    return subscript if subscript.child_by_field_name("argument") == ident else None


def _arguments(call: Node) -> list[Node]:
    arguments = call.child_by_field_name("arguments")
    return [a for a in arguments.named_children if a.type != "comment"] if arguments else []


def _own_number(declared: cs.Declared) -> bool:
    """A local of an arithmetic type, static ones included (a helper's cached
    multiprocessor count): writing it never reaches memory a map could hold."""
    return (
        declared.scope == "local"
        and declared.kind == "scalar"
        and set(declared.base.split()) <= ARITHMETIC_WORDS
    )


def _root(expression: Node) -> Node | None:
    """The variable an lvalue or address is reached from (`a[i].x` -> a, `*p` -> p,
    `&s.f` -> s, `p + 1` -> p), or None."""
    node: Node | None = expression
    while node is not None and node.type != "identifier":
        if node.type in ("subscript_expression", "field_expression", "pointer_expression"):
            node = node.child_by_field_name("argument")
        elif node.type == "cast_expression":
            node = node.child_by_field_name("value")
        elif node.type == "binary_expression":
            node = node.child_by_field_name("left")
        elif node.type == "parenthesized_expression" and node.named_children:
            node = node.named_children[0]
        else:
            return None
    return node


def _is_address_of(node: Node, data: bytes) -> bool:
    return node.type == "pointer_expression" and cs.text(node, data).startswith("&")


def _function_of(node: Node) -> Node:
    while node.parent is not None and node.type != "function_definition":
        node = node.parent
    return node


def _member_call(call: Node, data: bytes) -> tuple[Node, str] | None:
    """(receiver, member name) of a call `obj.f(...)` on a named object (`.`, not `->`)."""
    if call.type != "call_expression":
        return None
    member = call.child_by_field_name("function")
    if member is None or member.type != "field_expression":
        return None
    receiver, field = member.child_by_field_name("argument"), member.child_by_field_name("field")
    if receiver is None or field is None or any(c.type == "->" for c in member.children):
        return None
    return receiver, cs.text(field, data)


def _is_call_target(node: Node) -> bool:
    parent = node.parent
    return parent is not None and parent.type == "call_expression" and parent.children[0] == node


def _compound_type(base: str) -> bool:
    """A struct, class, typedef or template type: it may hold pointers."""
    words = re.findall(r"[A-Za-z_]\w*", base)
    return not words or any(w not in ARITHMETIC_WORDS for w in words)


def _is_address(node: Node, scoper: _Scoper) -> bool:
    """`p`, `p + k`, `p - k`, `(T *)p`, `NULL`: an address computed without touching memory."""
    node = _uncast(node)
    if node.type in ("identifier", "null", "nullptr"):
        return True
    if node.type == "number_literal" and cs.text(node, scoper.data) == "0":
        return True
    if node.type == "binary_expression":
        op = node.child_by_field_name("operator")
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if op is None or left is None or right is None or cs.text(op, scoper.data) not in "+-":
            return False
        return _is_address(left, scoper) and not scoper._touches_memory(right)
    if node.type == "subscript_expression":
        return _is_row(node, scoper)
    if node.type == "pointer_expression" and cs.text(node, scoper.data).startswith("*"):
        return _points_to_array(node.child_by_field_name("argument"), scoper)
    return False


def _points_to_array(node: Node | None, scoper: _Scoper) -> bool:
    """`p` declared `T (*p)[N]...`: `*p` is a whole array, which decays to its address."""
    if node is None or node.type != "identifier":
        return False
    name = cs.text(node, scoper.data)
    text = _declaration_of(scoper, node, "pointer")
    return (
        text is not None and re.search(rf"\(\s*\*\s*{re.escape(name)}\s*\)\s*\[", text) is not None
    )


def _declaration_of(scoper: _Scoper, ident: Node, kind: str) -> str | None:
    """The text of the declaration the identifier resolves to, when it declares a `kind`."""
    declared = scoper.visible(cs.text(ident, scoper.data), ident.start_byte)
    if declared is None or declared.kind != kind:
        return None
    end = scoper.data.find(b";", declared.start)
    return scoper.data[declared.start : end].decode("utf-8", "surrogateescape")


def _is_row(node: Node, scoper: _Scoper) -> bool:
    """`a[p]` of an array declared `T a[N][M]`: the address of a row, nothing loaded."""
    depth = 0
    while node.type == "subscript_expression":
        index = node.child_by_field_name("index") or (
            node.named_children[1] if len(node.named_children) > 1 else None
        )
        if index is None or scoper._touches_memory(index):
            return False
        depth += 1
        node = node.child_by_field_name("argument") or node.named_children[0]
    if node.type != "identifier":
        return False
    name = cs.text(node, scoper.data)
    text = _declaration_of(scoper, node, "array")
    if text is None:
        return False
    shape = re.search(rf"\b{re.escape(name)}\s*((?:\[[^\]]*\]\s*)+)", text)
    return shape is not None and shape.group(1).count("[") > depth


def _is_pointer_copy(node: Node, scoper: _Scoper) -> bool:
    """`T *t = a;` or `a = b;` with pointers: moves an address, touches no pointee."""
    data = scoper.data
    if node.type == "declaration":
        declarators = [
            node.children[i]
            for i in range(node.child_count)
            if node.field_name_for_child(i) == "declarator"
        ]
        if not declarators or any(d.type != "init_declarator" for d in declarators):
            return False
        for declarator in declarators:
            kind, _ = cs.declarator_kind(declarator.child_by_field_name("declarator"))
            value = declarator.child_by_field_name("value")
            if kind != "pointer" or value is None or not _is_address(value, scoper):
                return False
        return True
    if node.type != "expression_statement" or not node.named_children:
        return False
    expression = node.named_children[0]
    parts = expression.named_children if expression.type == "comma_expression" else [expression]
    for part in parts:
        if part.type != "assignment_expression" or cs.text(part.children[1], data) != "=":
            return False
        left, right = part.child_by_field_name("left"), part.child_by_field_name("right")
        if left is None or right is None or left.type != "identifier":
            return False
        declared = scoper.visible(cs.text(left, data), left.start_byte)
        if declared is None or declared.kind != "pointer" or not _is_address(right, scoper):
            return False
    return True


def _bodies(node: Node) -> list[Node]:
    if node.type == "compound_statement":
        return _statements(node)
    found = []
    for index, child in enumerate(node.children):
        if node.field_name_for_child(index) in ("consequence", "alternative"):
            found.extend(_statements(child) if child.type == "else_clause" else [child])
    return found


def _indent_of(data: bytes, offset: int) -> str:
    line_start = data.rfind(b"\n", 0, offset) + 1
    prefix = data[line_start:offset].decode("utf-8", errors="surrogateescape")
    return prefix if not prefix.strip() else re.match(r"\s*", prefix).group(0)  # type: ignore[union-attr]


def _insert_before(node: Node, barrier: str, data: bytes) -> list[Edit]:
    """`barrier` (one or more statements, a line each) before statement `node`."""
    if node.parent is not None and node.parent.type == "compound_statement":
        indent = _indent_of(data, node.start_byte)
        lines = barrier.replace("\n", "\n" + indent)
        return [Edit(node.start_byte, node.start_byte, f"{lines}\n{indent}", barrier)]
    barrier = barrier.replace("\n", " ")
    return [
        Edit(node.start_byte, node.start_byte, "{ " + barrier + " ", barrier),
        Edit(node.end_byte, node.end_byte, " }", barrier),
    ]
