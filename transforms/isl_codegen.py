"""Printing isl's loop ASTs as C, with the statements of the source put back in.

isl's AST builder decides the loops (bounds, guards, strides, degenerate loops); this module
only spells them. A user node `S3(e0, e1)` becomes statement S3's own source text with its
loop variables replaced by e0, e1 (a variable whose expression is itself keeps its name),
and other names replaced as the caller asks (a scalar that lives in device memory reads
through its pointer). Declarations of the region (`double s = 0;`) become assignments;
the caller declares the variable where it lives."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import islpy as isl
from tree_sitter import Node, Tree

from cudaify.frontend.dependence import ast_to_c
from cudaify.transforms import csource as cs

# islpy names these members for_ and if_ at run time; its stubs do not list them.
_FOR = isl.ast_node_type.for_  # type: ignore[attr-defined]
_IF = isl.ast_node_type.if_  # type: ignore[attr-defined]

_STATEMENT_TYPES = frozenset(
    {
        "expression_statement",
        "declaration",
        "compound_statement",
        "if_statement",
        "for_statement",
        "while_statement",
        "do_statement",
        "switch_statement",
    }
)


class Names:
    """isl identifier -> C text, for the expression printer (`c_name` is what ast_to_c
    asks)."""

    def __init__(self, mapping: dict[str, str] | None = None):
        self.mapping = dict(mapping or {})
        self.types: dict[str, str] = {}  # C name of a loop iterator -> its declared type

    def c_name(self, isl_name: str) -> str:
        return self.mapping.get(isl_name, isl_name)

    def add(self, isl_name: str, c_name: str) -> None:
        self.mapping[isl_name] = c_name


def expression(expr: isl.AstExpr, names: Names) -> str:
    return ast_to_c(expr, names)  # type: ignore[arg-type]


def pw_aff(pa: isl.PwAff, context: isl.Set, names: Names) -> str:
    build = isl.AstBuild.from_context(context)
    return expression(build.expr_from_pw_aff(pa), names)


@dataclass(frozen=True)
class SourceStatement:
    """One statement of the region, ready to be printed for an instance."""

    name: str
    text: str  # the statement's source text
    identifiers: tuple[tuple[int, int, str], ...]  # (start, end, name) within `text`
    assignments: tuple[tuple[str, tuple[int, int]], ...] = ()  # declaration: name, value span
    # per assignment, the type that constructs the value (`std::complex<double> acc(0.0,
    # 0.0)` assigns `std::complex<double>(0.0, 0.0)`), "" for `T x = value`
    constructors: tuple[str, ...] = ()
    # a sum `t += e`, `t = t + e`, `t = e + t`, `t -= e`, `t = t - e`, `t++`, `t--`: the
    # target's span, the added term's span (None for ++/--) and its sign
    sum_parts: tuple[tuple[int, int], tuple[int, int] | None, str] | None = None
    # what it assigns or updates: (start, end, start of the identifier it is based on)
    targets: tuple[tuple[int, int, int], ...] = ()
    # a min/max update (`if (v > m) m = v;`, `m = fmax(m, v)`, `m = v > m ? v : m`):
    # "max" or "min", the target's span and the compared value's span
    extreme_parts: tuple[str, tuple[int, int], tuple[int, int]] | None = None


def source_statement(tree: Tree, source: bytes, name: str, start: int) -> SourceStatement:
    node = statement_node(tree, start)
    if node is None:
        raise ValueError(f"no statement starts at byte {start}")
    base = node.start_byte
    text = cs.text(node, source)
    identifiers = tuple(
        (n.start_byte - base, n.end_byte - base, cs.text(n, source))
        for n in cs.identifiers_in(node)
        if not _is_callee(n)
    )
    initialized: list[tuple[str, tuple[int, int], str]] = []
    if node.type == "declaration":
        initialized = list(_initialized(node, source, base))
    return SourceStatement(
        name,
        text,
        identifiers,
        tuple((target, span) for target, span, _ in initialized),
        tuple(constructor for _, _, constructor in initialized),
        _sum_parts(node, source, base),
        _targets(node, base),
        _extreme_parts(node, source, base),
    )


def _targets(statement: Node, base: int) -> tuple[tuple[int, int, int], ...]:
    """The lvalues the statement assigns or updates, with the identifier each is based on
    (`a` of `a[i][j]`)."""
    found = []
    for node in cs.walk(statement):
        if node.type == "assignment_expression":
            target = node.child_by_field_name("left")
        elif node.type == "update_expression":
            target = node.child_by_field_name("argument")
        else:
            continue
        if target is None:
            continue
        root = _bare(target)
        while root.type == "subscript_expression":
            argument = root.child_by_field_name("argument")
            if argument is None:
                break
            root = _bare(argument)
        if root.type == "identifier":
            start, end = _span(target, base)
            found.append((start, end, root.start_byte - base))
    return tuple(found)


def _span(node: Node, base: int) -> tuple[int, int]:
    return node.start_byte - base, node.end_byte - base


def _bare(node: Node) -> Node:
    while node.type == "parenthesized_expression" and node.named_children:
        node = node.named_children[0]
    return node


def _same_text(a: Node, b: Node, source: bytes) -> bool:
    return "".join(cs.text(a, source).split()) == "".join(cs.text(b, source).split())


def _sum_parts(statement: Node, source: bytes, base: int):
    if statement.type != "expression_statement" or not statement.named_children:
        return None
    expression = _bare(statement.named_children[0])
    if expression.type == "update_expression":
        argument = expression.child_by_field_name("argument")
        operator = expression.child_by_field_name("operator")
        if argument is None or operator is None:
            return None
        return _span(argument, base), None, "-" if cs.text(operator, source) == "--" else "+"
    if expression.type != "assignment_expression":
        return None
    left = expression.child_by_field_name("left")
    right = expression.child_by_field_name("right")
    operator = expression.child_by_field_name("operator")
    if left is None or right is None or operator is None:
        return None
    op = cs.text(operator, source)
    if op in ("+=", "-="):
        return _span(left, base), _span(right, base), op[0]
    inner = _bare(right)
    if op != "=" or inner.type != "binary_expression":
        return None
    a, b = inner.child_by_field_name("left"), inner.child_by_field_name("right")
    sign_node = inner.child_by_field_name("operator")
    if a is None or b is None or sign_node is None:
        return None
    sign = cs.text(sign_node, source)
    if sign in ("+", "-") and _same_text(_bare(a), left, source):
        return _span(left, base), _span(b, base), sign
    if sign == "+" and _same_text(_bare(b), left, source):
        return _span(left, base), _span(a, base), "+"
    return None


_EXTREME_CALLS = {
    "fmax": "max", "fmaxf": "max", "fmaxl": "max", "max": "max",
    "fmin": "min", "fminf": "min", "fminl": "min", "min": "min",
}  # fmt: skip


def _extreme_parts(statement: Node, source: bytes, base: int):
    """("max" | "min", target span, value span) of a min/max update, or None."""
    if statement.type == "if_statement":
        if statement.child_by_field_name("alternative") is not None:
            return None
        condition = statement.child_by_field_name("condition")
        then = statement.child_by_field_name("consequence")
        if condition is None or then is None:
            return None
        if then.type == "compound_statement":
            if len(then.named_children) != 1:
                return None
            then = then.named_children[0]
        assignment = _plain_assignment(then, source)
        test = _bare(condition.named_children[0]) if condition.named_children else None
        if assignment is None or test is None or test.type != "binary_expression":
            return None
        target, value = assignment
        kind = _extreme_kind(test, target, value, source, picks_value=True)
        return (kind, _span(target, base), _span(value, base)) if kind else None
    assignment = _plain_assignment(statement, source)
    if assignment is None:
        return None
    target, right = assignment
    right = _bare(right)
    if right.type == "call_expression":
        name = cs.text(right.child_by_field_name("function") or right, source).split("::")[-1]
        arguments = right.child_by_field_name("arguments")
        given = arguments.named_children if arguments is not None else []
        if name not in _EXTREME_CALLS or len(given) != 2:
            return None
        for mine, other in ((given[0], given[1]), (given[1], given[0])):
            if _same_text(_bare(mine), target, source) and not _mentions(other, target, source):
                return _EXTREME_CALLS[name], _span(target, base), _span(other, base)
        return None
    if right.type == "conditional_expression":
        test = right.child_by_field_name("condition")
        yes, no = right.child_by_field_name("consequence"), right.child_by_field_name("alternative")
        if test is None or yes is None or no is None:
            return None
        test = _bare(test)
        for value, kept in ((yes, no), (no, yes)):
            if _same_text(_bare(kept), target, source) and not _mentions(value, target, source):
                if test.type != "binary_expression":
                    return None
                kind = _extreme_kind(test, target, value, source, picks_value=value == yes)
                return (kind, _span(target, base), _span(value, base)) if kind else None
    return None


def _plain_assignment(statement: Node, source: bytes) -> tuple[Node, Node] | None:
    """(left, right) of an expression statement `left = right;`."""
    if statement.type != "expression_statement" or not statement.named_children:
        return None
    expression = _bare(statement.named_children[0])
    if expression.type != "assignment_expression":
        return None
    operator = expression.child_by_field_name("operator")
    left, right = expression.child_by_field_name("left"), expression.child_by_field_name("right")
    if operator is None or cs.text(operator, source) != "=" or left is None or right is None:
        return None
    return left, right


def _extreme_kind(
    test: Node, target: Node, value: Node, source: bytes, picks_value: bool
) -> str | None:
    """Which extreme `test ? value : target` keeps (`picks_value`; else the reverse),
    when `test` compares exactly the target and the value."""
    operator = cs.text(test.child_by_field_name("operator") or test, source)
    left, right = test.child_by_field_name("left"), test.child_by_field_name("right")
    if operator not in ("<", "<=", ">", ">=") or left is None or right is None:
        return None
    left, right, value, target = _bare(left), _bare(right), _bare(value), _bare(target)
    if _same_text(left, value, source) and _same_text(right, target, source):
        value_on_left = True
    elif _same_text(left, target, source) and _same_text(right, value, source):
        value_on_left = False
    else:
        return None
    # `value > target` (value on the left of a greater-than) picks the larger: max
    larger = value_on_left == (operator in (">", ">="))
    return "max" if larger == picks_value else "min"


def _mentions(node: Node, target: Node, source: bytes) -> bool:
    name = cs.text(_bare(target), source)
    return any(cs.text(n, source) == name for n in cs.identifiers_in(node))


def statement_node(tree: Tree, start: int) -> Node | None:
    """The outermost statement (or declaration) that starts at byte `start`."""
    node: Node | None = tree.root_node.descendant_for_byte_range(start, start)
    found = None
    while node is not None and node.start_byte == start:
        if node.type in _STATEMENT_TYPES:
            found = node
        node = node.parent
    return found


def _is_callee(node: Node) -> bool:
    parent = node.parent
    return (
        parent is not None
        and parent.type == "call_expression"
        and parent.child_by_field_name("function") == node
    )


def _initialized(declaration: Node, source: bytes, base: int):
    for child in declaration.named_children:
        if child.type != "init_declarator":
            continue
        declarator = child.child_by_field_name("declarator")
        value = child.child_by_field_name("value")
        if declarator is None or value is None:
            continue
        constructor = ""
        if value.type in ("argument_list", "initializer_list"):
            spelled = declaration.child_by_field_name("type")
            constructor = cs.text(spelled, source) if spelled is not None else ""
        yield (
            cs.text(declarator, source),
            (value.start_byte - base, value.end_byte - base),
            constructor,
        )


def substituted(
    statement: SourceStatement, replace: dict[str, str], reads: dict[str, str] | None = None
) -> str:
    """The statement's text with identifiers replaced (declarations as assignments);
    `reads` replaces names further wherever they are not what a target is based on (an
    array read from a snapshot but written in place)."""
    if statement.assignments:
        parts = []
        constructors = statement.constructors or ("",) * len(statement.assignments)
        for (target, (start, end)), constructor in zip(
            statement.assignments, constructors, strict=True
        ):
            value = constructor + _replace_in(statement, start, end, replace, reads)
            parts.append(f"{replace.get(target, target)} = {value};")
        return " ".join(parts)
    return _replace_in(statement, 0, len(statement.text), replace, reads)


def target_texts(
    statement: SourceStatement, replace: dict[str, str], snapshots: dict[str, str]
) -> list[tuple[str, str]]:
    """For each target based on a name of `snapshots` (an array with a snapshot): the
    lvalue's text, and the same element of the snapshot."""
    found = []
    for start, end, root in statement.targets:
        name = next((n for s, _, n in statement.identifiers if s == root), None)
        if name is None or name not in snapshots:
            continue
        live = _replace_in(statement, start, end, replace)
        before = _replace_in(statement, start, end, {**replace, name: snapshots[name]})
        found.append((live, before))
    return found


