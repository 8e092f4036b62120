"""C to C++: rewrite a C program so that `nvcc -x cu` (a C++ compiler) accepts it and it
behaves the same.

Every rewrite is a byte-range edit of the main file found from the libclang AST or its
tokens, never a regular expression over the text:
- casts where the AST shows implicit conversions C allows and C++ rejects (`void *` or an
  unrelated pointer to `T *`, dropped `const`, `int` to an enum), `decltype` of the
  destination for nameless types; `e++` and `e += k` on enums spelled out;
- C99 VLA parameters (`double a[n][m]`, `double (*a)[m]`) become flat pointers with
  linearized subscripts, and callers' 2-D arrays are cast; `[restrict 4]` and
  `[static 4]` parameters become pointers;
- designated initializers g++ rejects (out of order, nested, array designators) become
  positional brace lists; compound literals used as objects become named variables;
- C++ keywords and file-scope CUDA names used as identifiers are renamed; C11 keyword
  spellings (`_Bool`, `_Static_assert`, `_Alignas`...) and `restrict` get C++'s;
- K&R definitions and `f()` declarations get prototypes; exactly-filling strings in
  `char[N]` become character lists; tentative definitions get `extern`; initializations
  a goto or case label jumps over are split; `sizeof 'a'` keeps C's value; types and
  enumerators declared inside a struct are qualified where used outside it.
What cannot be rewritten safely is left as written and reported in `notes`.

Rewrites nest (a cast inside a designated initializer inside a renamed variable's
declaration), so each one is built from the *rendered* text of its sub-ranges: the inner
edits are applied first and the outer edit replaces them. Edits are applied innermost
first, which keeps the final list flat and non-overlapping."""

from __future__ import annotations

import bisect
import codecs
import ctypes
import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import clang.cindex as ci

from cudaify.frontend.edits import Edit, apply_edits, shifted_offset, sorted_edits
from cudaify.frontend.parse import Parsed

CK = ci.CursorKind
TK = ci.TypeKind
Render = Callable[[int, int], str]  # the text of a byte range with the edits made so far

# C++17 keywords and alternative tokens (plus C++20's, so a later -std bump stays safe)
# that are ordinary identifiers in C.
CXX_KEYWORDS = frozenset(
    """alignas alignof and and_eq asm bitand bitor bool catch char8_t char16_t char32_t
    class co_await co_return co_yield compl concept consteval constexpr constinit const_cast
    decltype delete dynamic_cast explicit export false friend mutable namespace new noexcept
    not not_eq nullptr operator or or_eq private protected public reinterpret_cast requires
    static_assert static_cast template this thread_local throw true try typeid typename
    using virtual wchar_t xor xor_eq""".split()
)

# Names the CUDA headers that nvcc includes into every .cu file already declare at file
# scope; a C program that declares them itself gets a redefinition error.
CUDA_RESERVED = frozenset(
    """threadIdx blockIdx blockDim gridDim warpSize dim3 min max umin umax llmin llmax
    ullmin ullmax rsqrt rsqrtf rcbrt rcbrtf sinpi sinpif cospi cospif sincospi sincospif
    normcdf normcdff normcdfinv normcdfinvf erfcinv erfcinvf erfinv erfinvf norm normf
    norm3d norm3df norm4d norm4df rnorm rnormf rnorm3d rnorm3df rnorm4d rnorm4df rhypot
    rhypotf saturate mul24 umul24 mulhi umulhi mul64hi umul64hi fdividef signbit""".split()
    + [
        f"{base}{n}"
        for base in (
            "char uchar short ushort int uint long ulong longlong ulonglong float double".split()
        )
        for n in (1, 2, 3, 4)
    ]
)

# C11 keywords spelled differently in C++ (the C spelling is unknown to g++/nvcc).
C11_KEYWORDS = {
    "_Bool": "bool",
    "_Static_assert": "static_assert",
    "_Alignas": "alignas",  # moved to the front of its declaration by _alignas_jobs
    "_Alignof": "alignof",
    "_Thread_local": "thread_local",
    "_Noreturn": "__attribute__((noreturn))",
    "restrict": "__restrict__",
}

ARRAY_KINDS = (TK.CONSTANTARRAY, TK.INCOMPLETEARRAY, TK.VARIABLEARRAY, TK.DEPENDENTSIZEDARRAY)
INTEGRAL_KINDS = frozenset(
    {
        TK.BOOL, TK.CHAR_U, TK.UCHAR, TK.CHAR16, TK.CHAR32, TK.USHORT, TK.UINT, TK.ULONG,
        TK.ULONGLONG, TK.UINT128, TK.CHAR_S, TK.SCHAR, TK.WCHAR, TK.SHORT, TK.INT, TK.LONG,
        TK.LONGLONG, TK.INT128,
    }
)  # fmt: skip
CHAR_KINDS = frozenset({TK.CHAR_S, TK.CHAR_U, TK.SCHAR, TK.UCHAR})
# Expressions a C-style cast binds to without parentheses (postfix and primary ones).
TIGHT_KINDS = frozenset(
    {
        CK.CALL_EXPR, CK.DECL_REF_EXPR, CK.PAREN_EXPR, CK.MEMBER_REF_EXPR,
        CK.ARRAY_SUBSCRIPT_EXPR, CK.INTEGER_LITERAL, CK.FLOATING_LITERAL,
        CK.STRING_LITERAL, CK.CHARACTER_LITERAL,
    }
)  # fmt: skip


@dataclass(frozen=True)
class CxxSource:
    """The program as C++ text, the edits that made it, and the renamed identifiers.

    `notes` lists C constructs found and left as they are (file:line:col each), so the
    caller can tell the user why nvcc might still reject the result."""

    text: str
    edits: tuple[Edit, ...]
    renamed: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def offset(self, source_offset: int) -> int:
        """The byte offset in `text` of a byte offset in the original source."""
        return shifted_offset(self.edits, source_offset)


class _Unsupported(Exception):
    """A construct this pass cannot rewrite safely; it becomes a note."""


def to_cxx(parsed: Parsed) -> CxxSource:
    """Rewrite a parsed C program into C++ that nvcc accepts; C++ input is returned as is."""
    if parsed.language == "c++":
        return CxxSource(text=parsed.text, edits=())
    unit = _Unit.of(parsed)
    renamed, leaf_edits = _token_edits(unit)
    board = _Board(parsed.source, list(leaf_edits))
    notes: list[str] = []
    jobs = [
        *_cast_jobs(unit),
        *_enum_arithmetic_jobs(unit),
        *_vla_jobs(unit),
        *_initializer_jobs(unit),
        *_decl_jobs(unit),
        *_nested_scope_jobs(unit, renamed),
        *_compound_literal_jobs(unit, renamed),
    ]
    for job in sorted(jobs, key=lambda j: (j.end - j.start, j.priority)):
        problem = _macro_problem(unit, job)
        if problem:
            notes.append(f"{unit.where(job.start)}: {job.reason} left as is: {problem}")
            continue
        try:
            hoisted = job.hoist(board.render) if job.hoist else []
            board.replace(job.start, job.end, job.build(board.render), job.reason)
            for offset, text in hoisted:
                board.insert(offset, text, job.reason)
        except _Unsupported as why:
            notes.append(f"{unit.where(job.start)}: {job.reason} left as is: {why}")
    edits = tuple(sorted_edits(board.edits))
    text = apply_edits(parsed.source, edits).decode("utf-8", errors="surrogateescape")
    notes += _unprototyped_calls(unit) + _header_keyword_notes(unit)
    return CxxSource(text=text, edits=edits, renamed=renamed, notes=tuple(notes))


# ---------------------------------------------------------------- the AST of the main file


@dataclass(frozen=True)
class _Token:
    """A token of the main file, read out of libclang once."""

    start: int
    end: int
    spelling: str
    kind: ci.TokenKind

    @staticmethod
    def of(token: ci.Token) -> _Token:
        extent = token.extent
        return _Token(_offset(extent.start), _offset(extent.end), token.spelling, token.kind)


@dataclass
class _Node:
    cursor: ci.Cursor
    kind: ci.CursorKind
    start: int
    end: int
    parent: _Node | None
    children: list[_Node]


