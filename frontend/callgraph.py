"""Calls: which callees are pure, which keep a caller's state through a pointer, which do
I/O, and how often main reaches each function."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import TypeVar

import clang.cindex as ci

from cudaify.frontend.access import Call, Walk
from cudaify.frontend.facts import Function
from cudaify.frontend.loops import CK, kids, start_of, unwrap

TK = ci.TypeKind

# Pure functions of their arguments: a loop calling them stays parallel.
MATH_PURE = {
    name + suffix
    for name in (
        "sqrt",
        "cbrt",
        "exp",
        "exp2",
        "expm1",
        "log",
        "log2",
        "log10",
        "log1p",
        "pow",
        "sin",
        "cos",
        "tan",
        "asin",
        "acos",
        "atan",
        "atan2",
        "sinh",
        "cosh",
        "tanh",
        "asinh",
        "acosh",
        "atanh",
        "fabs",
        "floor",
        "ceil",
        "round",
        "trunc",
        "fmod",
        "fmin",
        "fmax",
        "fma",
        "hypot",
        "erf",
        "erfc",
        "tgamma",
        "lgamma",
        "copysign",
        "rint",
        "nearbyint",
        "remainder",
        "fdim",
        "lround",
        "llround",
        "lrint",
    )
    for suffix in ("", "f", "l")
} | {
    "abs",
    "labs",
    "llabs",
    "min",
    "max",
    "isnan",
    "isinf",
    "isfinite",
    "signbit",
    "strlen",
    "strcmp",
    "strncmp",
    "memcmp",
    "toupper",
    "tolower",
    "isdigit",
    "isalpha",
    "isspace",
    "size",
    "length",
    "empty",
}

# Calls with effects outside the program's arrays (I/O, allocation, process state,
# hidden random state): a loop calling them stays sequential.
IO_CALLS = {
    "printf",
    "fprintf",
    "sprintf",
    "snprintf",
    "vprintf",
    "vfprintf",
    "puts",
    "fputs",
    "putchar",
    "fputc",
    "putc",
    "scanf",
    "fscanf",
    "sscanf",
    "getchar",
    "getc",
    "fgetc",
    "fgets",
    "gets",
    "fopen",
    "fclose",
    "fread",
    "fwrite",
    "fflush",
    "fseek",
    "ftell",
    "rewind",
    "perror",
    "exit",
    "_Exit",
    "abort",
    "quick_exit",
    "atexit",
    "malloc",
    "calloc",
    "realloc",
    "free",
    "rand",
    "srand",
    "random",
    "srandom",
    "drand48",
    "srand48",
    "time",
    "clock",
    "clock_gettime",
    "gettimeofday",
    "system",
    "remove",
    "rename",
    "__assert_fail",
    "__assert",
    "longjmp",
    "setjmp",
    "signal",
    "raise",
    "operator<<",
    "operator>>",
    "getline",
    "push_back",
    "emplace_back",
    "resize",
    "reserve",
    "clear",
    "insert",
    "erase",
}


def short_name(name: str) -> str:
    return name.split("::")[-1]


def call_kind(name: str, pure_users: set[str]) -> str:
    """pure | io | impure."""
    short = short_name(name)
    if name in pure_users or short in MATH_PURE:
        return "pure"
    if short in IO_CALLS or name in IO_CALLS:
        return "io"
    return "impure"


def judged_calls(
    call: Call, pure_users: set[str], state: Mapping[str, tuple[int, ...]] | None = None
) -> list[tuple[str, str]]:
    """(what to name, pure | io | impure) for one call site: a modelled standard-library
    operation is pure; a local lambda is what its body calls (or impure with the reason
    its body is not a function of its captures); a function of the program is pure only
    when its body is, whatever its name, or when it keeps state through pointers (`state`,
    see `state_functions`) and is given the address of a scalar variable for each: the
    caller's `&x` is its read and write of x, which the caller's analysis judges; anything
    else by the name lists below."""
    if call.model == "pure":
        return []
    if state and call.user and call.name in state and _given_scalars(call, state[call.name]):
        return []
    if call.why:
        return [(f"{call.name} ({call.why})", "impure")]
    if call.model == "lambda":
        called = [(name, call_kind(name, pure_users)) for name in call.inner]
        return [(f"{call.name} (its lambda calls {name})", kind) for name, kind in called]
    unknown = call.user and call.name not in pure_users or call.in_std
    if unknown and short_name(call.name) not in IO_CALLS:
        return [(call.name, "impure")]  # a name like `max` or `size` proves nothing here
    return [(call.name, call_kind(call.name, pure_users))]


def pure_functions(definitions: list[ci.Cursor], walks: dict[int, Walk]) -> set[str]:
    """User functions that only compute from their arguments: no array or pointer
    access outside their own local arrays, no writes to globals or statics, no reads of
    mutable globals, and only pure callees. Recursion counts as impure."""
    candidates: dict[str, Walk] = {fn.spelling: walks[fn.hash] for fn in definitions}

    def judge(name: str, pure: Mapping[str, bool]) -> bool | None:
        walk = candidates[name]
        if not _locally_pure(walk) or name in {c.name for c in walk.calls}:
            return None
        known = set(pure)
        calls = (kind for c in walk.calls for _, kind in judged_calls(c, known))
        return True if all(kind == "pure" for kind in calls) else None

    return set(_grown(candidates, judge))


V = TypeVar("V")


def _grown(names: Iterable[str], judge: Callable[[str, Mapping[str, V]], V | None]) -> dict[str, V]:
    """The names that get a verdict, each with it, where `judge(name, found)` gives a
    name's verdict from those found so far (None: none yet): asked again while the last
    round found one, since a function's verdict may hang on its callees'."""
    found: dict[str, V] = {}
    changed = True
    while changed:
        changed = False
        for name in names:
            if name not in found:
                verdict = judge(name, found)
                if verdict is not None:
                    found[name] = verdict
                    changed = True
    return found


def state_functions(
    definitions: list[ci.Cursor], walks: dict[int, Walk], pure: set[str]
) -> dict[str, tuple[int, ...]]:
    """User functions whose only effect outside their locals is on the scalars their
    pointer parameters point at (`*p = *p * a + c; return *p;`: a random generator whose
    state the caller keeps), name -> the positions of those parameters. Each such
    parameter is only read, and dereferenced only as `*p` or `p[0]`, or passed on to a
    state position of another one; the rest of the body is as a pure function's. A call
    that gives the address of a scalar variable at each position then reads and writes
    that variable and nothing else (`judged_calls`)."""
    candidates = {fn.spelling: fn for fn in definitions if fn.spelling not in pure}

    def judge(name: str, state: Mapping[str, tuple[int, ...]]) -> tuple[int, ...] | None:
        fn = candidates[name]
        return _state_positions(fn, walks[fn.hash], pure, state) or None

    return _grown(candidates, judge)


def _state_positions(
    fn: ci.Cursor, walk: Walk, pure: set[str], state: Mapping[str, tuple[int, ...]]
) -> tuple[int, ...]:
    """The positions of `fn`'s state parameters when `fn` is a state function (see
    `state_functions`) given the ones known so far, else ()."""
    params = list(fn.get_arguments())
    scalar_pointers = {
        p.hash: k
        for k, p in enumerate(params)
        if p.type.get_canonical().kind == TK.POINTER
        and _scalar(p.type.get_canonical().get_pointee())
    }
    if not scalar_pointers:
        return ()
    local = {d.decl for d in walk.decls if not d.is_static}
    used: set[int] = set()
    for access in walk.accesses:
        if access.root_decl in local and access.kind == "local_array":
            continue
        index = access.indices[0] if len(access.indices) == 1 else None
        if access.root_decl not in scalar_pointers or not (isinstance(index, int) and index == 0):
            return ()  # other memory (a local pointer may hold any), or more than a scalar
        used.add(access.root_decl)
    # a state parameter's value is only passed on, to a state position (checked below)
    passes = [(call, _passed_pointers(call, scalar_pointers)) for call in walk.calls]
    passed_at = {
        start_of(unwrap(argument))
        for call, passed in passes
        for k, argument in enumerate(_arguments(call))
        if k in passed
    }
    for ref in walk.refs:
        if ref.decl in scalar_pointers:
            if ref.mode != "read" or ref.start not in passed_at:
                return ()  # changed, its address taken, kept or compared
            continue
        if ref.is_global and not ref.type.startswith("const "):
            return ()
        if "->" in ref.name or (
            ref.mode in ("write", "readwrite") and ref.decl not in local and ref.is_pointer
        ):
            return ()
    for call, passed in passes:
        if call.name == fn.spelling:
            return ()  # recursion
        positions = state.get(call.name, ()) if call.user else ()
        if passed:
            if not set(passed) <= set(positions) or not _given_scalars(
                call, tuple(k for k in positions if k not in passed), local
            ):
                return ()
            used.update(passed.values())
        elif not all(kind == "pure" for _, kind in judged_calls(call, pure, state)):
            return ()
    return tuple(sorted(scalar_pointers[h] for h in used))


@dataclass(frozen=True)
class Advance:
    """What one call of a state function does to the scalar its parameter points at:
    `steps` times `x = x * multiplier + increment` in x's unsigned type (`type`, its C
    spelling), which wraps modulo 2^bits: a linear congruential generator."""

    multiplier: int
    increment: int
    steps: int
    type: str


_UNSIGNED = {TK.UINT: "unsigned int", TK.ULONG: "unsigned long", TK.ULONGLONG: "unsigned long long"}
_INTEGER = r"(\d+)[uUlL]*"
# `*p = *p * A + C`, `*p = A * *p + C`, with optional parentheses around the product
_AFFINE = re.compile(rf"^\*(\w+)=\(?(?:\*\1\*{_INTEGER}|{_INTEGER}\*\*\1)\)?\+{_INTEGER}$")
BRANCHES = {
    CK.IF_STMT,
    CK.SWITCH_STMT,
    CK.FOR_STMT,
    CK.WHILE_STMT,
    CK.DO_STMT,
    CK.CONDITIONAL_OPERATOR,
    CK.GOTO_STMT,
}


def advances(
    definitions: list[ci.Cursor],
    walks: dict[int, Walk],
    state: Mapping[str, tuple[int, ...]],
    text: Callable[[ci.Cursor], str],
) -> dict[str, Advance]:
    """The state functions (see `state_functions`) of one state parameter whose every call
    advances it by the same affine step a fixed number of times: straight-line bodies (no
    branch, loop or `&&`/`||` around anything) that assign `*p = *p * A + C` with integer
    literals, for an unsigned *p, and call others of them with p. `text`: a cursor's
    source. What makes a loop that carries such a state parallel: iteration t starts from
    the state before the loop advanced t times its calls' steps (`jump` in the kernels)."""
    by_name = {fn.spelling: fn for fn in definitions if state.get(fn.spelling) == (0,)}

    def judge(name: str, found: Mapping[str, Advance]) -> Advance | None:
        return _advance(by_name[name], walks[by_name[name].hash], found, text)

    return _grown(by_name, judge)


