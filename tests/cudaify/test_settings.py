"""Settings are declared once, on `Config`'s fields: the click options of every command,
the TOML keys, the CUDAIFY_* variables and the result-cache key all come from there."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import fields
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from cudaify import cli, options, pipeline
from cudaify.core import config
from cudaify.core.config import COMPILE, Config, ConfigError, load, setting

# Options whose parameter has a Config field's name but that are no setting's option, and
# why: each command reads them itself.
HAND_WRITTEN = {
    "compile": {"language": "-x, gathered into `flags` with -I -D -U -std"},
    "bench": {"verbose": "bench's own logging; the compiles it runs stay quiet"},
    "check": {
        "language": "-x, gathered into `flags` with -I -D -U -std",
        "strict": "check's own exit rule; a settings file's `strict` does not apply to check",
        "verbose": "check's tracebacks",
    },
}

ARGUMENTS = {"compile": ("in.c",), "bench": (), "check": ("in.c", "out.cu")}

# A value of each kind: (TOML literal, environment string, the value it gives)
SAMPLES: dict[str, tuple[str, str, Any]] = {
    "bool": ("true", "yes", True),
    "int": ("7", "7", 7),
    "float": ("0.5", "0.5", 0.5),
    "str": ('"sm_90"', "sm_90", "sm_90"),
    "tuple": ('["-DN=8", "-DM=2"]', "-DN=8,-DM=2", ("-DN=8", "-DM=2")),
}


def _sample(name: str) -> tuple[str, str, Any]:
    choices = config.declared(name).choices
    if choices:  # a value other than the default, so that setting it shows
        value = next(c for c in choices if c != getattr(Config(), name))
        return f'"{value}"', value, value
    toml, env, value = SAMPLES[config.kind(name)]
    if value == getattr(Config(), name):  # e.g. a bool that defaults to True
        return ("false", "no", False) if config.kind(name) == "bool" else (toml, env, value)
    return toml, env, value


def _command_options(command: str) -> dict[str, click.Option]:
    params = cli.main.commands[command].params
    names = {f.name for f in fields(Config)}
    return {p.name: p for p in params if isinstance(p, click.Option) and p.name in names}


def test_every_field_is_declared_with_its_option_and_its_effect_on_the_result():
    for field in fields(Config):
        declared = field.metadata.get("setting")
        assert declared is not None, f"Config.{field.name}: declare it with setting(...)"
        # a new setting says whether it changes the output (and enters the cache key) or why
        # not, and which option spells it or why none does
        assert declared.result != bool(declared.same_output), field.name
        assert (declared.option is None) == bool(declared.why_no_option), field.name


def test_a_declaration_must_say_what_it_changes_and_how_it_is_spelled():
    with pytest.raises(TypeError, match="result=True or a same_output"):
        setting(1, "--widgets", help="Widgets.")
    with pytest.raises(TypeError, match="result=True or a same_output"):
        setting(1, "--widgets", help="Widgets.", result=True, same_output="never")
    with pytest.raises(TypeError, match="option names or a no_option"):
        setting(1, result=True)


@pytest.mark.parametrize("command", ["compile", "bench", "check"])
def test_each_command_has_the_options_its_settings_declare(command):
    found = _command_options(command)
    expected = options.taken_by(command)
    parsed = cli.main.commands[command].make_context(command, list(ARGUMENTS[command]))
    assert set(found) == set(expected) | set(HAND_WRITTEN[command])
    for name in expected:
        option, declared = found[name], config.declared(name).option
        assert declared is not None
        assert [*option.opts, *option.secondary_opts] == [
            part for spelling in declared.names for part in spelling.split("/")
        ]
        assert option.help == declared.help_in(command)
        assert option.metavar == declared.metavar
        # absent unless given, so that settings files and the environment apply
        assert parsed.params[name] == (0 if declared.count else None), name
        kind = config.kind(name)
        if config.declared(name).choices:
            assert isinstance(option.type, click.Choice)
            assert tuple(option.type.choices) == config.declared(name).choices
        elif kind == "bool":
            assert option.is_flag
        elif kind in ("int", "float") and not declared.count:
            assert option.type.name == {"int": "integer", "float": "float"}[kind]
    # declaration order is --help's order
    listed = [name for name in found if name in expected]
    assert listed == expected


def test_defaults_in_help_are_the_declared_defaults():
    for name, declared in config.settings():
        if declared.option is None:
            continue
        for command in declared.option.commands:
            for text in re.findall(
                r"\(default (-?[0-9][0-9.e+-]*)", declared.option.help_in(command)
            ):
                assert float(text) == getattr(Config(), name), (name, command)


def test_options_given_and_not_given_reach_the_settings():
    seen: dict[str, Any] = {}

    @click.command()
    @options.setting_options("compile")
    def command(**params: Any) -> None:
        seen.update(options.given(params, "compile"))

    runner = CliRunner()
    assert runner.invoke(command, []).exit_code == 0
    assert all(value is None for value in seen.values())  # -v counts 0 in click: None here
    args = ["--no-cache", "-vv", "--no-learn", "--methods", "a,b", "--max-depth", "4"]
    assert runner.invoke(command, [*args, "--strategy", "greedy", "--rtol", "0.01"]).exit_code == 0
    assert (seen["cache"], seen["verbose"], seen["learn"]) == (False, 2, False)
    assert (seen["methods"], seen["max_depth"], seen["strategy"]) == ("a,b", 4, "greedy")
    assert seen["rtol"] == 0.01
    result = runner.invoke(command, ["--strategy", "random"])
    assert result.exit_code == 2 and "'random' is not one of" in result.output


@pytest.mark.parametrize(
    ("name", "toml", "env", "expected"),
    [
        ("strict_model", "true", "yes", True),  # bool
        ("cache", "false", "0", False),  # bool, True by default
        ("runs", "7", "7", 7),  # int
        ("threads", "3", "3", 3),  # optional int
        ("rtol", "1e-3", "1e-3", 1e-3),  # float
        ("time_budget", "0.5", "", None),  # optional float: empty is None
        ("strategy", '"greedy"', "greedy", "greedy"),  # str with choices
        ("arch", '"sm_90"', "sm_90", "sm_90"),  # optional str
        ("flags", '["-DN=8", "-I inc"]', "-DN=8 -Iinc", None),  # tuple
    ],
)
def test_a_toml_key_and_an_environment_variable_set_each_kind(tmp_path, name, toml, env, expected):
    (tmp_path / "cudaify.toml").write_text(f"{name.replace('_', '-')} = {toml}\n")
    from_file, _ = load(tmp_path, {}, environ={})
    from_env, _ = load(Path("/"), {}, environ={config.env_name(name): env})
    if name == "flags":
        assert from_file.flags == ("-DN=8", "-I inc") and from_env.flags == ("-DN=8", "-Iinc")
    elif name == "time_budget":
        assert from_file.time_budget == 0.5 and from_env.time_budget is None
    else:
        assert getattr(from_file, name) == expected == getattr(from_env, name)


def test_every_setting_is_a_toml_key_and_an_environment_variable(tmp_path):
    names = [name for name, declared in config.settings() if declared.files]
    assert len(names) == len(fields(Config))
    (tmp_path / "cudaify.toml").write_text("".join(f"{n} = {_sample(n)[0]}\n" for n in names))
    from_file, _ = load(tmp_path, {}, environ={})
    environ = {config.env_name(n): _sample(n)[1] for n in names}
    from_env, _ = load(Path("/"), {}, environ=environ)
    for name in names:
        assert getattr(from_file, name) == _sample(name)[2] == getattr(from_env, name), name
    assert config.env_name("llm_url") == "CUDAIFY_LLM_URL"


def test_bad_values_name_the_setting(tmp_path):
    (tmp_path / "cudaify.toml").write_text('objective = "speed"\n')
    with pytest.raises(ConfigError, match="setting 'objective': 'speed' is not one of program"):
        load(tmp_path, {}, environ={})
    with pytest.raises(ConfigError, match="setting 'iterations': cannot use 'x'"):
        load(Path("/"), {}, environ={"CUDAIFY_ITERATIONS": "x"})


def _key(tmp_path: Path, settings: Config) -> str:
    source = tmp_path / "p.c"
    source.write_text("int main(void) { return 0; }\n")
    return pipeline.result_key(str(source), source.read_bytes(), settings)


def _another(name: str) -> Any:
    value = getattr(Config(), name)
    kind = config.kind(name)
    if kind == "bool":
        return not value
    if kind == "tuple":
        return ("-DOTHER",)
    if kind in ("int", "float"):
        return (value or 0) + 1
    return _sample(name)[2] if value is None or config.declared(name).choices else value + "x"


def test_every_setting_declared_to_change_the_result_changes_the_key(tmp_path, monkeypatch):
    monkeypatch.setattr(pipeline, "slm_available", lambda settings: False)
    plain = _key(tmp_path, Config())
    changing = [name for name, declared in config.settings() if declared.result]
    assert {"search_runs", "runs", "rtol", "flags", "model", "gpu_layers", "ray"} <= set(changing)
    for name in changing:
        assert _key(tmp_path, Config().with_(**{name: _another(name)})) != plain, name
    for name, declared in config.settings():  # the others, each with its reason, do not
        if not declared.result:
            assert _key(tmp_path, Config().with_(**{name: _another(name)})) == plain, name


def test_a_new_field_becomes_an_option_a_toml_key_a_variable_and_part_of_the_key(
    tmp_path, monkeypatch
):
    """What a contributor writes to add a setting, and nothing else."""

    @dataclasses.dataclass(frozen=True)
    class WithWidgets(Config):
        widgets: int = setting(
            4, "--widgets", commands=COMPILE, help="Widgets per frob (default 4).", result=True
        )
        token: str | None = setting(  # a command-line-only setting
            None, "--token", help="A token.", same_output="never", files=False
        )

    monkeypatch.setattr(config, "Config", WithWidgets)

    @click.command()
    @options.setting_options("compile")
    def command(**params: Any) -> None:
        click.echo(f"widgets={options.given(params, 'compile')['widgets']}")

    runner = CliRunner()
    shown = runner.invoke(command, ["--help"]).output
    assert "--widgets INTEGER" in shown and "Widgets per frob (default 4)." in shown
    assert runner.invoke(command, ["--widgets", "6"]).output == "widgets=6\n"
    (tmp_path / "cudaify.toml").write_text("widgets = 3\n")
    assert load(tmp_path, {}, environ={})[0].widgets == 3
    assert load(tmp_path, {}, environ={"CUDAIFY_WIDGETS": "9"})[0].widgets == 9
    assert load(tmp_path, {"widgets": 6}, environ={})[0].widgets == 6
    assert config.result_settings(WithWidgets(widgets=5))["widgets"] == 5
    assert "token" not in config.result_settings(WithWidgets(token="t"))
    assert load(tmp_path, {"token": "t"}, environ={"CUDAIFY_TOKEN": "e"})[0].token == "t"
    assert load(tmp_path, {}, environ={"CUDAIFY_TOKEN": "e"})[0].token is None
    (tmp_path / "cudaify.toml").write_text('token = "f"\n')
    with pytest.raises(ConfigError, match="unknown setting 'token'"):
        load(tmp_path, {}, environ={})
