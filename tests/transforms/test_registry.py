from __future__ import annotations

import pytest

from cudaify.core.errors import ConfigError
from cudaify.transforms import METHODS, UnknownMethodError, get
from cudaify.transforms.base import Method
from cudaify.transforms.offload import Offload


def test_every_method_is_registered_once_under_its_own_name() -> None:
    assert "offload" in METHODS
    for name, method in METHODS.items():
        assert isinstance(method, Method)
        assert method.name == name
        assert method.summary and method.category and method.instruction


def test_get_returns_the_registered_method() -> None:
    assert isinstance(get("offload"), Offload)
    assert get("offload") is METHODS["offload"]


def test_unknown_method_names_the_known_ones() -> None:
    with pytest.raises(UnknownMethodError) as caught:
        get("tiling_magic")
    message = str(caught.value)
    assert "tiling_magic" in message
    assert "offload" in message
    assert isinstance(caught.value, ConfigError)
    assert caught.value.exit_code == 2


def test_describe_is_what_the_cli_lists() -> None:
    assert get("offload").describe() == {
        "name": "offload",
        "description": Offload.summary,
        "category": "mapping",
    }


def test_offload_is_the_first_step_from_the_sequential_program() -> None:
    assert get("offload").follows == ("sequential",)
