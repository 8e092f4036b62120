from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from cudaify.core import Evaluation, Problem, Stage, Timing
from cudaify.regraph.build import (
    Teachers,
    VerifiedStep,
    build,
    corpus_programs,
    how_verified,
    merge,
    merge_steps,
    pipeline_stages,
    rule_paths,
)
from cudaify.regraph.graph import Example, ReGraph
from cudaify.regraph.teacher import RecordedTeacher, parse_answer
from cudaify.regraph.trajectory import TrajectoryError, steps_from_json

DATA = Path(__file__).parent / "data"


def _step(target="offload", source="sequential", after="b", verified="gpu", speedup=2.0):
    return VerifiedStep(
        "p", source, target, "a", after, verified=verified, speedup=speedup if verified else None
    )


def test_merge_steps_adds_verified_and_counts_failures_on_existing_edges():
    graph = merge_steps(
        ReGraph(),
        [
            _step(),
            _step(after="c", speedup=8.0),
            _step(verified=""),
            _step(target="unroll", source="offload", verified=""),
        ],
    )
    assert [e.after for e in graph.examples("sequential", "offload")] == ["b", "c"]
    stats = graph.stats("sequential", "offload")
    assert (stats.visits, stats.successes, stats.timed) == (3, 2, 2)
    assert math.isclose(stats.mean_log_speedup, math.log(4.0))
    assert not graph.graph.has_edge("offload", "unroll")  # a failure alone makes no edge
    assert graph.node("offload")["category"] == "mapping"


def test_merge_unions_examples_and_adds_stats():
    a = merge_steps(ReGraph(), [_step(speedup=2.0)])
    b = merge_steps(
        ReGraph(),
        [
            _step(speedup=8.0),
            _step(after="c", speedup=8.0),
            _step(target="unroll", source="offload", after="d"),
        ],
    )
    merged = merge(a, b)
    assert [e.after for e in merged.examples("sequential", "offload")] == ["b", "c"]
    stats = merged.stats("sequential", "offload")
    assert (stats.visits, stats.successes, stats.timed) == (3, 3, 3)
    assert math.isclose(stats.mean_log_speedup, (math.log(2) + 2 * math.log(8)) / 3)
    assert merged.successors("offload") == ["unroll"]
    assert len(a.examples("sequential", "offload")) == 1  # inputs untouched


@pytest.mark.parametrize(
    "evaluation, how",
    [
        (Evaluation(stage=Stage.CORRECT, ran_on_gpu=True), "gpu"),
        (Evaluation(stage=Stage.COMPILE, problems=(Problem("not_run", "no GPU"),)), "compile"),
        (Evaluation(stage=Stage.RUN, ran_on_gpu=True), ""),  # ran and printed something else
        (Evaluation(stage=Stage.STRUCTURE), ""),
    ],
)
def test_how_a_step_counts_as_verified(evaluation, how):
    assert how_verified(evaluation) == how


def test_teacher_answers_are_parsed_with_json_paths():
    assert parse_answer('plan:\n```json\n[{"method": "offload", "code": "x"}]\n```') == [
        {"method": "offload", "code": "x"}
    ]
    with pytest.raises(TrajectoryError, match=r"^\$: the teacher"):
        parse_answer("I would rather not.")
    with pytest.raises(TrajectoryError, match=r"^\$\[1\]\.code: missing"):
        steps_from_json([{"method": "a", "code": ""}, {"method": "b"}], "$")


def test_program_names_must_be_unique(tmp_path):
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "same.c").write_text("int main(void) { return 0; }\n")
    with pytest.raises(TrajectoryError, match="a second program named 'same'"):
        corpus_programs(tmp_path)


def _teacher_steps():
    answer = json.loads((DATA / "teacher.jsonl").read_text())["answer"]
    return parse_answer(answer)


def test_construction_with_a_recorded_teacher_and_the_rules(tmp_path):
    """The real pipeline (parse, rules, structural check, nvcc) on a one-program corpus;
    the teacher's third step does not compile and must stay out of the graph."""
    report = build(
        DATA / "corpus",
        pipeline_stages(),
        Teachers(rules=True, methods=("offload",), model=RecordedTeacher(DATA / "teacher.jsonl")),
    )
    graph = report.graph
    offload = graph.examples("sequential", "offload")
    assert sorted(e.source for e in offload) == ["rule", "teacher"]
    assert all(e.verified in ("gpu", "compile") for e in offload)
    teacher = next(e for e in offload if e.source == "teacher")
    assert teacher.think == "the loop has no carried dependence"
    assert "scale_add_kernel" in teacher.after
    assert graph.successors("offload") == ["unroll"]  # "loop unrolling", relabeled
    assert "shared_tiling" not in graph.methods or not graph.graph.in_edges("shared_tiling")
    rejected = [s for s in report.steps if not s.ok]
    assert [s.target for s in rejected] == ["shared_tiling"]
    assert rejected[0].why