def sum_parts(statement: SourceStatement, replace: dict[str, str]) -> tuple[str, str]:
    """A sum statement's target and the term it adds (negated for `-=`), as C text with
    identifiers replaced."""
    if statement.sum_parts is None:
        raise ValueError(f"{statement.name} is not a sum the rule can make atomic")
    (t0, t1), term, sign = statement.sum_parts
    target = _replace_in(statement, t0, t1, replace)
    value = "1" if term is None else _replace_in(statement, term[0], term[1], replace)
    return target, f"-({value})" if sign == "-" else f"({value})"


def extreme_parts(statement: SourceStatement, replace: dict[str, str]) -> tuple[str, str]:
    """A min/max update's target and the value it compares, as C text with identifiers
    replaced."""
    if statement.extreme_parts is None:
        raise ValueError(f"{statement.name} is not a min/max update")
    _kind, (t0, t1), (v0, v1) = statement.extreme_parts
    return _replace_in(statement, t0, t1, replace), _replace_in(statement, v0, v1, replace)


def atomic_sum(statement: SourceStatement, replace: dict[str, str], cast: str) -> str:
    """The sum statement as one atomicAdd of its term to its target (`cast`: the type
    atomicAdd takes for the target's type)."""
    target, value = sum_parts(statement, replace)
    return f"atomicAdd(({cast} *)&({target}), ({cast})({value}));"


