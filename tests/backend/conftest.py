from __future__ import annotations

from pathlib import Path

import pytest

from cudaify.backend.cache import Cache


@pytest.fixture
def cache(tmp_path: Path) -> Cache:
    """A private cache per test: hits and misses are the test's own."""
    return Cache(tmp_path / "cache")
