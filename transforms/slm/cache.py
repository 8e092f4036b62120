"""Completion cache, record and replay: every model answer is keyed by a hash of (model
identity, messages, sampling incl. seed), so a rerun asks the model nothing it was asked
before, and a recorded run can be replayed where no model is available (generation on a
workstation, evaluation on an offline GPU node).

A record file is JSON lines, one answer per line:
  {"key": ..., "kind": "complete" | "choose", "model": identity,
   "request": {"messages": [...], "sampling": {...}[, "options": [...]]},
   "completion": {...} | "choice": {option: probability}}
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cudaify.core import content_hash
from cudaify.core.errors import ModelError
from cudaify.transforms.slm.engine import Completion, Engine, Message, Sampling


class ReplayMiss(ModelError):
    """--replay was given and the file holds no answer for this request."""


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def request_of(
    messages: Sequence[Message], sampling: Sampling, options: Sequence[str] | None = None
) -> dict[str, Any]:
    request: dict[str, Any] = {
        "messages": [dict(message) for message in messages],
        "sampling": sampling.to_json(),
    }
    if options is not None:
        request["options"] = list(options)
    return request


def request_key(identity: str, kind: str, request: Mapping[str, Any]) -> str:
    """The cache key: any change of model, kind, message, option or sampling field changes it."""
    return content_hash("cudaify-slm-v1", identity, kind, _canonical(request))


def cache_root() -> Path:
    """The project's cache directory: $CUDAIFY_CACHE_DIR, as the configuration reads it,
    else the platform's user cache directory (core.config's `default_cache_dir`)."""
    from cudaify.core.config import Config, default_cache_dir

    return default_cache_dir(Config(cache_dir=os.environ.get("CUDAIFY_CACHE_DIR") or None))


def default_cache_dir() -> Path:
    """`completions/` under the project's cache directory (`cache_root`)."""
    return cache_root() / "completions"


class CompletionCache:
    """One JSON file per key, written atomically (concurrent runs may share the cache)."""

    def __init__(self, directory: str | Path | None = None):
        self.directory = Path(directory) if directory else default_cache_dir()

    def _file(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        try:
            return json.loads(self._file(key).read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            return None

    def put(self, key: str, entry: Mapping[str, Any]) -> None:
        target = self._file(key)
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(
            "w", dir=target.parent, suffix=".tmp", delete=False, encoding="utf-8"
        ) as handle:
            try:
                handle.write(_canonical(entry))
            except BaseException:  # Ctrl-C mid-write: no stray .tmp beside the entries
                handle.close()
                Path(handle.name).unlink(missing_ok=True)
                raise
        try:
            os.replace(handle.name, target)
        except BaseException:
            Path(handle.name).unlink(missing_ok=True)
            raise


class Recorder:
    """Appends every answer served (asked or cached) to a JSON-lines file."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()

    def write(self, entry: Mapping[str, Any]) -> None:
        line = _canonical(entry) + "\n"
        with self._lock, self.path.open("a", encoding="utf-8") as handle:
            handle.write(line)


class Replay:
    """The answers of a record file by key. A miss is an error, never a silent model call."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.entries: dict[str, dict[str, Any]] = {}
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise ModelError(f"{self.path}: cannot read the replay file: {exc.strerror}") from exc
        for number, line in enumerate(lines, 1):
            if line.strip():
                self._add(number, line)

    def _add(self, number: int, line: str) -> None:
        try:
            entry = json.loads(line)
            self.entries[entry["key"]] = entry
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise ModelError(f"{self.path}:{number}:1: not a record line ({exc})") from exc

    @property
    def identities(self) -> set[str]:
        return {str(entry.get("model", "")) for entry in self.entries.values()}

    def get(self, key: str, kind: str, request: Mapping[str, Any]) -> dict[str, Any]:
        entry = self.entries.get(key)
        if entry is None or entry.get("kind") != kind:
            raise ReplayMiss(self._miss_message(kind, request))
        return entry

    def _miss_message(self, kind: str, request: Mapping[str, Any]) -> str:
        messages = request.get("messages") or [{}]
        last = str(messages[-1].get("content", "")).strip().splitlines()
        gist = last[0][:80] if last else ""
        return (
            f"{self.path}: no recorded answer for this {kind} request ({len(self.entries)} "
            f"recorded; model, prompt or sampling differ from the recording run): {gist!r}"
        )


class CachedEngine:
    """An Engine that consults the replay file, then the cache, then the model, and records
    every answer it serves. With `replay`, the model is never called (it may be None)."""

    def __init__(
        self,
        engine: Engine | None,
        cache: CompletionCache | None = None,
        record: Recorder | None = None,
        replay: Replay | None = None,
        identity: str | None = None,
    ):
        if engine is None and replay is None:
            raise ValueError("CachedEngine needs an engine or a replay file")
        self.engine = engine
        self.cache = cache
        self.record = record
        self.replay = replay
        self.identity = identity or (engine.identity if engine else _replayed_identity(replay))

    def complete(self, messages: Sequence[Message], sampling: Sampling) -> Completion:
        request = request_of(messages, sampling)
        entry, fresh = self._serve(
            "complete", request, lambda: self._ask_completion(messages, sampling)
        )
        return Completion.from_json(entry["completion"], cached=not fresh)

    def choose(
        self, messages: Sequence[Message], options: Sequence[str], sampling: Sampling
    ) -> dict[str, float]:
        request = request_of(messages, sampling, options)
        ask = lambda: self._ask_choice(messages, options, sampling)  # noqa: E731
        entry, _ = self._serve("choose", request, ask)
        return {option: float(entry["choice"][option]) for option in options}

    def _ask_completion(self, messages: Sequence[Message], sampling: Sampling) -> dict[str, Any]:
        return {"completion": self._require().complete(messages, sampling).to_json()}

    def _ask_choice(
        self, messages: Sequence[Message], options: Sequence[str], sampling: Sampling
    ) -> dict[str, Any]:
        return {"choice": self._require().choose(messages, options, sampling)}

    def _require(self) -> Engine:
        assert self.engine is not None  # replay mode never reaches the model
        return self.engine

    def _serve(self, kind: str, request: dict[str, Any], ask) -> tuple[dict[str, Any], bool]:
        """The entry answering the request, and whether the model was asked for it."""
        key = request_key(self.identity, kind, request)
        entry = self._lookup(key, kind, request)
        if entry is None:
            answer = ask()
            entry = {"key": key, "kind": kind, "model": self.identity, "request": request, **answer}
            if self.cache:
                self.cache.put(key, entry)
            if self.record:
                self.record.write(entry)
            return entry, True
        if self.record:
            self.record.write(entry)
        return entry, False

    def _lookup(self, key: str, kind: str, request: Mapping[str, Any]) -> dict[str, Any] | None:
        if self.replay is not None:
            return self.replay.get(key, kind, request)
        if self.cache is None:
            return None
        entry = self.cache.get(key)
        return entry if entry and entry.get("kind") == kind else None


def _replayed_identity(replay: Replay | None) -> str:
    identities = replay.identities if replay else set()
    if len(identities) != 1:
        found = ", ".join(sorted(identities)) or "none"
        raise ModelError(f"the replay file names models {found}; choose with --model/--llm-model")
    return identities.pop()