def _replace_in(
    statement: SourceStatement,
    start: int,
    end: int,
    replace: dict[str, str],
    reads: dict[str, str] | None = None,
) -> str:
    text = statement.text
    roots = {root for _, _, root in statement.targets}
    pieces, position = [], start
    for first, last, name in statement.identifiers:
        if first < start or last > end:
            continue
        if reads and name in reads and first not in roots:
            value = reads[name]
        elif name in replace:
            value = replace[name]
        else:
            continue
        pieces.append(text[position:first])
        pieces.append(value)
        position = last
    pieces.append(text[position:end])
    return "".join(pieces)


# -- the AST -------------------------------------------------------------------------

UserPrinter = Callable[[str, list[str]], list[str]]


def print_ast(node: isl.AstNode, names: Names, on_user: UserPrinter, indent: str) -> list[str]:
    """C lines for an isl AST; `on_user(statement, argument texts)` prints instances.
    Loop iterators are declared `long long` (isl's bounds may exceed int)."""
    kind = node.get_type()
    T = isl.ast_node_type
    if kind == T.block:
        children = node.block_get_children()
        lines: list[str] = []
        for k in range(children.n_ast_node()):
            lines += print_ast(children.get_at(k), names, on_user, indent)
        return lines
    if kind == _FOR:
        return _print_for(node, names, on_user, indent)
    if kind == _IF:
        return _print_if(node, names, on_user, indent)
    if kind == T.user:
        expr = node.user_get_expr()
        statement = expr.get_op_arg(0).get_id().get_name()
        arguments = [expression(expr.get_op_arg(k), names) for k in range(1, expr.get_op_n_arg())]
        return [indent + line for line in on_user(statement, arguments)]
    if kind == T.mark:
        return print_ast(node.mark_get_node(), names, on_user, indent)
    raise ValueError(f"isl AST node of type {kind} is not printed here")


