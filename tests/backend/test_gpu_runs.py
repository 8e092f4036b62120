"""The real thing: CUDA candidates run on the GPU. Skipped loudly where none is found."""

from __future__ import annotations

from pathlib import Path

import pytest

from cudaify.backend.cache import Cache
from cudaify.backend.evaluate import Evaluator
from cudaify.core import Stage, Variant
from cudaify.core.config import Config
from cudaify.frontend.facts import Program

pytestmark = pytest.mark.gpu

REFERENCE = """#include <stdio.h>
#include <stdlib.h>
void saxpy(int n, float a, const float *x, float *y) {
    for (int i = 0; i < n; i++) y[i] = a * x[i] + y[i];
}
int main(void) {
    int n = 1 << 24;
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    for (int i = 0; i < n; i++) { x[i] = (i % 100) * 0.01f; y[i] = 1.0f; }
    for (int r = 0; r < 10; r++) saxpy(n, 0.5f, x, y);
    double s = 0;
    for (int i = 0; i < n; i++) s += y[i];
    printf("checksum %.6e\\n", s);
    free(x); free(y);
    return 0;
}
"""

CANDIDATE = """#include <stdio.h>
#include <stdlib.h>
__global__ void saxpy_kernel(int n, float a, const float *x, float *y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
void saxpy(int n, float a, const float *x, float *y) {
    float *dx, *dy;
    cudaMalloc(&dx, n * sizeof(float));
    cudaMalloc(&dy, n * sizeof(float));
    cudaMemcpy(dx, x, n * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(dy, y, n * sizeof(float), cudaMemcpyHostToDevice);
    saxpy_kernel<<<(n + 255) / 256, 256>>>(n, a, dx, dy);
    cudaMemcpy(y, dy, n * sizeof(float), cudaMemcpyDeviceToHost);
    cudaFree(dx);
    cudaFree(dy);
}
int main(void) {
    int n = 1 << 24;
    float *x = (float *)malloc(n * sizeof *x), *y = (float *)malloc(n * sizeof *y);
    for (int i = 0; i < n; i++) { x[i] = (i % 100) * 0.01f; y[i] = 1.0f; }
    for (int r = 0; r < 10; r++) saxpy(n, 0.5f, x, y);
    double s = 0;
    for (int i = 0; i < n; i++) s += y[i];
    printf("checksum %.6e\\n", s);
    free(x); free(y);
    return 0;
}
"""


def _evaluator(tmp_path: Path) -> Evaluator:
    path = tmp_path / "saxpy.c"
    path.write_text(REFERENCE)
    program = Program(path=str(path), source=REFERENCE, language="c")
    return Evaluator(program, Config(runs=5), cache=Cache(tmp_path / "cache"))


def test_cuda_candidate_is_verified_and_timed_on_the_gpu(tmp_path: Path) -> None:
    evaluator = _evaluator(tmp_path)
    assert evaluator.run_on_gpu
    result = evaluator.evaluate(Variant(code=CANDIDATE, offloaded=("saxpy",)))
    assert result.stage == Stage.CORRECT, result.problems
    assert result.ran_on_gpu
    assert result.timing.region is not None and result.timing.region > 0
    assert result.timing.context is not None and result.timing.context > 0
    assert result.reference.region is not None and result.reference.region > 0
    kernel = result.timing.kernel
    assert kernel is not None and 0 < kernel < result.timing.region
    # 10 calls, each copying x and y in and y back: 3 arrays of 2^24 floats.
    assert result.timing.transfer_bytes == 10 * 3 * (1 << 24) * 4
    transfer = result.timing.transfer
    # kernel and copy times come from one event-timed run: compare them with its region
    profiled = result.timing.profiled_region
    assert transfer is not None and profiled is not None and 0 < transfer < profiled
    # saxpy reads x and y and writes y: the copies' bytes are the kernel's bytes.
    roofline = result.timing.roofline_percent
    assert roofline is not None and 5 < roofline < 150, roofline
    # per kernel: the one kernel, named from its mangled name, launched once per call,
    # 2 loads and a store of 4 bytes and 2 FLOPs per element, under the memory roof
    (saxpy,) = result.timing.kernels
    assert saxpy.name == "saxpy_kernel" and saxpy.launches == 10, saxpy
    assert saxpy.bytes == 10 * 12 * (1 << 24) and saxpy.flops == 10 * 2 * (1 << 24)
    assert saxpy.seconds == pytest.approx(kernel, rel=1e-3)
    assert saxpy.bound == "memory" and result.timing.bound == "memory"
    assert saxpy.percent is not None and 20 < saxpy.percent < 130, saxpy
    print(
        f"\nsaxpy: reference region {result.reference.region:.4f} s wall "
        f"{result.reference.wall:.4f} s; GPU region {result.timing.region:.4f} s wall "
        f"{result.timing.wall:.4f} s context {result.timing.context:.4f} s "
        f"kernels {kernel:.4f} s transfers {transfer:.4f} s ({roofline:.0f} % of roofline); "
        f"region speedup {result.region_speedup:.2f}x; compile {result.compile_seconds:.2f} s"
    )


