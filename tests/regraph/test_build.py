from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path

import pytest

from cudaify.core import Evaluation, Problem, Stage, Timing
from cudaify.pipeline import graph_build_stages
from cudaify.regraph.build import (
    Teachers,
    VerifiedStep,
    build,
    corpus_programs,
    how_verified,
    merge,
    merge_steps,
    rule_paths,
)
from cudaify.regraph.graph import Example, ReGraph
from cudaify.regraph.teacher import RecordedTeacher, parse_answer
from cudaify.regraph.trajectory import TrajectoryError, steps_from_json

DATA = Path(__file__).parent / "data"
CORPUS = Path(__file__).resolve().parents[2] / "regraph" / "corpus"


def _step(target="offload", source="sequential", after="b", verified="gpu", speedup=2.0):
    """A step from the input program: its gain is its speedup."""
    measured = speedup if verified else None
    return VerifiedStep(
        "p", source, target, "a", after, verified=verified, speedup=measured, gain=measured
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
    assert math.isclose(stats.mean_log_gain, math.log(4.0))
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
    assert math.isclose(stats.mean_log_gain, (math.log(2) + 2 * math.log(8)) / 3)
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
        graph_build_stages(),
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
    report = build(corpus, graph_build_stages(), Teachers())
    examples = report.graph.examples("sequential", "offload")
    assert [(e.source, e.program) for e in examples] == [("curated", "scale_add")]
    assert report.problems == []


def test_a_curated_file_for_an_unknown_program_is_reported(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "x.trajectory.json").write_text(
        json.dumps({"program": "nowhere", "code": "int main(){}", "steps": []})
    )
    report = build(corpus, graph_build_stages(), Teachers())
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
                       lambda v, before: compiled, max_length=2, problems=problems)  # fmt: skip
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


def _appending_rules(skip: frozenset[str] = frozenset()):
    def apply(variant, method):
        if method in skip:
            return None, f"{method} does not apply"
        return variant.then(method, variant.code + f"// {method}\n", "rule"), ""

    return apply


def test_a_step_cap_is_spent_on_complete_sequences_across_branches():
    from cudaify.core import Variant
    from cudaify.regraph.build import rule_steps

    compiled = Evaluation(stage=Stage.COMPILE)
    methods = ["a", "b", "c", "d"]
    steps = rule_steps("p", Variant(code="int main;\n"), methods, _appending_rules(),
                       lambda v, before: compiled, max_length=3, max_steps=7)  # fmt: skip
    assert len(steps) == 7
    depths = [s.after.count("//") for s in steps]
    # a first sequence to full depth, then a second first step continued to full depth,
    # then a second continuation of the first (a third first step comes after it)
    assert depths == [1, 2, 3, 1, 2, 3, 2]
    for step in steps:  # a tree: every step continues a verified step (or the program)
        assert step.before == "int main;\n" or any(s.after == step.before for s in steps)
    paths = rule_paths("p", "int main;\n", steps)
    assert [len(t.steps) for t in paths] == [3, 3, 2]
    again = rule_steps("p", Variant(code="int main;\n"), methods, _appending_rules(),
                       lambda v, before: compiled, max_length=3, max_steps=7)  # fmt: skip
    assert [s.after for s in again] == [s.after for s in steps]  # deterministic


def test_a_cap_above_the_tree_finds_what_the_full_walk_finds():
    from cudaify.core import Variant
    from cudaify.regraph.build import rule_steps

    compiled = Evaluation(stage=Stage.COMPILE)
    apply = _appending_rules(frozenset({"c"}))
    start = Variant(code="x\n")
    full = rule_steps("p", start, ["a", "b", "c"], apply, lambda v, before: compiled, max_length=2)
    capped = rule_steps("p", start, ["a", "b", "c"], apply, lambda v, before: compiled,
                        max_length=2, max_steps=100)  # fmt: skip
    assert sorted(s.after for s in capped) == sorted(s.after for s in full)
    assert len(full) == 4  # a, b, a->b, b->a


