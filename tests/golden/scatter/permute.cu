/* ---- cudaify pattern includes ---- */
#include <string.h>
#include <math.h>
#include <type_traits>

/* Stores through index arrays the scatter method runs on the GPU, checked there: a
   permutation of a vector, and an index array with repeats (the device sees them and the
   host runs the loop, with the same result); and ones it leaves alone (a pointer of unknown
   extent, the value reads the target array, the value has a side effect). */
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

/* Loop 'i' of permute() (line 11): a store through perm, each target marked; a repeated or outside one raises the flag. */
__global__ void permute_scatter(int *perm, double *in, double *out, double scale, long long trips_i, long long cudaify_first, long long cudaify_extent, int *cudaify_marks, int *cudaify_repeated)
{
    for (long long t_i = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_i < trips_i;
         t_i += (long long)blockDim.x * gridDim.x) {
        int i = (int)t_i;
        const long long cudaify_at = (long long)(perm[i]);
        const long long cudaify_mark = cudaify_at - cudaify_first;
        if (cudaify_mark < 0 || cudaify_mark >= cudaify_extent ||
            atomicAdd(&cudaify_marks[cudaify_mark], 1) != 0) {
            *cudaify_repeated = 1;
            continue;
        }
        out[cudaify_at] = in[i] * scale + 1.0;
    }
}

void permute(const std::vector<double> &in, const std::vector<int> &perm, std::vector<double> &out,
             int n, double scale)
{
    {
        /* cudaify: this scatter runs on the GPU as permute_scatter, checked to repeat no index of perm */
        const long long trips_i = cudaify_trips(0, n, 1, 0);
        int repeated = !(trips_i > 0 && (out.size()) > 0);
        if (!repeated) {
            int *d_perm = NULL;
            double *d_in = NULL;
            double *d_out = NULL;
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_perm, (size_t)(perm.size()) * sizeof(int)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_in, (size_t)(in.size()) * sizeof(double)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_out, (size_t)(out.size()) * sizeof(double)));
            CUDAIFY_CHECK(cudaMemcpy(d_perm, perm.data(), (size_t)(perm.size()) * sizeof(int), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_in, in.data(), (size_t)(in.size()) * sizeof(double), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_out, out.data(), (size_t)(out.size()) * sizeof(double), cudaMemcpyHostToDevice));
            /* the mark table, the flag and the saved copy: static, they only grow */
            static int *marks = NULL;
            static long long mark_room = 0;
            static double *saved = NULL;
            static int *d_repeated = NULL;
            if ((long long)(out.size()) > mark_room) {
                if (mark_room > 0) {
                    CUDAIFY_CHECK(cudaFree(marks));
                    CUDAIFY_CHECK(cudaFree(saved));
                }
                CUDAIFY_CHECK(cudaMalloc((void **)&marks, (size_t)(long long)(out.size()) * sizeof(int)));
                CUDAIFY_CHECK(cudaMalloc((void **)&saved, (size_t)(out.size()) * sizeof(double)));
                mark_room = (long long)(out.size());
            }
            if (d_repeated == NULL)
                CUDAIFY_CHECK(cudaMalloc((void **)&d_repeated, sizeof(int)));
            CUDAIFY_CHECK(cudaMemsetAsync(d_repeated, 0, sizeof(int)));
            CUDAIFY_CHECK(cudaMemsetAsync(marks, 0, (size_t)(long long)(out.size()) * sizeof(int)));
            CUDAIFY_CHECK(cudaMemcpyAsync(saved, d_out, (size_t)(out.size()) * sizeof(double), cudaMemcpyDeviceToDevice));
            const unsigned int blocks = cudaify_blocks(trips_i, 256, 2147483647u);
            permute_scatter<<<blocks, 256>>>(d_perm, d_in, d_out, scale, trips_i, (long long)(0), (long long)(out.size()), marks, d_repeated);
            CUDAIFY_CHECK(cudaGetLastError());
            CUDAIFY_CHECK(cudaMemcpy(&repeated, d_repeated, sizeof(int), cudaMemcpyDeviceToHost));
            if (repeated) /* the host runs the loop on the values it had */
                CUDAIFY_CHECK(cudaMemcpy(d_out, saved, (size_t)(out.size()) * sizeof(double), cudaMemcpyDeviceToDevice));
            CUDAIFY_CHECK(cudaMemcpy(out.data(), d_out, (size_t)(out.size()) * sizeof(double), cudaMemcpyDeviceToHost));
            CUDAIFY_CHECK(cudaify_free(d_perm));
            CUDAIFY_CHECK(cudaify_free(d_in));
            CUDAIFY_CHECK(cudaify_free(d_out));
        }
        if (repeated) {
            /* cudaify: host fallback: no work for the GPU, or perm repeats an index or leaves the array */
            for (int i = 0; i < n; i++)
                out[perm[i]] = in[i] * scale + 1.0;
        }
    }
}

