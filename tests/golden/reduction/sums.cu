/* ---- cudaify pattern includes ---- */
#include <string.h>
#include <math.h>
#include <type_traits>

/* Sum, sum of squares (subtracted), min and max of one array, with non-zero starting
   values, and a product; every result printed. */
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

/* Reduction loop 'i' of sum_and_squares() (line 9) on s, q: per-thread copies, one partial per block. */
__global__ void sum_and_squares_reduce(float *x, long long trips_i, double *d_partial_s, double *d_partial_q)
{
    double s = cudaify_plus::identity<double>();
    double q = cudaify_plus::identity<double>();
    for (long long t_i_pass = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_i_pass < trips_i;
         t_i_pass += (long long)blockDim.x * gridDim.x * 4) {
        if (t_i_pass + 3 * ((long long)blockDim.x * gridDim.x) < trips_i) {
#pragma unroll
            for (int cudaify_u = 0; cudaify_u < 4; cudaify_u++) {
                const long long t_i = t_i_pass + cudaify_u * ((long long)blockDim.x * gridDim.x);
                int i = (int)t_i;
                s += x[i];
                q -= (double)x[i] * x[i];
            }
        } else {
            for (int cudaify_u = 0; cudaify_u < 4; cudaify_u++) {
                const long long t_i = t_i_pass + cudaify_u * ((long long)blockDim.x * gridDim.x);
                if (t_i < trips_i) {
                    int i = (int)t_i;
                    s += x[i];
                    q -= (double)x[i] * x[i];
                }
            }
        }
    }
    s = cudaify_block_reduce(s, cudaify_plus());
    q = cudaify_block_reduce(q, cudaify_plus());
    if (threadIdx.x == 0) {
        d_partial_s[blockIdx.x] = s;
        d_partial_q[blockIdx.x] = q;
    }
}

double sum_and_squares(int n, const float *x, double *squares_out)
{
    double s = 10.0, q = 1.0;
    {
        /* cudaify: this reduction runs on the GPU as sum_and_squares_reduce */
        const long long trips_i = cudaify_trips(0, n, 1, 0);
        if (trips_i > 0) {
            float *d_x = NULL;
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_x, (size_t)(n) * sizeof(float)));
            CUDAIFY_CHECK(cudaMemcpy(d_x, x, (size_t)(n) * sizeof(float), cudaMemcpyHostToDevice));
            const unsigned int blocks = cudaify_blocks(trips_i, 256, 1024u);
            static cudaify_value_t<decltype(s)> *d_partial_s = NULL;
            if (d_partial_s == NULL)
                CUDAIFY_CHECK(cudaMalloc((void **)&d_partial_s, 1024 * sizeof(*d_partial_s)));
            static cudaify_value_t<decltype(q)> *d_partial_q = NULL;
            if (d_partial_q == NULL)
                CUDAIFY_CHECK(cudaMalloc((void **)&d_partial_q, 1024 * sizeof(*d_partial_q)));
            sum_and_squares_reduce<<<blocks, 256>>>(d_x, trips_i, d_partial_s, d_partial_q);
            CUDAIFY_CHECK(cudaGetLastError());
            cudaify_value_t<decltype(s)> partial_s[1024];
            CUDAIFY_CHECK(cudaMemcpy(partial_s, d_partial_s, blocks * sizeof(*d_partial_s), cudaMemcpyDeviceToHost));
            cudaify_value_t<decltype(q)> partial_q[1024];
            CUDAIFY_CHECK(cudaMemcpy(partial_q, d_partial_q, blocks * sizeof(*d_partial_q), cudaMemcpyDeviceToHost));
            for (unsigned int b = 0; b < blocks; b++) {
                s = cudaify_plus()(s, partial_s[b]);
                q = cudaify_plus()(q, partial_q[b]);
            }
            CUDAIFY_CHECK(cudaify_free(d_x));
        }
    }
    *squares_out = q;
    return s;
}

