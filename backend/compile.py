"""Compiling the reference (gcc/g++ -O3) and CUDA candidates (nvcc -O3), cached by the
hash of everything that decides the binary: a cache hit costs no compile at all.

Sources are compiled in a temporary folder under the name the user knows (`input.c`), so
diagnostics read `input.c:12:5: error: ...`; relative -I paths are made absolute first."""

from __future__ import annotations

import functools
import os
import re
import tempfile
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from cudaify.backend.cache import Cache
from cudaify.core import content_hash, toolchain
from cudaify.core.errors import ToolchainError

COMPILE_TIMEOUT = 300.0
DIAGNOSTIC_LINES = 40
DIAGNOSTIC_CHARS = 6000
# Flags that change what the preprocessor or the language sees; everything else the user
# passed (warnings, -O levels, -march) is the reference's business, not the candidate's.
_PATH_FLAGS = ("-I", "-isystem", "-iquote", "-include")
_VALUE_FLAGS = ("-D", "-U")
# A library of the program's functions for differential tests: its main is renamed so it
# cannot clash with the loader's.
SHARED_FLAGS = ("-shared", "-Dmain=cudaify_program_main")


@dataclass(frozen=True)
class Build:
    ok: bool
    binary: Path | None
    diagnostics: str  # the compiler's first lines: errors on failure, warnings on success
    seconds: float
    cached: bool
    command: tuple[str, ...] = ()


@dataclass(frozen=True)
class Unit:
    """One extra translation unit linked into a build (the timing runtime, for example)."""

    name: str
    text: str


def preprocessor_flags(flags: Sequence[str], keep_std: bool, base: Path | None = None) -> list[str]:
    """The user's -I/-isystem/-iquote/-include/-D/-U flags (and -std= when `keep_std`), in
    order, with relative paths made absolute against `base` (default: the current folder)."""
    root = base or Path.cwd()
    kept: list[str] = []
    items = list(flags)
    i = 0
    while i < len(items):
        flag = items[i]
        name = next((p for p in _PATH_FLAGS + _VALUE_FLAGS if flag.startswith(p)), None)
        if flag.startswith("-std="):
            if keep_std:
                kept.append(flag)
        elif name is not None:
            value = flag[len(name) :]
            if not value and i + 1 < len(items):
                i += 1
                value = items[i]
            if name in _PATH_FLAGS:
                value = str(root / value) if not os.path.isabs(value) else value
            kept += [name, value]
        i += 1
    return kept


@functools.cache
def tool_version(tool: str) -> str:
    path = toolchain.find_tool(tool)
    done = toolchain.run([path, "--version"], timeout=60)
    return f"{path}\n{done.text().strip()}"


def _first_lines(text: str) -> str:
    lines = text.strip().splitlines()[:DIAGNOSTIC_LINES]
    return "\n".join(lines)[:DIAGNOSTIC_CHARS]


def compile_reference(
    source: str,
    language: str,
    flags: Sequence[str] = (),
    *,
    cache: Cache | None = None,
    name: str | None = None,
    source_dir: Path | None = None,
    extra_units: Sequence[Unit] = (),
    depends: str = "",
    shared: bool = False,
    timeout: float = COMPILE_TIMEOUT,
) -> Build:
    """gcc (C) or g++ (C++) -O3 with the user's preprocessor and -std flags, -lm.
    `source_dir` is searched for `#include "..."` as if the file were still there;
    `depends` is any text that should invalidate the cache (e.g. the headers' hashes);
    `shared` builds a shared library (main renamed away) instead of a program."""
    cache = cache or Cache.default()
    compiler = "g++" if language == "c++" else "gcc"
    name = name or ("input.cpp" if language == "c++" else "input.c")
    argv = [compiler, "-O3", "-x", "c++" if language == "c++" else "c", name]
    argv += _objects_argv(extra_units, [compiler, "-O3"], compiler, cache)
    argv += preprocessor_flags(flags, keep_std=True)
    argv += _source_dir_flags(source_dir, "-iquote")
    argv += [*SHARED_FLAGS, "-fPIC"] if shared else []
    argv += ["-o", "program", "-lm"]
    return _compile(argv, name, source, cache, compiler, depends, timeout)


def nvcc_base(arch: str) -> list[str]:
    """nvcc and the flags every CUDA build and support object of `arch` starts with."""
    return ["nvcc", "-O3", f"-arch={arch}", "-std=c++17"]


