"""Timing builds of function templates: every instantiation's calls are the region, in
the g++ reference and in the nvcc candidate alike."""

from __future__ import annotations

from pathlib import Path

from cudaify.backend.cache import Cache
from cudaify.backend.compile import compile_cuda, compile_reference
from cudaify.backend.runner import run_binary
from cudaify.backend.timing import (
    CUDA_LINK_FLAGS,
    find_definitions,
    instrument,
    runtime_units,
    timed_run,
)

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"

TEMPLATES_CPP = """#include <array>
#include <cstdio>
#include <ctime>
#include <vector>

static void pause_ms(long ms) {
    timespec pause = {0, ms * 1000000L};
    nanosleep(&pause, nullptr);
}

/* R cannot be deduced from std::array<T, 2 * R + 1>: callers name it */
template <int R, typename T>
T smooth(const std::vector<T> &in, const std::array<T, 2 * R + 1> &w) {
    pause_ms(20);
    T s = 0;
    for (int i = R; i < static_cast<int>(in.size()) - R; i++)
        for (int k = -R; k <= R; k++)
            s += w[k + R] * in[i + k];
    return s;
}

template <>
float smooth<0, float>(const std::vector<float> &in, const std::array<float, 1> &w) {
    pause_ms(20);
    float s = 0;
    for (float v : in)
        s += 2 * w[0] * v;
    return s;
}

template <typename... Ts>
int count_all(Ts &&...values) {
    pause_ms(20);
    return (0 + ... + static_cast<int>(values));
}

template <int N>
long sum_to() {
    if constexpr (N == 0)
        return 0;
    else
        return N + sum_to<N - 1>();
}

int main() {
    std::vector<double> d(64, 0.5);
    std::vector<float> f(64, 0.25f);
    const std::array<double, 5> w2{0.125, 0.25, 0.25, 0.25, 0.125};
    std::array<float, 9> w4{};
    w4.fill(0.5f);
    const std::array<float, 1> w0{1.0f};
    double a = smooth<2>(d, w2);
    float b = smooth<4>(f, w4);
    float c = smooth<0>(f, w0);
    int n = count_all(1, 2.5, 'a');
    long s = sum_to<10>();
    std::printf("%.3f %.3f %.3f %d %ld\\n", a, b, c, n, s);
    return 0;
}
"""
EXPECTED = "30.000 63.000 32.000 100 55\n"


def test_template_definitions_carry_their_explicit_arguments() -> None:
    found = find_definitions(TEMPLATES_CPP.encode(), "c++", ["smooth", "count_all", "sum_to"])
    assert [(d.name, d.template_args) for d in found] == [
        ("smooth", "<R, T>"),
        ("smooth", "<0, float>"),  # the explicit specialization
        ("count_all", "<Ts...>"),
        ("sum_to", "<N>"),
    ]
    assert found[2].params == ("values...",)
    assert found[3].recursive


def test_template_wrapper_calls_the_same_instantiation() -> None:
    code = instrument(TEMPLATES_CPP, "c++", ["smooth", "count_all"]).code
    assert "return cudaify_timed_smooth<R, T>(static_cast<decltype(in)&&>(in), " in code
    assert "float smooth<0, float>(const std::vector<float> &in, " in code
    assert "return cudaify_timed_smooth<0, float>(" in code
    assert (
        "return cudaify_timed_count_all<Ts...>(static_cast<decltype(values)&&>(values)...); }"
        in code
    )


def test_unnamed_and_trailing_template_parameters_are_left_to_deduction() -> None:
    source = (
        "template <typename T, typename = void> T id(T v) { return v; }\n"
        "template <typename... Ts, typename U> U last(U u, Ts... rest) { return u; }\n"
        "template <typename> int zero() { return 0; }\n"
    )
    found = find_definitions(source.encode(), "c++", ["id", "last", "zero"])
    assert [d.template_args for d in found] == ["<T>", "<Ts...>", "<>"]


