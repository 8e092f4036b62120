"""Source access for libclang cursors and recognition of canonical `for` loops.

libclang's Python bindings (18.x) expose neither the operator of a binary expression nor
which child of a `for` is the init, condition or increment (absent parts are skipped).
Both are recovered from the token stream of the main file, tokenized once: an operator
is the first token after its left operand; the parts of a `for` header lie between the
parenthesis and the two top-level semicolons."""

from __future__ import annotations

import bisect
import ctypes
import re
from dataclasses import dataclass

import clang.cindex as ci

from cudaify.frontend.parse import Parsed

CK = ci.CursorKind

# Wrappers that only convert or parenthesize: analysis looks through them.
TRANSPARENT = {
    CK.UNEXPOSED_EXPR,
    CK.PAREN_EXPR,
    CK.CSTYLE_CAST_EXPR,
    CK.CXX_FUNCTIONAL_CAST_EXPR,
    CK.CXX_STATIC_CAST_EXPR,
}

INTEGER_TYPES = {
    ci.TypeKind.BOOL,
    ci.TypeKind.CHAR_U,
    ci.TypeKind.UCHAR,
    ci.TypeKind.USHORT,
    ci.TypeKind.UINT,
    ci.TypeKind.ULONG,
    ci.TypeKind.ULONGLONG,
    ci.TypeKind.CHAR_S,
    ci.TypeKind.SCHAR,
    ci.TypeKind.SHORT,
    ci.TypeKind.INT,
    ci.TypeKind.LONG,
    ci.TypeKind.LONGLONG,
    ci.TypeKind.ENUM,
}


_TOKEN = re.compile(
    rb"""(?P<skip>//[^\n]*|/\*.*?\*/|\s+|^[ \t]*\#[^\n]*(?:\\\n[^\n]*)*)
    |(?P<str>[uUL8]*"(?:\\.|[^"\\\n])*"|[uUL]?'(?:\\.|[^'\\\n])*')
    |(?P<num>\.?\d(?:[eEpP][+-]|[\w.'])*)
    |(?P<id>[A-Za-z_$][\w$]*)
    |(?P<punct>>>=|<<=|\.\.\.|->\*|->|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||\+=|-=|\*=|/=|%=
       |&=|\|=|\^=|\#\#|::|.)""",
    re.S | re.M | re.X,
)


def tokenize(data: bytes) -> list[tuple[int, str]]:
    """C/C++ tokens with their byte offsets; comments and preprocessor lines skipped.
    The Python bindings' tokenizer costs a second per 2,000 lines; this costs little and
    only punctuation positions are read from it."""
    tokens = []
    for match in _TOKEN.finditer(data):
        if match.lastgroup != "skip":
            tokens.append((match.start(), match.group().decode("utf-8", errors="replace")))
    return tokens


# Each call into libclang through its Python bindings costs microseconds, and the walk
# asks for the same children and extents several times: both are kept per cursor
# identity (kind and data pointers: `clang_hashCursor` collides on large files)
# (`index_tree` fills the children of a whole function in one recursive visit).
_offset = ctypes.c_uint()
Key = bytes
_SPANS: dict[Key, tuple[int, int]] = {}
_CHILDREN: dict[Key, list[ci.Cursor]] = {}
_INDEXED: set[Key] = set()


def identity(cursor: ci.Cursor) -> Key:
    """What makes a cursor itself: for statements and expressions the Stmt pointer
    (data[1]; the parent-declaration slot differs between visits), for the rest all."""
    raw = bytes(cursor)  # kind, xdata, data[0..2]: the struct's own bytes are the cheapest key
    if 100 <= cursor._kind_id < 400:
        return raw[:4] + raw[16:]
    return raw


def _location_offset(location: ci.SourceLocation) -> int:
    ci.conf.lib.clang_getInstantiationLocation(location, None, None, None, ctypes.byref(_offset))
    return int(_offset.value)


def _span(cursor: ci.Cursor) -> tuple[int, int]:
    key = identity(cursor)
    found = _SPANS.get(key)
    if found is None:
        extent = ci.conf.lib.clang_getCursorExtent(cursor)
        found = (
            _location_offset(ci.conf.lib.clang_getRangeStart(extent)),
            _location_offset(ci.conf.lib.clang_getRangeEnd(extent)),
        )
        _SPANS[key] = found
    return found


def start_of(cursor: ci.Cursor) -> int:
    """Byte offset where a cursor starts (cheaper than `cursor.extent.start.offset`)."""
    return _span(cursor)[0]


def end_of(cursor: ci.Cursor) -> int:
    return _span(cursor)[1]


def kids(cursor: ci.Cursor) -> list[ci.Cursor]:
    key = identity(cursor)
    if key in _INDEXED:
        return _CHILDREN.get(key, [])
    return list(cursor.get_children())


def index_tree(root: ci.Cursor) -> None:
    """Record the children of every cursor under root with one recursive visit."""
    lib = ci.conf.lib
    tu = root._tu

    def visit(child, parent, _data):
        child._tu = tu
        key = identity(child)
        _INDEXED.add(key)
        parent_key = identity(parent)
        if parent_key != key:  # libclang reports a `case` label's value as its own parent
            _CHILDREN.setdefault(parent_key, []).append(child)
        return 2  # CXChildVisit_Recurse

    _INDEXED.add(identity(root))
    lib.clang_visitChildren(root, ci.callbacks["cursor_visit"](visit), [])


