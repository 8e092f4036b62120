"""The click options of the settings, made from the declarations of `config.Config`: a
command gets one option for every setting that names it in its `commands`, in the order
the settings are declared, and reads them back as a dict of settings for `config.load`."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import click

from cudaify.core import config

Decorator = Callable[[Any], Any]

_TYPES: dict[str, Any] = {"int": int, "float": float}


def _ray_address(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """--ray's value, checked before anything runs: ray must be installed (the extra), and
    a value must read as an address (an input named after --ray would be taken for one)."""
    if value is None:
        return None
    import importlib.util

    if importlib.util.find_spec("ray") is None:
        raise click.UsageError(
            "--ray needs the ray package, which is not installed: pip install 'cudaify[ray]'",
            ctx,
        )
    if value not in ("local", "auto") and ":" not in value:
        raise click.BadParameter(
            f"{value!r} is not a Ray address (local, auto, HOST:PORT, ray://HOST:PORT); "
            "put --ray after the input, or write --ray=ADDRESS",
            ctx,
            param,
        )
    return value


# checks of a value that click runs while parsing, before the command starts
CALLBACKS: dict[str, Callable[..., Any]] = {"ray": _ray_address}


def taken_by(command: str) -> list[str]:
    """The settings `command` spells as options, in declaration order."""
    return [
        name
        for name, declared in config.settings()
        if declared.option and command in declared.option.commands
    ]


def option_for(name: str, command: str) -> Decorator:
    """The click option of setting `name` on `command`. It is absent (None) unless given,
    so that settings files and the environment apply; its parameter is the field's name."""
    option = config.declared(name).option
    assert option is not None, f"setting '{name}' has no option"
    attributes: dict[str, Any] = {"help": option.help_in(command)}
    if option.metavar:
        attributes["metavar"] = option.metavar
    if name in CALLBACKS:
        attributes["callback"] = CALLBACKS[name]
    value_kind = config.kind(name)
    if option.count:
        attributes["count"] = True
    elif value_kind == "bool":
        attributes.update(is_flag=True, default=None)
        if option.flag_value is not None:
            attributes["flag_value"] = option.flag_value
    else:
        attributes.update(_value_type(name, option))
    return click.option(*option.names, name, **attributes)


def _value_type(name: str, option: config.Option) -> dict[str, Any]:
    choices = config.declared(name).choices
    if choices:
        return {"type": click.Choice(list(choices))}
    if option.path:
        return {"type": click.Path(path_type=str)}
    if option.flag_value is not None:  # --ray alone or --ray ADDRESS
        return {"is_flag": False, "flag_value": option.flag_value, "default": None}
    value_type = _TYPES.get(config.kind(name))
    return {"type": value_type} if value_type else {}


def setting_options(
    command: str, after: Mapping[str, Sequence[Decorator]] | None = None
) -> Decorator:
    """Add `command`'s setting options to a click command. `after` places hand-written
    options (those that are no setting) right after a setting's, so that --help keeps
    them where a reader expects them."""
    decorators: list[Decorator] = []
    for name in taken_by(command):
        decorators.append(option_for(name, command))
        decorators.extend((after or {}).get(name, ()))

    def apply(function: Any) -> Any:
        for decorator in reversed(decorators):
            function = decorator(function)
        return function

    return apply


def given(params: Mapping[str, Any], command: str) -> dict[str, Any]:
    """The settings given on `command`'s line, for `config.load`: None where not given (a
    -v never given counts 0 in click, None here), so that the lower layers apply."""
    found = {}
    for name in taken_by(command):
        option = config.declared(name).option
        value = params[name]
        found[name] = (value or None) if option and option.count else value
    return found


__all__ = ["setting_options", "option_for", "taken_by", "given", "CALLBACKS"]
