"""A rewrite two orders of the same steps reach is one state of the search; each step that
makes it is checked against the variant it was applied to."""

from __future__ import annotations

from pathlib import Path

from cudaify import pipeline
from cudaify.core import Stage, Variant
from cudaify.core.config import Config

PRODUCT = Path(__file__).parents[1] / "golden" / "shared_tiling" / "matmul_flat.c"


def test_commuting_steps_are_each_checked_against_their_own_parent() -> None:
    """offload -> shared_tiling -> readonly_cache and offload -> readonly_cache ->
    shared_tiling write the same code. Made in that order, the second made it the parent
    of the first, and readonly_cache's postcondition (a kernel gains restricted pointers)
    was checked against a kernel already restricted: refused, its reward -1 (5 of a 900^3
    product's 23 states were such refusals)."""
    config = Config(cache=False)
    program = pipeline.prepare(str(PRODUCT), config)
    stages = pipeline.Stages(program, config)

    def step(variant: Variant, method: str) -> Variant:
        child, reason = stages.expand(variant, method)
        assert child is not None, reason
        return child

    offloaded = step(Variant(code=program.source), "offload")
    tiled_then_restricted = step(step(offloaded, "shared_tiling"), "readonly_cache")
    restricted_then_tiled = step(step(offloaded, "readonly_cache"), "shared_tiling")
    assert tiled_then_restricted.key == restricted_then_tiled.key  # one rewrite
    assert tiled_then_restricted.node != restricted_then_tiled.node
    for variant in (tiled_then_restricted, restricted_then_tiled):
        evaluation = stages.evaluate(variant)
        assert evaluation.stage >= Stage.COMPILE, (variant.methods, evaluation.problems)
