from __future__ import annotations

from pathlib import Path

import pytest
from transforms_support import analysed

from cudaify.frontend.facts import Program


@pytest.fixture
def program_of(tmp_path: Path):
    """Analyse a C snippet written to a temporary file, as the pipeline would."""

    def build(code: str, name: str = "input.c") -> Program:
        path = tmp_path / name
        path.write_text(code)
        return analysed(path)

    return build