@dataclass
class _Unit:
    parsed: Parsed
    roots: list[_Node]
    tokens: list[_Token]
    macro_uses: list[tuple[int, int]]
    header_macros: frozenset[str]

    @staticmethod
    def of(parsed: Parsed) -> _Unit:
        main = parsed.path
        roots: list[_Node] = []
        macro_uses: list[tuple[int, int]] = []
        header_macros: set[str] = set()
        for cursor in parsed.tu.cursor.get_children():
            file = cursor.location.file
            in_main = file is not None and file.name == main
            if cursor.kind == CK.MACRO_DEFINITION and not in_main:
                header_macros.add(cursor.spelling)
            elif cursor.kind == CK.MACRO_INSTANTIATION and in_main:
                macro_uses.append((cursor.extent.start.offset, cursor.extent.end.offset))
            elif in_main and not cursor.kind.is_preprocessing():
                roots.append(_build(cursor, None))
        file = parsed.tu.get_file(main)
        extent = ci.SourceRange.from_locations(
            ci.SourceLocation.from_offset(parsed.tu, file, 0),
            ci.SourceLocation.from_offset(parsed.tu, file, len(parsed.source)),
        )
        tokens = [_Token.of(t) for t in parsed.tu.get_tokens(extent=extent)]
        return _Unit(parsed, roots, tokens, macro_uses, frozenset(header_macros))

    def walk(self) -> Iterator[_Node]:
        return iter(self.nodes)

    @functools.cached_property
    def nodes(self) -> list[_Node]:
        """Every node of the main file, in source order (preorder)."""
        found: list[_Node] = []
        stack = list(reversed(self.roots))
        while stack:
            node = stack.pop()
            found.append(node)
            stack.extend(reversed(node.children))
        return found

    def tokens_in(self, start: int, end: int) -> list[_Token]:
        first = bisect.bisect_left(self.token_starts, start)
        last = bisect.bisect_left(self.token_starts, end)
        return self.tokens[first:last]

    @functools.cached_property
    def token_starts(self) -> list[int]:
        return [t.start for t in self.tokens]

    def where(self, offset: int) -> str:
        before = self.parsed.source[:offset]
        line = before.count(b"\n") + 1
        column = offset - (before.rfind(b"\n") + 1) + 1
        return f"{self.parsed.path}:{line}:{column}"


def _offset(location: ci.SourceLocation) -> int:
    """A location's byte offset, without the file, line and column objects that
    `SourceLocation.offset` builds each time (the walk reads hundreds of thousands)."""
    offset = ctypes.c_uint()
    ci.conf.lib.clang_getInstantiationLocation(location, None, None, None, ctypes.byref(offset))
    return offset.value


def _build(cursor: ci.Cursor, parent: _Node | None) -> _Node:
    extent = cursor.extent
    node = _Node(cursor, cursor.kind, _offset(extent.start), _offset(extent.end), parent, [])
    node.children = [_build(child, node) for child in cursor.get_children()]
    return node


def _strip_implicit(node: _Node) -> _Node:
    """The expression under implicit casts and parentheses."""
    while node.kind in (CK.UNEXPOSED_EXPR, CK.PAREN_EXPR) and len(node.children) == 1:
        node = node.children[0]
    return node


# ------------------------------------------------------------------- applying nested edits


class _Board:
    """Edits so far, kept sorted and non-overlapping; a new edit swallows the edits
    inside its range."""

    def __init__(self, source: bytes, edits: list[Edit]):
        self.source = source
        self.edits = sorted_edits(edits)
        self.keys = [(e.start, e.end) for e in self.edits]

    def _inside(self, start: int, end: int) -> tuple[int, int]:
        """Index range of the edits lying within [start, end)."""
        first = bisect.bisect_left(self.keys, (start, start))
        last = first
        while last < len(self.keys) and self.keys[last][1] <= end and self.keys[last][0] < end:
            last += 1
        return first, last

    def render(self, start: int, end: int) -> str:
        first, last = self._inside(start, end)
        inside = [_shift(e, -start) for e in self.edits[first:last]]
        text = apply_edits(self.source[start:end], inside)
        return text.decode("utf-8", errors="surrogateescape")

    def replace(self, start: int, end: int, text: str, reason: str) -> None:
        first, last = self._inside(start, end)
        before = self.edits[first - 1] if first > 0 else None
        after = self.edits[last] if last < len(self.edits) else None
        if before is not None and before.end > start:
            raise _Unsupported(f"it overlaps another rewrite ({before.reason})")
        if after is not None and after.start < end:
            raise _Unsupported(f"it overlaps another rewrite ({after.reason})")
        if start == end and (
            (before and before.start == before.end == start)
            or (after and after.start == after.end == start)
        ):
            raise _Unsupported("another insertion at the same place")
        self.edits[first:last] = [Edit(start, end, text, reason)]
        self.keys[first:last] = [(start, end)]

    def insert(self, offset: int, text: str, reason: str) -> None:
        """Insert before any text already inserted at `offset`."""
        index = bisect.bisect_left(self.keys, (offset, offset))
        if index < len(self.keys) and self.keys[index] == (offset, offset):
            merged = self.edits[index]
            self.edits[index] = Edit(offset, offset, text + merged.text, merged.reason)
            return
        before = self.edits[index - 1] if index > 0 else None
        if before is not None and before.end > offset:
            raise _Unsupported(f"it falls inside another rewrite ({before.reason})")
        self.edits.insert(index, Edit(offset, offset, text, reason))
        self.keys.insert(index, (offset, offset))


def _shift(edit: Edit, delta: int) -> Edit:
    return Edit(edit.start + delta, edit.end + delta, edit.text, edit.reason)


def _fixed(text: str) -> Callable[[Render], str]:
    return lambda _render: text


def _refuse(why: str) -> Callable[[Render], str]:
    """A job for a use that cannot be rewritten: it only leaves a note."""

    def build(_render: Render) -> str:
        raise _Unsupported(why)

    return build


@dataclass(frozen=True)
class _Job:
    """A replacement of [start, end) whose text is built from rendered sub-ranges."""

    start: int
    end: int
    build: Callable[[Render], str]
    reason: str
    priority: int = 0  # among equal ranges, lower goes first (inner rewrites before casts)
    node: _Node | None = None  # the expression rewritten, where there is one
    # Text to insert elsewhere at the same time, built after the replacement (a hoisted
    # declaration, whose initializer must be rendered with its own inner edits).
    hoist: Callable[[Render], list[tuple[int, str]]] | None = None


def _inside_expansion(node: _Node) -> bool:
    """A macro use whose expansion is bigger than `node`: the AST shows node's parents
    (not implicit conversions) with the very same range, the macro use's."""
    parent = node.parent
    while parent is not None and (parent.start, parent.end) == (node.start, node.end):
        if parent.kind != CK.UNEXPOSED_EXPR:
            return True
        parent = parent.parent
    return False


def _macro_problem(unit: _Unit, job: _Job) -> str | None:
    """Text produced by a macro expansion cannot be edited where it is used."""
    if job.node is not None and job.node.start >= job.node.end:
        return "it is spelled inside a macro argument"  # libclang gives it no range
    for start, end in unit.macro_uses:
        whole_use = (job.start, job.end) == (start, end)
        if whole_use and job.node is not None and _inside_expansion(job.node):
            return "it is inside a macro expansion"
        if start <= job.start and job.end <= end and (job.start, job.end) != (start, end):
            return "it is inside a macro expansion"
        if job.start < start < job.end < end or start < job.start < end < job.end:
            return "it crosses a macro expansion"
    return None


# ------------------------------------------------------------- renames and keyword tokens


def _token_edits(unit: _Unit) -> tuple[dict[str, str], list[Edit]]:
    identifiers = [t for t in unit.tokens if t.kind == ci.TokenKind.IDENTIFIER]
    taken = {t.spelling for t in identifiers} | _visible_names(unit)
    # Only file-scope names collide with the CUDA headers; locals merely shadow them.
    file_scope = {n.cursor.spelling for n in unit.roots if n.kind.is_declaration()}
    # A keyword the headers define (bool from stdbool.h, wchar_t from stddef.h) means
    # in C what the C++ keyword means: keep it.
    from_headers = unit.header_macros | _header_names(unit)
    renamed: dict[str, str] = {}
    for name in sorted({t.spelling for t in identifiers}):
        keyword = name in CXX_KEYWORDS and name not in from_headers
        reserved = name in CUDA_RESERVED and name in file_scope
        if keyword or reserved:
            renamed[name] = _fresh(name, taken)
            taken.add(renamed[name])
    edits = [
        Edit(t.start, t.end, renamed[t.spelling],
             f"'{t.spelling}' is reserved in C++/CUDA")
        for t in identifiers
        if t.spelling in renamed
    ]  # fmt: skip
    for token in unit.tokens:
        if token.kind == ci.TokenKind.KEYWORD and token.spelling in C11_KEYWORDS:
            edits.append(
                Edit(token.start, token.end,
                     C11_KEYWORDS[token.spelling], f"C keyword '{token.spelling}'")
            )  # fmt: skip
    return renamed, edits


