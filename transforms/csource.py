"""Syntax helpers over tree-sitter-cuda for the passes: byte-exact nodes, declarations
visible at a point, identifiers and calls inside a range.

libclang gives the frontend its semantics; the passes need something else: the exact text
of a declaration's type, the scope a name resolves in, and a parser that also reads the
CUDA they emit (`__global__`, `<<<...>>>`). tree-sitter-cuda reads both the C++-compatible
host text and the candidates, so one parser serves the rules and the structural check."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass

import tree_sitter_cuda
from tree_sitter import Language, Node, Parser, Tree

LANGUAGE = Language(tree_sitter_cuda.language())

# Storage classes and execution spaces describe the object, not its type: a kernel
# parameter or a thread-local copy takes the type without them.
_NOT_TYPE = {
    "storage_class_specifier",
    "attribute_specifier",
    "attribute_declaration",
    "ms_declspec_modifier",
    "__global__",
    "__device__",
    "__host__",
    "__shared__",
    "__constant__",
    "virtual",
    "explicit_function_specifier",
}


@functools.lru_cache(maxsize=1)
def _parser() -> Parser:
    return Parser(LANGUAGE)


@functools.lru_cache(maxsize=16)
def parse(code: bytes) -> Tree:
    """The syntax tree of `code` (cached: the passes parse the same source many times)."""
    return _parser().parse(code)


def text(node: Node, source: bytes) -> str:
    return source[node.start_byte : node.end_byte].decode("utf-8", errors="surrogateescape")


# Expressions that change state when evaluated (memory reads are not among them).
SIDE_EFFECTS = frozenset(
    {"call_expression", "update_expression", "assignment_expression", "comma_expression"}
)


def has_side_effects(node: Node | None) -> bool:
    """Whether evaluating `node` may call, assign or increment anything."""
    return node is not None and any(n.type in SIDE_EFFECTS for n in walk(node))


def walk(node: Node) -> Iterator[Node]:
    """Every node under `node` (itself included), in source order."""
    return iter(_subtree(node))


@functools.lru_cache(maxsize=512)
def _subtree(node: Node) -> tuple[Node, ...]:
    # The passes walk the same (cached) trees over and over: a search's rules, structural
    # checks and cost model made 2.9 million node visits for one PolyBench program, a
    # third of its Python time, each visit building its children's Node objects anew.
    # A node is equal only to the same node of the same tree, and keeps its tree alive.
    found = []
    stack = [node]
    while stack:
        current = stack.pop()
        found.append(current)
        stack.extend(reversed(current.children))
    return tuple(found)


def line_of(node: Node) -> int:
    return node.start_point.row + 1


def problem_nodes(tree: Tree) -> list[Node]:
    """ERROR and MISSING nodes: places the parser could not read as C/C++/CUDA."""
    if not tree.root_node.has_error:
        return []
    return [n for n in walk(tree.root_node) if n.is_error or n.is_missing]


@dataclass(frozen=True)
class Declared:
    """One declared name. `kind`: scalar | pointer | array | function | reference.
    `base` is the type without storage class (`const double`, `struct point`, `size_t`)."""

    name: str
    kind: str
    base: str
    start: int  # byte offset of the whole declaration
    scope: str  # "local" | "param" | "global" | "header"


def declarator_kind(node: Node) -> tuple[str, Node | None]:
    """The kind of a declarator and its identifier node."""
    kind = "scalar"
    current: Node | None = node
    while current is not None:
        if current.type in ("identifier", "field_identifier"):
            return kind, current
        if current.type == "function_declarator":
            kind = "function"
        elif current.type == "pointer_declarator" and kind == "scalar":
            kind = "pointer"
        elif current.type == "array_declarator" and kind == "scalar":
            kind = "array"
        elif current.type == "reference_declarator" and kind == "scalar":
            kind = "reference"
        inner = current.child_by_field_name("declarator")
        if inner is None:
            inner = next(
                (
                    c
                    for c in current.named_children
                    if "declarator" in c.type or c.type == "identifier"
                ),
                None,
            )
        current = inner
    return kind, None


def _pointer_to_array_declaration(statement: Node, source: bytes) -> list[Declared]:
    """`double (*B)[N][N];` (PolyBench's way to declare a heap array) read by the C++
    grammar as a cast expression: the pointer it declares, as the declaration would."""
    node = statement.named_children[0] if statement.named_children else None
    if node is not None and node.type == "assignment_expression":
        node = node.child_by_field_name("left")
    if node is None or node.type != "subscript_expression":
        return []
    while node is not None and node.type == "subscript_expression":
        node = node.child_by_field_name("argument")
    if node is None or node.type != "call_expression":
        return []
    function = node.child_by_field_name("function")
    arguments = node.child_by_field_name("arguments")
    if function is None or arguments is None:
        return []
    if function.type not in ("primitive_type", "sized_type_specifier", "type_identifier"):
        return []
    inner = arguments.named_children
    if len(inner) != 1 or inner[0].type != "pointer_expression":
        return []
    name = inner[0].child_by_field_name("argument")
    if name is None or name.type != "identifier":
        return []
    return [
        Declared(
            text(name, source), "pointer", text(function, source), statement.start_byte, "local"
        )
    ]


def base_type(declaration: Node, source: bytes) -> str:
    """The declaration's specifiers and qualifiers, spelled as in the source."""
    parts: list[str] = []
    for index, child in enumerate(declaration.children):
        if declaration.field_name_for_child(index) == "declarator":
            break
        if child.type in _NOT_TYPE or child.type in (",", ";"):
            continue
        parts.append(text(child, source))
    return " ".join(parts)


def declared_names(declaration: Node, source: bytes, scope: str) -> list[Declared]:
    """Every name a declaration (or parameter declaration) introduces."""
    base = base_type(declaration, source)
    found: list[Declared] = []
    for index, child in enumerate(declaration.children):
        if declaration.field_name_for_child(index) != "declarator":
            continue
        kind, ident = declarator_kind(child)
        if ident is not None:
            found.append(Declared(text(ident, source), kind, base, declaration.start_byte, scope))
    return found


def _scope_declarations(scope: Node, at: int, source: bytes) -> list[Declared]:
    """Declarations of one scope that come before byte `at`, in order."""
    return [d for end, d in _declarations_in(scope, source) if end <= at]


@functools.lru_cache(maxsize=1024)
def _declarations_in(scope: Node, source: bytes) -> tuple[tuple[int, Declared], ...]:
    """Every declaration of one scope, in order, with the byte where the statement that
    makes it ends (-1: a parameter, visible throughout). Cached: `visible` asks the same
    scopes for every name it resolves (23,000 times in one search)."""
    if scope.type == "translation_unit":
        return tuple(
            (child.end_byte, d)
            for child in scope.children
            if child.type == "declaration"
            for d in declared_names(child, source, "global")
        )
    if scope.type == "compound_statement":
        found: list[tuple[int, Declared]] = []
        for child in scope.children:
            if child.type == "declaration":
                found += [(child.end_byte, d) for d in declared_names(child, source, "local")]
            elif child.type == "expression_statement":
                found += [(child.end_byte, d) for d in _pointer_to_array_declaration(child, source)]
        return tuple(found)
    if scope.type == "for_statement":
        init = scope.child_by_field_name("initializer")
        if init is not None and init.type == "declaration":
            return tuple((init.end_byte, d) for d in declared_names(init, source, "header"))
        return ()
    if scope.type in ("function_definition", "lambda_expression"):
        declarator = scope.child_by_field_name("declarator")
        params = find_child(declarator, "parameter_list")
        if params is None:
            return ()
        return tuple(
            (-1, d)
            for child in params.named_children
            if child.type == "parameter_declaration"
            for d in declared_names(child, source, "param")
        )
    return ()


def find_child(node: Node | None, kind: str) -> Node | None:
    """The first node of type `kind` under `node` (itself included), breadth first."""
    if node is None:
        return None
    queue = [node]
    while queue:
        current = queue.pop(0)
        if current.type == kind:
            return current
        queue.extend(current.children)
    return None


def visible(tree: Tree, source: bytes, name: str, at: int) -> Declared | None:
    """The declaration `name` resolves to at byte `at`, innermost scope first."""
    node: Node | None = tree.root_node.descendant_for_byte_range(at, at)
    while node is not None:
        matches = [d for d in _scope_declarations(node, at, source) if d.name == name]
        if matches:
            return matches[-1]
        node = node.parent
    return None


LOOP_TYPES = frozenset({"for_statement", "while_statement", "do_statement", "for_range_loop"})


def enclosing_function(node: Node) -> Node | None:
    """The function definition `node` lies in (itself if it is one)."""
    current: Node | None = node
    while current is not None and current.type != "function_definition":
        current = current.parent
    return current


def function_nodes(tree: Tree, source: bytes) -> dict[str, Node]:
    """Top-level function definitions by name (the last one wins)."""
    found: dict[str, Node] = {}
    for child in tree.root_node.children:
        definition = unwrap_template(child)
        if definition is None or definition.type != "function_definition":
            continue
        name = function_name(definition, source)
        if name:
            found[name] = definition
    return found


def all_function_nodes(tree: Tree, source: bytes) -> dict[str, list[Node]]:
    """Every function definition by name, class members and namespaces included
    (overloads and members of several classes share a name)."""
    return {name: list(nodes) for name, nodes in _all_function_nodes(tree, source).items()}


@functools.lru_cache(maxsize=64)  # asked of the same tree by many passes
def _all_function_nodes(tree: Tree, source: bytes) -> dict[str, tuple[Node, ...]]:
    found: dict[str, list[Node]] = {}
    for node in walk(tree.root_node):
        if node.type != "function_definition":
            continue
        name = function_name(node, source)
        if name:
            found.setdefault(name, []).append(node)
    return {name: tuple(nodes) for name, nodes in found.items()}


def unwrap_template(node: Node) -> Node | None:
    """The definition a top-level item holds: a template's function, the body of an
    `extern "C" { ... }`, or the item itself."""
    if node.type == "template_declaration":
        return next((c for c in node.named_children if c.type == "function_definition"), None)
    if node.type == "linkage_specification":  # extern "C" { ... } keeps one level
        return node.child_by_field_name("body")
    return node


def function_name(definition: Node, source: bytes) -> str | None:
    declarator = find_child(definition.child_by_field_name("declarator"), "function_declarator")
    if declarator is None:
        return None
    inner = declarator.child_by_field_name("declarator")
    if inner is None:
        return None
    name = text(inner, source)
    return name.split("::")[-1].strip()


def parameter_nodes(definition: Node) -> list[Node]:
    declarator = find_child(definition.child_by_field_name("declarator"), "function_declarator")
    params = declarator.child_by_field_name("parameters") if declarator else None
    if params is None:
        return []
    return [
        c
        for c in params.named_children
        if c.type
        in (
            "parameter_declaration",
            "optional_parameter_declaration",
            "variadic_parameter",
            "variadic_parameter_declaration",
        )
    ]


def prototypes(tree: Tree, source: bytes, name: str) -> list[Node]:
    """Top-level declarations (not definitions) of function `name`."""
    found = []
    for child in tree.root_node.children:
        if child.type != "declaration":
            continue
        for d in declared_names(child, source, "global"):
            if d.name == name and d.kind == "function":
                found.append(child)
    return found


def call_name(call: Node, source: bytes) -> str | None:
    """The called name of a call expression (`f`, `std::sqrt` -> `sqrt`), or None for
    calls through expressions (`obj.f()`, `(*fp)()`)."""
    function = call.child_by_field_name("function")
    if function is None:
        return None
    if function.type == "identifier":
        return text(function, source)
    if function.type in ("qualified_identifier", "template_function"):
        return text(function, source).split("<")[0].split("::")[-1].strip()
    return None


def calls_in(node: Node, source: bytes) -> list[tuple[str, Node]]:
    return [
        (name, n)
        for n in walk(node)
        if n.type == "call_expression" and (name := call_name(n, source)) is not None
    ]


def identifiers_in(node: Node) -> list[Node]:
    """Identifier nodes (variables, functions, macros, enum constants) under `node`;
    field names and type names are other node types and are not included."""
    return [n for n in walk(node) if n.type == "identifier"]


def names_written(node: Node, source: bytes) -> set[str]:
    """Plain names assigned, incremented or whose address is taken under `node`."""
    written: set[str] = set()
    for n in walk(node):
        target: Node | None = None
        if n.type == "assignment_expression":
            target = n.child_by_field_name("left")
        elif n.type == "update_expression":
            target = n.child_by_field_name("argument")
        elif n.type == "pointer_expression" and text(n, source).startswith("&"):
            target = n.child_by_field_name("argument")
        while target is not None and target.type == "parenthesized_expression":
            target = target.named_children[0] if target.named_children else None
        if target is not None and target.type == "identifier":
            written.add(text(target, source))
    return written


def names_declared_in(node: Node, source: bytes) -> set[str]:
    """Names declared anywhere under `node` (locals of a loop body, inner loop headers)."""
    names: set[str] = set()
    for n in walk(node):
        if n.type == "declaration":
            names.update(d.name for d in declared_names(n, source, "local"))
    return names


def node_at(tree: Tree, start: int, kind: str) -> Node | None:
    """The node of type `kind` that starts exactly at byte `start`."""
    node: Node | None = tree.root_node.descendant_for_byte_range(start, start)
    while node is not None and node.start_byte == start:
        if node.type == kind:
            return node
        node = node.parent
    return None
