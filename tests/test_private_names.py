"""No module of cudaify uses another module's private (`_name`) names: what two modules
share is public where it lives (transforms/kernel_codegen.py for the kernel code every
method emits). Tests may reach into a module; shipped code may not."""

from __future__ import annotations

import ast
import importlib.util
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _is_our_module(dotted: str) -> bool:
    """Whether `dotted` names a module of cudaify (not a class or function in one)."""
    if not dotted.startswith("cudaify."):
        return False
    try:
        return importlib.util.find_spec(dotted) is not None
    except (ImportError, ValueError):
        return False


def _module_aliases(tree: ast.Module) -> dict[str, str]:
    """The names a source binds to cudaify modules: `import cudaify.x as m`,
    `from cudaify.transforms import offload` (and `as m`)."""
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and _is_our_module(alias.name):
                    aliases[alias.asname] = alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                if _is_our_module(f"{node.module}.{alias.name}"):
                    aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return aliases


def private_uses(source: str) -> list[str]:
    """Each use of another module's private name in `source`, as `line: what`:
    `from m import _x` (any module), and `m._x` where m is a cudaify module."""
    tree = ast.parse(source)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            found += [
                f"{node.lineno}: from {'.' * node.level}{node.module or ''} import {alias.name}"
                for alias in node.names
                if private(alias.name)
            ]
    aliases = _module_aliases(tree)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in aliases
            and private(node.attr)
        ):
            found.append(f"{node.lineno}: {node.value.id}.{node.attr} ({aliases[node.value.id]})")
    return sorted(found, key=lambda line: int(line.split(":")[0]))


def package_folders(root: Path) -> list[Path]:
    """The folders installed as cudaify's packages (pyproject's package-dir mapping)."""
    settings = tomllib.loads((root / "pyproject.toml").read_text())
    folders = settings["tool"]["setuptools"]["package-dir"].values()
    return sorted({root / folder for folder in folders})


def violations(folders: list[Path], root: Path) -> list[str]:
    found = []
    for folder in folders:
        for path in sorted(folder.rglob("*.py")):
            where = path.relative_to(root)
            found += [f"{where}:{use}" for use in private_uses(path.read_text())]
    return found


def test_no_module_uses_another_modules_private_names():
    assert violations(package_folders(ROOT), ROOT) == []


def test_the_package_folders_are_the_stages():
    names = {folder.name for folder in package_folders(ROOT)}
    assert {"cudaify", "frontend", "transforms", "backend", "regraph", "mcgs"} <= names


def test_a_private_import_is_found():
    source = "from cudaify.transforms.offload import MIN_ITERATIONS, _paren\n"
    assert private_uses(source) == ["1: from cudaify.transforms.offload import _paren"]
    assert private_uses("from .sibling import _helper\n") == ["1: from .sibling import _helper"]


def test_a_private_attribute_of_an_imported_module_is_found():
    source = (
        "from cudaify.transforms import pattern_support as ps\n"
        "import cudaify.frontend.dependence as dep\n"
        "x = ps._IDENT\n"
        "y = dep._empty(1)\n"
    )
    assert private_uses(source) == [
        "3: ps._IDENT (cudaify.transforms.pattern_support)",
        "4: dep._empty (cudaify.frontend.dependence)",
    ]


def test_own_privates_dunders_and_objects_are_allowed():
    source = (
        "import os\n"
        "from cudaify.transforms.kernel_codegen import Level, paren\n"
        "def _mine(): return 1\n"
        "class A:\n"
        "    def f(self): return self._state, Level._fields, os._exit, _mine(), __name__\n"
        "from cudaify.transforms import offload\n"
        "z = offload.__doc__, paren\n"
    )
    assert private_uses(source) == []


def test_a_planted_violation_in_a_package_tree_fails_the_check(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.setuptools]\npackage-dir = { "cudaify.stage" = "stage" }\n'
    )
    (tmp_path / "stage").mkdir()
    (tmp_path / "stage" / "a.py").write_text("def _helper():\n    return 1\n")
    (tmp_path / "stage" / "b.py").write_text("from cudaify.stage.a import _helper\n")
    found = violations(package_folders(tmp_path), tmp_path)
    assert found == ["stage/b.py:1: from cudaify.stage.a import _helper"]
