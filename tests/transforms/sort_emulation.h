/* CUB's radix sort for the CPU emulator (cuda_emulation.h): std::stable_sort into the spare
   buffer, which then holds the result (as CUB's does after an odd number of passes), so the
   emulated program also runs the sort rule's copy back. The emulation checks the transfers
   and the copy around the sort, not CUB. */
#pragma once
#include "atomic_emulation.h"

#include <algorithm>
#include <functional>

namespace cub {
template <class CudaifyT>
struct DoubleBuffer {
    CudaifyT *d_buffers[2];
    int selector;
    DoubleBuffer(CudaifyT *current, CudaifyT *alternate) : d_buffers{current, alternate}, selector(0) {}
    CudaifyT *Current() { return d_buffers[selector]; }
    CudaifyT *Alternate() { return d_buffers[selector ^ 1]; }
};

struct DeviceRadixSort {
    template <class CudaifyT, class Count>
    static cudaError_t SortKeys(void *storage, size_t &bytes, DoubleBuffer<CudaifyT> &keys, Count n)
    {
        return sorted(storage, bytes, keys, (long long)n, false);
    }
    template <class CudaifyT, class Count>
    static cudaError_t SortKeysDescending(void *storage, size_t &bytes, DoubleBuffer<CudaifyT> &keys, Count n)
    {
        return sorted(storage, bytes, keys, (long long)n, true);
    }

  private:
    template <class CudaifyT>
    static cudaError_t sorted(void *storage, size_t &bytes, DoubleBuffer<CudaifyT> &keys, long long n,
                              bool descending)
    {
        if (storage == nullptr) { /* the size query */
            bytes = 256;
            return cudaSuccess;
        }
        CudaifyT *to = keys.Alternate();
        std::copy(keys.Current(), keys.Current() + n, to);
        if (descending)
            std::stable_sort(to, to + n, std::greater<CudaifyT>());
        else
            std::stable_sort(to, to + n);
        keys.selector ^= 1;
        return cudaSuccess;
    }
};
} // namespace cub
