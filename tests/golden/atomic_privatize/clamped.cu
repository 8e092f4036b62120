/* ---- cudaify pattern includes ---- */
#include <string.h>
#include <math.h>
#include <type_traits>

/* Zeroed-then-updated bins (the zeroing moves to the device; per-warp copies when small,
   global atomics when large, the host's run past the zeroed bins) and updates added to
   what the caller holds (saved before the launch, put back when an index is outside). */
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

/* Irregular updates of count, weight in loop 'i' of clamped() (line 14): atomics on block-private copies in shared memory when they fit (one per warp, copies of them, when small), else on the device copy. */
__global__ void clamped_atomic(int *key, int lo, int limit, long long trips_i, int *count, long long extent_count, double *weight, long long extent_weight, int copies, int *d_outside)
{
    extern __shared__ unsigned long long cudaify_shared[]; /* 8-byte aligned */
    const size_t offset_count = 0;
    const size_t offset_weight = offset_count + cudaify_aligned((size_t)extent_count * sizeof(int));
    const size_t slab = offset_weight + cudaify_aligned((size_t)extent_weight * sizeof(double));
    int *local_count = NULL;
    double *local_weight = NULL;
    if (copies > 0) {
        unsigned char *mine = (unsigned char *)cudaify_shared +
            (size_t)((threadIdx.x / 32) % copies) * slab;
        local_count = (int *)(mine + offset_count);
        local_weight = (double *)(mine + offset_weight);
        for (long long k_2 = threadIdx.x; k_2 < (long long)(copies * slab / 8); k_2 += blockDim.x)
            cudaify_shared[k_2] = 0;
        __syncthreads();
    }
    for (long long t_i = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_i < trips_i;
         t_i += (long long)blockDim.x * gridDim.x) {
        int i = (int)t_i;
        int k = key[i] - lo;
        if (k < 0)
            k = 0;
        if (k >= limit)
            k = limit - 1; /* limit > nbins: past the zeroed bins, the host's run */
        cudaify_add_at(count, local_count, extent_count, (long long)(k), (1), d_outside);
        cudaify_add_at(weight, local_weight, extent_weight, (long long)(k), (0.5 * (double)(key[i] % 7)), d_outside);
    }
    if (copies > 0) {
        __syncthreads();
        for (long long k_2 = threadIdx.x; k_2 < extent_count; k_2 += blockDim.x) {
            unsigned long long sum = 0;
            for (int copy = 0; copy < copies; copy++)
                sum += ((const int *)((const unsigned char *)cudaify_shared +
                    (size_t)copy * slab + offset_count))[k_2];
            if (sum != 0)
                cudaify_atomic_add(&count[k_2], (int)sum);
        }
        for (long long k_2 = threadIdx.x; k_2 < extent_weight; k_2 += blockDim.x) {
            double sum = 0;
            for (int copy = 0; copy < copies; copy++)
                sum += ((const double *)((const unsigned char *)cudaify_shared +
                    (size_t)copy * slab + offset_weight))[k_2];
            if (sum != 0)
                cudaify_atomic_add(&weight[k_2], (double)sum);
        }
    }
}

