from __future__ import annotations

from pathlib import Path

import pytest

from cudaify.backend.cache import Cache
from cudaify.backend.gpu import gpu_available


@pytest.fixture
def cache(tmp_path: Path) -> Cache:
    return Cache(tmp_path / "cache")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if gpu_available():
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU: nvidia-smi found none on this machine")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