def _header_keyword_notes(unit: _Unit) -> list[str]:
    """This pass edits only the main file: a C++ keyword declared as a name in one of the
    user's own headers must be renamed there."""
    notes = []
    for cursor in unit.parsed.tu.cursor.get_children():
        file = cursor.location.file
        if file is None or file.name == unit.parsed.path or cursor.location.is_in_system_header:
            continue
        members = list(cursor.get_children()) if cursor.kind in RECORD_DECLS else []
        for declared in (cursor, *members):
            if declared.spelling in CXX_KEYWORDS and declared.kind.is_declaration():
                location = declared.location
                notes.append(
                    f"{location.file.name}:{location.line}:{location.column}: "
                    f"'{declared.spelling}' is a C++ keyword: rename it in this header"
                )
    return notes


def _header_names(unit: _Unit) -> set[str]:
    """Names the headers declare at file scope or as struct members: the main file's
    uses of them must match the headers, which this pass does not edit."""
    names = set()
    for cursor in unit.parsed.tu.cursor.get_children():
        file = cursor.location.file
        if not cursor.spelling or file is None or file.name == unit.parsed.path:
            continue
        names.add(cursor.spelling)
        if cursor.kind in RECORD_DECLS:
            names.update(member.spelling for member in cursor.get_children())
    return names


def _visible_names(unit: _Unit) -> set[str]:
    """File-scope names the headers declare, so a fresh name cannot collide with them."""
    names = set(unit.header_macros)
    for cursor in unit.parsed.tu.cursor.get_children():
        if cursor.spelling:
            names.add(cursor.spelling)
    return names


def _fresh(name: str, taken: set[str]) -> str:
    candidate = f"{name}_"
    suffix = 1
    while candidate in taken:
        candidate = f"{name}_{suffix}"
        suffix += 1
    return candidate


# ------------------------------------------------------------------- implicit conversions


def _cast_jobs(unit: _Unit) -> Iterator[_Job]:
    for node in unit.walk():
        if node.kind != CK.UNEXPOSED_EXPR or len(node.children) != 1:
            continue
        child = node.children[0]
        target, source = node.cursor.type, child.cursor.type
        if _is_null_macro(unit, child):
            continue  # C++'s NULL converts to any pointer already
        if _is_pointer_conversion_cxx_rejects(target, source) or _is_int_to_enum(target, child):
            yield _cast_job(unit, node, child)


def _is_null_macro(unit: _Unit, node: _Node) -> bool:
    words = [t.spelling for t in unit.tokens_in(node.start, node.end)]
    return [w for w in words if w not in "()"] == ["NULL"]


def _is_pointer_conversion_cxx_rejects(target: ci.Type, source: ci.Type) -> bool:
    """C converts `void *` to any object pointer, and (with a warning) between unrelated
    pointer types or dropping qualifiers; C++ takes only T * -> void * and added const."""
    target, source = target.get_canonical(), source.get_canonical()
    if target.kind != TK.POINTER or source.kind != TK.POINTER:
        return False
    if _has_vla(target) or _has_vla(source):
        return False  # VLA parameters are flattened, with their own casts
    to, of = target.get_pointee(), source.get_pointee()
    if _drops_qualifiers(of, to):
        return True
    if to.kind == TK.VOID:
        return False
    return _unqualified(to) != _unqualified(of)


def _drops_qualifiers(source: ci.Type, target: ci.Type) -> bool:
    return (source.is_const_qualified() and not target.is_const_qualified()) or (
        source.is_volatile_qualified() and not target.is_volatile_qualified()
    )


def _unqualified(type_: ci.Type) -> str:
    """The canonical spelling without top-level qualifiers."""
    words = type_.get_canonical().spelling.split(" ")
    quals = {"const", "volatile", "restrict"}
    if type_.get_canonical().kind == TK.POINTER:
        while words and words[-1] in quals:
            words.pop()
        words[-1] = words[-1].rstrip()
    else:
        while words and words[0] in quals:
            words.pop(0)
    return " ".join(words)


def _is_int_to_enum(target: ci.Type, child: _Node) -> bool:
    if target.get_canonical().kind != TK.ENUM:
        return False
    source = child.cursor.type.get_canonical()
    if source.kind == TK.ENUM:
        return source.get_declaration() != target.get_canonical().get_declaration()
    if source.kind not in INTEGRAL_KINDS:
        return False
    # An enumerator of the same enum has type int in C but is already fine in C++.
    ref = _strip_implicit(child).cursor.referenced
    if ref is not None and ref.kind == CK.ENUM_CONSTANT_DECL:
        return ref.semantic_parent != target.get_canonical().get_declaration()
    return True


def _cast_job(unit: _Unit, node: _Node, child: _Node) -> _Job:
    target = node.cursor.type

    def build(render: Render) -> str:
        try:
            spelled = _type_text(target)
        except _Unsupported:
            spelled = _decltype_of_destination(node, render)
        inner = render(child.start, child.end)
        if _strip_implicit(child).kind in TIGHT_KINDS:
            return f"({spelled}){inner}"
        return f"({spelled})({inner})"

    reason = f"C converts '{child.cursor.type.spelling}' to '{target.spelling}' implicitly"
    return _Job(child.start, child.end, build, reason, priority=1, node=child)


def _decltype_of_destination(node: _Node, render: Render) -> str:
    """`decltype(x)` for the variable or member a value of a nameless type (an anonymous
    enum or struct) is stored into; decltype of those is their declared type."""
    parent = node.parent
    if parent is not None and parent.kind == CK.VAR_DECL and parent.cursor.spelling:
        return f"decltype({parent.cursor.spelling})"
    if parent is not None and parent.kind == CK.BINARY_OPERATOR and parent.children[-1] is node:
        destination = parent.children[0]
        if destination.kind in (CK.DECL_REF_EXPR, CK.MEMBER_REF_EXPR):
            return f"decltype({render(destination.start, destination.end)})"
    raise _Unsupported(f"the type '{node.cursor.type.spelling}' has no name to cast to")


def _type_text(type_: ci.Type) -> str:
    """A type's spelling usable in a C++ cast, or _Unsupported."""
    spelled = type_.spelling
    if "(unnamed" in spelled or "(anonymous" in spelled:
        raise _Unsupported(f"the type '{spelled}' has no name to cast to")
    if _has_vla(type_):
        raise _Unsupported(f"the type '{spelled}' is a variable-length array type")
    return " ".join("__restrict__" if word == "restrict" else word for word in spelled.split(" "))


def _has_vla(type_: ci.Type) -> bool:
    for _ in range(32):
        canonical = type_.get_canonical()
        if canonical.kind in (TK.VARIABLEARRAY, TK.DEPENDENTSIZEDARRAY):
            return True
        if canonical.kind == TK.POINTER:
            type_ = canonical.get_pointee()
        elif canonical.kind in ARRAY_KINDS:
            type_ = canonical.element_type
        else:
            return False
    return False


# Expressions that read the same object each time they are evaluated (no calls, no
# side effects), so a rewrite may spell them twice.
PURE_KINDS = frozenset(
    {
        CK.DECL_REF_EXPR, CK.MEMBER_REF_EXPR, CK.ARRAY_SUBSCRIPT_EXPR, CK.PAREN_EXPR,
        CK.UNEXPOSED_EXPR, CK.INTEGER_LITERAL,
    }
)  # fmt: skip


def _enum_arithmetic_jobs(unit: _Unit) -> Iterator[_Job]:
    """`e++` and `e += k` on an enum variable: C computes in int and converts back,
    C++ has no such operators for enums. Spell the conversion out."""
    for node in unit.walk():
        if node.cursor.type.get_canonical().kind != TK.ENUM or not node.children:
            continue
        words = [t.spelling for t in unit.tokens_in(node.start, node.end)]
        if node.kind == CK.UNARY_OPERATOR and words and {words[0], words[-1]} & {"++", "--"}:
            yield _step_job(unit, node, words)
        elif node.kind == CK.COMPOUND_ASSIGNMENT_OPERATOR and len(node.children) == 2:
            yield _compound_job(unit, node)


