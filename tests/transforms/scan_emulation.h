/* CUB's device-wide scans for the CPU emulator (cuda_emulation.h): one thread scans in
   order, so the emulated program checks what the scan rule's kernels and transfers do
   around the scan, not CUB. cuda::std and the rest come from atomic_emulation.h. */
#pragma once
#include "atomic_emulation.h"

namespace cub {
struct DeviceScan {
    template <class In, class Out, class Op>
    static cudaError_t InclusiveScan(void *storage, size_t &bytes, In in, Out out, Op op, long long n)
    {
        if (storage == nullptr) { /* the size query: some storage, as CUB asks for */
            bytes = 256;
            return cudaSuccess;
        }
        for (long long k = 0; k < n; k++)
            out[k] = k == 0 ? in[0] : op(out[k - 1], in[k]);
        return cudaSuccess;
    }
    template <class In, class Out, class Op, class Init>
    static cudaError_t InclusiveScanInit(void *storage, size_t &bytes, In in, Out out, Op op,
                                         Init init, long long n)
    {
        if (storage == nullptr) {
            bytes = 256;
            return cudaSuccess;
        }
        for (long long k = 0; k < n; k++)
            out[k] = op(k == 0 ? init : out[k - 1], in[k]);
        return cudaSuccess;
    }
    template <class In, class Out>
    static cudaError_t InclusiveSum(void *storage, size_t &bytes, In in, Out out, long long n)
    {
        return InclusiveScan(storage, bytes, in, out, [](auto x, auto y) { return x + y; }, n);
    }
};
} // namespace cub
