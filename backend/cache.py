"""A content-addressed on-disk cache: binaries, reference results, compiler diagnostics.

Keys are `content_hash` of everything that decides the content (source, compiler and its
version, flags, architecture). Every write goes to a temporary file in the destination's
folder and is renamed into place, so parallel processes never see a half-written entry and
two processes writing the same key both leave a complete one."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cudaify.core.config import Config, default_cache_dir


@dataclass(frozen=True)
class Cache:
    root: Path

    @classmethod
    def for_config(cls, config: Config) -> Cache:
        return cls(default_cache_dir(config))

    @classmethod
    def default(cls) -> Cache:
        """The user's cache folder (platformdirs), for callers without a configuration."""
        return cls.for_config(Config())

    def path(self, kind: str, key: str) -> Path:
        # Two-character fan-out keeps folders small after thousands of candidates.
        return self.root / kind / key[:2] / key

    def file(self, kind: str, key: str) -> Path | None:
        found = self.path(kind, key)
        return found if found.is_file() else None

    def read_json(self, kind: str, key: str) -> Any | None:
        found = self.file(kind, key)
        if found is None:
            return None
        try:
            return json.loads(found.read_text())
        except (OSError, ValueError):
            return None  # a damaged entry is a miss; the next write replaces it

    def write_json(self, kind: str, key: str, value: Any) -> Path:
        return self.write_bytes(kind, key, json.dumps(value).encode())

    def write_bytes(self, kind: str, key: str, data: bytes, executable: bool = False) -> Path:
        target = self.path(kind, key)
        with self._staging(target) as (handle, staged):
            handle.write(data)
        return self._publish(staged, target, executable)

    def store_file(self, kind: str, key: str, source: Path, executable: bool = False) -> Path:
        target = self.path(kind, key)
        with self._staging(target) as (handle, staged), source.open("rb") as original:
            shutil.copyfileobj(original, handle)
        return self._publish(staged, target, executable)

    def _staging(self, target: Path) -> _Staging:
        target.parent.mkdir(parents=True, exist_ok=True)
        return _Staging(target)

    @staticmethod
    def _publish(staged: Path, target: Path, executable: bool) -> Path:
        os.chmod(staged, 0o755 if executable else 0o644)
        os.replace(staged, target)
        return target


class _Staging:
    """A temporary file next to `target`, removed if the write fails."""

    def __init__(self, target: Path):
        self.target = target

    def __enter__(self) -> tuple[Any, Path]:
        fd, name = tempfile.mkstemp(dir=self.target.parent, prefix=f".{self.target.name}.")
        self.path = Path(name)
        self.handle = os.fdopen(fd, "wb")
        return self.handle, self.path

    def __exit__(self, kind: object, error: object, trace: object) -> None:
        self.handle.close()
        if error is not None:
            self.path.unlink(missing_ok=True)