def _pure(node: _Node) -> bool:
    return node.kind in PURE_KINDS and all(_pure(child) for child in node.children)


def _value_unused(unit: _Unit, node: _Node) -> bool:
    parent = node.parent
    if parent is None or parent.kind == CK.COMPOUND_STMT:
        return parent is not None
    if parent.kind != CK.FOR_STMT:
        return False
    # Only the increment of `for (init; cond; inc)`: it follows the second `;`.
    semicolons = [t for t in unit.tokens_in(parent.start, node.start) if t.spelling == ";"]
    return len(semicolons) >= 2


def _step_job(unit: _Unit, node: _Node, words: list[str]) -> _Job:
    operand = node.children[0]
    prefix = words[0] in ("++", "--")
    sign = "+" if (words[0] if prefix else words[-1]) == "++" else "-"
    unused = _value_unused(unit, node)

    def build(render: Render) -> str:
        if not _pure(operand):
            raise _Unsupported("the operand has side effects")
        enum = _type_text(node.cursor.type)
        lhs = render(operand.start, operand.end)
        step = f"{lhs} = ({enum})({lhs} {sign} 1)"
        if prefix or unused:
            return f"({step})"
        undo = "-" if sign == "+" else "+"
        return f"(({enum})(({step}) {undo} 1))"

    reason = f"'{sign * 2}' on an enum, which C++ does not define"
    return _Job(node.start, node.end, build, reason, priority=0, node=node)


def _compound_job(unit: _Unit, node: _Node) -> _Job:
    lhs_node, rhs_node = node.children
    operator = unit.tokens_in(lhs_node.end, rhs_node.start)[0].spelling

    def build(render: Render) -> str:
        if not _pure(lhs_node):
            raise _Unsupported("the assigned expression has side effects")
        enum = _type_text(node.cursor.type)
        lhs, rhs = render(lhs_node.start, lhs_node.end), render(rhs_node.start, rhs_node.end)
        return f"({lhs} = ({enum})({lhs} {operator[:-1]} ({rhs})))"

    reason = f"'{operator}' on an enum, which C++ does not define"
    return _Job(node.start, node.end, build, reason, priority=0, node=node)


# ---------------------------------------------------------- variable-length array parameters


@dataclass(frozen=True)
class _ArrayParam:
    """An array parameter as written, `spec name[b0][b1]...` or `spec (*name)[b1]...`,
    with the byte ranges of each dimension (b0 is empty for the pointer form)."""

    node: _Node
    name: str
    name_range: tuple[int, int] | None  # None for an unnamed parameter
    spec: tuple[int, int]  # byte range of the declaration specifiers (and any `*`)
    brackets: tuple[tuple[int, int], ...]  # byte ranges of each dimension's contents
    qualifiers: tuple[str, ...]  # type qualifiers of the outer pointer
    variable: bool  # some dimension is not a constant


QUALIFIER_WORDS = {"restrict": "__restrict__", "const": "const", "volatile": "volatile"}


def _vla_jobs(unit: _Unit) -> Iterator[_Job]:
    flattened: dict[tuple[str, int], _ArrayParam] = {}
    for node in unit.walk():
        if node.kind != CK.FUNCTION_DECL:
            continue
        params = [c for c in node.children if c.kind == CK.PARM_DECL]
        for index, param in enumerate(params):
            array = _array_param(unit, param)
            if array is None:
                continue
            changed = _changed_dimension(unit, node, param)
            if changed:
                # C fixes the row length at entry; the flat subscripts would read the
                # variable each time, so a body that changes it keeps the parameter.
                why = f"the body changes '{changed}', one of its dimensions"
                reason = f"C99 variable-length array parameter '{array.name}'"
                yield _Job(param.start, param.end, _refuse(why), reason)
                continue
            yield _param_job(unit, array)
            if array.variable:
                flattened[(node.cursor.get_usr(), index)] = array
                if node.cursor.is_definition():
                    yield from _subscript_jobs(unit, node, array)
    yield from _call_site_jobs(unit, flattened)


MODIFYING = (CK.BINARY_OPERATOR, CK.COMPOUND_ASSIGNMENT_OPERATOR, CK.UNARY_OPERATOR)


def _changed_dimension(unit: _Unit, function: _Node, param: _Node) -> str | None:
    """A variable in the parameter's dimensions that the body assigns, steps or lets
    escape by address."""
    dimensions = {n.cursor.referenced for n in _descendants(param) if n.kind == CK.DECL_REF_EXPR}
    body = next((c for c in function.children if c.kind == CK.COMPOUND_STMT), None)
    if body is None or not dimensions:
        return None
    for node in _descendants(body):
        if node.kind not in MODIFYING or not node.children:
            continue
        target = _strip_implicit(node.children[0])
        if target.kind == CK.DECL_REF_EXPR and target.cursor.referenced in dimensions:
            if _modifies(unit, node, target):
                return target.cursor.spelling
    return None


def _modifies(unit: _Unit, operation: _Node, operand: _Node) -> bool:
    """Whether `operation` writes `operand` (its first operand) or takes its address."""
    if operation.kind == CK.COMPOUND_ASSIGNMENT_OPERATOR:
        return True
    words = [t.spelling for t in unit.tokens_in(operation.start, operation.end)]
    if operation.kind == CK.UNARY_OPERATOR:
        return words[0] in ("++", "--", "&") or words[-1] in ("++", "--")
    following = unit.tokens_in(operand.end, operation.end)[:1]
    return bool(following) and following[0].spelling == "="


def _array_param(unit: _Unit, param: _Node) -> _ArrayParam | None:
    type_ = param.cursor.type
    if type_.kind == TK.POINTER and _has_vla(type_):
        return _pointer_to_vla_param(unit, param)
    if type_.kind not in ARRAY_KINDS:
        return None
    tokens = unit.tokens_in(param.start, param.end)
    first = next((i for i, t in enumerate(tokens) if t.spelling == "["), None)
    if first is None:
        return None
    name = param.cursor.spelling
    named = first > 0 and tokens[first - 1].spelling == name and name != ""
    name_range = _token_range(tokens[first - 1]) if named else None
    spec_end = tokens[first - 1 if named else first].start
    brackets = _bracket_ranges(tokens[first:])
    words = [t.spelling for t in unit.tokens_in(*brackets[0])]
    qualifiers = tuple(QUALIFIER_WORDS[w] for w in words if w in QUALIFIER_WORDS)
    variable = _has_vla(type_)
    if not variable and not qualifiers and "static" not in words:
        return None  # an ordinary array parameter is valid C++
    spec = (param.start, spec_end)
    return _ArrayParam(param, name, name_range, spec, brackets, qualifiers, variable)


def _pointer_to_vla_param(unit: _Unit, param: _Node) -> _ArrayParam | None:
    """`double (*a)[n]`: a pointer to rows of a VLA, the same as `double a[][n]`."""
    tokens = unit.tokens_in(param.start, param.end)
    words = [t.spelling for t in tokens]
    if "(" not in words or ")" not in words:
        return None
    opened, closed = words.index("("), words.index(")")
    inside = words[opened + 1 : closed]
    name = param.cursor.spelling
    if inside[:1] != ["*"] or any(w not in QUALIFIER_WORDS for w in inside[1:] if w != name):
        return None
    named = bool(name) and inside[-1:] == [name]
    name_range = _token_range(tokens[closed - 1]) if named else None
    brackets = _bracket_ranges(tokens[closed + 1 :])
    if not brackets:
        return None
    qualifiers = tuple(QUALIFIER_WORDS[w] for w in inside[1:] if w in QUALIFIER_WORDS)
    spec = (param.start, tokens[opened].start)
    outer = (tokens[opened].start,) * 2  # the pointer level has no size
    return _ArrayParam(param, name, name_range, spec, (outer, *brackets), qualifiers, True)


def _token_range(token: _Token) -> tuple[int, int]:
    return token.start, token.end


def _bracket_ranges(tokens: list[_Token]) -> tuple[tuple[int, int], ...]:
    """Contents of consecutive top-level `[...]` groups at the start of `tokens`."""
    ranges: list[tuple[int, int]] = []
    depth, opened = 0, 0
    for token in tokens:
        if token.spelling == "[":
            if depth == 0:
                opened = token.end
            depth += 1
        elif token.spelling == "]":
            depth -= 1
            if depth == 0:
                ranges.append((opened, token.start))
        elif depth == 0:
            break
    return tuple(ranges)


