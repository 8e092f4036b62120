from __future__ import annotations

import pytest

from cudaify.core.config import Config, load
from cudaify.core.errors import ConfigError


def test_layers_in_order(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.cudaify]\nrtol = 1e-3\nruns = 7\nflags = ["-DN=8"]\n'
    )
    sub = tmp_path / "src"
    sub.mkdir()
    config, found = load(sub, {}, environ={})
    assert found == tmp_path / "pyproject.toml"
    assert (config.rtol, config.runs, config.flags) == (1e-3, 7, ("-DN=8",))
    config, _ = load(sub, {}, environ={"CUDAIFY_RUNS": "9"})
    assert config.runs == 9
    config, _ = load(sub, {"runs": 3, "rtol": None}, environ={"CUDAIFY_RUNS": "9"})
    assert config.runs == 3 and config.rtol == 1e-3


def test_pyproject_without_table_is_ignored(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    config, found = load(tmp_path, {}, environ={})
    assert found is None and config == Config()


def test_bad_setting_is_reported(tmp_path):
    (tmp_path / "cudaify.toml").write_text("runs = 'many'\n")
    with pytest.raises(ConfigError, match="runs"):
        load(tmp_path, {}, environ={})
    (tmp_path / "cudaify.toml").write_text("colour = 'blue'\n")
    with pytest.raises(ConfigError, match="unknown setting 'colour'"):
        load(tmp_path, {}, environ={})
