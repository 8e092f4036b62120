"""Source access for libclang cursors and recognition of canonical `for` loops.

libclang's Python bindings (18.x) expose neither the operator of a binary expression nor
which child of a `for` is the init, condition or increment (absent parts are skipped).
Both are recovered from the token stream of the main file, tokenized once: an operator
is the first token after its left operand; the parts of a `for` header lie between the
parenthesis and the two top-level semicolons."""

from __future__ import annotations

import bisect
import ctypes
from dataclasses import dataclass

import clang.cindex as ci
from cudaify.frontend.parse import Parsed

CK = ci.CursorKind

# Wrappers that only convert or parenthesize: analysis looks through them.
TRANSPARENT = {CK.UNEXPOSED_EXPR, CK.PAREN_EXPR, CK.CSTYLE_CAST_EXPR, CK.CXX_FUNCTIONAL_CAST_EXPR,
               CK.CXX_STATIC_CAST_EXPR}

INTEGER_TYPES = {
    ci.TypeKind.BOOL, ci.TypeKind.CHAR_U, ci.TypeKind.UCHAR, ci.TypeKind.USHORT,
    ci.TypeKind.UINT, ci.TypeKind.ULONG, ci.TypeKind.ULONGLONG, ci.TypeKind.CHAR_S,
    ci.TypeKind.SCHAR, ci.TypeKind.SHORT, ci.TypeKind.INT, ci.TypeKind.LONG,
    ci.TypeKind.LONGLONG, ci.TypeKind.ENUM,
}


class Source:
    """The main file's bytes and tokens, with helpers to read cursors against them."""

    def __init__(self, parsed: Parsed):
        self.parsed = parsed
        self.data = parsed.source
        self.path = parsed.path
        tu = parsed.tu
        main = tu.get_file(parsed.path)
        extent = ci.SourceRange.from_locations(
            ci.SourceLocation.from_offset(tu, main, 0),
            ci.SourceLocation.from_offset(tu, main, len(self.data)),
        )
        tokens = [(t.extent.start.offset, t.spelling) for t in tu.get_tokens(extent=extent)]
        self.token_offsets = [offset for offset, _ in tokens]
        self.token_spellings = [spelling for _, spelling in tokens]
        self.line_starts = [0] + [i + 1 for i, byte in enumerate(self.data) if byte == 10]

    def in_main(self, cursor: ci.Cursor) -> bool:
        f = cursor.location.file
        return f is not None and f.name == self.path

    def text(self, cursor: ci.Cursor) -> str:
        return self.slice(cursor.extent.start.offset, cursor.extent.end.offset)

    def slice(self, start: int, end: int) -> str:
        return self.data[start:end].decode("utf-8", errors="replace")

    def token_index(self, offset: int) -> int:
        """Index of the first token starting at or after `offset`."""
        return bisect.bisect_left(self.token_offsets, offset)

    def token_after(self, offset: int, limit: int) -> tuple[int, str] | None:
        k = self.token_index(offset)
        if k < len(self.token_offsets) and self.token_offsets[k] < limit:
            return self.token_offsets[k], self.token_spellings[k]
        return None

    def tokens_between(self, start: int, end: int) -> list[tuple[int, str]]:
        k = self.token_index(start)
        found = []
        while k < len(self.token_offsets) and self.token_offsets[k] < end:
            found.append((self.token_offsets[k], self.token_spellings[k]))
            k += 1
        return found

    def line_col(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.line_starts, offset)
        return line, offset - self.line_starts[line - 1] + 1


def unwrap(cursor: ci.Cursor) -> ci.Cursor:
    """Look through implicit conversions, parentheses and casts."""
    while cursor.kind in TRANSPARENT:
        children = list(cursor.get_children())
        if not children:
            return cursor
        cursor = children[-1]
    return cursor


