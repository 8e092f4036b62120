from __future__ import annotations

import math
import multiprocessing
import re
from pathlib import Path

import pytest

from cudaify.core import Evaluation, Stage, Timing, Variant
from cudaify.mcgs.search import Candidate
from cudaify.regraph import user_stats_path
from cudaify.regraph.build import VerifiedStep
from cudaify.regraph.graph import default_graph, load
from cudaify.regraph.learn import (
    StatsUpdate,
    learn_examples,
    learn_from_search,
    learn_statistics,
    load_active_graph,
    run_steps,
    user_graph_path,
)

DATE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


def _step(after: str) -> VerifiedStep:
    return VerifiedStep(
        "mine", "sequential", "offload", "int main;", after, verified="gpu", speedup=3.0, gain=3.0
    )


def _ran(speedup: float) -> Evaluation:
    """Correct on a GPU, `speedup` times faster than the CPU, region and program alike."""
    return Evaluation(
        stage=Stage.CORRECT,
        ran_on_gpu=True,
        timing=Timing(region=1.0, wall=1.0),
        reference=Timing(region=speedup, wall=speedup),
    )


def test_learning_examples_writes_the_user_graph_and_never_the_shipped_one(tmp_path):
    path = tmp_path / "data" / "graph.json"
    shipped = default_graph().to_json()
    learn_examples([_step("a"), VerifiedStep("x", "sequential", "offload", "b", "c")], path)
    user = load(path)
    examples = user.examples("sequential", "offload")
    assert [(e.after, e.source) for e in examples] == [("a", "learned")]  # unverified kept out
    assert user.stats("sequential", "offload").visits == 0  # statistics live beside it
    assert default_graph().to_json() == shipped


def test_learning_examples_again_leaves_the_file_as_it_was(tmp_path):
    """The user graph is in the result cache's key: a run that teaches nothing new must
    not change its bytes (nor its date)."""
    path = tmp_path / "graph.json"
    learn_examples([_step("a")], path, gpu="NVIDIA H100")
    first = path.read_bytes()
    learn_examples([_step("a")], path, gpu="NVIDIA H100")
    assert path.read_bytes() == first
    learn_examples([], tmp_path / "none.json")
    assert not (tmp_path / "none.json").exists()


def test_the_active_graph_is_the_shipped_one_plus_what_was_learned(tmp_path):
    path = tmp_path / "graph.json"
    assert load_active_graph(path).to_json() == default_graph().to_json()
    base = default_graph().stats("sequential", "offload").visits
    stats = user_stats_path(path)
    learn_examples([_step("a")], path)
    learn_statistics([StatsUpdate("sequential", "offload", True, 3.0)], stats)
    learn_examples([_step("a"), _step("b")], path)
    learn_statistics([StatsUpdate("sequential", "offload", False)], stats)
    active = load_active_graph(path)
    assert active.stats("sequential", "offload").visits == base + 2
    learned = [e.after for e in active.examples("sequential", "offload") if e.source == "learned"]
    assert learned == ["a", "b"]


def test_the_user_files_live_in_the_user_data_dir():
    assert user_graph_path().name == "graph.json"
    assert "cudaify" in str(user_graph_path().parent)
    assert user_stats_path() == user_graph_path().with_name("edge-stats.json")


def test_a_search_run_gives_steps_and_updates():
    start = Variant(code="int main() {}")
    first = start.then("offload", "__global__ void k() {}", "rule")
    second = first.then("unroll", "__global__ void k() { /*u*/ }", "rule")
    broken = first.then("coalesce", "broken", "rule")
    steps, updates = run_steps(
        "prog",
        start,
        [(first, _ran(4.0)), (second, _ran(4.0)), (broken, Evaluation(stage=Stage.STRUCTURE))],
    )
    assert [(s.source, s.target, s.before, s.speedup) for s in steps] == [
        ("sequential", "offload", start.code, 4.0),
        ("offload", "unroll", first.code, 4.0),
    ]
    assert [(u.source, u.target, u.success) for u in updates] == [
        ("sequential", "offload", True),
        ("offload", "unroll", True),
        ("offload", "coalesce", False),
    ]


