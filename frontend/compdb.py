"""Compiler flags from a `compile_commands.json`, read the way clang tools read it.

`-p DIR` names the folder holding the file (a build directory), `--compile-commands FILE`
the file itself. Each entry has `directory`, `file` (relative paths are relative to
`directory`) and either `arguments` (a list) or `command` (one shell-quoted string). The
first entry whose file resolves to the source wins, as in clang's JSONCompilationDatabase.

Only the flags that change what the parser sees are kept: include paths (`-I`,
`-isystem`, `-iquote`, `-idirafter`, made absolute against `directory`, since cudaify
parses and compiles from elsewhere), macros (`-D`, `-U`), `-std=`, `-x` and `-include`.
The compiler, `-c`, `-o`, the source itself, warnings, optimisation and code generation
flags are dropped: cudaify picks its own."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

from cudaify.core.errors import InputError

COMPDB_NAME = "compile_commands.json"
# flags whose value is a path, made absolute against the entry's directory
PATH_FLAGS = ("-isystem", "-iquote", "-idirafter", "-include", "-I")
# flags kept with their value, either attached (-DX) or as the next argument (-D X)
VALUE_FLAGS = ("-D", "-U", "-x")
# flags that take the next argument as their value and are dropped with it
DROPPED_WITH_VALUE = frozenset(
    "-o -MF -MT -MQ -Xclang -Xlinker -Xpreprocessor -Xassembler -arch -target -imacros "
    "-include-pch -ivfsoverlay --param -aux-info -L -l".split()
)


def compdb_file(compdb_dir_or_file: str) -> Path:
    """The database: `DIR/compile_commands.json` for a folder, else the file itself."""
    path = Path(compdb_dir_or_file)
    if path.is_dir():
        path = path / COMPDB_NAME
    if not path.is_file():
        raise InputError(f"{path}: no such compilation database ({COMPDB_NAME})")
    return path


def load_entries(path: Path) -> list[dict]:
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read the compilation database ({exc})") from exc
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}:{exc.colno}: error: {exc.msg}") from exc
    if not isinstance(entries, list):
        raise InputError(f"{path}: a compilation database is a JSON list of entries")
    return [e for e in entries if isinstance(e, dict)]


def _resolved(directory: str, file: str) -> str:
    return os.path.realpath(os.path.join(directory, file))


def entry_for(source_path: str, entries: list[dict], database: Path) -> dict | None:
    """The first entry for the source, its file resolved against its directory (and the
    directory against the database's folder when it is relative)."""
    wanted = os.path.realpath(source_path)
    for entry in entries:
        file = entry.get("file")
        if not isinstance(file, str):
            continue
        directory = _entry_directory(entry, database)
        if _resolved(directory, file) == wanted:
            return entry
    return None


def _entry_directory(entry: dict, database: Path) -> str:
    directory = entry.get("directory")
    base = str(database.resolve().parent)
    if not isinstance(directory, str) or not directory:
        return base
    return os.path.join(base, directory)  # an absolute directory ignores the base


def command_of(entry: dict) -> list[str]:
    arguments = entry.get("arguments")
    if isinstance(arguments, list) and all(isinstance(a, str) for a in arguments):
        return list(arguments)
    command = entry.get("command")
    if isinstance(command, str):
        try:
            return shlex.split(command)
        except ValueError as exc:
            raise InputError(f"compile command for {entry.get('file')}: {exc}") from exc
    raise InputError(f"compile command for {entry.get('file')}: no 'arguments' or 'command'")


def kept_flags(arguments: list[str], directory: str) -> tuple[str, ...]:
    """The parser-relevant flags of one compile command (the compiler first)."""
    kept: list[str] = []
    rest = arguments[1:]
    i = 0
    while i < len(rest):
        arg = rest[i]
        nxt = rest[i + 1] if i + 1 < len(rest) else None
        taken = _one_flag(arg, nxt, directory)
        kept.extend(taken[0])
        i += taken[1]
    return tuple(kept)


def _absolute(directory: str, path: str) -> str:
    return os.path.normpath(os.path.join(directory, path))


def _one_flag(arg: str, nxt: str | None, directory: str) -> tuple[list[str], int]:
    """(flags to keep, arguments consumed) for the argument `arg`."""
    if arg == "--":
        return [], 1
    for flag in PATH_FLAGS:
        if arg == flag:
            return ([flag, _absolute(directory, nxt)], 2) if nxt is not None else ([], 1)
        if arg.startswith(flag):  # attached: -Iinc, -isystem=inc, -isysteminc
            value = arg[len(flag) :].removeprefix("=")
            return [flag, _absolute(directory, value)], 1
    for flag in VALUE_FLAGS:
        if arg == flag:
            return ([flag, nxt], 2) if nxt is not None else ([], 1)
        if arg.startswith(flag):
            return [flag, arg[len(flag) :]], 1
    if arg.startswith("-std=") or arg.startswith("--std="):
        return ["-std=" + arg.split("=", 1)[1]], 1
    if arg in DROPPED_WITH_VALUE:
        return [], 2
    return [], 1  # -c, -W*, -O*, -f*, -g, the source itself, any other input file


def flags_for(source_path: str, compdb_dir_or_file: str) -> tuple[str, ...]:
    """The flags the compilation database gives `source_path`, ready for `parse`."""
    database = compdb_file(compdb_dir_or_file)
    entry = entry_for(source_path, load_entries(database), database)
    if entry is None:
        raise InputError(f"{source_path}: no entry in {database} for this file")
    directory = _entry_directory(entry, database)
    return kept_flags(command_of(entry), directory)
