/* ---- cudaify pattern includes ---- */
#include <string.h>
#include <math.h>
#include <type_traits>

/* Loops for the segmented method: segment sums over CSR offsets (empty segments too), a
   row maximum then a division, argmax (the first of equal values) and argmin with <= over
   an inclusive bound (the last of equal values), a bitwise or with a step of 2, and loops
   it must leave as they are. */
#include <cstdio>
#include <vector>

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

/* ---- cudaify warp helpers ---- */
/* A shuffle of any value of at most 8 bytes, through an integer of its size: `shuffle`
   is called with that integer and returns the other lane's. */
template <class CudaifyT, class CudaifyShuffle>
__device__ CudaifyT cudaify_shuffled(CudaifyT value, CudaifyShuffle shuffle)
{
    static_assert(sizeof(CudaifyT) <= 8, "cudaify: shuffled values are at most 8 bytes");
    typedef typename std::conditional<sizeof(CudaifyT) <= 4, int, long long>::type Bits;
    Bits bits = 0;
    CudaifyT out;
    memcpy(&bits, &value, sizeof(CudaifyT));
    bits = shuffle(bits);
    memcpy(&out, &bits, sizeof(CudaifyT));
    return out;
}
/* __shfl_xor_sync and __shfl_sync of such a value. */
template <class CudaifyT>
__device__ CudaifyT cudaify_shfl_xor(CudaifyT value, int mask)
{
    return cudaify_shuffled(
        value, [mask](auto bits) { return __shfl_xor_sync(0xffffffffu, bits, mask); });
}
template <class CudaifyT>
__device__ CudaifyT cudaify_shfl_from(CudaifyT value, int lane)
{
    return cudaify_shuffled(
        value, [lane](auto bits) { return __shfl_sync(0xffffffffu, bits, lane); });
}

/* The warp's combination of its lanes' values, the same in every lane (lane 0's: an
   operator that is not commutative on some values, a minimum meeting a NaN, still
   leaves one value). Every lane of the warp calls it. */
template <class CudaifyT, class CudaifyOp>
__device__ CudaifyT cudaify_warp_allreduce(CudaifyT value, CudaifyOp op)
{
    for (int mask = 16; mask > 0; mask /= 2)
        value = op(value, cudaify_shfl_xor(value, mask));
    return cudaify_shfl_from(value, 0);
}

/* Each lane's inclusive prefix of its lanes' values, in lane order (Hillis-Steele). Every
   lane of the warp calls it. */
template <class CudaifyT, class CudaifyOp>
__device__ CudaifyT cudaify_warp_inclusive_scan(CudaifyT value, CudaifyOp op)
{
    const int lane = threadIdx.x % 32;
    for (int distance = 1; distance < 32; distance *= 2) {
        const CudaifyT before = cudaify_shfl_from(value, lane >= distance ? lane - distance : lane);
        if (lane >= distance)
            value = op(before, value);
    }
    return value;
}

/* Loop nest 's' of segment_sums() (line 11): one warp per iteration, its lanes sharing the inner loops. */
__global__ void segment_sums_kernel(int *offsets, double *values, double *sums, long long trips_s)
{
    const int cudaify_lane = threadIdx.x % 32;
    for (long long t_s = (blockIdx.x * (long long)blockDim.x + threadIdx.x) / 32; t_s < trips_s;
         t_s += (long long)blockDim.x * gridDim.x / 32) {
        int s = (int)t_s;
        double acc = 0.5;
        { /* the warp's lanes share loop 'j' (line 13); they combine acc (+) */
            const long long cudaify_first_j = (long long)(offsets[s]);
            double cudaify_lanes_acc;
            {
                double acc = cudaify_plus::identity<double>();
                for (long long cudaify_t_j = cudaify_lane;; cudaify_t_j += 32) {
                    int j = (int)(cudaify_first_j + cudaify_t_j);
                    if (!(j < offsets[s + 1]))
                        break;
                    acc += values[j];
                }
                cudaify_lanes_acc = cudaify_warp_allreduce(acc, cudaify_plus());
            }
            acc = cudaify_plus()(acc, cudaify_lanes_acc);
        }
        __syncwarp();
        if (cudaify_lane == 0)
            sums[s] = acc;
        __syncwarp();
    }
}

