"""What every method's structural postcondition shares, read from the tree-sitter-cuda trees
of the code a method was applied to (`before`) and of its answer (`after`), rule or model.

An answer counts only when its tokens differ from the code it was given (comments and
layout do not count), every launch names a kernel the answer defines, every new kernel is
launched from host code that the program's own functions reach, and the method's change
lands in such a launched kernel or in the host code around its launches. The methods add
their own meaning on top (see each `check`); none of it reads substrings of the text, so
a comment that names a method's construct proves nothing."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from tree_sitter import Node

from cudaify.core import Problem
from cudaify.transforms import csource as cs
from cudaify.transforms.kernel_codegen import DEVICE_ALLOCATIONS


@dataclass(frozen=True)
class Source:
    """One side of a method's step: the bytes and their syntax tree."""

    data: bytes
    root: Node

    def text(self, node: Node) -> str:
        return cs.text(node, self.data)


@dataclass(frozen=True)
class KernelLaunch:
    """`kernel<<<configuration>>>(arguments)` inside function `function` (None at top level)."""

    kernel: str
    call: Node
    function: Node | None


@functools.lru_cache(maxsize=32)
def parsed(code: str) -> Source:
    data = code.encode("utf-8", errors="surrogateescape")
    return Source(data, cs.parse(data).root_node)


# ---- tokens --------------------------------------------------------------------------------


@functools.lru_cache(maxsize=64)
def tokens(node: Node, source: Source) -> tuple[str, ...]:
    """The leaves under `node` in order, comments left out: what the compiler reads.
    (Cached: the structural checks compare every child of a state with that state.)"""
    found: list[str] = []
    for current in cs.walk(node):
        if current.child_count == 0 and current.type != "comment":
            spelled = source.text(current).strip()
            if spelled:
                found.append(spelled)
    return tuple(found)


def same_tokens(before: Source, after: Source) -> bool:
    return tokens(before.root, before) == tokens(after.root, after)


def shipped(source: Source, text: str) -> bool:
    """Whether `source` holds `text` (a runtime helper cudaify ships, parsed alone) token for
    token, and defines none of its functions a second time: an overload or a changed copy
    could take its calls."""
    helper = parsed(text)
    wanted, have = tokens(helper.root, helper), tokens(source.root, source)
    if not wanted or not _holds(have, wanted):
        return False
    mine = functions(source)
    return all(
        len(mine.get(name, [])) == len(nodes)
        for name, nodes in functions(helper).items()
        if not name.startswith("operator")  # a member: other classes have their own
    )


def _holds(have: tuple[str, ...], wanted: tuple[str, ...]) -> bool:
    """Whether `wanted` is a contiguous run of `have`."""
    width = len(wanted)
    return any(
        have[start : start + width] == wanted
        for start, token in enumerate(have[: len(have) - width + 1])
        if token == wanted[0]
    )


# ---- kernels and launches ------------------------------------------------------------------


def is_kernel(definition: Node) -> bool:
    return any(child.type == "__global__" for child in definition.children)


def is_device_only(definition: Node) -> bool:
    spaces = {c.type for c in definition.children} & {"__global__", "__device__", "__host__"}
    return bool(spaces) and "__host__" not in spaces


def functions(source: Source) -> dict[str, list[Node]]:
    return cs.all_function_nodes(cs.parse(source.data), source.data)


def kernels(source: Source) -> dict[str, Node]:
    """Every `__global__` function definition by name."""
    return {
        name: node for name, nodes in functions(source).items() for node in nodes if is_kernel(node)
    }


def plain_name(spelled: str) -> str:
    """`ns::k<T>` -> `k`: the name a launch or a call refers to."""
    return spelled.split("<", 1)[0].split("::")[-1].strip()


def launches(source: Source, within: Node | None = None) -> list[KernelLaunch]:
    """Every `<<<...>>>` call under `within` (the whole program when None)."""
    return list(_launches(source, within))


