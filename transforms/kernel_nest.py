"""What the tiling methods (shared_tiling, register_tiling) share: reading back the
kernels offload emits, deciding which names a kernel never changes, finding the launches
of a kernel, and checking that every barrier is reached by all threads of a block.

offload's kernels have a fixed shape: one grid-stride loop per mapped dimension, each
body starting with the declaration of the source loop variable from the iteration number:

    for (long long t_i = blockIdx.y * (long long)blockDim.y + threadIdx.y; t_i < trips_i;
         t_i += (long long)blockDim.y * gridDim.y) {
        int i = (int)t_i;
        for (long long t_j = ... x ...) {
            int j = (int)t_j;
            <the body of the source nest>

The tiling rules recognise that shape (by syntax, so that methods which only touch the
body, like coalesce or readonly_cache, keep it recognisable) and refuse anything else."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from tree_sitter import Node, Tree

from cudaify.frontend.edits import Edit
from cudaify.transforms import csource as cs
from cudaify.transforms.kernel_codegen import fresh_name, line_indent, reindent

# Names of the CUDA built-ins that are the same for every thread of a block.
BLOCK_UNIFORM_BUILTINS = frozenset({"blockIdx", "blockDim", "gridDim"})
# barriers; the votes among them return the same value to every thread of the block
VOTES = frozenset({"__syncthreads_or", "__syncthreads_and", "__syncthreads_count"})
BARRIERS = VOTES | {"__syncthreads"}
THREAD_BUILTINS = frozenset({"threadIdx", "__syncthreads", "__shared__", "__syncwarp"})
# Nodes that may touch memory or change state: not allowed where a rule evaluates an
# expression at a point the source did not (a load staged early, an inactive thread).
EFFECTFUL = frozenset(
    {
        "call_expression",
        "subscript_expression",
        "pointer_expression",
        "field_expression",
        "assignment_expression",
        "update_expression",
        "comma_expression",
        "lambda_expression",
        "new_expression",
        "delete_expression",
        "compound_literal_expression",
        "gnu_asm_expression",
        "initializer_list",
    }
)
JUMPS = frozenset({"return_statement", "goto_statement", "labeled_statement"})
BREAKABLE = cs.LOOP_TYPES  # the statements a `continue` (and, with switch, a `break`) leaves

_COMPACT = re.compile(r"\s+")
_INIT = re.compile(r"longlong(\w+)=blockIdx\.([xyz])\*\(longlong\)blockDim\.\2\+threadIdx\.\2")
_UPDATE = r"{t}\+=\(longlong\)blockDim\.{d}\*gridDim\.{d}"


class Refuse(Exception):
    """Why a kernel cannot be rewritten (becomes an Outcome reason)."""


@dataclass(frozen=True)
class Mapped:
    """One grid-stride loop of an offload kernel."""

    node: Node  # the for statement
    dim: str  # x | y | z
    counter: str  # the iteration number, `t_i`
    trips: str  # the kernel parameter holding the trip count, `trips_i`
    declaration: Node  # `int i = (int)t_i;`, the body's first statement
    var: str  # `i`
    statements: tuple[Node, ...]  # the body's statements after the declaration


@dataclass(frozen=True)
class Kernel:
    """A `__global__` function with offload's shape: x alone, or y outside and x inside."""

    name: str
    definition: Node
    body: Node  # the function body's compound statement
    params: tuple[str, ...]  # parameter names, in order
    rows: Mapped | None  # the y level (None in a 1-D kernel)
    cols: Mapped  # the x level
    tree: Tree
    source: bytes

    @property
    def levels(self) -> tuple[Mapped, ...]:
        """The mapped levels, outermost first."""
        return (self.rows, self.cols) if self.rows is not None else (self.cols,)


def compact(text: str) -> str:
    return _COMPACT.sub("", text)


def statements_of(block: Node) -> list[Node]:
    """The statements of a compound statement (or the single statement), comments left out."""
    if block.type != "compound_statement":
        return [block]
    return [c for c in block.named_children if c.type != "comment"]