void segment_sums(const std::vector<double> &values, const std::vector<int> &offsets,
                  std::vector<double> &sums, int segments)
{
    {
        /* cudaify: this loop nest runs on the GPU as segment_sums_kernel */
        const long long trips_s = cudaify_trips(0, segments, 1, 0);
        if (trips_s > 0) {
            int *d_offsets = NULL;
            double *d_values = NULL;
            double *d_sums = NULL;
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_offsets, (size_t)(offsets.size()) * sizeof(int)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_values, (size_t)(values.size()) * sizeof(double)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_sums, (size_t)(sums.size()) * sizeof(double)));
            CUDAIFY_CHECK(cudaMemcpy(d_offsets, offsets.data(), (size_t)(offsets.size()) * sizeof(int), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_values, values.data(), (size_t)(values.size()) * sizeof(double), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_sums, sums.data(), (size_t)(sums.size()) * sizeof(double), cudaMemcpyHostToDevice));
            const dim3 block(256);
            const dim3 grid(cudaify_blocks(trips_s, 8, 2147483647u));
            segment_sums_kernel<<<grid, block>>>(d_offsets, d_values, d_sums, trips_s);
            CUDAIFY_CHECK(cudaGetLastError());
            CUDAIFY_CHECK(cudaMemcpy(sums.data(), d_sums, (size_t)(sums.size()) * sizeof(double), cudaMemcpyDeviceToHost));
            CUDAIFY_CHECK(cudaify_free(d_offsets));
            CUDAIFY_CHECK(cudaify_free(d_values));
            CUDAIFY_CHECK(cudaify_free(d_sums));
        }
    }
}

/* Loop nest 'r' of normalise_rows() (line 21): one warp per iteration, its lanes sharing the inner loops. */
__global__ void normalise_rows_kernel(float *x, float *y, int cols, long long trips_r)
{
    const int cudaify_lane = threadIdx.x % 32;
    for (long long t_r = (blockIdx.x * (long long)blockDim.x + threadIdx.x) / 32; t_r < trips_r;
         t_r += (long long)blockDim.x * gridDim.x / 32) {
        int r = (int)t_r;
        float top = x[r * cols];
        { /* the warp's lanes share loop 'c' (line 23); they combine top (max) */
            const long long cudaify_first_c = (long long)(1);
            float cudaify_lanes_top;
            {
                float top = cudaify_maximum::identity<float>();
                for (long long cudaify_t_c = cudaify_lane;; cudaify_t_c += 32) {
                    int c = (int)(cudaify_first_c + cudaify_t_c);
                    if (!(c < cols))
                        break;
                    if (x[r * cols + c] > top)
                        top = x[r * cols + c];
                }
                cudaify_lanes_top = cudaify_warp_allreduce(top, cudaify_maximum());
            }
            top = cudaify_maximum()(top, cudaify_lanes_top);
        }
        __syncwarp();
        const float inverse = 1.0f / top;
        { /* the warp's lanes share loop 'c' (line 27) */
            const long long cudaify_first_c = (long long)(0);
            for (long long cudaify_t_c = cudaify_lane;; cudaify_t_c += 32) {
                int c = (int)(cudaify_first_c + cudaify_t_c);
                if (!(c < cols))
                    break;
                y[r * cols + c] = x[r * cols + c] * inverse;
            }
        }
        __syncwarp();
    }
}

void normalise_rows(const std::vector<float> &x, std::vector<float> &y, int rows, int cols)
{
    {
        /* cudaify: this loop nest runs on the GPU as normalise_rows_kernel */
        const long long trips_r = cudaify_trips(0, rows, 1, 0);
        if (trips_r > 0) {
            float *d_x = NULL;
            float *d_y = NULL;
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_x, (size_t)(x.size()) * sizeof(float)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_y, (size_t)(y.size()) * sizeof(float)));
            CUDAIFY_CHECK(cudaMemcpy(d_x, x.data(), (size_t)(x.size()) * sizeof(float), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_y, y.data(), (size_t)(y.size()) * sizeof(float), cudaMemcpyHostToDevice));
            const dim3 block(256);
            const dim3 grid(cudaify_blocks(trips_r, 8, 2147483647u));
            normalise_rows_kernel<<<grid, block>>>(d_x, d_y, cols, trips_r);
            CUDAIFY_CHECK(cudaGetLastError());
            CUDAIFY_CHECK(cudaMemcpy(y.data(), d_y, (size_t)(y.size()) * sizeof(float), cudaMemcpyDeviceToHost));
            CUDAIFY_CHECK(cudaify_free(d_x));
            CUDAIFY_CHECK(cudaify_free(d_y));
        }
    }
}