def _advance(
    fn: ci.Cursor, walk: Walk, known: Mapping[str, Advance], text: Callable[[ci.Cursor], str]
) -> Advance | None:
    params = list(fn.get_arguments())
    if len(params) != 1:
        return None
    pointee = params[0].type.get_canonical().get_pointee()
    type_ = _UNSIGNED.get(pointee.kind)
    if type_ is None or _branches(fn):
        return None
    steps: list[tuple[int, int]] = []
    for access in walk.accesses:
        if access.mode == "write":
            statement = "".join(text(_assignment(fn, access.start) or fn).split())
            match = _AFFINE.match(statement)
            if match is None or match.group(1) != params[0].spelling:
                return None
            multiplier = int(match.group(2) or match.group(3))
            steps.append((multiplier, int(match.group(4))))
        elif access.mode != "read":
            return None
    for call in walk.calls:
        if not _passed_pointers(call, {params[0].hash: 0}):
            continue  # a pure call (state_functions checked the rest)
        callee = known.get(call.name)
        if callee is None or callee.type != type_:
            return None  # the state goes where its advance is not known
        steps += [(callee.multiplier, callee.increment)] * callee.steps
    if not steps or len(set(steps)) != 1:
        return None
    multiplier, increment = steps[0]
    return Advance(multiplier, increment, len(steps), type_)


