"""Relabeling: teachers and curators name one optimization many ways ("shared memory
tiling", "smem_tiling", "tiling with shared memory"); the graph needs one node per method.

A name is first normalised (case, separators, camelCase, plurals, filler words, and word
order: the key is the sorted set of its words), then looked up in the synonym table and
among the graph's own methods; only a name neither resolves goes to the teacher acting as
judge (when one is set), and only a name the judge calls new becomes a new node."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from cudaify.regraph.teacher import TextModel, ask

# The methods the compiler knows (transforms/) and the ones it plans; description, category.
CANONICAL: dict[str, tuple[str, str]] = {
    "sequential": ("the input program, unmodified", "start"),
    "offload": ("parallel loop nest to a CUDA kernel, one thread per iteration", "mapping"),
    "coalesce": ("make consecutive threads touch consecutive addresses", "memory"),
    "data_residency": ("keep arrays on the device across calls and loops", "memory"),
    "reduction": ("parallel tree reduction (warp shuffles, block partials)", "mapping"),
    "atomic_privatize": ("per-block private copies of atomically updated data", "memory"),
    "shared_tiling": ("stage reused tiles of global arrays in shared memory", "memory"),
    "register_tiling": ("several outputs per thread, reused values in registers", "compute"),
    "unroll": ("unroll short inner loops", "compute"),
    "readonly_cache": ("read-only data through const __restrict__ / __ldg", "memory"),
    "fast_math": ("intrinsics and single precision where the output allows", "compute"),
    "launch_tuning": ("block size and grid shape for occupancy", "mapping"),
    "narrow_counters": ("32-bit grid-stride counters where a launch's sizes fit", "compute"),
    "scan": ("parallel prefix sum (block scans plus a carry pass)", "mapping"),
    "wavefront": ("run anti-diagonals of a dependent nest in parallel", "mapping"),
}

_SYNONYM_PHRASES: dict[str, tuple[str, ...]] = {
    "offload": (
        "kernel offload",
        "gpu offload",
        "parallelize",
        "parallelization",
        "cuda kernel",
        "naive kernel",
        "kernelize",
        "map loop to threads",
        "one thread per element",
    ),
    "coalesce": (
        "coalescing",
        "memory coalescing",
        "coalesced access",
        "coalesced memory access",
        "loop interchange for coalescing",
        "transpose access",
    ),
    "data_residency": (
        "keep data on device",
        "device resident data",
        "data reuse across launches",
        "avoid transfers",
        "persistent device buffers",
        "minimize host device transfers",
    ),
    "reduction": (
        "parallel reduction",
        "tree reduction",
        "warp reduction",
        "warp shuffle reduction",
        "block reduction",
        "shuffle reduction",
    ),
    "atomic_privatize": (
        "privatization",
        "privatisation",
        "privatize",
        "shared memory atomics",
        "privatized histogram",
        "atomic privatization",
        "local histogram",
    ),
    "shared_tiling": (
        "shared memory tiling",
        "smem tiling",
        "tiling with shared memory",
        "shared tiling",
        "tiling",
        "shared memory",
        "shared memory blocking",
        "use shared memory",
    ),
    "register_tiling": (
        "register blocking",
        "register tiling",
        "thread coarsening",
        "coarsening",
        "multiple outputs per thread",
    ),
    "unroll": ("loop unrolling", "unrolling", "unroll loops", "pragma unroll"),
    "readonly_cache": (
        "read only cache",
        "ldg",
        "restrict pointers",
        "const restrict",
        "texture cache",
    ),
    "fast_math": ("fast math", "intrinsics", "use fast math", "single precision math"),
    "launch_tuning": (
        "block size tuning",
        "launch configuration",
        "occupancy tuning",
        "tune block size",
        "launch bounds",
    ),
    "narrow_counters": (
        "32 bit indexing",
        "int loop counters",
        "narrow loop counters",
        "32 bit grid stride counters",
    ),
    "scan": ("prefix sum", "parallel scan", "parallel prefix sum", "inclusive scan"),
    "wavefront": ("anti diagonal", "diagonal parallelism", "wavefront parallelization"),
}

_FILLER = frozenset(
    "a an the of with via for to in on by use using apply applying loop loops optimization "
    "optimisation opt".split()
)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_WORD = re.compile(r"[a-z0-9]+")


def _stem(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def normalise(name: str) -> str:
    """The comparison key of a method name: its significant words, stemmed and sorted."""
    words = _WORD.findall(_CAMEL.sub(" ", name).lower())
    significant = {_stem(w) for w in words if w not in _FILLER}
    if not significant:  # a name of filler words only ("loop") is still a name
        significant = {_stem(w) for w in words}
    return " ".join(sorted(significant))


def snake_case(name: str) -> str:
    return "_".join(_WORD.findall(_CAMEL.sub(" ", name).lower())) or "unnamed"


SYNONYMS: dict[str, str] = {
    normalise(phrase): canonical
    for canonical, phrases in _SYNONYM_PHRASES.items()
    for phrase in (canonical, *phrases)
}


def known_name(name: str, known: Iterable[str] = ()) -> str | None:
    """The method `name` means, from the synonym table or the known names; None if neither."""
    key = normalise(name)
    if key in SYNONYMS:
        return SYNONYMS[key]
    for method in [*known, *CANONICAL]:
        if normalise(method) == key:
            return method
    return None


JUDGE_SYSTEM = (
    "You classify CUDA optimization steps. Answer with JSON only: "
    '{"method": "<one of the listed names>"} when the step is the same optimization as a '
    'listed method, {"method": "new"} when it is a different one.'
)


def judge_prompt(name: str, detail: str, known: Iterable[str]) -> list[dict[str, str]]:
    listing = "\n".join(f"- {m}: {CANONICAL.get(m, ('', ''))[0]}".rstrip(": ") for m in known)
    step = f"Step name: {name}\nWhat it did: {detail or '(not given)'}"
    return [
        {"role": "system", "content": JUDGE_SYSTEM},
        {"role": "user", "content": f"Known methods:\n{listing}\n\n{step}"},
    ]


def judge(model: TextModel, name: str, detail: str, known: list[str]) -> str | None:
    """The teacher's verdict: a known method, or None for a new one (or an answer that
    names nothing on the list: a judge's mistake must not invent a merge)."""
    text = ask(model, judge_prompt(name, detail, known), max_tokens=64)
    match = re.search(r"\{.*?\}", text, re.S)
    try:
        answer = json.loads(match.group(0)) if match else {}
    except json.JSONDecodeError:
        return None
    method = answer.get("method") if isinstance(answer, dict) else None
    return method if method in known else None


def relabel(
    name: str, known: Iterable[str] = (), detail: str = "", model: TextModel | None = None
) -> str:
    """The graph's name for the method a step calls `name`."""
    known = sorted(set(known) | set(CANONICAL))
    found = known_name(name, known)
    if found is not None:
        return found
    if model is not None:
        verdict = judge(model, name, detail, [m for m in known if m != "sequential"])
        if verdict is not None:
            return verdict
    return snake_case(name)


def describe(name: str) -> tuple[str, str]:
    """(description, category) of a method: the registry's when it is registered."""
    try:
        from cudaify.transforms import METHODS

        if name in METHODS:
            info = METHODS[name].describe()
            return info["description"], info["category"] or CANONICAL.get(name, ("", ""))[1]
    except ImportError:  # pragma: no cover - transforms is part of the package
        pass
    return CANONICAL.get(name, ("", ""))