def compile_cuda(
    code: str,
    flags: Sequence[str] = (),
    arch: str = "sm_80",
    *,
    cache: Cache | None = None,
    name: str = "candidate.cu",
    source_dir: Path | None = None,
    extra_units: Sequence[Unit] = (),
    depends: str = "",
    shared: bool = False,
    link_flags: Sequence[str] = (),
    timeout: float = COMPILE_TIMEOUT,
    cancel: threading.Event | None = None,
) -> Build:
    """nvcc -O3 for `arch`, C++17, with the user's -I/-D/-U flags but not a C -std=
    (nvcc compiles .cu as C++). CUB and Thrust come with the toolkit's include path.
    `shared` builds a shared library (main renamed away) instead of a program. A compile
    cut short by `timeout` or `cancel` is a failed build, never cached."""
    cache = cache or Cache.default()
    # The .cu suffix makes it CUDA; nvcc's `-x cu` would also claim the linked objects.
    argv = [*nvcc_base(arch), name]
    argv += _objects_argv(extra_units, nvcc_base(arch), "nvcc", cache)
    argv += preprocessor_flags(flags, keep_std=False)
    argv += _source_dir_flags(source_dir, "-I")
    argv += [*SHARED_FLAGS, "-Xcompiler", "-fPIC"] if shared else []
    argv += [*link_flags, "-o", "program", "-lm"]
    return _compile(argv, name, code, cache, "nvcc", depends, timeout, cancel)


def compile_cubin(
    code: str,
    flags: Sequence[str] = (),
    arch: str = "sm_80",
    *,
    cache: Cache | None = None,
    name: str = "kernels.cu",
    source_dir: Path | None = None,
) -> Build:
    """The device code alone, as a cubin for `arch` (a real sm_ architecture), for loading
    kernels with the driver API (pycuda); cached like every build."""
    cache = cache or Cache.default()
    argv = ["nvcc", "-cubin", f"-arch={arch}", "-O3", "-std=c++17", name]
    argv += preprocessor_flags(flags, keep_std=False)
    argv += _source_dir_flags(source_dir, "-I")
    argv += ["-o", "program"]
    return _compile(argv, name, code, cache, "nvcc", "")


def compile_many(
    codes: Sequence[str],
    flags: Sequence[str] = (),
    arch: str = "sm_80",
    *,
    cache: Cache | None = None,
    source_dir: Path | None = None,
    workers: int | None = None,
) -> list[Build]:
    """Compile several candidates at once (one nvcc per core); results in input order."""
    workers = workers or os.cpu_count() or 1

    def one(code: str) -> Build:
        return compile_cuda(code, flags, arch, cache=cache, source_dir=source_dir)

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(one, codes))


def _objects_argv(units: Sequence[Unit], base: list[str], tool: str, cache: Cache) -> list[str]:
    # gcc's `-x` applies to every later file: reset it before the object files.
    if not units:
        return []
    objects = [str(path) for path in compile_objects(units, base, tool, cache)]
    return (["-x", "none"] if tool != "nvcc" else []) + objects


def compile_objects(
    units: Sequence[Unit], base: Sequence[str], tool: str, cache: Cache
) -> list[Path]:
    """`compile_object` of each unit, the ones not cached yet side by side (a cold cache
    held three nvcc builds of the timing runtime, about 3 s one after another, in front
    of the first candidate's build)."""
    found = [cache.file("obj", _object_key(unit, base, tool)) for unit in units]
    if all(found) or len(units) <= 1:  # the usual case: no pool for cached objects
        pairs = zip(units, found, strict=True)
        return [path or compile_object(unit, base, tool, cache) for unit, path in pairs]
    with ThreadPoolExecutor(max_workers=len(units), thread_name_prefix="object") as pool:
        return list(pool.map(lambda unit: compile_object(unit, base, tool, cache), units))


def prepare_objects(units: Sequence[Unit], base: Sequence[str], tool: str, cache: Cache) -> None:
    """Start compiling `units` on a thread of their own, so that the builds asking for
    them later find them done (or wait for these compiles instead of starting their own).
    A failure is left to those builds to report."""

    def build() -> None:
        try:
            compile_objects(units, base, tool, cache)
        except Exception:  # noqa: BLE001 - the build that links them reports it
            pass

    threading.Thread(target=build, name="objects", daemon=True).start()


# One compile of each support object at a time in this process: the builds started ahead
# on every core all want the same objects first (the lock of its key, made under _GUARD).
_GUARD = threading.Lock()
_OBJECT_LOCKS: dict[str, threading.Lock] = {}


def compile_object(unit: Unit, base: Sequence[str], tool: str, cache: Cache) -> Path:
    """A support unit compiled once per compiler, flags and text (cached), so each
    candidate's build only links it; builds asking for it at once wait for one compile.
    Its failure is ours, not the candidate's: it raises."""
    argv = _object_argv(unit, base)
    key = _object_key(unit, base, tool)
    found = cache.file("obj", key)
    if found is not None:
        return found
    with _GUARD:
        lock = _OBJECT_LOCKS.setdefault(f"{cache.root}:{key}", threading.Lock())
    with lock:
        return cache.file("obj", key) or _compile_object(unit, argv, tool, cache, key)


def _object_argv(unit: Unit, base: Sequence[str]) -> list[str]:
    return [*base, "-c", unit.name, "-o", "unit.o"]