def test_failed_steps_count_against_the_cap_and_are_not_continued():
    from cudaify.core import Variant
    from cudaify.regraph.build import rule_steps

    def verify(variant, before):
        broken = variant.code.endswith("// b\n")
        return Evaluation(stage=Stage.STRUCTURE if broken else Stage.COMPILE)

    steps = rule_steps("p", Variant(code="x\n"), ["a", "b"], _appending_rules(), verify,
                       max_length=3, max_steps=10)  # fmt: skip
    assert [s.ok for s in steps if s.target == "b"] == [False, False]
    assert not any(s.before.endswith("// b\n") for s in steps)
    assert len(steps) == 3  # a, b (rejected), a -> b (rejected)


def test_method_order_is_a_rotation_that_depends_on_the_program():
    from cudaify.regraph.build import method_order

    methods = [f"m{i}" for i in range(12)]
    orders = {tuple(method_order(f"program{i}", (), methods)) for i in range(20)}
    assert len(orders) > 3
    for order in orders:
        start = methods.index(order[0])
        assert list(order) == methods[start:] + methods[:start]
    assert method_order("p", ("a",), methods) == method_order("p", ("a",), methods)
    assert method_order("p", (), []) == []


@pytest.mark.gpu
def test_a_gpu_build_runs_every_step_and_keeps_only_correct_ones(tmp_path):
    """On a GPU every step is run and its output compared with the CPU reference: the
    rules' steps are kept with "gpu" and a measured speedup; a curated step that compiles
    but prints something else is rejected (without a GPU it would pass as "compile")."""
    from cudaify.core import Variant
    from cudaify.core.config import Config

    corpus = tmp_path / "corpus"
    shutil.copytree(DATA / "corpus", corpus)
    stages = graph_build_stages(Config(runs=1))
    apply, _, code = stages(corpus / "scale_add.c")
    right, _ = apply(Variant(code=code), "offload")
    assert right is not None
    wrong = right.code.replace("scale_add(N, x, y, 2.0f)", "scale_add(N, x, y, 2.5f)")
    assert wrong != right.code
    trajectory = {"program": "scale_add", "source": "curated", "input": "scale_add.c",
                  "steps": [{"method": "offload", "code": wrong}]}  # fmt: skip
    (corpus / "wrong.trajectory.json").write_text(json.dumps(trajectory))

    report = build(
        corpus, stages, Teachers(rules=True, methods=("offload", "launch_tuning"), max_steps=3)
    )
    rule = [s for s in report.steps if s.origin == "rule"]
    assert rule and all(s.verified == "gpu" for s in rule), [s.why for s in rule]
    assert all(s.speedup is not None and s.speedup > 0 for s in rule)
    curated = [s for s in report.steps if s.origin == "curated"]
    assert [s.verified for s in curated] == [""] and curated[0].why
    examples = [e for s, t in report.graph.edges() for e in report.graph.examples(s, t)]
    assert examples and {e.verified for e in examples} == {"gpu"}
    assert all(e.speedup for e in examples)
    assert report.graph.meta["verified"] == "gpu"