def _print_for(node: isl.AstNode, names: Names, on_user: UserPrinter, indent: str) -> list[str]:
    iterator = expression(node.for_get_iterator(), names)
    type_ = names.types.get(iterator, "long long")
    init = expression(node.for_get_init(), names)
    body = print_ast(node.for_get_body(), names, on_user, indent + "    ")
    if node.for_is_degenerate():
        return [
            f"{indent}{{",
            f"{indent}    const {type_} {iterator} = {init};",
            *body,
            f"{indent}}}",
        ]
    cond = expression(node.for_get_cond(), names)
    inc = expression(node.for_get_inc(), names)
    return [
        f"{indent}for ({type_} {iterator} = {init}; {cond}; {iterator} += {inc}) {{",
        *body,
        f"{indent}}}",
    ]


def _print_if(node: isl.AstNode, names: Names, on_user: UserPrinter, indent: str) -> list[str]:
    cond = expression(node.if_get_cond(), names)
    lines = [f"{indent}if ({cond}) {{"]
    lines += print_ast(node.if_get_then_node(), names, on_user, indent + "    ")
    if node.if_has_else_node():
        lines.append(f"{indent}}} else {{")
        lines += print_ast(node.if_get_else_node(), names, on_user, indent + "    ")
    lines.append(f"{indent}}}")
    return lines


