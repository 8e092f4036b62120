/* ---- cudaify pattern includes ---- */
#include <string.h>
#include <math.h>
#include <type_traits>
#include <cub/device/device_scan.cuh> /* cudaify: CUB's device-wide scan */
/* cudaify: the sum a seeded CUB scan adds with (libcu++'s: CUB tunes for it) */
#if __CUDACC_VER_MAJOR__ >= 12
#include <cuda/std/functional>
typedef ::cuda::std::plus<> cudaify_sum;
#else
struct cudaify_sum {
    template <class CudaifyT>
    __host__ __device__ CudaifyT operator()(const CudaifyT &a, const CudaifyT &b) const
    {
        return a + b;
    }
};
#endif

/* Prefix sums in three spellings: an inclusive accumulator (64-bit integers; of computed
   terms too), an exclusive one whose final value is the total (offsets from counts), and a
   recurrence on the output's previous element (doubles, starting from out[0]). */
#include <stdio.h>
#include <stdlib.h>

#define N 100000

/* ---- cudaify runtime helpers ---- */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime.h>

/* Every CUDA call is checked: on failure, say where and why on stderr and exit non-zero.
   A cudaMalloc that runs out of memory is asked once more after the stream-ordered pool
   (below) gives back the freed buffers it keeps: they are free to the program, not to the
   driver. */
static int cudaify_give_back_pool(void);
#define CUDAIFY_CHECK(call)                                                              \
    do {                                                                                 \
        cudaError_t cudaify_status_ = (call);                                            \
        if (cudaify_status_ == cudaErrorMemoryAllocation &&                              \
            strncmp(#call, "cudaMalloc(", 11) == 0 && cudaify_give_back_pool())          \
            cudaify_status_ = (call);                                                    \
        if (cudaify_status_ != cudaSuccess) {                                            \
            fprintf(stderr, "%s:%d: CUDA error: %s\n", __FILE__, __LINE__,               \
                    cudaGetErrorString(cudaify_status_));                                \
            exit(EXIT_FAILURE);                                                          \
        }                                                                                \
    } while (0)

/* The CUDA context takes 0.2-0.4 s to create: a thread of its own creates it from the
   program's start, while main's host code runs, and the first CUDA call waits for it. The
   runtime is asked its device count first, on the main thread, so that its own exit handler
   is registered before the one that joins the thread: an exit while the context is being
   made waits for it instead of tearing the runtime down under it. */
#include <pthread.h>
static pthread_t cudaify_context_thread;
static int cudaify_context_started = 0;
static void *cudaify_make_context(void *unused)
{
    (void)unused;
    cudaFree(0); /* an error here (no device) surfaces at the program's first CUDA call */
    return NULL;
}
static void cudaify_join_context(void)
{
    if (cudaify_context_started)
        pthread_join(cudaify_context_thread, NULL);
}
__attribute__((constructor)) static void cudaify_start_context(void)
{
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0)
        return; /* no device: the program's first CUDA call says so */
    if (atexit(cudaify_join_context) == 0 &&
        pthread_create(&cudaify_context_thread, NULL, cudaify_make_context, NULL) == 0)
        cudaify_context_started = 1;
}

/* Device buffers that a call allocates and frees come from the device's memory pool, in
   stream order: a cudaFree waits for the whole device, and a function called in a loop
   would ask the driver for its buffers again on every call. The pool keeps what is freed
   (its release threshold raised to everything), so the next call's buffers of the same
   sizes are served from it. Allocations, frees, copies and launches all go to the legacy
   default stream, so they stay in program order. Devices without memory pools get
   cudaMalloc and cudaFree. The device is asked at the first allocation, not in the context
   thread: that needs no synchronisation with it, and a function loaded from a shared
   library (the region timing) asks the context current at its first call. */
#include <stdint.h>
static int cudaify_async_pool = -1; /* unknown until the first allocation */
static inline int cudaify_has_async_pool(void)
{
    if (cudaify_async_pool >= 0)
        return cudaify_async_pool;
    int device = 0, supported = 0;
    cudaMemPool_t pool;
    uint64_t keep = UINT64_MAX;
    cudaify_async_pool =
        cudaGetDevice(&device) == cudaSuccess &&
        cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, device) ==
            cudaSuccess &&
        supported && cudaDeviceGetDefaultMemPool(&pool, device) == cudaSuccess &&
        cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep) == cudaSuccess;
    if (!cudaify_async_pool)
        (void)cudaGetLastError(); /* the plain calls say what is wrong, if anything is */
    return cudaify_async_pool;
}
static inline cudaError_t cudaify_malloc(void **ptr, size_t bytes)
{
    if (bytes == 0 || !cudaify_has_async_pool())
        return cudaMalloc(ptr, bytes); /* 0 bytes: NULL, as cudaMalloc gives */
    cudaError_t status = cudaMallocAsync(ptr, bytes, 0);
    if (status != cudaErrorMemoryAllocation)
        return status;
    /* the pool may hold freed buffers of other sizes: give them back and ask once more */
    (void)cudaify_give_back_pool();
    return cudaMallocAsync(ptr, bytes, 0);
}
/* The pool's freed buffers back to the driver (once every free queued has run), after an
   allocation ran out of memory; 0 where no pool is in use, so there is nothing to retry. */
