/* cudaify: the GPU's fp32 and fp64 arithmetic peak, the flat part of the roofline. Every
 * thread of a grid that fills every SM (8 blocks of 256 threads each) runs CHAINS
 * independent chains of fused multiply-adds (2 FLOPs each) in registers: no memory
 * traffic, no tensor cores (scalar fmaf/fma never reach them). The loop count is scaled
 * until one launch takes about 20 ms, then the median of several launches timed with
 * events gives FLOPs per second. Prints `fp32_flops_per_second <value>` and
 * `fp64_flops_per_second <value>`. */
#include <algorithm>
#include <cstdio>
#include <cuda_runtime.h>

#define CHECK(call)                                                                      \
    do {                                                                                 \
        cudaError_t status_ = (call);                                                    \
        if (status_ != cudaSuccess) {                                                    \
            fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(status_));             \
            return -1.0;                                                                 \
        }                                                                                \
    } while (0)

namespace {
const int CHAINS = 8;
const int THREADS = 256;
const int BLOCKS_PER_SM = 8;

__device__ inline float fused(float a, float b, float c) { return fmaf(a, b, c); }
__device__ inline double fused(double a, double b, double c) { return fma(a, b, c); }

/* `scale` and `shift` come from the host so the compiler cannot fold the chains; the
 * store happens only for a value no chain reaches, so it costs nothing but keeps the
 * arithmetic alive. */
template <typename T>
__global__ void chains(T scale, T shift, int rounds, T *sink) {
    T value[CHAINS];
#pragma unroll
    for (int c = 0; c < CHAINS; c++) value[c] = (T)(threadIdx.x + c);
    for (int r = 0; r < rounds; r++) {
#pragma unroll
        for (int step = 0; step < 16; step++) {
#pragma unroll
            for (int c = 0; c < CHAINS; c++) value[c] = fused(value[c], scale, shift);
        }
    }
    T total = 0;
#pragma unroll
    for (int c = 0; c < CHAINS; c++) total += value[c];
    if (total == (T)-12345.0) sink[blockIdx.x * blockDim.x + threadIdx.x] = total;
}

/* Seconds of one launch of `rounds` rounds, by events. */
template <typename T>
double launch_seconds(int blocks, int rounds, T *sink) {
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    CHECK(cudaEventRecord(start));
    chains<T><<<blocks, THREADS>>>((T)0.999999, (T)1e-7, rounds, sink);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float milliseconds = 0.0f;
    CHECK(cudaEventElapsedTime(&milliseconds, start, stop));
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    return 1e-3 * (double)milliseconds;
}

/* FLOPs per second of type T; negative when CUDA failed. */
template <typename T>
double peak(int blocks, T *sink) {
    int rounds = 16;
    double seconds = launch_seconds<T>(blocks, rounds, sink); /* warm-up */
    if (seconds < 0.0) return -1.0;
    while (seconds < 0.02 && rounds < (1 << 24)) {
        rounds *= 2;
        seconds = launch_seconds<T>(blocks, rounds, sink);
        if (seconds < 0.0) return -1.0;
    }
    const int launches = 5;
    double timed[launches];
    for (int i = 0; i < launches; i++) {
        timed[i] = launch_seconds<T>(blocks, rounds, sink);
        if (timed[i] <= 0.0) return -1.0;
    }
    std::sort(timed, timed + launches);
    double flops = 2.0 * CHAINS * 16.0 * (double)rounds * (double)blocks * THREADS;
    return flops / timed[launches / 2];
}
}  // namespace

int main() {
    int device = 0, processors = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&processors, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
        processors <= 0) {
        fprintf(stderr, "no CUDA device\n");
        return 1;
    }
    int blocks = processors * BLOCKS_PER_SM;
    void *sink = nullptr;
    if (cudaMalloc(&sink, (size_t)blocks * THREADS * sizeof(double)) != cudaSuccess) {
        fprintf(stderr, "cudaMalloc failed\n");
        return 1;
    }
    double single = peak<float>(blocks, (float *)sink);
    double dual = peak<double>(blocks, (double *)sink);
    if (single > 0.0) printf("fp32_flops_per_second %.6e\n", single);
    if (dual > 0.0) printf("fp64_flops_per_second %.6e\n", dual);
    cudaFree(sink);
    return single > 0.0 && dual > 0.0 ? 0 : 1;
}
