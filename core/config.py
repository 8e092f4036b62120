"""The single source of truth for settings: defaults, then `[tool.cudaify]` in
pyproject.toml or `cudaify.toml` (nearest to the input, walking up), then CUDAIFY_*
environment variables, then command-line flags.

Each setting is declared once, as a field of `Config` made by `setting(...)`: its default,
its help and command-line spelling, the commands that take it, and whether it changes the
result. The click options (`cudaify/options.py`), the TOML keys, the environment variables
and the result-cache key (`pipeline.result_key`) are all read from these declarations."""

from __future__ import annotations

import dataclasses
import functools
import os
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from cudaify.core.errors import ConfigError

COMPILE = ("compile",)
COMPILE_BENCH = ("compile", "bench")
ENV_PREFIX = "CUDAIFY_"


@dataclass(frozen=True)
class Option:
    """A setting's command-line spelling, in click's terms. `help_for` words the help
    differently for some of the `commands`; the option's type follows the field's."""

    names: tuple[str, ...]  # ("--max-depth",), ("-q", "--quiet"), ("--learn/--no-learn",)
    help: str
    commands: tuple[str, ...]
    help_for: tuple[tuple[str, str], ...] = ()  # (command, help) pairs
    metavar: str | None = None
    path: bool = False  # the value names a file (click.Path: shown as PATH)
    flag_value: Any = None  # a bool's value when given; a str's when given without a value
    count: bool = False  # -v -v: how many times given

    def help_in(self, command: str) -> str:
        return dict(self.help_for).get(command, self.help)


@dataclass(frozen=True)
class Setting:
    """What a Config field declares besides its default. `option` is None only with a
    reason in `why_no_option`; `result` is False only with a reason in `same_output`."""

    option: Option | None
    result: bool
    same_output: str = ""  # why the setting does not change what a compile gives
    why_no_option: str = ""  # why no command-line option spells it
    choices: tuple[str, ...] = ()
    files: bool = True  # read from [tool.cudaify] / cudaify.toml and CUDAIFY_<NAME>


def setting(
    default: Any,
    *names: str,
    help: str = "",  # noqa: A002 - click's word for it
    commands: tuple[str, ...] = COMPILE,
    help_for: dict[str, str] | None = None,
    metavar: str | None = None,
    path: bool = False,
    flag_value: Any = None,
    count: bool = False,
    choices: tuple[str, ...] = (),
    result: bool = False,
    same_output: str = "",
    no_option: str = "",
    files: bool = True,
) -> Any:
    """A Config field with its declaration. Say either `result=True` (the setting changes
    the output, so it enters the result-cache key) or why it does not (`same_output`);
    give either option names or why there is none (`no_option`)."""
    if result == bool(same_output):
        raise TypeError("a setting needs result=True or a same_output reason, not both")
    if bool(names) == bool(no_option):
        raise TypeError("a setting needs option names or a no_option reason, not both")
    option = None
    if names:
        option = Option(
            names=names,
            help=help,
            commands=commands,
            help_for=tuple((help_for or {}).items()),
            metavar=metavar,
            path=path,
            flag_value=flag_value,
            count=count,
        )
    declared = Setting(option, result, same_output, no_option, choices, files)
    return field(default=default, metadata={"setting": declared})


# Reasons shared by several settings for not entering the result-cache key.
_HOW_NOT_WHAT = "how the work is spread or shown, not what it finds"
_MODEL_FAILED = "it matters only once the model fails, and a run whose model failed is not cached"