def kernels(tree: Tree, source: bytes) -> list[Node]:
    return [
        n
        for n in tree.root_node.children
        if n.type == "function_definition" and any(c.type == "__global__" for c in n.children)
    ]


@dataclass(frozen=True)
class OffloadKernels:
    """A variant's text parsed, its __global__ definitions and the names it uses."""

    source: bytes
    tree: Tree
    definitions: list[Node]
    taken: set[str]


def offload_kernels(code: str) -> OffloadKernels:
    """The kernels a method that rewrites offload's kernels works on, or Refuse when the
    variant has none or lacks offload's runtime prelude (the tiling methods' common start)."""
    source = code.encode("utf-8", errors="surrogateescape")
    tree = cs.parse(source)
    definitions = kernels(tree, source)
    if not definitions:
        raise Refuse("the variant has no kernel (run offload first)")
    if "cudaify_blocks" not in cs.function_nodes(tree, source):
        raise Refuse("the variant has no cudaify_blocks helper (offload's runtime prelude)")
    return OffloadKernels(source, tree, definitions, taken_names(tree, source))


def read_kernel(definition: Node, tree: Tree, source: bytes) -> Kernel:
    """The 1-D or 2-D offload kernel `definition`, or Refuse saying why it is not one."""
    name = cs.function_name(definition, source) or "?"
    body = definition.child_by_field_name("body")
    if body is None:
        raise Refuse(f"kernel '{name}' has no body")
    top = statements_of(body)
    if len(top) != 1 or top[0].type != "for_statement":
        raise Refuse(f"kernel '{name}' is not a single grid-stride loop nest")
    outer = _mapped(top[0], source)
    if outer is None:
        raise Refuse(f"kernel '{name}' does not start with offload's grid-stride loop")
    rows: Mapped | None = None
    cols = outer
    if outer.dim != "x":
        inner = outer.statements[0] if len(outer.statements) == 1 else None
        cols_level = (
            _mapped(inner, source) if inner is not None and inner.type == "for_statement" else None
        )
        if cols_level is None or outer.dim != "y" or cols_level.dim != "x":
            raise Refuse(f"kernel '{name}' is not a 1-D (x) or 2-D (y, x) grid-stride nest")
        rows, cols = outer, cols_level
    params = tuple(_param_name(p, source) for p in cs.parameter_nodes(definition))
    for level in (rows, cols):
        if level is not None and level.trips not in params:
            raise Refuse(f"kernel '{name}': the bound of '{level.counter}' is not a parameter")
    return Kernel(name, definition, body, params, rows, cols, tree, source)


def _param_name(param: Node, source: bytes) -> str:
    names = (
        cs.declared_names(param, source, "param") if param.type == "parameter_declaration" else []
    )
    return names[0].name if names else ""


def _mapped(loop: Node, source: bytes) -> Mapped | None:
    init = loop.child_by_field_name("initializer")
    condition = loop.child_by_field_name("condition")
    update = loop.child_by_field_name("update")
    body = loop.child_by_field_name("body")
    if init is None or condition is None or update is None or body is None:
        return None
    match = _INIT.fullmatch(compact(cs.text(init, source)).rstrip(";"))
    if match is None:
        return None
    counter, dim = match.group(1), match.group(2)
    bound = re.fullmatch(rf"{counter}<(\w+)", compact(cs.text(condition, source)))
    step = _UPDATE.format(t=counter, d=dim)
    if bound is None or not re.fullmatch(step, compact(cs.text(update, source))):
        return None
    statements = statements_of(body)
    if body.type != "compound_statement" or not statements:
        return None
    declaration = statements[0]
    declared = declared_variable(declaration, source)
    if declared is None:
        return None
    return Mapped(loop, dim, counter, bound.group(1), declaration, declared, tuple(statements[1:]))


