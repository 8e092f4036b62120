"""Benign races of idempotent writes: `if (dist[w] < 0) { dist[w] = level + 1; changed = 1; }`.

Iterations of a loop may race on an array A (or a flag scalar) and still give the same
result in every order when
- every store to A stores the same loop-invariant value v, and every store sits in the
  then-branch of a *guard* `if (A[x] OP c)` on the same element, whose branch only stores
  v to A[x] and constants to flag scalars; all guards of A agree (same test, same flags);
- every other read of A is a *filter*: the whole condition of an `if`, `A[y] OP c`;
- the guard fails on v (a written element is never claimed twice), and a filter gives
  the same answer on v as on any value an element can hold before it is written (one
  that passes the guard), so no read's outcome depends on whether a racing store came
  first.
With no read of A at all, unguarded stores of one value are benign too ("mark visited").
The last two conditions are integer facts about v and the c's; isl decides them. When they
hold only for some parameter values, the precondition (C text) says which: the host must
check it and otherwise run the original loop.

A flag scalar is benign when every reference in the loop is `f = k` with one
loop-invariant k (never read there): it ends as k when some iteration stored it."""

from __future__ import annotations

from dataclasses import dataclass

import clang.cindex as ci
import islpy as isl

from cudaify.frontend.access import norm
from cudaify.frontend.affine import to_affine, to_poly
from cudaify.frontend.dependence import Space, affine_text, ast_to_c
from cudaify.frontend.facts import Affine
from cudaify.frontend.loops import CK, TRANSPARENT, Source, binary_operator, kids, unary_operator

COMPARISONS = {"<", "<=", ">", ">=", "==", "!="}
MIRROR = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
STATEMENT_PARENTS = (CK.COMPOUND_STMT, CK.IF_STMT, CK.FOR_STMT, CK.WHILE_STMT, CK.DO_STMT)
NEGATE = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}


class NotBenign(Exception):
    """Why a race is not benign (the message becomes the loop's reason)."""


@dataclass(frozen=True)
class Test:
    """`A[index] op value` as the condition of `statement` (an if)."""

    index: str
    op: str
    value: ci.Cursor | None  # None: the constant 0 (`if (A[x])`, `if (!A[x])`)
    statement: ci.Cursor


@dataclass(frozen=True)
class Store:
    index: str
    value: ci.Cursor
    statement: ci.Cursor


def _key(cursor: ci.Cursor) -> tuple[int, int]:
    return (cursor.extent.start.offset, cursor.extent.end.offset)


def _parent(ancestors: list[ci.Cursor]) -> tuple[ci.Cursor | None, int]:
    """The nearest ancestor that is not a conversion or parentheses, and its depth."""
    for depth in range(len(ancestors) - 1, -1, -1):
        if ancestors[depth].kind not in TRANSPARENT:
            return ancestors[depth], depth
    return None, -1


def _condition_of(statement: ci.Cursor | None, expression: ci.Cursor) -> bool:
    if statement is None or statement.kind != CK.IF_STMT:
        return False
    children = kids(statement)
    return bool(children) and _key(_unwrap(children[0])) == _key(expression)


def _unwrap(cursor: ci.Cursor) -> ci.Cursor:
    while cursor.kind in TRANSPARENT and kids(cursor):
        cursor = kids(cursor)[-1]
    return cursor


def _statements(branch: ci.Cursor) -> list[ci.Cursor]:
    return kids(branch) if branch.kind == CK.COMPOUND_STMT else [branch]


def assignment(src: Source, statement: ci.Cursor) -> tuple[ci.Cursor, ci.Cursor] | None:
    """(target, value) of a plain `target = value` statement."""
    statement = _unwrap(statement)
    if statement.kind != CK.BINARY_OPERATOR or binary_operator(src, statement) != "=":
        return None
    target, value = kids(statement)
    return _unwrap(target), value


