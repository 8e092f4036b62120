"""Region timing through the harness: which functions it can call alone and at what
sizes, the library it builds (any machine: nvcc builds it here), when the evaluator
trusts its reading, and the timing itself (gpu-marked)."""

from __future__ import annotations

import dataclasses
import subprocess
import threading
import time
from concurrent.futures import Future
from pathlib import Path

import pytest

from cudaify.backend import evaluate as evaluate_mod
from cudaify.backend import kernel_differential as kd
from cudaify.backend import region_timing as rt
from cudaify.backend.budget import Deadline
from cudaify.backend.cache import Cache
from cudaify.backend.cost import parameter_values
from cudaify.backend.differential import case_at
from cudaify.backend.evaluate import Evaluator
from cudaify.backend.gpu import gpu_available
from cudaify.backend.runner import RunResult
from cudaify.backend.timing import Sample
from cudaify.core import Evaluation, Stage, Timing, Variant
from cudaify.core.config import Config
from cudaify.frontend.analyze import analyze
from cudaify.frontend.facts import Program
from cudaify.transforms.base import Context
from cudaify.transforms.offload import Offload

REFERENCE = """#include <stdio.h>
#include <stdlib.h>
#define REPS 4
void saxpy(int n, float a, const float *x, float *y) {
    for (int i = 0; i < n; i++) y[i] = a * x[i] + y[i];
}
void scale(int n, float *u) {
    for (int i = 0; i < n; i++) u[i] = u[i] * 0.5f;
}
int main(void) {
    int n = 1 << 20;
    float *x = (float *)malloc(n * sizeof *x), *y = (float *)malloc(n * sizeof *y);
    for (int i = 0; i < n; i++) { x[i] = i % 10; y[i] = 1; }
    for (int r = 0; r < REPS; r++) saxpy(n, 2.0f, x, y);
    scale(n, x);
    scale(n / 2, y);
    printf("%f %f\\n", y[3], x[5]);
    return 0;
}
"""


@pytest.fixture(scope="module")
def offloaded(tmp_path_factory) -> tuple[Program, str]:  # type: ignore[no-untyped-def]
    path = tmp_path_factory.mktemp("rt") / "input.c"
    path.write_text(REFERENCE)
    program = analyze(str(path))
    outcome = Offload().apply_rule(Variant(program.source), Context(program))
    assert outcome.variant is not None, outcome.reason
    return program, outcome.variant.code


def test_the_sizes_are_those_every_call_passes(offloaded) -> None:  # type: ignore[no-untyped-def]
    _, code = offloaded
    assert parameter_values(code, "saxpy") == {"n": 1 << 20}
    assert parameter_values(code, "scale") == {}  # n and n / 2: no one value
    assert parameter_values(code, "no_such_function") == {}


def test_one_call_at_the_program_sizes(offloaded) -> None:  # type: ignore[no-untyped-def]
    program, _ = offloaded
    function = program.function("saxpy")
    assert function is not None
    case, why = case_at(function, {"n": 1 << 20}, seed=1, max_elements=1 << 22)
    assert why == "" and case is not None
    arrays = [a for a in case["args"] if a["kind"] == "array"]
    assert [(a["name"], a["length"]) for a in arrays] == [("x", 1 << 20), ("y", 1 << 20)]
    scalars = [a["value"] for a in case["args"] if a["kind"] == "scalar"]
    assert scalars[0] == 1 << 20
    too_big, why = case_at(function, {"n": 1 << 20}, seed=1, max_elements=1 << 20)
    assert too_big is None and "exceed" in why
    unknown, why = case_at(function, {}, seed=1, max_elements=1 << 22)
    assert unknown is None and why == "the value of 'n' is unknown"


def test_an_integer_that_sizes_nothing_is_called_with_the_programs_value(tmp_path: Path) -> None:
    # PolyBench's kernels take their sizes as ints beside arrays of fixed extents
    # (`double C[NI][NJ]`): the harness passes what main passes, whatever the int means
    path = tmp_path / "bump.c"
    path.write_text(
        "void bump(int n, int k, float *x) { for (int i = 0; i < n; i++) x[i] += k * 0.5f; }\n"
        "int main(void) { static float x[64]; bump(64, 3, x); return (int)x[5]; }\n"
    )
    function = analyze(str(path)).function("bump")
    assert function is not None
    unknown, why = case_at(function, {"n": 64}, seed=1, max_elements=1 << 20)
    assert unknown is None and why == "the meaning of integer parameter 'k' is unknown"
    case, why = case_at(function, {"n": 64, "k": 3}, seed=1, max_elements=1 << 20)
    assert why == "" and case is not None
    assert [a.get("value") for a in case["args"] if a["kind"] == "scalar"] == [64, 3]
    assert [a["length"] for a in case["args"] if a["kind"] == "array"] == [64]


