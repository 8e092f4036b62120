"""The SLM edge benchmark's counting, with a scripted model recorded to a file and replayed
(no real model, no network): one edge fails the structural check, one fails nvcc, one
passes, and the table says so; timeouts and crashes are recorded, never fatal."""

import json
import time
from pathlib import Path

import pytest

from cudaify import slm_bench
from cudaify.core import Evaluation, Stage
from cudaify.core.config import Config
from cudaify.pipeline import search_graph
from cudaify.slm_edge_bench import (
    EdgeOptions,
    Results,
    run_edges,
    select_edges,
    spread,
    start_order,
    summarise,
    table,
)
from cudaify.transforms import METHODS
from cudaify.transforms.slm import focus
from cudaify.transforms.slm.apply import converse
from cudaify.transforms.slm.cache import CachedEngine, Recorder, Replay
from cudaify.transforms.slm.engine import Completion, PromptTooLong, Sampling

PROGRAM = """\
#include <stdio.h>
#include <stdlib.h>

void NAME(int n, float a, const float *x, float *y) {
    for (int i = 0; i < n; i++)
        y[i] = a * x[i] + 1.0f;
}

int main(void) {
    int n = 1000;
    float *x = (float *)malloc(n * sizeof(float));
    float *y = (float *)malloc(n * sizeof(float));
    for (int i = 0; i < n; i++) x[i] = i * 0.5f;
    NAME(n, 2.0f, x, y);
    double sum = 0;
    for (int i = 0; i < n; i++) sum += y[i];
    printf("%.3f\\n", sum);
    free(x);
    free(y);
    return 0;
}
"""
# program folder -> its function; what the scripted model does to each
KERNELS = {"good": "scale", "badstructure": "shift", "badcompile": "square"}


