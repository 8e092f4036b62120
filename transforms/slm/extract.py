"""Strict extraction of the program from a model's answer: exactly one fenced code block,
in CUDA, C++ or C (or with no language tag). Guessing which of several blocks is "the"
program, or taking a block cut off by the token limit, would turn a bad answer into a
confusing compile error later; a clear reason now is worth more."""

from __future__ import annotations

import re
from dataclasses import dataclass

CODE_LANGUAGES = frozenset({"", "cuda", "cu", "cuh", "cpp", "c++", "cxx", "cc", "c", "h", "hpp"})
_OPEN = re.compile(r"^ {0,3}(`{3,})\s*([^`\s]*)[^`]*$")


@dataclass(frozen=True)
class Extraction:
    """The code of the one block, or None with the reason there is none."""

    code: str | None
    language: str = ""
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.code is not None


@dataclass(frozen=True)
class _Block:
    language: str
    body: str
    line: int
    closed: bool


def fenced_blocks(answer: str) -> list[_Block]:
    """CommonMark-style fences: an opening run of 3+ backticks with an optional info
    string, closed by a run at least as long on a line of its own."""
    blocks, lines = [], answer.splitlines()
    index = 0
    while index < len(lines):
        opening = _OPEN.match(lines[index])
        if not opening:
            index += 1
            continue
        fence, language = opening.group(1), opening.group(2).lower()
        body, index, closed = _read_body(lines, index + 1, len(fence))
        blocks.append(_Block(language, body, index, closed))
    return blocks


def _read_body(lines: list[str], start: int, fence_length: int) -> tuple[str, int, bool]:
    closing = re.compile(rf"^ {{0,3}}`{{{fence_length},}}\s*$")
    for index in range(start, len(lines)):
        if closing.match(lines[index]):
            return "\n".join(lines[start:index]), index + 1, True
    return "\n".join(lines[start:]), len(lines), False


def extract_code(answer: str) -> Extraction:
    blocks = fenced_blocks(answer)
    if not blocks:
        return Extraction(None, reason="the answer has no fenced code block")
    if len(blocks) > 1:
        where = ", ".join(f"line {block.line}" for block in blocks)
        reason = f"the answer has {len(blocks)} code blocks ({where}); one expected"
        return Extraction(None, reason=reason)
    block = blocks[0]
    if not block.closed:
        return Extraction(None, reason="the code block is not closed (the answer was cut off?)")
    if block.language not in CODE_LANGUAGES:
        return Extraction(None, reason=f"the code block is '{block.language}', not CUDA, C++ or C")
    if not block.body.strip():
        return Extraction(None, reason="the code block is empty")
    return Extraction(block.body.rstrip() + "\n", block.language)