# Each check asks these of the same trees many times (a search checks every candidate):
# cached by the trees, handed out as fresh lists and sets.
@functools.lru_cache(maxsize=256)
def _launches(source: Source, within: Node | None) -> tuple[KernelLaunch, ...]:
    found = []
    for node in cs.walk(within if within is not None else source.root):
        if node.type != "call_expression":
            continue
        if not any(child.type == "kernel_call_syntax" for child in node.children):
            continue
        function = node.child_by_field_name("function")
        name = plain_name(source.text(function)) if function is not None else ""
        found.append(KernelLaunch(name, node, cs.enclosing_function(node)))
    return tuple(found)


def called_names(node: Node, source: Source) -> set[str]:
    """Names called under `node`, launches included (`k<<<g, b>>>()` calls `k`)."""
    return set(_called_names(node, source))


@functools.lru_cache(maxsize=4096)
def _called_names(node: Node, source: Source) -> frozenset[str]:
    names = set()
    for call in cs.walk(node):
        if call.type != "call_expression":
            continue
        function = call.child_by_field_name("function")
        if function is not None and function.type in (
            "identifier",
            "qualified_identifier",
            "template_function",
        ):
            names.add(plain_name(source.text(function)))
    return frozenset(names)


def reached_functions(source: Source, roots: Iterable[str]) -> set[str]:
    """The functions `roots` call, directly or through others the program defines."""
    defined = functions(source)
    seen: set[str] = set()
    pending = [name for name in roots if name in defined]
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        for node in defined[name]:
            pending.extend(n for n in called_names(node, source) if n in defined)
    return seen


def host_launches(before: Source, after: Source) -> list[KernelLaunch]:
    """The launches in host functions that the program's own functions (those of `before`,
    main among them) reach in `after`: a launch in a helper nobody calls runs nothing."""
    return list(_host_launches(before, after))


@functools.lru_cache(maxsize=256)
def _host_launches(before: Source, after: Source) -> tuple[KernelLaunch, ...]:
    roots = [name for name, nodes in functions(before).items() if not _device_code(nodes)]
    reached = reached_functions(after, roots)
    found = []
    for launch in launches(after):
        if launch.function is None or is_kernel(launch.function):
            continue
        if (cs.function_name(launch.function, after.data) or "") in reached:
            found.append(launch)
    return tuple(found)


def _device_code(nodes: list[Node]) -> bool:
    return all(is_kernel(node) or is_device_only(node) for node in nodes)


def launched_kernels(before: Source, after: Source) -> dict[str, Node]:
    """The kernels of `after` that its host code launches (see `host_launches`)."""
    defined = kernels(after)
    names = {launch.kernel for launch in host_launches(before, after)}
    return {name: node for name, node in defined.items() if name in names}


def device_code(source: Source, kernel: Node) -> list[Node]:
    """The kernel and the device functions it calls, directly or not."""
    defined = functions(source)
    found, seen = [kernel], {cs.function_name(kernel, source.data) or ""}
    pending = sorted(called_names(kernel, source))
    while pending:
        name = pending.pop()
        if name in seen or name not in defined:
            continue
        seen.add(name)
        for node in defined[name]:
            if is_device_only(node) or "__host__" in {c.type for c in node.children}:
                found.append(node)
                pending.extend(called_names(node, source))
    return found


def changed_kernels(before: Source, after: Source) -> dict[str, Node]:
    """The launched kernels of `after` that are new or whose code (their device helpers
    included) differs from the kernel of that name in `before`."""
    old = kernels(before)
    changed = {}
    for name, node in launched_kernels(before, after).items():
        if name in old and _code_tokens(before, old[name]) == _code_tokens(after, node):
            continue
        changed[name] = node
    return changed


def _code_tokens(source: Source, kernel: Node) -> tuple[str, ...]:
    return tuple(t for node in device_code(source, kernel) for t in tokens(node, source))


# ---- host loops ----------------------------------------------------------------------------


def host_loops(source: Source, function: Node) -> list[Node]:
    return [node for node in cs.walk(function) if node.type in cs.LOOP_TYPES]