void shifted_add(const float *a, const int *to, float *acc, int n, float bias)
{
    for (int i = 0; i < n; i++)
        acc[to[i] + 1] = a[i] * 0.5f + bias;
}

/* Loop 'i' of last_wins() (line 23): a store through keys, each target marked; a repeated or outside one raises the flag. */
__global__ void last_wins_scatter(int *keys, long *values, long *table, long long trips_i_2, long long cudaify_first, long long cudaify_extent, int *cudaify_marks, int *cudaify_repeated)
{
    for (long long t_i_2 = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_i_2 < trips_i_2;
         t_i_2 += (long long)blockDim.x * gridDim.x) {
        int i = (int)t_i_2;
        const long long cudaify_at = (long long)(keys[i]);
        const long long cudaify_mark = cudaify_at - cudaify_first;
        if (cudaify_mark < 0 || cudaify_mark >= cudaify_extent ||
            atomicAdd(&cudaify_marks[cudaify_mark], 1) != 0) {
            *cudaify_repeated = 1;
            continue;
        }
        table[cudaify_at] = values[i];
    }
}

void last_wins(const std::vector<int> &keys, const std::vector<long> &values, std::vector<long> &table, int n)
{
    {
        /* cudaify: this scatter runs on the GPU as last_wins_scatter, checked to repeat no index of keys */
        const long long trips_i_2 = cudaify_trips(0, n, 1, 0);
        int repeated_2 = !(trips_i_2 > 0 && (table.size()) > 0);
        if (!repeated_2) {
            int *d_keys = NULL;
            long *d_values = NULL;
            long *d_table = NULL;
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_keys, (size_t)(keys.size()) * sizeof(int)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_values, (size_t)(values.size()) * sizeof(long)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_table, (size_t)(table.size()) * sizeof(long)));
            CUDAIFY_CHECK(cudaMemcpy(d_keys, keys.data(), (size_t)(keys.size()) * sizeof(int), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_values, values.data(), (size_t)(values.size()) * sizeof(long), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_table, table.data(), (size_t)(table.size()) * sizeof(long), cudaMemcpyHostToDevice));
            /* the mark table, the flag and the saved copy: static, they only grow */
            static int *marks_2 = NULL;
            static long long mark_room_2 = 0;
            static long *saved_2 = NULL;
            static int *d_repeated_2 = NULL;
            if ((long long)(table.size()) > mark_room_2) {
                if (mark_room_2 > 0) {
                    CUDAIFY_CHECK(cudaFree(marks_2));
                    CUDAIFY_CHECK(cudaFree(saved_2));
                }
                CUDAIFY_CHECK(cudaMalloc((void **)&marks_2, (size_t)(long long)(table.size()) * sizeof(int)));
                CUDAIFY_CHECK(cudaMalloc((void **)&saved_2, (size_t)(table.size()) * sizeof(long)));
                mark_room_2 = (long long)(table.size());
            }
            if (d_repeated_2 == NULL)
                CUDAIFY_CHECK(cudaMalloc((void **)&d_repeated_2, sizeof(int)));
            CUDAIFY_CHECK(cudaMemsetAsync(d_repeated_2, 0, sizeof(int)));
            CUDAIFY_CHECK(cudaMemsetAsync(marks_2, 0, (size_t)(long long)(table.size()) * sizeof(int)));
            CUDAIFY_CHECK(cudaMemcpyAsync(saved_2, d_table, (size_t)(table.size()) * sizeof(long), cudaMemcpyDeviceToDevice));
            const unsigned int blocks_2 = cudaify_blocks(trips_i_2, 256, 2147483647u);
            last_wins_scatter<<<blocks_2, 256>>>(d_keys, d_values, d_table, trips_i_2, (long long)(0), (long long)(table.size()), marks_2, d_repeated_2);
            CUDAIFY_CHECK(cudaGetLastError());
            CUDAIFY_CHECK(cudaMemcpy(&repeated_2, d_repeated_2, sizeof(int), cudaMemcpyDeviceToHost));
            if (repeated_2) /* the host runs the loop on the values it had */
                CUDAIFY_CHECK(cudaMemcpy(d_table, saved_2, (size_t)(table.size()) * sizeof(long), cudaMemcpyDeviceToDevice));
            CUDAIFY_CHECK(cudaMemcpy(table.data(), d_table, (size_t)(table.size()) * sizeof(long), cudaMemcpyDeviceToHost));
            CUDAIFY_CHECK(cudaify_free(d_keys));
            CUDAIFY_CHECK(cudaify_free(d_values));
            CUDAIFY_CHECK(cudaify_free(d_table));
        }
        if (repeated_2) {
            /* cudaify: host fallback: no work for the GPU, or keys repeats an index or leaves the array */
            for (int i = 0; i < n; i++)
                table[keys[i]] = values[i];
        }
    }
}