/* Loop nest 'r' of choices() (line 35): one warp per iteration, its lanes sharing the inner loops. */
__global__ void choices_kernel(int *scores, int *first_max, int *last_min, int cols, long long trips_r)
{
    const int cudaify_lane = threadIdx.x % 32;
    for (long long t_r = (blockIdx.x * (long long)blockDim.x + threadIdx.x) / 32; t_r < trips_r;
         t_r += (long long)blockDim.x * gridDim.x / 32) {
        int r = (int)t_r;
        int best = scores[r * cols], at = 0;
        { /* the warp's lanes share loop 'c' (line 37); they combine best (argmax) */
            const long long cudaify_first_c = (long long)(1);
            int cudaify_lanes_best;
            int cudaify_lanes_at;
            long long cudaify_lanes_at_best;
            {
                int best = cudaify_maximum::identity<int>();
                int at{};
                long long cudaify_at_best = -1;
                for (long long cudaify_t_c = cudaify_lane;; cudaify_t_c += 32) {
                    int c = (int)(cudaify_first_c + cudaify_t_c);
                    if (!(c < cols))
                        break;
                    if (scores[r * cols + c] > best) {
                        best = scores[r * cols + c];
                        at = c; cudaify_at_best = cudaify_t_c;
                    }
                }
                for (int cudaify_at_best_mask = 16; cudaify_at_best_mask > 0; cudaify_at_best_mask /= 2) {
                    const long long cudaify_at_best_other0 = cudaify_shfl_xor(cudaify_at_best, cudaify_at_best_mask);
                    const int cudaify_at_best_other1 = cudaify_shfl_xor(best, cudaify_at_best_mask);
                    const int cudaify_at_best_other2 = cudaify_shfl_xor(at, cudaify_at_best_mask);
                    if (cudaify_at_best_other0 >= 0 && (cudaify_at_best < 0 || cudaify_at_best_other1 > best || (cudaify_at_best_other1 == best && cudaify_at_best_other0 < cudaify_at_best))) { cudaify_at_best = cudaify_at_best_other0; best = cudaify_at_best_other1; at = cudaify_at_best_other2; }
                }
                cudaify_at_best = cudaify_shfl_from(cudaify_at_best, 0);
                best = cudaify_shfl_from(best, 0);
                at = cudaify_shfl_from(at, 0);
                cudaify_lanes_at_best = cudaify_at_best;
                cudaify_lanes_best = best;
                cudaify_lanes_at = at;
            }
            if (cudaify_lanes_at_best >= 0 && cudaify_lanes_best > best) {
                best = cudaify_lanes_best;
                at = cudaify_lanes_at;
            }
        }
        __syncwarp();
        int low = 5, where = -1;
        { /* the warp's lanes share loop 'c' (line 44); they combine low (argmin) */
            const long long cudaify_first_c = (long long)(0);
            int cudaify_lanes_low;
            int cudaify_lanes_where;
            long long cudaify_lanes_at_low;
            {
                int low = cudaify_minimum::identity<int>();
                int where{};
                long long cudaify_at_low = -1;
                for (long long cudaify_t_c = cudaify_lane;; cudaify_t_c += 32) {
                    int c = (int)(cudaify_first_c + cudaify_t_c);
                    if (!(c <= cols - 1))
                        break;
                    if (scores[r * cols + c] <= low) {
                        low = scores[r * cols + c];
                        where = c; cudaify_at_low = cudaify_t_c;
                    }
                }
                for (int cudaify_at_low_mask = 16; cudaify_at_low_mask > 0; cudaify_at_low_mask /= 2) {
                    const long long cudaify_at_low_other0 = cudaify_shfl_xor(cudaify_at_low, cudaify_at_low_mask);
                    const int cudaify_at_low_other1 = cudaify_shfl_xor(low, cudaify_at_low_mask);
                    const int cudaify_at_low_other2 = cudaify_shfl_xor(where, cudaify_at_low_mask);
                    if (cudaify_at_low_other0 >= 0 && (cudaify_at_low < 0 || cudaify_at_low_other1 < low || (cudaify_at_low_other1 == low && cudaify_at_low_other0 > cudaify_at_low))) { cudaify_at_low = cudaify_at_low_other0; low = cudaify_at_low_other1; where = cudaify_at_low_other2; }
                }
                cudaify_at_low = cudaify_shfl_from(cudaify_at_low, 0);
                low = cudaify_shfl_from(low, 0);
                where = cudaify_shfl_from(where, 0);
                cudaify_lanes_at_low = cudaify_at_low;
                cudaify_lanes_low = low;
                cudaify_lanes_where = where;
            }
            if (cudaify_lanes_at_low >= 0 && cudaify_lanes_low <= low) {
                low = cudaify_lanes_low;
                where = cudaify_lanes_where;
            }
        }
        __syncwarp();
        if (cudaify_lane == 0)
            first_max[r] = at * 100 + best;
        __syncwarp();
        if (cudaify_lane == 0)
            last_min[r] = where * 100 + low;
        __syncwarp();
    }
}