@dataclass(frozen=True)
class Config:
    """Every setting, in the order `cudaify compile --help` lists them."""

    # what to compile
    flags: tuple[str, ...] = setting(
        (),
        no_option="spelled as the compiler's own -I -isystem -D -U -std -x -p, which "
        "cli.compiler_flag_options gathers, in order, into this one tuple",
        result=True,
    )
    language: str | None = setting(  # "c" | "c++"; None: from the file name
        None,
        no_option="-x reaches every compile through `flags`; this is the settings files' word",
        result=True,
    )
    # what to try
    methods: tuple[str, ...] = setting(
        (),
        "--methods",
        help="Apply this comma-separated sequence of methods instead of searching "
        "(see `cudaify methods`).",
        result=True,
    )
    strategy: str = setting(
        "mcgs",
        "--strategy",
        choices=("mcgs", "greedy", "rules", "exhaustive", "oneshot", "cot"),
        help="How to search: mcgs over the reasoning graph (default), greedy, rules (no model: "
        "every rule sequence along the graph's edges), exhaustive (no model: every applicable "
        "rule sequence up to --max-depth), or the one-prompt baselines oneshot and cot.",
        result=True,  # bench's --strategy is its own option: a list of strategies to compare
    )
    max_depth: int = setting(
        3,
        "--max-depth",
        commands=COMPILE_BENCH,
        help="Longest method sequence tried (default 3).",
        result=True,
    )
    rollout_depth: int = setting(
        2,
        "--rollout-depth",
        commands=COMPILE_BENCH,
        help="mcgs: rule steps a rollout looks ahead from a variant faster than the CPU "
        "(default 2; 0: no rollouts).",
        result=True,
    )
    patience: int = setting(
        3,
        "--patience",
        commands=COMPILE_BENCH,
        help="mcgs: once a verified variant beats the CPU, stop after this many candidates in a "
        "row without a 5% gain (default 3; 0: search until --iterations or the budget end).",
        result=True,
    )
    objective: str = setting(
        "program",
        "--objective",
        commands=COMPILE_BENCH,
        choices=("program", "region"),
        help="What a variant must beat gcc -O3 at to be written: the whole program as you run "
        "it, CUDA's start and every copy included (program, default), or only the offloaded "
        "code (region).",
        result=True,
    )
    # the small language model
    slm: str = setting(
        "auto",
        "--slm",
        commands=COMPILE_BENCH,
        choices=("auto", "on", "off"),
        help="Use the small language model: auto (default) when one is installed or named, "
        "on (install the default model on first use), off (rules only).",
        help_for={
            "bench": "Use the small language model (as for compile; oneshot and cot need one)."
        },
        result=True,
    )
    model: str | None = setting(
        None,
        "--model",
        commands=COMPILE_BENCH,
        help="A GGUF file or a registry name (also $CUDAIFY_MODEL).",
        result=True,
    )
    llm_url: str | None = setting(
        None,
        "--llm-url",
        commands=COMPILE_BENCH,
        help="An OpenAI-compatible endpoint instead of a local model (key from "
        "$CUDAIFY_LLM_API_KEY).",
        help_for={"bench": "An OpenAI-compatible endpoint instead of a local model."},
        result=True,
    )
    llm_model: str | None = setting(
        None,
        "--llm-model",
        commands=COMPILE_BENCH,
        help="The model name the endpoint expects.",
        result=True,
    )
    # where and on how many threads llama.cpp computes changes its floating-point sums, and
    # so, at times, its answers (ggml-org/llama.cpp#163)
    gpu_layers: int = setting(
        0,
        "--gpu-layers",
        commands=COMPILE_BENCH,
        help="Model layers to offload to the GPU (llama.cpp).",
        result=True,
    )
    threads: int | None = setting(
        None,
        "--threads",
        commands=("bench",),
        help="CPU threads per local model.",
        result=True,
    )
    max_slm_calls: int | None = setting(
        None,
        "--max-slm-calls",
        commands=COMPILE_BENCH,
        help="At most this many SLM edits per run.",
        help_for={"bench": "At most this many SLM edits per program."},
        result=True,
    )
    slm_jobs: int = setting(
        2,
        "--slm-jobs",
        commands=("bench",),
        help="Local models generating at once across the -j workers (default 2); each worker "
        "loads its own model once. The reported timings wait for generation to stop.",
        same_output=_HOW_NOT_WHAT,
    )
    model_failures: int = setting(
        5,
        "--model-failures",
        metavar="N",
        help="Switch the model off for the run after N failed requests in a row (default 5); "
        "the search goes on with the rules.",
        same_output=_MODEL_FAILED,
    )
    strict_model: bool = setting(
        False,
        "--strict-model",
        help="Any model failure (unreachable, HTTP error, timeout, unusable answer) is an error "
        "(exit 4, no output) instead of a dead edge.",
        same_output=_MODEL_FAILED,
    )
    llm_timeout: float = setting(
        120.0,
        "--llm-timeout",
        metavar="SECONDS",
        help="Seconds an endpoint may take for one answer (default 120).",
        same_output=_MODEL_FAILED,  # an answer that takes longer is a failure
    )
    record: str | None = setting(
        None,
        "--record",
        path=True,
        help="Append every model completion to this JSON-lines file.",
        same_output="it copies the answers to a file; they are the same without it",
    )
    replay: str | None = setting(
        None,
        "--replay",
        path=True,
        help="Answer model requests only from a --record file (no model is loaded).",
        result=True,
    )
    examples: int = setting(
        2,  # worked examples per SLM prompt
        no_option="a tuning knob of the prompts, set in settings files or the environment",
        result=True,
    )
    # the search's budget and verification
    iterations: int = setting(
        24,
        "--iterations",
        commands=COMPILE_BENCH,
        help="Search iterations for mcgs (default 24).",
        help_for={"bench": "Search iterations per program."},
        result=True,
    )
    time_budget: float | None = setting(
        30.0,
        "--time-budget",
        commands=COMPILE_BENCH,
        help="Seconds the whole command may take: reference, candidates, finalists (default 30; "
        "0: no limit). When they are spent, the best variant verified so far (or the input as "
        "host code) is written, and cudaify says so.",
        help_for={
            "bench": "Seconds each program's whole compile may take (default 30; 0: no limit)."
        },
        result=True,
    )
    seed: int = setting(
        0,
        "--seed",
        commands=COMPILE_BENCH,
        help="Seed for the search's tie-breaking (repeatable runs).",
        help_for={"bench": "Seed for the searches (repeatable runs)."},
        result=True,
    )
    arch: str | None = setting(  # sm_XX; None: detected from the GPU, else a portable default
        None,
        "--arch",
        commands=COMPILE_BENCH,
        help="GPU architecture for nvcc, such as sm_90 (default: the GPU's own).",
        help_for={"bench": "GPU architecture for nvcc (default: the GPU's own)."},
        result=True,
    )
    rtol: float = setting(
        1e-4,
        "--rtol",
        commands=("compile", "check"),
        help="Relative tolerance for numbers in the output (default 1e-4).",
        help_for={"check": "Relative tolerance for numbers in the output."},
        result=True,
    )
    atol: float = setting(
        1e-9,
        "--atol",
        commands=("compile", "check"),
        help="Absolute tolerance for numbers in the output (default 1e-9).",
        help_for={"check": "Absolute tolerance for numbers in the output."},
        result=True,
    )
    runs: int = setting(
        5,
        "--runs",
        commands=COMPILE_BENCH,
        help="Timed runs of the variant written out and of the search's finalists; the median "
        "counts (default 5).",
        help_for={"bench": "Timed runs of each program's final variant (default 5)."},
        result=True,
    )
    search_runs: int = setting(
        1,
        "--search-runs",
        commands=COMPILE_BENCH,
        help="Timed runs per search candidate (default 1: its correctness run's own time).",
        help_for={"bench": "Timed runs per search candidate (default 1)."},
        result=True,
    )
    timing_session: str | None = setting(
        None,
        "--timing-session",
        commands=("bench",),
        metavar="NAME",
        help="Share the CPU reference's timings with other bench runs given the same NAME "
        "(two benches side by side, or one after the other, then divide by the same reference "
        "time, taken once). Default: this run's own.",
        same_output="bench runs with the result cache off; a shared reference timing is a "
        "measurement like any other",
    )
    run_timeout: float | None = setting(  # None: 10x the reference time, at least 10 s
        None,
        no_option="a rare override of a derived limit, set in settings files or the environment",
        result=True,
    )
    compile_jobs: int = setting(  # 0: up to 8, by idle cores
        0,
        no_option="a machine's tuning, set in settings files or the environment",
        same_output=_HOW_NOT_WHAT,
    )
    # behaviour
    learn: bool = setting(
        False,
        "--learn/--no-learn",
        help="Merge this run's verified steps into your reasoning graph as worked examples "
        "(in the user data folder; the shipped graph is never written); later runs search both.",
        # the graph it writes enters the key itself: the next run's key changes when it
        # added an example
        same_output="it writes the user's graph after the search",
    )
    learn_stats: bool = setting(
        True,
        "--learn-stats/--no-learn-stats",
        commands=COMPILE_BENCH,
        help="Record how this run's steps fared (attempts, successes, speedup over the parent) "
        "in the edge statistics of your reasoning graph when it ran on a GPU (default: on); "
        "they steer later searches' priors.",
        help_for={
            "bench": "Let the benchmark's compiles record edge statistics (default: on); "
            "--no-learn-stats keeps each program's search independent of the ones before it."
        },
        # the statistics steer later searches, yet stay out of the key: every GPU compile
        # changes them, and a key over them would miss for every other input after it
        same_output="it writes the learned edge statistics after the search; they are not in "
        "the key, or every compile on a GPU would make every other input's entry miss",
    )
    strict: bool = setting(
        False,
        "--strict",
        help="Exit 3 when no verified GPU variant was found.",
        same_output="it decides the exit code from the result, not the result",
    )
    differential: bool = setting(
        False,
        "--differential",
        help="Also test each offloaded function and kernel alone on random inputs at other sizes.",
        result=True,
    )
    profile: bool = setting(
        False,
        "--profile",
        help="Record Nsight Compute counters (DRAM %, occupancy) of verified candidates.",
        same_output="the counters are recorded on evaluations; nothing that picks or writes the "
        "output reads them",
    )
    cache_dir: str | None = setting(  # None: the platform's user cache directory
        None,
        no_option="where caches live is the machine's business: settings files or the environment",
        same_output="it says where the cache is, not what is in it",
    )
    cache: bool = setting(
        True,
        "--no-cache",
        flag_value=False,
        help="Search again even when an identical run is in the cache.",
        same_output="it says whether to read the cache",
    )
    ray: str | None = setting(
        None,
        "--ray",
        commands=COMPILE_BENCH,
        flag_value="local",
        metavar="[ADDRESS]",
        help="Run on a Ray cluster (pip install 'cudaify[ray]'): alone, one started on this "
        "machine; with an address (auto, HOST:PORT, ray://HOST:PORT), that cluster. Builds go "
        "to CPU workers, runs to GPU workers.",
        # candidates are verified and timed on the cluster's GPUs, which the key's list of
        # this machine's GPUs does not name
        result=True,
    )
    verbose: int = setting(
        0,
        "-v",
        "--verbose",
        count=True,
        help="Say more (-vv: debug output and tracebacks).",
        same_output=_HOW_NOT_WHAT,
    )
    quiet: bool = setting(
        False, "-q", "--quiet", help="Print errors only.", same_output=_HOW_NOT_WHAT
    )

    def with_(self, **changes: Any) -> Config:
        return dataclasses.replace(self, **changes)