def test_curated_trajectory_files_in_the_corpus(tmp_path):
    corpus = tmp_path / "corpus"
    shutil.copytree(DATA / "corpus", corpus)
    first = _teacher_steps()[0]
    trajectory = {
        "program": "scale_add",
        "source": "curated",
        "input": "scale_add.c",
        "steps": [{**first, "method": "GPU offload"}],
    }
    (corpus / "scale_add.trajectory.json").write_text(json.dumps(trajectory))
    report = build(corpus, pipeline_stages(), Teachers())
    examples = report.graph.examples("sequential", "offload")
    assert [(e.source, e.program) for e in examples] == [("curated", "scale_add")]
    assert report.problems == []


def test_a_curated_file_for_an_unknown_program_is_reported(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "x.trajectory.json").write_text(
        json.dumps({"program": "nowhere", "code": "int main(){}", "steps": []})
    )
    report = build(corpus, pipeline_stages(), Teachers())
    assert report.problems and "no program named 'nowhere'" in report.problems[0]
    assert report.graph.methods == ["sequential"]


def test_examples_from_build_round_trip_through_json():
    graph = merge_steps(ReGraph(), [_step()])
    graph.add_example(
        "offload", "unroll", Example("p", "b", "c", verified="compile", source="teacher")
    )
    from cudaify.regraph.graph import from_json

    assert from_json(json.loads(json.dumps(graph.to_json()))).to_json() == graph.to_json()


def test_measured_speedup_prefers_the_region():
    from cudaify.regraph.build import measured_speedup

    evaluation = Evaluation(
        stage=Stage.CORRECT,
        ran_on_gpu=True,
        timing=Timing(wall=2.0, region=1.0),
        reference=Timing(wall=4.0, region=5.0),
    )
    assert measured_speedup(evaluation) == 5.0


def test_rule_steps_become_one_trajectory_per_verified_path():
    def step(source, target, before, after, verified="compile"):
        return VerifiedStep("p", source, target, before, after, verified=verified)

    steps = [
        step("sequential", "offload", "seq", "k1"),
        step("offload", "reduction", "k1", "k2"),
        step("reduction", "unroll", "k2", "k3", verified=""),
        step("sequential", "reduction", "seq", "r1"),
    ]
    paths = rule_paths("p", "seq", steps)
    assert [[s.method for s in t.steps] for t in paths] == [["offload", "reduction"], ["reduction"]]
    assert paths[0].steps[-1].code == "k2" and paths[0].code == "seq"
    assert {t.source for t in paths} == {"rule"}


def test_a_rule_that_raises_is_reported_and_the_others_go_on():
    from cudaify.core import Variant
    from cudaify.regraph.build import rule_steps

    def apply(variant, method):
        if method == "faulty":
            raise IndexError("list index out of range")
        return variant.then(method, variant.code + f"// {method}\n", "rule"), ""

    compiled = Evaluation(stage=Stage.COMPILE)
    problems: list[str] = []
    steps = rule_steps("p", Variant(code="int main;\n"), ["faulty", "offload"], apply,
                       lambda v: compiled, max_length=2, problems=problems)  # fmt: skip
    assert [s.target for s in steps] == ["offload"]
    assert problems == [
        "p: rule faulty raised IndexError: list index out of range",
        "p: rule faulty after offload raised IndexError: list index out of range",
    ]


def test_one_build_judges_a_name_once_and_remembers_new_methods(tmp_path):
    from cudaify.regraph.build import Renamer

    answers = tmp_path / "judge.jsonl"
    answers.write_text('{"answer": "{\\"method\\": \\"new\\"}"}\n'
                       '{"answer": "{\\"method\\": \\"kernel_fusion\\"}"}\n')  # fmt: skip
    rename = Renamer(["sequential", "offload"], RecordedTeacher(answers))
    assert rename("kernel fusion", "") == "kernel_fusion"
    assert rename("kernel fusion", "") == "kernel_fusion"  # not asked again
    assert rename("Kernel-Fusion", "") == "kernel_fusion"  # known now, by its name
    assert rename("fuse the two kernels", "one launch") == "kernel_fusion"  # the judge's verdict
    assert rename("loop unrolling", "") == "unroll"


def test_pruning_keeps_the_best_examples_of_different_programs():
    from cudaify.regraph.build import prune_examples

    graph = ReGraph()
    for program, after, speedup, how in [
        ("a", "a1", 2.0, "gpu"), ("a", "a2", 9.0, "gpu"), ("b", "b1", 1.5, "gpu"),
        ("c", "c1", None, "compile"), ("a", "a3", 5.0, "gpu"),
    ]:  # fmt: skip
        graph.add_example("sequential", "offload",
                          Example(program, "x", after, speedup=speedup, verified=how))  # fmt: skip
    graph.stats("sequential", "offload").visits = 5
    pruned = prune_examples(graph, 3)
    assert [e.after for e in pruned.examples("sequential", "offload")] == ["a2", "b1", "c1"]
    assert [e.after for e in prune_examples(graph, 4).examples("sequential", "offload")] == [
        "a2", "b1", "c1", "a3"
    ]  # fmt: skip
    assert pruned.stats("sequential", "offload").visits == 5
    assert len(graph.examples("sequential", "offload")) == 5