void choices(const std::vector<int> &scores, int rows, int cols, std::vector<int> &first_max,
             std::vector<int> &last_min)
{
    {
        /* cudaify: this loop nest runs on the GPU as choices_kernel */
        const long long trips_r = cudaify_trips(0, rows, 1, 0);
        if (trips_r > 0) {
            int *d_scores = NULL;
            int *d_first_max = NULL;
            int *d_last_min = NULL;
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_scores, (size_t)(scores.size()) * sizeof(int)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_first_max, (size_t)(first_max.size()) * sizeof(int)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_last_min, (size_t)(last_min.size()) * sizeof(int)));
            CUDAIFY_CHECK(cudaMemcpy(d_scores, scores.data(), (size_t)(scores.size()) * sizeof(int), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_first_max, first_max.data(), (size_t)(first_max.size()) * sizeof(int), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_last_min, last_min.data(), (size_t)(last_min.size()) * sizeof(int), cudaMemcpyHostToDevice));
            const dim3 block(256);
            const dim3 grid(cudaify_blocks(trips_r, 8, 2147483647u));
            choices_kernel<<<grid, block>>>(d_scores, d_first_max, d_last_min, cols, trips_r);
            CUDAIFY_CHECK(cudaGetLastError());
            CUDAIFY_CHECK(cudaMemcpy(first_max.data(), d_first_max, (size_t)(first_max.size()) * sizeof(int), cudaMemcpyDeviceToHost));
            CUDAIFY_CHECK(cudaMemcpy(last_min.data(), d_last_min, (size_t)(last_min.size()) * sizeof(int), cudaMemcpyDeviceToHost));
            CUDAIFY_CHECK(cudaify_free(d_scores));
            CUDAIFY_CHECK(cudaify_free(d_first_max));
            CUDAIFY_CHECK(cudaify_free(d_last_min));
        }
    }
}

/* Loop nest 'r' of even_bits() (line 57): one warp per iteration, its lanes sharing the inner loops. */
__global__ void even_bits_kernel(unsigned int *words, unsigned int *out, int cols, long long trips_r)
{
    const int cudaify_lane = threadIdx.x % 32;
    for (long long t_r = (blockIdx.x * (long long)blockDim.x + threadIdx.x) / 32; t_r < trips_r;
         t_r += (long long)blockDim.x * gridDim.x / 32) {
        int r = (int)t_r;
        unsigned mask = 0u;
        { /* the warp's lanes share loop 'c' (line 59); they combine mask (|) */
            const long long cudaify_first_c = (long long)(0);
            unsigned cudaify_lanes_mask;
            {
                unsigned mask = cudaify_bit_or::identity<unsigned>();
                for (long long cudaify_t_c = cudaify_lane;; cudaify_t_c += 32) {
                    int c = (int)(cudaify_first_c + cudaify_t_c * 2);
                    if (!(c < cols))
                        break;
                    mask |= words[r * cols + c];
                }
                cudaify_lanes_mask = cudaify_warp_allreduce(mask, cudaify_bit_or());
            }
            mask = cudaify_bit_or()(mask, cudaify_lanes_mask);
        }
        __syncwarp();
        if (cudaify_lane == 0)
            out[r] = mask;
        __syncwarp();
    }
}

void even_bits(const unsigned *words, unsigned *out, int rows, int cols)
{
    {
        /* cudaify: this loop nest runs on the GPU as even_bits_kernel */
        const long long trips_r = cudaify_trips(0, rows, 1, 0);
        if (trips_r > 0) {
            unsigned int *d_words = NULL;
            unsigned int *d_out = NULL;
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_words, (size_t)((((long long)rows - 1)) * (long long)cols + ((((long long)cols % 2) + (long long)cols) - 2) + 1) * sizeof(unsigned int)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_out, (size_t)(rows) * sizeof(unsigned int)));
            CUDAIFY_CHECK(cudaMemcpy(d_words, words, (size_t)((((long long)rows - 1)) * (long long)cols + ((((long long)cols % 2) + (long long)cols) - 2) + 1) * sizeof(unsigned int), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_out, out, (size_t)(rows) * sizeof(unsigned int), cudaMemcpyHostToDevice));
            const dim3 block(256);
            const dim3 grid(cudaify_blocks(trips_r, 8, 2147483647u));
            even_bits_kernel<<<grid, block>>>(d_words, d_out, cols, trips_r);
            CUDAIFY_CHECK(cudaGetLastError());
            CUDAIFY_CHECK(cudaMemcpy(out, d_out, (size_t)(rows) * sizeof(unsigned int), cudaMemcpyDeviceToHost));
            CUDAIFY_CHECK(cudaify_free(d_words));
            CUDAIFY_CHECK(cudaify_free(d_out));
        }
    }
}