def declared_variable(node: Node, source: bytes) -> str | None:
    """The one variable a declaration with an initializer declares, else None."""
    if node.type != "declaration":
        return None
    declarators = [
        c for i, c in enumerate(node.children) if node.field_name_for_child(i) == "declarator"
    ]
    if len(declarators) != 1 or declarators[0].type != "init_declarator":
        return None
    inner = declarators[0].child_by_field_name("declarator")
    return cs.text(inner, source) if inner is not None and inner.type == "identifier" else None


def initializer(node: Node) -> Node | None:
    for index, child in enumerate(node.children):
        if node.field_name_for_child(index) == "declarator" and child.type == "init_declarator":
            return child.child_by_field_name("value")
    return None


# ---- names the kernel never changes ----------------------------------------------------


def written_names(kernel: Kernel) -> set[str]:
    return cs.names_written(kernel.body, kernel.source)


def is_invariant(ident: Node, kernel: Kernel, written: set[str]) -> bool:
    """Whether identifier `ident` (in the kernel) has the same value everywhere in it:
    a parameter, global or macro the kernel never assigns."""
    name = cs.text(ident, kernel.source)
    if name in written or name in THREAD_BUILTINS:
        return False
    declared = cs.visible(kernel.tree, kernel.source, name, ident.start_byte)
    if declared is None:
        return True  # a macro, an enumerator or a built-in constant
    return declared.scope in ("param", "global") and declared.kind != "function"


def effect_free(node: Node) -> bool:
    """No memory access, call or assignment anywhere in the expression."""
    return not any(n.type in EFFECTFUL for n in cs.walk(node))


# ---- control flow ---------------------------------------------------------------------


def require_no_jumps(statements: list[Node], source: bytes, what: str) -> None:
    """No return/goto/label anywhere, and every break/continue stays inside the statement."""
    for statement in statements:
        for node in cs.walk(statement):
            if node.type in JUMPS:
                raise Refuse(f"line {cs.line_of(node)}: {what} has a '{node.type.split('_')[0]}'")
            if node.type in ("break_statement", "continue_statement"):
                target = _jump_target(node)
                if target is None or not _inside(target, statement):
                    raise Refuse(f"line {cs.line_of(node)}: {what} leaves its loop early")


def _jump_target(node: Node) -> Node | None:
    targets = BREAKABLE | ({"switch_statement"} if node.type == "break_statement" else set())
    current = node.parent
    while current is not None and current.type not in targets:
        current = current.parent
    return current


def _inside(node: Node, outer: Node) -> bool:
    return outer.start_byte <= node.start_byte and node.end_byte <= outer.end_byte


def uses_block_features(node: Node, source: bytes) -> Node | None:
    """A use of threadIdx, a barrier or shared memory under `node`, if any."""
    for n in cs.walk(node):
        if n.type in ("identifier", "__shared__") and cs.text(n, source) in THREAD_BUILTINS:
            return n
        if n.type == "__shared__":
            return n
    return None


# ---- launches -------------------------------------------------------------------------


@dataclass(frozen=True)
class Launch:
    call: Node
    configuration: Node  # the <<<...>>> node
    arguments: tuple[Node, ...]


def launches(tree: Tree, source: bytes, kernel: str) -> list[Launch]:
    found = []
    for node in cs.walk(tree.root_node):
        if node.type != "call_expression":
            continue
        function = node.child_by_field_name("function")
        config = next((c for c in node.children if c.type == "kernel_call_syntax"), None)
        if function is None or config is None or cs.text(function, source) != kernel:
            continue
        arguments = node.child_by_field_name("arguments")
        args = (
            tuple(c for c in arguments.named_children if c.type != "comment") if arguments else ()
        )
        found.append(Launch(node, config, args))
    return found


def launch_argument(launch: Launch, kernel: Kernel, param: str, source: bytes) -> Node:
    """The argument passed for `param`, which the rule may evaluate again."""
    position = kernel.params.index(param)
    if position >= len(launch.arguments):
        raise Refuse(f"a launch of '{kernel.name}' passes too few arguments")
    argument = launch.arguments[position]
    if not effect_free(argument):
        raise Refuse(f"line {cs.line_of(argument)}: the launch's '{param}' argument has effects")
    return argument


