"""Array sizes from allocations at the call sites.

A callee indexing a pointer parameter in a way the analysis cannot bound (`bins[data[i]]`)
still needs a size for its data transfer. When every call passes, for that parameter, a
local pointer that holds one allocation, `malloc(n * sizeof(T))`, `calloc(n, sizeof(T))`
or `new T[n]`, and passes that same element count `n` as another argument, the callee's
own parameter for it is the size: the whole allocation, which covers every element the
callee can touch without undefined behaviour.

Sound only under conditions checked here: the pointer and the count's variables are
never written after their declaration in the caller (so the allocation is what arrives,
and `n` is still its size); the callee never writes the count parameter; the element
types agree; and the callee's name is only ever called (never taken as a function
pointer, which could call it from anywhere)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

import clang.cindex as ci

from cudaify.frontend.access import Walk, norm
from cudaify.frontend.facts import ArrayData, Function
from cudaify.frontend.loops import (
    CK,
    Source,
    end_of,
    evaluate_int,
    is_integer_type,
    kids,
    start_of,
    unwrap,
)

TK = ci.TypeKind
WRITES = ("write", "readwrite", "addr")


@dataclass(frozen=True)
class Allocation:
    count: str  # C text of the element count, normalised (no spaces)
    elem: str  # canonical element type
    constant: bool = False  # the count is an integer literal (a compile-time constant)
    # The count's value when it is an integer constant expression (`NNODES`, a macro): a
    # callee that is not passed the count can still be given the literal.
    value: int | None = None


def allocations(src: Source, walk: Walk) -> dict[str, Allocation]:
    """Local pointers of one function that hold a single allocation, by name."""
    written = {r.decl for r in walk.refs if r.mode in WRITES}
    names = [d.name for d in walk.decls]
    found: dict[str, Allocation] = {}
    for decl in walk.decls:
        cursor = decl.cursor
        if names.count(decl.name) > 1 or decl.is_static:
            continue  # which of two same-named locals a call passes is not read here
        kind = cursor.type.get_canonical().kind
        if kind == TK.CONSTANTARRAY and cursor.type.get_canonical().get_array_size() > 0:
            canonical = cursor.type.get_canonical()
            size = str(canonical.get_array_size())
            found[decl.name] = Allocation(size, element_spelling(canonical.element_type), True)
            continue
        if decl.decl in written or kind != TK.POINTER:
            continue
        init = [c for c in kids(cursor) if c.kind.is_expression()]
        if len(init) != 1:
            continue
        pointee = cursor.type.get_canonical().get_pointee()
        if pointee.get_size() <= 0:
            continue
        counted = _count_of(src, unwrap(init[0]), pointee.get_size(), written)
        if counted is not None:
            count, value = counted
            found[decl.name] = Allocation(count, element_spelling(pointee), value=value)
            continue
        constant = _constant_count(unwrap(init[0]), pointee.get_size())
        if constant is not None:
            found[decl.name] = Allocation(str(constant), element_spelling(pointee), True)
    return found


def _constant_count(value: ci.Cursor, elem_size: int) -> int | None:
    """The element count of `malloc(BYTES)` when BYTES is an integer constant expression
    (`sizeof(int) * (size_t)N * (D + 1)` with macros N and D) that whole elements fill."""
    if value.kind != CK.CALL_EXPR or value.spelling != "malloc":
        return None
    args = [c for c in kids(value) if c.kind.is_expression()][1:]
    total = evaluate_int(args[0]) if len(args) == 1 else None
    if total is None or total <= 0 or total % elem_size:
        return None
    return total // elem_size


def _count_of(
    src: Source, value: ci.Cursor, elem_size: int, written: set[int]
) -> tuple[str, int | None] | None:
    """The element count of an allocation expression, when its variables stay fixed, and
    its value when it is an integer constant expression."""
    factor = None
    if value.kind == CK.CXX_NEW_EXPR:
        pointee = value.type.get_canonical().get_pointee()
        # new T[n] has the count first; new T[n]() and new T[n]{...} add an initializer
        sizes = [c for c in kids(value) if c.kind.is_expression()]
        if pointee.get_size() == elem_size and sizes and "[" in src.text(value):
            factor = sizes[0] if is_integer_type(sizes[0].type) else None
    elif value.kind == CK.CALL_EXPR and value.spelling in ("malloc", "calloc"):
        args = [c for c in kids(value) if c.kind.is_expression()][1:]
        factor = _times_size(src, args, elem_size, value.spelling)
    if factor is None or not _fixed(factor, written):
        return None
    constant = evaluate_int(factor)
    return bare(src.text(factor)), constant if constant is not None and constant > 0 else None


def bare(text: str) -> str:
    """Normalised C text without spaces or parentheses around the whole."""
    text = norm(text)
    while text.startswith("(") and text.endswith(")") and _balanced(text[1:-1]):
        text = text[1:-1]
    return text


def _balanced(text: str) -> bool:
    depth = 0
    for char in text:
        depth += (char == "(") - (char == ")")
        if depth < 0:
            return False
    return depth == 0


def _times_size(src: Source, args: list[ci.Cursor], elem_size: int, fn: str) -> ci.Cursor | None:
    """The factor beside `sizeof(T)`: malloc(n * sizeof(T)), calloc(n, sizeof(T))."""
    if fn == "calloc" and len(args) == 2:
        pair = args
    elif fn == "malloc" and len(args) == 1 and elem_size == 1:
        return args[0]  # malloc(n) of chars: bytes are elements
    elif fn == "malloc" and len(args) == 1:
        product = unwrap(args[0])
        if product.kind != CK.BINARY_OPERATOR or len(kids(product)) != 2:
            return None
        lhs, rhs = kids(product)
        between = src.slice(end_of(lhs), start_of(rhs)).strip()
        if between != "*":
            return None
        pair = [lhs, rhs]
    else:
        return None
    for count, size in (pair, pair[::-1]):
        if unwrap(size).kind == CK.CXX_UNARY_EXPR and evaluate_int(size) == elem_size:
            return count
    return None


def _fixed(expression: ci.Cursor, written: set[int]) -> bool:
    """Integer-valued, and every variable in it is never written after its declaration."""
    stack = [expression]
    while stack:
        node = stack.pop()
        if node.kind == CK.DECL_REF_EXPR:
            ref = node.referenced
            if ref is None or ref.hash in written or not _steady(ref):
                return False
        elif node.kind in (CK.CALL_EXPR, CK.MEMBER_REF_EXPR, CK.ARRAY_SUBSCRIPT_EXPR):
            return False
        stack.extend(kids(node))
    return True


def _steady(ref: ci.Cursor) -> bool:
    """A parameter, enumerator, constant or automatic local: nothing outside the caller
    changes it (a mutable global could change between the allocation and the call)."""
    if ref.kind in (CK.PARM_DECL, CK.ENUM_CONSTANT_DECL):
        return True
    if ref.kind != CK.VAR_DECL:
        return False
    if ref.type.is_const_qualified():
        return True
    parent = ref.semantic_parent
    local = parent is not None and parent.kind != CK.TRANSLATION_UNIT
    return local and ref.storage_class != ci.StorageClass.STATIC


def element_spelling(t: ci.Type) -> str:
    canonical = t.get_canonical()
    words = [w for w in canonical.spelling.split() if w not in ("const", "volatile")]
    return " ".join(words)


def only_called(src: Source, name: str) -> bool:
    """Every occurrence of the name is followed by `(`: called or declared, never a pointer."""
    spellings = src.token_spellings
    for k, spelling in enumerate(spellings):
        if spelling == name and (k + 1 >= len(spellings) or spellings[k + 1] != "("):
            return False
    return True


def sized_from_callers(
    src: Source,
    functions: list[Function],
    walks: dict[str, Walk],
    param_elems: dict[str, tuple[str | None, ...]],
) -> list[Function]:
    """Functions whose unbounded pointer parameters get their callers' allocation sizes.
    `walks` and `param_elems` (canonical pointee of each parameter) are keyed by name."""
    if not any(_has_unsized(fn) for fn in functions):
        return functions
    allocated = {name: allocations(src, walk) for name, walk in walks.items()}
    return [
        _sized(src, fn, functions, walks, allocated, param_elems.get(fn.name, ()))
        if _has_unsized(fn)
        else fn
        for fn in functions
    ]


def _has_unsized(fn: Function) -> bool:
    nests = any(a.count is None and a.kind == "pointer" for _, data in fn.data for a in data)
    regions = any(a.count is None and a.kind == "pointer" for s in fn.scops for a in s.arrays)
    return nests or regions


def _sized(src, fn: Function, functions, walks, allocated, elems) -> Function:
    names = [f.name for f in functions]
    if names.count(fn.name) != 1 or not only_called(src, fn.name) or fn.name not in walks:
        return fn  # overloads or a function pointer: the call sites are not all known
    if len(elems) != len(fn.params):
        return fn
    sites = [
        (caller.name, site)
        for caller in functions
        for site in caller.calls
        if site.callee == fn.name and len(site.arguments) == len(fn.params)
    ]
    every = [s for f in functions for s in f.calls if s.callee == fn.name]
    if not sites or len(sites) != len(every):
        return fn
    written = {r.name for r in walks[fn.name].refs if r.mode in WRITES}
    sizes: dict[str, str] = {}
    for k, param in enumerate(fn.params):
        if not param.is_pointer or param.name in written or elems[k] is None:
            continue
        size = _common_size(k, fn, sites, allocated, written, elems[k])
        if size is not None:
            sizes[param.name] = size
    if not sizes:
        return fn
    data = tuple((line, tuple(_with_size(a, sizes) for a in arrays)) for line, arrays in fn.data)
    scops = tuple(
        replace(scop, arrays=tuple(_with_size(a, sizes) for a in scop.arrays)) for scop in fn.scops
    )
    return replace(fn, data=data, scops=scops)


def _common_size(k, fn: Function, sites, allocated, written: set[str], elem: str) -> str | None:
    """The callee parameter every call site's allocation count for argument k matches
    (else the allocation's constant size, when every call passes the same one)."""
    chosen: str | None = None
    for caller, site in sites:
        base, offset = _base_and_offset(site.arguments[k])
        allocation = allocated.get(caller, {}).get(base)
        if allocation is None or allocation.elem != elem:
            return None
        name = _site_size(k, fn, site.arguments, allocation, offset, written)
        if name is None or chosen not in (None, name):
            return None
        chosen = name
    return chosen


def _site_size(
    k: int,
    fn: Function,
    arguments: tuple[str, ...],
    allocation: Allocation,
    offset: str,
    written: set[str],
) -> str | None:
    """The extent of argument k at one call, as the callee can name it."""
    if allocation.constant and not offset:
        # every call passes the same fixed-size array: its size is the extent
        return allocation.count
    # `p + off` reaches count - off elements: both are evaluated at the call
    count = allocation.count if not offset else bare(f"{allocation.count}-({offset})")
    plain = allocation.count if not offset else f"{allocation.count}-{offset}"
    for j, argument in enumerate(arguments):
        parameter = fn.params[j]
        if j == k or parameter.is_pointer or parameter.name in written:
            continue
        if bare(argument) in (count, plain):
            return parameter.name
    if allocation.value is not None and not offset:
        # the count is not passed but is a compile-time constant (a macro): the whole
        # allocation, as the literal the callee can use
        return str(allocation.value)
    return None


def _base_and_offset(argument: str) -> tuple[str, str]:
    """`p` -> (p, ""); `p + off` -> (p, off) for a name p and an offset that is a name or
    an integer literal (an offset with operators of its own is not split)."""
    text = bare(argument)
    parts = text.split("+")
    if len(parts) == 2 and all(re.fullmatch(r"\w+", part) for part in parts):
        return parts[0], parts[1]
    return text, ""


def _with_size(array: ArrayData, sizes: dict[str, str]) -> ArrayData:
    if array.count is not None or array.kind != "pointer" or array.name not in sizes:
        return array
    # the whole allocation, a superset of what the loop writes: copied in as well, so
    # elements the loop leaves alone come back unchanged
    access = "readwrite" if array.access == "write" else array.access
    return replace(array, count=sizes[array.name], first="0", access=access)
