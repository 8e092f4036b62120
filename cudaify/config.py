"""The single source of truth for settings: defaults, then `[tool.cudaify]` in
pyproject.toml or `cudaify.toml` (nearest to the input, walking up), then CUDAIFY_*
environment variables, then command-line flags."""

from __future__ import annotations

import dataclasses
import os
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from cudaify.errors import ConfigError


@dataclass(frozen=True)
class Config:
    # what to compile and how
    flags: tuple[str, ...] = ()  # -I -isystem -D -U -std= -x, passed to every compile
    language: str | None = None  # "c" | "c++"; None: from the file name
    arch: str | None = None  # sm_XX; None: detected from the GPU, else a portable default
    # what to try
    strategy: str = "mcgs"  # mcgs | greedy | rules | exhaustive | oneshot | cot
    methods: tuple[str, ...] = ()  # an explicit sequence (--methods)
    max_depth: int = 3
    iterations: int = 24
    # seconds the whole command may take (reference, candidates, finalists); 0: no limit
    time_budget: float | None = 30.0
    max_slm_calls: int | None = None
    rollout_depth: int = 2  # 0: no rollouts
    # mcgs: end the search after this many candidates in a row without a 5% gain, once a
    # verified variant beats the CPU; 0: never (search until iterations or budget end)
    patience: int = 3
    seed: int = 0
    # the small language model
    slm: str = "auto"  # auto: use it when a model is at hand | on: install on first use | off
    model: str | None = None  # a registry name or a GGUF path (also $CUDAIFY_MODEL)
    llm_url: str | None = None  # an OpenAI-compatible endpoint instead of a local model
    llm_model: str | None = None
    gpu_layers: int = 0
    threads: int | None = None
    record: str | None = None  # append every completion to this JSON-lines file
    replay: str | None = None  # answer only from such a file
    examples: int = 2  # worked examples per SLM prompt
    # a model that fails this many requests in a row is switched off for the run
    model_failures: int = 5
    strict_model: bool = False  # any model failure ends the run (exit 4) instead
    llm_timeout: float = 120.0  # seconds an endpoint may take for one answer
    slm_jobs: int = 2  # local models generating at once on this machine (bench -j N workers)
    # verification
    rtol: float = 1e-4
    atol: float = 1e-9
    runs: int = 5  # timed runs of the reported variant (and the search's finalists)
    search_runs: int = 1  # timed runs per search candidate; 1: its correctness run's time
    timing_session: str | None = None  # bench: strategies share one reference timing
    differential: bool = False  # also test offloaded functions alone at other sizes (GPU)
    profile: bool = False  # read Nsight Compute counters of verified candidates (slow)
    run_timeout: float | None = None  # None: 10x the reference time, at least 10 s
    # what a variant must beat gcc -O3 at to be written: the whole program as the user runs
    # it (CUDA's start and every copy included), or only the offloaded region
    objective: str = "program"  # program | region
    compile_jobs: int = 0  # candidates compiled ahead at once; 0: up to 8, by idle cores
    # verify candidates on a Ray cluster (backend/cluster.py): "local" starts one, else its
    # address; None: in this process
    ray: str | None = None
    # behaviour
    strict: bool = False
    verbose: int = 0
    quiet: bool = False
    cache_dir: str | None = None  # None: the platform's user cache directory
    cache: bool = True  # reuse the result of an unchanged input (--no-cache: always search)
    learn: bool = False  # merge the run's verified steps into the user's reasoning graph

    def with_(self, **changes: Any) -> Config:
        return dataclasses.replace(self, **changes)


_TOML_FILES = ("cudaify.toml", "pyproject.toml")


CHOICES = {
    "objective": ("program", "region"),
    "strategy": ("mcgs", "greedy", "rules", "exhaustive", "oneshot", "cot"),
    "slm": ("auto", "on", "off"),
}


def _coerce(name: str, value: Any) -> Any:
    kinds = {f.name: f.type for f in fields(Config)}
    if name not in kinds:
        raise ConfigError(f"unknown setting '{name}'")
    if name in CHOICES and value is not None and str(value) not in CHOICES[name]:
        raise ConfigError(f"setting '{name}': {value!r} is not one of {', '.join(CHOICES[name])}")
    kind = str(kinds[name])
    try:
        if kind.startswith("tuple"):
            if isinstance(value, str):
                return tuple(part for part in value.replace(",", " ").split() if part)
            return tuple(str(part) for part in value)
        if kind.startswith("bool"):
            if isinstance(value, str):
                return value.strip().lower() in ("1", "true", "yes", "on")
            return bool(value)
        if kind.startswith("int"):
            return int(value)
        if kind.startswith("float"):
            return None if value in (None, "") else float(value)
        return None if value is None else str(value)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"setting '{name}': cannot use {value!r} ({exc})") from exc


def find_settings_file(start: Path) -> Path | None:
    """The nearest cudaify.toml, or pyproject.toml with a [tool.cudaify] table."""
    for folder in [start, *start.parents]:
        for name in _TOML_FILES:
            candidate = folder / name
            if not candidate.is_file():
                continue
            if name == "cudaify.toml" or "[tool.cudaify]" in candidate.read_text(errors="replace"):
                return candidate
    return None


def _file_settings(path: Path) -> dict[str, Any]:
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: {exc}") from exc
    table = data.get("tool", {}).get("cudaify", {}) if path.name == "pyproject.toml" else data
    return {key.replace("-", "_"): value for key, value in table.items()}


def _env_settings(environ: dict[str, str]) -> dict[str, Any]:
    names = {f.name for f in fields(Config)}
    found = {}
    for key, value in environ.items():
        if key.startswith("CUDAIFY_"):
            name = key[len("CUDAIFY_") :].lower()
            if name in names:
                found[name] = value
    return found


def load(
    start: Path, flags: dict[str, Any], environ: dict[str, str] | None = None
) -> tuple[Config, Path | None]:
    """Layer the settings; return the configuration and the settings file used."""
    settings_file = find_settings_file(start)
    layers = [
        _file_settings(settings_file) if settings_file else {},
        _env_settings(dict(os.environ if environ is None else environ)),
        {key: value for key, value in flags.items() if value is not None},
    ]
    merged: dict[str, Any] = {}
    for layer in layers:
        for name, value in layer.items():
            merged[name] = _coerce(name, value)
    return Config(**merged), settings_file


def default_cache_dir(config: Config) -> Path:
    if config.cache_dir:
        return Path(config.cache_dir)
    import platformdirs

    return Path(platformdirs.user_cache_dir("cudaify"))


__all__ = ["Config", "load", "find_settings_file", "default_cache_dir", "field"]
