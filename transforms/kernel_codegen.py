"""The kernel code generator every method shares: where kernels go in a file, how loop
levels map onto the grid (grid-stride headers, iteration numbers to loop values), which
arrays and helper functions a kernel needs and how they are passed (parameters, byte
sizes, host addresses, kernel arguments), what makes a loop nest unfit for a kernel, and
the small text helpers for fresh names and indentation.

offload emits its kernels with these; the pattern methods (reduction, scan, scatter,
compact, wavefront, atomic_privatize, sort) emit theirs with the same pieces, so a kernel
looks the same whichever method wrote it."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from tree_sitter import Node, Tree

from cudaify.frontend.facts import ArrayData, Function, Loop, Program
from cudaify.transforms import csource as cs
from cudaify.transforms import std_device

# Functions with a device version in CUDA's math library (the float and double forms;
# long double has none on the device).
MATH_FUNCTIONS = frozenset(
    name + suffix
    for name in (
        "sqrt cbrt rsqrt exp exp2 exp10 expm1 log log2 log10 log1p pow sin cos tan asin acos "
        "atan atan2 sinh cosh tanh asinh acosh atanh fabs floor ceil round trunc rint nearbyint "
        "fmod remainder fmin fmax fma fdim hypot erf erfc tgamma lgamma copysign ldexp frexp "
        "modf scalbn ilogb logb sincos sinpi cospi"
    ).split()
    for suffix in ("", "f")
) | frozenset(
    "abs labs llabs min max isnan isinf isfinite signbit lround llround lrint llrint".split()
)


# Below this many iterations (known at compile time) a launch and the transfers cost more
# than the loop: such nests stay on the host.
MIN_ITERATIONS = 1024


IDENT = re.compile(r"[A-Za-z_]\w*")


QUALIFIERS = re.compile(r"\b(const|volatile|restrict|__restrict__|__restrict)\b")


class Refuse(Exception):
    """Why one loop cannot be rewritten by a rule (becomes an Outcome reason)."""


@dataclass(frozen=True)
class Level:
    """One loop level mapped onto a grid dimension."""

    loop: Loop
    var_type: str
    declared_outside: bool
    dim: str  # x | y | z
    index: str  # kernel name of the iteration number
    trips: str  # host and kernel name of the trip count


def definition_node(tree: Tree, start: int) -> Node | None:
    """The function definition starting at `start`, or the template declaration that
    holds it (a template's extent starts at `template`)."""
    node = cs.node_at(tree, start, "function_definition")
    if node is not None:
        return node
    template = cs.node_at(tree, start, "template_declaration")
    if template is None:
        return None
    inner = [c for c in template.named_children if c.type == "function_definition"]
    return template if inner else None


def device_code(code: str, where: Node) -> str:
    """`code` in the device's spelling of the standard library (std_device), or Refuse."""
    try:
        return std_device.device_text(code)
    except std_device.NoDeviceVersion as error:
        raise Refuse(f"line {cs.line_of(where)}: the kernel cannot use '{error}'") from None


def called_lambdas(nest: Node, definition: Node, source: bytes) -> list[Node]:
    """The declarations of the lambdas the nest calls (see std_device.lambdas_called)."""
    calls = {name for name, _ in cs.calls_in(nest, source)}
    try:
        return std_device.lambdas_called(calls, definition, nest.start_byte, nest.end_byte, source)
    except std_device.CaptureChanged as changed:
        raise Refuse(str(changed)) from None


def body_statements(body: Node, source: bytes) -> str:
    """The body's text without its braces: the kernel's loop gives the block."""
    if body.type != "compound_statement" or len(body.children) < 2:
        return cs.text(body, source)
    start, end = body.children[0].end_byte, body.children[-1].start_byte
    return source[start:end].decode("utf-8", errors="surrogateescape").strip()


def first_statement(body: Node) -> Node:
    """The first statement of a loop body (the body itself when it has no braces)."""
    if body.type == "compound_statement" and len(body.children) > 2:
        return body.children[1]
    return body


def require_enough_work(loops: list[Loop]) -> None:
    """Refuse a nest whose trip counts, all known at compile time, come to fewer than
    MIN_ITERATIONS: the launch and the transfers would cost more than the loop."""
    total = 1
    for loop in loops:
        trips = _constant_trips(loop)
        if trips is None:
            return  # symbolic: the size is the caller's, assume it is worth it
        total *= trips
    if total < MIN_ITERATIONS:
        raise Refuse(f"it runs only {total} iterations: a kernel launch costs more")


def _constant_trips(loop: Loop) -> int | None:
    low, high = loop.lower_affine, loop.upper_affine
    if low is None or high is None or low.terms or high.terms or loop.step == 0:
        return None
    span = high.const - low.const if loop.step > 0 else low.const - high.const
    span += 1 if loop.upper_inclusive else 0
    stride = abs(loop.step)
    return max(0, (span + stride - 1) // stride)


def for_node(tree: Tree, loop: Loop) -> Node:
    node = cs.node_at(tree, loop.span.start, "for_statement")
    if node is None:
        raise Refuse(f"no `for` statement found at byte {loop.span.start} (stale analysis?)")
    return node


def require_no_jumps(nest: Node) -> None:
    """Refuse a nest that a `return` or `goto` leaves: a thread cannot leave the others' loop."""
    for node in cs.walk(nest):
        if node.type in ("return_statement", "goto_statement"):
            raise Refuse(f"line {cs.line_of(node)}: a {node.type.split('_')[0]} leaves the loop")


def kernel_arrays(
    function: Function, outer: Loop, nest: Node, tree: Tree, source: bytes
) -> tuple[ArrayData, ...]:
    """The arrays to copy: those the analysis lists for the outermost loop that the nest
    names, declared outside the nest."""
    named = {cs.text(n, source) for n in cs.identifiers_in(nest)}
    needed = []
    for data in function.arrays_for(outer):
        if IDENT.fullmatch(data.name) and data.name not in named:
            continue
        declared = cs.visible(tree, source, data.name, nest.start_byte)
        if declared is None and IDENT.fullmatch(data.name):
            continue  # declared inside the nest: a thread-local array
        if data.kind == "field" or not IDENT.fullmatch(data.name):
            raise Refuse(f"array '{data.name}' ({data.kind}) is not offloaded by the rule yet")
        if data.count is None:
            raise Refuse(f"the extent of array '{data.name}' is unknown")
        if "*" in data.elem_type:
            raise Refuse(f"array '{data.name}' holds pointers ({data.elem_type}) into host memory")
        needed.append(data)
    return tuple(needed)


def narrowed(data: ArrayData, nest: Loop) -> ArrayData:
    """The array's access mode in this nest: the outermost loop's may also count other
    nests' writes (an array only read here needs no copy back)."""
    accesses = [a for a in nest.accesses if a.array == data.name]
    if not accesses or any(a.is_write for a in accesses) == (data.access != "read"):
        return data
    written, read = any(a.is_write for a in accesses), any(a.is_read for a in accesses)
    mode = "readwrite" if written and read else ("write" if written else "read")
    return replace(data, access=mode)


def mapped_levels(
    loops: list[Loop], tree: Tree, source: bytes, taken: set[str]
) -> tuple[Level, ...]:
    dims = ("x", "y", "z")[: len(loops)][::-1]  # innermost level on x
    levels = []
    for loop, dim in zip(loops, dims, strict=True):
        var_type, outside = _loop_var_type(loop, tree, source)
        levels.append(
            Level(
                loop=loop,
                var_type=var_type,
                declared_outside=outside,
                dim=dim,
                index=fresh_name(f"t_{loop.var}", taken),
                trips=fresh_name(f"trips_{loop.var}", taken),
            )
        )
    return tuple(levels)


def _loop_var_type(loop: Loop, tree: Tree, source: bytes) -> tuple[str, bool]:
    """The loop variable's declared type, and whether it is declared outside the loop."""
    node = for_node(tree, loop)
    init = node.child_by_field_name("initializer")
    if init is not None and init.type == "declaration":
        return _type_or_lower(cs.base_type(init, source), loop), False
    declared = cs.visible(tree, source, loop.var, loop.span.start)
    if declared is None or declared.kind not in ("scalar", "reference"):
        raise Refuse(f"the declaration of loop variable '{loop.var}' was not found")
    return _type_or_lower(declared.base, loop), True


def _type_or_lower(base: str, loop: Loop) -> str:
    cleaned = QUALIFIERS.sub("", base).split()
    spelled = " ".join(cleaned)
    return f"decltype({loop.lower})" if spelled == "auto" else spelled


def node_key(node: Node | None) -> tuple[int, int]:
    """A node's identity that outlives its Python wrapper."""
    return (node.start_byte, node.end_byte) if node is not None else (-1, -1)


def host_only_parts(nest: Node, depth: int) -> list[Node]:
    """Identifiers in the conditions and updates of the mapped loops' headers."""
    found: list[Node] = []
    loop: Node | None = nest
    for _ in range(depth):
        if loop is None or loop.type != "for_statement":
            break
        for field in ("condition", "update"):
            part = loop.child_by_field_name(field)
            if part is not None:
                found.extend(cs.identifiers_in(part))
        loop = _single_statement(loop.child_by_field_name("body"))
    return found


def _single_statement(body: Node | None) -> Node | None:
    """The one statement of a loop body (through braces), or None."""
    while body is not None and body.type == "compound_statement":
        inner = [c for c in body.named_children if c.type != "comment"]
        body = inner[0] if len(inner) == 1 else None
    return body


def used_after(nest: Node, outer: Node, name: str, tree: Tree, source: bytes) -> bool:
    """Whether `name` is used after the nest runs: later in the function, or earlier in
    a loop around the nest (its next iteration)."""
    scope = nest
    while scope.parent is not None and scope.type != "function_definition":
        scope = scope.parent
    for ident in cs.identifiers_in(scope):
        if cs.text(ident, source) != name:
            continue
        after = ident.start_byte >= nest.end_byte
        around = outer.start_byte <= ident.start_byte < nest.start_byte
        if after or around:
            return True
    return False


def device_helpers(
    nest: Node, tree: Tree, source: bytes, program: Program, lambdas: tuple[Node, ...] = ()
) -> tuple[str, ...]:
    """The user functions the nest calls (transitively); each must be device-safe."""
    definitions = cs.function_nodes(tree, source)
    found: list[str] = []
    local = {std_device.lambda_declared(node, source) for node in lambdas} | cs.names_declared_in(
        nest, source
    )
    pending = [
        name
        for node in (nest, *lambdas)
        for name, call in cs.calls_in(node, source)
        if not _in_std(call, source)  # modelled by the analysis; std_device's job
    ]
    while pending:
        name = pending.pop(0)
        if name in found or name in MATH_FUNCTIONS or name in _CASTS or name in local:
            continue
        definition = definitions.get(name)
        if definition is None or name == "main":
            raise Refuse(f"it calls '{name}', which has no device version")
        _require_device_safe(name, definition, tree, source)
        found.append(name)
        pending.extend(callee for callee, _ in cs.calls_in(definition, source))
    return tuple(found)


def _in_std(call: Node, source: bytes) -> bool:
    function = call.child_by_field_name("function")
    return function is not None and re.match(r"(?:::)?std::", cs.text(function, source)) is not None


# C++ casts parse as calls of a template (`static_cast<T>(x)`); they compile on the device.
_CASTS = frozenset({"static_cast", "const_cast", "reinterpret_cast"})


def _require_device_safe(name: str, definition: Node, tree: Tree, source: bytes) -> None:
    body = definition.child_by_field_name("body")
    if body is None:
        raise Refuse(f"'{name}' has no body")
    for node in cs.walk(body):
        if node.type == "declaration" and "static" in cs.base_type(node, source).split():
            raise Refuse(f"'{name}' keeps static local state")
        if node.type == "storage_class_specifier" and cs.text(node, source) == "static":
            raise Refuse(f"'{name}' keeps static local state")
        if node.type != "identifier":
            continue
        declared = cs.visible(tree, source, cs.text(node, source), node.start_byte)
        if declared is not None and declared.scope == "global" and declared.kind != "function":
            what = cs.text(node, source)
            raise Refuse(f"'{name}' uses the global '{what}', which the device cannot see")


def require_no_array_sizeof(nest: Node, arrays: tuple[ArrayData, ...], source: bytes) -> None:
    """`sizeof(a)` of an array is its byte size on the host but a pointer's in the kernel."""
    names = {a.name for a in arrays}
    for node in cs.walk(nest):
        if node.type != "sizeof_expression":
            continue
        used = {cs.text(n, source) for n in cs.identifiers_in(node)}
        if used & names:
            raise Refuse(
                f"line {cs.line_of(node)}: sizeof of an array changes meaning on the device"
            )


def fresh_name(base: str, taken: set[str]) -> str:
    """`base`, or `base_2`, `base_3`... : a name no identifier of the program uses."""
    base = re.sub(r"\W", "_", base)
    name, count = base, 1
    while name in taken:
        count += 1
        name = f"{base}_{count}"
    taken.add(name)
    return name


def line_indent(source: bytes, offset: int) -> str:
    """The whitespace that starts the line holding `offset`."""
    line_start = source.rfind(b"\n", 0, offset) + 1
    prefix = source[line_start:offset].decode("utf-8", errors="surrogateescape")
    return prefix[: len(prefix) - len(prefix.lstrip())]


def where_kernels_go(tree: Tree, source: bytes, offset: int) -> int:
    """Where the kernels of the function defined at `offset` go: before the comment
    that documents the function, so the comment stays with it."""
    start = offset
    node = definition_node(tree, offset)
    previous = node.prev_sibling if node is not None else None
    while previous is not None and previous.type == "comment":
        between = source[previous.end_byte : start]
        if between.strip() or between.count(b"\n") > 1:
            break
        start = previous.start_byte
        previous = previous.prev_sibling
    line_start = source.rfind(b"\n", 0, start) + 1
    return line_start if not source[line_start:start].strip() else start


def array_param(data: ArrayData) -> str:
    """The kernel's parameter for an array: a pointer to its elements, or to its rows
    when it has fixed inner dimensions."""
    elem = element_type(data)
    if data.dims:
        return f"{elem} (*{data.name})" + "".join(f"[{d}]" for d in data.dims)
    return f"{elem} *{data.name}"


def element_type(data: ArrayData) -> str:
    """The array's element type without qualifiers."""
    return " ".join(QUALIFIERS.sub("", data.elem_type).split())


def grid_stride_header(level: Level, indent: str) -> list[str]:
    """The grid-stride loop of one mapped level and the declaration of the source loop's
    variable from the iteration number; the caller closes its brace."""
    d, t = level.dim, level.index
    loop = level.loop
    return [
        f"{indent}for (long long {t} = blockIdx.{d} * (long long)blockDim.{d} + threadIdx.{d}; "
        f"{t} < {level.trips};",
        f"{indent}     {t} += (long long)blockDim.{d} * gridDim.{d}) {{",
        f"{indent}    {level.var_type} {loop.var} = {value_at(level, t)};",
    ]


# a 1-D reduction's passes: each thread takes this many iterations a pass, their loads
# issued together (one load in flight per thread reads about half the copy bandwidth)
UNROLL = 4
_EXITS = re.compile(r"\b(?:break|return|goto)\b")


def unrollable(body: str) -> bool:
    """Whether a grid-stride loop's body can run UNROLL iterations a pass: nothing in it
    leaves the loop (`continue` only moves on to the next iteration, as before)."""
    return not _EXITS.search(body)


def unrolled_grid_stride(
    level: Level, indent: str, body_at: Callable[[str], list[str]]
) -> list[str]:
    """A grid-stride loop of one mapped level whose threads take UNROLL iterations a pass,
    each thread its own in the same order as one at a time (iterations i, i + grid, i + 2
    grid, ...: a reduction's per-thread order and so its rounding are unchanged). Where
    all UNROLL exist (every pass but a thread's last) they run in an unrolled loop with no
    bounds test, so the loads of the UNROLL iterations are independent and in flight
    together; the last pass tests each. `body_at(indent)`: the body's lines at that
    indent, which may read the source loop's variable; the loop is closed here."""
    d, t = level.dim, level.index
    base, copy = f"{t}_pass", "cudaify_u"
    grid = f"((long long)blockDim.{d} * gridDim.{d})"
    inner, innermost = indent + "        ", indent + "            "
    variable = f"{level.var_type} {level.loop.var} = {value_at(level, t)};"
    return [
        f"{indent}for (long long {base} = blockIdx.{d} * (long long)blockDim.{d} + "
        f"threadIdx.{d}; {base} < {level.trips};",
        f"{indent}     {base} += (long long)blockDim.{d} * gridDim.{d} * {UNROLL}) {{",
        f"{indent}    if ({base} + {UNROLL - 1} * {grid} < {level.trips}) {{",
        "#pragma unroll",
        f"{indent}        for (int {copy} = 0; {copy} < {UNROLL}; {copy}++) {{",
        f"{innermost}const long long {t} = {base} + {copy} * {grid};",
        f"{innermost}{variable}",
        *body_at(innermost),
        f"{inner}}}",
        f"{indent}    }} else {{",
        f"{indent}        for (int {copy} = 0; {copy} < {UNROLL}; {copy}++) {{",
        f"{innermost}const long long {t} = {base} + {copy} * {grid};",
        f"{innermost}if ({t} < {level.trips}) {{",
        f"{innermost}    {variable}",
        *body_at(innermost + "    "),
        f"{innermost}}}",
        f"{inner}}}",
        f"{indent}    }}",
        f"{indent}}}",
    ]


def grid_blocks(trips: list[str], threads: tuple[int, ...], most: list[str]) -> list[str]:
    """Each grid dimension's block count (x first) for levels of these trip counts and
    this block shape, at most `most` blocks along each: a thread per iteration while the
    whole grid stays within the runtime's CUDAIFY_GRID_THREADS, so along x the first
    2^22 iterations, along y and z the rows that fit beside the lower dimensions'
    threads (`cudaify_rows`); the grid-stride loops cover the rest."""
    blocks = []
    for position, (count, size, limit) in enumerate(zip(trips, threads, most, strict=True)):
        across = " * ".join(paren(lower) for lower in trips[:position]) or "1"
        count = f"cudaify_rows({count}, {across})"
        blocks.append(f"cudaify_blocks({count}, {size}, {limit})")
    return blocks


def value_at(level: Level, iteration: str) -> str:
    """The loop variable's value at an iteration number, in the variable's type."""
    loop = level.loop
    if loop.lower.strip() == "0" and loop.step == 1:
        return f"({level.var_type}){iteration}"
    step = f" * {loop.step}" if loop.step != 1 else ""
    return f"({level.var_type})({paren(loop.lower)} + {iteration}{step})"


def paren(expression: str) -> str:
    """`expression` in parentheses unless it is one name, member (`s.n`) or number."""
    expression = expression.strip()
    if re.fullmatch(r"[\w.]+", expression):
        return expression
    return f"({expression})"


def reindent(body: str, old: str, new: str) -> str:
    """`body` (whose later lines are indented from `old`) with those lines moved to `new`."""
    lines = body.split("\n")
    moved = [lines[0]]
    for line in lines[1:]:
        moved.append(new + line[len(old) :] if line.startswith(old) else new + line.lstrip())
    return "\n".join(moved)


def byte_size(data: ArrayData) -> str:
    """The C expression of the array's size in bytes."""
    return f"(size_t)({data.count}) * sizeof({element_type(data)})"


# The calls that allocate and free a call's device buffer: the runtime's
# (runtime_helpers.cuh) or CUDA's own, which a model's answer may write.
DEVICE_MALLOCS = frozenset({"cudaify_malloc", "cudaMalloc"})
DEVICE_FREES = frozenset({"cudaify_free", "cudaFree"})
DEVICE_ALLOCATIONS = DEVICE_MALLOCS | DEVICE_FREES


def device_malloc(device: str, size: str) -> str:
    """The statement that gives pointer `device` a buffer of `size` bytes for this call:
    from the runtime's stream-ordered pool (no driver call for a size the pool holds)."""
    return f"CUDAIFY_CHECK(cudaify_malloc((void **)&{device}, {size}));"


def device_free(device: str) -> str:
    """The statement that gives `device_malloc`'s buffer back to the pool, in stream order
    (no wait for the whole device, as cudaFree has)."""
    return f"CUDAIFY_CHECK(cudaify_free({device}));"


def host_address(data: ArrayData, writable: bool) -> str:
    """The host address of the array's first copied element."""
    if data.kind == "vector":  # the elements, not the std::vector object
        base = f"{data.name}.data()"
        return base if data.first.strip() == "0" else f"{base} + ({data.first})"
    if data.first.strip() == "0":
        return data.name
    elem = element_type(data)
    pointer = f"({'' if writable else 'const '}{elem} *){data.name}" if data.dims else data.name
    return f"{pointer} + ({data.first})"


def kernel_argument(data: ArrayData, device: str) -> str:
    """The launch's argument for an array: the device buffer, shifted so that the kernel
    indexes it as the host array, and cast to the array's row type when it has rows."""
    pointer = device if data.first.strip() == "0" else f"{device} - ({data.first})"
    if not data.dims:
        return pointer
    shape = "".join(f"[{d}]" for d in data.dims)
    return f"({element_type(data)} (*){shape})({pointer})"