void neighbours(const std::vector<int> &perm, std::vector<double> &out, int n)
{
    for (int i = 1; i < n; i++)
        out[perm[i]] = out[i - 1] + 1.0;
}

void self_index(std::vector<int> &perm, std::vector<int> &out, int n)
{
    for (int i = 0; i < n; i++)
        out[perm[i]] = perm[i]++;
}

int main(void)
{
    const int n = 20000;
    unsigned int state = 99u;
    std::vector<int> perm(n), keys(n);
    std::vector<double> in(n), out(n, 0.0), near(n, 0.0);
    std::vector<float> a(n), acc(n + 1, 0.0f);
    std::vector<long> values(n), table(n / 4, -1);
    std::vector<int> self(n, 0), copy(n);
    for (int i = 0; i < n; i++) {
        perm[i] = i;
        state = state * 1664525u + 1013904223u;
        in[i] = (double)(state >> 12) / 1024.0;
        a[i] = (float)(state >> 24);
        keys[i] = (int)((state >> 7) % (unsigned)(n / 4)); /* repeats */
        values[i] = (long)i * 3 - 7;
    }
    for (int i = n - 1; i > 0; i--) {
        state = state * 1664525u + 1013904223u;
        int j = (int)(((unsigned long long)state * (unsigned long long)(i + 1)) >> 32);
        int t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (int i = 0; i < n; i++)
        copy[i] = perm[i];
    for (int round = 0; round < 3; round++) {
        permute(in, perm, out, n, 1.0 + round);
        shifted_add(a.data(), perm.data(), acc.data(), n, 0.25f * round);
        last_wins(keys, values, table, n);
        neighbours(perm, near, n);
        self_index(copy, self, n / 2);
        double s = 0.0, t = 0.0, u = 0.0;
        long w = 0;
        for (int i = 0; i < n; i++) {
            s += out[i] * (double)(i % 7 + 1);
            t += acc[i] * (double)(i % 3);
            u += near[i];
        }
        for (int i = 0; i < n / 4; i++)
            w += table[i] * (i % 5 + 1);
        printf("round %d: %.4f %.2f %ld %.1f %d\n", round, s, t, w, u, self[5]);
    }
    return 0;
}