/* Loop nest 'r' of decay() (line 68): one thread per iteration. */
__global__ void decay_kernel(double *x, double *y, int cols, long long trips_r)
{
    for (long long t_r = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_r < trips_r;
         t_r += (long long)blockDim.x * gridDim.x) {
        int r = (int)t_r;
        double run = 0.0;
        for (int c = 0; c < cols; c++)
            run = run * 0.5 + x[r * cols + c];
        y[r] = run;
    }
}

/* left alone: the inner loop carries a value that is no reduction */
void decay(const double *x, double *y, int rows, int cols)
{
    {
        /* cudaify: this loop nest runs on the GPU as decay_kernel */
        const long long trips_r = cudaify_trips(0, rows, 1, 0);
        if (trips_r > 0) {
            double *d_x = NULL;
            double *d_y = NULL;
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_x, (size_t)((long long)cols*(long long)rows) * sizeof(double)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_y, (size_t)(rows) * sizeof(double)));
            CUDAIFY_CHECK(cudaMemcpy(d_x, x, (size_t)((long long)cols*(long long)rows) * sizeof(double), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_y, y, (size_t)(rows) * sizeof(double), cudaMemcpyHostToDevice));
            const dim3 block(256);
            const dim3 grid(cudaify_blocks(cudaify_rows(trips_r, 1), 256, 2147483647u));
            decay_kernel<<<grid, block>>>(d_x, d_y, cols, trips_r);
            CUDAIFY_CHECK(cudaGetLastError());
            CUDAIFY_CHECK(cudaMemcpy(y, d_y, (size_t)(rows) * sizeof(double), cudaMemcpyDeviceToHost));
            CUDAIFY_CHECK(cudaify_free(d_x));
            CUDAIFY_CHECK(cudaify_free(d_y));
        }
    }
}

__host__ __device__ double weight(int r) { return 1.0 + 0.125 * (r % 4); }

/* Loop nest 'r' of weighted() (line 81): one thread per iteration. */
__global__ void weighted_kernel(double *x, double *y, int cols, long long trips_r)
{
    for (long long t_r = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_r < trips_r;
         t_r += (long long)blockDim.x * gridDim.x) {
        int r = (int)t_r;
        const double w = weight(r);
        double sum = 0.0;
        for (int c = 0; c < cols; c++)
            sum += x[r * cols + c];
        y[r] = w * sum;
    }
}

/* left alone: every lane would call a function of the program */
void weighted(const double *x, double *y, int rows, int cols)
{
    {
        /* cudaify: this loop nest runs on the GPU as weighted_kernel */
        const long long trips_r = cudaify_trips(0, rows, 1, 0);
        if (trips_r > 0) {
            double *d_x = NULL;
            double *d_y = NULL;
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_x, (size_t)((long long)cols*(long long)rows) * sizeof(double)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_y, (size_t)(rows) * sizeof(double)));
            CUDAIFY_CHECK(cudaMemcpy(d_x, x, (size_t)((long long)cols*(long long)rows) * sizeof(double), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_y, y, (size_t)(rows) * sizeof(double), cudaMemcpyHostToDevice));
            const dim3 block(256);
            const dim3 grid(cudaify_blocks(cudaify_rows(trips_r, 1), 256, 2147483647u));
            weighted_kernel<<<grid, block>>>(d_x, d_y, cols, trips_r);
            CUDAIFY_CHECK(cudaGetLastError());
            CUDAIFY_CHECK(cudaMemcpy(y, d_y, (size_t)(rows) * sizeof(double), cudaMemcpyDeviceToHost));
            CUDAIFY_CHECK(cudaify_free(d_x));
            CUDAIFY_CHECK(cudaify_free(d_y));
        }
    }
}

/* Loop nest 'r' of row_prefix() (line 94): one warp per iteration, its lanes sharing the inner loops. */
__global__ void row_prefix_kernel(double *x, double *y, int cols, long long trips_r)
{
    const int cudaify_lane = threadIdx.x % 32;
    for (long long t_r = (blockIdx.x * (long long)blockDim.x + threadIdx.x) / 32; t_r < trips_r;
         t_r += (long long)blockDim.x * gridDim.x / 32) {
        int r = (int)t_r;
        double run = 0.25 * r;
        { /* the warp's lanes share scan loop 'c' (line 96), 32 iterations at a time: an inclusive scan of run (+) */
            const long long cudaify_first_c = (long long)(0);
            for (long long cudaify_tile_c = 0;; cudaify_tile_c += 32) {
                int c = (int)(cudaify_first_c + (cudaify_tile_c + cudaify_lane));
                const bool cudaify_in_c = c < cols;
                if (__ballot_sync(0xffffffffu, cudaify_in_c) == 0u)
                    break;
                double cudaify_term_run = cudaify_plus::identity<double>();
                if (cudaify_in_c) {
                    const double half = x[r * cols + c] * 0.5;
                    cudaify_term_run = half;
                }
                const double cudaify_prefix_run = cudaify_warp_inclusive_scan(cudaify_term_run, cudaify_plus());
                const double cudaify_value_run = cudaify_plus()(run, cudaify_prefix_run);
                if (cudaify_in_c) {
                    const double run = cudaify_value_run;
                    const double half = x[r * cols + c] * 0.5;
                    y[r * cols + c] = run;
                }
                run = cudaify_plus()(run, cudaify_shfl_from(cudaify_prefix_run, 31));
            }
        }
        __syncwarp();
    }
}