/* zeroed right before: the zeroing moves to the device; small bins: per-warp copies */
void clamped(int n, const int *key, int lo, int nbins, int limit, int *count, double *weight)
{
    {
        /* cudaify: these updates run on the GPU as clamped_atomic */
        const long long trips_i = cudaify_trips(0, n, 1, 0);
        int outside = !(trips_i > 0 && (nbins) > 0);
        if (!outside) {
            int *d_key = NULL;
            int *d_count = NULL;
            double *d_weight = NULL;
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_key, (size_t)(n) * sizeof(int)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_count, (size_t)(nbins) * sizeof(int)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_weight, (size_t)(nbins) * sizeof(double)));
            CUDAIFY_CHECK(cudaMemcpy(d_key, key, (size_t)(n) * sizeof(int), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_count, count, (size_t)(nbins) * sizeof(int), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_weight, weight, (size_t)(nbins) * sizeof(double), cudaMemcpyHostToDevice));
            static int *d_outside = NULL; /* kept for later calls */
            if (d_outside == NULL)
                CUDAIFY_CHECK(cudaMalloc((void **)&d_outside, sizeof(int)));
            CUDAIFY_CHECK(cudaMemsetAsync(d_outside, 0, sizeof(int)));
            CUDAIFY_CHECK(cudaMemsetAsync(d_count, 0, (size_t)(nbins) * sizeof(int)));
            CUDAIFY_CHECK(cudaMemsetAsync(d_weight, 0, (size_t)(nbins) * sizeof(double)));
            const size_t shared_bytes = cudaify_aligned((size_t)(nbins) * sizeof(int)) + cudaify_aligned((size_t)(nbins) * sizeof(double));
            const size_t fit = 16384 / shared_bytes;
            const int copies = shared_bytes > 49152 ? 0 : fit >= 8 ? 8 : fit >= 1 ? (int)fit : 1;
            const unsigned int blocks = cudaify_blocks(trips_i, 256, 1024u);
            clamped_atomic<<<blocks, 256, (size_t)copies * shared_bytes>>>(d_key, lo, limit, trips_i, d_count, (long long)(nbins), d_weight, (long long)(nbins), copies, d_outside);
            CUDAIFY_CHECK(cudaGetLastError());
            CUDAIFY_CHECK(cudaMemcpy(&outside, d_outside, sizeof(int), cudaMemcpyDeviceToHost));
            CUDAIFY_CHECK(cudaMemcpy(count, d_count, (size_t)(nbins) * sizeof(int), cudaMemcpyDeviceToHost));
            CUDAIFY_CHECK(cudaMemcpy(weight, d_weight, (size_t)(nbins) * sizeof(double), cudaMemcpyDeviceToHost));
            CUDAIFY_CHECK(cudaify_free(d_key));
            CUDAIFY_CHECK(cudaify_free(d_count));
            CUDAIFY_CHECK(cudaify_free(d_weight));
        }
        if (outside) {
            /* cudaify: host fallback: no work for the GPU, or an index fell outside the copied range */
            for (int b = 0; b < nbins; b++) {
                count[b] = 0;
                weight[b] = 0.0;
            }
            for (int i = 0; i < n; i++) {
                int k = key[i] - lo;
                if (k < 0)
                    k = 0;
                if (k >= limit)
                    k = limit - 1; /* limit > nbins: past the zeroed bins, the host's run */
                count[k]++;
                weight[k] += 0.5 * (double)(key[i] % 7);
            }
        }
    }
}

/* Irregular updates of hist in loop 'i' of accumulate() (line 30): atomics on block-private copies in shared memory when they fit (one per warp, copies_2 of them, when small), else on the device copy. */
__global__ void accumulate_atomic(int *key, int mod, long long trips_i_2, long long *hist, long long extent_hist, int copies_2, int *d_outside_2)
{
    extern __shared__ unsigned long long cudaify_shared_2[]; /* 8-byte aligned */
    const size_t offset_hist = 0;
    const size_t slab_2 = offset_hist + cudaify_aligned((size_t)extent_hist * sizeof(long long));
    long long *local_hist = NULL;
    if (copies_2 > 0) {
        unsigned char *mine_2 = (unsigned char *)cudaify_shared_2 +
            (size_t)((threadIdx.x / 32) % copies_2) * slab_2;
        local_hist = (long long *)(mine_2 + offset_hist);
        for (long long k_3 = threadIdx.x; k_3 < (long long)(copies_2 * slab_2 / 8); k_3 += blockDim.x)
            cudaify_shared_2[k_3] = 0;
        __syncthreads();
    }
    for (long long t_i_2 = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_i_2 < trips_i_2;
         t_i_2 += (long long)blockDim.x * gridDim.x) {
        int i = (int)t_i_2;
        cudaify_add_at(hist, local_hist, extent_hist, (long long)(key[i] % mod), (2), d_outside_2);
    }
    if (copies_2 > 0) {
        __syncthreads();
        for (long long k_3 = threadIdx.x; k_3 < extent_hist; k_3 += blockDim.x) {
            unsigned long long sum_2 = 0;
            for (int copy_2 = 0; copy_2 < copies_2; copy_2++)
                sum_2 += ((const long long *)((const unsigned char *)cudaify_shared_2 +
                    (size_t)copy_2 * slab_2 + offset_hist))[k_3];
            if (sum_2 != 0)
                cudaify_atomic_add(&hist[k_3], (long long)sum_2);
        }
    }
}

