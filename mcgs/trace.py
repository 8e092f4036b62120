"""The trace of a run: the chosen path and a summary of the search, as JSON."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from cudaify.core import Variant
from cudaify.mcgs.search import Candidate, SearchResult


def build_trace(
    input_path: str,
    input_hash: str,
    result: SearchResult,
    chosen: Candidate | None,
    evaluations: dict[str, Candidate],
    slm_calls: int = 0,
) -> dict[str, Any]:
    """`evaluations` maps a variant key to its candidate, so each step of the chosen path
    reports the stage and speedup measured for the variant it produced."""
    steps: list[dict[str, Any]] = []
    variant: Variant | None = chosen.variant if chosen else None
    for step in variant.steps if variant else ():
        measured = evaluations.get(step.after_hash)
        evaluation = measured.evaluation if measured else None
        steps.append(
            {
                **step.to_json(),
                "stage": evaluation.stage.label if evaluation else None,
                "region_speedup": evaluation.region_speedup if evaluation else None,
            }
        )
    return {
        "input": input_path,
        "input_hash": input_hash,
        "strategy": result.strategy,
        "chosen": steps,
        "verified": bool(chosen and chosen.evaluation.verified),
        "ran_on_gpu": bool(chosen and chosen.evaluation.ran_on_gpu),
        # [rtol, atol] the verified output matched at ([0, 0]: every number equal)
        "tolerance": list(chosen.evaluation.tolerance)
        if chosen and chosen.evaluation.tolerance
        else None,
        "timing": _timing(chosen),
        "skipped": [{"method": m, "reason": r} for m, r in result.skipped],
        "search": {
            "states": len(result.candidates) + 1,
            "iterations": result.iterations,
            "seconds": round(result.seconds, 3),
            "slm_calls": slm_calls,
            "stages": result.stage_counts(),
            # the static cost model checked against the measured states (mcgs)
            **({"cost_model": result.cost_model} if result.cost_model else {}),
            "graph": result.states,
        },
    }


def _plain(value: Any) -> Any:
    """`value` as JSON reads it back (tuples as lists), so a trace served from the cache
    equals the one written."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def _timing(chosen: Candidate | None) -> dict[str, Any] | None:
    """Medians in seconds: the CPU reference (gcc -O3) and the chosen variant, same runs."""
    if chosen is None or not chosen.evaluation.ran_on_gpu:
        return None
    evaluation = chosen.evaluation
    return {
        "reference": _plain(asdict(evaluation.reference)),
        "candidate": _plain(asdict(evaluation.timing)),
        "region_speedup": evaluation.region_speedup,
        "program_speedup": evaluation.program_speedup,
        # estimated from parts: other processes shared the GPU while it was timed
        "program_speedup_estimated": evaluation.program_speedup_estimated,
        "roofline_percent": evaluation.timing.roofline_percent,
        # the roof of the kernel that took the most time (each kernel's: candidate.kernels)
        "roofline_bound": evaluation.timing.bound,
    }