/* scans per row: inclusive with a local term; exclusive xor; a store of a value of the sum;
   and one that stores twice (left alone) */
void row_prefix(const std::vector<double> &x, std::vector<double> &y, int rows, int cols)
{
    {
        /* cudaify: this loop nest runs on the GPU as row_prefix_kernel */
        const long long trips_r = cudaify_trips(0, rows, 1, 0);
        if (trips_r > 0) {
            double *d_x = NULL;
            double *d_y = NULL;
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_x, (size_t)(x.size()) * sizeof(double)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_y, (size_t)(y.size()) * sizeof(double)));
            CUDAIFY_CHECK(cudaMemcpy(d_x, x.data(), (size_t)(x.size()) * sizeof(double), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_y, y.data(), (size_t)(y.size()) * sizeof(double), cudaMemcpyHostToDevice));
            const dim3 block(256);
            const dim3 grid(cudaify_blocks(trips_r, 8, 2147483647u));
            row_prefix_kernel<<<grid, block>>>(d_x, d_y, cols, trips_r);
            CUDAIFY_CHECK(cudaGetLastError());
            CUDAIFY_CHECK(cudaMemcpy(y.data(), d_y, (size_t)(y.size()) * sizeof(double), cudaMemcpyDeviceToHost));
            CUDAIFY_CHECK(cudaify_free(d_x));
            CUDAIFY_CHECK(cudaify_free(d_y));
        }
    }
}

/* Loop nest 'r' of row_xor_before() (line 107): one warp per iteration, its lanes sharing the inner loops. */
__global__ void row_xor_before_kernel(unsigned int *out, unsigned int *words, int cols, long long trips_r)
{
    const int cudaify_lane = threadIdx.x % 32;
    for (long long t_r = (blockIdx.x * (long long)blockDim.x + threadIdx.x) / 32; t_r < trips_r;
         t_r += (long long)blockDim.x * gridDim.x / 32) {
        int r = (int)t_r;
        unsigned seen = 7u;
        { /* the warp's lanes share scan loop 'c' (line 109), 32 iterations at a time: an exclusive scan of seen (^) */
            const long long cudaify_first_c = (long long)(0);
            for (long long cudaify_tile_c = 0;; cudaify_tile_c += 32) {
                int c = (int)(cudaify_first_c + (cudaify_tile_c + cudaify_lane));
                const bool cudaify_in_c = c < cols;
                if (__ballot_sync(0xffffffffu, cudaify_in_c) == 0u)
                    break;
                unsigned cudaify_term_seen = cudaify_bit_xor::identity<unsigned>();
                if (cudaify_in_c) {
                    cudaify_term_seen = words[r * cols + c] + (unsigned)c;
                }
                const unsigned cudaify_prefix_seen = cudaify_warp_inclusive_scan(cudaify_term_seen, cudaify_bit_xor());
                const unsigned cudaify_before_seen = cudaify_shfl_from(cudaify_prefix_seen, (cudaify_lane + 31) % 32);
                const unsigned cudaify_value_seen = cudaify_lane == 0 ? seen : cudaify_bit_xor()(seen, cudaify_before_seen);
                if (cudaify_in_c) {
                    const unsigned seen = cudaify_value_seen;
                    out[r * cols + c] = seen;
                }
                seen = cudaify_bit_xor()(seen, cudaify_shfl_from(cudaify_prefix_seen, 31));
            }
        }
        __syncwarp();
    }
}

