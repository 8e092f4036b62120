"""Robustness fuzzing of the frontend with csmith's random C programs.

    python scripts/fuzz_frontend.py N [--first-seed S] [--keep DIR]

Generates N programs with csmith (seeds S, S+1, ..., so every run is reproducible) and
runs on each what the pipeline runs: `parse`, `to_cxx`, and `analyze` of both the
original and the C++ text. A SourceError (a program libclang rejects) is fine; any other
exception, and any "could not analyze" warning (an internal failure the analysis
swallowed to keep a run going), is a failure, printed with its seed. Exit status 1 when
any seed failed. Needs Debian's `csmith` and `libcsmith-dev` (for csmith.h)."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cudaify.core import toolchain
from cudaify.core.errors import SourceError
from cudaify.frontend.analyze import analyze
from cudaify.frontend.cxx_compat import to_cxx
from cudaify.frontend.parse import parse

CSMITH_INCLUDE_DIRS = ("/usr/include/csmith", "/usr/include/csmith-2.3.0")
# Small programs keep a sample fast; the generator's defaults otherwise.
CSMITH_OPTIONS = (
    "--max-funcs", "3", "--max-block-depth", "3", "--max-block-size", "3",
    "--max-array-len-per-dim", "4",
)  # fmt: skip


@dataclass(frozen=True)
class Outcome:
    seed: int
    status: str  # ok | rejected | failed
    detail: str = ""
    seconds: float = 0.0


def csmith_include() -> str | None:
    """The folder holding csmith.h, or None when the runtime headers are missing."""
    for directory in CSMITH_INCLUDE_DIRS:
        if os.path.isfile(os.path.join(directory, "csmith.h")):
            return directory
    return None


def missing_tools() -> str | None:
    """Why fuzzing cannot run here, or None."""
    if shutil.which("csmith") is None:
        return "csmith not installed (apt-get install csmith libcsmith-dev)"
    if csmith_include() is None:
        return "csmith.h not found (apt-get install libcsmith-dev)"
    return None


def generate(seed: int, folder: Path) -> Path:
    """The csmith program for `seed`, written to folder/csmith_<seed>.c."""
    path = folder / f"csmith_{seed}.c"
    done = toolchain.run(
        [toolchain.find_tool("csmith"), "--seed", str(seed), *CSMITH_OPTIONS, "-o", str(path)],
        timeout=60,
    )
    if done.returncode != 0 or not path.exists():
        raise RuntimeError(f"csmith --seed {seed} failed: {done.errors()[-500:]}")
    return path


def check(path: Path, flags: tuple[str, ...]) -> None:
    """Run the frontend as the pipeline does; raise on anything but a rejected program."""
    parsed = parse(str(path), flags)
    compat = to_cxx(parsed)
    programs = [
        analyze(str(path), flags),
        analyze(str(path), flags, source=compat.text.encode("utf-8", "surrogateescape")),
    ]
    for program in programs:
        swallowed = [w for w in program.warnings if "cudaify could not analyze" in w]
        if swallowed:
            raise AssertionError(swallowed[0])


def classify(
    seed: int, path: Path, checker: Callable[[Path, tuple[str, ...]], None] = check
) -> Outcome:
    """ok, rejected (libclang's diagnostics), or failed (the traceback)."""
    include = csmith_include() or "/usr/include/csmith"
    started = time.perf_counter()
    try:
        checker(path, ("-I", include, "-w"))
    except SourceError as exc:
        return Outcome(seed, "rejected", str(exc)[:200], time.perf_counter() - started)
    except Exception:  # noqa: BLE001 - every other exception is the finding
        return Outcome(seed, "failed", traceback.format_exc(), time.perf_counter() - started)
    return Outcome(seed, "ok", "", time.perf_counter() - started)


def fuzz_one(seed: int, folder: Path) -> Outcome:
    return classify(seed, generate(seed, folder))


def fuzz(seeds: range, keep: Path | None = None) -> list[Outcome]:
    with tempfile.TemporaryDirectory(prefix="cudaify-fuzz-") as temp:
        folder = keep or Path(temp)
        folder.mkdir(parents=True, exist_ok=True)
        outcomes = []
        for seed in seeds:
            outcome = fuzz_one(seed, folder)
            outcomes.append(outcome)
            print(f"seed {seed}: {outcome.status} ({outcome.seconds:.1f} s)", flush=True)
            if outcome.status == "failed":
                print(f"seed {seed}: FAILED\n{outcome.detail}", file=sys.stderr, flush=True)
            elif keep is None:
                (folder / f"csmith_{seed}.c").unlink(missing_ok=True)
        return outcomes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("count", type=int, help="how many programs")
    parser.add_argument("--first-seed", type=int, default=1)
    parser.add_argument("--keep", type=Path, help="keep the generated programs in this folder")
    args = parser.parse_args(argv)
    why = missing_tools()
    if why:
        print(f"fuzz_frontend: {why}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    outcomes = fuzz(range(args.first_seed, args.first_seed + args.count), args.keep)
    counts = {s: sum(o.status == s for o in outcomes) for s in ("ok", "rejected", "failed")}
    slowest = max(outcomes, key=lambda o: o.seconds)
    print(
        f"{len(outcomes)} programs (seeds {args.first_seed}..{args.first_seed + args.count - 1}): "
        f"{counts['ok']} analysed, {counts['rejected']} rejected by libclang, "
        f"{counts['failed']} failed; {time.perf_counter() - started:.1f} s "
        f"(slowest: seed {slowest.seed}, {slowest.seconds:.2f} s)"
    )
    failed = [o.seed for o in outcomes if o.status == "failed"]
    if failed:
        print("failed seeds: " + " ".join(map(str, failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
