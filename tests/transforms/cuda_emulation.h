/* Runs CUDA kernels on the CPU for tests on machines without a GPU: every thread of a
   block is a std::thread, blocks run one after another, __shared__ variables are static
   (shared by the threads of the running block), __syncthreads() is a std::barrier. */
#pragma once
#include <atomic>
#include <barrier>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

struct uint3 { unsigned int x, y, z; };
struct dim3 {
    unsigned int x, y, z;
    constexpr dim3(unsigned int x_ = 1, unsigned int y_ = 1, unsigned int z_ = 1) : x(x_), y(y_), z(z_) {}
};
inline thread_local uint3 threadIdx, blockIdx;
inline thread_local dim3 blockDim, gridDim;
inline std::barrier<> *cudaify_emulated_barrier = nullptr;

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __restrict__
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
struct alignas(16) float4 { float x, y, z, w; };
struct alignas(16) double2 { double x, y; };
template <class T> inline T __ldg(const T *p) { return *p; }
template <class T> inline T __ldcg(const T *p) { return *p; }
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
/* Blocks run one after another; the threads of one block race, so the add is atomic. */
template <class T, class U> inline T atomicAdd(T *p, U v) { return __atomic_fetch_add(p, (T)v, __ATOMIC_SEQ_CST); }
inline void __syncthreads() { cudaify_emulated_barrier->arrive_and_wait(); }
/* The block's votes: a barrier that also counts the threads whose predicate is true. The
   first wait lets every thread read the vote before (blocks run one at a time). */
inline std::atomic<int> cudaify_emulated_votes{0};
inline int cudaify_emulated_vote(int predicate)
{
    cudaify_emulated_barrier->arrive_and_wait();
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0)
        cudaify_emulated_votes.store(0);
    cudaify_emulated_barrier->arrive_and_wait();
    if (predicate)
        cudaify_emulated_votes.fetch_add(1);
    cudaify_emulated_barrier->arrive_and_wait();
    return cudaify_emulated_votes.load();
}
inline int __syncthreads_count(int predicate) { return cudaify_emulated_vote(predicate); }
inline int __syncthreads_or(int predicate) { return cudaify_emulated_vote(predicate) != 0; }
inline int __syncthreads_and(int predicate)
{
    return cudaify_emulated_vote(predicate) == (int)(blockDim.x * blockDim.y * blockDim.z);
}
[[noreturn]] inline void __trap() { std::fprintf(stderr, "__trap() called\n"); std::abort(); }

#include "runtime_emulation.h"

inline void cudaify_emulate(dim3 grid, dim3 block, const std::function<void()> &kernel)
{
    unsigned int threads = block.x * block.y * block.z;
    /* CUDAIFY_EMULATE_REVERSE: the blocks in the reverse order (the last block first) */
    const bool reverse = std::getenv("CUDAIFY_EMULATE_REVERSE") != nullptr;
    const unsigned long long blocks = (unsigned long long)grid.x * grid.y * grid.z;
    for (unsigned long long n = 0; n < blocks; n++) {
        const unsigned long long b = reverse ? blocks - 1 - n : n;
        const unsigned int bx = b % grid.x, by = (b / grid.x) % grid.y;
        const unsigned int bz = b / ((unsigned long long)grid.x * grid.y);
        std::barrier<> barrier(threads);
        cudaify_emulated_barrier = &barrier;
        std::vector<std::thread> pool;
        for (unsigned int t = 0; t < threads; t++)
            pool.emplace_back([&, t] {
                threadIdx = {t % block.x, (t / block.x) % block.y, t / (block.x * block.y)};
                blockIdx = {bx, by, bz};
                blockDim = block;
                gridDim = grid;
                kernel();
            });
        for (auto &thread : pool)
            thread.join();
    }
}
