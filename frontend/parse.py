"""Parsing with libclang, with the user's compiler flags and the system's headers.

The pip libclang wheel ships no clang resource headers (stddef.h, stdarg.h, float.h...),
so a bare parse of `#include <stdio.h>` fails on a machine with only gcc. The robust fix
is to ask the system compiler for its own include search path (`gcc -E -v`), which holds
both the libc headers and gcc's freestanding headers, and hand that list to clang as
`-isystem` directories, in gcc's order. C++ gets g++'s list (libstdc++ included)."""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path

import clang.cindex as ci

from cudaify.core import toolchain
from cudaify.core.errors import InputError, SourceError

C_SUFFIXES = {".c"}
CXX_SUFFIXES = {".cpp", ".cc", ".cxx", ".c++", ".cp", ".C"}


@dataclass(frozen=True)
class Parsed:
    """A parsed translation unit with the exact bytes it was parsed from."""

    path: str
    source: bytes
    language: str  # "c" | "c++"
    flags: tuple[str, ...]
    tu: ci.TranslationUnit

    @property
    def text(self) -> str:
        return self.source.decode("utf-8", errors="surrogateescape")


def language_of(path: str, flags: tuple[str, ...] = ()) -> str:
    """`-x c|c++` wins, then the file suffix."""
    for i, flag in enumerate(flags):
        if flag == "-x" and i + 1 < len(flags):
            return "c++" if flags[i + 1].startswith("c++") else "c"
        if flag.startswith("-x") and len(flag) > 2:
            return "c++" if flag[2:].startswith("c++") else "c"
    suffix = Path(path).suffix
    return "c++" if suffix in CXX_SUFFIXES or suffix == ".C" else "c"


@functools.lru_cache(maxsize=4)
def system_include_dirs(language: str) -> tuple[str, ...]:
    """The system compiler's include search list, in order."""
    compiler = toolchain.find_tool("g++" if language == "c++" else "gcc")
    lang = "c++" if language == "c++" else "c"
    done = toolchain.run([compiler, "-E", "-x", lang, "-", "-v"], stdin=b"", timeout=30)
    dirs: list[str] = []
    inside = False
    for line in done.errors().splitlines():
        if line.startswith("#include <...> search starts here"):
            inside = True
            continue
        if line.startswith("End of search list"):
            break
        if inside:
            path = line.strip().removesuffix(" (framework directory)")
            if os.path.isdir(path):
                dirs.append(os.path.normpath(path))
    return tuple(dirs)


def clang_args(language: str, flags: tuple[str, ...]) -> list[str]:
    """Arguments for libclang: the language, the user's flags, the system headers."""
    args = ["-x", "c++" if language == "c++" else "c"]
    if not any(flag.startswith("-std=") for flag in flags):
        args.append("-std=c++17" if language == "c++" else "-std=gnu11")
    skip_next = False
    for flag in flags:
        if skip_next:
            skip_next = False
            continue
        if flag == "-x":
            skip_next = True
            continue
        if flag.startswith("-x"):
            continue
        args.append(flag)
    # The wheel's libclang lacks its resource headers: drop every default search path
    # and use the system compiler's list instead (its own stddef.h, float.h... included).
    args.append("-nostdinc")
    for directory in system_include_dirs(language):
        args += ["-isystem", directory]
    args += ["-Wno-unknown-attributes", "-ferror-limit=50"]
    return args


def read_source(path: str) -> bytes:
    """The input's bytes, or an InputError that says what is wrong with the path."""
    p = Path(path)
    if not p.exists():
        raise InputError(f"{path}: no such file")
    if p.is_dir():
        raise InputError(f"{path}: is a directory, not a C/C++ source file")
    try:
        data = p.read_bytes()
    except PermissionError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from exc
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from exc
    if not data.strip():
        raise InputError(f"{path}: the file is empty")
    return data


def parse(path: str, flags: tuple[str, ...] = (), source: bytes | None = None) -> Parsed:
    """Parse a C/C++ file; raise SourceError with file:line:col diagnostics on errors."""
    data = read_source(path) if source is None else source
    language = language_of(path, flags)
    index = ci.Index.create()
    options = ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD
    try:
        tu = index.parse(
            path, args=clang_args(language, flags), unsaved_files=[(path, data)], options=options
        )
    except ci.TranslationUnitLoadError as exc:
        raise InputError(f"{path}: libclang could not parse the file ({exc})") from exc
    errors = [format_diagnostic(d) for d in tu.diagnostics if d.severity >= ci.Diagnostic.Error]
    if errors:
        raise SourceError(errors)
    return Parsed(path=path, source=data, language=language, flags=tuple(flags), tu=tu)


def format_diagnostic(diag: ci.Diagnostic) -> str:
    loc = diag.location
    name = loc.file.name if loc.file else "<command line>"
    severity = {ci.Diagnostic.Fatal: "fatal error", ci.Diagnostic.Error: "error"}.get(
        diag.severity, "warning"
    )
    return f"{name}:{loc.line}:{loc.column}: {severity}: {diag.spelling}"


def warnings_of(parsed: Parsed) -> tuple[str, ...]:
    return tuple(
        format_diagnostic(d)
        for d in parsed.tu.diagnostics
        if d.severity == ci.Diagnostic.Warning and d.location.file
    )


def included_files(parsed: Parsed) -> tuple[str, ...]:
    """Every header the parse read, for `-MD` dependency files."""
    return tuple(sorted({inc.include.name for inc in parsed.tu.get_includes()}))