static int cudaify_give_back_pool(void)
{
    if (cudaify_async_pool != 1)
        return 0;
    (void)cudaGetLastError(); /* the allocation's error */
    int device = 0;
    cudaMemPool_t pool;
    return cudaStreamSynchronize(0) == cudaSuccess && cudaGetDevice(&device) == cudaSuccess &&
           cudaDeviceGetDefaultMemPool(&pool, device) == cudaSuccess &&
           cudaMemPoolTrimTo(pool, 0) == cudaSuccess;
}
static inline cudaError_t cudaify_free(void *ptr)
{
    if (ptr == NULL)
        return cudaSuccess;
    return cudaify_has_async_pool() ? cudaFreeAsync(ptr, 0) : cudaFree(ptr);
}

/* Iterations of `for (v = first; v < bound; v += step)` (`<=` when inclusive; a negative
   step counts down with `>` / `>=`). */
static inline long long cudaify_trips(long long first, long long bound, long long step,
                                      int inclusive)
{
    long long span = step > 0 ? bound - first : first - bound;
    long long stride = step > 0 ? step : -step;
    if (inclusive) span += 1;
    return span > 0 ? (span + stride - 1) / stride : 0;
}

/* The iterations along one grid dimension that get a thread of their own beside `across`
   threads along the lower dimensions (1 for x). A grid of one thread per element costs the
   GPU a block scheduled per 256 elements: on a 14400 x 17600 array (990,000 blocks) that is
   more than the stores (1.47 ms against 0.63 ms on an H200), and a 1-D map over 2^26 floats
   runs 1.25x faster in 16,384 blocks than in 262,144. So a grid holds at most
   CUDAIFY_GRID_THREADS threads (2^22: 15 waves of a 132-processor H100 or H200, more on
   smaller GPUs), never fewer than one row, and the kernels' grid-stride loops cover the
   rest. */
#ifndef CUDAIFY_GRID_THREADS
#define CUDAIFY_GRID_THREADS (1LL << 22)
#endif
static inline long long cudaify_rows(long long trips, long long across)
{
    long long rows = CUDAIFY_GRID_THREADS / (across > 1 ? across : 1);
    if (rows < 1)
        rows = 1;
    return trips < rows ? trips : rows;
}

/* Blocks that give every iteration its own thread, capped at what the grid dimension
   holds (the kernels' grid-stride loops cover the rest). */
static inline unsigned int cudaify_blocks(long long trips, unsigned int threads,
                                          unsigned int most)
{
    long long blocks = (trips + threads - 1) / threads;
    return (unsigned int)(blocks < 1 ? 1 : (blocks > (long long)most ? most : blocks));
}

/* ---- cudaify pattern helpers ---- */

/* The type a name holds, without reference or const (host side of the reductions). */
template <class CudaifyT>
using cudaify_value_t =
    typename std::remove_cv<typename std::remove_reference<CudaifyT>::type>::type;
template <class CudaifyT>
__host__ __device__ CudaifyT &cudaify_declval();

/* The identities of min and max: the ends of an integer type's range, from its size and
   sign, and a floating type's infinities (libcu++'s numeric_limits cost a second of
   every nvcc build). */