def _param_job(unit: _Unit, array: _ArrayParam) -> _Job:
    def build(render: Render) -> str:
        spec = render(*array.spec).strip()
        name = render(*array.name_range) if array.name_range else ""
        declarator = " ".join(word for word in (*array.qualifiers, name) if word)
        if array.variable or len(array.brackets) == 1:
            return f"{spec} *{declarator}"
        rest = "".join(f"[{render(*b)}]" for b in array.brackets[1:])
        return f"{spec} (*{declarator}){rest}"

    kind = "variable-length array" if array.variable else "qualified array"
    reason = f"C99 {kind} parameter '{array.name}' becomes a pointer"
    return _Job(array.node.start, array.node.end, build, reason, priority=0)


def _subscript_jobs(unit: _Unit, function: _Node, array: _ArrayParam) -> Iterator[_Job]:
    rank = len(array.brackets)
    param = array.node.cursor
    for node in _descendants(function):
        if node.kind != CK.DECL_REF_EXPR or node.cursor.referenced != param:
            continue
        chain = _subscript_chain(node, rank)
        if chain and rank > 1:
            yield _linearize_job(node, chain, array)
        elif rank > 1 and not chain and not _passed_as_is(node):
            # `a + 1` or `*a` step over whole rows in C; on the flat pointer they would
            # step over elements, so this use cannot stay as written.
            reason = f"'{array.name}' used as a pointer to rows"
            yield _Job(node.start, node.end, _refuse("no flat equivalent"), reason, node=node)


def _descendants(node: _Node) -> Iterator[_Node]:
    stack = list(node.children)
    while stack:
        current = stack.pop()
        yield current
        stack.extend(current.children)


def _passed_as_is(ref: _Node) -> bool:
    """A use that means the same on the flat pointer: a call argument, or sizeof."""
    current = ref
    while current.parent is not None and current.parent.kind in (
        CK.UNEXPOSED_EXPR,
        CK.PAREN_EXPR,
    ):
        current = current.parent
    parent = current.parent
    if parent is None:
        return False
    if parent.kind == CK.CALL_EXPR:
        return parent.children.index(current) > 0
    return parent.kind == CK.CXX_UNARY_EXPR


def _subscript_chain(ref: _Node, rank: int) -> list[_Node]:
    """The `a[i][j]...` subscripts applied to `ref`, innermost first."""
    chain: list[_Node] = []
    current = ref
    while len(chain) < rank:
        parent = current.parent
        while parent is not None and parent.kind in (CK.UNEXPOSED_EXPR, CK.PAREN_EXPR):
            current, parent = parent, parent.parent
        if parent is None or parent.kind != CK.ARRAY_SUBSCRIPT_EXPR:
            break
        if not parent.children or parent.children[0] is not current:
            break  # `i[a]`: the array is the index operand
        chain.append(parent)
        current = parent
    return chain


def _linearize_job(ref: _Node, chain: list[_Node], array: _ArrayParam) -> _Job:
    outer = chain[-1]

    def build(render: Render) -> str:
        indices = [render(s.children[1].start, s.children[1].end) for s in chain]
        dims = [render(*b).strip() for b in array.brackets]
        linear = indices[0]
        for dim, index in zip(dims[1:], indices[1:], strict=False):
            linear = f"({linear}) * ({dim}) + ({index})"
        name = render(ref.start, ref.end)
        if len(chain) == len(dims):
            return f"{name}[{linear}]"
        rest = " * ".join(f"({d})" for d in dims[len(chain) :])
        return f"({name} + ({linear}) * {rest})"

    reason = f"subscript of the flattened array parameter '{array.name}'"
    return _Job(outer.start, outer.end, build, reason, priority=0, node=outer)


def _call_site_jobs(unit: _Unit, flattened: dict[tuple[str, int], _ArrayParam]) -> Iterator[_Job]:
    if not flattened:
        return
    for node in unit.walk():
        if node.kind != CK.CALL_EXPR or node.cursor.referenced is None:
            continue
        usr = node.cursor.referenced.get_usr()
        args = node.children[1:]
        for index, arg in enumerate(args):
            array = flattened.get((usr, index))
            if array is None or len(array.brackets) < 2:
                continue
            if _strip_implicit(arg).cursor.type.get_canonical().kind == TK.POINTER and not (
                _points_to_array(_strip_implicit(arg).cursor.type)
            ):
                continue  # already a flat pointer (a flattened parameter passed on)
            yield _flat_cast_job(arg, array)


def _points_to_array(type_: ci.Type) -> bool:
    canonical = type_.get_canonical()
    return canonical.kind == TK.POINTER and canonical.get_pointee().kind in ARRAY_KINDS


def _flat_cast_job(arg: _Node, array: _ArrayParam) -> _Job:
    def build(render: Render) -> str:
        spec = render(*array.spec).strip()
        inner = render(arg.start, arg.end)
        if _strip_implicit(arg).kind in TIGHT_KINDS:
            return f"({spec} *){inner}"
        return f"({spec} *)({inner})"

    reason = f"an array passed to the flattened parameter '{array.name}'"
    return _Job(arg.start, arg.end, build, reason, priority=1, node=arg)


# ------------------------------------------------------------------ designated initializers


def _initializer_jobs(unit: _Unit) -> Iterator[_Job]:
    for node in unit.walk():
        if node.kind == CK.INIT_LIST_EXPR and _needs_positional(unit, node):
            yield _Job(
                node.start,
                node.end,
                functools.partial(_positional, unit, node),
                "designated initializer C++ does not accept",
                priority=0,
                node=node,
            )


def _is_designated(node: _Node) -> bool:
    return (
        node.kind == CK.UNEXPOSED_EXPR
        and node.cursor.type.kind == TK.VOID
        and (len(node.children) >= 2)
    )


def _needs_positional(unit: _Unit, node: _Node) -> bool:
    """g++ (nvcc's host compiler) takes only single field designators in field order."""
    fields = _field_names(node.cursor.type)
    position = 0
    for item in node.children:
        if not _is_designated(item):
            position += 1
            continue
        designators = item.children[:-1]
        if len(designators) != 1 or designators[0].kind != CK.MEMBER_REF:
            return True
        name = designators[0].cursor.spelling
        if name not in fields or fields.index(name) < position:
            return True
        position = fields.index(name) + 1
    return False


def _field_names(type_: ci.Type) -> list[str]:
    canonical = type_.get_canonical()
    if canonical.kind != TK.RECORD:
        return []
    return [f.spelling for f in canonical.get_fields() if f.spelling or not f.is_bitfield()]


@dataclass
class _Aggregate:
    """Initializer values of one struct, union or array, by position."""

    type_: ci.Type
    values: dict[int, _Aggregate | tuple[int, int]] = field(default_factory=dict)


def _positional(unit: _Unit, node: _Node, render: Render) -> str:
    root = _Aggregate(node.cursor.type)
    position = 0
    for item in node.children:
        if _is_designated(item):
            _assign(unit, root, item.children[:-1], item.children[-1])
            position = _member_index(unit, root.type_, item.children[0]) + 1
        else:
            _check_member_value(root.type_, position, item)
            root.values[position] = (item.start, item.end)
            position += 1
    return _emit(root, render)


def _member_index(unit: _Unit, type_: ci.Type, designator: _Node) -> int:
    canonical = type_.get_canonical()
    if designator.kind == CK.MEMBER_REF:
        names = _field_names(canonical)
        if designator.cursor.spelling not in names:
            raise _Unsupported(f"member '{designator.cursor.spelling}' is not a direct member")
        return names.index(designator.cursor.spelling)
    if canonical.kind not in ARRAY_KINDS:
        raise _Unsupported("array designator on a non-array")
    words = [t.spelling for t in unit.tokens_in(designator.start, designator.end)]
    if "..." in [t.spelling for t in unit.tokens_in(designator.start - 1, designator.end + 4)]:
        raise _Unsupported("GNU range designators")
    return _constant(designator, words)


def _constant(node: _Node, words: list[str]) -> int:
    ref = _strip_implicit(node).cursor.referenced
    if ref is not None and ref.kind == CK.ENUM_CONSTANT_DECL:
        return int(ref.enum_value)
    if len(words) == 1:
        try:
            return int(words[0].rstrip("uUlL"), 0)
        except ValueError:
            pass
    raise _Unsupported(f"array designator '{' '.join(words)}' is not a literal")


