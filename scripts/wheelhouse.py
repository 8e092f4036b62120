"""Collect every dependency of cudaify for an offline install on another machine (a GPU
node with no package index), for a chosen Python version on x86-64 Linux.

    python scripts/wheelhouse.py --python-version 3.12 --dest wheelhouse [--extra DIR]

Binary wheels for every dependency that has them; llama-cpp-python publishes only a
source distribution, so its sdist and its build requirements are collected too and pip
builds it offline. cudaify itself goes in as a wheel. `--extra DIR` adds wheels built
elsewhere (pycuda has none on the index; build it on the GPU host once).
Install on the target with:
    python3 -m pip install --no-index --find-links wheelhouse cudaify[gpu]"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLATFORMS = [
    "manylinux2014_x86_64",
    "manylinux_2_17_x86_64",
    "manylinux_2_27_x86_64",
    "manylinux_2_28_x86_64",
    "manylinux1_x86_64",
    "manylinux_2_5_x86_64",
    "linux_x86_64",
]
SOURCE_ONLY = {"llama-cpp-python", "pycuda"}
BUILD_REQUIREMENTS = ["scikit-build-core[pyproject]>=0.9.2", "setuptools", "wheel"]


def pip(*args: str) -> None:
    command = [sys.executable, "-m", "pip", *args]
    print("+", " ".join(command), flush=True)
    subprocess.run(command, check=True)


def requirements() -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return list(project["dependencies"])


def name_of(requirement: str) -> str:
    for mark in "=<>![ ;":
        requirement = requirement.split(mark)[0]
    return requirement.strip().lower()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python-version", default="3.12")
    parser.add_argument("--dest", default="wheelhouse")
    parser.add_argument("--extra", help="a folder of extra wheels to copy in (e.g. pycuda)")
    args = parser.parse_args()
    dest = Path(args.dest)
    dest.mkdir(parents=True, exist_ok=True)
    target = ["--python-version", args.python_version, "--implementation", "cp"]
    for platform in PLATFORMS:
        target += ["--platform", platform]
    binary = [r for r in requirements() if name_of(r) not in SOURCE_ONLY]
    source = [r for r in requirements() if name_of(r) in SOURCE_ONLY and name_of(r) != "pycuda"]
    pip("download", "--only-binary=:all:", *target, "-d", str(dest), *binary, *BUILD_REQUIREMENTS)
    pip("download", "--no-deps", "--no-binary=:all:", "-d", str(dest), *source)
    pip("wheel", "--no-deps", "-w", str(dest), str(ROOT))
    if args.extra:
        extra = sorted(Path(args.extra).glob("*.whl"))
        for wheel in extra:
            shutil.copy2(wheel, dest)
        # their own dependencies (pycuda needs pytools, mako...), as binary wheels
        pip("download", "--only-binary=:all:", *target, "-d", str(dest), *map(str, extra))
    print(f"wheelhouse ready: {dest} ({len(list(dest.iterdir()))} files)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