template <class CudaifyT>
struct cudaify_limits {
    __host__ __device__ static CudaifyT highest()
    {
        return std::is_signed<CudaifyT>::value
                   ? (CudaifyT)((1ull << (sizeof(CudaifyT) * 8 - 1)) - 1)
                   : (CudaifyT)~(CudaifyT)0;
    }
    __host__ __device__ static CudaifyT lowest()
    {
        return std::is_signed<CudaifyT>::value ? (CudaifyT)(-highest() - 1) : (CudaifyT)0;
    }
};
template <>
struct cudaify_limits<float> {
    __host__ __device__ static float highest() { return HUGE_VALF; }
    __host__ __device__ static float lowest() { return -HUGE_VALF; }
};
template <>
struct cudaify_limits<double> {
    __host__ __device__ static double highest() { return HUGE_VAL; }
    __host__ __device__ static double lowest() { return -HUGE_VAL; }
};

/* Reduction operators: the combination and its identity. */
struct cudaify_plus {
    template <class CudaifyT>
    __host__ __device__ CudaifyT operator()(CudaifyT a, CudaifyT b) const { return a + b; }
    template <class CudaifyT>
    __host__ __device__ static CudaifyT identity() { return CudaifyT(0); }
};
struct cudaify_times {
    template <class CudaifyT>
    __host__ __device__ CudaifyT operator()(CudaifyT a, CudaifyT b) const { return a * b; }
    template <class CudaifyT>
    __host__ __device__ static CudaifyT identity() { return CudaifyT(1); }
};
struct cudaify_minimum {
    template <class CudaifyT>
    __host__ __device__ CudaifyT operator()(CudaifyT a, CudaifyT b) const { return b < a ? b : a; }
    template <class CudaifyT>
    __host__ __device__ static CudaifyT identity()
    {
        return cudaify_limits<CudaifyT>::highest();
    }
};
struct cudaify_maximum {
    template <class CudaifyT>
    __host__ __device__ CudaifyT operator()(CudaifyT a, CudaifyT b) const { return b > a ? b : a; }
    template <class CudaifyT>
    __host__ __device__ static CudaifyT identity()
    {
        return cudaify_limits<CudaifyT>::lowest();
    }
};
struct cudaify_bit_and {
    template <class CudaifyT>
    __host__ __device__ CudaifyT operator()(CudaifyT a, CudaifyT b) const { return a & b; }
    template <class CudaifyT>
    __host__ __device__ static CudaifyT identity() { return (CudaifyT)~(CudaifyT)0; }
};
struct cudaify_bit_or {
    template <class CudaifyT>
    __host__ __device__ CudaifyT operator()(CudaifyT a, CudaifyT b) const { return a | b; }
    template <class CudaifyT>
    __host__ __device__ static CudaifyT identity() { return CudaifyT(0); }
};
struct cudaify_bit_xor {
    template <class CudaifyT>
    __host__ __device__ CudaifyT operator()(CudaifyT a, CudaifyT b) const { return a ^ b; }
    template <class CudaifyT>
    __host__ __device__ static CudaifyT identity() { return CudaifyT(0); }
};
struct cudaify_logical_and {
    template <class CudaifyT>
    __host__ __device__ CudaifyT operator()(CudaifyT a, CudaifyT b) const { return a && b; }
    template <class CudaifyT>
    __host__ __device__ static CudaifyT identity() { return CudaifyT(1); }
};
struct cudaify_logical_or {
    template <class CudaifyT>
    __host__ __device__ CudaifyT operator()(CudaifyT a, CudaifyT b) const { return a || b; }
    template <class CudaifyT>
    __host__ __device__ static CudaifyT identity() { return CudaifyT(0); }
};