/* accumulates into what the caller holds: saved and put back when an index is outside */
void accumulate(int n, const int *key, int nbins, int mod, long long *hist)
{
    for (int b = 0; b < nbins; b++)
        hist[b] = hist[b] / 2;
    {
        /* cudaify: these updates run on the GPU as accumulate_atomic */
        const long long trips_i_2 = cudaify_trips(0, n, 1, 0);
        int outside_2 = !(trips_i_2 > 0 && (nbins) > 0);
        if (!outside_2) {
            int *d_key_2 = NULL;
            long long *d_hist = NULL;
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_key_2, (size_t)(n) * sizeof(int)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_hist, (size_t)(nbins) * sizeof(long long)));
            CUDAIFY_CHECK(cudaMemcpy(d_key_2, key, (size_t)(n) * sizeof(int), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_hist, hist, (size_t)(nbins) * sizeof(long long), cudaMemcpyHostToDevice));
            static int *d_outside_2 = NULL; /* kept for later calls */
            if (d_outside_2 == NULL)
                CUDAIFY_CHECK(cudaMalloc((void **)&d_outside_2, sizeof(int)));
            CUDAIFY_CHECK(cudaMemsetAsync(d_outside_2, 0, sizeof(int)));
            const size_t saved_bytes_2 = cudaify_aligned((size_t)(nbins) * sizeof(long long));
            static char *d_saved_2 = NULL; /* kept for later calls */
            static size_t saved_room_2 = 0;
            if (saved_room_2 < saved_bytes_2) {
                if (d_saved_2 != NULL)
                    CUDAIFY_CHECK(cudaFree(d_saved_2));
                CUDAIFY_CHECK(cudaMalloc((void **)&d_saved_2, saved_bytes_2));
                saved_room_2 = saved_bytes_2;
            }
            CUDAIFY_CHECK(cudaMemcpyAsync(d_saved_2, d_hist, (size_t)(nbins) * sizeof(long long), cudaMemcpyDeviceToDevice));
            const size_t shared_bytes_2 = cudaify_aligned((size_t)(nbins) * sizeof(long long));
            const size_t fit_2 = 16384 / shared_bytes_2;
            const int copies_2 = shared_bytes_2 > 49152 ? 0 : fit_2 >= 8 ? 8 : fit_2 >= 1 ? (int)fit_2 : 1;
            const unsigned int blocks_2 = cudaify_blocks(trips_i_2, 256, 1024u);
            accumulate_atomic<<<blocks_2, 256, (size_t)copies_2 * shared_bytes_2>>>(d_key_2, mod, trips_i_2, d_hist, (long long)(nbins), copies_2, d_outside_2);
            CUDAIFY_CHECK(cudaGetLastError());
            CUDAIFY_CHECK(cudaMemcpy(&outside_2, d_outside_2, sizeof(int), cudaMemcpyDeviceToHost));
            if (outside_2) { /* the host runs the loop on the values it had */
                CUDAIFY_CHECK(cudaMemcpyAsync(d_hist, d_saved_2, (size_t)(nbins) * sizeof(long long), cudaMemcpyDeviceToDevice));
            }
            CUDAIFY_CHECK(cudaMemcpy(hist, d_hist, (size_t)(nbins) * sizeof(long long), cudaMemcpyDeviceToHost));
            CUDAIFY_CHECK(cudaify_free(d_key_2));
            CUDAIFY_CHECK(cudaify_free(d_hist));
        }
        if (outside_2) {
            /* cudaify: host fallback: no work for the GPU, or an index fell outside the copied range */
            for (int i = 0; i < n; i++)
                hist[key[i] % mod] += 2;
        }
    }
}

int main(void)
{
    int n = 6000, most = 20000;
    int *key = (int *)malloc(sizeof(int) * n);
    int *count = (int *)malloc(sizeof(int) * (most + 1));
    double *weight = (double *)malloc(sizeof(double) * (most + 1));
    long long *hist = (long long *)malloc(sizeof(long long) * (most + 1));
    unsigned int state = 5u;
    for (int i = 0; i < n; i++) {
        state = state * 1664525u + 1013904223u;
        key[i] = (int)((state >> 8) % 20000u);
    }
    for (int b = 0; b <= most; b++)
        hist[b] = b;
    for (int r = 0; r < 4; r++) {
        int nbins = r == 1 ? most : r == 3 ? 500 : 64;
        int lo = r == 3 ? 100 : 0;
        clamped(n, key, lo, nbins, r == 2 ? nbins + 1 : nbins, count, weight);
        long long check = 0;
        double total = 0.0;
        for (int b = 0; b < nbins; b++) {
            check += (long long)(b % 13 + 1) * count[b];
            total += weight[b];
        }
        printf("clamped %d: check=%lld first=%d last=%d total=%.6e\n", r, check, count[0],
               count[nbins - 1], total);
    }
    for (int r = 0; r < 3; r++) {
        int nbins = r == 1 ? most : 100;
        accumulate(n, key, nbins, r == 2 ? nbins + 1 : nbins, hist);
        long long check = 0;
        for (int b = 0; b <= most; b++)
            check += (long long)(b % 11 + 1) * hist[b];
        printf("accumulate %d: check=%lld h0=%lld h99=%lld\n", r, check, hist[0], hist[99]);
    }
    free(key);
    free(count);
    free(weight);
    free(hist);
    return 0;
}
