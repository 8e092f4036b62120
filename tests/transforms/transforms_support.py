"""Helpers for the transforms tests: the real frontend, as the pipeline runs it."""

from __future__ import annotations

from pathlib import Path

from cudaify.frontend.facts import Program

GOLDEN = Path(__file__).resolve().parent.parent / "golden"


def analysed(path: Path, flags: tuple[str, ...] = ()) -> Program:
    """The program as the pipeline sees it: parsed, made C++-compatible, re-analysed;
    with `flags` (`-DBENCH_SMALL`) as the compiler's."""
    from cudaify.frontend.analyze import analyze
    from cudaify.frontend.cxx_compat import to_cxx
    from cudaify.frontend.parse import parse

    compat = to_cxx(parse(str(path), flags)).text.encode("utf-8", "surrogateescape")
    return analyze(str(path), flags, source=compat)