def test_the_library_is_built_only_where_the_harness_can_call_it(offloaded, cache: Cache) -> None:  # type: ignore[no-untyped-def]
    program, code = offloaded
    harness = rt.prepare(program, "saxpy", code, arch="sm_80", cache=cache)
    assert not isinstance(harness, str), harness
    assert harness.function == "saxpy" and harness.library.is_file()
    assert harness.restype is None  # void
    assert [a["length"] for a in harness.case["args"] if a["kind"] == "array"] == [1 << 20] * 2
    why = rt.prepare(program, "scale", code, arch="sm_80", cache=cache)
    assert why == "'scale' cannot be called alone: the value of 'n' is unknown"
    assert rt.prepare(program, "main", code, arch="sm_80", cache=cache) == (
        "main is the whole program"
    )


HARNESS = rt.Harness("saxpy", Path("lib.so"), None, {"args": []})


def _sample(region: float, calls: int) -> Sample:
    return Sample(RunResult("", 0, None, False, False, 0.2), region, calls, 0.1)


@pytest.mark.parametrize(
    ("measured", "used"),
    [
        (0.012, True),  # 0.003 + 9 x 0.001 read by the harness: the same
        (0.020, True),  # within a factor of two
        (0.030, False),  # the run read 2.5x more: synthetic inputs run differently
        (0.004, False),  # 3x less
    ],
)
def test_the_harness_is_trusted_where_it_agrees_with_the_program(  # type: ignore[no-untyped-def]
    offloaded, cache: Cache, monkeypatch, measured: float, used: bool
) -> None:
    program, code = offloaded
    timed = rt.RegionTime(host=0.001, device=0.0009, first=0.003, calls=25)
    monkeypatch.setattr(evaluate_mod, "time_region", lambda *a, **k: timed)
    evaluator = Evaluator(program, Config(), cache=cache, run_on_gpu=True)
    variant = Variant(code=code, offloaded=("saxpy",))
    found = evaluator._time_alone(variant, HARNESS, _sample(measured, 10))
    assert (found == timed) is used


def test_a_harness_that_cannot_time_leaves_the_program_runs(  # type: ignore[no-untyped-def]
    offloaded, cache: Cache, monkeypatch
) -> None:
    program, code = offloaded
    monkeypatch.setattr(evaluate_mod, "time_region", lambda *a, **k: "no GPU for pycuda")
    evaluator = Evaluator(program, Config(), cache=cache, run_on_gpu=True)
    variant = Variant(code=code, offloaded=("saxpy",))
    assert evaluator._time_alone(variant, HARNESS, _sample(0.01, 4)) is None
    assert evaluator._time_alone(variant, HARNESS, _sample(0.01, 0)) is None


def _built_in(seconds: float) -> Future[rt.Harness | str]:
    """A library build, as prefetch_harness starts one, that finishes `seconds` from now."""
    build: Future[rt.Harness | str] = Future()
    timer = threading.Timer(seconds, build.set_result, [HARNESS])
    timer.daemon = True
    timer.start()
    return build


# a finalist of a 0.3 s program whose library took 2 s to build: two more runs (0.6 s)
# save less than building it here would take, so only the build started ahead can be used
SHORT = Evaluation(Stage.CORRECT, ran_on_gpu=True, timing=Timing(wall=0.3), compile_seconds=2.0)


@pytest.mark.parametrize(
    ("budget", "used"),
    [
        (None, True),  # no time limit: waited for
        (30.0, True),  # the 0.4 s build fits in what the budget leaves
        (0.5, False),  # the budget leaves 0.5 s, the runs need 0.9: not waited for
    ],
)
def test_a_library_built_ahead_is_waited_for_while_the_budget_allows(  # type: ignore[no-untyped-def]
    offloaded, cache: Cache, budget: float | None, used: bool
) -> None:
    program, code = offloaded
    evaluator = Evaluator(program, Config(), cache=cache, run_on_gpu=True)
    evaluator.deadline = Deadline(budget)
    variant = Variant(code=code, offloaded=("saxpy",))
    evaluator._harness_builds[variant.key] = _built_in(0.4)
    found = evaluator._harness_ready(variant, ("saxpy",), SHORT, runs=3)
    assert (found is HARNESS) is used