def replaced_loops(before: Source, after: Source) -> dict[str, list[Node]]:
    """Per host function of `before`: its outermost loops whose tokens no longer appear
    as a loop of that function in `after` (rewritten, distributed or gone)."""
    old, new = functions(before), functions(after)
    found: dict[str, list[Node]] = {}
    for name, nodes in old.items():
        if name not in new or _device_code(nodes):
            continue
        kept = {tokens(loop, after) for node in new[name] for loop in host_loops(after, node)}
        for node in nodes:
            gone = [
                loop
                for loop in host_loops(before, node)
                if not _inside_loop(loop) and tokens(loop, before) not in kept
            ]
            if gone:
                found.setdefault(name, []).extend(gone)
    return found


def guarded_loops(before: Source, after: Source) -> set[str]:
    """The host functions of `before` with an outermost loop that `after` keeps under more
    conditions than before: the host fallback of a launch (`if (outside) { loop }`)."""
    old, new = functions(before), functions(after)
    found = set()
    for name, nodes in old.items():
        if name not in new or _device_code(nodes):
            continue
        kept: dict[tuple[str, ...], int] = {}
        for node in new[name]:
            for loop in host_loops(after, node):
                kept[tokens(loop, after)] = max(kept.get(tokens(loop, after), 0), _guards(loop))
        for node in nodes:
            for loop in host_loops(before, node):
                if not _inside_loop(loop) and kept.get(tokens(loop, before), 0) > _guards(loop):
                    found.add(name)
    return found


def _guards(node: Node) -> int:
    count, parent = 0, node.parent
    while parent is not None and parent.type != "function_definition":
        count += parent.type == "if_statement"
        parent = parent.parent
    return count


def _inside_loop(node: Node) -> bool:
    parent = node.parent
    while parent is not None and parent.type != "function_definition":
        if parent.type in cs.LOOP_TYPES:
            return True
        parent = parent.parent
    return False


def arrays_written(node: Node, source: Source) -> set[str]:
    """Names whose elements (or themselves) are assigned or incremented under `node`:
    `a[i] = ...`, `*p += ...`, `s.f++` name `a`, `p`, `s`."""
    written: set[str] = set()
    for n in cs.walk(node):
        target: Node | None = None
        if n.type == "assignment_expression":
            target = n.child_by_field_name("left")
        elif n.type == "update_expression":
            target = n.child_by_field_name("argument")
        name = _base_name(target, source)
        if name:
            written.add(name)
    return written


def _base_name(node: Node | None, source: Source) -> str:
    while node is not None and node.type != "identifier":
        if node.type == "subscript_expression":
            node = node.child_by_field_name("argument")
        elif node.type == "field_expression":
            node = node.child_by_field_name("argument")
        elif node.type in ("pointer_expression", "parenthesized_expression"):
            node = node.named_children[-1] if node.named_children else None
        else:
            return ""
    return source.text(node) if node is not None else ""


def identifiers(node: Node, source: Source) -> set[str]:
    return {source.text(n) for n in cs.walk(node) if n.type == "identifier"}


def function_of(node: Node, source: Source) -> str:
    definition = cs.enclosing_function(node)
    return (cs.function_name(definition, source.data) or "") if definition is not None else ""


def calls(node: Node, source: Source) -> Iterator[tuple[str, Node]]:
    """(qualified name without spaces or template arguments, call) under `node`."""
    for call in cs.walk(node):
        if call.type != "call_expression":
            continue
        function = call.child_by_field_name("function")
        if function is None or function.type not in (
            "identifier",
            "qualified_identifier",
            "template_function",
        ):
            continue
        spelled = "".join(source.text(function).split())
        yield _strip_templates(spelled), call


def _strip_templates(spelled: str) -> str:
    out, depth = [], 0
    for char in spelled:
        if char == "<":
            depth += 1
        elif char == ">" and depth:
            depth -= 1
        elif not depth:
            out.append(char)
    return "".join(out)


def arguments(call: Node) -> list[Node]:
    found = call.child_by_field_name("arguments")
    return list(found.named_children) if found is not None else []


# ---- what device code does ----------------------------------------------------------------


def device_calls(source: Source, kernel: Node) -> list[tuple[str, Node]]:
    """(qualified name, call) made by the kernel or the device functions it reaches."""
    return [found for node in device_code(source, kernel) for found in calls(node, source)]


