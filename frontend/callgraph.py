"""Calls: which callees are pure, which do I/O, and how often main reaches each function."""

from __future__ import annotations

from dataclasses import replace

import clang.cindex as ci

from cudaify.frontend.access import Call, Walk
from cudaify.frontend.facts import Function

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


def judged_calls(call: Call, pure_users: set[str]) -> list[tuple[str, str]]:
    """(what to name, pure | io | impure) for one call site: a modelled standard-library
    operation is pure; a local lambda is what its body calls (or impure with the reason
    its body is not a function of its captures); a function of the program is pure only
    when its body is, whatever its name; anything else by the name lists below."""
    if call.model == "pure":
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
    pure: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, walk in candidates.items():
            if name in pure or not _locally_pure(walk):
                continue
            callees = {c.name for c in walk.calls}
            if name in callees:
                continue
            if all(kind == "pure" for c in walk.calls for _, kind in judged_calls(c, pure)):
                pure.add(name)
                changed = True
    return pure


def _locally_pure(walk: Walk) -> bool:
    local = {d.decl for d in walk.decls if not d.is_static}
    for access in walk.accesses:
        if access.root_decl not in local or access.kind == "unknown":
            return False
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