class BenignRaces:
    """The benign-race facts of one loop (`node`) of nest `root`."""

    def __init__(self, fa, root, node) -> None:
        self.fa, self.src, self.root, self.node = fa, fa.src, root, node
        self.body = kids(node.cursor)[-1]
        self.resolve = fa.resolver(root, fa.chain_at(node.start))
        self.inner_vars = {n.header.var for n in fa.canonical if node.start <= n.start < node.end}
        self.local = {
            d.decl for d in fa.walk.decls if node.start <= d.start < node.end and not d.is_static
        }

    # flags ------------------------------------------------------------------------------
    def flag(self, name: str) -> None:
        """Raise NotBenign unless every reference to scalar `name` stores one invariant."""
        values = set()
        for ref, ancestors in self._find(
            lambda c: c.kind == CK.DECL_REF_EXPR and c.spelling == name
        ):
            parent, _ = _parent(ancestors)
            if parent is None or parent.kind != CK.BINARY_OPERATOR:
                raise NotBenign(f"{name} is read in the loop")
            pair = assignment(self.src, parent)
            if pair is None or _key(pair[0]) != _key(ref):
                raise NotBenign(f"{name} is read or updated in the loop")
            self.invariant(pair[1], name)
            values.add(norm(self.src.text(pair[1])))
        if len(values) != 1:
            raise NotBenign(f"different values are stored to {name}")

    # arrays -----------------------------------------------------------------------------
    def array(self, name: str) -> str:
        """The precondition (C text, "" when none is needed) under which the races on
        array `name` are benign; raises NotBenign when they are not."""
        stores, tests = self._sites(name)
        if not stores:
            raise NotBenign(f"{name} is not written by plain stores")
        values = {norm(self.src.text(s.value)) for s in stores}
        if len(values) != 1:
            raise NotBenign(f"different values are stored to {name} in the loop")
        value = self.invariant(stores[0].value, name)
        if not tests:
            return ""  # stores of one value, never read: any order leaves the same array
        guards = [t for t in tests if self._is_guard(t, name, values)]
        filters = [t for t in tests if t not in guards]
        guarded = {_key(s) for g in guards for s in _statements(kids(g.statement)[1])}
        for store in stores:
            if _key(store.statement) not in guarded:
                raise NotBenign(
                    f"{self.src.text(store.statement)} is not guarded by a test of that element"
                )
        if not guards:
            raise NotBenign(f"{name} is written without a guard and read in the loop")
        shapes = {(g.op, self._text(g.value), self._flags(g)) for g in guards}
        if len(shapes) != 1:
            raise NotBenign(f"the guards of {name} differ")
        return self._precondition(guards[0], filters, value, name)

    def invariant(self, value: ci.Cursor, name: str) -> Affine:
        poly = to_poly(self.src, value, self.resolve)
        affine = to_affine(poly, self.src.text(value))
        if affine is None or set(affine.names) & self.inner_vars:
            raise NotBenign(
                f"{self.src.text(value)} (stored to or compared with {name}) is not a "
                "loop-invariant integer"
            )
        return affine

    def _text(self, value: ci.Cursor | None) -> str:
        return "0" if value is None else norm(self.src.text(value))

    def _flags(self, guard: Test) -> tuple[str, ...]:
        found = []
        for statement in _statements(kids(guard.statement)[1]):
            pair = assignment(self.src, statement)
            if pair is not None and pair[0].kind == CK.DECL_REF_EXPR:
                found.append(pair[0].spelling)
        return tuple(sorted(set(found)))

    def _is_guard(self, test: Test, name: str, values: set[str]) -> bool:
        children = kids(test.statement)
        if len(children) != 2:
            return False
        for statement in _statements(children[1]):
            pair = assignment(self.src, statement)
            if pair is None:
                return False
            target, stored = pair
            if target.kind == CK.DECL_REF_EXPR:
                ref = target.referenced
                if ref is None or ref.hash in self.local or ref.kind != CK.VAR_DECL:
                    return False
                continue
            if target.kind != CK.ARRAY_SUBSCRIPT_EXPR:
                return False
            base, index = kids(target)
            if norm(self.src.text(base)) != name or norm(self.src.text(index)) != test.index:
                return False
            if norm(self.src.text(stored)) not in values:
                return False
        return True

    def _sites(self, name: str) -> tuple[list[Store], list[Test]]:
        stores: list[Store] = []
        tests: list[Test] = []

        def subscript_of_name(c: ci.Cursor) -> bool:
            return c.kind == CK.ARRAY_SUBSCRIPT_EXPR and norm(self.src.text(kids(c)[0])) == name

        for sub, ancestors in self._find(subscript_of_name):
            index = norm(self.src.text(kids(sub)[1]))
            parent, depth = _parent(ancestors)
            up, _ = _parent(ancestors[:depth]) if depth > 0 else (None, -1)
            if parent is not None and parent.kind == CK.BINARY_OPERATOR:
                op = binary_operator(self.src, parent)
                left, right = kids(parent)
                if op == "=" and _key(_unwrap(left)) == _key(sub):
                    if up is None or up.kind not in STATEMENT_PARENTS:
                        raise NotBenign(f"the value of {self.src.text(parent)} is used")
                    stores.append(Store(index, right, parent))
                    continue
                if op in COMPARISONS and _condition_of(up, parent):
                    mine = _key(_unwrap(left)) == _key(sub)
                    other = right if mine else left
                    tests.append(Test(index, op if mine else MIRROR[op], other, up))
                    continue
            if parent is not None and parent.kind == CK.UNARY_OPERATOR:
                unary = unary_operator(self.src, parent)
                if unary is not None and unary[0] == "!" and _condition_of(up, parent):
                    tests.append(Test(index, "==", None, up))
                    continue
            if _condition_of(parent, sub):
                tests.append(Test(index, "!=", None, parent))
                continue
            where = self.src.text(parent) if parent is not None else self.src.text(sub)
            raise NotBenign(f"{self.src.text(sub)} is used in {where}, not only compared")
        return stores, tests

    def _find(self, wanted):
        found = []

        def visit(cursor: ci.Cursor, ancestors: list[ci.Cursor]) -> None:
            if wanted(cursor):
                found.append((cursor, list(ancestors)))
            ancestors.append(cursor)
            for child in kids(cursor):
                visit(child, ancestors)
            ancestors.pop()

        visit(self.body, [self.node.cursor])
        return found

    # the integer facts ------------------------------------------------------------------
    def _precondition(self, guard: Test, filters: list[Test], value: Affine, name: str) -> str:
        space = Space()
        v = affine_text(value, {}, space)
        cg = self._compared(guard, name, space)

        def holds(x: str, op: str, c: str) -> str:
            return f"({x} {'=' if op == '==' else op} {c})"

        bad = [f"{{ : {holds(v, guard.op, cg)} }}"]
        for test in filters:
            c = self._compared(test, name, space)
            differs = (
                f"({holds('o', test.op, c)} and {holds(v, NEGATE[test.op], c)}) or "
                f"({holds('o', NEGATE[test.op], c)} and {holds(v, test.op, c)})"
            )
            bad.append(f"{{ [o] : {holds('o', guard.op, cg)} and ({differs}) }}")
        header = space.header() if space.params else ""
        unsafe = isl.Set(header + bad[0]).params()
        for text in bad[1:]:
            unsafe = unsafe.union(isl.Set(header + text).params())
        safe = unsafe.complement().coalesce()
        if safe.is_empty():
            raise NotBenign(f"the value stored to {name} passes its own test")
        if unsafe.is_empty():
            return ""
        universe = isl.Set(header + "{ : }")
        build = isl.AstBuild.from_context(universe)
        return ast_to_c(build.expr_from_set(safe), space)

    def _compared(self, test: Test, name: str, space: Space) -> str:
        if test.value is None:
            return "0"
        return affine_text(self.invariant(test.value, name), {}, space)