def binary_operator(src: Source, cursor: ci.Cursor) -> str | None:
    """The operator token of a binary or compound-assignment expression."""
    children = list(cursor.get_children())
    if len(children) != 2:
        return None
    found = src.token_after(children[0].extent.end.offset, children[1].extent.start.offset + 1)
    return found[1] if found else None


def unary_operator(src: Source, cursor: ci.Cursor) -> tuple[str, bool] | None:
    """(operator, is_prefix) of a unary expression."""
    children = list(cursor.get_children())
    if len(children) != 1:
        return None
    start, operand = cursor.extent.start.offset, children[0]
    if operand.extent.start.offset > start:
        found = src.token_after(start, operand.extent.start.offset)
        return (found[1], True) if found else None
    found = src.token_after(operand.extent.end.offset, cursor.extent.end.offset)
    return (found[1], False) if found else None


_lib_ready = False


def evaluate_int(cursor: ci.Cursor) -> int | None:
    """The value of an integer constant expression (macros, enums, sizeof), via libclang."""
    global _lib_ready
    lib = ci.conf.lib
    if not _lib_ready:
        lib.clang_Cursor_Evaluate.restype = ctypes.c_void_p
        lib.clang_Cursor_Evaluate.argtypes = [ci.Cursor]
        lib.clang_EvalResult_getKind.argtypes = [ctypes.c_void_p]
        lib.clang_EvalResult_getKind.restype = ctypes.c_int
        lib.clang_EvalResult_getAsLongLong.argtypes = [ctypes.c_void_p]
        lib.clang_EvalResult_getAsLongLong.restype = ctypes.c_longlong
        lib.clang_EvalResult_dispose.argtypes = [ctypes.c_void_p]
        _lib_ready = True
    result = lib.clang_Cursor_Evaluate(cursor)
    if not result:
        return None
    try:
        if lib.clang_EvalResult_getKind(result) != 1:  # CXEval_Int
            return None
        return int(lib.clang_EvalResult_getAsLongLong(result))
    finally:
        lib.clang_EvalResult_dispose(result)


def is_integer_type(t: ci.Type) -> bool:
    return t.get_canonical().kind in INTEGER_TYPES


@dataclass(frozen=True)
class ForParts:
    """The cursors of a `for` header, each None when absent."""

    init: ci.Cursor | None
    cond: ci.Cursor | None
    inc: ci.Cursor | None
    body: ci.Cursor


def for_parts(src: Source, cursor: ci.Cursor) -> ForParts | None:
    children = list(cursor.get_children())
    if not children:
        return None
    tokens = src.tokens_between(cursor.extent.start.offset, children[-1].extent.start.offset)
    depth, semis = 0, []
    for offset, spelling in tokens:
        if spelling == "(":
            depth += 1
        elif spelling == ")":
            depth -= 1
        elif spelling == ";" and depth == 1:
            semis.append(offset)
    if len(semis) != 2:
        return None
    parts: dict[str, ci.Cursor] = {}
    for child in children[:-1]:
        start = child.extent.start.offset
        key = "init" if start < semis[0] else "cond" if start < semis[1] else "inc"
        parts[key] = child
    return ForParts(parts.get("init"), parts.get("cond"), parts.get("inc"), children[-1])


@dataclass(frozen=True)
class Header:
    """A canonical `for` header: `var` from `lower` while `var <op> upper`, by `step`."""

    var: str
    var_decl: int  # hash of the induction variable's declaration
    lower: ci.Cursor
    upper: ci.Cursor
    step: int
    inclusive: bool
    declared_in_header: bool
    body: ci.Cursor


