"""The layers of DESIGN.md hold: import-linter's contract in pyproject.toml is kept by the
package as it installs, and broken by one planted backwards import (so the check would
catch one). The same check as `make lint`, run here because CI runs only the tests."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "check_layers.py"

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("importlinter") is None,
    reason="import-linter is not installed (it is in the `test` extra: pip install -e '.[test]')",
)


def _check_layers():
    spec = importlib.util.spec_from_file_location("check_layers", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


check_layers = _check_layers()


def test_the_installed_packages_are_the_stage_folders():
    folders = check_layers.package_folders(ROOT)
    assert folders["cudaify"] == ROOT / "cudaify"
    assert folders["cudaify.frontend"] == ROOT / "frontend"
    assert folders["cudaify.transforms.slm"] == ROOT / "transforms" / "slm"


def test_the_layers_hold(tmp_path: Path):
    tree = check_layers.lay_out(ROOT, tmp_path / "tree")
    done = check_layers.lint_imports(tree, ROOT / "pyproject.toml")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 kept, 0 broken" in done.stdout


def test_a_planted_backwards_import_breaks_them(tmp_path: Path):
    tree = check_layers.lay_out(ROOT, tmp_path / "tree")
    parse = tree / "cudaify" / "frontend" / "parse.py"
    parse.write_text(parse.read_text() + "\n\ndef _later():\n    import cudaify.pipeline\n")
    done = check_layers.lint_imports(tree, ROOT / "pyproject.toml")
    assert done.returncode != 0
    assert "cudaify.frontend is not allowed to import cudaify.pipeline" in done.stdout
    assert "cudaify.frontend.parse -> cudaify.pipeline" in done.stdout


def test_a_module_outside_every_layer_breaks_them(tmp_path: Path):
    tree = check_layers.lay_out(ROOT, tmp_path / "tree")
    (tree / "cudaify" / "stray.py").write_text("from cudaify import core\n")
    done = check_layers.lint_imports(tree, ROOT / "pyproject.toml")
    assert done.returncode != 0
    assert "cudaify.stray" in done.stdout