/* __shfl_down_sync of any value of at most 8 bytes, through an integer of its size. */
template <class CudaifyT>
__device__ CudaifyT cudaify_shfl_down(CudaifyT value, int offset)
{
    static_assert(sizeof(CudaifyT) <= 8, "cudaify: reduction values are at most 8 bytes");
    CudaifyT out;
    if constexpr (sizeof(CudaifyT) <= 4) {
        int bits = 0;
        memcpy(&bits, &value, sizeof(CudaifyT));
        bits = __shfl_down_sync(0xffffffffu, bits, offset);
        memcpy(&out, &bits, sizeof(CudaifyT));
    } else {
        long long bits = 0;
        memcpy(&bits, &value, sizeof(CudaifyT));
        bits = __shfl_down_sync(0xffffffffu, bits, offset);
        memcpy(&out, &bits, sizeof(CudaifyT));
    }
    return out;
}

/* The block's combination of every thread's value, valid in thread 0. Every thread of
   the block calls it (blockDim.x is a multiple of 32). */
template <class CudaifyT, class CudaifyOp>
__device__ CudaifyT cudaify_block_reduce(CudaifyT value, CudaifyOp op)
{
    __shared__ CudaifyT warp_values[32];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    for (int offset = 16; offset > 0; offset /= 2)
        value = op(value, cudaify_shfl_down(value, offset));
    __syncthreads(); /* an earlier call may still read warp_values */
    if (lane == 0)
        warp_values[warp] = value;
    __syncthreads();
    if (warp == 0) {
        const int warps = (int)(blockDim.x / 32);
        value = lane < warps ? warp_values[lane] : CudaifyOp::template identity<CudaifyT>();
        for (int offset = 16; offset > 0; offset /= 2)
            value = op(value, cudaify_shfl_down(value, offset));
    }
    return value;
}

/* atomicAdd for every 4- and 8-byte arithmetic type: integers through the unsigned
   type of their size (two's complement sums are the same bits). */
template <class CudaifyT>
__device__ void cudaify_atomic_add(CudaifyT *address, CudaifyT value)
{
    if constexpr (std::is_integral<CudaifyT>::value && sizeof(CudaifyT) == 8)
        atomicAdd((unsigned long long *)address, (unsigned long long)value);
    else if constexpr (std::is_integral<CudaifyT>::value && sizeof(CudaifyT) == 4)
        atomicAdd((unsigned int *)address, (unsigned int)value);
    else
        atomicAdd(address, value);
}

/* Bytes of a block-private copy, rounded up so that the next one stays aligned. */
__host__ __device__ static inline size_t cudaify_aligned(size_t bytes)
{
    return (bytes + 15) / 16 * 16;
}

/* One irregular update `global[index] += value`: into the block's private copy when
   the index is below the privatized extent, else marked as outside the device copy
   (the host then runs the loop itself). */
template <class CudaifyT, class CudaifyV>
__device__ void cudaify_add_at(CudaifyT *global, CudaifyT *local, long long extent,
                               long long index, CudaifyV value, int *outside)
{
    if (index < 0 || index >= extent) {
        *outside = 1;
        return;
    }
    cudaify_atomic_add(local != NULL ? &local[index] : &global[index], (CudaifyT)value);
}
template <class CudaifyT, class CudaifyV>
__device__ void cudaify_subtract_at(CudaifyT *global, CudaifyT *local, long long extent,
                                    long long index, CudaifyV value, int *outside)
{
    const CudaifyT negated = (CudaifyT)((CudaifyT)0 - (CudaifyT)value);
    cudaify_add_at(global, local, extent, index, negated, outside);
}

void running_total(int n, const long long *in, long long *out)
{
    long long running = 7;
    {
        /* cudaify: this scan runs on the GPU: cub::DeviceScan::InclusiveScanInit */
        const long long trips_i = cudaify_trips(0, n, 1, 0);
        if (trips_i > 0) {
            long long *d_in = NULL;
            long long *d_out = NULL;
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_in, (size_t)(n) * sizeof(long long)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_out, (size_t)(n) * sizeof(long long)));
            CUDAIFY_CHECK(cudaMemcpy(d_in, in, (size_t)(n) * sizeof(long long), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_out, out, (size_t)(n) * sizeof(long long), cudaMemcpyHostToDevice));
            const long long start_2 = running;
            /* CUB tells the temporary storage it needs (asked with no storage), then scans */
            size_t storage_bytes = 0;
            static void *storage = NULL;
            static size_t storage_capacity = 0;
            CUDAIFY_CHECK(cub::DeviceScan::InclusiveScanInit(nullptr, storage_bytes, d_in, d_out, cudaify_sum(), start_2, trips_i));
            if (storage_bytes > storage_capacity) {
                if (storage != NULL)
                    CUDAIFY_CHECK(cudaFree(storage));
                CUDAIFY_CHECK(cudaMalloc(&storage, storage_bytes));
                storage_capacity = storage_bytes;
            }
            CUDAIFY_CHECK(cub::DeviceScan::InclusiveScanInit(storage, storage_bytes, d_in, d_out, cudaify_sum(), start_2, trips_i));
            long long total_2;
            CUDAIFY_CHECK(cudaMemcpy(&total_2, d_out + (trips_i - 1), sizeof(long long), cudaMemcpyDeviceToHost));
            running = total_2;
            CUDAIFY_CHECK(cudaMemcpy(out, d_out, (size_t)(n) * sizeof(long long), cudaMemcpyDeviceToHost));
            CUDAIFY_CHECK(cudaify_free(d_in));
            CUDAIFY_CHECK(cudaify_free(d_out));
        }
    }
}