def canonical_header(src: Source, cursor: ci.Cursor) -> Header | None:
    """Recognize `for (T v = lo; v < hi; v++)` and its variants; None when not canonical."""
    parts = for_parts(src, cursor)
    if parts is None or parts.init is None or parts.cond is None or parts.inc is None:
        return None
    init = _init_of(src, parts.init)
    if init is None:
        return None
    var_cursor, lower, declared = init
    if not is_integer_type(var_cursor.type):
        return None
    var_decl = var_cursor.hash
    step = _step_of(src, parts.inc, var_decl)
    if not step:
        return None
    test = _test_of(src, parts.cond, var_decl)
    if test is None:
        return None
    upper, relation = test
    increasing = relation in ("<", "<=")
    if increasing != (step > 0):
        return None
    return Header(
        var=var_cursor.spelling, var_decl=var_decl, lower=lower, upper=upper, step=step,
        inclusive=relation in ("<=", ">="), declared_in_header=declared, body=parts.body,
    )


def _decl_of(cursor: ci.Cursor) -> ci.Cursor | None:
    cursor = unwrap(cursor)
    if cursor.kind != CK.DECL_REF_EXPR:
        return None
    ref = cursor.referenced
    return ref if ref is not None and ref.kind in (CK.VAR_DECL, CK.PARM_DECL) else None


def _is_var(cursor: ci.Cursor, var_decl: int) -> bool:
    decl = _decl_of(cursor)
    return decl is not None and decl.hash == var_decl


def _init_of(src: Source, init: ci.Cursor) -> tuple[ci.Cursor, ci.Cursor, bool] | None:
    if init.kind == CK.DECL_STMT:
        decls = list(init.get_children())
        if len(decls) != 1 or decls[0].kind != CK.VAR_DECL:
            return None
        values = [c for c in decls[0].get_children() if c.kind.is_expression()]
        return (decls[0], values[-1], True) if values else None
    init = unwrap(init)
    if init.kind == CK.BINARY_OPERATOR and binary_operator(src, init) == "=":
        lhs, rhs = init.get_children()
        decl = _decl_of(lhs)
        return (decl, rhs, False) if decl is not None else None
    return None


def _step_of(src: Source, inc: ci.Cursor, var_decl: int) -> int:
    inc = unwrap(inc)
    if inc.kind == CK.UNARY_OPERATOR:
        op = unary_operator(src, inc)
        operand = _decl_of(next(inc.get_children()))
        if op is None or operand is None or operand.hash != var_decl:
            return 0
        return {"++": 1, "--": -1}.get(op[0], 0)
    if inc.kind == CK.COMPOUND_ASSIGNMENT_OPERATOR:
        lhs, rhs = inc.get_children()
        decl, amount = _decl_of(lhs), evaluate_int(rhs)
        if decl is None or decl.hash != var_decl or amount is None:
            return 0
        return {"+=": amount, "-=": -amount}.get(binary_operator(src, inc) or "", 0)
    if inc.kind == CK.BINARY_OPERATOR and binary_operator(src, inc) == "=":
        lhs, rhs = inc.get_children()
        decl = _decl_of(lhs)
        rhs = unwrap(rhs)
        if decl is None or decl.hash != var_decl or rhs.kind != CK.BINARY_OPERATOR:
            return 0
        op = binary_operator(src, rhs)
        a, b = rhs.get_children()
        a_is_var, b_is_var = _is_var(a, var_decl), _is_var(b, var_decl)
        if op == "+" and a_is_var:
            return evaluate_int(b) or 0
        if op == "+" and b_is_var:
            return evaluate_int(a) or 0
        if op == "-" and a_is_var:
            amount = evaluate_int(b)
            return -amount if amount else 0
    return 0


_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


def _test_of(src: Source, cond: ci.Cursor, var_decl: int) -> tuple[ci.Cursor, str] | None:
    cond = unwrap(cond)
    if cond.kind != CK.BINARY_OPERATOR:
        return None
    op = binary_operator(src, cond)
    if op not in _FLIP:
        return None
    lhs, rhs = cond.get_children()
    left, right = _decl_of(lhs), _decl_of(rhs)
    if left is not None and left.hash == var_decl:
        return rhs, op
    if right is not None and right.hash == var_decl:
        return lhs, _FLIP[op]
    return None