def test_an_edge_records_its_gain_over_the_parent_not_the_cpu(tmp_path):
    """offload at 0.5x, then data_residency at 2.5x: that edge gained 5x, though its
    parent was slower than the CPU; the offload gained 0.5x over the input."""
    start = Variant(code="int main() {}")
    offload = start.then("offload", "__global__ void k() {}", "rule")
    resident = offload.then("data_residency", "__global__ void k() { /*r*/ }", "rule")
    candidates = [Candidate(offload, _ran(0.5)), Candidate(resident, _ran(2.5))]
    steps, updates = run_steps("prog", start, [(c.variant, c.evaluation) for c in candidates])
    assert [(u.target, u.gain) for u in updates] == [
        ("offload", pytest.approx(0.5)),
        ("data_residency", pytest.approx(5.0)),
    ]
    assert [(s.speedup, s.gain) for s in steps] == [(0.5, pytest.approx(0.5)), (2.5, 5.0)]

    learned = learn_from_search(
        "prog", start, candidates, tmp_path / "graph.json", examples=False, gpu="NVIDIA H100"
    )
    assert learned.examples is None and not (tmp_path / "graph.json").exists()
    stats = load(tmp_path / "edge-stats.json").stats("offload", "data_residency")
    assert (stats.visits, stats.successes, stats.timed) == (1, 1, 1)
    assert math.isclose(math.exp(stats.mean_log_gain), 5.0)


def test_the_gain_follows_the_runs_objective():
    """The region 4x faster than its parent's, the whole program only 1.25x."""
    start = Variant(code="int main() {}")
    offload = start.then("offload", "__global__ void k() {}", "rule")
    resident = offload.then("data_residency", "__global__ void k() { /*r*/ }", "rule")
    slow = Evaluation(
        stage=Stage.CORRECT,
        ran_on_gpu=True,
        timing=Timing(region=2.0, wall=4.0),
        reference=Timing(region=1.0, wall=2.0),
    )
    fast = Evaluation(
        stage=Stage.CORRECT,
        ran_on_gpu=True,
        timing=Timing(region=0.5, wall=3.2),
        reference=Timing(region=1.0, wall=2.0),
    )
    pairs = [(offload, slow), (resident, fast)]
    for objective, expected in (("region", 4.0), ("program", 1.25)):
        _, updates = run_steps("prog", start, pairs, objective=objective)
        assert updates[1].gain == pytest.approx(expected), objective


def test_a_parent_that_never_ran_leaves_the_gain_unknown():
    """A stepping stone is not among the candidates: its child counts as a success with
    no gain, not as a gain over the CPU."""
    start = Variant(code="int main() {}")
    stone = start.then("offload", "__global__ void k() {}", "rule")
    child = stone.then("data_residency", "__global__ void k() { /*r*/ }", "rule")
    _, updates = run_steps("prog", start, [(child, _ran(2.5))])
    assert [(u.success, u.gain) for u in updates] == [(True, None)]


def test_statistics_say_when_and_on_which_gpu(tmp_path):
    path = tmp_path / "edge-stats.json"
    learn_statistics([StatsUpdate("sequential", "offload", True, 2.0)], path, "NVIDIA H100")
    meta = load(path).meta
    assert DATE.fullmatch(meta["date"]) and meta["gpu"] == "NVIDIA H100"
    assert (meta["runs"], meta["objective"]) == (1, "program")
    learn_statistics([StatsUpdate("sequential", "offload", False)], path, "NVIDIA A100", "region")
    meta = load(path).meta
    assert meta["gpu"] == ["NVIDIA A100", "NVIDIA H100"]
    assert (meta["runs"], meta["objective"]) == (2, ["program", "region"])


def test_learning_from_a_search_keeps_only_what_a_gpu_verified(tmp_path):
    start = Variant(code="int main() {}")
    child = start.then("offload", "__global__ void k() {}", "rule")
    compiled = Evaluation(stage=Stage.COMPILE)
    path = tmp_path / "graph.json"
    learned = learn_from_search("prog", start, [Candidate(child, compiled)], path)
    # no GPU: nothing learned, nothing counted, no file written
    assert learned.examples is not None and learned.examples.graph.number_of_edges() == 0
    assert learned.statistics is None and list(tmp_path.iterdir()) == []
    ran = Evaluation(stage=Stage.CORRECT, ran_on_gpu=True)
    wrong = Evaluation(stage=Stage.RUN, ran_on_gpu=True)
    other = start.then("reduction", "__global__ void r() {}", "rule")
    learned = learn_from_search(
        "prog", start, [Candidate(child, ran), Candidate(other, wrong)], path
    )
    assert learned.examples is not None and learned.statistics is not None
    assert [e.after for e in learned.examples.examples("sequential", "offload")] == [child.code]
    assert learned.statistics.stats("sequential", "reduction").visits == 1
    assert learned.statistics.stats("sequential", "reduction").successes == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "edge-stats.json",
        "edge-stats.json.lock",
        "graph.json",
        "graph.json.lock",
    ]


def test_statistics_off_writes_nothing(tmp_path):
    start = Variant(code="int main() {}")
    child = start.then("offload", "__global__ void k() {}", "rule")
    learned = learn_from_search(
        "prog",
        start,
        [Candidate(child, _ran(2.0))],
        tmp_path / "graph.json",
        examples=False,
        statistics=False,
    )
    assert learned.examples is None and learned.statistics is None
    assert list(tmp_path.iterdir()) == []