def branching(node: ci.Cursor) -> bool:
    """Whether what is inside `node` may run conditionally or repeatedly: a branch, a loop,
    `?:`, or an expression holding `&&`/`||`."""
    return node.kind in BRANCHES or (
        node.kind == CK.BINARY_OPERATOR
        and any(t.spelling in ("&&", "||") for t in node.get_tokens())
    )


def _branches(cursor: ci.Cursor) -> bool:
    """Whether anything in `cursor` runs conditionally or repeatedly."""
    return any(branching(child) or _branches(child) for child in kids(cursor))


def _assignment(fn: ci.Cursor, start: int) -> ci.Cursor | None:
    """The assignment expression of `fn` whose left side starts at byte `start`."""
    for child in fn.walk_preorder():
        if child.kind == CK.BINARY_OPERATOR and start_of(child) == start:
            operands = kids(child)
            if len(operands) == 2 and start_of(operands[0]) == start:
                return child
    return None


def _scalar(pointee: ci.Type) -> bool:
    """An arithmetic scalar that may be written: not const, not a pointer or aggregate."""
    return not pointee.is_const_qualified() and pointee.kind in _ARITHMETIC


_ARITHMETIC = {
    TK.BOOL,
    TK.CHAR_U,
    TK.UCHAR,
    TK.USHORT,
    TK.UINT,
    TK.ULONG,
    TK.ULONGLONG,
    TK.CHAR_S,
    TK.SCHAR,
    TK.SHORT,
    TK.INT,
    TK.LONG,
    TK.LONGLONG,
    TK.FLOAT,
    TK.DOUBLE,
    TK.LONGDOUBLE,
}