def test_a_written_program_s_kernels_are_timed_apart_from_its_compile(tmp_path: Path) -> None:
    """What `cudaify bench` measures for a written variant whose search left no time for
    its kernel timing: one event-timed run, the kernels placed under the roofline."""
    timing = _evaluator(tmp_path).kernel_roofline(Variant(code=CANDIDATE, offloaded=("saxpy",)))
    assert timing is not None
    (saxpy,) = timing.kernels
    assert saxpy.name == "saxpy_kernel" and saxpy.launches == 10, saxpy
    assert saxpy.bytes == 10 * 12 * (1 << 24) and saxpy.bound == "memory"
    assert timing.roofline_percent is not None and 20 < timing.roofline_percent < 130
    # a program that fails its run has no such figures
    wild = CANDIDATE.replace("if (i < n) y[i] = a * x[i] + y[i];", "y[i * 4096] = a * x[i];")
    assert _evaluator(tmp_path).kernel_roofline(Variant(code=wild, offloaded=("saxpy",))) is None


def test_wrong_kernel_is_caught_on_the_gpu(tmp_path: Path) -> None:
    wrong = CANDIDATE.replace("if (i < n) y[i]", "if (i < n / 2) y[i]")
    result = _evaluator(tmp_path).evaluate(Variant(code=wrong, offloaded=("saxpy",)))
    assert result.stage == Stage.RUN
    assert result.problems[0].kind == "output"


def test_out_of_bounds_kernel_never_crashes_cudaify(tmp_path: Path) -> None:
    wild = CANDIDATE.replace("if (i < n) y[i] = a * x[i] + y[i];", "y[i * 4096] = a * x[i];")
    result = _evaluator(tmp_path).evaluate(Variant(code=wild, offloaded=("saxpy",)))
    assert result.stage in (Stage.COMPILE, Stage.RUN)
    assert result.problems


def _analyzed_evaluator(tmp_path: Path) -> Evaluator:
    from cudaify.frontend.analyze import analyze

    path = tmp_path / "saxpy.c"
    path.write_text(REFERENCE)
    config = Config(runs=3)
    return Evaluator(analyze(str(path)), config, cache=Cache(tmp_path / "cache"), differential=True)


def test_differential_test_passes_a_correct_kernel(tmp_path: Path) -> None:
    result = _analyzed_evaluator(tmp_path).evaluate(Variant(code=CANDIDATE, offloaded=("saxpy",)))
    assert result.stage == Stage.CORRECT, result.problems


def test_differential_test_catches_what_the_programs_input_hides(tmp_path: Path) -> None:
    # n = 2^24 is a multiple of 256, so the program's own output is right; n = 1 is not.
    short_grid = CANDIDATE.replace("<<<(n + 255) / 256, 256>>>", "<<<n / 256, 256>>>")
    result = _analyzed_evaluator(tmp_path).evaluate(Variant(code=short_grid, offloaded=("saxpy",)))
    assert result.stage == Stage.RUN
    assert result.problems[0].kind == "differential"
    assert result.problems[0].message.startswith("saxpy(n=1): y[0] is")


def test_ncu_counters_are_recorded_where_ncu_works(tmp_path: Path) -> None:
    from cudaify.backend.profile import find_ncu

    if find_ncu() is None:
        pytest.skip("ncu (Nsight Compute) is not installed on this GPU machine")
    path = tmp_path / "saxpy.c"
    path.write_text(REFERENCE)
    program = Program(path=str(path), source=REFERENCE, language="c")
    evaluator = Evaluator(program, Config(runs=1), cache=Cache(tmp_path / "cache"), profile=True)
    result = evaluator.evaluate(Variant(code=CANDIDATE, offloaded=("saxpy",)))
    assert result.stage == Stage.CORRECT, result.problems
    hardware = dict(result.hardware)
    print(f"\nncu: {hardware}")
    assert hardware, "ncu ran but reported nothing (counters not permitted?)"
    assert hardware["kernels_profiled"] == 10
    assert 0 < hardware["dram_throughput_pct"] <= 100
    assert 0 < hardware["warp_efficiency_pct"] <= 100


