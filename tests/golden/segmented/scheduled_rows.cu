/* ---- cudaify pattern includes ---- */
#include <string.h>
#include <math.h>
#include <type_traits>

/* Accumulations that schedule maps one thread per row or column: segmented shares each
   row's loop among a warp's lanes (rows of 70 values: more than two lanes' turns) and
   each column's loop among a block's rows (45 values: a row past the end runs none).
   A matrix-vector product into array elements, a difference into a scalar, a product of
   factors near 1, a column sum, a column's mean then its variance (the second loop reads
   the first's total in every row), a row's sum and sum of squares in one pass (their
   resets fused into the loop by isl, as in PolyBench gesummv), a column's two sums in one
   pass, and two it must leave alone: a reset after the first sum, and every other column
   (neither layout reads it side by side). */
#include <stdio.h>

#define ROWS 45
#define COLS 70

static double A[ROWS][COLS];
static double x[COLS];
static double y[ROWS];
static double gap[ROWS];
static double prod[ROWS];
static double colsum[COLS];
static double fused[ROWS];
static double colvar[COLS];
static double half[COLS / 2];
static double rsum[ROWS], rsq[ROWS];
static double csum[COLS], cabs[COLS];

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

/* Region of init() at line 29: scheduled by isl. */
__global__ void init_kernel(double (*A)[COLS], double *x, long long lo_j, long long trips_j)
{
    for (long long t_j = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_j < trips_j; t_j += (long long)blockDim.x * gridDim.x) {
        const int j = (int)(lo_j + t_j);
        x[j] = (double)(j % 5) / 4.0 + 0.25;
    }
}

/* Region of init() at line 29: scheduled by isl. */
__global__ void init_kernel_2(double (*A)[COLS], double *x, long long lo_j_2, long long trips_j_2, long long lo_i, long long trips_i)
{
    for (long long t_i = blockIdx.y * (long long)blockDim.y + threadIdx.y; t_i < trips_i; t_i += (long long)blockDim.y * gridDim.y) {
        const int i = (int)(lo_i + t_i);
        for (long long t_j_2 = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_j_2 < trips_j_2; t_j_2 += (long long)blockDim.x * gridDim.x) {
            const int j = (int)(lo_j_2 + t_j_2);
            A[i][j] = (double)((i * 7 + j * 3) % 11) / 8.0 - 0.5;
        }
    }
}

static void init(void)
{
    {
        /* cudaify: this region runs on the GPU (init: region at line 29 -> 2 kernel(s), grids 1-D, 2-D) */
        double *d_A = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_A, (size_t)(3150) * sizeof(double)));
        double *d_x = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_x, (size_t)(70) * sizeof(double)));
        {
            const long long lo_j = 0;
            const long long trips_j = (69) - lo_j + 1;
            if (trips_j > 0) {
                init_kernel<<<dim3(cudaify_blocks(cudaify_rows(trips_j, 1), 256, 2147483647u)), dim3(256)>>>((double (*)[COLS])(d_A), d_x, lo_j, trips_j);
                CUDAIFY_CHECK(cudaGetLastError());
            }
        }
        {
            const long long lo_j_2 = 0;
            const long long trips_j_2 = (69) - lo_j_2 + 1;
            const long long lo_i = 0;
            const long long trips_i = (44) - lo_i + 1;
            if (trips_j_2 > 0 && trips_i > 0) {
                init_kernel_2<<<dim3(cudaify_blocks(cudaify_rows(trips_j_2, 1), 32, 2147483647u), cudaify_blocks(cudaify_rows(trips_i, trips_j_2), 8, 65535u)), dim3(32, 8)>>>((double (*)[COLS])(d_A), d_x, lo_j_2, trips_j_2, lo_i, trips_i);
                CUDAIFY_CHECK(cudaGetLastError());
            }
        }
        CUDAIFY_CHECK(cudaMemcpy(A, d_A, (size_t)(3150) * sizeof(double), cudaMemcpyDeviceToHost));
        CUDAIFY_CHECK(cudaMemcpy(x, d_x, (size_t)(70) * sizeof(double), cudaMemcpyDeviceToHost));
        CUDAIFY_CHECK(cudaify_free(d_A));
        CUDAIFY_CHECK(cudaify_free(d_x));
    }
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

