"""The pipeline's side of rounding-only mismatches: the rescue every strategy is given
(fp_exact's rule), the graph edges out of fp_exact, and the output header that says which
tolerance held and whether fp_exact was needed."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from cudaify import pipeline
from cudaify.core import Evaluation, Stage, Timing, Variant
from cudaify.core.config import Config
from cudaify.frontend.facts import Program
from cudaify.mcgs.search import Candidate, SearchResult

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "fp_exact" / "projections.c"


def verified(tolerance: tuple[float, float] | None, speedup: float = 3.0) -> Evaluation:
    return Evaluation(
        stage=Stage.CORRECT,
        ran_on_gpu=True,
        timing=Timing(region=1.0),
        reference=Timing(region=speedup),
        tolerance=tolerance,
    )


def test_the_header_says_which_tolerance_held() -> None:
    program = Program(path="p.c", source="int main(void) { return 0; }\n", language="c")
    variant = Variant(code="x").then("offload", "y", "rule")
    exact = pipeline.header(program, variant, verified((0.0, 0.0)), "0" * 64)
    assert "output equal to the original's, every number identical, region speedup" in exact
    within = pipeline.header(program, variant, verified((1e-4, 1e-9)), "0" * 64)
    assert "output equal to the original's within rtol 0.0001, atol 1e-09, region" in within
    assert "fp_exact was needed" not in within
    rescued = pipeline.header(program, variant, verified((1e-4, 1e-9)), "0" * 64, True)
    assert (
        " * fp_exact was needed: the output matched the original's only with the kernels "
        "rounding like the CPU (no FMA contraction).\n" in rescued
    )


def test_a_winner_that_needed_fp_exact_says_so(tmp_path: Path, monkeypatch) -> None:
    source = tmp_path / "s.c"
    source.write_text(GOLDEN.read_text())
    start = Variant(code=source.read_text())
    plain = start.then("offload", start.code + "\nint on_gpu;\n", "rule")
    exact = plain.then("fp_exact", plain.code + "int rounded;\n", "rule")
    rounding = Evaluation(stage=Stage.RUN, ran_on_gpu=True, rounding_only=True)

    def rescued_search(start, stages, config, progress=None):
        return SearchResult(
            "mcgs", [Candidate(plain, rounding), Candidate(exact, verified((0.0, 0.0)))]
        )

    monkeypatch.setattr(pipeline, "search", rescued_search)
    result = pipeline._compile(str(source), source.read_bytes(), Config(cache=False))
    assert result.methods == ("offload", "fp_exact")
    head = result.text[: result.text.index("*/")]
    assert "every number identical" in head
    assert "fp_exact was needed" in head
    assert result.trace["tolerance"] == [0.0, 0.0]
    # the same winner reached by --methods offload,fp_exact without a rounding mismatch:
    # fp_exact is in the sequence, but nothing says it was needed
    monkeypatch.setattr(
        pipeline,
        "search",
        lambda *a, **k: SearchResult("sequence", [Candidate(exact, verified((0.0, 0.0)))]),
    )
    result = pipeline._compile(str(source), source.read_bytes(), Config(cache=False))
    assert "fp_exact was needed" not in result.text[: result.text.index("*/")]


def test_the_rescue_is_fp_exacts_rule_and_passes_the_pipelines_checks() -> None:
    config = Config(cache=False)
    program = pipeline.prepare(str(GOLDEN), config)
    stages = pipeline.Stages(program, config)
    offloaded, reason = stages.expand(Variant(code=program.source), "offload")
    assert offloaded is not None, reason
    rescued = stages.rescue(offloaded)
    assert rescued is not None and rescued.methods == ("offload", "fp_exact")
    assert "__dmul_rn" in rescued.code
    # the structural check (fp_exact's postcondition against its parent) and nvcc pass
    evaluation = stages.evaluate(rescued)
    assert evaluation.stage >= Stage.COMPILE, evaluation.problems
    # nothing left to round: no rescue, and the search goes on with what it had
    assert stages.rescue(rescued) is None


def test_fp_exact_has_out_edges_and_no_in_edges_in_the_search_graph() -> None:
    graph = pipeline.search_graph()
    assert {"data_residency", "launch_tuning", "reduction"} <= set(graph.successors("fp_exact"))
    assert not list(graph.graph.in_edges("fp_exact"))


@pytest.mark.parametrize("strategy", ["mcgs", "greedy", "rules", "exhaustive", "sequence"])
def test_every_strategy_is_given_the_rescue(strategy: str, monkeypatch) -> None:
    from cudaify.mcgs import mcgs
    from cudaify.mcgs import search as search_mod

    given: dict[str, object] = {}

    def capture(name: str):
        def called(*args, **kwargs):
            given.update(kwargs, strategy=name, args=args)
            return SearchResult(name)

        return called

    for name in ("run_sequence", "run_rules", "run_greedy"):
        monkeypatch.setattr(search_mod, name, capture(name))

    class Searcher:
        def __init__(self, *args, **kwargs):
            given.update(kwargs, strategy="mcgs")

        def run(self, *args):
            return SearchResult("mcgs")

    monkeypatch.setattr(mcgs, "GraphSearch", Searcher)
    stages = SimpleNamespace(
        graph=pipeline.search_graph(),
        expand=object(),
        evaluate=object(),
        rescue=object(),
        out_of_time=object(),
        prefetch=object(),
        search_left=object(),
        breakdown=object(),
        slm_enabled=False,
    )
    settings = {"methods": ("offload",)} if strategy == "sequence" else {"strategy": strategy}
    pipeline.search(Variant(code="x"), stages, Config(**settings))  # type: ignore[arg-type]
    arguments = given.get("args", ())
    assert given.get("rescue") is stages.rescue or stages.rescue in arguments  # type: ignore[operator]
    # and the command's deadline: --time-budget bounds every strategy
    assert given.get("stop") is stages.out_of_time or stages.out_of_time in arguments  # type: ignore[operator]
    if strategy == "mcgs":  # and what is left of it, which decides whether a model edge fits
        assert given.get("time_left") is stages.search_left
        assert given.get("breakdown") is stages.breakdown  # where its background answer counts
    if strategy == "exhaustive":
        assert "fp_exact" not in given["every_method"]  # type: ignore[operator]
        assert "offload" in given["every_method"]  # type: ignore[operator]