/* The starting value plus the scanned terms, stored as the loop stores them; start points at the first element the loop writes. */
__global__ void offsets_scan_store(const int *sums_2, int start_3, long long trips_i_2, int *start)
{
    for (long long t_i_2 = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_i_2 < trips_i_2;
         t_i_2 += (long long)blockDim.x * gridDim.x) {
        start[t_i_2] = (int)(t_i_2 > 0 ? start_3 + sums_2[t_i_2 - 1] : start_3);
    }
}

int offsets(int n, const int *count, int *start)
{
    int next = 0;
    {
        /* cudaify: this scan runs on the GPU: cub::DeviceScan::InclusiveSum, offsets_scan_store */
        const long long trips_i_2 = cudaify_trips(0, n, 1, 0);
        if (trips_i_2 > 0) {
            int *d_count = NULL;
            int *d_start = NULL;
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_count, (size_t)(n) * sizeof(int)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_start, (size_t)(n) * sizeof(int)));
            CUDAIFY_CHECK(cudaMemcpy(d_count, count, (size_t)(n) * sizeof(int), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_start, start, (size_t)(n) * sizeof(int), cudaMemcpyHostToDevice));
            const int start_3 = next;
            static int *sums_2 = NULL;
            static long long capacity_2 = 0;
            if (trips_i_2 > capacity_2) {
                if (capacity_2 > 0) {
                    CUDAIFY_CHECK(cudaFree(sums_2));
                }
                CUDAIFY_CHECK(cudaMalloc((void **)&sums_2, (size_t)trips_i_2 * sizeof(*sums_2)));
                capacity_2 = trips_i_2;
            }
            const unsigned int blocks_2 = cudaify_blocks(trips_i_2, 256, 2147483647u);
            /* CUB tells the temporary storage it needs (asked with no storage), then scans */
            size_t storage_bytes_2 = 0;
            static void *storage_2 = NULL;
            static size_t storage_capacity_2 = 0;
            CUDAIFY_CHECK(cub::DeviceScan::InclusiveSum(nullptr, storage_bytes_2, d_count, sums_2, trips_i_2));
            if (storage_bytes_2 > storage_capacity_2) {
                if (storage_2 != NULL)
                    CUDAIFY_CHECK(cudaFree(storage_2));
                CUDAIFY_CHECK(cudaMalloc(&storage_2, storage_bytes_2));
                storage_capacity_2 = storage_bytes_2;
            }
            CUDAIFY_CHECK(cub::DeviceScan::InclusiveSum(storage_2, storage_bytes_2, d_count, sums_2, trips_i_2));
            offsets_scan_store<<<blocks_2, 256>>>(sums_2, start_3, trips_i_2, d_start);
            CUDAIFY_CHECK(cudaGetLastError());
            int total_3;
            CUDAIFY_CHECK(cudaMemcpy(&total_3, sums_2 + (trips_i_2 - 1), sizeof(int), cudaMemcpyDeviceToHost));
            next = start_3 + total_3;
            CUDAIFY_CHECK(cudaMemcpy(start, d_start, (size_t)(n) * sizeof(int), cudaMemcpyDeviceToHost));
            CUDAIFY_CHECK(cudaify_free(d_count));
            CUDAIFY_CHECK(cudaify_free(d_start));
        }
    }
    return next;
}