def test_a_failed_build_ahead_leaves_the_program_runs(offloaded, cache: Cache) -> None:  # type: ignore[no-untyped-def]
    program, code = offloaded
    evaluator = Evaluator(program, Config(), cache=cache, run_on_gpu=True)
    variant = Variant(code=code, offloaded=("saxpy",))
    failed: Future[rt.Harness | str] = Future()
    failed.set_exception(RuntimeError("nvcc crashed"))
    evaluator._harness_builds[variant.key] = failed
    assert evaluator._harness_ready(variant, ("saxpy",), SHORT, runs=3) is None


def _closed(offloaded: tuple[Program, str], cache: Cache) -> tuple[Evaluator, Variant]:
    """An evaluator on a GPU as `finish` gets it (the search's compiles ahead closed), and
    the offloaded saxpy."""
    program, code = offloaded
    evaluator = Evaluator(program, Config(compile_jobs=2), cache=cache, run_on_gpu=True)
    evaluator.close()
    return evaluator, Variant(code=code, offloaded=("saxpy",))


def test_the_finalists_libraries_are_built_after_the_search_closed(  # type: ignore[no-untyped-def]
    offloaded, cache: Cache
) -> None:
    # the pipeline closes the evaluator (its compiles ahead stop) before `finish` asks for
    # the finalists' libraries; they were never built, so no finalist was timed alone
    evaluator, variant = _closed(offloaded, cache)
    evaluator.prefetch_harness([variant])
    built = evaluator._harness_builds[variant.key].result(timeout=120)
    assert isinstance(built, rt.Harness), built
    assert built.function == "saxpy" and built.library.is_file()


def test_a_library_built_ahead_ends_with_the_time_budget(  # type: ignore[no-untyped-def]
    offloaded, cache: Cache, monkeypatch
) -> None:
    """The budget is a hard limit: a finalist's library build gets what is left of it as
    nvcc's limit, and none starts once it has passed (a build no finalist waits for would
    otherwise keep the command past its deadline)."""
    program, code = offloaded
    limits: list[float] = []

    def build(*args, timeout: float, **kwargs):  # type: ignore[no-untyped-def]
        limits.append(timeout)
        return HARNESS

    monkeypatch.setattr(evaluate_mod, "prepare", build)
    variant = Variant(code=code, offloaded=("saxpy",))
    evaluator = Evaluator(program, Config(compile_jobs=2), cache=cache, run_on_gpu=True)
    evaluator.deadline = Deadline(10.0)
    evaluator.prefetch_harness([variant])
    assert evaluator._harness_builds[variant.key].result(timeout=10) is HARNESS
    assert len(limits) == 1 and 9.0 < limits[0] <= 10.0
    spent = Evaluator(program, Config(compile_jobs=2), cache=cache, run_on_gpu=True)
    spent.deadline = Deadline(0.001)
    time.sleep(0.01)
    spent.prefetch_harness([variant])
    assert spent._harness_builds == {} and len(limits) == 1


def test_the_finalists_plain_builds_are_made_ahead_for_the_turns(  # type: ignore[no-untyped-def]
    offloaded, cache: Cache, monkeypatch
) -> None:
    """prefetch_plain builds a finalist's plain program (no timing runtime) with nvcc on
    another core, after the search's compiles ahead were closed; the close call's turns
    take that build (`_plain_build`) instead of compiling again; a variant not prefetched
    is built there and then. Without a GPU nothing is started."""
    evaluator, variant = _closed(offloaded, cache)
    evaluator.prefetch_plain([variant])
    built = evaluator._plain_builds[variant.key].result(timeout=120)
    assert built.ok and built.binary is not None and Path(built.binary).is_file()
    assert (
        "cudaify_timing"
        not in subprocess.run(
            ["nm", "-C", str(built.binary)], capture_output=True, text=True, check=True
        ).stdout
    )  # plain: no timing runtime linked in
    compiled: list[bool] = []
    monkeypatch.setattr(
        evaluator, "_compile_candidate", lambda code, timed, cancel=None: compiled.append(timed)
    )
    assert evaluator._plain_build(variant) is built and compiled == []
    assert evaluator._plain_build(variant) is None and compiled == [False]  # not ahead: now
    idle = Evaluator(offloaded[0], Config(compile_jobs=2), cache=cache, run_on_gpu=False)
    idle.prefetch_plain([variant])
    assert idle._plain_builds == {}


def test_only_a_one_function_region_is_timed_alone(offloaded, cache: Cache) -> None:  # type: ignore[no-untyped-def]
    program, code = offloaded
    evaluator = Evaluator(program, Config(), cache=cache, run_on_gpu=True)
    variant = Variant(code=code, offloaded=("saxpy", "scale"))
    assert evaluator._one_function(variant, ("saxpy",)) == "saxpy"
    assert evaluator._one_function(variant, ("saxpy", "scale")) is None
    assert evaluator._one_function(variant, ()) is None