/* Reduction loop 'i' of range() (line 20) on lo, hi: per-thread copies, one partial per block. */
__global__ void range_reduce(float *x, long long trips_i_2, float *d_partial_lo, float *d_partial_hi)
{
    float lo = cudaify_minimum::identity<float>();
    float hi = cudaify_maximum::identity<float>();
    for (long long t_i_2_pass = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_i_2_pass < trips_i_2;
         t_i_2_pass += (long long)blockDim.x * gridDim.x * 4) {
        if (t_i_2_pass + 3 * ((long long)blockDim.x * gridDim.x) < trips_i_2) {
#pragma unroll
            for (int cudaify_u = 0; cudaify_u < 4; cudaify_u++) {
                const long long t_i_2 = t_i_2_pass + cudaify_u * ((long long)blockDim.x * gridDim.x);
                int i = (int)t_i_2;
                if (x[i] < lo)
                    lo = x[i];
                if (x[i] > hi)
                    hi = x[i];
            }
        } else {
            for (int cudaify_u = 0; cudaify_u < 4; cudaify_u++) {
                const long long t_i_2 = t_i_2_pass + cudaify_u * ((long long)blockDim.x * gridDim.x);
                if (t_i_2 < trips_i_2) {
                    int i = (int)t_i_2;
                    if (x[i] < lo)
                        lo = x[i];
                    if (x[i] > hi)
                        hi = x[i];
                }
            }
        }
    }
    lo = cudaify_block_reduce(lo, cudaify_minimum());
    hi = cudaify_block_reduce(hi, cudaify_maximum());
    if (threadIdx.x == 0) {
        d_partial_lo[blockIdx.x] = lo;
        d_partial_hi[blockIdx.x] = hi;
    }
}

float range(int n, const float *x, float *low)
{
    float lo = 0.5f, hi = -1.0f;
    {
        /* cudaify: this reduction runs on the GPU as range_reduce */
        const long long trips_i_2 = cudaify_trips(0, n, 1, 0);
        if (trips_i_2 > 0) {
            float *d_x_2 = NULL;
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_x_2, (size_t)(n) * sizeof(float)));
            CUDAIFY_CHECK(cudaMemcpy(d_x_2, x, (size_t)(n) * sizeof(float), cudaMemcpyHostToDevice));
            const unsigned int blocks_2 = cudaify_blocks(trips_i_2, 256, 1024u);
            static cudaify_value_t<decltype(lo)> *d_partial_lo = NULL;
            if (d_partial_lo == NULL)
                CUDAIFY_CHECK(cudaMalloc((void **)&d_partial_lo, 1024 * sizeof(*d_partial_lo)));
            static cudaify_value_t<decltype(hi)> *d_partial_hi = NULL;
            if (d_partial_hi == NULL)
                CUDAIFY_CHECK(cudaMalloc((void **)&d_partial_hi, 1024 * sizeof(*d_partial_hi)));
            range_reduce<<<blocks_2, 256>>>(d_x_2, trips_i_2, d_partial_lo, d_partial_hi);
            CUDAIFY_CHECK(cudaGetLastError());
            cudaify_value_t<decltype(lo)> partial_lo[1024];
            CUDAIFY_CHECK(cudaMemcpy(partial_lo, d_partial_lo, blocks_2 * sizeof(*d_partial_lo), cudaMemcpyDeviceToHost));
            cudaify_value_t<decltype(hi)> partial_hi[1024];
            CUDAIFY_CHECK(cudaMemcpy(partial_hi, d_partial_hi, blocks_2 * sizeof(*d_partial_hi), cudaMemcpyDeviceToHost));
            for (unsigned int b_2 = 0; b_2 < blocks_2; b_2++) {
                lo = cudaify_minimum()(lo, partial_lo[b_2]);
                hi = cudaify_maximum()(hi, partial_hi[b_2]);
            }
            CUDAIFY_CHECK(cudaify_free(d_x_2));
        }
    }
    *low = lo;
    return hi;
}

