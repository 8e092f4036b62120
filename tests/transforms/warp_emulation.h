/* More of CUDA for the CPU emulator (cuda_emulation.h), as the reduction kernels use it:
   a real __shfl_down_sync (every lane of the warp exchanges its value, two barriers of
   the warp's threads around the exchange: a lane that skips a shuffle its warp makes
   deadlocks the run, as it would misbehave on a GPU), and cuda::std. */
#pragma once
#include "cuda_emulation.h"
#include <atomic>
#include <limits>
#include <memory>
#include <mutex>
#include <type_traits>

namespace cuda {
namespace std = ::std;
}

template <class T> inline T atomicAdd(T *address, T value)
{
    return std::atomic_ref<T>(*address).fetch_add(value);
}

/* One slot per thread of the running block (at most 1024), and one barrier per warp. */
inline unsigned long long cudaify_emulated_lanes[1024];
inline std::mutex cudaify_emulated_warps_guard;
inline std::vector<std::unique_ptr<std::barrier<>>> cudaify_emulated_warps;
inline unsigned int cudaify_emulated_block_size = 0;

inline std::barrier<> &cudaify_warp_barrier(unsigned int warp, unsigned int threads)
{
    std::lock_guard<std::mutex> hold(cudaify_emulated_warps_guard);
    if (cudaify_emulated_block_size != threads) {  /* a new launch shape */
        cudaify_emulated_warps.clear();
        for (unsigned int w = 0; w * 32 < threads; w++)
            cudaify_emulated_warps.push_back(
                std::make_unique<std::barrier<>>(std::min(32u, threads - w * 32)));
        cudaify_emulated_block_size = threads;
    }
    return *cudaify_emulated_warps[warp];
}

template <class T> inline T __shfl_down_sync(unsigned int, T value, int offset)
{
    static_assert(sizeof(T) <= 8, "shuffled values are at most 8 bytes");
    const unsigned int threads = blockDim.x * blockDim.y * blockDim.z;
    const unsigned int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    const unsigned int warp = t / 32, lane = t % 32;
    std::barrier<> &barrier = cudaify_warp_barrier(warp, threads);
    std::memcpy(&cudaify_emulated_lanes[t], &value, sizeof(T));
    barrier.arrive_and_wait();
    T out = value;
    const unsigned int from = lane + (unsigned int)offset;
    if (from < 32 && warp * 32 + from < threads)
        std::memcpy(&out, &cudaify_emulated_lanes[warp * 32 + from], sizeof(T));
    barrier.arrive_and_wait();
    return out;
}

/* The rest of the warp collectives the kernels use, exchanged the same way: every lane
   of an emulated warp is active (each runs on its own thread up to the barriers). */
inline unsigned int __activemask()
{
    const unsigned int threads = blockDim.x * blockDim.y * blockDim.z;
    const unsigned int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    const unsigned int lanes = std::min(32u, threads - t / 32 * 32);
    return lanes == 32 ? 0xffffffffu : (1u << lanes) - 1u;
}
inline int __ffs(int x) { return __builtin_ffs(x); }

template <class T> inline T cudaify_emulated_exchange(T value, unsigned int from_lane, bool *valid)
{
    static_assert(sizeof(T) <= 8, "exchanged values are at most 8 bytes");
    const unsigned int threads = blockDim.x * blockDim.y * blockDim.z;
    const unsigned int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    const unsigned int warp = t / 32;
    std::barrier<> &barrier = cudaify_warp_barrier(warp, threads);
    std::memcpy(&cudaify_emulated_lanes[t], &value, sizeof(T));
    barrier.arrive_and_wait();
    T out = value;
    *valid = from_lane < 32 && warp * 32 + from_lane < threads;
    if (*valid)
        std::memcpy(&out, &cudaify_emulated_lanes[warp * 32 + from_lane], sizeof(T));
    barrier.arrive_and_wait();
    return out;
}

template <class T> inline T __shfl_xor_sync(unsigned int, T value, int offset)
{
    const unsigned int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    bool valid;
    return cudaify_emulated_exchange(value, (t % 32) ^ (unsigned int)offset, &valid);
}

template <class T> inline T __shfl_sync(unsigned int, T value, int lane)
{
    bool valid;
    return cudaify_emulated_exchange(value, (unsigned int)lane, &valid);
}

/* Every lane of the warp waits for the others, as __syncwarp does (memory written before
   it is seen after it: the emulated lanes are threads of one process). */
inline void __syncwarp(unsigned int = 0xffffffffu)
{
    const unsigned int threads = blockDim.x * blockDim.y * blockDim.z;
    const unsigned int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    cudaify_warp_barrier(t / 32, threads).arrive_and_wait();
}

inline unsigned int __ballot_sync(unsigned int mask, bool predicate)
{
    unsigned int votes = 0;
    for (unsigned int lane = 0; lane < 32; lane++) {
        bool valid;
        const bool vote = cudaify_emulated_exchange(predicate, lane, &valid);
        if (valid && vote)
            votes |= 1u << lane;
    }
    return votes & mask;
}

#include "bits_emulation.h"
/* atomicMax and atomicMin on integers, compare-and-swap for the min/max kernels. */
template <class T> inline T atomicCAS(T *p, T compare, T value)
{
    std::atomic_ref<T>(*p).compare_exchange_strong(compare, value);
    return compare;  /* the value found: `compare` is updated to it on failure */
}
template <class T> inline T atomicMax(T *p, T v)
{
    std::atomic_ref<T> at(*p);
    T old = at.load();
    while (v > old && !at.compare_exchange_weak(old, v)) {
    }
    return old;
}
template <class T> inline T atomicMin(T *p, T v)
{
    std::atomic_ref<T> at(*p);
    T old = at.load();
    while (v < old && !at.compare_exchange_weak(old, v)) {
    }
    return old;
}