def _arguments(call: Call) -> list[ci.Cursor]:
    return list(call.cursor.get_arguments()) if call.cursor.kind == CK.CALL_EXPR else []


def _passed_pointers(call: Call, pointers: Mapping[int, int]) -> dict[int, int]:
    """The arguments of `call` that are one of `pointers` (a declaration's hash), as
    position in the call -> that declaration."""
    passed = {}
    for k, argument in enumerate(_arguments(call)):
        inner = unwrap(argument)
        if inner.kind == CK.DECL_REF_EXPR and inner.referenced is not None:
            if inner.referenced.hash in pointers:
                passed[k] = inner.referenced.hash
    return passed


def _given_scalars(call: Call, positions: tuple[int, ...], within: set[int] | None = None) -> bool:
    """Whether `call` gives `&x`, x a scalar variable (one declared in `within` when it is
    given), at each of `positions`."""
    arguments = _arguments(call)
    for k in positions:
        if k >= len(arguments):
            return False
        inner = unwrap(arguments[k])
        operand = kids(inner)
        if (
            inner.kind != CK.UNARY_OPERATOR
            or inner.type.get_canonical().kind != TK.POINTER
            or len(operand) != 1
        ):
            return False
        target = unwrap(operand[0])
        if target.kind != CK.DECL_REF_EXPR or target.referenced is None:
            return False
        pointee = arguments[k].type.get_canonical().get_pointee()
        if (
            not _scalar(target.type.get_canonical())
            or pointee.kind != target.type.get_canonical().kind
        ):
            return False  # a cast to another type would reach past the variable
        if within is not None and target.referenced.hash not in within:
            return False
    return True


def _locally_pure(walk: Walk) -> bool:
    local = {d.decl for d in walk.decls if not d.is_static}
    for access in walk.accesses:
        if access.root_decl not in local or access.kind == "unknown":
            return False
        if access.is_write and access.kind == "pointer":
            return False  # through a local pointer, which may hold a parameter's
    for ref in walk.refs:
        if ref.is_global and not ref.type.startswith("const "):
            return False
        if "->" in ref.name or (
            ref.mode in ("write", "readwrite") and ref.decl not in local and ref.is_pointer
        ):
            return False
    return True


LOOP_FACTOR = 100  # a call inside a loop is assumed to run this many times per loop level


def estimate_calls(functions: list[Function]) -> list[Function]:
    """Static call counts from main: each enclosing loop multiplies by LOOP_FACTOR."""
    by_name = {fn.name: fn for fn in functions}
    counts: dict[str, int] = {name: 0 for name in by_name}
    if "main" not in by_name:
        return functions

    def visit(name: str, times: int, path: tuple[str, ...]) -> None:
        counts[name] = counts.get(name, 0) + times
        for site in by_name[name].calls:
            if site.callee in by_name and site.callee not in path:
                visit(site.callee, times * LOOP_FACTOR**site.loop_depth, path + (name,))

    visit("main", 1, ())
    return [replace(fn, estimated_calls=min(counts.get(fn.name, 0), 10**12)) for fn in functions]