def _member_type(type_: ci.Type, index: int) -> ci.Type:
    canonical = type_.get_canonical()
    if canonical.kind in ARRAY_KINDS:
        return canonical.element_type
    fields = [f for f in canonical.get_fields() if f.spelling or not f.is_bitfield()]
    return fields[index].type


def _assign(unit: _Unit, aggregate: _Aggregate, designators: list[_Node], value: _Node) -> None:
    index = _member_index(unit, aggregate.type_, designators[0])
    if len(designators) == 1:
        _check_member_value(aggregate.type_, index, value)
        aggregate.values[index] = (value.start, value.end)
        return
    inner = aggregate.values.get(index)
    if not isinstance(inner, _Aggregate):
        if inner is not None:
            raise _Unsupported("a designator into a member that already has a value")
        inner = _Aggregate(_member_type(aggregate.type_, index))
        aggregate.values[index] = inner
    _assign(unit, inner, designators[1:], value)


def _check_member_value(type_: ci.Type, index: int, value: _Node) -> None:
    """A bare value for an aggregate member means brace elision, which we do not redo."""
    canonical = type_.get_canonical()
    if canonical.kind == TK.RECORD and index >= len(_field_names(canonical)):
        raise _Unsupported("more values than members")
    member = _member_type(type_, index).get_canonical()
    if member.kind not in (TK.RECORD, *ARRAY_KINDS) or value.kind == CK.INIT_LIST_EXPR:
        return
    written = _strip_implicit(value)
    if written.kind == CK.STRING_LITERAL and member.kind in ARRAY_KINDS:
        return
    if written.cursor.type.get_canonical() != member:
        raise _Unsupported("brace elision mixed with designators")


def _emit(aggregate: _Aggregate, render: Render) -> str:
    canonical = aggregate.type_.get_canonical()
    if canonical.kind == TK.RECORD and canonical.get_declaration().kind == CK.UNION_DECL:
        return _emit_union(aggregate, render)
    if not aggregate.values:
        return "{}"
    parts = []
    for index in range(max(aggregate.values) + 1):
        value = aggregate.values.get(index)
        if value is None:
            parts.append("{}")
        elif isinstance(value, _Aggregate):
            parts.append(_emit(value, render))
        else:
            parts.append(render(*value).strip())
    return "{" + ", ".join(parts) + "}"


def _emit_union(aggregate: _Aggregate, render: Render) -> str:
    if len(aggregate.values) > 1:
        raise _Unsupported("several members of one union initialized")
    if not aggregate.values:
        return "{}"
    index, value = next(iter(aggregate.values.items()))
    text = _emit(value, render) if isinstance(value, _Aggregate) else render(*value).strip()
    if index == 0:
        return "{" + text + "}"
    return "{." + _field_names(aggregate.type_)[index] + " = " + text + "}"


# ------------------------------------------------------------------ declarations C++ rejects


def _decl_jobs(unit: _Unit) -> Iterator[_Job]:
    yield from _bypassed_init_jobs(unit)
    yield from _char_sizeof_jobs(unit)
    yield from _alignas_jobs(unit)
    yield from _string_fill_jobs(unit)
    yield from _prototype_jobs(unit)
    yield from _tentative_jobs(unit)


# Statements whose sub-statements run conditionally or repeatedly: a compound literal
# in such a body is hoisted inside the body (wrapped in braces), never out of it.
CONTROL_KINDS = frozenset(
    {
        CK.IF_STMT, CK.FOR_STMT, CK.WHILE_STMT, CK.DO_STMT, CK.SWITCH_STMT, CK.CASE_STMT,
        CK.DEFAULT_STMT, CK.LABEL_STMT,
    }
)  # fmt: skip
SEQUENCING = {"&&", "||", ","}  # operators whose right side may run later, or not at all


def _compound_literal_jobs(unit: _Unit, renamed: dict[str, str]) -> Iterator[_Job]:
    """A compound literal is an object living to the end of its block in C, but a
    temporary in C++, where taking its address (or letting an array one decay) is an
    error. Declare it as a named variable just before its statement."""
    taken = {t.spelling for t in unit.tokens} | _visible_names(unit) | set(renamed.values())
    for node in unit.walk():
        if node.kind != CK.COMPOUND_LITERAL_EXPR or not _used_as_object(unit, node):
            continue
        name = _fresh("compound_literal", taken)
        taken.add(name)
        reason = "a compound literal used as an object, a temporary in C++"
        place = _hoist_anchor(unit, node)
        if place is None:
            why = "it is evaluated conditionally or after other parts of its statement"
            yield _Job(node.start, node.end, _refuse(why), reason, node=node)
            continue
        hoist = functools.partial(_hoisted_declaration, unit, node, *place, name)
        yield _Job(node.start, node.end, _fixed(name), reason, node=node, hoist=hoist)


def _used_as_object(unit: _Unit, node: _Node) -> bool:
    if node.cursor.type.get_canonical().kind in ARRAY_KINDS:
        return True
    parent = node.parent
    while parent is not None and parent.kind == CK.PAREN_EXPR:
        parent = parent.parent
    if parent is None or parent.kind != CK.UNARY_OPERATOR:
        return False
    return unit.tokens_in(parent.start, parent.end)[0].spelling == "&"


def _hoist_anchor(unit: _Unit, node: _Node) -> tuple[_Node, bool] | None:
    """The statement before which `node` can be declared, and whether that statement
    needs braces (it is the body of an if, a loop or a label, not in a block). None when
    moving it there would change whether or when its initializer runs."""
    current = node
    while current.parent is not None and current.parent.kind != CK.COMPOUND_STMT:
        parent = current.parent
        if parent.kind == CK.CONDITIONAL_OPERATOR or _is_sequencing(unit, parent):
            return None
        if parent.kind in CONTROL_KINDS:
            return (current, True) if current in _bodies(parent) else None
        current = parent
    return current, False


def _is_sequencing(unit: _Unit, node: _Node) -> bool:
    if node.kind != CK.BINARY_OPERATOR or len(node.children) != 2:
        return False
    between = unit.tokens_in(node.children[0].end, node.children[1].start)
    return bool(between) and between[0].spelling in SEQUENCING


def _bodies(statement: _Node) -> list[_Node]:
    children = statement.children
    if statement.kind == CK.IF_STMT:
        return children[1:]
    if statement.kind == CK.DO_STMT:
        return children[:1]
    return children[-1:]


def _hoisted_declaration(
    unit: _Unit, node: _Node, anchor: _Node, braced: bool, name: str, render: Render
) -> list[tuple[int, str]]:
    tokens = unit.tokens_in(node.start, node.end)
    close = _closing_paren(tokens, 0)
    if close is None:
        raise _Unsupported("its type was not found")
    written = render(tokens[0].end, close - 1).strip()
    if "(" in written:
        raise _Unsupported("its type needs a declarator this pass does not build")
    bracket = written.find("[")
    if bracket >= 0:
        declarator = f"{written[:bracket].rstrip()} {name}{written[bracket:]}"
    else:
        declarator = f"{written} {name}"
    storage = "static " if anchor.parent is None else ""
    value = node.children[-1]
    declaration = f"{storage}{declarator} = {render(value.start, value.end)}; "
    if not braced:
        return [(anchor.start, declaration)]
    following = unit.tokens_in(anchor.end, len(unit.parsed.source))
    end = following[0].end if following and following[0].spelling == ";" else anchor.end
    return [(anchor.start, "{ " + declaration), (end, " }")]


RECORD_DECLS = (CK.STRUCT_DECL, CK.UNION_DECL)


def _nested_scope_jobs(unit: _Unit, renamed: dict[str, str]) -> Iterator[_Job]:
    """A struct, union or enum declared inside a struct is at file scope in C and
    nested in C++: outside its parent, `struct B` and enumerator `X` become `A::B`
    and `A::X`."""
    for node in unit.walk():
        if node.kind == CK.TYPE_REF:
            declaration = node.cursor.referenced
        elif node.kind == CK.DECL_REF_EXPR and node.cursor.referenced is not None:
            declaration = node.cursor.referenced
            if declaration.kind != CK.ENUM_CONSTANT_DECL:
                continue
            declaration = declaration.semantic_parent  # the enum; its constants go with it
        else:
            continue
        if declaration is None or declaration.kind not in (*RECORD_DECLS, CK.ENUM_DECL):
            continue
        if declaration.location.is_in_system_header:
            continue  # system headers declare their C++ shapes under __cplusplus
        # C puts the declaration at file scope (its semantic parent); its lexical parent
        # is the struct C++ nests it in.
        parent = declaration.lexical_parent
        if parent is None or parent.kind not in RECORD_DECLS or _inside(node, parent):
            continue
        yield _Job(node.start, node.end, functools.partial(_qualified, node, parent, renamed),
                   "a type declared inside a struct, nested there in C++", node=node)  # fmt: skip