void row_xor_before(const std::vector<unsigned> &words, std::vector<unsigned> &out, int rows,
                    int cols)
{
    {
        /* cudaify: this loop nest runs on the GPU as row_xor_before_kernel */
        const long long trips_r = cudaify_trips(0, rows, 1, 0);
        if (trips_r > 0) {
            unsigned int *d_out = NULL;
            unsigned int *d_words = NULL;
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_out, (size_t)(out.size()) * sizeof(unsigned int)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_words, (size_t)(words.size()) * sizeof(unsigned int)));
            CUDAIFY_CHECK(cudaMemcpy(d_out, out.data(), (size_t)(out.size()) * sizeof(unsigned int), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_words, words.data(), (size_t)(words.size()) * sizeof(unsigned int), cudaMemcpyHostToDevice));
            const dim3 block(256);
            const dim3 grid(cudaify_blocks(trips_r, 8, 2147483647u));
            row_xor_before_kernel<<<grid, block>>>(d_out, d_words, cols, trips_r);
            CUDAIFY_CHECK(cudaGetLastError());
            CUDAIFY_CHECK(cudaMemcpy(out.data(), d_out, (size_t)(out.size()) * sizeof(unsigned int), cudaMemcpyDeviceToHost));
            CUDAIFY_CHECK(cudaify_free(d_out));
            CUDAIFY_CHECK(cudaify_free(d_words));
        }
    }
}

/* Loop nest 'r' of row_doubled() (line 118): one warp per iteration, its lanes sharing the inner loops. */
__global__ void row_doubled_kernel(double *x, double *y, int cols, long long trips_r)
{
    const int cudaify_lane = threadIdx.x % 32;
    for (long long t_r = (blockIdx.x * (long long)blockDim.x + threadIdx.x) / 32; t_r < trips_r;
         t_r += (long long)blockDim.x * gridDim.x / 32) {
        int r = (int)t_r;
        double run = 0.0;
        { /* the warp's lanes share scan loop 'c' (line 120), 32 iterations at a time: an inclusive scan of run (+) */
            const long long cudaify_first_c = (long long)(0);
            for (long long cudaify_tile_c = 0;; cudaify_tile_c += 32) {
                int c = (int)(cudaify_first_c + (cudaify_tile_c + cudaify_lane));
                const bool cudaify_in_c = c < cols;
                if (__ballot_sync(0xffffffffu, cudaify_in_c) == 0u)
                    break;
                double cudaify_term_run = cudaify_plus::identity<double>();
                if (cudaify_in_c) {
                    cudaify_term_run = x[r * cols + c];
                }
                const double cudaify_prefix_run = cudaify_warp_inclusive_scan(cudaify_term_run, cudaify_plus());
                const double cudaify_value_run = cudaify_plus()(run, cudaify_prefix_run);
                if (cudaify_in_c) {
                    const double run = cudaify_value_run;
                    y[r * cols + c] = 2.0 * run;
                }
                run = cudaify_plus()(run, cudaify_shfl_from(cudaify_prefix_run, 31));
            }
        }
        __syncwarp();
    }
}

void row_doubled(const std::vector<double> &x, std::vector<double> &y, int rows, int cols)
{
    {
        /* cudaify: this loop nest runs on the GPU as row_doubled_kernel */
        const long long trips_r = cudaify_trips(0, rows, 1, 0);
        if (trips_r > 0) {
            double *d_x = NULL;
            double *d_y = NULL;
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_x, (size_t)(x.size()) * sizeof(double)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_y, (size_t)(y.size()) * sizeof(double)));
            CUDAIFY_CHECK(cudaMemcpy(d_x, x.data(), (size_t)(x.size()) * sizeof(double), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_y, y.data(), (size_t)(y.size()) * sizeof(double), cudaMemcpyHostToDevice));
            const dim3 block(256);
            const dim3 grid(cudaify_blocks(trips_r, 8, 2147483647u));
            row_doubled_kernel<<<grid, block>>>(d_x, d_y, cols, trips_r);
            CUDAIFY_CHECK(cudaGetLastError());
            CUDAIFY_CHECK(cudaMemcpy(y.data(), d_y, (size_t)(y.size()) * sizeof(double), cudaMemcpyDeviceToHost));
            CUDAIFY_CHECK(cudaify_free(d_x));
            CUDAIFY_CHECK(cudaify_free(d_y));
        }
    }
}

/* Loop nest 'r' of row_twice() (line 130): one thread per iteration. */
__global__ void row_twice_kernel(double *x, double *y, double *z, int cols, long long trips_r)
{
    for (long long t_r = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_r < trips_r;
         t_r += (long long)blockDim.x * gridDim.x) {
        int r = (int)t_r;
        double run = 0.0;
        for (int c = 0; c < cols; c++) {
            run += x[r * cols + c];
            y[r * cols + c] = run;
            z[r * cols + c] = -run;
        }
    }
}

