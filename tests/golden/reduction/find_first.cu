/* ---- cudaify pattern includes ---- */
#include <string.h>
#include <math.h>
#include <type_traits>

#include <stdio.h>
#include <stdlib.h>

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

/* Reduction loop 'i' of first_above() (line 8) on idx, v: per-thread copies, one partial per block. */
__global__ void first_above_reduce(double *a, double t, long long trips_i, int *d_partial_idx, double *d_partial_v, long long *d_partial_found)
{
    int idx{};
    double v{};
    long long cudaify_found = -1;
    for (long long t_i = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_i < trips_i;
         t_i += (long long)blockDim.x * gridDim.x) {
        int i = (int)t_i;
        if (a[i] > t && a[i] * a[i] < 2.0 * t * t) {
            idx = i;
            v = a[i] * 10.0;
            { cudaify_found = t_i; break; }
        }
    }
    { /* find-first: the earliest iteration whose test held wins, with what it set */
        const int cudaify_lane = threadIdx.x % 32, cudaify_warp = threadIdx.x / 32;
        for (int cudaify_shift = 16; cudaify_shift > 0; cudaify_shift /= 2) {
            long long cudaify_found_cudaify_found = cudaify_shfl_down(cudaify_found, cudaify_shift);
            int cudaify_found_idx = cudaify_shfl_down(idx, cudaify_shift);
            double cudaify_found_v = cudaify_shfl_down(v, cudaify_shift);
            if (cudaify_found_cudaify_found >= 0 && (cudaify_found < 0 || cudaify_found_cudaify_found < cudaify_found)) { cudaify_found = cudaify_found_cudaify_found; idx = cudaify_found_idx; v = cudaify_found_v; }
        }
        __shared__ long long cudaify_found_warp_cudaify_found[32];
        __shared__ int cudaify_found_warp_idx[32];
        __shared__ double cudaify_found_warp_v[32];
        __syncthreads();
        if (cudaify_lane == 0) {
            cudaify_found_warp_cudaify_found[cudaify_warp] = cudaify_found;
            cudaify_found_warp_idx[cudaify_warp] = idx;
            cudaify_found_warp_v[cudaify_warp] = v;
        }
        __syncthreads();
        if (cudaify_warp == 0) {
            if (cudaify_lane < (int)(blockDim.x / 32)) {
                cudaify_found = cudaify_found_warp_cudaify_found[cudaify_lane];
                idx = cudaify_found_warp_idx[cudaify_lane];
                v = cudaify_found_warp_v[cudaify_lane];
            } else {
                cudaify_found = -1;
            }
            for (int cudaify_shift = 16; cudaify_shift > 0; cudaify_shift /= 2) {
                long long cudaify_found_cudaify_found = cudaify_shfl_down(cudaify_found, cudaify_shift);
                int cudaify_found_idx = cudaify_shfl_down(idx, cudaify_shift);
                double cudaify_found_v = cudaify_shfl_down(v, cudaify_shift);
                if (cudaify_found_cudaify_found >= 0 && (cudaify_found < 0 || cudaify_found_cudaify_found < cudaify_found)) { cudaify_found = cudaify_found_cudaify_found; idx = cudaify_found_idx; v = cudaify_found_v; }
            }
        }
    }
    if (threadIdx.x == 0) {
        d_partial_idx[blockIdx.x] = idx;
        d_partial_v[blockIdx.x] = v;
        d_partial_found[blockIdx.x] = cudaify_found;
    }
}

/* the first index whose value passes a threshold, and the value there */
int first_above(int n, const double *a, double t, double *value) {
    int idx = -1;
    double v = 0.0;
    {
        /* cudaify: this reduction runs on the GPU as first_above_reduce */
        const long long trips_i = cudaify_trips(0, n, 1, 0);
        long long partial_found_at = -1; /* the first hit, if any */
        if (trips_i > 0) {
            double *d_a = NULL;
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_a, (size_t)(n) * sizeof(double)));
            CUDAIFY_CHECK(cudaMemcpy(d_a, a, (size_t)(n) * sizeof(double), cudaMemcpyHostToDevice));
            const unsigned int blocks = cudaify_blocks(trips_i, 256, 1024u);
            static cudaify_value_t<decltype(idx)> *d_partial_idx = NULL;
            if (d_partial_idx == NULL)
                CUDAIFY_CHECK(cudaMalloc((void **)&d_partial_idx, 1024 * sizeof(*d_partial_idx)));
            static cudaify_value_t<decltype(v)> *d_partial_v = NULL;
            if (d_partial_v == NULL)
                CUDAIFY_CHECK(cudaMalloc((void **)&d_partial_v, 1024 * sizeof(*d_partial_v)));
            static long long *d_partial_found = NULL;
            if (d_partial_found == NULL)
                CUDAIFY_CHECK(cudaMalloc((void **)&d_partial_found, 1024 * sizeof(*d_partial_found)));
            first_above_reduce<<<blocks, 256>>>(d_a, t, trips_i, d_partial_idx, d_partial_v, d_partial_found);
            CUDAIFY_CHECK(cudaGetLastError());
            cudaify_value_t<decltype(idx)> partial_idx[1024];
            CUDAIFY_CHECK(cudaMemcpy(partial_idx, d_partial_idx, blocks * sizeof(*d_partial_idx), cudaMemcpyDeviceToHost));
            cudaify_value_t<decltype(v)> partial_v[1024];
            CUDAIFY_CHECK(cudaMemcpy(partial_v, d_partial_v, blocks * sizeof(*d_partial_v), cudaMemcpyDeviceToHost));
            long long partial_found[1024];
            CUDAIFY_CHECK(cudaMemcpy(partial_found, d_partial_found, blocks * sizeof(*d_partial_found), cudaMemcpyDeviceToHost));
            {
                unsigned int partial_found_best = 0;
                for (unsigned int b = 0; b < blocks; b++) {
                    if (partial_found[b] >= 0 && (partial_found_at < 0 || partial_found[b] < partial_found_at)) {
                        partial_found_best = b;
                        partial_found_at = partial_found[b];
                    }
                }
                if (partial_found_at >= 0) {
                    idx = partial_idx[partial_found_best];
                    v = partial_v[partial_found_best];
                }
            }
            CUDAIFY_CHECK(cudaify_free(d_a));
        }
    }
    *value = v;
    return idx;
}

