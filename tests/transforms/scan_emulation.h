/* CUB's device-wide scans for the CPU emulator (cuda_emulation.h): one thread scans in
   order, so the emulated program checks what the scan rule's kernels and transfers do
   around the scan, not CUB. CUB's block-wide exchange, reduction and scan (the runtime's
   three-pass scan, scan_passes.cuh, is built on them): through the block's shared
   storage, each thread's result folded in order from the others' inputs, so the emulated
   run checks the passes' own indexing, carries and barriers. cuda::std and the rest come
   from atomic_emulation.h. */
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

template <class T, int THREADS, int ITEMS>
struct BlockExchange {
    struct TempStorage {
        T items[THREADS * ITEMS];
    };
    TempStorage &storage;
    explicit BlockExchange(TempStorage &s) : storage(s) {}
    void StripedToBlocked(T (&in)[ITEMS], T (&out)[ITEMS])
    {
        for (int k = 0; k < ITEMS; k++)
            storage.items[k * THREADS + threadIdx.x] = in[k];
        __syncthreads();
        for (int k = 0; k < ITEMS; k++)
            out[k] = storage.items[threadIdx.x * ITEMS + k];
    }
    void BlockedToStriped(T (&in)[ITEMS], T (&out)[ITEMS])
    {
        for (int k = 0; k < ITEMS; k++)
            storage.items[threadIdx.x * ITEMS + k] = in[k];
        __syncthreads();
        for (int k = 0; k < ITEMS; k++)
            out[k] = storage.items[k * THREADS + threadIdx.x];
    }
};

template <class T, int THREADS>
struct BlockReduce {
    struct TempStorage {
        T inputs[THREADS];
    };
    TempStorage &storage;
    explicit BlockReduce(TempStorage &s) : storage(s) {}
    /* the first `valid` threads' inputs in order; the result is thread 0's */
    template <class Op>
    T Reduce(T input, Op op, int valid)
    {
        storage.inputs[threadIdx.x] = input;
        __syncthreads();
        T total = storage.inputs[0];
        for (int t = 1; t < valid; t++)
            total = op(total, storage.inputs[t]);
        return total;
    }
};

template <class T, int THREADS>
struct BlockScan {
    struct TempStorage {
        T inputs[THREADS];
    };
    TempStorage &storage;
    explicit BlockScan(TempStorage &s) : storage(s) {}
    /* thread t gets the inputs of threads 0..t-1 in order (thread 0: its own input,
       which CUB leaves undefined), every thread the whole block's */
    template <class Op>
    void ExclusiveScan(T input, T &output, Op op, T &aggregate)
    {
        storage.inputs[threadIdx.x] = input;
        __syncthreads();
        output = storage.inputs[0];
        for (unsigned int t = 1; t < threadIdx.x; t++)
            output = op(output, storage.inputs[t]);
        aggregate = storage.inputs[0];
        for (int t = 1; t < THREADS; t++)
            aggregate = op(aggregate, storage.inputs[t]);
    }
};
} // namespace cub
