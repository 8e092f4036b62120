"""Integer expressions as polynomials over named symbols, and their affine forms.

A subscript `A[i*n + j]` is the polynomial {(i, n): 1, (j,): 1}: not affine, but it
delinearizes into the two dimensions (i, j) of an array with rows of length n."""

from __future__ import annotations

from collections.abc import Callable

import clang.cindex as ci

from cudaify.frontend.facts import Affine
from cudaify.frontend.loops import (
    CK,
    Source,
    binary_operator,
    evaluate_int,
    kids,
    unary_operator,
)

Monomial = tuple[str, ...]
Poly = dict[Monomial, int]
Resolver = Callable[[ci.Cursor], "Poly | None"]

# i*n*n (a 3-D index in Horner form) is the highest we read
MAX_DEGREE = 3


def const(value: int) -> Poly:
    return {(): value} if value else {}


def symbol(name: str) -> Poly:
    return {(name,): 1}


def add(a: Poly, b: Poly, sign: int = 1) -> Poly:
    out = dict(a)
    for mono, coeff in b.items():
        out[mono] = out.get(mono, 0) + sign * coeff
    return {m: c for m, c in out.items() if c}


def mul(a: Poly, b: Poly) -> Poly | None:
    out: Poly = {}
    for ma, ca in a.items():
        for mb, cb in b.items():
            mono = tuple(sorted(ma + mb))
            if len(mono) > MAX_DEGREE:
                return None
            out[mono] = out.get(mono, 0) + ca * cb
    return {m: c for m, c in out.items() if c}


def degree(p: Poly) -> int:
    return max((len(m) for m in p), default=0)


def to_poly(src: Source, cursor: ci.Cursor, resolve: Resolver) -> Poly | None:
    """The polynomial of an integer expression, or None when it is not one we can read.
    `resolve` maps a variable or field reference to its polynomial (or None)."""
    kind = cursor.kind
    if kind in (CK.UNEXPOSED_EXPR, CK.PAREN_EXPR, CK.CSTYLE_CAST_EXPR):
        children = kids(cursor)
        if kind == CK.CSTYLE_CAST_EXPR and not _integral(cursor):
            return None
        return to_poly(src, children[-1], resolve) if children else None
    if kind in (CK.DECL_REF_EXPR, CK.MEMBER_REF_EXPR):
        value = evaluate_int(cursor) if kind == CK.DECL_REF_EXPR else None
        return const(value) if value is not None else resolve(cursor)
    if kind in (CK.INTEGER_LITERAL, CK.CXX_UNARY_EXPR, CK.CHARACTER_LITERAL):
        value = evaluate_int(cursor)
        return const(value) if value is not None else None
    if kind == CK.UNARY_OPERATOR:
        return _unary(src, cursor, resolve)
    if kind == CK.BINARY_OPERATOR:
        return _binary(src, cursor, resolve)
    return None


def _integral(cursor: ci.Cursor) -> bool:
    from cudaify.frontend.loops import is_integer_type

    return is_integer_type(cursor.type)


def _unary(src: Source, cursor: ci.Cursor, resolve: Resolver) -> Poly | None:
    op = unary_operator(src, cursor)
    if op is None or not op[1] or op[0] not in ("-", "+"):
        return None
    inner = to_poly(src, kids(cursor)[0], resolve)
    if inner is None:
        return None
    return inner if op[0] == "+" else add({}, inner, -1)


def _binary(src: Source, cursor: ci.Cursor, resolve: Resolver) -> Poly | None:
    op = binary_operator(src, cursor)
    if op not in ("+", "-", "*", "<<"):
        value = evaluate_int(cursor)
        return const(value) if value is not None else None
    lhs, rhs = kids(cursor)
    a = to_poly(src, lhs, resolve)
    b = to_poly(src, rhs, resolve)
    if a is None or b is None:
        return None
    if op == "+":
        return add(a, b)
    if op == "-":
        return add(a, b, -1)
    if op == "*":
        return mul(a, b)
    if degree(b) == 0 and 0 <= b.get((), 0) < 31:
        return mul(a, const(1 << b.get((), 0)))
    return None


def to_affine(p: Poly | None, text: str) -> Affine | None:
    if p is None or degree(p) > 1:
        return None
    terms = tuple(sorted((m[0], c) for m, c in p.items() if m))
    return Affine(terms=terms, const=p.get((), 0), text=text)


def poly_of_affine(a: Affine) -> Poly:
    out = const(a.const)
    for name, coeff in a.terms:
        out = add(out, {(name,): coeff})
    return out


def delinearize(p: Poly, loop_vars: set[str]) -> tuple[tuple[Poly, ...], tuple[str, ...]] | None:
    """Split p into ((d0 * n1 + d1) * n2 + d2) ... with affine dimensions d and symbols n
    that are not loop variables (the Horner form of a row-major index); None when the
    pattern is not clear. Returns the dimensions outermost first and the row lengths
    (one fewer). The caller still has to prove 0 <= d_k < n_k for every inner
    dimension before trusting the split."""
    split = _split_once(p, loop_vars)
    if split is None:
        return None
    row, column, n = split
    if degree(row) <= 1:
        return (row, column), (n,)
    inner = delinearize(row, loop_vars)
    if inner is None:
        return None
    dims, lengths = inner
    return (*dims, column), (*lengths, n)


def _split_once(p: Poly, loop_vars: set[str]) -> tuple[Poly, Poly, str] | None:
    """p = row * n + column, column affine and free of n, row one degree lower."""
    top = degree(p)
    if top < 2:
        return None
    highest = [m for m in p if len(m) == top]
    candidates = set(highest[0]) - loop_vars
    for m in highest[1:]:
        candidates &= set(m)
    for n in sorted(candidates):
        row: Poly = {}
        column: Poly = {}
        for mono, coeff in p.items():
            if n in mono:
                rest = list(mono)
                rest.remove(n)
                row = add(row, {tuple(rest): coeff})
            else:
                column = add(column, {mono: coeff})
        if (
            degree(row) < top
            and degree(column) <= 1
            and any(v in loop_vars for m in row for v in m)
        ):
            return row, column, n
    return None


def poly_text(p: Poly) -> str:
    """C text of a polynomial (for messages and count expressions)."""
    if not p:
        return "0"
    parts = []
    for mono, coeff in sorted(p.items(), key=lambda item: (-len(item[0]), item[0])):
        factors = [_wrap(name) for name in mono]
        if not factors:
            parts.append(str(coeff))
        elif coeff == 1:
            parts.append("*".join(factors))
        elif coeff == -1:
            parts.append("-" + "*".join(factors))
        else:
            parts.append(f"{coeff}*" + "*".join(factors))
    return " + ".join(parts).replace("+ -", "- ")


def _wrap(name: str) -> str:
    return name if name.replace("_", "a").isalnum() else f"({name})"