def resize_launch(
    launch: Launch,
    tree: Tree,
    source: bytes,
    shape: tuple[str, str],
    reads: tuple[Node, ...],
    reason: str,
) -> list[Edit]:
    """Edits that launch with `grid` and `block` (dim3 constructor arguments). When the
    launch names `const dim3` locals that nothing else uses (offload's `grid`, `block`),
    their declarations change, so that no unused variable is left; else the <<<...>>>.
    `reads` are the launch arguments the new shape reads: moving them up to the
    declarations needs them to be constants declared before."""
    grid, block = shape
    parts = [c for c in launch.configuration.named_children if c.type != "comment"]
    declarations = [_private_dim3(p, launch, tree, source) for p in parts[:2]]
    if (
        len(parts) >= 2
        and all(d is not None for d in declarations)
        and all(
            _constant_before(r, min(d.start_byte for d in declarations if d), tree, source)
            for r in reads
        )
    ):
        edits = []
        for declaration, arguments in zip(declarations, (grid, block), strict=True):
            assert declaration is not None
            name = cs.text(parts[declarations.index(declaration)], source)
            base = cs.base_type(declaration, source)
            text = f"{base} {name}({arguments});"
            edits.append(Edit(declaration.start_byte, declaration.end_byte, text, reason))
        return edits
    config = [f"dim3({grid})", f"dim3({block})", *[cs.text(p, source) for p in parts[2:]]]
    text = f"<<<{', '.join(config)}>>>"
    return [Edit(launch.configuration.start_byte, launch.configuration.end_byte, text, reason)]


def launch_bounds_edits(definition: Node, threads: int) -> list[Edit]:
    """`__launch_bounds__(threads)` on a kernel's definition: its bounds replaced, or put
    before its declarator, so that the compiler budgets registers for that block size."""
    text = f"__launch_bounds__({threads})"
    bounds = next((c for c in definition.children if c.type == "launch_bounds"), None)
    if bounds is not None:
        return [Edit(bounds.start_byte, bounds.end_byte, text, "launch bounds")]
    declarator = definition.child_by_field_name("declarator")
    if declarator is None:
        return []
    at = declarator.start_byte
    return [Edit(at, at, f"{text} ", "launch bounds")]


def _constant_before(node: Node, at: int, tree: Tree, source: bytes) -> bool:
    for ident in cs.identifiers_in(node):
        declared = cs.visible(tree, source, cs.text(ident, source), ident.start_byte)
        if declared is None:
            continue  # a macro
        if "const" not in declared.base.split() or declared.start >= at:
            return False
    return True


def _private_dim3(part: Node, launch: Launch, tree: Tree, source: bytes) -> Node | None:
    """The `const dim3 NAME(...);` declaration of a configuration argument used by this
    launch only, else None."""
    if part.type != "identifier":
        return None
    name = cs.text(part, source)
    declared = cs.visible(tree, source, name, part.start_byte)
    if declared is None or declared.scope != "local" or "dim3" not in declared.base.split():
        return None
    node = cs.node_at(tree, declared.start, "declaration")
    if node is None or len(cs.declared_names(node, source, "local")) != 1:
        return None
    scope = node.parent
    if scope is None:
        return None
    uses = [i for i in cs.identifiers_in(scope) if cs.text(i, source) == name]
    return node if len(uses) == 2 else None  # the declaration and this launch


def extra_configuration(launch: Launch, source: bytes) -> list[str]:
    """Dynamic shared memory and stream of a launch, kept when the rule resizes it."""
    parts = [c for c in launch.configuration.named_children if c.type != "comment"]
    return [cs.text(p, source) for p in parts[2:]]


# ---- emitting helpers -----------------------------------------------------------------