/* Reduction loop 'i' of position() (line 22) on : per-thread copies, one partial per block. */
__global__ void position_reduce(int *keys, int key, long long trips_i_2, long long *d_partial_found_2)
{
    long long cudaify_found_2 = -1;
    for (long long t_i_2 = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_i_2 < trips_i_2;
         t_i_2 += (long long)blockDim.x * gridDim.x) {
        long i = (long)t_i_2;
        if (keys[i] == key)
            { cudaify_found_2 = t_i_2; break; }
    }
    { /* find-first: the earliest iteration whose test held wins, with what it set */
        const int cudaify_lane = threadIdx.x % 32, cudaify_warp = threadIdx.x / 32;
        for (int cudaify_shift = 16; cudaify_shift > 0; cudaify_shift /= 2) {
            long long cudaify_found_2_cudaify_found_2 = cudaify_shfl_down(cudaify_found_2, cudaify_shift);
            if (cudaify_found_2_cudaify_found_2 >= 0 && (cudaify_found_2 < 0 || cudaify_found_2_cudaify_found_2 < cudaify_found_2)) { cudaify_found_2 = cudaify_found_2_cudaify_found_2; }
        }
        __shared__ long long cudaify_found_2_warp_cudaify_found_2[32];
        __syncthreads();
        if (cudaify_lane == 0) {
            cudaify_found_2_warp_cudaify_found_2[cudaify_warp] = cudaify_found_2;
        }
        __syncthreads();
        if (cudaify_warp == 0) {
            if (cudaify_lane < (int)(blockDim.x / 32)) {
                cudaify_found_2 = cudaify_found_2_warp_cudaify_found_2[cudaify_lane];
            } else {
                cudaify_found_2 = -1;
            }
            for (int cudaify_shift = 16; cudaify_shift > 0; cudaify_shift /= 2) {
                long long cudaify_found_2_cudaify_found_2 = cudaify_shfl_down(cudaify_found_2, cudaify_shift);
                if (cudaify_found_2_cudaify_found_2 >= 0 && (cudaify_found_2 < 0 || cudaify_found_2_cudaify_found_2 < cudaify_found_2)) { cudaify_found_2 = cudaify_found_2_cudaify_found_2; }
            }
        }
    }
    if (threadIdx.x == 0) {
        d_partial_found_2[blockIdx.x] = cudaify_found_2;
    }
}

/* the loop variable itself is the answer */
long position(long n, const int *keys, int key) {
    long i;
    {
        /* cudaify: this reduction runs on the GPU as position_reduce */
        const long long trips_i_2 = cudaify_trips(0, n, 1, 0);
        long long partial_found_2_at = -1; /* the first hit, if any */
        if (trips_i_2 > 0) {
            int *d_keys = NULL;
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_keys, (size_t)(n) * sizeof(int)));
            CUDAIFY_CHECK(cudaMemcpy(d_keys, keys, (size_t)(n) * sizeof(int), cudaMemcpyHostToDevice));
            const unsigned int blocks_2 = cudaify_blocks(trips_i_2, 256, 1024u);
            static long long *d_partial_found_2 = NULL;
            if (d_partial_found_2 == NULL)
                CUDAIFY_CHECK(cudaMalloc((void **)&d_partial_found_2, 1024 * sizeof(*d_partial_found_2)));
            position_reduce<<<blocks_2, 256>>>(d_keys, key, trips_i_2, d_partial_found_2);
            CUDAIFY_CHECK(cudaGetLastError());
            long long partial_found_2[1024];
            CUDAIFY_CHECK(cudaMemcpy(partial_found_2, d_partial_found_2, blocks_2 * sizeof(*d_partial_found_2), cudaMemcpyDeviceToHost));
            {
                unsigned int partial_found_2_best = 0;
                for (unsigned int b_2 = 0; b_2 < blocks_2; b_2++) {
                    if (partial_found_2[b_2] >= 0 && (partial_found_2_at < 0 || partial_found_2[b_2] < partial_found_2_at)) {
                        partial_found_2_best = b_2;
                        partial_found_2_at = partial_found_2[b_2];
                    }
                }
                if (partial_found_2_at >= 0) {
                }
            }
            CUDAIFY_CHECK(cudaify_free(d_keys));
        }
        i = (long)(0 + (partial_found_2_at >= 0 ? partial_found_2_at : trips_i_2));
    }
    return i;
}

int main(void) {
    int n = 6000;
    double *a = (double *)malloc(n * sizeof *a);
    int *keys = (int *)malloc(n * sizeof *keys);
    for (int i = 0; i < n; i++) {
        a[i] = (double)((i * 7919L) % 100003) / 1000.0;
        keys[i] = (int)((i * 104729L) % 65536);
    }
    double v;
    for (int r = 0; r < 4; r++) {
        int at = first_above(n, a, 99.2 + 0.2 * r, &v);
        printf("first above %d %.3f\n", at, v);
    }
    printf("never %d\n", first_above(n, a, 1e9, &v));
    printf("position %ld %ld %ld\n", position(n, keys, keys[4321]), position(n, keys, keys[n - 1]), position(n, keys, -5));
    free(a); free(keys);
    return 0;
}