def _object_key(unit: Unit, base: Sequence[str], tool: str) -> str:
    """The cache key of `unit`'s object: its text, the command and the compiler."""
    command = "\0".join(_object_argv(unit, base))
    # The suffix tells the compiler driver that the file is an object to link.
    return content_hash("object", unit.name, unit.text, command, tool_version(tool)) + ".o"


def _compile_object(unit: Unit, argv: list[str], tool: str, cache: Cache, key: str) -> Path:
    with tempfile.TemporaryDirectory(prefix="cudaify-build-") as folder:
        work = Path(folder)
        (work / unit.name).write_text(unit.text)
        done = toolchain.run(
            [toolchain.find_tool(tool), *argv[1:]], cwd=work, timeout=COMPILE_TIMEOUT
        )
        if not done.ok or not (work / "unit.o").is_file():
            raise ToolchainError(
                f"cannot compile cudaify's {unit.name}: {_first_lines(done.errors())}"
            )
        return cache.store_file("obj", key, work / "unit.o")


def _source_dir_flags(source_dir: Path | None, flag: str) -> list[str]:
    return [flag, str(source_dir.resolve())] if source_dir is not None else []


def _compile(
    argv: list[str],
    name: str,
    text: str,
    cache: Cache,
    tool: str,
    depends: str,
    timeout: float = COMPILE_TIMEOUT,
    cancel: threading.Event | None = None,
) -> Build:
    key = cache_key(argv, text, tool, depends)
    hit = _cached(cache, key, argv)
    if hit is not None:
        return hit
    argv = [toolchain.find_tool(tool), *argv[1:]]
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="cudaify-build-") as folder:
        work = Path(folder)
        (work / name).write_text(text)
        done = toolchain.run(argv, cwd=work, timeout=timeout, cancel=cancel)
        seconds = time.perf_counter() - started
        diagnostics = _first_lines(done.errors() + done.text())
        if done.timed_out:
            return Build(
                False,
                None,
                f"{tool} did not finish in {timeout:g} s",
                seconds,
                False,
                tuple(argv),
            )
        crash = toolchain_crash(tool, done.signal, done.errors() + done.text())
        if crash is not None:
            # the compiler's fault (a crash, memory running out), not the source's: said,
            # and not remembered, so the next run compiles it again
            return Build(False, None, crash, seconds, False, tuple(argv))
        if done.returncode != 0 or not (work / "program").is_file():
            # A compile error is a fact about this source: remember it.
            cache.write_json("compile-errors", key, {"diagnostics": diagnostics})
            return Build(False, None, diagnostics, seconds, False, tuple(argv))
        binary = cache.store_file("bin", key, work / "program", executable=True)
        cache.write_json("compile-notes", key, {"diagnostics": diagnostics})
    return Build(True, binary, diagnostics, seconds, False, tuple(argv))


# How nvcc and gcc say that one of their own stages died rather than rejected the source:
# each anchored at the start of the tool's own line, so a source line it quotes in an
# error (`printf("out of memory")`) never reads as a crash.
_CRASHED = re.compile(
    r"^(nvcc (error|fatal)\s*: .*died due to signal \d+"
    r"|\S*:( \d+:\d+:)? internal compiler error"
    r"|terminate called after throwing an instance of 'std::bad_alloc'"
    r"|virtual memory exhausted"
    r"|(cc1\w*|cicc|ptxas|cudafe\+\+|nvlink|ld): (fatal error: )?out of memory)",
    re.IGNORECASE,
)
_OUT_OF_MEMORY = re.compile(r"signal 9\b|bad_alloc|out of memory|memory exhausted", re.IGNORECASE)
COMPILER_CRASH = "the compiler crashed"  # how such a build's diagnostics begin


def toolchain_crash(tool: str, signal: int | None, output: str) -> str | None:
    """The diagnostics of a build the compiler itself failed (killed by a signal, a stage
    that died, memory that ran out), None for an ordinary result."""
    crashed = [line.strip() for line in output.splitlines() if _CRASHED.match(line.strip())]
    if signal is None and not crashed:
        return None
    first = crashed[0] if crashed else ""
    memory = signal == 9 or any(_OUT_OF_MEMORY.search(line) for line in crashed)
    why = f"{tool} was killed by signal {signal}" if signal is not None else first
    cause = " (out of memory?)" if memory else ""
    return f"{COMPILER_CRASH}: {why}{cause}; not a fault of the source, not cached"


def cache_key(argv: Sequence[str], text: str, tool: str, depends: str) -> str:
    # Object files in argv are named by their own content hash: argv covers them.
    return content_hash(text, "\0".join(argv), tool_version(tool), depends)


def _cached(cache: Cache, key: str, argv: Sequence[str]) -> Build | None:
    binary = cache.file("bin", key)
    if binary is not None:
        notes = cache.read_json("compile-notes", key) or {}
        return Build(True, binary, notes.get("diagnostics", ""), 0.0, True, tuple(argv))
    failed = cache.read_json("compile-errors", key)
    if failed is not None:
        return Build(False, None, failed.get("diagnostics", ""), 0.0, True, tuple(argv))
    return None
