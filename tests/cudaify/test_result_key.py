"""The result cache's key: everything that decides the output, cudaify's own code included."""

from pathlib import Path

from cudaify import pipeline
from cudaify.config import Config


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
        ("frontend", "analyze.py"),
        ("transforms", "offload.py"),
        ("slm", "prompt.py"),
        ("regraph", "graph.py"),
        ("mcgs", "mcgs.py"),
        ("backend", "evaluate.py"),
    ]:
        assert expected in names


def test_changed_settings_change_the_key(tmp_path):
    source = tmp_path / "p.c"
    source.write_text("int main(void) { return 0; }\n")
    data = source.read_bytes()
    one = pipeline.result_key(str(source), data, Config())
    other = pipeline.result_key(str(source), data, Config().with_(strategy="greedy"))
    assert one != other