/* Region of kernels() at line 38: scheduled by isl. */
__global__ void __launch_bounds__(1024) kernels_kernel(double *y, double (*A)[COLS], double *x, double *gap, double *prod, double *colsum, double *colvar, double *half, double *rsum, double *rsq, double *csum, double *cabs, double *fused, long long lo_j_3, long long trips_j_3)
{
    const int cudaify_row = threadIdx.y;
    for (long long cudaify_base = (long long)blockIdx.x * 32; cudaify_base < trips_j_3; cudaify_base += (long long)32 * gridDim.x) {
        const long long t_j_3 = cudaify_base + threadIdx.x;
        const bool cudaify_in = t_j_3 < trips_j_3;
        const int j = (int)(lo_j_3 + t_j_3);
        if (cudaify_in && cudaify_row == 0)
            csum[j] = 1.0;
        __syncthreads();
        { /* the block's rows share loop 'i'; they combine csum[j] (+) */
            __shared__ double cudaify_rows_csum[32][32];
            const long long cudaify_first_i = (long long)(0);
            double cudaify_lanes_csum;
            {
                double cudaify_acc_csum = cudaify_plus::identity<double>();
                if (cudaify_in)
                    for (long long cudaify_t_i = cudaify_row;; cudaify_t_i += 32) {
                        int i = (int)(cudaify_first_i + cudaify_t_i);
                        if (!(i <= 44))
                            break;
                        cudaify_acc_csum += A[i][j];
                    }
                cudaify_rows_csum[cudaify_row][threadIdx.x] = cudaify_acc_csum;
            }
            __syncthreads();
            cudaify_lanes_csum = cudaify_rows_csum[0][threadIdx.x];
            for (int cudaify_r = 1; cudaify_r < 32; cudaify_r++)
                cudaify_lanes_csum = cudaify_plus()(cudaify_lanes_csum, cudaify_rows_csum[cudaify_r][threadIdx.x]);
            __syncthreads();
            if (cudaify_in && cudaify_row == 0)
                csum[j] = cudaify_plus()(csum[j], cudaify_lanes_csum);
        }
        __syncthreads();
    }
}

/* Region of kernels() at line 38: scheduled by isl. */
__global__ void kernels_kernel_2(double *y, double (*A)[COLS], double *x, double *gap, double *prod, double *colsum, double *colvar, double *half, double *rsum, double *rsq, double *csum, double *cabs, double *fused, long long lo_i_2, long long trips_i_2)
{
    const int cudaify_lane = threadIdx.x % 32;
    for (long long t_i_2 = (blockIdx.x * (long long)blockDim.x + threadIdx.x) / 32; t_i_2 < trips_i_2; t_i_2 += (long long)blockDim.x * gridDim.x / 32) {
        const int i = (int)(lo_i_2 + t_i_2);
        if (cudaify_lane == 0)
            prod[i] = 1.0;
        __syncwarp();
        { /* the warp's lanes share loop 'j'; they combine prod[i] (*) */
            const long long cudaify_first_j = (long long)(0);
            double cudaify_lanes_prod;
            {
                double cudaify_acc_prod = cudaify_times::identity<double>();
                for (long long cudaify_t_j = cudaify_lane;; cudaify_t_j += 32) {
                    int j = (int)(cudaify_first_j + cudaify_t_j);
                    if (!(j <= 69))
                        break;
                    cudaify_acc_prod *= 1.0 + A[i][j] / 64.0;
                }
                cudaify_lanes_prod = cudaify_warp_allreduce(cudaify_acc_prod, cudaify_times());
            }
            if (cudaify_lane == 0)
                prod[i] = cudaify_times()(prod[i], cudaify_lanes_prod);
        }
        __syncwarp();
    }
}