@pytest.fixture(scope="module")
def suite(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("suite")
    for folder, name in KERNELS.items():
        (root / folder).mkdir()
        (root / folder / f"{name}.c").write_text(PROGRAM.replace("NAME", name))
    return root


@pytest.fixture(scope="module")
def edges(suite):
    return select_edges(suite, ["offload"], 0, Config(runs=1), search_graph(), say=lambda _: None)


def fenced(code: str) -> str:
    return f"```cuda\n{code}```\n\nI moved the loop into a kernel."


class ScriptedModel:
    """Answers an edit by the function in the program it is shown, with the functions the
    offload rule changes (and the items it adds), as a focused edit asks: the rule's own
    change (passes), that change with the function renamed (the function to change is
    missing: fails the structural check), or with a use of an undeclared name (fails nvcc).
    A repair request gets the same answer again. `slow` sleeps, `crash` raises, `wrong`
    answers code that compiles and prints other numbers, for those functions."""

    identity = "test:scripted"

    def __init__(self, offloaded: dict[str, str], slow=(), crash=(), wrong=(), too_long=()):
        self.offloaded = offloaded
        self.slow, self.crash, self.wrong = set(slow), set(crash), set(wrong)
        self.too_long = set(too_long)
        self.calls = 0

    def complete(self, messages, sampling):
        self.calls += 1
        task = [m["content"] for m in messages if m["content"].startswith("Task:")][-1]
        name = next(n for n in KERNELS.values() if f"void {n}(" in task)
        if name in self.crash:
            raise RuntimeError("the scripted model crashed")
        if name in self.too_long:
            raise PromptTooLong("Requested tokens (9000) exceed context window of 8192")
        if name in self.slow:
            time.sleep(30)
        code = self.offloaded[name]
        assert "free(x);" not in task  # only the target function is shown, not main
        if name in self.wrong:
            code = code.replace("1.0f", "3.0f")
        elif name == "shift":
            code = code.replace("shift(", "shift_gpu(")
        if name == "square":
            code += "\nstatic int broken(void) { return undeclared_name; }\n"
        return Completion(fenced(code), prompt_tokens=1000, completion_tokens=200, seconds=2.0)

    def choose(self, messages, options, sampling):
        raise AssertionError("the edge benchmark never asks for a method choice")


def offloaded_code(edges) -> dict[str, str]:
    """Per function, the offload's change as a focused answer: its new items and the
    changed function, nothing else of the program."""
    found = {}
    for edge in edges:
        variant = edge.starts.after("offload")
        assert variant is not None and "__global__" in variant.code
        before = edge.starts.sequential.code
        changed = focus.changed_functions(before, variant.code)
        assert changed == [edge.program.split("/")[-1]]  # main is left as it was
        parts = [item.text for item in focus.added_items(before, variant.code)]
        parts.append(focus.functions(variant.code)[changed[0]].text)
        found[changed[0]] = "\n\n".join(parts) + "\n"
    return found


def by_program(results):
    return {result.program.split("/")[0]: result for result in results}


def test_the_sample_starts_offload_from_the_sequential_programs(edges):
    assert sorted(edge.program for edge in edges) == [
        "badcompile/square",
        "badstructure/shift",
        "good/scale",
    ]
    assert all(edge.start == "sequential" and edge.precondition for edge in edges)
    assert all("__global__" not in edge.variant.code for edge in edges)


def test_counts_structure_compile_and_pass_then_replays_them(edges, tmp_path):
    record = tmp_path / "edges.jsonl"
    model = ScriptedModel(offloaded_code(edges))
    recording = CachedEngine(model, record=Recorder(record))
    results = Results(tmp_path / "out")
    done = run_edges(edges, recording, "scripted", EdgeOptions(), results, say=lambda _: None)

    found = by_program(done)
    assert found["good"].outcome == "ok" and found["good"].compiled
    assert found["badstructure"].outcome == "structure"
    assert "'shift'" in found["badstructure"].reason and not found["badstructure"].structure_ok
    assert found["badcompile"].outcome == "compile"
    assert found["badcompile"].structure_ok and not found["badcompile"].compiled
    assert "undeclared_name" in found["badcompile"].reason
    # the failing edges had their repair round, the passing one did not
    assert [found[p].completions for p in ("good", "badstructure", "badcompile")] == [1, 2, 2]
    assert found["badcompile"].prompt_tokens == 2000 and found["badcompile"].model_seconds == 4.0
    assert all(result.correct is None for result in done)  # --run was not asked for

    [offload, total] = summarise(done)
    assert (offload.method, offload.edges, offload.structure_ok, offload.compiled) == (
        "offload",
        3,
        2,
        1,
    )
    assert offload.outcomes == {"ok": 1, "compile": 1, "structure": 1}
    assert total.method == "all" and total.edges == 3 and total.compiled == 1
    assert "| scripted | offload | 3 | 3 | 2/3 (67%) | 1/3 (33%) | - |" in table([offload])
    written = (tmp_path / "out" / "edges.jsonl").read_text().splitlines()
    assert [json.loads(line)["outcome"] for line in written] == [r.outcome for r in done]
    assert "1/3 (33%)" in (tmp_path / "out" / "summary.md").read_text()
    # each answer that made a program is kept, and every rule was applied to it
    kept = {json.loads(line)["program"]: json.loads(line)["answer"] for line in written}
    assert "__global__" in kept["good/scale"] and "undeclared_name" in kept["badcompile/square"]
    assert kept["good/scale"] == found["good"].answer
    assert all(result.rule_failures == () for result in done)
    assert kept["badstructure/shift"] == ""  # its answer renamed the function: no splice
    assert (
        "Rules applied to the 2 answers that made a program: 0 raised."
        in (tmp_path / "out" / "summary.md").read_text()
    )

    calls = model.calls
    replaying = CachedEngine(None, replay=Replay(record))
    again = run_edges(edges, replaying, "scripted", EdgeOptions(), Results(None), lambda _: None)
    assert model.calls == calls  # the replay never reached the model
    assert [(r.program, r.outcome, r.reason) for r in again] == [
        (r.program, r.outcome, r.reason) for r in done
    ]
    assert all(r.cached == r.completions for r in again)


def test_the_command_line_replays_a_recording_into_a_table(edges, suite, tmp_path, capsys):
    record = tmp_path / "recorded.jsonl"
    model = ScriptedModel(offloaded_code(edges))
    run_edges(
        edges,
        CachedEngine(model, record=Recorder(record)),
        "scripted",
        EdgeOptions(),
        Results(None),
        lambda _: None,
    )
    out = tmp_path / "out"
    argv = ["--replay", str(record), "--suite", str(suite), "--methods", "offload"]
    assert slm_bench.main([*argv, "--programs", "0", "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "| test:scripted | offload | 3 | 3 | 2/3 (67%) | 1/3 (33%) | - |" in printed
    summary = json.loads((out / "summary.json").read_text())
    assert [row["compiled"] for row in summary["rows"]] == [1, 1]
    assert len((out / "edges.jsonl").read_text().splitlines()) == 3


def test_a_timeout_or_a_crash_is_recorded_and_the_run_goes_on(edges):
    model = ScriptedModel(offloaded_code(edges), slow={"shift"}, crash={"square"})
    options = EdgeOptions(timeout=1.0)
    began = time.perf_counter()
    done = run_edges(edges, model, "scripted", options, Results(None), lambda _: None)
    assert time.perf_counter() - began < 25  # the sleeping answer was cut off
    found = by_program(done)
    assert found["badstructure"].outcome == "timeout"
    assert "1 s" in found["badstructure"].reason
    assert found["badcompile"].outcome == "error"
    assert "crashed" in found["badcompile"].reason
    assert found["good"].outcome == "ok"
    assert summarise(done)[0].outcomes == {"ok": 1, "timeout": 1, "error": 1}


def test_a_prompt_beyond_the_context_fails_its_edge_only(edges):
    model = ScriptedModel(offloaded_code(edges), too_long={"shift"})
    done = by_program(run_edges(edges, model, "m", EdgeOptions(), Results(None), lambda _: None))
    assert done["badstructure"].outcome == "context" and done["badstructure"].completions == 0
    assert "exceed context window" in done["badstructure"].reason
    assert done["good"].outcome == "ok"


class Answers:
    """Answers in turn; a PromptTooLong in the list is raised instead."""

    identity = "test:answers"

    def __init__(self, *answers):
        self.answers, self.asked = list(answers), []

    def complete(self, messages, sampling):
        self.asked.append(messages)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return Completion(answer, 10, 10, 0.1)


def test_no_repair_round_for_a_prompt_that_does_not_fit():
    model = Answers(PromptTooLong("too long"))
    result = converse(model, [{"role": "user", "content": "Task: x"}], lambda code: [], Sampling())
    assert result.code is None and [p.kind for p in result.problems] == ["context"]
    assert len(model.asked) == 1


def test_a_repair_prompt_that_does_not_fit_leaves_the_first_answer():
    model = Answers("no code here", PromptTooLong("too long"))
    result = converse(model, [{"role": "user", "content": "Task: x"}], lambda code: [], Sampling())
    assert [p.kind for p in result.problems] == ["extract"]
    assert len(model.asked) == 2


def test_a_time_budget_stops_starting_edges(edges):
    model = ScriptedModel(offloaded_code(edges), slow={"shift"})
    results = Results(None)
    ordered = sorted(edges, key=lambda edge: "shift" not in edge.program)
    done = run_edges(
        ordered, model, "scripted", EdgeOptions(timeout=1.0), results, lambda _: None, budget=0.5
    )
    assert [r.outcome for r in done] == ["timeout"]
    assert results.notes == ["scripted: time budget (0 s) spent, 2 of 3 edges not run"]


def test_inputs_prefer_cuda_predecessors_then_the_sequential_program():
    assert start_order(METHODS["offload"]) == ["sequential"]
    assert start_order(METHODS["reduction"]) == ["offload", "sequential"]
    assert start_order(METHODS["register_tiling"]) == ["offload", "shared_tiling", "coalesce"]


def test_the_sample_spreads_over_categories(tmp_path):
    paths = [tmp_path / folder / name for folder in ("a", "b") for name in ("1.c", "2.c", "3.c")]
    assert [str(p.relative_to(tmp_path)) for p in spread(paths[:5], tmp_path)] == [
        "a/1.c",
        "b/1.c",
        "a/2.c",
        "b/2.c",
        "a/3.c",
    ]


@pytest.mark.gpu
def test_run_compares_the_compiled_edges_with_the_cpu_on_the_gpu(edges):
    model = ScriptedModel(offloaded_code(edges), wrong={"shift"})
    options = EdgeOptions(run=True, timeout=300)
    done = by_program(run_edges(edges, model, "scripted", options, Results(None), lambda _: None))
    assert done["good"].correct is True
    assert done["badstructure"].outcome == "ok" and done["badstructure"].correct is False
    assert done["badstructure"].reason  # what the comparison found
    assert done["badcompile"].outcome == "compile" and done["badcompile"].correct is None
    [row, _] = summarise(list(done.values()))
    assert (row.ran, row.correct) == (2, 1)
    assert table([row]).splitlines()[-1].split("|")[7].strip() == "1/3 (33%)"


def test_the_gpu_run_of_a_passing_answer_is_not_cut_by_the_edge_deadline(edges, monkeypatch):
    """The run may first wait for another bench's timings: the evaluator's own time limit
    applies, not the edge's (fakes the GPU: the run sleeps past the deadline)."""
    good = next(e for e in edges if e.program.startswith("good/"))
    stages = good.starts.stages
    monkeypatch.setattr(stages.evaluator, "run_on_gpu", True)

    def slow_verdict(variant, before=None):  # type: ignore[no-untyped-def]
        time.sleep(1.5)
        return Evaluation(stage=Stage.CORRECT, ran_on_gpu=True)

    monkeypatch.setattr(stages, "evaluate", slow_verdict)
    monkeypatch.setattr(stages, "validate", lambda code, method, before=None: [])  # no nvcc
    model = ScriptedModel(offloaded_code(edges))
    options = EdgeOptions(run=True, timeout=1.0)
    [result] = run_edges([good], model, "scripted", options, Results(None), lambda _: None)
    assert (result.outcome, result.correct, result.reason) == ("ok", True, "")
    assert result.seconds > 1.5


def test_a_rule_that_raises_on_a_models_program_is_recorded(edges, tmp_path, monkeypatch):
    """Every rule is applied to the program each answer made: one that raises (a rule met
    code it was not written for) is recorded with its edge, and the benchmark goes on."""
    from cudaify.transforms import METHODS

    seen: list[str] = []

    def broken(self, variant, context):
        seen.append(variant.methods[-1])
        raise IndexError("tuple index out of range")

    monkeypatch.setattr(type(METHODS["launch_tuning"]), "applies", lambda self, v, c: None)
    monkeypatch.setattr(type(METHODS["launch_tuning"]), "apply_rule", broken)
    results = Results(tmp_path / "out")
    good = [edge for edge in edges if edge.program == "good/scale"]
    model = ScriptedModel(offloaded_code(edges))
    [done] = run_edges(good, model, "scripted", EdgeOptions(), results, say=lambda _: None)
    assert done.outcome == "ok" and seen == ["offload"]
    assert done.rule_failures == ("launch_tuning: IndexError: tuple index out of range",)
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert "1 answers that made a program: 1 raised." in summary
    assert (
        "- launch_tuning: IndexError: tuple index out of range"
        " (on scripted's offload of good/scale)" in summary
    )