/* Scan loop 'i' of cumulative() (line 31): the terms of the prefix sum, one per thread. */
__global__ void cumulative_scan_terms(double *in, long long trips_i_3, double *terms_3)
{
    for (long long t_i_3 = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_i_3 < trips_i_3;
         t_i_3 += (long long)blockDim.x * gridDim.x) {
        int i = (int)(1 + t_i_3);
        terms_3[t_i_3] = (double)(0.5 * in[i]);
    }
}

void cumulative(int n, const double *in, double *out)
{
    out[0] = in[0];
    {
        /* cudaify: this scan runs on the GPU: cumulative_scan_terms, cub::DeviceScan::InclusiveScanInit */
        const long long trips_i_3 = cudaify_trips(1, n, 1, 0);
        if (trips_i_3 > 0) {
            double *d_in_2 = NULL;
            double *d_out_2 = NULL;
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_in_2, (size_t)((n - 1)) * sizeof(double)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_out_2, (size_t)(n) * sizeof(double)));
            CUDAIFY_CHECK(cudaMemcpy(d_in_2, in + (1), (size_t)((n - 1)) * sizeof(double), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_out_2, out, (size_t)(n) * sizeof(double), cudaMemcpyHostToDevice));
            double start_4;
            CUDAIFY_CHECK(cudaMemcpy(&start_4, d_out_2 + 1 - 1, sizeof(double), cudaMemcpyDeviceToHost));
            static double *terms_3 = NULL;
            static long long capacity_3 = 0;
            if (trips_i_3 > capacity_3) {
                if (capacity_3 > 0) {
                    CUDAIFY_CHECK(cudaFree(terms_3));
                }
                CUDAIFY_CHECK(cudaMalloc((void **)&terms_3, (size_t)trips_i_3 * sizeof(*terms_3)));
                capacity_3 = trips_i_3;
            }
            const unsigned int blocks_3 = cudaify_blocks(trips_i_3, 256, 2147483647u);
            cumulative_scan_terms<<<blocks_3, 256>>>(d_in_2 - (1), trips_i_3, terms_3);
            CUDAIFY_CHECK(cudaGetLastError());
            /* CUB tells the temporary storage it needs (asked with no storage), then scans */
            size_t storage_bytes_3 = 0;
            static void *storage_3 = NULL;
            static size_t storage_capacity_3 = 0;
            CUDAIFY_CHECK(cub::DeviceScan::InclusiveScanInit(nullptr, storage_bytes_3, terms_3, d_out_2 + 1, cudaify_sum(), start_4, trips_i_3));
            if (storage_bytes_3 > storage_capacity_3) {
                if (storage_3 != NULL)
                    CUDAIFY_CHECK(cudaFree(storage_3));
                CUDAIFY_CHECK(cudaMalloc(&storage_3, storage_bytes_3));
                storage_capacity_3 = storage_bytes_3;
            }
            CUDAIFY_CHECK(cub::DeviceScan::InclusiveScanInit(storage_3, storage_bytes_3, terms_3, d_out_2 + 1, cudaify_sum(), start_4, trips_i_3));
            CUDAIFY_CHECK(cudaMemcpy(out, d_out_2, (size_t)(n) * sizeof(double), cudaMemcpyDeviceToHost));
            CUDAIFY_CHECK(cudaify_free(d_in_2));
            CUDAIFY_CHECK(cudaify_free(d_out_2));
        }
    }
}

/* Scan loop 'i' of weighted_total() (line 38): the terms of the prefix sum, one per thread. */
__global__ void weighted_total_scan_terms(long long *in, long long trips_i_4, long long *terms_4)
{
    for (long long t_i_4 = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_i_4 < trips_i_4;
         t_i_4 += (long long)blockDim.x * gridDim.x) {
        int i = (int)t_i_4;
        terms_4[t_i_4] = (long long)(3 * in[i] - 1);
    }
}