def declared(name: str) -> Setting:
    """The declaration of the Config field `name`."""
    return _table(Config)[name][0]


def settings() -> Iterator[tuple[str, Setting]]:
    """Every field's name and declaration, in declaration order."""
    return ((name, entry[0]) for name, entry in _table(Config).items())


def kind(name: str) -> str:
    """The field's value kind: bool, int, float, str or tuple (None is allowed where the
    annotation says `| None`)."""
    annotation = _table(Config)[name][1]
    for candidate in ("tuple", "bool", "int", "float"):
        if annotation.startswith(candidate):
            return candidate
    return "str"


def env_name(name: str) -> str:
    return ENV_PREFIX + name.upper()


def result_settings(config: Config) -> dict[str, Any]:
    """The settings that change what a compile gives: the result-cache key's part."""
    return {name: getattr(config, name) for name, declaration in settings() if declaration.result}


@functools.cache
def _table(cls: type) -> dict[str, tuple[Setting, str]]:
    """Each field's declaration and annotation, read once per class (`Config` is looked
    up when called, so a test can put a class with one more field in its place)."""
    table = {}
    for each in fields(cls):
        if "setting" not in each.metadata:
            raise TypeError(f"{cls.__name__}.{each.name}: declare it with setting(...)")
        table[each.name] = (each.metadata["setting"], str(each.type))
    return table