def _inside(node: _Node, record: ci.Cursor) -> bool:
    file = record.extent.start.file
    same_file = file is not None and file.name == node.cursor.location.file.name
    return same_file and record.extent.start.offset <= node.start < record.extent.end.offset


def _qualified(node: _Node, parent: ci.Cursor, renamed: dict[str, str], render: Render) -> str:
    names = []
    scope: ci.Cursor | None = parent
    while scope is not None and scope.kind in RECORD_DECLS:
        names.append(_record_name(scope, renamed))
        scope = scope.lexical_parent
    return "::".join(reversed(names)) + "::" + render(node.start, node.end)


def _record_name(record: ci.Cursor, renamed: dict[str, str]) -> str:
    """A struct's tag, or the typedef name of an anonymous one."""
    if record.spelling and not record.is_anonymous() and record.spelling.isidentifier():
        return renamed.get(record.spelling, record.spelling)
    for cursor in record.translation_unit.cursor.get_children():
        if cursor.kind == CK.TYPEDEF_DECL:
            underlying = cursor.underlying_typedef_type.get_canonical().get_declaration()
            if underlying == record:
                return renamed.get(cursor.spelling, cursor.spelling)
    raise _Unsupported("its enclosing struct has no name")


LABELLED = (CK.LABEL_STMT, CK.CASE_STMT, CK.DEFAULT_STMT)


def _bypassed_init_jobs(unit: _Unit) -> Iterator[_Job]:
    """C lets `goto` and `case` jump past an initialized declaration, C++ does not.
    Split `int y = e;` into `int y; y = e;`, which C++ allows to be jumped over; close
    the scope of an array or struct before the jump's target instead."""
    for function in unit.walk():
        if function.kind != CK.FUNCTION_DECL or not function.cursor.is_definition():
            continue
        nodes = list(_descendants(function))
        labels = {n.cursor.spelling: n for n in nodes if n.kind == CK.LABEL_STMT}
        jumps = [
            (goto.start, labels[goto.children[0].cursor.spelling].start)
            for goto in nodes
            if goto.kind == CK.GOTO_STMT and goto.children
            if goto.children[0].cursor.spelling in labels
        ]
        for node in nodes:
            if node.kind != CK.DECL_STMT:
                continue
            bypass = _bypass(unit, node, jumps)
            if bypass is None:
                continue
            if _splittable(unit, node):
                yield _split_job(unit, node)
            else:
                yield _scope_closing_job(unit, node, *bypass)


def _bypass(unit: _Unit, decl: _Node, jumps: list[tuple[int, int]]) -> tuple[_Node, int] | None:
    """The declaration's scope and the first jump target past it that a jump from
    outside reaches without running its initializer; None when there is none."""
    scope = decl.parent
    while scope is not None and scope.kind in LABELLED:
        scope = scope.parent
    variables = [c for c in decl.children if c.kind == CK.VAR_DECL]
    if scope is None or not any(_initialized_at_run_time(unit, v) for v in variables):
        return None
    after = range(decl.end, scope.end)
    targets = [target for source, target in jumps if target in after and source not in after]
    switch = scope.parent
    if scope.kind == CK.COMPOUND_STMT and switch is not None and switch.kind == CK.SWITCH_STMT:
        targets += [n.start for n in _descendants(scope) if _case_of(n) is switch]
    targets = [t for t in targets if t in after]
    return (scope, min(targets)) if targets else None


def _initialized_at_run_time(unit: _Unit, variable: _Node) -> bool:
    """Jumping past a static local is fine in C++; past an automatic one with an
    initializer is not."""
    words = [t.spelling for t in unit.tokens_in(variable.start, variable.end)]
    return _has_initializer(variable) and "static" not in words


def _case_of(node: _Node) -> _Node | None:
    """The switch a case or default label belongs to."""
    if node.kind not in (CK.CASE_STMT, CK.DEFAULT_STMT):
        return None
    parent = node.parent
    while parent is not None and parent.kind != CK.SWITCH_STMT:
        parent = parent.parent
    return parent


def _splittable(unit: _Unit, decl: _Node) -> bool:
    """One non-const scalar: it can be declared, then assigned."""
    variables = [c for c in decl.children if c.kind == CK.VAR_DECL]
    if len(variables) != 1 or not variables[0].children:
        return False
    type_ = variables[0].cursor.type.get_canonical()
    if type_.kind in (TK.RECORD, *ARRAY_KINDS) or type_.is_const_qualified():
        return False
    return _top_level_equals(unit, variables[0]) is not None


def _split_job(unit: _Unit, decl: _Node) -> _Job:
    variable = next(c for c in decl.children if c.kind == CK.VAR_DECL)
    reason = "an initialized declaration that a goto or case label jumps over"

    def build(render: Render) -> str:
        equals = _top_level_equals(unit, variable)
        value = variable.children[-1]
        name = _name_token(unit, variable, equals)
        if equals is None or name is None:
            raise _Unsupported("its initializer was not found")
        declared = render(decl.start, equals).rstrip()
        assigned = f"{render(*name)} = {render(value.start, value.end)}"
        return f"{declared}; {assigned};"

    return _Job(decl.start, decl.end, build, reason, priority=0)


def _scope_closing_job(unit: _Unit, decl: _Node, scope: _Node, target: int) -> _Job:
    """`{ T x = init; ... }` ending just before the statement holding the jump target,
    when nothing from there on uses the variables."""
    reason = "an initialized array or struct that a goto or case label jumps over"
    stop = next((c for c in scope.children if c.start <= target < c.end), None)
    if stop is None or stop.start <= decl.start:
        return _Job(decl.start, decl.end, _refuse("the jump target was not found"), reason)
    variables = [c.cursor for c in decl.children if c.kind == CK.VAR_DECL]
    used_later = any(
        n.kind == CK.DECL_REF_EXPR and n.start >= stop.start and n.cursor.referenced in variables
        for n in _descendants(scope)
    )
    if used_later:
        why = "it is used after the place the jump lands"
        return _Job(decl.start, decl.end, _refuse(why), reason)

    def build(render: Render) -> str:
        text = render(decl.start, stop.start)
        body = text.rstrip()
        return "{ " + body + " }" + text[len(body) :]

    return _Job(decl.start, stop.start, build, reason, priority=0)


def _top_level_equals(unit: _Unit, variable: _Node) -> int | None:
    depth = 0
    for token in unit.tokens_in(variable.start, variable.end):
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(token.spelling, 0)
        if depth == 0 and token.spelling == "=":
            return token.start
    return None


def _name_token(unit: _Unit, variable: _Node, before: int | None) -> tuple[int, int] | None:
    names = [
        t for t in unit.tokens_in(variable.start, before or variable.end)
        if t.spelling == variable.cursor.spelling
    ]  # fmt: skip
    if not names:
        return None
    return names[-1].start, names[-1].end


def _char_sizeof_jobs(unit: _Unit) -> Iterator[_Job]:
    """A character constant has type int in C and char in C++: `sizeof 'a'` is 4 vs 1."""
    for node in unit.walk():
        if node.kind != CK.CXX_UNARY_EXPR or len(node.children) != 1:
            continue
        words = [t.spelling for t in unit.tokens_in(node.start, node.start + 6)]
        if words[:1] == ["sizeof"] and _strip_implicit(node.children[0]).kind == (
            CK.CHARACTER_LITERAL
        ):
            reason = "sizeof of a character constant, an int in C"
            yield _Job(node.start, node.end, _fixed("sizeof(int)"), reason, node=node)


def _alignas_jobs(unit: _Unit) -> Iterator[_Job]:
    """C allows `static _Alignas(16) double a[4]`; C++ takes `alignas` only in front."""
    declarations = [n for n in unit.walk() if n.kind in (CK.VAR_DECL, CK.FIELD_DECL)]
    for index, token in enumerate(unit.tokens):
        if token.kind != ci.TokenKind.KEYWORD or token.spelling != "_Alignas":
            continue
        start = token.start
        owner = min(
            (n for n in declarations if n.start <= start < n.end),
            key=lambda n: n.end - n.start,
            default=None,
        )
        close = _closing_paren(unit.tokens, index + 1)
        if owner is None or owner.start == start or close is None:
            continue
        build = functools.partial(_alignas_first, owner.start, start, close)
        yield _Job(owner.start, close, build, "C11 _Alignas inside the declaration specifiers")