def fresh(base: str, taken: set[str]) -> str:
    return fresh_name(base, taken)


def taken_names(tree: Tree, source: bytes) -> set[str]:
    return {cs.text(n, source) for n in cs.walk(tree.root_node) if n.type.endswith("identifier")}


def moved(node: Node, source: bytes, indent: str) -> str:
    """The text of a statement re-indented to `indent` (its first line unindented)."""
    old = line_indent(source, node.start_byte)
    return reindent(cs.text(node, source), old, indent)


def evaluate(node: Node, source: bytes, values: dict[str, int]) -> int | None:
    """The integer value of a simple arithmetic expression, or None when it is not one
    (used only to pick a tile's layout: a wrong guess costs speed, never correctness)."""
    return evaluate_with(node, source, lambda name: values.get(cs.text(name, source)))


def _quotient(a: int, b: int) -> int:
    """C's integer division: toward zero, exact for any size (no float on the way)."""
    quotient = abs(a) // abs(b)
    return quotient if (a < 0) == (b < 0) else -quotient


_OPERATORS = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: _quotient(a, b) if b else None,
    "%": lambda a, b: a - b * _quotient(a, b) if b else None,
    "<<": lambda a, b: a << b if 0 <= b < 64 else None,
    ">>": lambda a, b: a >> b if 0 <= b < 64 else None,
    "&&": lambda a, b: int(bool(a and b)),
    "||": lambda a, b: int(bool(a or b)),
    "==": lambda a, b: int(a == b),
    "!=": lambda a, b: int(a != b),
    "<": lambda a, b: int(a < b),
    "<=": lambda a, b: int(a <= b),
    ">": lambda a, b: int(a > b),
    ">=": lambda a, b: int(a >= b),
}


def evaluate_with(
    node: Node,
    source: bytes,
    lookup: Callable[[Node], int | None],
    call: Callable[[Node], int | None] | None = None,
) -> int | None:
    """The integer value of an integer expression: literals, C's arithmetic, shift,
    comparison, logical and conditional operators, casts; each identifier (and
    `defined(X)`'s X) read through `lookup`, each call through `call` (None: unknown)."""

    def value(inner: Node | None) -> int | None:
        return evaluate_with(inner, source, lookup, call) if inner is not None else None

    kind = node.type
    if kind == "number_literal":
        digits = re.sub(r"[uUlL]+$", "", cs.text(node, source))
        try:
            return int(digits, 0)
        except ValueError:
            return None
    if kind == "identifier":
        return lookup(node)
    if kind == "preproc_defined":
        return value(next((c for c in node.named_children if c.type == "identifier"), None))
    if kind == "parenthesized_expression":
        return value(node.named_children[-1] if node.named_children else None)
    if kind == "cast_expression":
        return value(node.child_by_field_name("value"))
    if kind == "call_expression":
        return call(node) if call is not None else None
    if kind == "unary_expression":
        inner = value(node.child_by_field_name("argument"))
        operator = node.child_by_field_name("operator")
        if inner is None or operator is None:
            return None
        return {"-": -inner, "+": inner, "!": int(not inner)}.get(cs.text(operator, source))
    if kind == "binary_expression":
        operator = cs.text(node.child_by_field_name("operator") or node, source)
        a, b = value(node.child_by_field_name("left")), value(node.child_by_field_name("right"))
        if a is None or b is None or operator not in _OPERATORS:
            return None
        return _OPERATORS[operator](a, b)
    if kind == "conditional_expression":
        holds = value(node.child_by_field_name("condition"))
        if holds is None:
            return None
        return value(node.child_by_field_name("consequence" if holds else "alternative"))
    return None


# ---- barriers -------------------------------------------------------------------------

_DIVERGENT = frozenset(
    {
        "if_statement",
        "while_statement",
        "do_statement",
        "switch_statement",
        "conditional_expression",
        "for_range_loop",
    }
)


