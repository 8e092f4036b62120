"""The result cache's key: everything that decides the output, cudaify's own code included."""

from pathlib import Path

from cudaify import pipeline
from cudaify.core.config import Config


def _key(tmp_path: Path) -> str:
    source = tmp_path / "p.c"
    source.write_text("int main(void) { return 0; }\n")
    return pipeline.result_key(str(source), source.read_bytes(), Config())


def test_changed_cudaify_code_changes_the_key(tmp_path, monkeypatch):
    before = _key(tmp_path)
    assert _key(tmp_path) == before  # stable while nothing changes
    monkeypatch.setattr(pipeline, "_code_hash", lambda: "another build of cudaify")
    assert _key(tmp_path) != before


def test_code_files_cover_every_stage_package():
    names = {(path.parent.name, path.name) for path in pipeline._code_files()}
    for expected in [
        ("cudaify", "pipeline.py"),
        ("core", "config.py"),  # the settings: a changed default changes results
        ("frontend", "analyze.py"),
        ("transforms", "offload.py"),
        ("slm", "prompt.py"),
        ("regraph", "graph.py"),
        ("mcgs", "mcgs.py"),
        ("backend", "evaluate.py"),
        ("runtime", "data_residency.cuh"),
        ("runtime", "timing_runtime.h"),
    ]:
        assert expected in names


def test_changed_settings_change_the_key(tmp_path):
    source = tmp_path / "p.c"
    source.write_text("int main(void) { return 0; }\n")
    data = source.read_bytes()
    one = pipeline.result_key(str(source), data, Config())
    other = pipeline.result_key(str(source), data, Config().with_(strategy="greedy"))
    assert one != other


def test_timed_runs_per_candidate_and_a_model_at_hand_change_the_key(tmp_path, monkeypatch):
    """Both change what the search finds: `--search-runs` how candidates are ranked, and an
    installed default model whether `--slm auto` asks one (an install between two runs must
    not answer the second from the first's rules-only result)."""
    source = tmp_path / "p.c"
    source.write_text("int main(void) { return 0; }\n")
    data = source.read_bytes()
    monkeypatch.setattr(pipeline, "slm_available", lambda config: False)
    plain = pipeline.result_key(str(source), data, Config())
    assert pipeline.result_key(str(source), data, Config().with_(search_runs=3)) != plain
    monkeypatch.setattr(pipeline, "slm_available", lambda config: True)
    assert pipeline.result_key(str(source), data, Config()) != plain
    monkeypatch.setattr(pipeline, "slm_available", lambda config: False)
    monkeypatch.setenv("CUDAIFY_MODEL", "qwen2.5-coder-0.5b")
    assert pipeline.result_key(str(source), data, Config()) != plain