def _record_many(path: str, count: int, barrier: object) -> None:
    barrier.wait()  # type: ignore[attr-defined]
    for _ in range(count):
        learn_statistics([StatsUpdate("sequential", "offload", True, 2.0)], path, "GPU")


def test_concurrent_writers_keep_every_record(tmp_path):
    """`make -j`: two compiles record at once into one file; none of their records is lost
    (a read-modify-write without the lock loses some) and the file is whole throughout."""
    path = tmp_path / "edge-stats.json"
    count = 40
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(2)
    writers = [context.Process(target=_record_many, args=(str(path), count, barrier))]
    writers.append(context.Process(target=_record_many, args=(str(path), count, barrier)))
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(60)
    assert [w.exitcode for w in writers] == [0, 0]
    graph = load(path)
    assert graph.stats("sequential", "offload").visits == 2 * count
    assert graph.meta["runs"] == 2 * count


def test_the_result_key_reads_the_examples_not_the_statistics(tmp_path, monkeypatch):
    """Every GPU compile records statistics: were they in the result cache's key, each
    compile would make every other input's cached result miss. Examples (--learn) change
    what the model is shown, and are in it."""
    from cudaify.core.config import Config
    from cudaify.pipeline import result_key

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    source = tmp_path / "p.c"
    source.write_text("int main(void) { return 0; }\n")
    key = result_key(str(source), source.read_bytes(), Config())
    learn_statistics([StatsUpdate("sequential", "offload", True, 2.0)], user_stats_path())
    assert user_stats_path().is_file()
    assert result_key(str(source), source.read_bytes(), Config()) == key
    assert result_key(str(source), source.read_bytes(), Config(learn_stats=False)) == key
    learn_examples([_step("a")])
    assert result_key(str(source), source.read_bytes(), Config()) != key


def test_recording_a_runs_statistics_is_cheap(tmp_path):
    """What every GPU compile adds: a run of the size of a search (40 attempts over the
    shipped graph's edges) into a file holding all of them, well under the noise of one
    timed run."""
    import time

    graph = default_graph()
    updates = [StatsUpdate(s, t, True, 1.5) for s, t in graph.edges()][:40]
    path = tmp_path / "edge-stats.json"
    learn_statistics(updates, path)
    began = time.perf_counter()
    for _ in range(5):
        learn_statistics(updates, path)
    assert (time.perf_counter() - began) / 5 < 0.05


def test_meta_date_is_utc_to_the_second():
    from cudaify.regraph.graph import now

    assert DATE.fullmatch(now())


def test_a_learned_file_path_is_beside_the_graph(tmp_path: Path):
    assert user_stats_path(tmp_path / "graph.json") == tmp_path / "edge-stats.json"


SAXPY = """\
#include <stdio.h>

void saxpy(int n, float a, const float *x, float *y) {
    for (int i = 0; i < n; i++)
        y[i] = a * x[i] + y[i];
}

int main(void) {
    static float x[1000], y[1000];
    for (int i = 0; i < 1000; i++) { x[i] = i * 0.5f; y[i] = 1.0f; }
    saxpy(1000, 2.0f, x, y);
    printf("%.6e\\n", y[999]);
    return 0;
}
"""


def _compile_on_a_faked_gpu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **settings):  # type: ignore[no-untyped-def]
    """A compile whose every candidate is correct on a (faked) GPU at 2x the CPU."""
    from cudaify import pipeline
    from cudaify.backend import evaluate as evaluate_mod
    from cudaify.core.config import Config

    def screen(self, variant):  # type: ignore[no-untyped-def]
        return _ran(2.0)

    monkeypatch.setattr(evaluate_mod.Evaluator, "screen", screen)
    monkeypatch.setattr(evaluate_mod.Evaluator, "_remeasure", lambda self, v, e, *a, **k: e)
    monkeypatch.setattr(evaluate_mod.Evaluator, "_detailed", lambda self, v, e: e)
    monkeypatch.setattr(evaluate_mod.gpu, "gpu_available", lambda: True)
    monkeypatch.setattr("cudaify.regraph.learn.gpu_name", lambda: "NVIDIA H100 80GB HBM3")
    source = tmp_path / "saxpy.c"
    source.write_text(SAXPY)
    config = Config(slm="off", seed=0, strategy="rules", max_depth=1, **settings)
    return pipeline.compile_file(str(source), str(tmp_path / "saxpy.cu"), config)


