from __future__ import annotations

import json

import pytest

from cudaify.core.errors import ModelError
from cudaify.regraph import relabel as rl
from cudaify.regraph.teacher import RecordedTeacher


@pytest.mark.parametrize(
    "name, method",
    [
        ("shared memory tiling", "shared_tiling"),
        ("smem_tiling", "shared_tiling"),
        ("tiling with shared memory", "shared_tiling"),
        ("SharedMemoryTiling", "shared_tiling"),
        ("loop unrolling", "unroll"),
        ("Loop Unrolling", "unroll"),
        ("coalescing", "coalesce"),
        ("Memory-Coalescing", "coalesce"),
        ("privatization", "atomic_privatize"),
        ("warp shuffle reductions", "reduction"),
        ("parallel prefix sum", "scan"),
        ("offload", "offload"),
        ("register_tiling", "register_tiling"),
    ],
)
def test_synonyms_map_to_one_method(name, method):
    assert rl.relabel(name) == method


def test_no_phrase_means_two_methods():
    meaning: dict[str, str] = {}
    for canonical, phrases in rl._SYNONYM_PHRASES.items():
        assert canonical in rl.CANONICAL
        for phrase in (canonical, *phrases):
            key = rl.normalise(phrase)
            assert meaning.setdefault(key, canonical) == canonical, phrase


def test_graph_methods_are_matched_by_normalised_name():
    assert rl.relabel("Loop Fusion", known=["loop_fusion"]) == "loop_fusion"
    assert rl.relabel("kernel fusions", known=["kernel_fusion"]) == "kernel_fusion"


def test_unknown_names_become_snake_case_nodes_without_a_judge():
    assert rl.relabel("Kernel Fusion") == "kernel_fusion"


def _judge(tmp_path, *answers):
    path = tmp_path / "judge.jsonl"
    path.write_text("".join(json.dumps({"answer": a}) + "\n" for a in answers))
    return RecordedTeacher(path)


def test_the_judge_decides_what_the_table_cannot(tmp_path):
    judge = _judge(tmp_path, 'Sure. {"method": "coalesce"}', '{"method": "new"}')
    assert (
        rl.relabel("make neighbouring threads read neighbouring words", model=judge) == "coalesce"
    )
    assert rl.relabel("kernel fusion", model=judge) == "kernel_fusion"


def test_a_judge_naming_no_listed_method_does_not_merge(tmp_path):
    judge = _judge(tmp_path, '{"method": "magic"}', "no idea")
    assert rl.relabel("split the grid", model=judge) == "split_the_grid"
    assert rl.relabel("batch launches", model=judge) == "batch_launches"


def test_the_judge_is_not_asked_when_the_table_knows(tmp_path):
    judge = _judge(tmp_path)  # no answers: asking would raise
    assert rl.relabel("loop unrolling", model=judge) == "unroll"
    with pytest.raises(ModelError):
        rl.relabel("something new entirely", model=judge)