_TOML_FILES = ("cudaify.toml", "pyproject.toml")


def _coerce(name: str, value: Any) -> Any:
    if name not in _table(Config):
        raise ConfigError(f"unknown setting '{name}'")
    choices = declared(name).choices
    if choices and value is not None and str(value) not in choices:
        raise ConfigError(f"setting '{name}': {value!r} is not one of {', '.join(choices)}")
    try:
        return _parse(kind(name), value)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"setting '{name}': cannot use {value!r} ({exc})") from exc


def _parse(value_kind: str, value: Any) -> Any:
    """A TOML value, an environment string or a flag's value as the field's kind."""
    if value_kind == "tuple":
        if isinstance(value, str):
            return tuple(part for part in value.replace(",", " ").split() if part)
        return tuple(str(part) for part in value)
    if value_kind == "bool":
        if isinstance(value, str):
            return value.strip().lower() in ("1", "true", "yes", "on")
        return bool(value)
    if value_kind == "int":
        return int(value)
    if value_kind == "float":
        return None if value in (None, "") else float(value)
    return None if value is None else str(value)


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
    found = {key.replace("-", "_"): value for key, value in table.items()}
    for name in found:
        if name in _table(Config) and not declared(name).files:
            raise ConfigError(f"unknown setting '{name}'")
    return found


def _env_settings(environ: dict[str, str]) -> dict[str, Any]:
    found = {}
    for key, value in environ.items():
        if key.startswith(ENV_PREFIX):
            name = key[len(ENV_PREFIX) :].lower()
            if name in _table(Config) and declared(name).files:
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


__all__ = [
    "Config",
    "Option",
    "Setting",
    "setting",
    "declared",
    "settings",
    "kind",
    "env_name",
    "result_settings",
    "load",
    "find_settings_file",
    "default_cache_dir",
    "field",
]