def test_a_step_is_checked_against_the_variant_it_was_applied_to(tmp_path):
    """coalesce's postcondition (as many kernels as before) holds against the offloaded
    variant, not against the sequential program: the build must give it the former."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    shutil.copy(CORPUS / "nest2d" / "column_zscore.c", corpus)
    report = build(
        corpus, graph_build_stages(), Teachers(rules=True, methods=("offload", "coalesce"))
    )
    steps = {(s.source, s.target): s for s in report.steps}
    coalesced = steps[("offload", "coalesce")]
    assert coalesced.ok, coalesced.why
    assert "blockIdx.x" in coalesced.after and coalesced.after != coalesced.before
    assert report.graph.examples("offload", "coalesce")[0].program == "column_zscore"


def test_past_the_time_limit_no_rule_is_tried_and_the_graph_says_so():
    import time

    from cudaify.core import Variant

    calls: list[str] = []

    def stages_for(path):
        def apply(variant, method):
            calls.append(method)
            return variant.then(method, variant.code + f"// {method}\n", "rule"), ""

        return apply, lambda v, before: Evaluation(stage=Stage.COMPILE), path.read_text()

    teachers = Teachers(rules=True, methods=("offload",), deadline=time.time() - 1)
    report = build(DATA / "corpus", stages_for, teachers)
    assert calls == [] and report.steps == []
    assert any("time limit" in p for p in report.problems)
    assert report.graph.meta["cut_short"] is True

    from cudaify.regraph.build import _until

    problems: list[str] = []
    limited = _until(
        time.time() + 1000, stages_for(DATA / "corpus" / "scale_add.c")[0], "p", problems
    )
    assert limited(Variant(code="x"), "offload")[0] is not None
    late = _until(time.time() - 1, stages_for(DATA / "corpus" / "scale_add.c")[0], "p", problems)
    assert late(Variant(code="x"), "offload") == (None, "the build's time limit was reached")
    assert late(Variant(code="x"), "unroll")[0] is None
    assert problems == ["p: cut short: the build's time limit was reached"]  # said once


def _timed(speedup: float) -> Evaluation:
    return Evaluation(
        stage=Stage.CORRECT,
        ran_on_gpu=True,
        timing=Timing(region=1.0, wall=1.0),
        reference=Timing(region=speedup, wall=speedup),
    )


# offload is 0.5x the CPU; data_residency after it 2.5x
SPEEDS = {"offload": 0.5, "data_residency": 2.5}


def _by_last_method(variant, before):
    return _timed(SPEEDS[variant.node])


@pytest.mark.parametrize("max_steps", [None, 10])
def test_rule_steps_record_the_gain_over_their_parent(max_steps):
    """The example keeps the speedup over the CPU; the statistics the gain: 5x for
    data_residency after a 0.5x offload, 0.5x for the offload over the input."""
    from cudaify.core import Variant
    from cudaify.regraph.build import rule_steps

    steps = rule_steps("p", Variant(code="x\n"), ["offload", "data_residency"],
                       _appending_rules(frozenset()), _by_last_method, max_length=2,
                       max_steps=max_steps)  # fmt: skip
    found = {(s.source, s.target): s for s in steps}
    resident = found[("offload", "data_residency")]
    assert (resident.speedup, resident.gain) == (2.5, pytest.approx(5.0))
    assert found[("sequential", "offload")].gain == pytest.approx(0.5)
    # data_residency first, at 2.5x over the input; offload after it, 0.2x of that
    assert found[("sequential", "data_residency")].gain == pytest.approx(2.5)
    assert found[("data_residency", "offload")].gain == pytest.approx(0.2)
    graph = merge_steps(ReGraph(), steps)
    stats = graph.stats("offload", "data_residency")
    assert math.isclose(stats.mean_log_gain, math.log(5.0))
    assert graph.examples("offload", "data_residency")[0].speedup == 2.5


def test_a_trajectory_records_each_steps_gain_and_the_build_says_when_and_where(tmp_path):
    from cudaify.regraph.build import trajectory_steps
    from cudaify.regraph.trajectory import Trajectory, TrajectoryStep

    path = (
        TrajectoryStep("offload", "x\n//o\n"),
        TrajectoryStep("data_residency", "x\n//o\n//r\n"),
    )
    trajectory = Trajectory("p", "x\n", path, "curated")
    steps = trajectory_steps(trajectory, _by_last_method, lambda name, detail: name)
    assert [s.gain for s in steps] == [pytest.approx(0.5), pytest.approx(5.0)]

    def stages_for(path):
        return _appending_rules(), _by_last_method, path.read_text()

    teachers = Teachers(rules=True, methods=("offload", "data_residency"), max_length=2)
    report = build(DATA / "corpus", stages_for, teachers, gpu="NVIDIA H100 80GB HBM3")
    meta = report.graph.meta
    assert meta["gpu"] == "NVIDIA H100 80GB HBM3" and meta["objective"] == "program"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", meta["date"])
    stats = report.graph.stats("offload", "data_residency")
    assert math.isclose(math.exp(stats.mean_log_gain), 5.0)
    # nothing timed on a GPU: no GPU is named, the date still is
    compiled = build(DATA / "corpus", lambda p: (_appending_rules(), lambda v, b: Evaluation(
        stage=Stage.COMPILE), p.read_text()), teachers, gpu="NVIDIA H100 80GB HBM3")  # fmt: skip
    assert "gpu" not in compiled.graph.meta and "date" in compiled.graph.meta