def divergent_barriers(code: str) -> list[tuple[int, str]]:
    """(line, why) for every barrier (__syncthreads() and its votes) in a kernel that some
    threads of a block may not reach: one under an if/while/switch, or in a for loop whose
    header reads a value that differs between the threads of a block (threadIdx, a
    non-const local)."""
    source = code.encode("utf-8", errors="surrogateescape")
    tree = cs.parse(source)
    found = []
    for definition in kernels(tree, source):
        written = cs.names_written(definition, source)
        for node in cs.walk(definition):
            name = cs.call_name(node, source) if node.type == "call_expression" else None
            if name not in BARRIERS:
                continue
            why = _divergence(node, definition, tree, source, written)
            if why:
                found.append((cs.line_of(node), f"{name}() {why}"))
    return found


def _divergence(
    barrier: Node, definition: Node, tree: Tree, source: bytes, written: set[str]
) -> str:
    current = barrier.parent
    while current is not None and current != definition:
        if current.type == "if_statement" and _uniform_condition(current, tree, source, written):
            current = current.parent  # every thread of the block takes the same branch
            continue
        if current.type in _DIVERGENT:
            return f"inside a {current.type.replace('_', ' ')}"
        if current.type == "binary_expression" and cs.text(
            current.child_by_field_name("operator"), source
        ) in ("&&", "||"):
            return "inside a short-circuit expression"
        if current.type == "for_statement" and not _uniform_header(
            current, tree, source, written, set()
        ):
            return "inside a loop whose trip count differs between threads"
        current = current.parent
    return ""


def _uniform_condition(branch: Node, tree: Tree, source: bytes, written: set[str]) -> bool:
    """An if whose condition has the same value in every thread of a block: it reads only
    blockIdx, blockDim, gridDim, parameters the kernel never writes, macros and const
    locals computed from those (no call, no memory; `__builtin_expect(c, v)` is c, a hint)."""
    condition = branch.child_by_field_name("condition")
    if condition is None or any(
        n.type
        in ("call_expression", "subscript_expression", "pointer_expression", "field_expression")
        and not _builtin_field(n, source)
        and not _expectation(n, source)
        for n in cs.walk(condition)
    ):
        return False
    hints = {
        (function.start_byte, function.end_byte)
        for n in cs.walk(condition)
        if _expectation(n, source) and (function := n.child_by_field_name("function")) is not None
    }
    return all(
        _uniform_name(ident, tree, source, written, set())
        for ident in cs.identifiers_in(condition)
        if (ident.start_byte, ident.end_byte) not in hints
    )


def _expectation(node: Node, source: bytes) -> bool:
    """`__builtin_expect(c, v)`: the value of c, with a hint for the compiler."""
    return node.type == "call_expression" and cs.call_name(node, source) == "__builtin_expect"


def _builtin_field(node: Node, source: bytes) -> bool:
    """`gridDim.x`: a field of a block-uniform builtin, not memory."""
    if node.type != "field_expression":
        return False
    argument = node.child_by_field_name("argument")
    return argument is not None and cs.text(argument, source) in BLOCK_UNIFORM_BUILTINS


def _uniform_header(
    loop: Node, tree: Tree, source: bytes, written: set[str], seen: set[tuple[int, int]]
) -> bool:
    key = (loop.start_byte, loop.end_byte)
    if key in seen:
        return True  # the loop's own variable, assumed uniform while checking its header
    seen = seen | {key}
    own = _header_names(loop, source)
    for field in ("initializer", "condition", "update"):
        part = loop.child_by_field_name(field)
        if part is None:
            continue
        for ident in cs.identifiers_in(part):
            if cs.text(ident, source) in own:
                continue
            if not _uniform_name(ident, tree, source, written, seen):
                return False
    return True


def _header_names(loop: Node, source: bytes) -> set[str]:
    init = loop.child_by_field_name("initializer")
    if init is None or init.type != "declaration":
        return set()
    return {d.name for d in cs.declared_names(init, source, "header")}


