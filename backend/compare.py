"""Does a candidate print what the reference prints? Token by token (white space separates
tokens; its amount does not matter); numbers compare as numbers, within a tolerance for
floating point, exactly for integers; everything else compares as text."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from cudaify.core import Problem

# A mismatch whose numbers all lie within this relative bound (integers and text equal) is
# rounding: FMA contraction or another summation order, not a wrong result.
ROUNDING_RTOL = 1e-2

_INTEGER = re.compile(r"[+-]?\d+")
# What printf's %d %f %e %g %a print, C's spellings of infinity and NaN included.
_NUMBER = re.compile(
    r"[+-]?(?:0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?\d+)?"
    r"|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
    r"|(?<![A-Za-z_])(?i:inf(?:inity)?|nan(?:\([0-9A-Za-z_]*\))?)(?![A-Za-z_]))"
)


@dataclass(frozen=True)
class Token:
    text: str
    index: int  # 0-based position among all tokens
    line: int  # 1-based output line


def tokens(text: str) -> list[Token]:
    found: list[Token] = []
    for line_number, line in enumerate(text.splitlines(), start=1):
        for word in line.split():
            found.append(Token(word, len(found), line_number))
    return found


def parse_number(text: str) -> int | float | None:
    """The value of a token that is entirely a number, else None."""
    if _INTEGER.fullmatch(text):
        return int(text)
    if not _NUMBER.fullmatch(text):
        return None
    body = text.lstrip("+-")
    sign = -1.0 if text.startswith("-") else 1.0
    if body[:2].lower() == "0x":
        return sign * float.fromhex(body)
    if body.lower().startswith("nan"):
        return math.nan
    return float(text)


def numbers_match(expected: int | float, actual: int | float, rtol: float, atol: float) -> bool:
    if isinstance(expected, int) and isinstance(actual, int):
        return expected == actual
    if math.isnan(expected) or math.isnan(actual):
        return False  # a NaN where a number was printed is a bug even when both print nan
    if math.isinf(expected) or math.isinf(actual):
        return expected == actual
    return abs(expected - actual) <= atol + rtol * abs(expected)


def _pieces(text: str) -> list[str]:
    """`sum=1.5e3,` -> ['sum=', '1.5e3', ',']: numbers glued to punctuation still compare
    as numbers when the text around them is the same."""
    parts, position = [], 0
    for match in _NUMBER.finditer(text):
        if match.start() > position:
            parts.append(text[position : match.start()])
        parts.append(match.group())
        position = match.end()
    if position < len(text):
        parts.append(text[position:])
    return parts


def tokens_match(expected: str, actual: str, rtol: float, atol: float) -> bool:
    if expected == actual:
        return _not_nan(expected)
    want, got = parse_number(expected), parse_number(actual)
    if want is not None and got is not None:
        return numbers_match(want, got, rtol, atol)
    want_parts, got_parts = _pieces(expected), _pieces(actual)
    if len(want_parts) != len(got_parts) or len(want_parts) < 2:
        return False
    return all(_piece_match(w, g, rtol, atol) for w, g in zip(want_parts, got_parts, strict=True))


def _piece_match(expected: str, actual: str, rtol: float, atol: float) -> bool:
    want, got = parse_number(expected), parse_number(actual)
    if want is None or got is None:
        return expected == actual
    return numbers_match(want, got, rtol, atol)


def _not_nan(token: str) -> bool:
    return not any(
        isinstance(value, float) and math.isnan(value)
        for value in (parse_number(piece) for piece in _pieces(token))
        if value is not None
    )


def compare(expected: str, actual: str, rtol: float = 1e-4, atol: float = 1e-9) -> Problem | None:
    """None when `actual` prints what `expected` prints; else a Problem naming the first
    differing token: its index, its output line, both spellings."""
    want, got = tokens(expected), tokens(actual)
    for w, g in zip(want, got, strict=False):
        if not tokens_match(w.text, g.text, rtol, atol):
            return Problem(
                "output",
                f"stdout token {w.index + 1} (output line {w.line}) differs: "
                f"expected {w.text!r}, got {g.text!r}{_difference(w.text, g.text)}",
            )
    if len(want) == len(got):
        return None
    if len(got) < len(want):
        missing = want[len(got)]
        return Problem(
            "output",
            f"stdout ends early: {len(got)} tokens, expected {len(want)}; first missing is "
            f"token {missing.index + 1} (output line {missing.line}): {missing.text!r}",
        )
    extra = got[len(want)]
    return Problem(
        "output",
        f"stdout has {len(got) - len(want)} extra tokens after the expected {len(want)}; "
        f"first extra (output line {extra.line}): {extra.text!r}",
    )


def rounding_only(expected: str, actual: str, atol: float = 1e-9) -> bool:
    """Whether `actual` differs from `expected` at most by rounding: the same tokens, the
    same integers, every other number within ROUNDING_RTOL of the expected one."""
    return compare(expected, actual, ROUNDING_RTOL, atol) is None


def matched_tolerance(
    expected: str, actual: str, rtol: float, atol: float
) -> tuple[float, float] | None:
    """The tolerance `actual` matches `expected` at: (0, 0) when every number is equal,
    (rtol, atol) when only within those, None when not even then."""
    if compare(expected, actual, 0.0, 0.0) is None:
        return (0.0, 0.0)
    return (rtol, atol) if compare(expected, actual, rtol, atol) is None else None


def _difference(expected: str, actual: str) -> str:
    want, got = parse_number(expected), parse_number(actual)
    if want is None or got is None or not all(map(math.isfinite, (want, got))) or want == 0:
        return ""
    return f" (relative difference {abs(got - want) / abs(want):.2e})"


def compare_exit(expected: int, actual: int) -> Problem | None:
    if expected == actual:
        return None
    return Problem("exit_code", f"exit code {actual}, expected {expected}")