/* Region of kernels() at line 38: scheduled by isl. */
__global__ void __launch_bounds__(1024) kernels_kernel_3(double *y, double (*A)[COLS], double *x, double *gap, double *prod, double *colsum, double *colvar, double *half, double *rsum, double *rsq, double *csum, double *cabs, double *fused, long long lo_j_4, long long trips_j_4)
{
    const int cudaify_row = threadIdx.y;
    for (long long cudaify_base = (long long)blockIdx.x * 32; cudaify_base < trips_j_4; cudaify_base += (long long)32 * gridDim.x) {
        const long long t_j_4 = cudaify_base + threadIdx.x;
        const bool cudaify_in = t_j_4 < trips_j_4;
        const int j = (int)(lo_j_4 + t_j_4);
        double m;
        double v;
        m = 0.0;
        { /* the block's rows share loop 'c0'; they combine m (+) */
            __shared__ double cudaify_rows_m[32][32];
            const long long cudaify_first_c0 = (long long)(0);
            double cudaify_lanes_m;
            {
                double m = cudaify_plus::identity<double>();
                if (cudaify_in)
                    for (long long cudaify_t_c0 = cudaify_row;; cudaify_t_c0 += 32) {
                        long long c0 = (long long)(cudaify_first_c0 + cudaify_t_c0);
                        if (!(c0 <= 44))
                            break;
                        m += A[(c0)][j];
                    }
                cudaify_rows_m[cudaify_row][threadIdx.x] = m;
            }
            __syncthreads();
            cudaify_lanes_m = cudaify_rows_m[0][threadIdx.x];
            for (int cudaify_r = 1; cudaify_r < 32; cudaify_r++)
                cudaify_lanes_m = cudaify_plus()(cudaify_lanes_m, cudaify_rows_m[cudaify_r][threadIdx.x]);
            __syncthreads();
            m = cudaify_plus()(m, cudaify_lanes_m);
        }
        __syncthreads();
        m = m / ROWS;
        v = 0.0;
        { /* the block's rows share loop 'c0'; they combine v (+) */
            __shared__ double cudaify_rows_v[32][32];
            const long long cudaify_first_c0 = (long long)(44);
            double cudaify_lanes_v;
            {
                double v = cudaify_plus::identity<double>();
                if (cudaify_in)
                    for (long long cudaify_t_c0 = cudaify_row;; cudaify_t_c0 += 32) {
                        long long c0 = (long long)(cudaify_first_c0 + cudaify_t_c0);
                        if (!(c0 <= 88))
                            break;
                        v = v + (A[((c0 - 44))][j] - m) * (A[((c0 - 44))][j] - m);
                    }
                cudaify_rows_v[cudaify_row][threadIdx.x] = v;
            }
            __syncthreads();
            cudaify_lanes_v = cudaify_rows_v[0][threadIdx.x];
            for (int cudaify_r = 1; cudaify_r < 32; cudaify_r++)
                cudaify_lanes_v = cudaify_plus()(cudaify_lanes_v, cudaify_rows_v[cudaify_r][threadIdx.x]);
            __syncthreads();
            v = cudaify_plus()(v, cudaify_lanes_v);
        }
        __syncthreads();
        if (cudaify_in && cudaify_row == 0)
            colvar[j] = v;
        __syncthreads();
    }
}

/* Region of kernels() at line 38: scheduled by isl. */
__global__ void kernels_kernel_4(double *y, double (*A)[COLS], double *x, double *gap, double *prod, double *colsum, double *colvar, double *half, double *rsum, double *rsq, double *csum, double *cabs, double *fused, long long lo_i_3, long long trips_i_3)
{
    const int cudaify_lane = threadIdx.x % 32;
    for (long long t_i_3 = (blockIdx.x * (long long)blockDim.x + threadIdx.x) / 32; t_i_3 < trips_i_3; t_i_3 += (long long)blockDim.x * gridDim.x / 32) {
        const int i = (int)(lo_i_3 + t_i_3);
        double d;
        d = 1.0;
        { /* the warp's lanes share loop 'j'; they combine d (+) */
            const long long cudaify_first_j = (long long)(0);
            double cudaify_lanes_d;
            {
                double d = cudaify_plus::identity<double>();
                for (long long cudaify_t_j = cudaify_lane;; cudaify_t_j += 32) {
                    int j = (int)(cudaify_first_j + cudaify_t_j);
                    if (!(j <= 69))
                        break;
                    d -= A[i][j] * 0.5;
                }
                cudaify_lanes_d = cudaify_warp_allreduce(d, cudaify_plus());
            }
            d = cudaify_plus()(d, cudaify_lanes_d);
        }
        __syncwarp();
        if (cudaify_lane == 0)
            gap[i] = d;
        __syncwarp();
    }
}