void weighted_total(int n, const long long *in, long long *out)
{
    long long acc = -5;
    {
        /* cudaify: this scan runs on the GPU: weighted_total_scan_terms, cub::DeviceScan::InclusiveScanInit */
        const long long trips_i_4 = cudaify_trips(0, n, 1, 0);
        if (trips_i_4 > 0) {
            long long *d_in_3 = NULL;
            long long *d_out_3 = NULL;
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_in_3, (size_t)(n) * sizeof(long long)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_out_3, (size_t)(n) * sizeof(long long)));
            CUDAIFY_CHECK(cudaMemcpy(d_in_3, in, (size_t)(n) * sizeof(long long), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_out_3, out, (size_t)(n) * sizeof(long long), cudaMemcpyHostToDevice));
            const long long start_5 = acc;
            static long long *terms_4 = NULL;
            static long long capacity_4 = 0;
            if (trips_i_4 > capacity_4) {
                if (capacity_4 > 0) {
                    CUDAIFY_CHECK(cudaFree(terms_4));
                }
                CUDAIFY_CHECK(cudaMalloc((void **)&terms_4, (size_t)trips_i_4 * sizeof(*terms_4)));
                capacity_4 = trips_i_4;
            }
            const unsigned int blocks_4 = cudaify_blocks(trips_i_4, 256, 2147483647u);
            weighted_total_scan_terms<<<blocks_4, 256>>>(d_in_3, trips_i_4, terms_4);
            CUDAIFY_CHECK(cudaGetLastError());
            /* CUB tells the temporary storage it needs (asked with no storage), then scans */
            size_t storage_bytes_4 = 0;
            static void *storage_4 = NULL;
            static size_t storage_capacity_4 = 0;
            CUDAIFY_CHECK(cub::DeviceScan::InclusiveScanInit(nullptr, storage_bytes_4, terms_4, d_out_3, cudaify_sum(), start_5, trips_i_4));
            if (storage_bytes_4 > storage_capacity_4) {
                if (storage_4 != NULL)
                    CUDAIFY_CHECK(cudaFree(storage_4));
                CUDAIFY_CHECK(cudaMalloc(&storage_4, storage_bytes_4));
                storage_capacity_4 = storage_bytes_4;
            }
            CUDAIFY_CHECK(cub::DeviceScan::InclusiveScanInit(storage_4, storage_bytes_4, terms_4, d_out_3, cudaify_sum(), start_5, trips_i_4));
            long long total_5;
            CUDAIFY_CHECK(cudaMemcpy(&total_5, d_out_3 + (trips_i_4 - 1), sizeof(long long), cudaMemcpyDeviceToHost));
            acc = total_5;
            CUDAIFY_CHECK(cudaMemcpy(out, d_out_3, (size_t)(n) * sizeof(long long), cudaMemcpyDeviceToHost));
            CUDAIFY_CHECK(cudaify_free(d_in_3));
            CUDAIFY_CHECK(cudaify_free(d_out_3));
        }
    }
}

int main(void)
{
    long long *a = (long long *)malloc(sizeof(long long) * N);
    long long *sa = (long long *)malloc(sizeof(long long) * N);
    int *c = (int *)malloc(sizeof(int) * N);
    int *sc = (int *)malloc(sizeof(int) * N);
    double *d = (double *)malloc(sizeof(double) * N);
    double *sd = (double *)malloc(sizeof(double) * N);
    unsigned int state = 5u;
    for (int i = 0; i < N; i++) {
        state = state * 1664525u + 1013904223u;
        a[i] = (long long)(state >> 8) - 8000000;
        c[i] = (int)(state >> 28);
        d[i] = (double)(state >> 8) / 16777216.0;
    }
    running_total(N, a, sa);
    int total = offsets(N, c, sc);
    cumulative(N, d, sd);
    printf("ints: %lld %lld %lld\n", sa[0], sa[N / 2], sa[N - 1]);
    printf("offsets: %d %d %d total=%d\n", sc[0], sc[1], sc[N - 1], total);
    printf("doubles: %.6e %.6e %.6e\n", sd[0], sd[N / 3], sd[N - 1]);
    weighted_total(N - 1, a, sa + 1);
    printf("weighted: %lld %lld %lld\n", sa[0], sa[1], sa[N - 1]);
    free(a);
    free(sa);
    free(c);
    free(sc);
    free(d);
    free(sd);
    return 0;
}
