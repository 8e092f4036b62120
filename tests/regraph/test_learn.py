from __future__ import annotations

from cudaify.core import Evaluation, Stage, Timing, Variant
from cudaify.regraph.build import VerifiedStep
from cudaify.regraph.graph import default_graph, load
from cudaify.regraph.learn import StatsUpdate, learn, load_active_graph, run_steps, user_graph_path


def _step(after: str) -> VerifiedStep:
    return VerifiedStep(
        "mine", "sequential", "offload", "int main;", after, verified="gpu", speedup=3.0
    )


def test_learning_writes_the_user_graph_and_never_the_shipped_one(tmp_path):
    path = tmp_path / "data" / "graph.json"
    shipped = default_graph().to_json()
    learn(
        path,
        [_step("a"), VerifiedStep("x", "sequential", "offload", "b", "c")],
        [StatsUpdate("sequential", "offload", True, 3.0), StatsUpdate("offload", "unroll", False)],
    )
    user = load(path)
    examples = user.examples("sequential", "offload")
    assert [(e.after, e.source) for e in examples] == [("a", "learned")]  # unverified kept out
    assert (user.stats("sequential", "offload").visits, user.stats("offload", "unroll").visits) == (
        1,
        1,
    )
    assert default_graph().to_json() == shipped


def test_the_active_graph_is_the_shipped_one_plus_what_was_learned(tmp_path):
    path = tmp_path / "graph.json"
    assert load_active_graph(path).to_json() == default_graph().to_json()
    base = default_graph().stats("sequential", "offload").visits
    learn(path, [_step("a")], [StatsUpdate("sequential", "offload", True, 3.0)])
    learn(path, [_step("a"), _step("b")], [StatsUpdate("sequential", "offload", False)])
    active = load_active_graph(path)
    assert active.stats("sequential", "offload").visits == base + 2
    learned = [e.after for e in active.examples("sequential", "offload") if e.source == "learned"]
    assert learned == ["a", "b"]


def test_the_user_graph_lives_in_the_user_data_dir():
    assert user_graph_path().name == "graph.json"
    assert "cudaify" in str(user_graph_path().parent)


def test_a_search_run_gives_steps_and_updates():
    start = Variant(code="int main() {}")
    first = start.then("offload", "__global__ void k() {}", "rule")
    second = first.then("unroll", "__global__ void k() { /*u*/ }", "rule")
    broken = first.then("coalesce", "broken", "rule")
    ok = Evaluation(
        stage=Stage.CORRECT,
        ran_on_gpu=True,
        timing=Timing(region=1.0),
        reference=Timing(region=4.0),
    )
    steps, updates = run_steps(
        "prog", start, [(first, ok), (second, ok), (broken, Evaluation(stage=Stage.STRUCTURE))]
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


def test_learning_from_a_search_keeps_only_what_a_gpu_verified(tmp_path):
    from cudaify.mcgs.search import Candidate
    from cudaify.regraph.learn import learn_from_search

    start = Variant(code="int main() {}")
    child = start.then("offload", "__global__ void k() {}", "rule")
    compiled = Evaluation(stage=Stage.COMPILE)
    path = tmp_path / "graph.json"
    learned = learn_from_search("prog", start, [Candidate(child, compiled)], path)
    assert learned.graph.number_of_edges() == 0  # no GPU: nothing learned, nothing counted
    ran = Evaluation(stage=Stage.CORRECT, ran_on_gpu=True)
    wrong = Evaluation(stage=Stage.RUN, ran_on_gpu=True)
    other = start.then("reduction", "__global__ void r() {}", "rule")
    learned = learn_from_search(
        "prog", start, [Candidate(child, ran), Candidate(other, wrong)], path
    )
    assert [e.after for e in learned.examples("sequential", "offload")] == [child.code]
    assert learned.stats("sequential", "reduction").visits == 1
    assert learned.stats("sequential", "reduction").successes == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["graph.json", "graph.json.lock"]