/* Region of kernels() at line 38: scheduled by isl. */
__global__ void kernels_kernel_5(double *y, double (*A)[COLS], double *x, double *gap, double *prod, double *colsum, double *colvar, double *half, double *rsum, double *rsq, double *csum, double *cabs, double *fused, long long lo_i_4, long long trips_i_4)
{
    const int cudaify_lane = threadIdx.x % 32;
    for (long long t_i_4 = (blockIdx.x * (long long)blockDim.x + threadIdx.x) / 32; t_i_4 < trips_i_4; t_i_4 += (long long)blockDim.x * gridDim.x / 32) {
        const int i = (int)(lo_i_4 + t_i_4);
        if (cudaify_lane == 0)
            rsq[i] = 0.0;
        __syncwarp();
        if (cudaify_lane == 0 && (0) <= (69))
            rsum[i] = 0.0;
        __syncwarp();
        { /* the warp's lanes share loop 'c0_2'; they combine rsq[i] (+), rsum[i] (+) */
            const long long cudaify_first_c0_2 = (long long)(0);
            double cudaify_lanes_rsq;
            double cudaify_lanes_rsum;
            {
                double cudaify_acc_rsq = cudaify_plus::identity<double>();
                double cudaify_acc_rsum = cudaify_plus::identity<double>();
                for (long long cudaify_t_c0_2 = cudaify_lane;; cudaify_t_c0_2 += 32) {
                    long long c0_2 = (long long)(cudaify_first_c0_2 + cudaify_t_c0_2);
                    if (!(c0_2 <= 69))
                        break;
                    cudaify_acc_rsq = A[i][(c0_2)] * A[i][(c0_2)] + cudaify_acc_rsq;
                    cudaify_acc_rsum = A[i][(c0_2)] * x[(c0_2)] + cudaify_acc_rsum;
                }
                cudaify_lanes_rsq = cudaify_warp_allreduce(cudaify_acc_rsq, cudaify_plus());
                cudaify_lanes_rsum = cudaify_warp_allreduce(cudaify_acc_rsum, cudaify_plus());
            }
            if (cudaify_lane == 0)
                rsq[i] = cudaify_plus()(rsq[i], cudaify_lanes_rsq);
            if (cudaify_lane == 0)
                rsum[i] = cudaify_plus()(rsum[i], cudaify_lanes_rsum);
        }
        __syncwarp();
        if (cudaify_lane == 0)
            rsq[i] = rsq[i] - rsum[i];
        __syncwarp();
    }
}

/* Region of kernels() at line 38: scheduled by isl. */
__global__ void kernels_kernel_6(double *y, double (*A)[COLS], double *x, double *gap, double *prod, double *colsum, double *colvar, double *half, double *rsum, double *rsq, double *csum, double *cabs, double *fused, long long lo_i_5, long long trips_i_5)
{
    for (long long t_i_5 = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_i_5 < trips_i_5; t_i_5 += (long long)blockDim.x * gridDim.x) {
        const int i = (int)(lo_i_5 + t_i_5);
        fused[i] = 0.0;
        for (int j = 0; (j <= 69); j += 1) {
            fused[i] += A[i][j];
            if (j == 0)
                fused[i] = 1.0;
        }
    }
}

/* Region of kernels() at line 38: scheduled by isl. */
__global__ void kernels_kernel_7(double *y, double (*A)[COLS], double *x, double *gap, double *prod, double *colsum, double *colvar, double *half, double *rsum, double *rsq, double *csum, double *cabs, double *fused, long long lo_j_5, long long trips_j_5)
{
    for (long long t_j_5 = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_j_5 < trips_j_5; t_j_5 += (long long)blockDim.x * gridDim.x) {
        const int j = (int)(lo_j_5 + t_j_5);
        half[j] = 0.0;
        for (int i = 0; (i <= 44); i += 1) {
            half[j] += A[i][2 * j];
        }
    }
}

