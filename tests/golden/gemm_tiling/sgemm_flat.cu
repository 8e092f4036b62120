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

/* Loop nest 'i, j' of matmul() (line 7): one thread per iteration. */
/* cudaify gemm_tiling: the partial sums of 'matmul_kernel' where blocks share a tile's k, and how many of a tile's blocks have arrived */
static __device__ unsigned long long matmul_kernel_partials[2097152];
static __device__ unsigned int matmul_kernel_arrivals[4096];

__global__ void matmul_kernel(float *a, float *b, float *c, int m, int p, long long trips_i, long long trips_j)
{
    /* cudaify gemm_tiling: blocks of 16 x 16 threads own 128 x 128 outputs, each thread 8 x 8 of them in registers; 8 iterations of 'k' are staged at a time. */
    if (blockDim.x != 16 || blockDim.y != 16) __trap();
    const int thread = threadIdx.y * 16 + threadIdx.x;
    /* a grid sized for 64 x 64 outputs, each thread 4 x 4 of them in registers (more blocks than the wide tiles need): the GPU has more multiprocessors than wide tiles */
    const bool narrow = (long long)gridDim.y > (trips_i + 127) / 128 || (long long)gridDim.x > (trips_j + 127) / 128;
    if (narrow) {
        if (__builtin_expect(gridDim.z > 1, 0)) {  /* k split over the blocks of each tile */
            alignas(16) __shared__ float tile_a[16][68];
            alignas(16) __shared__ float tile_b[16][68];
            for (long long tile_row = blockIdx.y * 64LL; tile_row < trips_i; tile_row += 64LL * gridDim.y) {
                for (long long tile_col = blockIdx.x * 64LL; tile_col < trips_j; tile_col += 64LL * gridDim.x) {
                    float sum_tile[4][4];
                    const long long span_k = (long long)(m) - (long long)(0);
                    const long long trips_k = span_k > 0 ? span_k : 0;
                    #pragma unroll
                    for (int out_r = 0; out_r < 4; out_r++) {
                        #pragma unroll
                        for (int out_c = 0; out_c < 4; out_c++) {
                            const long long t_i = tile_row + (out_r / 4) * 64 + threadIdx.y * 4 + out_r % 4;
                            const long long t_j = tile_col + (out_c / 4) * 64 + threadIdx.x * 4 + out_c % 4;
                            const bool active = t_i < trips_i && t_j < trips_j;
                            sum_tile[out_r][out_c] = {};
                            if (active) {
                                sum_tile[out_r][out_c] = 0.0f;
                            }
                        }
                    }
                    #pragma unroll
                    for (int out_r = 0; out_r < 4; out_r++) {
                        #pragma unroll
                        for (int out_c = 0; out_c < 4; out_c++) {
                            sum_tile[out_r][out_c] = {};
                        }
                    }
                    float staged_a[1][4];
                    float staged_b[1][4];
                    long long next_k = (long long)blockIdx.z * 16;
                    #pragma unroll
                    for (int part = 0; part < 1; part++) {
                        const int group = thread + part * 256;
                        const int slot_outer = group / 4;
                        const int slot_inner = (group % 4) * 4;
                        bool loaded = false;
                        {
                            const long long t_i = tile_row + slot_outer;
                            const long long t_k = next_k + slot_inner;
                            if (tile_row + slot_outer < trips_i && next_k + slot_inner + 3 < trips_k) {
                                int i = (int)t_i;
                                int k = (int)((0) + t_k);
                                const float *address = &(a[i * m + k]);
                                if (((unsigned long long)address & 15ull) == 0) {
                                    const float4 packed = *reinterpret_cast<const float4 *>(address);
                                    staged_a[part][0] = packed.x;
                                    staged_a[part][1] = packed.y;
                                    staged_a[part][2] = packed.z;
                                    staged_a[part][3] = packed.w;
                                    loaded = true;
                                }
                            }
                        }
                        if (__builtin_expect(!loaded, 0)) {
                            {
                                const long long t_i = tile_row + slot_outer;
                                const long long t_k = next_k + slot_inner;
                                if (t_i < trips_i && t_k < trips_k) {
                                    int i = (int)t_i;
                                    int k = (int)((0) + t_k);
                                    staged_a[part][0] = a[i * m + k];
                                } else {
                                    staged_a[part][0] = {};
                                }
                            }
                            {
                                const long long t_i = tile_row + slot_outer;
                                const long long t_k = next_k + slot_inner + 1;
                                if (t_i < trips_i && t_k < trips_k) {
                                    int i = (int)t_i;
                                    int k = (int)((0) + t_k);
                                    staged_a[part][1] = a[i * m + k];
                                } else {
                                    staged_a[part][1] = {};
                                }
                            }
                            {
                                const long long t_i = tile_row + slot_outer;
                                const long long t_k = next_k + slot_inner + 2;
                                if (t_i < trips_i && t_k < trips_k) {
                                    int i = (int)t_i;
                                    int k = (int)((0) + t_k);
                                    staged_a[part][2] = a[i * m + k];
                                } else {
                                    staged_a[part][2] = {};
                                }
                            }
                            {
                                const long long t_i = tile_row + slot_outer;
                                const long long t_k = next_k + slot_inner + 3;
                                if (t_i < trips_i && t_k < trips_k) {
                                    int i = (int)t_i;
                                    int k = (int)((0) + t_k);
                                    staged_a[part][3] = a[i * m + k];
                                } else {
                                    staged_a[part][3] = {};
                                }
                            }
                        }
                    }
                    #pragma unroll
                    for (int part = 0; part < 1; part++) {
                        const int group = thread + part * 256;
                        const int slot_outer = group / 16;
                        const int slot_inner = (group % 16) * 4;
                        bool loaded = false;
                        {
                            const long long t_j = tile_col + slot_inner;
                            const long long t_k = next_k + slot_outer;
                            if (tile_col + slot_inner + 3 < trips_j && next_k + slot_outer < trips_k) {
                                int j = (int)t_j;
                                int k = (int)((0) + t_k);
                                const float *address = &(b[k * p + j]);
                                if (((unsigned long long)address & 15ull) == 0) {
                                    const float4 packed = *reinterpret_cast<const float4 *>(address);
                                    staged_b[part][0] = packed.x;
                                    staged_b[part][1] = packed.y;
                                    staged_b[part][2] = packed.z;
                                    staged_b[part][3] = packed.w;
                                    loaded = true;
                                }
                            }
                        }
                        if (__builtin_expect(!loaded, 0)) {
                            {
                                const long long t_j = tile_col + slot_inner;
                                const long long t_k = next_k + slot_outer;
                                if (t_j < trips_j && t_k < trips_k) {
                                    int j = (int)t_j;
                                    int k = (int)((0) + t_k);
                                    staged_b[part][0] = b[k * p + j];
                                } else {
                                    staged_b[part][0] = {};
                                }
                            }
                            {
                                const long long t_j = tile_col + slot_inner + 1;
                                const long long t_k = next_k + slot_outer;
                                if (t_j < trips_j && t_k < trips_k) {
                                    int j = (int)t_j;
                                    int k = (int)((0) + t_k);
                                    staged_b[part][1] = b[k * p + j];
                                } else {
                                    staged_b[part][1] = {};
                                }
                            }
                            {
                                const long long t_j = tile_col + slot_inner + 2;
                                const long long t_k = next_k + slot_outer;
                                if (t_j < trips_j && t_k < trips_k) {
                                    int j = (int)t_j;
                                    int k = (int)((0) + t_k);
                                    staged_b[part][2] = b[k * p + j];
                                } else {
                                    staged_b[part][2] = {};
                                }
                            }
                            {
                                const long long t_j = tile_col + slot_inner + 3;
                                const long long t_k = next_k + slot_outer;
                                if (t_j < trips_j && t_k < trips_k) {
                                    int j = (int)t_j;
                                    int k = (int)((0) + t_k);
                                    staged_b[part][3] = b[k * p + j];
                                } else {
                                    staged_b[part][3] = {};
                                }
                            }
                        }
                    }
                    for (long long tile_k = 0; tile_k < trips_k; tile_k += 16) {
                        if ((tile_k / 16) % gridDim.z != blockIdx.z) continue;
                        #pragma unroll
                        for (int part = 0; part < 1; part++) {
                            const int group = thread + part * 256;
                            const int slot_outer = group / 4;
                            const int slot_inner = (group % 4) * 4;
                            tile_a[slot_inner][slot_outer] = staged_a[part][0];
                            tile_a[slot_inner + 1][slot_outer] = staged_a[part][1];
                            tile_a[slot_inner + 2][slot_outer] = staged_a[part][2];
                            tile_a[slot_inner + 3][slot_outer] = staged_a[part][3];
                        }
                        #pragma unroll
                        for (int part = 0; part < 1; part++) {
                            const int group = thread + part * 256;
                            const int slot_outer = group / 16;
                            const int slot_inner = (group % 16) * 4;
                            tile_b[slot_outer][slot_inner] = staged_b[part][0];
                            tile_b[slot_outer][slot_inner + 1] = staged_b[part][1];
                            tile_b[slot_outer][slot_inner + 2] = staged_b[part][2];
                            tile_b[slot_outer][slot_inner + 3] = staged_b[part][3];
                        }
                        __syncthreads();
                        next_k = tile_k + 16LL * gridDim.z;
                        if (next_k < trips_k) {
                            #pragma unroll
                            for (int part = 0; part < 1; part++) {
                                const int group = thread + part * 256;
                                const int slot_outer = group / 4;
                                const int slot_inner = (group % 4) * 4;
                                bool loaded = false;
                                {
                                    const long long t_i = tile_row + slot_outer;
                                    const long long t_k = next_k + slot_inner;
                                    if (tile_row + slot_outer < trips_i && next_k + slot_inner + 3 < trips_k) {
                                        int i = (int)t_i;
                                        int k = (int)((0) + t_k);
                                        const float *address = &(a[i * m + k]);
                                        if (((unsigned long long)address & 15ull) == 0) {
                                            const float4 packed = *reinterpret_cast<const float4 *>(address);
                                            staged_a[part][0] = packed.x;
                                            staged_a[part][1] = packed.y;
                                            staged_a[part][2] = packed.z;
                                            staged_a[part][3] = packed.w;
                                            loaded = true;
                                        }
                                    }
                                }
                                if (__builtin_expect(!loaded, 0)) {
                                    {
                                        const long long t_i = tile_row + slot_outer;
                                        const long long t_k = next_k + slot_inner;
                                        if (t_i < trips_i && t_k < trips_k) {
                                            int i = (int)t_i;
                                            int k = (int)((0) + t_k);
                                            staged_a[part][0] = a[i * m + k];
                                        } else {
                                            staged_a[part][0] = {};
                                        }
                                    }
                                    {
                                        const long long t_i = tile_row + slot_outer;
                                        const long long t_k = next_k + slot_inner + 1;
                                        if (t_i < trips_i && t_k < trips_k) {
                                            int i = (int)t_i;
                                            int k = (int)((0) + t_k);
                                            staged_a[part][1] = a[i * m + k];
                                        } else {
                                            staged_a[part][1] = {};
                                        }
                                    }
                                    {
                                        const long long t_i = tile_row + slot_outer;
                                        const long long t_k = next_k + slot_inner + 2;
                                        if (t_i < trips_i && t_k < trips_k) {
                                            int i = (int)t_i;
                                            int k = (int)((0) + t_k);
                                            staged_a[part][2] = a[i * m + k];
                                        } else {
                                            staged_a[part][2] = {};
                                        }
                                    }
                                    {
                                        const long long t_i = tile_row + slot_outer;
                                        const long long t_k = next_k + slot_inner + 3;
                                        if (t_i < trips_i && t_k < trips_k) {
                                            int i = (int)t_i;
                                            int k = (int)((0) + t_k);
                                            staged_a[part][3] = a[i * m + k];
                                        } else {
                                            staged_a[part][3] = {};
                                        }
                                    }
                                }
                            }
                            #pragma unroll
                            for (int part = 0; part < 1; part++) {
                                const int group = thread + part * 256;
                                const int slot_outer = group / 16;
                                const int slot_inner = (group % 16) * 4;
                                bool loaded = false;
                                {
                                    const long long t_j = tile_col + slot_inner;
                                    const long long t_k = next_k + slot_outer;
                                    if (tile_col + slot_inner + 3 < trips_j && next_k + slot_outer < trips_k) {
                                        int j = (int)t_j;
                                        int k = (int)((0) + t_k);
                                        const float *address = &(b[k * p + j]);
                                        if (((unsigned long long)address & 15ull) == 0) {
                                            const float4 packed = *reinterpret_cast<const float4 *>(address);
                                            staged_b[part][0] = packed.x;
                                            staged_b[part][1] = packed.y;
                                            staged_b[part][2] = packed.z;
                                            staged_b[part][3] = packed.w;
                                            loaded = true;
                                        }
                                    }
                                }
                                if (__builtin_expect(!loaded, 0)) {
                                    {
                                        const long long t_j = tile_col + slot_inner;
                                        const long long t_k = next_k + slot_outer;
                                        if (t_j < trips_j && t_k < trips_k) {
                                            int j = (int)t_j;
                                            int k = (int)((0) + t_k);
                                            staged_b[part][0] = b[k * p + j];
                                        } else {
                                            staged_b[part][0] = {};
                                        }
                                    }
                                    {
                                        const long long t_j = tile_col + slot_inner + 1;
                                        const long long t_k = next_k + slot_outer;
                                        if (t_j < trips_j && t_k < trips_k) {
                                            int j = (int)t_j;
                                            int k = (int)((0) + t_k);
                                            staged_b[part][1] = b[k * p + j];
                                        } else {
                                            staged_b[part][1] = {};
                                        }
                                    }
                                    {
                                        const long long t_j = tile_col + slot_inner + 2;
                                        const long long t_k = next_k + slot_outer;
                                        if (t_j < trips_j && t_k < trips_k) {
                                            int j = (int)t_j;
                                            int k = (int)((0) + t_k);
                                            staged_b[part][2] = b[k * p + j];
                                        } else {
                                            staged_b[part][2] = {};
                                        }
                                    }
                                    {
                                        const long long t_j = tile_col + slot_inner + 3;
                                        const long long t_k = next_k + slot_outer;
                                        if (t_j < trips_j && t_k < trips_k) {
                                            int j = (int)t_j;
                                            int k = (int)((0) + t_k);
                                            staged_b[part][3] = b[k * p + j];
                                        } else {
                                            staged_b[part][3] = {};
                                        }
                                    }
                                }
                            }
                        }
                        const int count_k = (int)(trips_k - tile_k < 16 ? trips_k - tile_k : 16);
                        if (count_k == 16) {
                            #pragma unroll
                            for (int kk_k = 0; kk_k < 16; kk_k++) {
                                float frag_a[4];
                                #pragma unroll
                                for (int half = 0; half < 1; half++) {
                                    const float4 packed = *reinterpret_cast<const float4 *>(&tile_a[kk_k][half * 64 + threadIdx.y * 4]);
                                    frag_a[half * 4 + 0] = packed.x;
                                    frag_a[half * 4 + 1] = packed.y;
                                    frag_a[half * 4 + 2] = packed.z;
                                    frag_a[half * 4 + 3] = packed.w;
                                }
                                float frag_b[4];
                                #pragma unroll
                                for (int half = 0; half < 1; half++) {
                                    const float4 packed = *reinterpret_cast<const float4 *>(&tile_b[kk_k][half * 64 + threadIdx.x * 4]);
                                    frag_b[half * 4 + 0] = packed.x;
                                    frag_b[half * 4 + 1] = packed.y;
                                    frag_b[half * 4 + 2] = packed.z;
                                    frag_b[half * 4 + 3] = packed.w;
                                }
                                #pragma unroll
                                for (int out_r = 0; out_r < 4; out_r++) {
                                    #pragma unroll
                                    for (int out_c = 0; out_c < 4; out_c++) {
                                        sum_tile[out_r][out_c] += frag_a[out_r] * frag_b[out_c];
                                    }
                                }
                            }
                        } else {
                            for (int kk_k = 0; kk_k < count_k; kk_k++) {
                                float frag_a[4];
                                #pragma unroll
                                for (int half = 0; half < 1; half++) {
                                    const float4 packed = *reinterpret_cast<const float4 *>(&tile_a[kk_k][half * 64 + threadIdx.y * 4]);
                                    frag_a[half * 4 + 0] = packed.x;
                                    frag_a[half * 4 + 1] = packed.y;
                                    frag_a[half * 4 + 2] = packed.z;
                                    frag_a[half * 4 + 3] = packed.w;
                                }
                                float frag_b[4];
                                #pragma unroll
                                for (int half = 0; half < 1; half++) {
                                    const float4 packed = *reinterpret_cast<const float4 *>(&tile_b[kk_k][half * 64 + threadIdx.x * 4]);
                                    frag_b[half * 4 + 0] = packed.x;
                                    frag_b[half * 4 + 1] = packed.y;
                                    frag_b[half * 4 + 2] = packed.z;
                                    frag_b[half * 4 + 3] = packed.w;
                                }
                                #pragma unroll
                                for (int out_r = 0; out_r < 4; out_r++) {
                                    #pragma unroll
                                    for (int out_c = 0; out_c < 4; out_c++) {
                                        sum_tile[out_r][out_c] += frag_a[out_r] * frag_b[out_c];
                                    }
                                }
                            }
                        }
                        __syncthreads();
                    }
                    /* k split over gridDim.z blocks: store this block's partial sums; the last block of the tile adds them in block order */
                    #pragma unroll
                    for (int out_r = 0; out_r < 4; out_r++) {
                        #pragma unroll
                        for (int out_c = 0; out_c < 4; out_c++) {
                            const long long t_i = tile_row + (out_r / 4) * 64 + threadIdx.y * 4 + out_r % 4;
                            const long long t_j = tile_col + (out_c / 4) * 64 + threadIdx.x * 4 + out_c % 4;
                            const bool active = t_i < trips_i && t_j < trips_j;
                            if (active) {
                                ((float *)((unsigned char *)matmul_kernel_partials))[((long long)blockIdx.z * (trips_i) + t_i) * (trips_j) + t_j] = sum_tile[out_r][out_c];
                            }
                        }
                    }
                    __threadfence();
                    __syncthreads();
                    int arrived = 0;
                    if (thread == 0) {
                        const long long tile_index = (tile_row / 64) * (((trips_j) + 63) / 64) + tile_col / 64;
                        arrived = atomicAdd(&matmul_kernel_arrivals[tile_index], 1u) == gridDim.z - 1u;
                        if (arrived) matmul_kernel_arrivals[tile_index] = 0u;
                    }
                    const int last_split = __syncthreads_or(arrived);
                    if (!last_split) continue;
                    __threadfence();
                    #pragma unroll
                    for (int out_r = 0; out_r < 4; out_r++) {
                        #pragma unroll
                        for (int out_c = 0; out_c < 4; out_c++) {
                            const long long t_i = tile_row + (out_r / 4) * 64 + threadIdx.y * 4 + out_r % 4;
                            const long long t_j = tile_col + (out_c / 4) * 64 + threadIdx.x * 4 + out_c % 4;
                            const bool active = t_i < trips_i && t_j < trips_j;
                            sum_tile[out_r][out_c] = {};
                            if (active) {
                                sum_tile[out_r][out_c] = 0.0f;
                            }
                        }
                    }
                    #pragma unroll
                    for (int out_r = 0; out_r < 4; out_r++) {
                        #pragma unroll
                        for (int out_c = 0; out_c < 4; out_c++) {
                            const long long t_i = tile_row + (out_r / 4) * 64 + threadIdx.y * 4 + out_r % 4;
                            const long long t_j = tile_col + (out_c / 4) * 64 + threadIdx.x * 4 + out_c % 4;
                            const bool active = t_i < trips_i && t_j < trips_j;
                            if (active) {
                                for (unsigned int split = 0; split < gridDim.z; split++) {
                                    sum_tile[out_r][out_c] += __ldcg(&((float *)((unsigned char *)matmul_kernel_partials))[((long long)split * (trips_i) + t_i) * (trips_j) + t_j]);
                                }
                            }
                        }
                    }
                    #pragma unroll
                    for (int out_r = 0; out_r < 4; out_r++) {
                        #pragma unroll
                        for (int out_c = 0; out_c < 4; out_c++) {
                            const long long t_i = tile_row + (out_r / 4) * 64 + threadIdx.y * 4 + out_r % 4;
                            const long long t_j = tile_col + (out_c / 4) * 64 + threadIdx.x * 4 + out_c % 4;
                            const bool active = t_i < trips_i && t_j < trips_j;
                            int i = (int)t_i;
                            int j = (int)t_j;
                            if (active) {
                                c[i * p + j] = sum_tile[out_r][out_c];
                            }
                        }
                    }
                }
            }
        } else {
            alignas(16) __shared__ float tile_a[16][68];
            alignas(16) __shared__ float tile_b[16][68];
            for (long long tile_row = blockIdx.y * 64LL; tile_row < trips_i; tile_row += 64LL * gridDim.y) {
                for (long long tile_col = blockIdx.x * 64LL; tile_col < trips_j; tile_col += 64LL * gridDim.x) {
                    float sum_tile[4][4];
                    const long long span_k = (long long)(m) - (long long)(0);
                    const long long trips_k = span_k > 0 ? span_k : 0;
                    #pragma unroll
                    for (int out_r = 0; out_r < 4; out_r++) {
                        #pragma unroll
                        for (int out_c = 0; out_c < 4; out_c++) {
                            const long long t_i = tile_row + (out_r / 4) * 64 + threadIdx.y * 4 + out_r % 4;
                            const long long t_j = tile_col + (out_c / 4) * 64 + threadIdx.x * 4 + out_c % 4;
                            const bool active = t_i < trips_i && t_j < trips_j;
                            sum_tile[out_r][out_c] = {};
                            if (active) {
                                sum_tile[out_r][out_c] = 0.0f;
                            }
                        }
                    }
                    float staged_a[1][4];
                    float staged_b[1][4];
                    long long next_k = 0;
                    #pragma unroll
                    for (int part = 0; part < 1; part++) {
                        const int group = thread + part * 256;
                        const int slot_outer = group / 4;
                        const int slot_inner = (group % 4) * 4;
                        bool loaded = false;
                        {
                            const long long t_i = tile_row + slot_outer;
                            const long long t_k = next_k + slot_inner;
                            if (tile_row + slot_outer < trips_i && next_k + slot_inner + 3 < trips_k) {
                                int i = (int)t_i;
                                int k = (int)((0) + t_k);
                                const float *address = &(a[i * m + k]);
                                if (((unsigned long long)address & 15ull) == 0) {
                                    const float4 packed = *reinterpret_cast<const float4 *>(address);
                                    staged_a[part][0] = packed.x;
                                    staged_a[part][1] = packed.y;
                                    staged_a[part][2] = packed.z;
                                    staged_a[part][3] = packed.w;
                                    loaded = true;
                                }
                            }
                        }
                        if (__builtin_expect(!loaded, 0)) {
                            {
                                const long long t_i = tile_row + slot_outer;
                                const long long t_k = next_k + slot_inner;
                                if (t_i < trips_i && t_k < trips_k) {
                                    int i = (int)t_i;
                                    int k = (int)((0) + t_k);
                                    staged_a[part][0] = a[i * m + k];
                                } else {
                                    staged_a[part][0] = {};
                                }
                            }
                            {
                                const long long t_i = tile_row + slot_outer;
                                const long long t_k = next_k + slot_inner + 1;
                                if (t_i < trips_i && t_k < trips_k) {
                                    int i = (int)t_i;
                                    int k = (int)((0) + t_k);
                                    staged_a[part][1] = a[i * m + k];
                                } else {
                                    staged_a[part][1] = {};
                                }
                            }
                            {
                                const long long t_i = tile_row + slot_outer;
                                const long long t_k = next_k + slot_inner + 2;
                                if (t_i < trips_i && t_k < trips_k) {
                                    int i = (int)t_i;
                                    int k = (int)((0) + t_k);
                                    staged_a[part][2] = a[i * m + k];
                                } else {
                                    staged_a[part][2] = {};
                                }
                            }
                            {
                                const long long t_i = tile_row + slot_outer;
                                const long long t_k = next_k + slot_inner + 3;
                                if (t_i < trips_i && t_k < trips_k) {
                                    int i = (int)t_i;
                                    int k = (int)((0) + t_k);
                                    staged_a[part][3] = a[i * m + k];
                                } else {
                                    staged_a[part][3] = {};
                                }
                            }
                        }
                    }
                    #pragma unroll
                    for (int part = 0; part < 1; part++) {
                        const int group = thread + part * 256;
                        const int slot_outer = group / 16;
                        const int slot_inner = (group % 16) * 4;
                        bool loaded = false;
                        {
                            const long long t_j = tile_col + slot_inner;
                            const long long t_k = next_k + slot_outer;
                            if (tile_col + slot_inner + 3 < trips_j && next_k + slot_outer < trips_k) {
                                int j = (int)t_j;
                                int k = (int)((0) + t_k);
                                const float *address = &(b[k * p + j]);
                                if (((unsigned long long)address & 15ull) == 0) {
                                    const float4 packed = *reinterpret_cast<const float4 *>(address);
                                    staged_b[part][0] = packed.x;
                                    staged_b[part][1] = packed.y;
                                    staged_b[part][2] = packed.z;
                                    staged_b[part][3] = packed.w;
                                    loaded = true;
                                }
                            }
                        }
                        if (__builtin_expect(!loaded, 0)) {
                            {
                                const long long t_j = tile_col + slot_inner;
                                const long long t_k = next_k + slot_outer;
                                if (t_j < trips_j && t_k < trips_k) {
                                    int j = (int)t_j;
                                    int k = (int)((0) + t_k);
                                    staged_b[part][0] = b[k * p + j];
                                } else {
                                    staged_b[part][0] = {};
                                }
                            }
                            {
                                const long long t_j = tile_col + slot_inner + 1;
                                const long long t_k = next_k + slot_outer;
                                if (t_j < trips_j && t_k < trips_k) {
                                    int j = (int)t_j;
                                    int k = (int)((0) + t_k);
                                    staged_b[part][1] = b[k * p + j];
                                } else {
                                    staged_b[part][1] = {};
                                }
                            }
                            {
                                const long long t_j = tile_col + slot_inner + 2;
                                const long long t_k = next_k + slot_outer;
                                if (t_j < trips_j && t_k < trips_k) {
                                    int j = (int)t_j;
                                    int k = (int)((0) + t_k);
                                    staged_b[part][2] = b[k * p + j];
                                } else {
                                    staged_b[part][2] = {};
                                }
                            }
                            {
                                const long long t_j = tile_col + slot_inner + 3;
                                const long long t_k = next_k + slot_outer;
                                if (t_j < trips_j && t_k < trips_k) {
                                    int j = (int)t_j;
                                    int k = (int)((0) + t_k);
                                    staged_b[part][3] = b[k * p + j];
                                } else {
                                    staged_b[part][3] = {};
                                }
                            }
                        }
                    }
                    for (long long tile_k = 0; tile_k < trips_k; tile_k += 16) {
                        #pragma unroll
                        for (int part = 0; part < 1; part++) {
                            const int group = thread + part * 256;
                            const int slot_outer = group / 4;
                            const int slot_inner = (group % 4) * 4;
                            tile_a[slot_inner][slot_outer] = staged_a[part][0];
                            tile_a[slot_inner + 1][slot_outer] = staged_a[part][1];
                            tile_a[slot_inner + 2][slot_outer] = staged_a[part][2];
                            tile_a[slot_inner + 3][slot_outer] = staged_a[part][3];
                        }
                        #pragma unroll
                        for (int part = 0; part < 1; part++) {
                            const int group = thread + part * 256;
                            const int slot_outer = group / 16;
                            const int slot_inner = (group % 16) * 4;
                            tile_b[slot_outer][slot_inner] = staged_b[part][0];
                            tile_b[slot_outer][slot_inner + 1] = staged_b[part][1];
                            tile_b[slot_outer][slot_inner + 2] = staged_b[part][2];
                            tile_b[slot_outer][slot_inner + 3] = staged_b[part][3];
                        }
                        __syncthreads();
                        next_k = tile_k + 16;
                        if (next_k < trips_k) {
                            #pragma unroll
                            for (int part = 0; part < 1; part++) {
                                const int group = thread + part * 256;
                                const int slot_outer = group / 4;
                                const int slot_inner = (group % 4) * 4;
                                bool loaded = false;
                                {
                                    const long long t_i = tile_row + slot_outer;
                                    const long long t_k = next_k + slot_inner;
                                    if (tile_row + slot_outer < trips_i && next_k + slot_inner + 3 < trips_k) {
                                        int i = (int)t_i;
                                        int k = (int)((0) + t_k);
                                        const float *address = &(a[i * m + k]);
                                        if (((unsigned long long)address & 15ull) == 0) {
                                            const float4 packed = *reinterpret_cast<const float4 *>(address);
                                            staged_a[part][0] = packed.x;
                                            staged_a[part][1] = packed.y;
                                            staged_a[part][2] = packed.z;
                                            staged_a[part][3] = packed.w;
                                            loaded = true;
                                        }
                                    }
                                }
                                if (__builtin_expect(!loaded, 0)) {
                                    {
                                        const long long t_i = tile_row + slot_outer;
                                        const long long t_k = next_k + slot_inner;
                                        if (t_i < trips_i && t_k < trips_k) {
                                            int i = (int)t_i;
                                            int k = (int)((0) + t_k);
                                            staged_a[part][0] = a[i * m + k];
                                        } else {
                                            staged_a[part][0] = {};
                                        }
                                    }
                                    {
                                        const long long t_i = tile_row + slot_outer;
                                        const long long t_k = next_k + slot_inner + 1;
                                        if (t_i < trips_i && t_k < trips_k) {
                                            int i = (int)t_i;
                                            int k = (int)((0) + t_k);
                                            staged_a[part][1] = a[i * m + k];
                                        } else {
                                            staged_a[part][1] = {};
                                        }
                                    }
                                    {
                                        const long long t_i = tile_row + slot_outer;
                                        const long long t_k = next_k + slot_inner + 2;
                                        if (t_i < trips_i && t_k < trips_k) {
                                            int i = (int)t_i;
                                            int k = (int)((0) + t_k);
                                            staged_a[part][2] = a[i * m + k];
                                        } else {
                                            staged_a[part][2] = {};
                                        }
                                    }
                                    {
                                        const long long t_i = tile_row + slot_outer;
                                        const long long t_k = next_k + slot_inner + 3;
                                        if (t_i < trips_i && t_k < trips_k) {
                                            int i = (int)t_i;
                                            int k = (int)((0) + t_k);
                                            staged_a[part][3] = a[i * m + k];
                                        } else {
                                            staged_a[part][3] = {};
                                        }
                                    }
                                }
                            }
                            #pragma unroll
                            for (int part = 0; part < 1; part++) {
                                const int group = thread + part * 256;
                                const int slot_outer = group / 16;
                                const int slot_inner = (group % 16) * 4;
                                bool loaded = false;
                                {
                                    const long long t_j = tile_col + slot_inner;
                                    const long long t_k = next_k + slot_outer;
                                    if (tile_col + slot_inner + 3 < trips_j && next_k + slot_outer < trips_k) {
                                        int j = (int)t_j;
                                        int k = (int)((0) + t_k);
                                        const float *address = &(b[k * p + j]);
                                        if (((unsigned long long)address & 15ull) == 0) {
                                            const float4 packed = *reinterpret_cast<const float4 *>(address);
                                            staged_b[part][0] = packed.x;
                                            staged_b[part][1] = packed.y;
                                            staged_b[part][2] = packed.z;
                                            staged_b[part][3] = packed.w;
                                            loaded = true;
                                        }
                                    }
                                }
                                if (__builtin_expect(!loaded, 0)) {
                                    {
                                        const long long t_j = tile_col + slot_inner;
                                        const long long t_k = next_k + slot_outer;
                                        if (t_j < trips_j && t_k < trips_k) {
                                            int j = (int)t_j;
                                            int k = (int)((0) + t_k);
                                            staged_b[part][0] = b[k * p + j];
                                        } else {
                                            staged_b[part][0] = {};
                                        }
                                    }
                                    {
                                        const long long t_j = tile_col + slot_inner + 1;
                                        const long long t_k = next_k + slot_outer;
                                        if (t_j < trips_j && t_k < trips_k) {
                                            int j = (int)t_j;
                                            int k = (int)((0) + t_k);
                                            staged_b[part][1] = b[k * p + j];
                                        } else {
                                            staged_b[part][1] = {};
                                        }
                                    }
                                    {
                                        const long long t_j = tile_col + slot_inner + 2;
                                        const long long t_k = next_k + slot_outer;
                                        if (t_j < trips_j && t_k < trips_k) {
                                            int j = (int)t_j;
                                            int k = (int)((0) + t_k);
                                            staged_b[part][2] = b[k * p + j];
                                        } else {
                                            staged_b[part][2] = {};
                                        }
                                    }
                                    {
                                        const long long t_j = tile_col + slot_inner + 3;
                                        const long long t_k = next_k + slot_outer;
                                        if (t_j < trips_j && t_k < trips_k) {
                                            int j = (int)t_j;
                                            int k = (int)((0) + t_k);
                                            staged_b[part][3] = b[k * p + j];
                                        } else {
                                            staged_b[part][3] = {};
                                        }
                                    }
                                }
                            }
                        }
                        const int count_k = (int)(trips_k - tile_k < 16 ? trips_k - tile_k : 16);
                        if (count_k == 16) {
                            #pragma unroll
                            for (int kk_k = 0; kk_k < 16; kk_k++) {
                                float frag_a[4];
                                #pragma unroll
                                for (int half = 0; half < 1; half++) {
                                    const float4 packed = *reinterpret_cast<const float4 *>(&tile_a[kk_k][half * 64 + threadIdx.y * 4]);
                                    frag_a[half * 4 + 0] = packed.x;
                                    frag_a[half * 4 + 1] = packed.y;
                                    frag_a[half * 4 + 2] = packed.z;
                                    frag_a[half * 4 + 3] = packed.w;
                                }
                                float frag_b[4];
                                #pragma unroll
                                for (int half = 0; half < 1; half++) {
                                    const float4 packed = *reinterpret_cast<const float4 *>(&tile_b[kk_k][half * 64 + threadIdx.x * 4]);
                                    frag_b[half * 4 + 0] = packed.x;
                                    frag_b[half * 4 + 1] = packed.y;
                                    frag_b[half * 4 + 2] = packed.z;
                                    frag_b[half * 4 + 3] = packed.w;
                                }
                                #pragma unroll
                                for (int out_r = 0; out_r < 4; out_r++) {
                                    #pragma unroll
                                    for (int out_c = 0; out_c < 4; out_c++) {
                                        sum_tile[out_r][out_c] += frag_a[out_r] * frag_b[out_c];
                                    }
                                }
                            }
                        } else {
                            for (int kk_k = 0; kk_k < count_k; kk_k++) {
                                float frag_a[4];
                                #pragma unroll
                                for (int half = 0; half < 1; half++) {
                                    const float4 packed = *reinterpret_cast<const float4 *>(&tile_a[kk_k][half * 64 + threadIdx.y * 4]);
                                    frag_a[half * 4 + 0] = packed.x;
                                    frag_a[half * 4 + 1] = packed.y;
                                    frag_a[half * 4 + 2] = packed.z;
                                    frag_a[half * 4 + 3] = packed.w;
                                }
                                float frag_b[4];
                                #pragma unroll
                                for (int half = 0; half < 1; half++) {
                                    const float4 packed = *reinterpret_cast<const float4 *>(&tile_b[kk_k][half * 64 + threadIdx.x * 4]);
                                    frag_b[half * 4 + 0] = packed.x;
                                    frag_b[half * 4 + 1] = packed.y;
                                    frag_b[half * 4 + 2] = packed.z;
                                    frag_b[half * 4 + 3] = packed.w;
                                }
                                #pragma unroll
                                for (int out_r = 0; out_r < 4; out_r++) {
                                    #pragma unroll
                                    for (int out_c = 0; out_c < 4; out_c++) {
                                        sum_tile[out_r][out_c] += frag_a[out_r] * frag_b[out_c];
                                    }
                                }
                            }
                        }
                        __syncthreads();
                    }
                    #pragma unroll
                    for (int out_r = 0; out_r < 4; out_r++) {
                        #pragma unroll
                        for (int out_c = 0; out_c < 4; out_c++) {
                            const long long t_i = tile_row + (out_r / 4) * 64 + threadIdx.y * 4 + out_r % 4;
                            const long long t_j = tile_col + (out_c / 4) * 64 + threadIdx.x * 4 + out_c % 4;
                            const bool active = t_i < trips_i && t_j < trips_j;
                            int i = (int)t_i;
                            int j = (int)t_j;
                            if (active) {
                                c[i * p + j] = sum_tile[out_r][out_c];
                            }
                        }
                    }
                }
            }
        }
    } else {
        alignas(16) __shared__ float tile_a[8][132];
        alignas(16) __shared__ float tile_b[8][132];
        for (long long tile_row = blockIdx.y * 128LL; tile_row < trips_i; tile_row += 128LL * gridDim.y) {
            for (long long tile_col = blockIdx.x * 128LL; tile_col < trips_j; tile_col += 128LL * gridDim.x) {
                float sum_tile[8][8];
                const long long span_k = (long long)(m) - (long long)(0);
                const long long trips_k = span_k > 0 ? span_k : 0;
                #pragma unroll
                for (int out_r = 0; out_r < 8; out_r++) {
                    #pragma unroll
                    for (int out_c = 0; out_c < 8; out_c++) {
                        const long long t_i = tile_row + (out_r / 4) * 64 + threadIdx.y * 4 + out_r % 4;
                        const long long t_j = tile_col + (out_c / 4) * 64 + threadIdx.x * 4 + out_c % 4;
                        const bool active = t_i < trips_i && t_j < trips_j;
                        sum_tile[out_r][out_c] = {};
                        if (active) {
                            sum_tile[out_r][out_c] = 0.0f;
                        }
                    }
                }
                float staged_a[1][4];
                float staged_b[1][4];
                long long next_k = 0;
                #pragma unroll
                for (int part = 0; part < 1; part++) {
                    const int group = thread + part * 256;
                    const int slot_outer = group / 2;
                    const int slot_inner = (group % 2) * 4;
                    bool loaded = false;
                    {
                        const long long t_i = tile_row + slot_outer;
                        const long long t_k = next_k + slot_inner;
                        if (tile_row + slot_outer < trips_i && next_k + slot_inner + 3 < trips_k) {
                            int i = (int)t_i;
                            int k = (int)((0) + t_k);
                            const float *address = &(a[i * m + k]);
                            if (((unsigned long long)address & 15ull) == 0) {
                                const float4 packed = *reinterpret_cast<const float4 *>(address);
                                staged_a[part][0] = packed.x;
                                staged_a[part][1] = packed.y;
                                staged_a[part][2] = packed.z;
                                staged_a[part][3] = packed.w;
                                loaded = true;
                            }
                        }
                    }
                    if (__builtin_expect(!loaded, 0)) {
                        {
                            const long long t_i = tile_row + slot_outer;
                            const long long t_k = next_k + slot_inner;
                            if (t_i < trips_i && t_k < trips_k) {
                                int i = (int)t_i;
                                int k = (int)((0) + t_k);
                                staged_a[part][0] = a[i * m + k];
                            } else {
                                staged_a[part][0] = {};
                            }
                        }
                        {
                            const long long t_i = tile_row + slot_outer;
                            const long long t_k = next_k + slot_inner + 1;
                            if (t_i < trips_i && t_k < trips_k) {
                                int i = (int)t_i;
                                int k = (int)((0) + t_k);
                                staged_a[part][1] = a[i * m + k];
                            } else {
                                staged_a[part][1] = {};
                            }
                        }
                        {
                            const long long t_i = tile_row + slot_outer;
                            const long long t_k = next_k + slot_inner + 2;
                            if (t_i < trips_i && t_k < trips_k) {
                                int i = (int)t_i;
                                int k = (int)((0) + t_k);
                                staged_a[part][2] = a[i * m + k];
                            } else {
                                staged_a[part][2] = {};
                            }
                        }
                        {
                            const long long t_i = tile_row + slot_outer;
                            const long long t_k = next_k + slot_inner + 3;
                            if (t_i < trips_i && t_k < trips_k) {
                                int i = (int)t_i;
                                int k = (int)((0) + t_k);
                                staged_a[part][3] = a[i * m + k];
                            } else {
                                staged_a[part][3] = {};
                            }
                        }
                    }
                }
                #pragma unroll
                for (int part = 0; part < 1; part++) {
                    const int group = thread + part * 256;
                    const int slot_outer = group / 32;
                    const int slot_inner = (group % 32) * 4;
                    bool loaded = false;
                    {
                        const long long t_j = tile_col + slot_inner;
                        const long long t_k = next_k + slot_outer;
                        if (tile_col + slot_inner + 3 < trips_j && next_k + slot_outer < trips_k) {
                            int j = (int)t_j;
                            int k = (int)((0) + t_k);
                            const float *address = &(b[k * p + j]);
                            if (((unsigned long long)address & 15ull) == 0) {
                                const float4 packed = *reinterpret_cast<const float4 *>(address);
                                staged_b[part][0] = packed.x;
                                staged_b[part][1] = packed.y;
                                staged_b[part][2] = packed.z;
                                staged_b[part][3] = packed.w;
                                loaded = true;
                            }
                        }
                    }
                    if (__builtin_expect(!loaded, 0)) {
                        {
                            const long long t_j = tile_col + slot_inner;
                            const long long t_k = next_k + slot_outer;
                            if (t_j < trips_j && t_k < trips_k) {
                                int j = (int)t_j;
                                int k = (int)((0) + t_k);
                                staged_b[part][0] = b[k * p + j];
                            } else {
                                staged_b[part][0] = {};
                            }
                        }
                        {
                            const long long t_j = tile_col + slot_inner + 1;
                            const long long t_k = next_k + slot_outer;
                            if (t_j < trips_j && t_k < trips_k) {
                                int j = (int)t_j;
                                int k = (int)((0) + t_k);
                                staged_b[part][1] = b[k * p + j];
                            } else {
                                staged_b[part][1] = {};
                            }
                        }
                        {
                            const long long t_j = tile_col + slot_inner + 2;
                            const long long t_k = next_k + slot_outer;
                            if (t_j < trips_j && t_k < trips_k) {
                                int j = (int)t_j;
                                int k = (int)((0) + t_k);
                                staged_b[part][2] = b[k * p + j];
                            } else {
                                staged_b[part][2] = {};
                            }
                        }
                        {
                            const long long t_j = tile_col + slot_inner + 3;
                            const long long t_k = next_k + slot_outer;
                            if (t_j < trips_j && t_k < trips_k) {
                                int j = (int)t_j;
                                int k = (int)((0) + t_k);
                                staged_b[part][3] = b[k * p + j];
                            } else {
                                staged_b[part][3] = {};
                            }
                        }
                    }
                }
                for (long long tile_k = 0; tile_k < trips_k; tile_k += 8) {
                    #pragma unroll
                    for (int part = 0; part < 1; part++) {
                        const int group = thread + part * 256;
                        const int slot_outer = group / 2;
                        const int slot_inner = (group % 2) * 4;
                        tile_a[slot_inner][slot_outer] = staged_a[part][0];
                        tile_a[slot_inner + 1][slot_outer] = staged_a[part][1];
                        tile_a[slot_inner + 2][slot_outer] = staged_a[part][2];
                        tile_a[slot_inner + 3][slot_outer] = staged_a[part][3];
                    }
                    #pragma unroll
                    for (int part = 0; part < 1; part++) {
                        const int group = thread + part * 256;
                        const int slot_outer = group / 32;
                        const int slot_inner = (group % 32) * 4;
                        tile_b[slot_outer][slot_inner] = staged_b[part][0];
                        tile_b[slot_outer][slot_inner + 1] = staged_b[part][1];
                        tile_b[slot_outer][slot_inner + 2] = staged_b[part][2];
                        tile_b[slot_outer][slot_inner + 3] = staged_b[part][3];
                    }
                    __syncthreads();
                    next_k = tile_k + 8;
                    if (next_k < trips_k) {
                        #pragma unroll
                        for (int part = 0; part < 1; part++) {
                            const int group = thread + part * 256;
                            const int slot_outer = group / 2;
                            const int slot_inner = (group % 2) * 4;
                            bool loaded = false;
                            {
                                const long long t_i = tile_row + slot_outer;
                                const long long t_k = next_k + slot_inner;
                                if (tile_row + slot_outer < trips_i && next_k + slot_inner + 3 < trips_k) {
                                    int i = (int)t_i;
                                    int k = (int)((0) + t_k);
                                    const float *address = &(a[i * m + k]);
                                    if (((unsigned long long)address & 15ull) == 0) {
                                        const float4 packed = *reinterpret_cast<const float4 *>(address);
                                        staged_a[part][0] = packed.x;
                                        staged_a[part][1] = packed.y;
                                        staged_a[part][2] = packed.z;
                                        staged_a[part][3] = packed.w;
                                        loaded = true;
                                    }
                                }
                            }
                            if (__builtin_expect(!loaded, 0)) {
                                {
                                    const long long t_i = tile_row + slot_outer;
                                    const long long t_k = next_k + slot_inner;
                                    if (t_i < trips_i && t_k < trips_k) {
                                        int i = (int)t_i;
                                        int k = (int)((0) + t_k);
                                        staged_a[part][0] = a[i * m + k];
                                    } else {
                                        staged_a[part][0] = {};
                                    }
                                }
                                {
                                    const long long t_i = tile_row + slot_outer;
                                    const long long t_k = next_k + slot_inner + 1;
                                    if (t_i < trips_i && t_k < trips_k) {
                                        int i = (int)t_i;
                                        int k = (int)((0) + t_k);
                                        staged_a[part][1] = a[i * m + k];
                                    } else {
                                        staged_a[part][1] = {};
                                    }
                                }
                                {
                                    const long long t_i = tile_row + slot_outer;
                                    const long long t_k = next_k + slot_inner + 2;
                                    if (t_i < trips_i && t_k < trips_k) {
                                        int i = (int)t_i;
                                        int k = (int)((0) + t_k);
                                        staged_a[part][2] = a[i * m + k];
                                    } else {
                                        staged_a[part][2] = {};
                                    }
                                }
                                {
                                    const long long t_i = tile_row + slot_outer;
                                    const long long t_k = next_k + slot_inner + 3;
                                    if (t_i < trips_i && t_k < trips_k) {
                                        int i = (int)t_i;
                                        int k = (int)((0) + t_k);
                                        staged_a[part][3] = a[i * m + k];
                                    } else {
                                        staged_a[part][3] = {};
                                    }
                                }
                            }
                        }
                        #pragma unroll
                        for (int part = 0; part < 1; part++) {
                            const int group = thread + part * 256;
                            const int slot_outer = group / 32;
                            const int slot_inner = (group % 32) * 4;
                            bool loaded = false;
                            {
                                const long long t_j = tile_col + slot_inner;
                                const long long t_k = next_k + slot_outer;
                                if (tile_col + slot_inner + 3 < trips_j && next_k + slot_outer < trips_k) {
                                    int j = (int)t_j;
                                    int k = (int)((0) + t_k);
                                    const float *address = &(b[k * p + j]);
                                    if (((unsigned long long)address & 15ull) == 0) {
                                        const float4 packed = *reinterpret_cast<const float4 *>(address);
                                        staged_b[part][0] = packed.x;
                                        staged_b[part][1] = packed.y;
                                        staged_b[part][2] = packed.z;
                                        staged_b[part][3] = packed.w;
                                        loaded = true;
                                    }
                                }
                            }
                            if (__builtin_expect(!loaded, 0)) {
                                {
                                    const long long t_j = tile_col + slot_inner;
                                    const long long t_k = next_k + slot_outer;
                                    if (t_j < trips_j && t_k < trips_k) {
                                        int j = (int)t_j;
                                        int k = (int)((0) + t_k);
                                        staged_b[part][0] = b[k * p + j];
                                    } else {
                                        staged_b[part][0] = {};
                                    }
                                }
                                {
                                    const long long t_j = tile_col + slot_inner + 1;
                                    const long long t_k = next_k + slot_outer;
                                    if (t_j < trips_j && t_k < trips_k) {
                                        int j = (int)t_j;
                                        int k = (int)((0) + t_k);
                                        staged_b[part][1] = b[k * p + j];
                                    } else {
                                        staged_b[part][1] = {};
                                    }
                                }
                                {
                                    const long long t_j = tile_col + slot_inner + 2;
                                    const long long t_k = next_k + slot_outer;
                                    if (t_j < trips_j && t_k < trips_k) {
                                        int j = (int)t_j;
                                        int k = (int)((0) + t_k);
                                        staged_b[part][2] = b[k * p + j];
                                    } else {
                                        staged_b[part][2] = {};
                                    }
                                }
                                {
                                    const long long t_j = tile_col + slot_inner + 3;
                                    const long long t_k = next_k + slot_outer;
                                    if (t_j < trips_j && t_k < trips_k) {
                                        int j = (int)t_j;
                                        int k = (int)((0) + t_k);
                                        staged_b[part][3] = b[k * p + j];
                                    } else {
                                        staged_b[part][3] = {};
                                    }
                                }
                            }
                        }
                    }
                    const int count_k = (int)(trips_k - tile_k < 8 ? trips_k - tile_k : 8);
                    if (count_k == 8) {
                        #pragma unroll
                        for (int kk_k = 0; kk_k < 8; kk_k++) {
                            float frag_a[8];
                            #pragma unroll
                            for (int half = 0; half < 2; half++) {
                                const float4 packed = *reinterpret_cast<const float4 *>(&tile_a[kk_k][half * 64 + threadIdx.y * 4]);
                                frag_a[half * 4 + 0] = packed.x;
                                frag_a[half * 4 + 1] = packed.y;
                                frag_a[half * 4 + 2] = packed.z;
                                frag_a[half * 4 + 3] = packed.w;
                            }
                            float frag_b[8];
                            #pragma unroll
                            for (int half = 0; half < 2; half++) {
                                const float4 packed = *reinterpret_cast<const float4 *>(&tile_b[kk_k][half * 64 + threadIdx.x * 4]);
                                frag_b[half * 4 + 0] = packed.x;
                                frag_b[half * 4 + 1] = packed.y;
                                frag_b[half * 4 + 2] = packed.z;
                                frag_b[half * 4 + 3] = packed.w;
                            }
                            #pragma unroll
                            for (int out_r = 0; out_r < 8; out_r++) {
                                #pragma unroll
                                for (int out_c = 0; out_c < 8; out_c++) {
                                    sum_tile[out_r][out_c] += frag_a[out_r] * frag_b[out_c];
                                }
                            }
                        }
                    } else {
                        for (int kk_k = 0; kk_k < count_k; kk_k++) {
                            float frag_a[8];
                            #pragma unroll
                            for (int half = 0; half < 2; half++) {
                                const float4 packed = *reinterpret_cast<const float4 *>(&tile_a[kk_k][half * 64 + threadIdx.y * 4]);
                                frag_a[half * 4 + 0] = packed.x;
                                frag_a[half * 4 + 1] = packed.y;
                                frag_a[half * 4 + 2] = packed.z;
                                frag_a[half * 4 + 3] = packed.w;
                            }
                            float frag_b[8];
                            #pragma unroll
                            for (int half = 0; half < 2; half++) {
                                const float4 packed = *reinterpret_cast<const float4 *>(&tile_b[kk_k][half * 64 + threadIdx.x * 4]);
                                frag_b[half * 4 + 0] = packed.x;
                                frag_b[half * 4 + 1] = packed.y;
                                frag_b[half * 4 + 2] = packed.z;
                                frag_b[half * 4 + 3] = packed.w;
                            }
                            #pragma unroll
                            for (int out_r = 0; out_r < 8; out_r++) {
                                #pragma unroll
                                for (int out_c = 0; out_c < 8; out_c++) {
                                    sum_tile[out_r][out_c] += frag_a[out_r] * frag_b[out_c];
                                }
                            }
                        }
                    }
                    __syncthreads();
                }
                #pragma unroll
                for (int out_r = 0; out_r < 8; out_r++) {
                    #pragma unroll
                    for (int out_c = 0; out_c < 8; out_c++) {
                        const long long t_i = tile_row + (out_r / 4) * 64 + threadIdx.y * 4 + out_r % 4;
                        const long long t_j = tile_col + (out_c / 4) * 64 + threadIdx.x * 4 + out_c % 4;
                        const bool active = t_i < trips_i && t_j < trips_j;
                        int i = (int)t_i;
                        int j = (int)t_j;
                        if (active) {
                            c[i * p + j] = sum_tile[out_r][out_c];
                        }
                    }
                }
            }
        }
    }
}

