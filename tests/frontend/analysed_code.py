"""Analysing a C snippet as the frontend tests need it: the whole program, or one region."""

from __future__ import annotations

import os
import tempfile

from cudaify.frontend.analyze import analyze
from cudaify.frontend.facts import Program, Scop


def analysed(code: str) -> Program:
    with tempfile.NamedTemporaryFile("w", suffix=".c", delete=False) as handle:
        handle.write(code)
    try:
        return analyze(handle.name)
    finally:
        os.unlink(handle.name)


def region(program: Program, function: str) -> Scop:
    fn = program.function(function)
    assert fn is not None and fn.scops, fn and fn.scop_notes
    return fn.scops[0]