def _alignas_first(start: int, alignas: int, close: int, render: Render) -> str:
    return render(alignas, close) + " " + render(start, alignas).rstrip()


def _closing_paren(tokens: list[_Token], index: int) -> int | None:
    """End offset of the `)` matching the `(` at tokens[index]."""
    if index >= len(tokens) or tokens[index].spelling != "(":
        return None
    depth = 0
    for token in tokens[index:]:
        depth += {"(": 1, ")": -1}.get(token.spelling, 0)
        if depth == 0:
            return token.end
    return None


def _string_fill_jobs(unit: _Unit) -> Iterator[_Job]:
    """`char s[3] = "abc"` drops the NUL in C and is an error in C++: spell the chars.
    The same holds for a string initializing a char array member or element."""
    for node in unit.walk():
        if node.kind == CK.VAR_DECL and node.children:
            targets = [(node.children[-1], node.cursor.type)]
        elif node.kind == CK.INIT_LIST_EXPR:
            targets = list(_initialized_members(unit, node))
        else:
            continue
        for value, type_ in targets:
            job = _string_fill_job(unit, _strip_implicit(value), type_)
            if job is not None:
                yield job


def _initialized_members(unit: _Unit, node: _Node) -> Iterator[tuple[_Node, ci.Type]]:
    """Each value of an initializer list with the type of what it initializes, as far as
    plain positions and single designators tell (brace elision ends the walk)."""
    aggregate = node.cursor.type
    position = 0
    for item in node.children:
        value = item
        if _is_designated(item):
            if len(item.children) != 2:
                return
            try:
                position = _member_index(unit, aggregate, item.children[0])
            except _Unsupported:
                return
            value = item.children[-1]
        if not _has_member(aggregate, position):
            return
        member = _member_type(aggregate, position)
        written = _strip_implicit(value)
        elided = member.get_canonical().kind == TK.RECORD and value.kind != CK.INIT_LIST_EXPR
        if elided and written.cursor.type.get_canonical() != member.get_canonical():
            return
        yield value, member
        position += 1


def _has_member(type_: ci.Type, index: int) -> bool:
    canonical = type_.get_canonical()
    if canonical.kind == TK.CONSTANTARRAY:
        return index < canonical.element_count
    if canonical.kind == TK.RECORD:
        return index < len(_field_names(canonical))
    return canonical.kind == TK.INCOMPLETEARRAY


def _string_fill_job(unit: _Unit, literal: _Node, type_: ci.Type) -> _Job | None:
    canonical = type_.get_canonical()
    if literal.kind != CK.STRING_LITERAL or canonical.kind != TK.CONSTANTARRAY:
        return None
    if canonical.element_type.kind not in CHAR_KINDS:
        return None
    data = _string_bytes(unit, literal)
    if data is None or len(data) != canonical.element_count:
        return None
    chars = ", ".join(_char_literal(b) for b in data)
    reason = "string literal fills the char array with no room for its NUL"
    return _Job(literal.start, literal.end, _fixed("{" + chars + "}"), reason, node=literal)


def _string_bytes(unit: _Unit, literal: _Node) -> bytes | None:
    pieces = []
    for token in unit.tokens_in(literal.start, literal.end):
        text = token.spelling
        if not (text.startswith('"') and text.endswith('"')):
            return None  # wide, UTF-8 or macro-built literals: leave them
        pieces.append(codecs.escape_decode(text[1:-1].encode("latin-1", "backslashreplace"))[0])
    return b"".join(pieces)


def _char_literal(byte: int) -> str:
    if 32 <= byte < 127 and chr(byte) not in "'\\":
        return f"'{chr(byte)}'"
    return f"'\\{byte:03o}'"


def _prototype_jobs(unit: _Unit) -> Iterator[_Job]:
    """K&R definitions and `int f();` declarations get the parameter list of the definition."""
    for node in unit.walk():
        if node.kind != CK.FUNCTION_DECL:
            continue
        definition = node.cursor.get_definition()
        if node.cursor.is_definition():
            job = _knr_job(unit, node)
        elif node.cursor.type.kind == TK.FUNCTIONNOPROTO and definition is not None:
            job = _no_prototype_job(unit, node, definition)
        else:
            job = None
        if job is not None:
            yield job


def _unprototyped_calls(unit: _Unit) -> list[str]:
    """`int f();` called with arguments and defined elsewhere: C++ reads `()` as no
    parameters, and the parameter types are nowhere in this file to fix it."""
    notes = []
    for node in unit.walk():
        callee = node.cursor.referenced if node.kind == CK.CALL_EXPR else None
        if callee is None or callee.type.kind != TK.FUNCTIONNOPROTO or len(node.children) < 2:
            continue
        if callee.get_definition() is None:
            notes.append(
                f"{unit.where(node.start)}: '{callee.spelling}' is called with arguments but "
                "declared without a prototype and not defined here: declare its parameters"
            )
    return notes


def _paren_range(unit: _Unit, node: _Node) -> tuple[int, int] | None:
    """Offsets of the `(` and `)` of a function declarator."""
    tokens = unit.tokens_in(node.start, node.end)
    names = [i for i, t in enumerate(tokens) if t.spelling == node.cursor.spelling]
    for i in names:
        if i + 1 < len(tokens) and tokens[i + 1].spelling == "(":
            depth = 0
            for token in tokens[i + 1 :]:
                depth += {"(": 1, ")": -1}.get(token.spelling, 0)
                if depth == 0:
                    return tokens[i + 1].start, token.end
    return None


def _knr_job(unit: _Unit, node: _Node) -> _Job | None:
    params = [c for c in node.children if c.kind == CK.PARM_DECL]
    parens = _paren_range(unit, node)
    body = next((c for c in node.children if c.kind == CK.COMPOUND_STMT), None)
    if not params or parens is None or body is None or params[0].start < parens[1]:
        return None
    declared = ", ".join(_declare(p.cursor.type, p.cursor.spelling) for p in params)
    reason = f"K&R definition of '{node.cursor.spelling}'"
    return _Job(parens[0], body.start, _fixed(f"({declared}) "), reason)


def _no_prototype_job(unit: _Unit, node: _Node, definition: ci.Cursor) -> _Job | None:
    parens = _paren_range(unit, node)
    params = list(definition.get_arguments())
    if parens is None or not params:
        return None
    declared = ", ".join(_declare(p.type, p.spelling) for p in params)
    reason = f"'{node.cursor.spelling}()' declared without a prototype"
    return _Job(parens[0], parens[1], _fixed(f"({declared})"), reason)


def _declare(type_: ci.Type, name: str) -> str:
    """A declaration of `name` with `type_` (handles pointers to functions and arrays)."""
    spelled = _type_text(type_)
    for marker in ("(*)", "(&)"):
        if marker in spelled:
            return spelled.replace(marker, f"({marker[1]}{name})", 1)
    return f"{spelled}{name}" if spelled.endswith("*") else f"{spelled} {name}"


def _tentative_jobs(unit: _Unit) -> Iterator[_Job]:
    """`int x; int x = 1;` at file scope defines x twice in C++: the extra ones get extern."""
    by_name: dict[str, list[_Node]] = {}
    starts: dict[int, int] = {}
    for node in unit.roots:
        if node.kind == CK.VAR_DECL:
            by_name.setdefault(node.cursor.get_usr(), []).append(node)
            starts[node.start] = starts.get(node.start, 0) + 1
    for nodes in by_name.values():
        if len(nodes) < 2:
            continue
        initialized = [n for n in nodes if _has_initializer(n)]
        keep = initialized[0] if initialized else nodes[-1]
        for node in nodes:
            words = [t.spelling for t in unit.tokens_in(node.start, node.end)]
            if node is keep or "extern" in words or "static" in words or starts[node.start] > 1:
                continue
            reason = f"tentative definition of '{node.cursor.spelling}'"
            yield _Job(node.start, node.start, _fixed("extern "), reason)


def _has_initializer(node: _Node) -> bool:
    return any(c.kind.is_expression() for c in node.children) and "=" in _spellings(node)


def _spellings(node: _Node) -> list[str]:
    return [t.spelling for t in node.cursor.get_tokens()]
