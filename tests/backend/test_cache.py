"""The on-disk cache under concurrent writers: processes that write the same entry at
once (make -j, bench -j) never leave it damaged or half-written; a reader sees a whole
value or a miss."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

from cudaify.backend.cache import Cache

ROUNDS = 150


def _writer(root: str, tag: str) -> None:
    cache = Cache(Path(root))
    for round_ in range(ROUNDS):
        # large enough that a write takes more than one system call
        cache.write_json("results", "same-key", {"by": tag, "round": round_, "pad": tag * 200_000})
        cache.write_bytes("bin", "same-binary", tag.encode() * 300_000, executable=True)


def test_two_processes_writing_one_entry_never_damage_it(tmp_path: Path) -> None:
    context = multiprocessing.get_context("fork")
    writers = [context.Process(target=_writer, args=(str(tmp_path), tag)) for tag in "ab"]
    for writer in writers:
        writer.start()
    cache = Cache(tmp_path)
    seen: set[str] = set()
    while any(w.is_alive() for w in writers):
        try:  # read raw: read_json would take a damaged entry for a miss
            text = cache.path("results", "same-key").read_text()
        except FileNotFoundError:
            text = ""
        if text:
            value = json.loads(text)  # whole, from one writer
            assert value["pad"] == value["by"] * 200_000
            seen.add(value["by"])
        binary = cache.file("bin", "same-binary")
        if binary is not None:
            data = binary.read_bytes()
            assert data in (b"a" * 300_000, b"b" * 300_000)
    for writer in writers:
        writer.join(60)
        assert writer.exitcode == 0
    final = json.loads(cache.path("results", "same-key").read_text())
    assert final["round"] == ROUNDS - 1 and final["by"] in "ab"
    assert seen  # the reader did see values while they were being written
    leftovers = [p.name for p in tmp_path.rglob(".*") if p.is_file()]
    assert leftovers == []  # no staging file left behind
