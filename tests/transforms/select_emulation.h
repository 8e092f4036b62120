/* CUB's DeviceSelect::Flagged for the CPU emulator (cuda_emulation.h): one thread keeps the
   flagged items in order and stores their count, so the emulated program checks what the
   compact rule's kernel, scratch buffers and appends do around it, not CUB. */
#pragma once
#include "atomic_emulation.h"

namespace cub {
struct DeviceSelect {
    template <class In, class Flags, class Out, class Count>
    static cudaError_t Flagged(void *storage, size_t &bytes, In in, Flags flags, Out out, Count *count,
                               long long n)
    {
        if (storage == nullptr) { /* the size query */
            bytes = 256;
            return cudaSuccess;
        }
        long long kept = 0;
        for (long long k = 0; k < n; k++)
            if (flags[k])
                out[kept++] = in[k];
        *count = (Count)kept;
        return cudaSuccess;
    }
};
} // namespace cub
