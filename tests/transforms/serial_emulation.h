/* Runs CUDA kernels on the CPU one thread after another, for kernels without block-level
   synchronisation (no __syncthreads, no __shared__ data shared between threads). Fast
   enough for full-size programs. CUDAIFY_EMULATE_REVERSE=1 in the environment runs the
   threads and blocks in reverse order: a kernel whose result depends on the order in which
   its threads run (a race) then usually prints something else. */
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>

struct uint3 { unsigned int x, y, z; };
struct dim3 {
    unsigned int x, y, z;
    constexpr dim3(unsigned int x_ = 1, unsigned int y_ = 1, unsigned int z_ = 1) : x(x_), y(y_), z(z_) {}
};
inline uint3 threadIdx, blockIdx;
inline dim3 blockDim, gridDim;

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __restrict__
#define __launch_bounds__(...)
template <class T> inline T __ldg(const T *p) { return *p; }
template <class T> inline T __ldcg(const T *p) { return *p; }
inline void __threadfence() {}
inline void __syncthreads() { std::fprintf(stderr, "__syncthreads() in the serial emulator\n"); std::abort(); }
[[noreturn]] inline void __trap() { std::fprintf(stderr, "__trap() called\n"); std::abort(); }

/* Warp collectives as serial execution makes them: one thread runs at a time, so a
   thread's active mask holds its own lane only, a vote sees only its own bit, and a
   shuffle may name only its own lane (any other aborts the run: the emulator cannot
   supply the value). */
inline unsigned int cudaify_serial_lane()
{
    return (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) & 31u;
}
inline unsigned int __activemask() { return 1u << cudaify_serial_lane(); }
inline unsigned int __ballot_sync(unsigned int mask, bool predicate)
{
    return predicate ? mask & __activemask() : 0u;
}
inline int __ffs(int x) { return __builtin_ffs(x); }
template <class T> inline T __shfl_xor_sync(unsigned int mask, T value, int offset)
{
    if (mask != __activemask() || offset % 32 != 0) {
        std::fprintf(stderr, "a shuffle between lanes in the serial emulator\n");
        std::abort();
    }
    return value;
}

#include "bits_emulation.h"
/* atomicMax and atomicMin on integers, compare-and-swap for the min/max kernels. */
template <class T> inline T atomicCAS(T *p, T compare, T value)
{
    const T old = *p;
    if (old == compare)
        *p = value;
    return old;
}
template <class T> inline T atomicMax(T *p, T v) { const T old = *p; if (v > old) *p = v; return old; }
template <class T> inline T atomicMin(T *p, T v) { const T old = *p; if (v < old) *p = v; return old; }

template <class T, class U> inline T atomicAdd(T *p, U v) { T old = *p; *p += (T)v; return old; }
#include "runtime_emulation.h"
inline cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, cudaMemcpyKind, void * = nullptr) { std::memcpy(d, s, n); return 0; }

inline void cudaify_emulate(dim3 grid, dim3 block, const std::function<void()> &kernel)
{
    static const bool reverse = std::getenv("CUDAIFY_EMULATE_REVERSE") != nullptr;
    const unsigned long long blocks = (unsigned long long)grid.x * grid.y * grid.z;
    const unsigned int threads = block.x * block.y * block.z;
    blockDim = block;
    gridDim = grid;
    for (unsigned long long b = 0; b < blocks; b++) {
        unsigned long long bb = reverse ? blocks - 1 - b : b;
        blockIdx = {(unsigned int)(bb % grid.x), (unsigned int)((bb / grid.x) % grid.y),
                    (unsigned int)(bb / ((unsigned long long)grid.x * grid.y))};
        for (unsigned int t = 0; t < threads; t++) {
            unsigned int tt = reverse ? threads - 1 - t : t;
            threadIdx = {tt % block.x, (tt / block.x) % block.y, tt / (block.x * block.y)};
            kernel();
        }
    }
}