/* Reduction loop 'i' of product() (line 34) on p: per-thread copies, one partial per block. */
__global__ void product_reduce(double *y, long long trips_i_3, double *d_partial_p)
{
    double p = cudaify_times::identity<double>();
    for (long long t_i_3_pass = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_i_3_pass < trips_i_3;
         t_i_3_pass += (long long)blockDim.x * gridDim.x * 4) {
        if (t_i_3_pass + 3 * ((long long)blockDim.x * gridDim.x) < trips_i_3) {
#pragma unroll
            for (int cudaify_u = 0; cudaify_u < 4; cudaify_u++) {
                const long long t_i_3 = t_i_3_pass + cudaify_u * ((long long)blockDim.x * gridDim.x);
                long i = (long)t_i_3;
                p *= y[i];
            }
        } else {
            for (int cudaify_u = 0; cudaify_u < 4; cudaify_u++) {
                const long long t_i_3 = t_i_3_pass + cudaify_u * ((long long)blockDim.x * gridDim.x);
                if (t_i_3 < trips_i_3) {
                    long i = (long)t_i_3;
                    p *= y[i];
                }
            }
        }
    }
    p = cudaify_block_reduce(p, cudaify_times());
    if (threadIdx.x == 0) {
        d_partial_p[blockIdx.x] = p;
    }
}

double product(long n, const double *y)
{
    double p = 2.0;
    long i;
    {
        /* cudaify: this reduction runs on the GPU as product_reduce */
        const long long trips_i_3 = cudaify_trips(0, n, 1, 0);
        if (trips_i_3 > 0) {
            double *d_y = NULL;
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_y, (size_t)(n) * sizeof(double)));
            CUDAIFY_CHECK(cudaMemcpy(d_y, y, (size_t)(n) * sizeof(double), cudaMemcpyHostToDevice));
            const unsigned int blocks_3 = cudaify_blocks(trips_i_3, 256, 1024u);
            static cudaify_value_t<decltype(p)> *d_partial_p = NULL;
            if (d_partial_p == NULL)
                CUDAIFY_CHECK(cudaMalloc((void **)&d_partial_p, 1024 * sizeof(*d_partial_p)));
            product_reduce<<<blocks_3, 256>>>(d_y, trips_i_3, d_partial_p);
            CUDAIFY_CHECK(cudaGetLastError());
            cudaify_value_t<decltype(p)> partial_p[1024];
            CUDAIFY_CHECK(cudaMemcpy(partial_p, d_partial_p, blocks_3 * sizeof(*d_partial_p), cudaMemcpyDeviceToHost));
            for (unsigned int b_3 = 0; b_3 < blocks_3; b_3++) {
                p = cudaify_times()(p, partial_p[b_3]);
            }
            CUDAIFY_CHECK(cudaify_free(d_y));
        }
        i = (long)(0 + trips_i_3);
    }
    return p + (double)i;
}

int main(void)
{
    int n = 100000;
    float *x = (float *)malloc(sizeof(float) * n);
    double *y = (double *)malloc(sizeof(double) * n);
    unsigned int state = 7u;
    for (int i = 0; i < n; i++) {
        state = state * 1664525u + 1013904223u;
        x[i] = (float)(state >> 8) / 16777216.0f - 0.25f;
        y[i] = 1.0 + ((double)(state >> 20) - 2048.0) / 1.0e6;
    }
    double squares = 0.0;
    double s = sum_and_squares(n, x, &squares);
    float low = 0.0f;
    float high = range(n, x, &low);
    printf("sum=%.6e squares=%.6e\n", s, squares);
    printf("low=%.6e high=%.6e\n", (double)low, (double)high);
    printf("product=%.6e\n", product(n, y));
    printf("empty: sum=%.6e\n", sum_and_squares(0, x, &squares));
    free(x);
    free(y);
    return 0;
}
