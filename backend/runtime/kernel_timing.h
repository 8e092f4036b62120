/* cudaify: kernel time inside the region, by CUDA events around every kernel launch.
 * Linked into a CUDA timing build with the linker's `--wrap` of the launch entry points,
 * so every launch the program makes passes through here first.
 * Active only when CUDAIFY_KERNEL_TIMING is set (one run of the measurement: the events
 * cost a few microseconds per launch) and only inside the timed region. */
#include <cuda_runtime.h>
#include <stdlib.h>
#include <vector>

extern "C" int cudaify_timing_depth(void);

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
/* Events on the launch's stream around the launch itself. */
template <typename Launch>
cudaError_t timed(cudaStream_t stream, Launch launch) {
    if (!enabled() || cudaify_timing_depth() == 0) return launch();
    Span span;
    cudaEventCreate(&span.start);
    cudaEventCreate(&span.stop);
    cudaEventRecord(span.start, stream);
    cudaError_t result = launch();
    cudaEventRecord(span.stop, stream);
    pending().push_back(span);
    return result;
}
}  // namespace

/* The runtime API call (explicit launches, some libraries). */
extern "C" cudaError_t __real_cudaLaunchKernel(const void *, dim3, dim3, void **, size_t,
                                               cudaStream_t);
extern "C" cudaError_t __wrap_cudaLaunchKernel(const void *f, dim3 grid, dim3 block,
                                               void **args, size_t shared, cudaStream_t stream) {
    return timed(stream, [&] { return __real_cudaLaunchKernel(f, grid, block, args, shared, stream); });
}

#if CUDART_VERSION >= 13000
/* What <<<...>>> compiles to since CUDA 13 (see crt/host_runtime.h, __cudaLaunch). */
extern "C" cudaError_t __real___cudaLaunchKernel(cudaKernel_t, dim3, dim3, void **, size_t,
                                                 cudaStream_t);
extern "C" cudaError_t __wrap___cudaLaunchKernel(cudaKernel_t k, dim3 grid, dim3 block,
                                                 void **args, size_t shared, cudaStream_t stream) {
    return timed(stream, [&] { return __real___cudaLaunchKernel(k, grid, block, args, shared, stream); });
}
extern "C" cudaError_t __real___cudaLaunchKernel_ptsz(cudaKernel_t, dim3, dim3, void **, size_t,
                                                      cudaStream_t);
extern "C" cudaError_t __wrap___cudaLaunchKernel_ptsz(cudaKernel_t k, dim3 grid, dim3 block,
                                                      void **args, size_t shared,
                                                      cudaStream_t stream) {
    return timed(stream,
                 [&] { return __real___cudaLaunchKernel_ptsz(k, grid, block, args, shared, stream); });
}
#endif

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
