from __future__ import annotations

from pathlib import Path

import pytest

from cudaify.backend.cache import Cache
from cudaify.backend.compile import compile_cuda, compile_reference
from cudaify.backend.runner import run_binary
from cudaify.backend.timing import (
    CUDA_LINK_FLAGS,
    InstrumentError,
    find_definitions,
    instrument,
    measure,
    runtime_units,
    subset_time,
    timed_run,
)

SLEEPY_C = """#include <stdio.h>
#include <time.h>
/* work sleeps 50 ms per call and returns a value the program prints */
static double work(int n, // element count
                   const double *x) {
    struct timespec pause = {0, 50000000};
    nanosleep(&pause, NULL);
    double s = 0;
    for (int i = 0; i < n; i++) s += x[i];
    return s;
}

void fill(double *x, int n) { for (int i = 0; i < n; i++) x[i] = i + 0.5; }

int main(void) {
    double x[4];
    double total = 0;
    fill(x, 4);
    for (int r = 0; r < 3; r++) total += work(4, x);
    printf("total %.3f\\n", total);
    return 5;
}
"""

RECURSIVE_C = """#include <stdio.h>
long fib(long n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
int main(void) { printf("%ld %ld\\n", fib(20), fib(10)); return 0; }
"""

SLEEPY_CU = """#include <cstdio>
#include <ctime>
#include <vector>
__global__ void scale(float *x, int n) { int i = threadIdx.x; if (i < n) x[i] *= 2; }
template <typename T>
static T work(std::vector<T> &values, T bias = T(1)) {
    timespec pause = {0, 50000000};
    nanosleep(&pause, nullptr);
    T s = bias;
    for (T v : values) s += v;
    return s;
}
void touch(const std::vector<float> &v) { (void)v; }
int main() {
    std::vector<float> v(8, 0.25f);
    float total = 0;
    for (int r = 0; r < 3; r++) total += work(v);
    touch(v);
    std::printf("total %.2f\\n", total);
    return 0;
}
"""


def _timed_reference(source: str, names: list[str], cache: Cache) -> Path:
    code = instrument(source, "c", names).code
    build = compile_reference(code, "c", cache=cache, extra_units=runtime_units(cuda=False))
    assert build.ok, build.diagnostics
    assert build.binary is not None
    return build.binary


def test_region_time_of_three_50ms_calls_is_about_150ms(cache: Cache) -> None:
    binary = _timed_reference(SLEEPY_C, ["work"], cache)
    sample = timed_run(binary, timeout=10, cuda=False)
    assert sample.calls == 3
    assert sample.region is not None and 0.145 <= sample.region <= 0.3
    assert sample.run.seconds >= sample.region