def shared_declarations(source: Source, kernel: Node) -> list[Node]:
    """`__shared__` declarations in the kernel's device code."""
    return [
        node
        for code in device_code(source, kernel)
        for node in cs.walk(code)
        if node.type == "declaration" and _qualified_shared(node)
    ]


def _qualified_shared(declaration: Node) -> bool:
    for child in declaration.children:
        if child.type == "__shared__":
            return True
        if child.type == "type_qualifier" and any(c.type == "__shared__" for c in child.children):
            return True
    return False


def local_arrays(source: Source, kernel: Node) -> list[Node]:
    """Arrays declared inside the kernel's device code: per-thread (or per-block) copies."""
    return [
        node
        for code in device_code(source, kernel)
        for node in cs.walk(code)
        if node.type == "array_declarator" and _inside(node, "compound_statement")
    ]


def private_copies(source: Source, kernel: Node) -> bool:
    """The kernel's device code keeps private copies: a __shared__ or local array, or a
    global one indexed by the block (`partial[blockIdx.x * bins + b]`)."""
    if shared_declarations(source, kernel) or local_arrays(source, kernel):
        return True
    for code in device_code(source, kernel):
        for node in cs.walk(code):
            index = (
                node.child_by_field_name("indices") if node.type == "subscript_expression" else None
            )
            if index is not None and "blockIdx" in tokens(index, source):
                return True
    return False


def _inside(node: Node, kind: str) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.type == kind:
            return True
        parent = parent.parent
    return False


def builtin_dimensions(source: Source, kernel: Node) -> list[tuple[str, str]]:
    """(threadIdx/blockIdx/blockDim/gridDim, x/y/z) in order of use in the kernel."""
    found = []
    for node in cs.walk(kernel):
        if node.type != "field_expression":
            continue
        base, field = node.child_by_field_name("argument"), node.child_by_field_name("field")
        if base is None or field is None:
            continue
        if source.text(base) in _BUILTINS and source.text(field) in ("x", "y", "z"):
            found.append((source.text(base), source.text(field)))
    return found


_BUILTINS = {"threadIdx", "blockIdx", "blockDim", "gridDim"}


def pragmas(source: Source, node: Node, word: str) -> list[Node]:
    """`#pragma word ...` lines under `node`."""
    found = []
    for pragma in cs.walk(node):
        if pragma.type != "preproc_call":
            continue
        directive = pragma.child_by_field_name("directive")
        argument = pragma.child_by_field_name("argument")
        if directive is None or source.text(directive).strip() != "#pragma":
            continue
        words = source.text(argument).split() if argument is not None else []
        if words[:1] == [word]:
            found.append(pragma)
    return found


def aliases(
    source: Source, function: Node, names: set[str], through_launches: bool = False
) -> set[str]:
    """`names` and the names tied to them in `function` by a transfer or a mapping call
    (`cudaMemcpy(d_a, a, ...)`, `cudaify_map(a, ...)`) or an initialisation from them: the
    device copies of host arrays, however the answer names them. `through_launches`: the
    arguments of one launch are tied too (a kernel that fills a buffer from an array)."""
    tied = set(names)
    links = []
    for name, call in calls(function, source):
        # the runtime's allocation calls name a buffer and its byte count: no copy ties them
        if name.startswith(("cudaMemcpy", "cudaify_")) and name not in DEVICE_ALLOCATIONS:
            links.append({n for arg in arguments(call) for n in identifiers(arg, source)})
    if through_launches:
        for launch in launches(source, function):
            links.append({n for a in arguments(launch.call) for n in identifiers(a, source)})
    for node in cs.walk(function):
        if node.type == "init_declarator":
            declared, value = (
                node.child_by_field_name("declarator"),
                node.child_by_field_name("value"),
            )
            if declared is not None and value is not None:
                links.append(identifiers(declared, source) | identifiers(value, source))
    changed = True
    while changed:
        changed = False
        for link in links:
            if link & tied and not link <= tied:
                tied |= link
                changed = True
    return tied