def iterator_uses(node: isl.AstNode) -> dict[str, list[tuple[str, int | None]]]:
    """For each loop iterator (isl name): the statements under its loop and, for each,
    the position of the statement's loop variable that is exactly the iterator (None when
    the iterator appears only inside expressions, or not at all)."""
    found: dict[str, list[tuple[str, int | None]]] = {}

    def calls(current: isl.AstNode) -> list[isl.AstExpr]:
        collected: list[isl.AstExpr] = []

        def visit(inner: isl.AstNode) -> bool:
            if inner.get_type() == isl.ast_node_type.user:
                collected.append(inner.user_get_expr())
            return True

        current.foreach_descendant_top_down(visit)
        return collected

    def visit(current: isl.AstNode) -> bool:
        if current.get_type() != _FOR:
            return True
        name = current.for_get_iterator().get_id().get_name()
        uses = []
        for call in calls(current.for_get_body()):
            statement = call.get_op_arg(0).get_id().get_name()
            position = None
            for k in range(1, call.get_op_n_arg()):
                argument = call.get_op_arg(k)
                if (
                    argument.get_type() == isl.ast_expr_type.id
                    and argument.get_id().get_name() == name
                ):
                    position = k - 1
            uses.append((statement, position))
        found[name] = uses
        return True

    node.foreach_descendant_top_down(visit)
    return found


def iterator_names(node: isl.AstNode) -> list[str]:
    """Every loop iterator the AST declares (their isl names)."""
    found: list[str] = []

    def visit(current: isl.AstNode) -> bool:
        if current.get_type() == _FOR:
            found.append(current.for_get_iterator().get_id().get_name())
        return True

    node.foreach_descendant_top_down(visit)
    return found