/* Region of kernels() at line 38: scheduled by isl. */
__global__ void __launch_bounds__(1024) kernels_kernel_8(double *y, double (*A)[COLS], double *x, double *gap, double *prod, double *colsum, double *colvar, double *half, double *rsum, double *rsq, double *csum, double *cabs, double *fused, long long lo_j_6, long long trips_j_6)
{
    const int cudaify_row = threadIdx.y;
    for (long long cudaify_base = (long long)blockIdx.x * 32; cudaify_base < trips_j_6; cudaify_base += (long long)32 * gridDim.x) {
        const long long t_j_6 = cudaify_base + threadIdx.x;
        const bool cudaify_in = t_j_6 < trips_j_6;
        const int j = (int)(lo_j_6 + t_j_6);
        if (cudaify_in && cudaify_row == 0)
            cabs[j] = 0.0;
        __syncthreads();
        { /* the block's rows share loop 'i'; they combine cabs[j] (+) */
            __shared__ double cudaify_rows_cabs[32][32];
            const long long cudaify_first_i = (long long)(0);
            double cudaify_lanes_cabs;
            {
                double cudaify_acc_cabs = cudaify_plus::identity<double>();
                if (cudaify_in)
                    for (long long cudaify_t_i = cudaify_row;; cudaify_t_i += 32) {
                        int i = (int)(cudaify_first_i + cudaify_t_i);
                        if (!(i <= 44))
                            break;
                        cudaify_acc_cabs += A[i][j] > 0 ? A[i][j] : -A[i][j];
                    }
                cudaify_rows_cabs[cudaify_row][threadIdx.x] = cudaify_acc_cabs;
            }
            __syncthreads();
            cudaify_lanes_cabs = cudaify_rows_cabs[0][threadIdx.x];
            for (int cudaify_r = 1; cudaify_r < 32; cudaify_r++)
                cudaify_lanes_cabs = cudaify_plus()(cudaify_lanes_cabs, cudaify_rows_cabs[cudaify_r][threadIdx.x]);
            __syncthreads();
            if (cudaify_in && cudaify_row == 0)
                cabs[j] = cudaify_plus()(cabs[j], cudaify_lanes_cabs);
        }
        __syncthreads();
    }
}

/* Region of kernels() at line 38: scheduled by isl. */
__global__ void __launch_bounds__(1024) kernels_kernel_9(double *y, double (*A)[COLS], double *x, double *gap, double *prod, double *colsum, double *colvar, double *half, double *rsum, double *rsq, double *csum, double *cabs, double *fused, long long lo_j_7, long long trips_j_7)
{
    const int cudaify_row = threadIdx.y;
    for (long long cudaify_base = (long long)blockIdx.x * 32; cudaify_base < trips_j_7; cudaify_base += (long long)32 * gridDim.x) {
        const long long t_j_7 = cudaify_base + threadIdx.x;
        const bool cudaify_in = t_j_7 < trips_j_7;
        const int j = (int)(lo_j_7 + t_j_7);
        if (cudaify_in && cudaify_row == 0)
            colsum[j] = 0.0;
        __syncthreads();
        { /* the block's rows share loop 'i'; they combine colsum[j] (+) */
            __shared__ double cudaify_rows_colsum[32][32];
            const long long cudaify_first_i = (long long)(0);
            double cudaify_lanes_colsum;
            {
                double cudaify_acc_colsum = cudaify_plus::identity<double>();
                if (cudaify_in)
                    for (long long cudaify_t_i = cudaify_row;; cudaify_t_i += 32) {
                        int i = (int)(cudaify_first_i + cudaify_t_i);
                        if (!(i <= 44))
                            break;
                        cudaify_acc_colsum += A[i][j];
                    }
                cudaify_rows_colsum[cudaify_row][threadIdx.x] = cudaify_acc_colsum;
            }
            __syncthreads();
            cudaify_lanes_colsum = cudaify_rows_colsum[0][threadIdx.x];
            for (int cudaify_r = 1; cudaify_r < 32; cudaify_r++)
                cudaify_lanes_colsum = cudaify_plus()(cudaify_lanes_colsum, cudaify_rows_colsum[cudaify_r][threadIdx.x]);
            __syncthreads();
            if (cudaify_in && cudaify_row == 0)
                colsum[j] = cudaify_plus()(colsum[j], cudaify_lanes_colsum);
        }
        __syncthreads();
    }
}

/* Region of kernels() at line 38: scheduled by isl. */
__global__ void kernels_kernel_10(double *y, double (*A)[COLS], double *x, double *gap, double *prod, double *colsum, double *colvar, double *half, double *rsum, double *rsq, double *csum, double *cabs, double *fused, long long lo_i_6, long long trips_i_6)
{
    const int cudaify_lane = threadIdx.x % 32;
    for (long long t_i_6 = (blockIdx.x * (long long)blockDim.x + threadIdx.x) / 32; t_i_6 < trips_i_6; t_i_6 += (long long)blockDim.x * gridDim.x / 32) {
        const int i = (int)(lo_i_6 + t_i_6);
        if (cudaify_lane == 0)
            y[i] = 0.5;
        __syncwarp();
        { /* the warp's lanes share loop 'j'; they combine y[i] (+) */
            const long long cudaify_first_j = (long long)(0);
            double cudaify_lanes_y;
            {
                double cudaify_acc_y = cudaify_plus::identity<double>();
                for (long long cudaify_t_j = cudaify_lane;; cudaify_t_j += 32) {
                    int j = (int)(cudaify_first_j + cudaify_t_j);
                    if (!(j <= 69))
                        break;
                    cudaify_acc_y = cudaify_acc_y + A[i][j] * x[j];
                }
                cudaify_lanes_y = cudaify_warp_allreduce(cudaify_acc_y, cudaify_plus());
            }
            if (cudaify_lane == 0)
                y[i] = cudaify_plus()(y[i], cudaify_lanes_y);
        }
        __syncwarp();
    }
}