def _uniform_name(
    ident: Node, tree: Tree, source: bytes, written: set[str], seen: set[tuple[int, int]]
) -> bool:
    name = cs.text(ident, source)
    if name in BLOCK_UNIFORM_BUILTINS:
        return True
    if name in THREAD_BUILTINS:
        return False
    declared = cs.visible(tree, source, name, ident.start_byte)
    if declared is None:
        return True  # macros and enumerators
    if declared.scope in ("param", "global"):
        return name not in written
    node = tree.root_node.descendant_for_byte_range(declared.start, declared.start)
    while node is not None and node.type != "declaration":
        node = node.parent
    if node is None:
        return False
    if declared.scope == "header":
        loop = node.parent
        return loop is not None and _uniform_header(loop, tree, source, written, seen)
    # a const local computed from uniform values only, or a block's vote
    if "const" not in declared.base.split():
        return False
    value = initializer(node)
    if value is not None and value.type == "call_expression":
        return cs.call_name(value, source) in VOTES
    return value is not None and all(
        _uniform_name(i, tree, source, written, seen) for i in cs.identifiers_in(value)
    )


# ---- polynomials over names -----------------------------------------------------------

Poly = dict[tuple[str, ...], int]  # sorted names of a monomial -> integer coefficient


def polynomial(node: Node, source: bytes) -> Poly | None:
    """The expression as a polynomial with integer coefficients over its names, or None
    when it is not one (division, calls, memory). Casts count as the value they cast:
    callers use this to compare index expressions, whose values fit their types."""
    kind = node.type
    if kind == "number_literal":
        digits = re.sub(r"[uUlL]+$", "", cs.text(node, source))
        try:
            value = int(digits, 0)
        except ValueError:
            return None
        return {(): value} if value else {}
    if kind == "identifier":
        return {(cs.text(node, source),): 1}
    if kind == "parenthesized_expression" and len(node.named_children) == 1:
        return polynomial(node.named_children[0], source)
    if kind == "cast_expression":
        cast = node.child_by_field_name("value")
        return polynomial(cast, source) if cast is not None else None
    if kind == "unary_expression":
        argument = node.child_by_field_name("argument")
        operator = node.child_by_field_name("operator")
        inner = polynomial(argument, source) if argument is not None else None
        if inner is None or operator is None or cs.text(operator, source) not in "+-":
            return None
        return inner if cs.text(operator, source) == "+" else scaled(inner, -1)
    if kind == "binary_expression":
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        operator = node.child_by_field_name("operator")
        if left is None or right is None or operator is None:
            return None
        a, b = polynomial(left, source), polynomial(right, source)
        if a is None or b is None:
            return None
        op = cs.text(operator, source)
        if op == "+":
            return added(a, b)
        if op == "-":
            return added(a, scaled(b, -1))
        if op == "*":
            return multiplied(a, b)
    return None


def added(a: Poly, b: Poly) -> Poly:
    total = dict(a)
    for monomial, coeff in b.items():
        total[monomial] = total.get(monomial, 0) + coeff
    return {m: c for m, c in total.items() if c}


def scaled(a: Poly, factor: int) -> Poly:
    return {m: c * factor for m, c in a.items() if c * factor}


def multiplied(a: Poly, b: Poly) -> Poly:
    product: Poly = {}
    for ma, ca in a.items():
        for mb, cb in b.items():
            monomial = tuple(sorted(ma + mb))
            product[monomial] = product.get(monomial, 0) + ca * cb
    return {m: c for m, c in product.items() if c}


def derivative(a: Poly, name: str) -> Poly | None:
    """d a / d name when `a` is at most linear in `name`, else None."""
    result: Poly = {}
    for monomial, coeff in a.items():
        count = monomial.count(name)
        if count > 1:
            return None
        if count == 1:
            rest = list(monomial)
            rest.remove(name)
            key = tuple(rest)
            result[key] = result.get(key, 0) + coeff
    return {m: c for m, c in result.items() if c}