def statement_in(function: Node, node: Node) -> Node:
    """The statement of `function`'s body that holds `node`."""
    body = function.child_by_field_name("body")
    current = node
    while current.parent is not None and current.parent != body:
        current = current.parent
    return current


def enclosing_loops(node: Node) -> list[Node]:
    """The loops around `node` inside its function, innermost first."""
    found = []
    parent = node.parent
    while parent is not None and parent.type != "function_definition":
        if parent.type in cs.LOOP_TYPES:
            found.append(parent)
        parent = parent.parent
    return found


def loop_variables(loop: Node, source: Source) -> set[str]:
    """The names a for loop's header declares or assigns."""
    init = loop.child_by_field_name("initializer")
    if init is None:
        return set()
    if init.type == "declaration":
        return {d.name for d in cs.declared_names(init, source.data, "local")}
    return arrays_written(init, source)


def computed_from(loop: Node, before: Node, source: Source, names: set[str]) -> set[str]:
    """The names read by the declarations inside `loop`, ahead of `before`, that declare
    one of `names` (`first = wave - ...; k<<<...>>>(first)` gives `wave`)."""
    read: set[str] = set()
    for node in cs.walk(loop):
        if node.start_byte >= before.start_byte or node.type != "init_declarator":
            continue
        declared, value = node.child_by_field_name("declarator"), node.child_by_field_name("value")
        if declared is not None and value is not None and identifiers(declared, source) & names:
            read |= identifiers(value, source)
    return read


def argument_names(call: Node, source: Source) -> set[str]:
    return {n for arg in arguments(call) for n in identifiers(arg, source)}


def parameter_names(definition: Node, source: Source) -> set[str]:
    return {
        declared.name
        for param in cs.parameter_nodes(definition)
        if param.type == "parameter_declaration"
        for declared in cs.declared_names(param, source.data, "param")
    }


def launched_per_iteration(source: Source, launch: KernelLaunch) -> bool:
    """The launch runs once per iteration of a host loop and is passed that loop's variable
    (or a value computed from it in the loop): in its own function, or through a call of a
    helper that passes one of its parameters on to the launch, made inside such a loop."""
    sites = [(launch.call, argument_names(launch.call, source))]
    function = launch.function
    if function is not None and parameter_names(function, source) & sites[0][1]:
        name = cs.function_name(function, source.data) or ""
        sites += [
            (call, argument_names(call, source))
            for called, call in calls(source.root, source)
            if plain_name(called) == name and cs.enclosing_function(call) != function
        ]
    for site, passed in sites:
        for loop in enclosing_loops(site):
            steps = loop_variables(loop, source)
            if steps & passed or steps & computed_from(loop, site, source, passed):
                return True
    return False


def reaching_functions(before: Source, after: Source, function: str) -> set[str]:
    """The host functions of `before` that reach `function` in `after` (itself included)."""
    old = functions(before)
    return {
        name
        for name, nodes in old.items()
        if not _device_code(nodes) and function in reached_functions(after, [name])
    }


# ---- the shared postcondition --------------------------------------------------------------


def common_problems(method: str, before: str, after: str) -> list[Problem]:
    """What every method's answer must satisfy: it changes code, not only comments or
    layout; each launch names a kernel it defines; each new kernel is launched from host
    code the program reaches. An unchanged answer is reported alone."""
    old, new = parsed(before), parsed(after)
    if same_tokens(old, new):
        return [Problem(method, "the answer changes nothing but comments and layout")]
    problems = []
    defined = kernels(new)
    for launch in launches(new):
        if launch.kernel not in defined:
            problems.append(
                Problem(
                    method,
                    f"'{launch.kernel}' is launched but no __global__ function defines it",
                    line=cs.line_of(launch.call),
                )
            )
    launched = launched_kernels(old, new)
    existing = kernels(old)
    for name, node in defined.items():
        if name not in existing and name not in launched:
            problems.append(
                Problem(
                    method,
                    f"the new kernel '{name}' is never launched from host code the program runs",
                    line=cs.line_of(node),
                )
            )
    return problems