/* cudaify gemm_tiling: 128 x 128 tiles where there are at least as many as multiprocessors, else 64 x 64 */
static int matmul_kernel_tile(long long rows, long long cols)
{
    static int processors = 0;
    if (processors == 0) {
        int device = 0;
        if (cudaGetDevice(&device) != cudaSuccess || cudaDeviceGetAttribute(&processors, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || processors < 1) {
            (void)cudaGetLastError();
            processors = 1;
        }
    }
    return ((rows + 127) / 128) * ((cols + 127) / 128) < processors ? 64 : 128;
}

/* cudaify gemm_tiling: where the output tiles are at most half the multiprocessors, k is split over the blocks of a tile that fill them in one wave, each a share of at least 128 iterations */
static unsigned int matmul_kernel_splits(long long rows, long long cols, long long trips, long long tile)
{
    static int processors = 0;
    if (processors == 0) {
        int device = 0;
        if (cudaGetDevice(&device) != cudaSuccess || cudaDeviceGetAttribute(&processors, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || processors < 1) {
            (void)cudaGetLastError();
            processors = 1;
        }
    }
    if (rows <= 0 || cols <= 0 || tile <= 0 || trips <= 0)
        return 1u;
    const long long tiles = ((rows + tile - 1) / tile) * ((cols + tile - 1) / tile);
    long long splits = 1LL * processors / tiles;
    if (splits > trips / 128)
        splits = trips / 128;
    if (splits > 32)
        splits = 32;
    if (splits < 2)
        return 1u;
    if (tiles > 4096 || (double)splits * rows * cols * 1 > 2097152.0)
        return 1u;
    return (unsigned int)splits;
}

/* C = A * B, row-major flat arrays, sizes that are not multiples of any tile */
void matmul(int n, int m, int p, const float *a, const float *b, float *c)
{
    {
        /* cudaify: this loop nest runs on the GPU as matmul_kernel */
        const long long trips_i = cudaify_trips(0, n, 1, 0);
        const long long trips_j = cudaify_trips(0, p, 1, 0);
        if (trips_i > 0 && trips_j > 0) {
            float *d_a = NULL;
            float *d_b = NULL;
            float *d_c = NULL;
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_a, (size_t)((long long)m*(long long)n) * sizeof(float)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_b, (size_t)((long long)m*(long long)p) * sizeof(float)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_c, (size_t)((long long)n*(long long)p) * sizeof(float)));
            CUDAIFY_CHECK(cudaMemcpy(d_a, a, (size_t)((long long)m*(long long)n) * sizeof(float), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_b, b, (size_t)((long long)m*(long long)p) * sizeof(float), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_c, c, (size_t)((long long)n*(long long)p) * sizeof(float), cudaMemcpyHostToDevice));
            const dim3 block(16, 16);
            const dim3 grid(cudaify_blocks(trips_j, matmul_kernel_tile(trips_i, trips_j), 2147483647u), cudaify_blocks(trips_i, matmul_kernel_tile(trips_i, trips_j), 65535u));
            matmul_kernel<<<dim3(grid.x, grid.y, matmul_kernel_splits(trips_i, trips_j, ((long long)((m)) - (long long)(0)), matmul_kernel_tile(trips_i, trips_j))), block>>>(d_a, d_b, d_c, m, p, trips_i, trips_j);
            CUDAIFY_CHECK(cudaGetLastError());
            CUDAIFY_CHECK(cudaMemcpy(c, d_c, (size_t)((long long)n*(long long)p) * sizeof(float), cudaMemcpyDeviceToHost));
            CUDAIFY_CHECK(cudaify_free(d_a));
            CUDAIFY_CHECK(cudaify_free(d_b));
            CUDAIFY_CHECK(cudaify_free(d_c));
        }
    }
}

int main(void)
{
    int n = 77, m = 53, p = 41;
    float *a = (float *)malloc(sizeof(float) * n * m);
    float *b = (float *)malloc(sizeof(float) * m * p);
    float *c = (float *)malloc(sizeof(float) * n * p);
    for (int i = 0; i < n * m; i++)
        a[i] = (float)((i * 7) % 13) * 0.125f;
    for (int i = 0; i < m * p; i++)
        b[i] = (float)((i * 5) % 11) * 0.25f - 1.0f;
    matmul(n, m, p, a, b, c);
    double sum = 0.0, weighted = 0.0;
    for (int i = 0; i < n * p; i++) {
        sum += c[i];
        weighted += c[i] * (i % 7);
    }
    printf("sum=%.6e weighted=%.6e c[0]=%.4f c[last]=%.4f\n", sum, weighted, c[0], c[n * p - 1]);
    free(a);
    free(b);
    free(c);
    return 0;
}
