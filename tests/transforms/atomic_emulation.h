/* More of CUDA for the CPU emulator (cuda_emulation.h), as the atomic_privatize kernels
   use it: atomicAdd (one std::atomic_ref per call), the dynamic shared array (one buffer
   shared by the running block, as blocks run one after another), the asynchronous
   copies and memsets (the emulator has no streams: they run at once), cuda::std. */
#pragma once
#include "cuda_emulation.h"
#include <atomic>
#include <limits>
#include <type_traits>

namespace cuda {
namespace std = ::std;
}

alignas(16) inline unsigned long long cudaify_emulated_dynamic_shared[64 * 1024 / 8];

template <class T> inline T atomicAdd(T *address, T value)
{
    return std::atomic_ref<T>(*address).fetch_add(value);
}
template <class T> inline T __shfl_down_sync(unsigned int, T value, int) { return value; }

inline cudaError_t cudaMemsetAsync(void *d, int v, size_t n, int = 0) { std::memset(d, v, n); return 0; }
inline cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, cudaMemcpyKind, int = 0)
{
    std::memcpy(d, s, n);
    return 0;
}