def offloaded_problems(method: str, before: str, after: str) -> list[Problem]:
    """A host function with loops launches (itself or through the functions it calls) a new
    or changed kernel that took over a loop's work (see `takes_over`)."""
    old, new = parsed(before), parsed(after)
    changed = changed_kernels(old, new)
    if any(
        launch.kernel in changed and takes_over(old, new, launch, only_new=True)
        for launch in host_launches(old, new)
    ):
        return []
    return [Problem(method, "no loop of a host function was replaced by a launch of a new kernel")]


def takes_over(old: Source, new: Source, launch: KernelLaunch, only_new: bool = False) -> bool:
    """The launched kernel does work the launching function's loops did: the kernel was
    there before (unless `only_new`), or a loop of that function (or of one that calls it)
    is gone, or the kernel runs statements of such a loop (one kept as the host fallback)."""
    if launch.function is None:
        return False
    if not only_new and launch.kernel in kernels(old):
        return True
    launcher = cs.function_name(launch.function, new.data) or ""
    owners = reaching_functions(old, new, launcher)
    if owners & (replaced_loops(old, new).keys() | guarded_loops(old, new)):
        return True
    kernel = kernels(new).get(launch.kernel)
    return kernel is not None and bool(loop_statements(old, owners) & statements(new, kernel))


_STATEMENTS = frozenset({"expression_statement", "declaration", "return_statement"})


def statements(source: Source, kernel: Node) -> set[tuple[str, ...]]:
    """The tokens of every simple statement in the kernel's device code."""
    return {
        tokens(node, source)
        for code in device_code(source, kernel)
        for node in cs.walk(code)
        if _simple_statement(node)
    }


def _simple_statement(node: Node) -> bool:
    """A statement of a body (not a loop header's `int i = 0;`)."""
    return node.type in _STATEMENTS and (node.parent is None or node.parent.type != "for_statement")


def loop_statements(source: Source, names: set[str]) -> set[tuple[str, ...]]:
    """The tokens of every simple statement inside a loop of the host functions `names`."""
    found = set()
    for name in names:
        for definition in functions(source).get(name, []):
            for loop in host_loops(source, definition):
                found |= {tokens(n, source) for n in cs.walk(loop) if _simple_statement(n)}
    return found


_SHUFFLES = frozenset(
    {"__shfl_down_sync", "__shfl_xor_sync", "__shfl_up_sync", "__shfl_sync", "__reduce_add_sync"}
    | {"__reduce_min_sync", "__reduce_max_sync", "__reduce_and_sync", "__reduce_or_sync"}
)
_CUB_REDUCERS = frozenset({"BlockReduce", "WarpReduce"})


def atomic_calls(source: Source, kernel: Node) -> list[Node]:
    """Atomic read-modify-writes in the kernel's device code (`atomicAdd`, `atomicMax_block`,
    `cuda::atomic_ref` members are not counted)."""
    return [
        call for name, call in device_calls(source, kernel) if plain_name(name).startswith("atomic")
    ]


def combines_threads(source: Source, kernel: Node) -> bool:
    """The kernel's threads combine values: a warp shuffle or reduce, an atomic, a CUB block
    or warp reduction, or a shared array written between barriers."""
    names = {plain_name(name) for name, _ in device_calls(source, kernel)}
    if names & _SHUFFLES or atomic_calls(source, kernel):
        return True
    used = {
        source.text(node)
        for code in device_code(source, kernel)
        for node in cs.walk(code)
        if node.type in ("type_identifier", "namespace_identifier", "identifier")
    }
    if used & _CUB_REDUCERS:
        return True
    return bool(shared_declarations(source, kernel)) and "__syncthreads" in names


def loop_arrays(source: Source, names: set[str]) -> set[str]:
    """What the loops of the host functions `names` write (arrays, pointers, scalars)."""
    found: set[str] = set()
    for name in names:
        for definition in functions(source).get(name, []):
            for loop in host_loops(source, definition):
                found |= arrays_written(loop, source)
    return found


# ---- refinements of launched kernels -------------------------------------------------------

# what a refinement adds to a kernel, counted in its device code
Measure = Callable[[Source, Node], int]


