/* cudaify: kernel time inside the region, by CUDA events around every kernel launch.
 * Linked into a CUDA timing build with `--wrap=cudaLaunchKernel`, so every launch the
 * program makes (<<<...>>> compiles to cudaLaunchKernel) passes through here first.
 * Active only when CUDAIFY_KERNEL_TIMING is set (one run of the measurement: the events
 * cost a few microseconds per launch) and only inside the timed region. */
#include <cuda_runtime.h>
#include <stdlib.h>
#include <vector>

extern "C" int cudaify_timing_depth(void);
extern "C" cudaError_t __real_cudaLaunchKernel(const void *function, dim3 grid, dim3 block,
                                               void **args, size_t shared, cudaStream_t stream);

namespace {
struct Span {
    cudaEvent_t start, stop;
};
std::vector<Span> &pending() {
    static std::vector<Span> spans;
    return spans;
}
bool enabled() {
    static const bool on = getenv("CUDAIFY_KERNEL_TIMING") != nullptr;
    return on;
}
}  // namespace

extern "C" cudaError_t __wrap_cudaLaunchKernel(const void *function, dim3 grid, dim3 block,
                                               void **args, size_t shared, cudaStream_t stream) {
    if (!enabled() || cudaify_timing_depth() == 0)
        return __real_cudaLaunchKernel(function, grid, block, args, shared, stream);
    Span span;
    cudaEventCreate(&span.start);
    cudaEventCreate(&span.stop);
    cudaEventRecord(span.start, stream);
    cudaError_t result = __real_cudaLaunchKernel(function, grid, block, args, shared, stream);
    cudaEventRecord(span.stop, stream);
    pending().push_back(span);
    return result;
}

/* Seconds of kernel time since the last flush; -1 when kernels are not being timed. */
extern "C" double cudaify_kernel_flush(void) {
    if (!enabled()) return -1.0;
    double total = 0.0;
    for (const Span &span : pending()) {
        float milliseconds = 0.0f;
        if (cudaEventSynchronize(span.stop) == cudaSuccess &&
            cudaEventElapsedTime(&milliseconds, span.start, span.stop) == cudaSuccess)
            total += 1e-3 * milliseconds;
        cudaEventDestroy(span.start);
        cudaEventDestroy(span.stop);
    }
    pending().clear();
    return total;
}