def test_only_the_kernel_timing_run_loads_cuda_modules_eagerly(monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Lazy loading puts a kernel's load inside its first launch's events: the run that
    times kernels loads them with the context; the measured runs keep CUDA's default."""
    from cudaify.backend import timing

    seen: list[dict[str, str]] = []

    def fake_run(binary, *, timeout, cuda, env, cancel):  # type: ignore[no-untyped-def]
        seen.append(dict(env))
        return run_binary(Path("/bin/true"), timeout=5)

    monkeypatch.setattr(timing, "run_binary", fake_run)
    timed_run(tmp_path / "program", timeout=5, cuda=True, kernels=True)
    timed_run(tmp_path / "program", timeout=5, cuda=True)
    assert seen[0]["CUDA_MODULE_LOADING"] == "EAGER" and seen[0]["CUDAIFY_KERNEL_TIMING"] == "1"
    assert "CUDA_MODULE_LOADING" not in seen[1] and "CUDAIFY_KERNEL_TIMING" not in seen[1]


def test_wrapper_preserves_return_values_output_and_exit_code(cache: Cache) -> None:
    plain = compile_reference(SLEEPY_C, "c", cache=cache)
    timed = _timed_reference(SLEEPY_C, ["work", "fill"], cache)
    expected = run_binary(plain.binary, timeout=10)  # type: ignore[arg-type]
    got = run_binary(timed, timeout=10)
    assert got.stdout == expected.stdout == "total 24.000\n"
    assert got.exit_code == expected.exit_code == 5


def test_nested_and_recursive_calls_are_counted_once(cache: Cache) -> None:
    binary = _timed_reference(RECURSIVE_C, ["fib"], cache)
    sample = timed_run(binary, timeout=10, cuda=False)
    assert sample.run.stdout == "6765 55\n"
    assert sample.calls == 2  # the two calls from main, not the ~22000 recursive ones


NESTED_C = """#include <stdio.h>
#include <time.h>
static void nap(long ms) { struct timespec t = {0, ms * 1000000L}; nanosleep(&t, NULL); }
/* inner: 30 ms; outer: 20 ms of its own around one inner call; rec recurses 3 deep */
void inner(void) { nap(30); }
void outer(void) { nap(20); inner(); }
int rec(int n) { nap(10); return n ? rec(n - 1) + 1 : 0; }
int main(void) {
    outer();           /* outer 50 ms, of which inner 30 */
    inner();           /* inner alone 30 ms */
    outer();
    printf("%d\\n", rec(3)); /* rec 40 ms, entered once from outside */
    return 0;
}
"""


def _per_function(source: str, names: list[str], language: str, cache: Cache) -> Path:
    code = instrument(source, language, names, per_function=True).code
    build = compile_reference(code, language, cache=cache, extra_units=runtime_units(cuda=False))
    assert build.ok, build.diagnostics
    assert build.binary is not None
    return build.binary


@pytest.mark.parametrize("language", ["c", "c++"])
def test_one_run_times_every_subset_of_the_functions(cache: Cache, language: str) -> None:
    names = ["outer", "inner", "rec"]
    sample = timed_run(_per_function(NESTED_C, names, language, cache), timeout=10, cuda=False)
    assert sample.run.stdout == "3\n"

    def subset(*chosen: str) -> tuple[float, int]:
        return subset_time(sample.sets, sample.entries, [names.index(n) for n in chosen])

    expected = {  # (milliseconds, outermost calls)
        ("outer",): (100, 2),
        ("inner",): (90, 3),  # twice inside outer, once alone
        ("outer", "inner"): (130, 3),
        ("rec",): (40, 1),  # the recursive calls are inside the first
        ("outer", "inner", "rec"): (170, 4),
    }
    for chosen, (ms, calls) in expected.items():
        seconds, counted = subset(*chosen)
        assert counted == calls, chosen
        assert ms / 1000 <= seconds <= ms / 1000 + 0.06, (chosen, seconds)
    # the union of them all is the region the build's plain counter measured
    assert subset(*names)[0] == pytest.approx(sample.region, abs=1e-3)
    assert sample.calls == 4


def test_a_plain_timing_build_reports_no_sets(cache: Cache) -> None:
    sample = timed_run(
        _timed_reference(NESTED_C, ["outer", "inner"], cache), timeout=10, cuda=False
    )
    assert sample.sets == () and sample.entries == () and sample.calls == 3


def test_measure_reports_medians_over_the_requested_runs(cache: Cache) -> None:
    binary = _timed_reference(SLEEPY_C, ["work"], cache)
    timing, problem = measure(binary, runs=5, timeout=10, cuda=False, expected_exit=5)
    assert problem is None
    assert timing.runs == 5
    assert timing.region is not None and 0.145 <= timing.region <= 0.3
    assert timing.wall is not None and timing.wall >= timing.region
    assert timing.context is None


def test_measure_stops_on_an_unexpected_exit_code(cache: Cache) -> None:
    binary = _timed_reference(SLEEPY_C, ["work"], cache)
    timing, problem = measure(binary, runs=5, timeout=10, cuda=False, expected_exit=0)
    assert problem is not None and problem.kind == "exit_code"
    assert timing.runs == 0


def test_line_numbers_survive_instrumentation(cache: Cache) -> None:
    broken = SLEEPY_C.replace('printf("total', 'undefined_call(); printf("total')
    code = instrument(broken, "c", ["work", "fill"]).code
    build = compile_reference(code, "c", cache=cache, name="prog.c")
    line = 1 + broken.splitlines().index(
        next(text for text in broken.splitlines() if "undefined_call" in text)
    )
    assert f"prog.c:{line}:" in build.diagnostics


def test_cuda_timing_build_compiles_and_runs_host_code(cache: Cache) -> None:
    code = instrument(SLEEPY_CU, "cuda", ["work", "touch"]).code
    build = compile_cuda(
        code,
        (),
        "sm_80",
        cache=cache,
        extra_units=runtime_units(cuda=True),
        link_flags=CUDA_LINK_FLAGS,
    )
    assert build.ok, build.diagnostics
    sample = timed_run(build.binary, timeout=30, cuda=True)  # type: ignore[arg-type]
    assert sample.run.stdout == "total 9.00\n"
    assert sample.calls == 4
    assert sample.region is not None and 0.145 <= sample.region <= 0.4
    assert sample.context is not None and sample.context >= 0.0
    assert sample.kernel is None  # kernels are timed only when asked
    # This program launches no kernel: a kernel-timing run reports zero kernel time.
    counted = timed_run(build.binary, timeout=30, cuda=True, kernels=True)  # type: ignore[arg-type]
    assert counted.kernel == 0.0 and counted.run.stdout == sample.run.stdout


COPYING_CU = """#include <cstdio>
#include <cuda_runtime.h>
static char from[1000], to[1000];
/* The copies are counted whether or not a GPU takes them (none needed here). */
void copy_twice(int n) {
    cudaMemcpy(to, from, n, cudaMemcpyHostToHost);
    cudaMemcpyAsync(to, from, n / 2, cudaMemcpyHostToHost, 0);
}
int main() {
    cudaMemcpy(to, from, 999, cudaMemcpyHostToHost); /* outside the region: not counted */
    for (int r = 0; r < 3; r++) copy_twice(100);
    std::printf("done\\n");
    return 0;
}
"""


def test_copies_inside_the_region_are_counted_and_timed(cache: Cache) -> None:
    code = instrument(COPYING_CU, "cuda", ["copy_twice"]).code
    build = compile_cuda(
        code,
        (),
        "sm_80",
        cache=cache,
        extra_units=runtime_units(cuda=True),
        link_flags=CUDA_LINK_FLAGS,
    )
    assert build.ok, build.diagnostics
    plain = timed_run(build.binary, timeout=30, cuda=True)  # type: ignore[arg-type]
    assert plain.run.stdout == "done\n" and plain.calls == 3
    assert plain.transfer is None and plain.transfer_bytes is None  # only when asked
    counted = timed_run(build.binary, timeout=30, cuda=True, kernels=True)  # type: ignore[arg-type]
    assert counted.transfer_bytes == 3 * (100 + 50)
    assert counted.transfer is not None and counted.transfer >= 0.0
    timing, problem = measure(build.binary, runs=1, timeout=30, cuda=True, kernels=True)  # type: ignore[arg-type]
    assert problem is None and timing.transfer_bytes == 450 and timing.kernel == 0.0


def test_device_functions_are_not_wrapped() -> None:
    found = find_definitions(SLEEPY_CU.encode(), "cuda", ["scale", "work"])
    assert [d.name for d in found] == ["work"]
    assert found[0].params == ("values", "bias")
    assert SLEEPY_CU.encode()[found[0].start :].startswith(b"template")


def test_missing_function_is_an_error() -> None:
    with pytest.raises(InstrumentError, match="'nowhere'"):
        instrument(SLEEPY_C, "c", ["work", "nowhere"])


def test_variadic_function_cannot_be_wrapped() -> None:
    source = "#include <stdarg.h>\nint sum(int n, ...) { return n; }\nint main(void){return 0;}\n"
    with pytest.raises(InstrumentError, match="variadic"):
        instrument(source, "c", ["sum"])


def test_void_parameter_list_and_function_pointer_parameters(cache: Cache) -> None:
    source = """#include <stdio.h>
static int counter;
void bump(void) { counter++; }
double apply(double (*f)(double), double v) { return f(v); }
static double twice(double v) { return 2 * v; }
int main(void) { bump(); bump(); printf("%d %.1f\\n", counter, apply(twice, 1.5)); return 0; }
"""
    code = instrument(source, "c", ["bump", "apply"]).code
    build = compile_reference(code, "c", cache=cache, extra_units=runtime_units(cuda=False))
    assert build.ok, build.diagnostics
    sample = timed_run(build.binary, timeout=10, cuda=False)  # type: ignore[arg-type]
    assert sample.run.stdout == "2 3.0\n"
    assert sample.calls == 3


def test_more_functions_than_bits_are_timed_together_not_apart(cache: Cache) -> None:
    names = [f"f{k}" for k in range(65)]
    source = "".join(f"void {n}(int *x) {{ x[0] += 1; }}\n" for n in names)
    source += "int main(void) { int x = 0; " + " ".join(f"{n}(&x);" for n in names)
    source += " return x == 65 ? 0 : 1; }\n"
    with pytest.raises(InstrumentError, match="one by one"):
        instrument(source, "c", names, per_function=True)
    binary = _timed_reference(source, names, cache)  # the union still works
    sample = timed_run(binary, timeout=10, cuda=False)
    assert sample.run.exit_code == 0 and sample.calls == 65 and sample.sets == ()


def _sample(seconds: float):  # type: ignore[no-untyped-def]
    from cudaify.backend.runner import RunResult
    from cudaify.backend.timing import Sample

    return Sample(RunResult("out\n", 0, None, False, False, seconds), None, 0, None)


@pytest.mark.parametrize(
    ("walls", "taken"),
    [
        # 1.1 then 1.2, 1.3: with 5 runs the median is the third fastest; two runs to come
        # at no time at all leave it at 1.1, over the 1.0 to beat: no more runs
        ((1.2, 1.3, 0.5, 0.5), 3),
        ((0.9, 0.9, 0.9, 0.9), 5),  # could still win at every step: all five runs
        ((1.2, 0.5, 0.5, 0.5), 5),  # 1.1, 1.2 then faster runs: the median can still win
    ],
)
def test_runs_stop_once_their_best_reachable_median_cannot_win(
    monkeypatch: pytest.MonkeyPatch, walls: tuple[float, ...], taken: int
) -> None:
    from cudaify.backend import timing as timing_mod

    pending = [_sample(seconds) for seconds in walls]
    monkeypatch.setattr(timing_mod, "_checked_run", lambda *args, **kwargs: (pending.pop(0), None))
    medians: list[float | None] = []

    def hopeless(best) -> bool:  # type: ignore[no-untyped-def]
        medians.append(best.wall)
        return best.wall is not None and best.wall >= 1.0

    timing, problem = measure(
        Path("unused"),
        runs=5,
        timeout=10,
        cuda=True,
        warm_up=False,
        first=_sample(1.1),
        hopeless=hopeless,
    )
    assert problem is None and timing.runs == taken
    assert medians[0] == 0.0  # after one sample, four instant runs could still win
    if taken == 3:
        assert timing.wall == 1.2 and medians == [0.0, 0.0, 1.1]


# 20 launches of a kernel of a few microseconds, each after 2 ms of host sleep (the GPU
# idle): the kernel's own span (globaltimer, from the first block's start to the last
# block's end) is written per launch and the program prints their sum
GATED_CU = r"""#include <cstdio>
#include <unistd.h>
#include <cuda_runtime.h>
#define N (1 << 22)
#define LAUNCHES 20
__global__ void add_one(float *x, long long n, unsigned long long *spans) {
    unsigned long long begin, end;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(begin));
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)blockDim.x * gridDim.x)
        x[i] += 1.0f;
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(end));
        atomicMin(&spans[0], begin);
        atomicMax(&spans[1], end);
    }
}
static float *x;
static unsigned long long *spans;
void step(int launch) {
    add_one<<<1024, 256>>>(x, N, spans + 2 * launch);
    cudaDeviceSynchronize();
}
int main() {
    static unsigned long long host[2 * LAUNCHES];
    for (int k = 0; k < LAUNCHES; k++) { host[2 * k] = ~0ull; host[2 * k + 1] = 0ull; }
    cudaMalloc(&x, N * sizeof(float));
    cudaMemset(x, 0, N * sizeof(float));
    cudaMalloc(&spans, sizeof host);
    cudaMemcpy(spans, host, sizeof host, cudaMemcpyHostToDevice);
    for (int k = 0; k < LAUNCHES; k++) {
        usleep(2000);
        step(k);
    }
    cudaMemcpy(host, spans, sizeof host, cudaMemcpyDeviceToHost);
    unsigned long long own = 0;
    for (int k = 0; k < LAUNCHES; k++) own += host[2 * k + 1] - host[2 * k];
    std::printf("%.9f\n", own * 1e-9);
    return 0;
}
"""


@pytest.mark.gpu
def test_a_kernel_after_the_gpu_idled_is_timed_without_its_launch_call(cache: Cache) -> None:
    """Each kernel's events wait behind a gate until its launch is queued: 20 launches after
    2 ms of host sleep read within 6 us a launch of the kernels' own spans (on an H200:
    176 us against 115, the GPU's own start of a kernel). Before the gate each span also
    held the host's launch call: 374 us against 115."""
    from cudaify.backend import gpu

    code = instrument(GATED_CU, "cuda", ["step"]).code
    build = compile_cuda(
        code,
        (),
        gpu.default_arch(None),
        cache=cache,
        extra_units=runtime_units(cuda=True),
        link_flags=CUDA_LINK_FLAGS,
    )
    assert build.ok, build.diagnostics
    counted = timed_run(build.binary, timeout=60, cuda=True, kernels=True)  # type: ignore[arg-type]
    own = float(counted.run.stdout)
    assert counted.kernel is not None and counted.calls == 20
    print(f"\nevents {counted.kernel * 1e6:.1f} us, the kernels' own spans {own * 1e6:.1f} us")
    assert own <= counted.kernel <= own + 20 * 6e-6