def kernel_pairs(before: str, after: str) -> list[tuple[Source, Node | None, Source, Node]]:
    """(before, its kernel of that name or None, after, kernel) for every launched kernel of
    `after` that is new or changed. A new kernel is paired with None only in place of one
    the host no longer launches (a renamed kernel), or when `before` launched none (checked
    against the sequential program); otherwise it is no refinement of what ran."""
    old, new = parsed(before), parsed(after)
    previous = kernels(old)
    launched_before = set(launched_kernels(old, old))
    renamed = not launched_before or bool(launched_before - set(launched_kernels(old, new)))
    return [
        (old, previous.get(name), new, node)
        for name, node in changed_kernels(old, new).items()
        if name in previous or renamed
    ]


def kernel_gained(before: str, after: str, measure: Measure) -> bool:
    """Some launched kernel of `after`, new or changed, measures more than the kernel of its
    name in `before` (0 for a new one): the method's construct was added where it runs."""
    return any(
        measure(new, node) > (measure(old, was) if was is not None else 0)
        for old, was, new, node in kernel_pairs(before, after)
    )


def unroll_pragmas(source: Source, kernel: Node) -> int:
    """`#pragma unroll` lines right before a sequential for loop in the kernel's device
    code."""
    return sum(
        1
        for code in device_code(source, kernel)
        for pragma in pragmas(source, code, "unroll")
        if pragma.next_named_sibling is not None
        and pragma.next_named_sibling.type == "for_statement"
        and not _grid_stride(pragma.next_named_sibling, source)
    )


def _grid_stride(loop: Node, source: Source) -> bool:
    """A loop whose header reads the thread's place in the grid: each thread's share of
    the grid, not a sequential loop (unrolling it changes nothing)."""
    header = [loop.child_by_field_name(f) for f in ("initializer", "condition", "update")]
    return any(set(tokens(part, source)) & _BUILTINS for part in header if part is not None)


def loop_replicated(before: str, after: str) -> bool:
    """A launched kernel lost a loop and gained statements: the copies of its body."""
    old, new = parsed(before), parsed(after)
    previous = kernels(old)
    for name, node in changed_kernels(old, new).items():
        if name not in previous:
            continue
        fewer = loop_count(new, node) < loop_count(old, previous[name])
        if fewer and statement_count(new, node) > statement_count(old, previous[name]):
            return True
    return False


def loop_count(source: Source, kernel: Node) -> int:
    return sum(1 for node in cs.walk(kernel) if node.type in cs.LOOP_TYPES)


def statement_count(source: Source, kernel: Node) -> int:
    return sum(1 for node in cs.walk(kernel) if _simple_statement(node))


def call_count(names: frozenset[str]) -> Measure:
    """A measure: the calls of `names` in the kernel's device code."""

    def count(source: Source, kernel: Node) -> int:
        return sum(1 for name, _ in device_calls(source, kernel) if plain_name(name) in names)

    return count


def leaf_count(words: frozenset[str], where: Callable[[Node], Node | None]) -> Measure:
    """A measure: the leaves spelled as one of `words` under `where(kernel)`."""

    def count(source: Source, kernel: Node) -> int:
        node = where(kernel)
        return sum(1 for t in tokens(node, source) if t in words) if node is not None else 0

    return count


def head(kernel: Node) -> Node | None:
    """The kernel's declarator: its name, attributes and parameters."""
    return kernel.child_by_field_name("declarator")


def whole(kernel: Node) -> Node | None:
    return kernel


def coarsened_strides(source: Source, kernel: Node) -> int:
    """Grid-stride loops whose step covers several outputs per thread: an update that reads
    blockDim or gridDim and multiplies by an integer constant of at least 2."""
    found = 0
    grid_names = _grid_names(source, kernel)
    for loop in cs.walk(kernel):
        update = loop.child_by_field_name("update") if loop.type == "for_statement" else None
        if update is None or not set(tokens(update, source)) & grid_names:
            continue
        factors = [
            node
            for node in cs.walk(update)
            if node.type == "number_literal"
            and _integer(source.text(node)) >= 2
            and node.parent is not None
            and node.parent.type == "binary_expression"
            and source.text(node.parent.child_by_field_name("operator") or node) == "*"
        ]
        found += bool(factors)
    return found