def test_every_compile_on_a_gpu_records_edge_statistics_and_keeps_its_cache_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """By default (learn_stats): the attempts go into edge-stats.json, with the GPU's name;
    the examples graph is left alone (that is --learn); and the same compile again is
    served from the result cache, though the statistics changed."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    first = _compile_on_a_faked_gpu(tmp_path, monkeypatch)
    assert first.verified and not first.cached
    learned = load(user_stats_path())
    offload = learned.stats("sequential", "offload")
    assert offload.visits >= 1 and offload.successes >= 1
    assert math.isclose(math.exp(offload.mean_log_gain), 2.0)  # over the input, at 1x
    assert learned.meta["gpu"] == "NVIDIA H100 80GB HBM3" and learned.meta["runs"] == 1
    assert not user_graph_path().exists()
    assert _compile_on_a_faked_gpu(tmp_path, monkeypatch).cached
    assert load(user_stats_path()).meta["runs"] == 1  # a cached result teaches nothing new


def test_no_learn_stats_records_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert _compile_on_a_faked_gpu(tmp_path, monkeypatch, learn_stats=False, cache=False).verified
    assert not user_stats_path().exists() and not user_graph_path().exists()


def test_edge_statistics_are_kept_per_way_and_reload(tmp_path):
    """Each attempt is counted for the way it was made (rule or slm) and wins when it was
    verified and faster than its parent; the record survives the file and a merge."""
    start = Variant(code="int main() {}")
    offload = start.then("offload", "__global__ void k() {}", "rule")
    by_model = offload.then("coalesce", "__global__ void k() { /*m*/ }", "slm")
    slower = offload.then("unroll", "__global__ void k() { /*u*/ }", "slm")
    refused = offload.then("coalesce", "broken", "rule")
    candidates = [
        Candidate(offload, _ran(2.0)),
        Candidate(by_model, _ran(6.0)),  # 3x over its parent: a win
        Candidate(slower, _ran(1.0)),  # verified, slower than its parent: no win
        Candidate(refused, Evaluation(stage=Stage.STRUCTURE)),
    ]
    _, updates = run_steps("prog", start, [(c.variant, c.evaluation) for c in candidates])
    assert [(u.target, u.how, u.win) for u in updates] == [
        ("offload", "rule", True),
        ("coalesce", "slm", True),
        ("unroll", "slm", False),
        ("coalesce", "rule", False),
    ]
    learn_from_search("prog", start, candidates, tmp_path / "graph.json", examples=False)
    stats = load(tmp_path / "edge-stats.json")
    coalesce = stats.stats("offload", "coalesce")
    assert (coalesce.way("slm").visits, coalesce.way("slm").wins) == (1, 1)
    assert (coalesce.way("rule").visits, coalesce.way("rule").wins) == (1, 0)
    assert (stats.stats("offload", "unroll").way("slm").wins, coalesce.visits) == (0, 2)
    # a second run adds to the record, and the active graph (shipped + learned) has it
    learn_from_search("prog", start, candidates[:2], tmp_path / "graph.json", examples=False)
    active = load_active_graph(tmp_path / "graph.json").stats("offload", "coalesce")
    assert (active.way("slm").visits, active.way("slm").wins) == (2, 2)
    assert active.way("rule").visits == 1


def test_an_edge_statistics_file_without_ways_still_loads(tmp_path):
    """edge-stats.json written before the per-way record: its counts load, no way has
    any record, and the shipped graph's bytes do not change for want of one."""
    import json

    old = {
        "format": "cudaify-regraph",
        "version": 3,
        "nodes": [{"name": "sequential"}, {"name": "offload"}],
        "edges": [
            {
                "source": "sequential",
                "target": "offload",
                "stats": {"visits": 3, "successes": 2, "mean_log_gain": 0.7, "timed": 2},
                "examples": [],
            }
        ],
        "blobs": {},
    }
    path = tmp_path / "edge-stats.json"
    path.write_text(json.dumps(old))
    stats = load(path).stats("sequential", "offload")
    assert (stats.visits, stats.successes, stats.how) == (3, 2, {})
    assert stats.way("rule").visits == stats.way("slm").visits == 0
    assert "how" not in load(path).to_json()["edges"][0]["stats"]
    learn_statistics([StatsUpdate("sequential", "offload", True, 2.0, "slm", True)], path)
    again = load(path).stats("sequential", "offload")
    assert (again.visits, again.way("slm").wins, again.way("rule").visits) == (4, 1, 0)


def test_a_bad_way_record_is_reported_with_its_path(tmp_path):
    from cudaify.regraph.graph import GraphFormatError, from_json

    data = default_graph().to_json()
    data["edges"][0]["stats"]["how"] = {"slm": {"visits": 1, "wins": 2}}
    with pytest.raises(GraphFormatError, match=r"\$\.edges\[0\]\.stats\.how\.slm\.wins"):
        from_json(data)
    data["edges"][0]["stats"]["how"] = {"model": {"visits": 1}}
    with pytest.raises(GraphFormatError, match="not one of 'rule', 'slm'"):
        from_json(data)
