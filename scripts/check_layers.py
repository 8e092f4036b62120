"""Check the import-linter contracts of pyproject.toml (the layers of DESIGN.md) on the
package as it installs: `python scripts/check_layers.py [TREE]`, exit code 0 when they hold.

The stage folders live at the top of the repository and install as `cudaify.<stage>`
(pyproject's package-dir mapping), a layout grimp cannot follow through the editable
install. So the check lays the packages out as setuptools installs them, in TREE (default
build/imports), copying only the `.py` files of the declared packages (a stale module left
in setuptools' build/lib would otherwise come back), and runs lint-imports there."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_TREE = ROOT / "build" / "imports"


def package_folders(root: Path) -> dict[str, Path]:
    """Each declared package and the folder its modules come from, e.g.
    `cudaify.transforms.slm` -> root/transforms/slm."""
    setuptools = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
    mapping: dict[str, str] = setuptools.get("package-dir", {})
    folders = {}
    for package in setuptools["packages"]:
        mapped = max((name for name in mapping if _within(package, name)), key=len, default="")
        rest = package[len(mapped) :].lstrip(".").split(".") if mapped else package.split(".")
        base = root / mapping[mapped] if mapped else root
        folders[package] = base.joinpath(*[part for part in rest if part])
    return folders


def _within(package: str, parent: str) -> bool:
    return package == parent or package.startswith(parent + ".")


def lay_out(root: Path, tree: Path) -> Path:
    """The installed layout of the packages under `tree` (emptied first); returns `tree`."""
    shutil.rmtree(tree, ignore_errors=True)
    for package, folder in package_folders(root).items():
        target = tree.joinpath(*package.split("."))
        target.mkdir(parents=True, exist_ok=True)
        for module in folder.glob("*.py"):
            shutil.copy2(module, target / module.name)
    return tree


def lint_imports(tree: Path, config: Path) -> subprocess.CompletedProcess[str]:
    """lint-imports on the packages in `tree`, with the contracts in `config`. PYTHONPATH
    puts `tree` ahead of the editable install, so grimp reads the laid-out copy."""
    executable = Path(sys.executable).with_name("lint-imports")
    command = [str(executable)] if executable.exists() else ["lint-imports"]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run(
        [*command, str(config), "--no-cache", "--no-logo"],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def main(argv: list[str]) -> int:
    tree = Path(argv[0]).resolve() if argv else DEFAULT_TREE
    done = lint_imports(lay_out(ROOT, tree), ROOT / "pyproject.toml")
    sys.stdout.write(done.stdout)
    sys.stderr.write(done.stderr)
    return done.returncode


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
