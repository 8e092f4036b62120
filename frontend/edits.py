"""Byte-range edits of a source file: the one way passes rewrite text without
disturbing the bytes they do not mean to touch."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Edit:
    """Replace source[start:end] by `text`; `start == end` inserts. `reason` says why."""

    start: int
    end: int
    text: str
    reason: str

    def __post_init__(self) -> None:
        if not 0 <= self.start <= self.end:
            raise ValueError(f"bad edit range [{self.start}, {self.end})")


class OverlappingEdits(ValueError):
    """Two edits touch the same bytes: applying both has no single meaning."""


def sorted_edits(edits: Iterable[Edit]) -> list[Edit]:
    """The edits in source order; raises OverlappingEdits when two overlap.

    Two insertions at the same offset also count as overlapping, since their order
    would be a guess."""
    ordered = sorted(edits, key=lambda e: (e.start, e.end))
    for before, after in zip(ordered, ordered[1:], strict=False):
        same_point = before.start == before.end == after.start == after.end
        if before.end > after.start or same_point:
            raise OverlappingEdits(
                f"edits overlap: [{before.start}, {before.end}) ({before.reason}) and "
                f"[{after.start}, {after.end}) ({after.reason})"
            )
    return ordered


def apply_edits(source: bytes, edits: Iterable[Edit]) -> bytes:
    """`source` with every edit applied; bytes outside the edits are kept exactly."""
    ordered = sorted_edits(edits)
    if ordered and ordered[-1].end > len(source):
        raise ValueError(f"edit ends at {ordered[-1].end}, past the source ({len(source)} bytes)")
    pieces: list[bytes] = []
    position = 0
    for edit in ordered:
        pieces.append(source[position : edit.start])
        pieces.append(edit.text.encode("utf-8", errors="surrogateescape"))
        position = edit.end
    pieces.append(source[position:])
    return b"".join(pieces)


def shifted_offset(edits: Iterable[Edit], offset: int) -> int:
    """Where byte `offset` of the source lands after the edits. An offset inside a
    replaced range, or at an insertion, maps to the start of the new text, so a span
    that starts there takes in a cast inserted in front of it."""
    moved = offset
    for edit in sorted_edits(edits):
        if edit.start >= offset:
            break
        if edit.end > offset:
            return moved - (offset - edit.start)
        moved += len(edit.text.encode("utf-8", errors="surrogateescape")) - (edit.end - edit.start)
    return moved