# -- on a GPU ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gpu_cache(tmp_path_factory) -> Cache:  # type: ignore[no-untyped-def]
    return Cache(tmp_path_factory.mktemp("gpu-cache"))


def _need_gpu() -> None:
    if not gpu_available() or not kd.pycuda_available():
        pytest.skip("region timing needs an NVIDIA GPU and pycuda")


@pytest.mark.gpu
def test_the_harness_times_the_function_alone(offloaded, gpu_cache: Cache) -> None:  # type: ignore[no-untyped-def]
    _need_gpu()
    from cudaify.backend.gpu import default_arch

    program, code = offloaded
    harness = rt.prepare(program, "saxpy", code, arch=default_arch(), cache=gpu_cache)
    assert isinstance(harness, rt.Harness), harness
    timed = rt.time_region(harness)
    assert isinstance(timed, rt.RegionTime), timed
    assert timed.calls >= 3
    # 8 MiB in, 4 MiB out over PCIe: above 0.1 ms, under 100 ms per call
    assert 1e-4 < timed.host < 0.1
    assert 0 < timed.device <= timed.host * 1.2
    assert timed.first >= timed.host * 0.5


@pytest.mark.gpu
def test_a_finalist_region_comes_from_the_harness(offloaded, gpu_cache: Cache) -> None:  # type: ignore[no-untyped-def]
    _need_gpu()
    program, code = offloaded
    evaluator = Evaluator(program, Config(compile_jobs=2), cache=gpu_cache)
    variant = Variant(code=code, offloaded=("saxpy",))
    screened = evaluator.screen(variant)
    assert screened.verified, screened.why
    # a 0.3 s program: a second run costs less than building the library; so only a
    # library built ahead (the finalists') is used
    plain = evaluator.remeasure(variant, screened, detail=False)
    assert plain.verified and plain.timing.harness_calls == 0
    evaluator.prefetch_harness([variant])
    evaluator._harness_builds[variant.key].result()
    final = evaluator.remeasure(variant, screened, detail=False)
    assert final.verified
    timing = final.timing
    assert timing.harness_calls >= 3, "the region was timed in the program's runs"
    assert timing.runs == 1  # the second correctness run only: no more whole-program runs
    assert timing.region is not None and screened.timing.region is not None
    # REPS calls at the steady rate: within the program's own reading, give or take (its
    # one call pays first-call costs: 0.18 was read on an H100 with 4 test workers on it)
    ratio = timing.region / screened.timing.region
    assert 0.1 < ratio < 2.5
    assert dataclasses.asdict(timing)["harness_calls"] == timing.harness_calls
    assert Path(program.path).exists()


def _verified(wall: float, compile_seconds: float) -> Evaluation:
    return Evaluation(
        Stage.CORRECT,
        ran_on_gpu=True,
        timing=Timing(wall=wall, region=wall / 2, runs=1),
        compile_seconds=compile_seconds,
    )


def test_the_library_is_built_for_a_finalist_only_where_it_saves_time(  # type: ignore[no-untyped-def]
    offloaded, cache: Cache, monkeypatch
) -> None:
    program, code = offloaded
    built: list[str] = []

    def prepare(program, name, code, **_):  # type: ignore[no-untyped-def]
        built.append(name)
        return HARNESS

    monkeypatch.setattr(evaluate_mod, "prepare", prepare)
    monkeypatch.setattr(evaluate_mod, "compile_jobs", lambda config: 2)  # whatever the load
    evaluator = Evaluator(program, Config(), cache=cache, run_on_gpu=True)
    variant = Variant(code=code, offloaded=("saxpy",))
    # 4 more runs of 0.3 s save 1.2 s: less than a 2 s build and the harness
    assert evaluator._harness_ready(variant, ("saxpy",), _verified(0.3, 2.0), runs=5) is None
    assert built == []
    # 4 more runs of 2 s: worth it
    assert evaluator._harness_ready(variant, ("saxpy",), _verified(2.0, 2.0), runs=5) == HARNESS
    assert built == ["saxpy"]
    # built ahead for the finalists: used whatever it saves
    evaluator.prefetch_harness([variant])
    evaluator._harness_builds[variant.key].result()
    assert evaluator._harness_ready(variant, ("saxpy",), _verified(0.3, 2.0), runs=1) == HARNESS
    assert evaluator._harness_ready(variant, ("saxpy", "scale"), _verified(9, 0), runs=5) is None