void row_twice(const std::vector<double> &x, std::vector<double> &y, std::vector<double> &z,
               int rows, int cols)
{
    {
        /* cudaify: this loop nest runs on the GPU as row_twice_kernel */
        const long long trips_r = cudaify_trips(0, rows, 1, 0);
        if (trips_r > 0) {
            double *d_x = NULL;
            double *d_y = NULL;
            double *d_z = NULL;
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_x, (size_t)(x.size()) * sizeof(double)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_y, (size_t)(y.size()) * sizeof(double)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_z, (size_t)(z.size()) * sizeof(double)));
            CUDAIFY_CHECK(cudaMemcpy(d_x, x.data(), (size_t)(x.size()) * sizeof(double), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_y, y.data(), (size_t)(y.size()) * sizeof(double), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_z, z.data(), (size_t)(z.size()) * sizeof(double), cudaMemcpyHostToDevice));
            const dim3 block(256);
            const dim3 grid(cudaify_blocks(cudaify_rows(trips_r, 1), 256, 2147483647u));
            row_twice_kernel<<<grid, block>>>(d_x, d_y, d_z, cols, trips_r);
            CUDAIFY_CHECK(cudaGetLastError());
            CUDAIFY_CHECK(cudaMemcpy(y.data(), d_y, (size_t)(y.size()) * sizeof(double), cudaMemcpyDeviceToHost));
            CUDAIFY_CHECK(cudaMemcpy(z.data(), d_z, (size_t)(z.size()) * sizeof(double), cudaMemcpyDeviceToHost));
            CUDAIFY_CHECK(cudaify_free(d_x));
            CUDAIFY_CHECK(cudaify_free(d_y));
            CUDAIFY_CHECK(cudaify_free(d_z));
        }
    }
}

int main()
{
    int rows = 75, cols = 45;
    unsigned state = 12345u;
    std::vector<int> offsets(rows + 1);
    offsets[0] = 0;
    for (int s = 0; s < rows; s++) {
        state = state * 1664525u + 1013904223u;
        offsets[s + 1] = offsets[s] + (int)(state >> 16 & 63); /* 0 .. 63: some empty */
    }
    std::vector<double> values(offsets[rows]);
    for (size_t i = 0; i < values.size(); i++) {
        state = state * 1664525u + 1013904223u;
        values[i] = (double)(state >> 8 & 0xffff) / 4096.0 - 3.0;
    }
    std::vector<double> sums(rows);
    segment_sums(values, offsets, sums, rows);

    std::vector<float> x(rows * cols), y(rows * cols);
    std::vector<int> scores(rows * cols);
    std::vector<unsigned> words(rows * cols);
    std::vector<double> dx(rows * cols);
    for (int i = 0; i < rows * cols; i++) {
        state = state * 1664525u + 1013904223u;
        x[i] = 0.5f + (float)(state >> 20) / 256.0f;
        scores[i] = (int)(state >> 13 & 7); /* 0 .. 7: many ties */
        words[i] = 1u << (state >> 27);
        dx[i] = (double)(state >> 9 & 1023) / 64.0;
    }
    normalise_rows(x, y, rows, cols);
    std::vector<int> first_max(rows), last_min(rows);
    choices(scores, rows, cols, first_max, last_min);
    std::vector<unsigned> bits(rows);
    even_bits(words.data(), bits.data(), rows, cols);
    std::vector<double> decayed(rows), weights(rows);
    decay(dx.data(), decayed.data(), rows, cols);
    weighted(dx.data(), weights.data(), rows, cols);
    std::vector<double> prefix(rows * cols), doubled(rows * cols), once(rows * cols),
        twice(rows * cols);
    std::vector<unsigned> before(rows * cols);
    row_prefix(dx, prefix, rows, cols);
    row_xor_before(words, before, rows, cols);
    row_doubled(dx, doubled, rows, cols);
    row_twice(dx, once, twice, rows, cols);

    double total = 0.0, normalised = 0.0, tail = 0.0;
    long long picks = 0;
    unsigned all_bits = 0u;
    for (int r = 0; r < rows; r++) {
        total += sums[r] * (r % 7 + 1);
        picks += (long long)first_max[r] * (r + 1) + (long long)last_min[r] * (r + 3);
        all_bits ^= bits[r] * (unsigned)(r + 1);
        tail += decayed[r] + weights[r];
    }
    unsigned scanned_bits = 0u;
    for (int i = 0; i < rows * cols; i++) {
        normalised += y[i] * (i % 11);
        tail += (prefix[i] + doubled[i] + once[i] - twice[i]) * (i % 3 + 1);
        scanned_bits += before[i] * (unsigned)(i % 13 + 1);
    }
    std::printf("sums %.9e\n", total);
    std::printf("normalised %.6e\n", normalised);
    std::printf("picks %lld bits %u\n", picks, all_bits);
    std::printf("tail %.9e scanned bits %u\n", tail, scanned_bits);
    return 0;
}