def test_a_kernel_whose_size_changes_between_calls_is_counted_from_its_launches(
    tmp_path: Path,
) -> None:
    """Each call passes another n (`saxpy(n - r, ...)`): the text gives no one size, so
    the kernel's work comes from the values the event-timed run recorded at its launches:
    n, the block shape, and for the pointers the bytes to their allocations' ends."""
    varying = "for (int r = 0; r < 10; r++) saxpy(n - r, 0.5f, x, y);"
    reference = REFERENCE.replace("for (int r = 0; r < 10; r++) saxpy(n, 0.5f, x, y);", varying)
    candidate = CANDIDATE.replace("for (int r = 0; r < 10; r++) saxpy(n, 0.5f, x, y);", varying)
    assert reference != REFERENCE and candidate != CANDIDATE
    path = tmp_path / "saxpy.c"
    path.write_text(reference)
    program = Program(path=str(path), source=reference, language="c")
    evaluator = Evaluator(program, Config(runs=1), cache=Cache(tmp_path / "cache"))
    timing = evaluator.kernel_roofline(Variant(code=candidate, offloaded=("saxpy",)))
    assert timing is not None
    n = 1 << 24
    recorded = sorted(timing.launches, key=lambda launch: -(launch.values[0] or 0))
    assert [launch.values[0] for launch in recorded] == [n - r for r in range(10)]
    first = recorded[0]
    assert first.count == 1 and first.block == (256, 1, 1)
    # n and a are no pointers; x and y are, each to an allocation of n floats
    assert first.extents == (None, None, 4 * n, 4 * n), first
    (saxpy,) = timing.kernels
    assert saxpy.launches == 10
    assert saxpy.bytes == pytest.approx(sum(12 * (n - r) for r in range(10)))
    assert saxpy.flops == pytest.approx(sum(2 * (n - r) for r in range(10)))
    assert saxpy.bound == "memory" and saxpy.percent is not None and 20 < saxpy.percent < 130
    print(f"\nsaxpy, sizes from its launches: {saxpy.percent:.0f}% of the memory roof")


def test_the_winner_is_timed_in_turns_with_the_reference(tmp_path: Path) -> None:
    """Evaluator.in_turns: the plain builds of the reference and the candidate run in
    turns, the GPU held alone; their medians are whole-program wall times (CUDA's start
    included for the candidate: at least the GPU's context creation). A candidate that
    does not build gives why."""
    evaluator = _evaluator(tmp_path)
    timed = evaluator.in_turns(Variant(code=CANDIDATE, offloaded=("saxpy",)), 3)
    assert not isinstance(timed, str), timed
    cpu, gpu, runs = timed
    assert 0.05 < cpu < 30.0 and 0.05 < gpu < 30.0 and runs == 3
    reading = evaluator.evaluate(Variant(code=CANDIDATE, offloaded=("saxpy",)))
    print(
        f"in turns: reference {cpu:.3f} s, candidate {gpu:.3f} s; evaluate read "
        f"{reading.program_speedup:.2f}x, in turns {cpu / gpu:.2f}x"
    )
    broken = Variant(code=CANDIDATE.replace("cudaMalloc(&dx", "cudaMallok(&dx"))
    assert isinstance(evaluator.in_turns(broken, 3), str)


def test_cudas_fixed_cost_is_measured_on_the_gpu(tmp_path: Path) -> None:
    """The probe that only starts CUDA and exits runs on the GPU alone: its least wall is
    CUDA's whole fixed cost here (at most a few seconds), the timings carry it, and an
    estimate from parts holds the larger of it and the context alone. (Its first form
    also asserted the context at most the probe's wall: on a fresh H200 it was not.)"""
    evaluator = _evaluator(tmp_path)
    evaluator._measure_start()
    start = evaluator._start_alone()
    assert start is not None and 0.02 < start < 5.0
    reading = evaluator.screen(Variant(code=CANDIDATE, offloaded=("saxpy",)))
    assert reading.verified and reading.timing.start_alone == start
    context = reading.timing.context_alone or reading.timing.context or 0.0
    parts = reading.program_from_parts
    assert parts is not None and parts >= max(start, context) + (reading.timing.region or 0.0)
    print(f"\nCUDA's fixed cost alone: {start:.3f} s (its context {context:.3f} s)")