def test_every_instantiation_is_timed_in_a_gxx_build(cache: Cache) -> None:
    names = ["smooth", "count_all", "sum_to"]
    code = instrument(TEMPLATES_CPP, "c++", names).code
    build = compile_reference(code, "c++", cache=cache, extra_units=runtime_units(cuda=False))
    assert build.ok, build.diagnostics
    plain = compile_reference(TEMPLATES_CPP, "c++", cache=cache)
    assert run_binary(plain.binary, timeout=10).stdout == EXPECTED  # type: ignore[arg-type]
    sample = timed_run(build.binary, timeout=10, cuda=False)  # type: ignore[arg-type]
    assert sample.run.stdout == EXPECTED
    # smooth<2, double>, smooth<4, float>, the specialization, count_all and the outermost
    # sum_to<10> (its recursive instantiations are nested calls)
    assert sample.calls == 5
    assert sample.region is not None and 0.075 <= sample.region <= 0.4


def test_a_benchmark_template_gets_a_region_time(cache: Cache) -> None:
    source = (BENCHMARKS / "cpp" / "template_stencil.cpp").read_text()
    flags = ("-DBENCH_SMALL",)
    code = instrument(source, "c++", ["stencil_step"]).code
    build = compile_reference(
        code, "c++", flags, cache=cache, extra_units=runtime_units(cuda=False)
    )
    assert build.ok, build.diagnostics
    plain = compile_reference(source, "c++", flags, cache=cache)
    expected = run_binary(plain.binary, timeout=30).stdout  # type: ignore[arg-type]
    sample = timed_run(build.binary, timeout=30, cuda=False)  # type: ignore[arg-type]
    assert sample.run.stdout == expected and expected.startswith("radius 2: sum=")
    assert sample.calls == 2 * 10  # kSteps calls for each of the two radii
    assert sample.region is not None and 0 < sample.region <= sample.run.seconds


OFFLOADED_TEMPLATE_CU = """#include <array>
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

template <int R, typename T>
__global__ void smooth_kernel(const T *w, const T *in, T *out, int n) {
    int i = R + blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n - R) {
        T acc = 0;
        for (int k = -R; k <= R; k++)
            acc += w[k + R] * in[i + k];
        out[i] = acc;
    }
}

template <int R, typename T>
void smooth(const std::vector<T> &in, std::vector<T> &out, const std::array<T, 2 * R + 1> &w) {
    const int n = static_cast<int>(in.size());
    T *d_w, *d_in, *d_out;
    cudaMalloc((void **)&d_w, w.size() * sizeof(T));
    cudaMalloc((void **)&d_in, in.size() * sizeof(T));
    cudaMalloc((void **)&d_out, out.size() * sizeof(T));
    cudaMemcpy(d_w, w.data(), w.size() * sizeof(T), cudaMemcpyHostToDevice);
    cudaMemcpy(d_in, in.data(), in.size() * sizeof(T), cudaMemcpyHostToDevice);
    smooth_kernel<R, T><<<(n + 255) / 256, 256>>>(d_w, d_in, d_out, n);
    cudaMemcpy(out.data() + R, d_out + R, (n - 2 * R) * sizeof(T), cudaMemcpyDeviceToHost);
    cudaFree(d_w);
    cudaFree(d_in);
    cudaFree(d_out);
}

int main() {
    std::vector<float> a(1000, 1.0f), b(1000, 0.0f);
    smooth<2>(a, b, std::array<float, 5>{0.2f, 0.2f, 0.2f, 0.2f, 0.2f});
    smooth<1>(b, a, std::array<float, 3>{0.25f, 0.5f, 0.25f});
    std::printf("%.3f\\n", a[500]);
    return 0;
}
"""


def test_a_templated_candidate_timing_build_compiles_with_nvcc(cache: Cache) -> None:
    """The candidate side of the same rule: nvcc accepts the wrapped template that
    launches a templated kernel (no GPU here to run it)."""
    code = instrument(OFFLOADED_TEMPLATE_CU, "cuda", ["smooth"]).code
    assert "return cudaify_timed_smooth<R, T>(" in code
    build = compile_cuda(
        code,
        (),
        "sm_80",
        cache=cache,
        extra_units=runtime_units(cuda=True),
        link_flags=CUDA_LINK_FLAGS,
    )
    assert build.ok, build.diagnostics