def _grid_names(source: Source, kernel: Node) -> set[str]:
    """blockDim and gridDim, and the kernel's locals computed from them (`stride`)."""
    names = {"blockDim", "gridDim"}
    for node in cs.walk(kernel):
        if node.type != "init_declarator":
            continue
        declared, value = node.child_by_field_name("declarator"), node.child_by_field_name("value")
        if declared is not None and value is not None and set(tokens(value, source)) & names:
            names |= identifiers(declared, source)
    return names


def _integer(spelled: str) -> int:
    try:
        return int(spelled.rstrip("uUlL"), 0)
    except ValueError:
        return 0


def launch_configurations(source: Source) -> dict[str, list[tuple[str, ...]]]:
    """Per kernel: each launch's `<<<...>>>` tokens with the declarations of the names it
    uses (the dim3 shapes, a shared-memory size), sorted."""
    found: dict[str, list[tuple[str, ...]]] = {}
    for launch in launches(source):
        syntax = next(c for c in launch.call.children if c.type == "kernel_call_syntax")
        signature = list(tokens(syntax, source))
        used = identifiers(syntax, source)
        scope = launch.function if launch.function is not None else source.root
        for node in cs.walk(scope):
            if node.start_byte >= launch.call.start_byte or node.type != "declaration":
                continue
            if {d.name for d in cs.declared_names(node, source.data, "local")} & used:
                signature += tokens(node, source)
        found.setdefault(launch.kernel, []).append(tuple(signature))
    return {name: sorted(found[name]) for name in found}


def host_calls(source: Source, names: frozenset[str], in_loops: bool) -> int:
    """Calls of `names` in host functions (only those inside a loop when `in_loops`)."""
    count = 0
    for nodes in functions(source).values():
        for definition in nodes:
            if is_kernel(definition) or is_device_only(definition):
                continue
            for name, call in calls(definition, source):
                if plain_name(name) in names and (not in_loops or enclosing_loops(call)):
                    count += 1
    return count


def staged_tiles(source: Source, kernel: Node) -> int:
    """The kernel's __shared__ arrays that it writes and reads, counted when it also waits
    at a barrier."""
    if not call_count(frozenset({"__syncthreads"}))(source, kernel):
        return 0
    code = device_code(source, kernel)
    written = {name for node in code for name in arrays_written(node, source)}
    used: dict[str, int] = {}
    for node in code:
        for n in cs.walk(node):
            if n.type == "identifier":
                used[source.text(n)] = used.get(source.text(n), 0) + 1
    staged = 0
    for declaration in shared_declarations(source, kernel):
        for declared in cs.declared_names(declaration, source.data, "local"):
            # declared, written, and read at least once more
            staged += declared.name in written and used.get(declared.name, 0) >= 3
    return staged


def device_call_count(source: Source, names: frozenset[str]) -> int:
    """Calls of `names` in every __global__ or __device__ function of the program."""
    return sum(
        1
        for nodes in functions(source).values()
        for definition in nodes
        if is_kernel(definition) or is_device_only(definition)
        for name, _ in calls(definition, source)
        if plain_name(name) in names
    )


def remapped(before: str, after: str) -> bool:
    """A launched kernel of both sides uses its thread and block dimensions in another
    order, or is launched with another configuration."""
    old, new = parsed(before), parsed(after)
    previous = kernels(old)
    for name, node in changed_kernels(old, new).items():
        if name in previous and builtin_dimensions(new, node) != builtin_dimensions(
            old, previous[name]
        ):
            return True
    return relaunched(before, after)


def relaunched(before: str, after: str) -> bool:
    """A kernel launched from host code on both sides is launched with another
    configuration (its `<<<...>>>` or the shapes it names)."""
    old, new = parsed(before), parsed(after)
    was, now = launch_configurations(old), launch_configurations(new)
    launched = launched_kernels(old, new)
    return any(name in was and was[name] != now.get(name) for name in launched)