static void kernels(void)
{
    {
        /* cudaify: this region runs on the GPU (kernels: region at line 38 -> 10 kernel(s), grids 1-D, 1-D, 1-D, 1-D, 1-D, 1-D, 1-D, 1-D, 1-D, 1-D) */
        double *d_y = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_y, (size_t)(45) * sizeof(double)));
        CUDAIFY_CHECK(cudaMemcpy(d_y, y, (size_t)(45) * sizeof(double), cudaMemcpyHostToDevice));
        double *d_A_2 = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_A_2, (size_t)(3150) * sizeof(double)));
        CUDAIFY_CHECK(cudaMemcpy(d_A_2, A, (size_t)(3150) * sizeof(double), cudaMemcpyHostToDevice));
        double *d_x_2 = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_x_2, (size_t)(70) * sizeof(double)));
        CUDAIFY_CHECK(cudaMemcpy(d_x_2, x, (size_t)(70) * sizeof(double), cudaMemcpyHostToDevice));
        double *d_gap = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_gap, (size_t)(45) * sizeof(double)));
        double *d_prod = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_prod, (size_t)(45) * sizeof(double)));
        CUDAIFY_CHECK(cudaMemcpy(d_prod, prod, (size_t)(45) * sizeof(double), cudaMemcpyHostToDevice));
        double *d_colsum = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_colsum, (size_t)(70) * sizeof(double)));
        CUDAIFY_CHECK(cudaMemcpy(d_colsum, colsum, (size_t)(70) * sizeof(double), cudaMemcpyHostToDevice));
        double *d_colvar = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_colvar, (size_t)(70) * sizeof(double)));
        double *d_half = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_half, (size_t)(35) * sizeof(double)));
        CUDAIFY_CHECK(cudaMemcpy(d_half, half, (size_t)(35) * sizeof(double), cudaMemcpyHostToDevice));
        double *d_rsum = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_rsum, (size_t)(45) * sizeof(double)));
        CUDAIFY_CHECK(cudaMemcpy(d_rsum, rsum, (size_t)(45) * sizeof(double), cudaMemcpyHostToDevice));
        double *d_rsq = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_rsq, (size_t)(45) * sizeof(double)));
        CUDAIFY_CHECK(cudaMemcpy(d_rsq, rsq, (size_t)(45) * sizeof(double), cudaMemcpyHostToDevice));
        double *d_csum = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_csum, (size_t)(70) * sizeof(double)));
        CUDAIFY_CHECK(cudaMemcpy(d_csum, csum, (size_t)(70) * sizeof(double), cudaMemcpyHostToDevice));
        double *d_cabs = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_cabs, (size_t)(70) * sizeof(double)));
        CUDAIFY_CHECK(cudaMemcpy(d_cabs, cabs, (size_t)(70) * sizeof(double), cudaMemcpyHostToDevice));
        double *d_fused = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_fused, (size_t)(45) * sizeof(double)));
        CUDAIFY_CHECK(cudaMemcpy(d_fused, fused, (size_t)(45) * sizeof(double), cudaMemcpyHostToDevice));
        {
            const long long lo_j_3 = 0;
            const long long trips_j_3 = (69) - lo_j_3 + 1;
            if (trips_j_3 > 0) {
                kernels_kernel<<<dim3(cudaify_blocks(trips_j_3, 32, 2147483647u)), dim3(32, 32)>>>(d_y, (double (*)[COLS])(d_A_2), d_x_2, d_gap, d_prod, d_colsum, d_colvar, d_half, d_rsum, d_rsq, d_csum, d_cabs, d_fused, lo_j_3, trips_j_3);
                CUDAIFY_CHECK(cudaGetLastError());
            }
        }
        {
            const long long lo_i_2 = 0;
            const long long trips_i_2 = (44) - lo_i_2 + 1;
            if (trips_i_2 > 0) {
                kernels_kernel_2<<<dim3(cudaify_blocks(trips_i_2, 8, 2147483647u)), dim3(256)>>>(d_y, (double (*)[COLS])(d_A_2), d_x_2, d_gap, d_prod, d_colsum, d_colvar, d_half, d_rsum, d_rsq, d_csum, d_cabs, d_fused, lo_i_2, trips_i_2);
                CUDAIFY_CHECK(cudaGetLastError());
            }
        }
        {
            const long long lo_j_4 = 0;
            const long long trips_j_4 = (69) - lo_j_4 + 1;
            if (trips_j_4 > 0) {
                kernels_kernel_3<<<dim3(cudaify_blocks(trips_j_4, 32, 2147483647u)), dim3(32, 32)>>>(d_y, (double (*)[COLS])(d_A_2), d_x_2, d_gap, d_prod, d_colsum, d_colvar, d_half, d_rsum, d_rsq, d_csum, d_cabs, d_fused, lo_j_4, trips_j_4);
                CUDAIFY_CHECK(cudaGetLastError());
            }
        }
        {
            const long long lo_i_3 = 0;
            const long long trips_i_3 = (44) - lo_i_3 + 1;
            if (trips_i_3 > 0) {
                kernels_kernel_4<<<dim3(cudaify_blocks(trips_i_3, 8, 2147483647u)), dim3(256)>>>(d_y, (double (*)[COLS])(d_A_2), d_x_2, d_gap, d_prod, d_colsum, d_colvar, d_half, d_rsum, d_rsq, d_csum, d_cabs, d_fused, lo_i_3, trips_i_3);
                CUDAIFY_CHECK(cudaGetLastError());
            }
        }
        {
            const long long lo_i_4 = 0;
            const long long trips_i_4 = (44) - lo_i_4 + 1;
            if (trips_i_4 > 0) {
                kernels_kernel_5<<<dim3(cudaify_blocks(trips_i_4, 8, 2147483647u)), dim3(256)>>>(d_y, (double (*)[COLS])(d_A_2), d_x_2, d_gap, d_prod, d_colsum, d_colvar, d_half, d_rsum, d_rsq, d_csum, d_cabs, d_fused, lo_i_4, trips_i_4);
                CUDAIFY_CHECK(cudaGetLastError());
            }
        }
        {
            const long long lo_i_5 = 0;
            const long long trips_i_5 = (44) - lo_i_5 + 1;
            if (trips_i_5 > 0) {
                kernels_kernel_6<<<dim3(cudaify_blocks(cudaify_rows(trips_i_5, 1), 256, 2147483647u)), dim3(256)>>>(d_y, (double (*)[COLS])(d_A_2), d_x_2, d_gap, d_prod, d_colsum, d_colvar, d_half, d_rsum, d_rsq, d_csum, d_cabs, d_fused, lo_i_5, trips_i_5);
                CUDAIFY_CHECK(cudaGetLastError());
            }
        }
        {
            const long long lo_j_5 = 0;
            const long long trips_j_5 = (34) - lo_j_5 + 1;
            if (trips_j_5 > 0) {
                kernels_kernel_7<<<dim3(cudaify_blocks(cudaify_rows(trips_j_5, 1), 256, 2147483647u)), dim3(256)>>>(d_y, (double (*)[COLS])(d_A_2), d_x_2, d_gap, d_prod, d_colsum, d_colvar, d_half, d_rsum, d_rsq, d_csum, d_cabs, d_fused, lo_j_5, trips_j_5);
                CUDAIFY_CHECK(cudaGetLastError());
            }
        }
        {
            const long long lo_j_6 = 0;
            const long long trips_j_6 = (69) - lo_j_6 + 1;
            if (trips_j_6 > 0) {
                kernels_kernel_8<<<dim3(cudaify_blocks(trips_j_6, 32, 2147483647u)), dim3(32, 32)>>>(d_y, (double (*)[COLS])(d_A_2), d_x_2, d_gap, d_prod, d_colsum, d_colvar, d_half, d_rsum, d_rsq, d_csum, d_cabs, d_fused, lo_j_6, trips_j_6);
                CUDAIFY_CHECK(cudaGetLastError());
            }
        }
        {
            const long long lo_j_7 = 0;
            const long long trips_j_7 = (69) - lo_j_7 + 1;
            if (trips_j_7 > 0) {
                kernels_kernel_9<<<dim3(cudaify_blocks(trips_j_7, 32, 2147483647u)), dim3(32, 32)>>>(d_y, (double (*)[COLS])(d_A_2), d_x_2, d_gap, d_prod, d_colsum, d_colvar, d_half, d_rsum, d_rsq, d_csum, d_cabs, d_fused, lo_j_7, trips_j_7);
                CUDAIFY_CHECK(cudaGetLastError());
            }
        }
        {
            const long long lo_i_6 = 0;
            const long long trips_i_6 = (44) - lo_i_6 + 1;
            if (trips_i_6 > 0) {
                kernels_kernel_10<<<dim3(cudaify_blocks(trips_i_6, 8, 2147483647u)), dim3(256)>>>(d_y, (double (*)[COLS])(d_A_2), d_x_2, d_gap, d_prod, d_colsum, d_colvar, d_half, d_rsum, d_rsq, d_csum, d_cabs, d_fused, lo_i_6, trips_i_6);
                CUDAIFY_CHECK(cudaGetLastError());
            }
        }
        CUDAIFY_CHECK(cudaMemcpy(y, d_y, (size_t)(45) * sizeof(double), cudaMemcpyDeviceToHost));
        CUDAIFY_CHECK(cudaMemcpy(gap, d_gap, (size_t)(45) * sizeof(double), cudaMemcpyDeviceToHost));
        CUDAIFY_CHECK(cudaMemcpy(prod, d_prod, (size_t)(45) * sizeof(double), cudaMemcpyDeviceToHost));
        CUDAIFY_CHECK(cudaMemcpy(colsum, d_colsum, (size_t)(70) * sizeof(double), cudaMemcpyDeviceToHost));
        CUDAIFY_CHECK(cudaMemcpy(colvar, d_colvar, (size_t)(70) * sizeof(double), cudaMemcpyDeviceToHost));
        CUDAIFY_CHECK(cudaMemcpy(half, d_half, (size_t)(35) * sizeof(double), cudaMemcpyDeviceToHost));
        CUDAIFY_CHECK(cudaMemcpy(rsum, d_rsum, (size_t)(45) * sizeof(double), cudaMemcpyDeviceToHost));
        CUDAIFY_CHECK(cudaMemcpy(rsq, d_rsq, (size_t)(45) * sizeof(double), cudaMemcpyDeviceToHost));
        CUDAIFY_CHECK(cudaMemcpy(csum, d_csum, (size_t)(70) * sizeof(double), cudaMemcpyDeviceToHost));
        CUDAIFY_CHECK(cudaMemcpy(cabs, d_cabs, (size_t)(70) * sizeof(double), cudaMemcpyDeviceToHost));
        CUDAIFY_CHECK(cudaMemcpy(fused, d_fused, (size_t)(45) * sizeof(double), cudaMemcpyDeviceToHost));
        CUDAIFY_CHECK(cudaify_free(d_y));
        CUDAIFY_CHECK(cudaify_free(d_A_2));
        CUDAIFY_CHECK(cudaify_free(d_x_2));
        CUDAIFY_CHECK(cudaify_free(d_gap));
        CUDAIFY_CHECK(cudaify_free(d_prod));
        CUDAIFY_CHECK(cudaify_free(d_colsum));
        CUDAIFY_CHECK(cudaify_free(d_colvar));
        CUDAIFY_CHECK(cudaify_free(d_half));
        CUDAIFY_CHECK(cudaify_free(d_rsum));
        CUDAIFY_CHECK(cudaify_free(d_rsq));
        CUDAIFY_CHECK(cudaify_free(d_csum));
        CUDAIFY_CHECK(cudaify_free(d_cabs));
        CUDAIFY_CHECK(cudaify_free(d_fused));
    }
}

int main(void)
{
    init();
    kernels();
    double total = 0.0;
    for (int i = 0; i < ROWS; i++) {
        printf("%d %.6f %.6f %.6f %.6f %.6f %.6f\n", i, y[i], gap[i], prod[i], fused[i], rsum[i],
               rsq[i]);
        total += y[i];
    }
    for (int j = 0; j < COLS; j += 7)
        printf("col %d %.6f %.6f %.6f %.6f %.6f\n", j, colsum[j], colvar[j], half[j / 2], csum[j],
               cabs[j]);
    printf("total %.6f\n", total);
    return 0;
}