def forget_trees() -> None:
    _SPANS.clear()
    _CHILDREN.clear()
    _INDEXED.clear()


class Source:
    """The main file's bytes and tokens, with helpers to read cursors against them."""

    def __init__(self, parsed: Parsed):
        self.parsed = parsed
        self.data = parsed.source
        self.path = parsed.path
        tokens = tokenize(self.data)
        self.token_offsets = [offset for offset, _ in tokens]
        self.token_spellings = [spelling for _, spelling in tokens]
        self.line_starts = [0] + [i + 1 for i, byte in enumerate(self.data) if byte == 10]
        self.memo: dict = {}  # per-file results of pure reads of the source (declarations)

    def in_main(self, cursor: ci.Cursor) -> bool:
        f = cursor.location.file
        return f is not None and f.name == self.path

    def text(self, cursor: ci.Cursor) -> str:
        return self.slice(start_of(cursor), end_of(cursor))

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
        children = kids(cursor)
        if not children:
            return cursor
        cursor = children[-1]
    return cursor


def binary_operator(src: Source, cursor: ci.Cursor) -> str | None:
    """The operator token of a binary or compound-assignment expression."""
    children = kids(cursor)
    if len(children) != 2:
        return None
    found = src.token_after(end_of(children[0]), start_of(children[1]) + 1)
    return found[1] if found else None


def unary_operator(src: Source, cursor: ci.Cursor) -> tuple[str, bool] | None:
    """(operator, is_prefix) of a unary expression."""
    children = kids(cursor)
    if len(children) != 1:
        return None
    start, operand = start_of(cursor), children[0]
    if start_of(operand) > start:
        found = src.token_after(start, start_of(operand))
        return (found[1], True) if found else None
    found = src.token_after(end_of(operand), end_of(cursor))
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
    children = kids(cursor)
    if not children:
        return None
    tokens = src.tokens_between(start_of(cursor), start_of(children[-1]))
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
        start = start_of(child)
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
    if _mentions_decl(lower, var_decl):
        return None  # `for (j = j + 1; ...)` starts from the previous value
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
        var=var_cursor.spelling,
        var_decl=var_decl,
        lower=lower,
        upper=upper,
        step=step,
        inclusive=relation in ("<=", ">="),
        declared_in_header=declared,
        body=parts.body,
    )


def _decl_of(cursor: ci.Cursor) -> ci.Cursor | None:
    cursor = unwrap(cursor)
    if cursor.kind != CK.DECL_REF_EXPR:
        return None
    ref = cursor.referenced
    return ref if ref is not None and ref.kind in (CK.VAR_DECL, CK.PARM_DECL) else None


def _mentions_decl(cursor: ci.Cursor, decl: int) -> bool:
    if cursor.kind == CK.DECL_REF_EXPR:
        ref = cursor.referenced
        if ref is not None and ref.hash == decl:
            return True
    return any(_mentions_decl(child, decl) for child in kids(cursor))


def _is_var(cursor: ci.Cursor, var_decl: int) -> bool:
    decl = _decl_of(cursor)
    return decl is not None and decl.hash == var_decl


def _init_of(src: Source, init: ci.Cursor) -> tuple[ci.Cursor, ci.Cursor, bool] | None:
    if init.kind == CK.DECL_STMT:
        decls = kids(init)
        if len(decls) != 1 or decls[0].kind != CK.VAR_DECL:
            return None
        values = [c for c in kids(decls[0]) if c.kind.is_expression()]
        return (decls[0], values[-1], True) if values else None
    init = unwrap(init)
    if init.kind == CK.BINARY_OPERATOR and binary_operator(src, init) == "=":
        lhs, rhs = kids(init)
        decl = _decl_of(lhs)
        return (decl, rhs, False) if decl is not None else None
    return None


def _step_of(src: Source, inc: ci.Cursor, var_decl: int) -> int:
    inc = unwrap(inc)
    if inc.kind == CK.UNARY_OPERATOR:
        op = unary_operator(src, inc)
        operand = _decl_of(kids(inc)[0])
        if op is None or operand is None or operand.hash != var_decl:
            return 0
        return {"++": 1, "--": -1}.get(op[0], 0)
    if inc.kind == CK.COMPOUND_ASSIGNMENT_OPERATOR:
        lhs, rhs = kids(inc)
        decl, amount = _decl_of(lhs), evaluate_int(rhs)
        if decl is None or decl.hash != var_decl or amount is None:
            return 0
        return {"+=": amount, "-=": -amount}.get(binary_operator(src, inc) or "", 0)
    if inc.kind == CK.BINARY_OPERATOR and binary_operator(src, inc) == "=":
        lhs, rhs = kids(inc)
        decl = _decl_of(lhs)
        rhs = unwrap(rhs)
        if decl is None or decl.hash != var_decl or rhs.kind != CK.BINARY_OPERATOR:
            return 0
        operator = binary_operator(src, rhs)
        a, b = kids(rhs)
        a_is_var, b_is_var = _is_var(a, var_decl), _is_var(b, var_decl)
        if operator == "+" and a_is_var:
            return evaluate_int(b) or 0
        if operator == "+" and b_is_var:
            return evaluate_int(a) or 0
        if operator == "-" and a_is_var:
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
    lhs, rhs = kids(cond)
    left, right = _decl_of(lhs), _decl_of(rhs)
    if left is not None and left.hash == var_decl:
        return rhs, op
    if right is not None and right.hash == var_decl:
        return lhs, _FLIP[op]
    return None
