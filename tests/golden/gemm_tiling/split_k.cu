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

/* Loop nest 'i, j' of cross() (line 9): one thread per iteration. */
/* cudaify gemm_tiling: the partial sums of 'cross_kernel' where blocks share a tile's k, and how many of a tile's blocks have arrived */
static __device__ unsigned long long cross_kernel_partials[2097152];
static __device__ unsigned int cross_kernel_arrivals[4096];

__global__ void cross_kernel(float *a, float *b, float *c, int k, int m, int n, long long trips_i, long long trips_j)
{
    /* cudaify gemm_tiling: blocks of 16 x 16 threads own 128 x 128 outputs, each thread 8 x 8 of them in registers; 8 iterations of 'p' are staged at a time. */
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
                    const long long span_p = (long long)(k) - (long long)(0);
                    const long long trips_p = span_p > 0 ? span_p : 0;
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
                    long long next_p = (long long)blockIdx.z * 16;
                    #pragma unroll
                    for (int part = 0; part < 1; part++) {
                        const int group = thread + part * 256;
                        const int slot_outer = group / 16;
                        const int slot_inner = (group % 16) * 4;
                        bool loaded = false;
                        {
                            const long long t_i = tile_row + slot_inner;
                            const long long t_p = next_p + slot_outer;
                            if (tile_row + slot_inner + 3 < trips_i && next_p + slot_outer < trips_p) {
                                int i = (int)t_i;
                                int p = (int)((0) + t_p);
                                const float *address = &(a[p * m + i]);
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
                                const long long t_i = tile_row + slot_inner;
                                const long long t_p = next_p + slot_outer;
                                if (t_i < trips_i && t_p < trips_p) {
                                    int i = (int)t_i;
                                    int p = (int)((0) + t_p);
                                    staged_a[part][0] = a[p * m + i];
                                } else {
                                    staged_a[part][0] = {};
                                }
                            }
                            {
                                const long long t_i = tile_row + slot_inner + 1;
                                const long long t_p = next_p + slot_outer;
                                if (t_i < trips_i && t_p < trips_p) {
                                    int i = (int)t_i;
                                    int p = (int)((0) + t_p);
                                    staged_a[part][1] = a[p * m + i];
                                } else {
                                    staged_a[part][1] = {};
                                }
                            }
                            {
                                const long long t_i = tile_row + slot_inner + 2;
                                const long long t_p = next_p + slot_outer;
                                if (t_i < trips_i && t_p < trips_p) {
                                    int i = (int)t_i;
                                    int p = (int)((0) + t_p);
                                    staged_a[part][2] = a[p * m + i];
                                } else {
                                    staged_a[part][2] = {};
                                }
                            }
                            {
                                const long long t_i = tile_row + slot_inner + 3;
                                const long long t_p = next_p + slot_outer;
                                if (t_i < trips_i && t_p < trips_p) {
                                    int i = (int)t_i;
                                    int p = (int)((0) + t_p);
                                    staged_a[part][3] = a[p * m + i];
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
                            const long long t_p = next_p + slot_outer;
                            if (tile_col + slot_inner + 3 < trips_j && next_p + slot_outer < trips_p) {
                                int j = (int)t_j;
                                int p = (int)((0) + t_p);
                                const float *address = &(b[p * n + j]);
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
                                const long long t_p = next_p + slot_outer;
                                if (t_j < trips_j && t_p < trips_p) {
                                    int j = (int)t_j;
                                    int p = (int)((0) + t_p);
                                    staged_b[part][0] = b[p * n + j];
                                } else {
                                    staged_b[part][0] = {};
                                }
                            }
                            {
                                const long long t_j = tile_col + slot_inner + 1;
                                const long long t_p = next_p + slot_outer;
                                if (t_j < trips_j && t_p < trips_p) {
                                    int j = (int)t_j;
                                    int p = (int)((0) + t_p);
                                    staged_b[part][1] = b[p * n + j];
                                } else {
                                    staged_b[part][1] = {};
                                }
                            }
                            {
                                const long long t_j = tile_col + slot_inner + 2;
                                const long long t_p = next_p + slot_outer;
                                if (t_j < trips_j && t_p < trips_p) {
                                    int j = (int)t_j;
                                    int p = (int)((0) + t_p);
                                    staged_b[part][2] = b[p * n + j];
                                } else {
                                    staged_b[part][2] = {};
                                }
                            }
                            {
                                const long long t_j = tile_col + slot_inner + 3;
                                const long long t_p = next_p + slot_outer;
                                if (t_j < trips_j && t_p < trips_p) {
                                    int j = (int)t_j;
                                    int p = (int)((0) + t_p);
                                    staged_b[part][3] = b[p * n + j];
                                } else {
                                    staged_b[part][3] = {};
                                }
                            }
                        }
                    }
                    for (long long tile_p = 0; tile_p < trips_p; tile_p += 16) {
                        if ((tile_p / 16) % gridDim.z != blockIdx.z) continue;
                        #pragma unroll
                        for (int part = 0; part < 1; part++) {
                            const int group = thread + part * 256;
                            const int slot_outer = group / 16;
                            const int slot_inner = (group % 16) * 4;
                            tile_a[slot_outer][slot_inner] = staged_a[part][0];
                            tile_a[slot_outer][slot_inner + 1] = staged_a[part][1];
                            tile_a[slot_outer][slot_inner + 2] = staged_a[part][2];
                            tile_a[slot_outer][slot_inner + 3] = staged_a[part][3];
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
                        next_p = tile_p + 16LL * gridDim.z;
                        if (next_p < trips_p) {
                            #pragma unroll
                            for (int part = 0; part < 1; part++) {
                                const int group = thread + part * 256;
                                const int slot_outer = group / 16;
                                const int slot_inner = (group % 16) * 4;
                                bool loaded = false;
                                {
                                    const long long t_i = tile_row + slot_inner;
                                    const long long t_p = next_p + slot_outer;
                                    if (tile_row + slot_inner + 3 < trips_i && next_p + slot_outer < trips_p) {
                                        int i = (int)t_i;
                                        int p = (int)((0) + t_p);
                                        const float *address = &(a[p * m + i]);
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
                                        const long long t_i = tile_row + slot_inner;
                                        const long long t_p = next_p + slot_outer;
                                        if (t_i < trips_i && t_p < trips_p) {
                                            int i = (int)t_i;
                                            int p = (int)((0) + t_p);
                                            staged_a[part][0] = a[p * m + i];
                                        } else {
                                            staged_a[part][0] = {};
                                        }
                                    }
                                    {
                                        const long long t_i = tile_row + slot_inner + 1;
                                        const long long t_p = next_p + slot_outer;
                                        if (t_i < trips_i && t_p < trips_p) {
                                            int i = (int)t_i;
                                            int p = (int)((0) + t_p);
                                            staged_a[part][1] = a[p * m + i];
                                        } else {
                                            staged_a[part][1] = {};
                                        }
                                    }
                                    {
                                        const long long t_i = tile_row + slot_inner + 2;
                                        const long long t_p = next_p + slot_outer;
                                        if (t_i < trips_i && t_p < trips_p) {
                                            int i = (int)t_i;
                                            int p = (int)((0) + t_p);
                                            staged_a[part][2] = a[p * m + i];
                                        } else {
                                            staged_a[part][2] = {};
                                        }
                                    }
                                    {
                                        const long long t_i = tile_row + slot_inner + 3;
                                        const long long t_p = next_p + slot_outer;
                                        if (t_i < trips_i && t_p < trips_p) {
                                            int i = (int)t_i;
                                            int p = (int)((0) + t_p);
                                            staged_a[part][3] = a[p * m + i];
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
                                    const long long t_p = next_p + slot_outer;
                                    if (tile_col + slot_inner + 3 < trips_j && next_p + slot_outer < trips_p) {
                                        int j = (int)t_j;
                                        int p = (int)((0) + t_p);
                                        const float *address = &(b[p * n + j]);
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
                                        const long long t_p = next_p + slot_outer;
                                        if (t_j < trips_j && t_p < trips_p) {
                                            int j = (int)t_j;
                                            int p = (int)((0) + t_p);
                                            staged_b[part][0] = b[p * n + j];
                                        } else {
                                            staged_b[part][0] = {};
                                        }
                                    }
                                    {
                                        const long long t_j = tile_col + slot_inner + 1;
                                        const long long t_p = next_p + slot_outer;
                                        if (t_j < trips_j && t_p < trips_p) {
                                            int j = (int)t_j;
                                            int p = (int)((0) + t_p);
                                            staged_b[part][1] = b[p * n + j];
                                        } else {
                                            staged_b[part][1] = {};
                                        }
                                    }
                                    {
                                        const long long t_j = tile_col + slot_inner + 2;
                                        const long long t_p = next_p + slot_outer;
                                        if (t_j < trips_j && t_p < trips_p) {
                                            int j = (int)t_j;
                                            int p = (int)((0) + t_p);
                                            staged_b[part][2] = b[p * n + j];
                                        } else {
                                            staged_b[part][2] = {};
                                        }
                                    }
                                    {
                                        const long long t_j = tile_col + slot_inner + 3;
                                        const long long t_p = next_p + slot_outer;
                                        if (t_j < trips_j && t_p < trips_p) {
                                            int j = (int)t_j;
                                            int p = (int)((0) + t_p);
                                            staged_b[part][3] = b[p * n + j];
                                        } else {
                                            staged_b[part][3] = {};
                                        }
                                    }
                                }
                            }
                        }
                        const int count_p = (int)(trips_p - tile_p < 16 ? trips_p - tile_p : 16);
                        if (count_p == 16) {
                            #pragma unroll
                            for (int kk_p = 0; kk_p < 16; kk_p++) {
                                float frag_a[4];
                                #pragma unroll
                                for (int half = 0; half < 1; half++) {
                                    const float4 packed = *reinterpret_cast<const float4 *>(&tile_a[kk_p][half * 64 + threadIdx.y * 4]);
                                    frag_a[half * 4 + 0] = packed.x;
                                    frag_a[half * 4 + 1] = packed.y;
                                    frag_a[half * 4 + 2] = packed.z;
                                    frag_a[half * 4 + 3] = packed.w;
                                }
                                float frag_b[4];
                                #pragma unroll
                                for (int half = 0; half < 1; half++) {
                                    const float4 packed = *reinterpret_cast<const float4 *>(&tile_b[kk_p][half * 64 + threadIdx.x * 4]);
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
                            for (int kk_p = 0; kk_p < count_p; kk_p++) {
                                float frag_a[4];
                                #pragma unroll
                                for (int half = 0; half < 1; half++) {
                                    const float4 packed = *reinterpret_cast<const float4 *>(&tile_a[kk_p][half * 64 + threadIdx.y * 4]);
                                    frag_a[half * 4 + 0] = packed.x;
                                    frag_a[half * 4 + 1] = packed.y;
                                    frag_a[half * 4 + 2] = packed.z;
                                    frag_a[half * 4 + 3] = packed.w;
                                }
                                float frag_b[4];
                                #pragma unroll
                                for (int half = 0; half < 1; half++) {
                                    const float4 packed = *reinterpret_cast<const float4 *>(&tile_b[kk_p][half * 64 + threadIdx.x * 4]);
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
                                ((float *)((unsigned char *)cross_kernel_partials))[((long long)blockIdx.z * (trips_i) + t_i) * (trips_j) + t_j] = sum_tile[out_r][out_c];
                            }
                        }
                    }
                    __threadfence();
                    __syncthreads();
                    int arrived = 0;
                    if (thread == 0) {
                        const long long tile_index = (tile_row / 64) * (((trips_j) + 63) / 64) + tile_col / 64;
                        arrived = atomicAdd(&cross_kernel_arrivals[tile_index], 1u) == gridDim.z - 1u;
                        if (arrived) cross_kernel_arrivals[tile_index] = 0u;
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
                                    sum_tile[out_r][out_c] += __ldcg(&((float *)((unsigned char *)cross_kernel_partials))[((long long)split * (trips_i) + t_i) * (trips_j) + t_j]);
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
                                c[i * n + j] = 0.5f * sum_tile[out_r][out_c];
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
                    const long long span_p = (long long)(k) - (long long)(0);
                    const long long trips_p = span_p > 0 ? span_p : 0;
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
                    long long next_p = 0;
                    #pragma unroll
                    for (int part = 0; part < 1; part++) {
                        const int group = thread + part * 256;
                        const int slot_outer = group / 16;
                        const int slot_inner = (group % 16) * 4;
                        bool loaded = false;
                        {
                            const long long t_i = tile_row + slot_inner;
                            const long long t_p = next_p + slot_outer;
                            if (tile_row + slot_inner + 3 < trips_i && next_p + slot_outer < trips_p) {
                                int i = (int)t_i;
                                int p = (int)((0) + t_p);
                                const float *address = &(a[p * m + i]);
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
                                const long long t_i = tile_row + slot_inner;
                                const long long t_p = next_p + slot_outer;
                                if (t_i < trips_i && t_p < trips_p) {
                                    int i = (int)t_i;
                                    int p = (int)((0) + t_p);
                                    staged_a[part][0] = a[p * m + i];
                                } else {
                                    staged_a[part][0] = {};
                                }
                            }
                            {
                                const long long t_i = tile_row + slot_inner + 1;
                                const long long t_p = next_p + slot_outer;
                                if (t_i < trips_i && t_p < trips_p) {
                                    int i = (int)t_i;
                                    int p = (int)((0) + t_p);
                                    staged_a[part][1] = a[p * m + i];
                                } else {
                                    staged_a[part][1] = {};
                                }
                            }
                            {
                                const long long t_i = tile_row + slot_inner + 2;
                                const long long t_p = next_p + slot_outer;
                                if (t_i < trips_i && t_p < trips_p) {
                                    int i = (int)t_i;
                                    int p = (int)((0) + t_p);
                                    staged_a[part][2] = a[p * m + i];
                                } else {
                                    staged_a[part][2] = {};
                                }
                            }
                            {
                                const long long t_i = tile_row + slot_inner + 3;
                                const long long t_p = next_p + slot_outer;
                                if (t_i < trips_i && t_p < trips_p) {
                                    int i = (int)t_i;
                                    int p = (int)((0) + t_p);
                                    staged_a[part][3] = a[p * m + i];
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
                            const long long t_p = next_p + slot_outer;
                            if (tile_col + slot_inner + 3 < trips_j && next_p + slot_outer < trips_p) {
                                int j = (int)t_j;
                                int p = (int)((0) + t_p);
                                const float *address = &(b[p * n + j]);
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
                                const long long t_p = next_p + slot_outer;
                                if (t_j < trips_j && t_p < trips_p) {
                                    int j = (int)t_j;
                                    int p = (int)((0) + t_p);
                                    staged_b[part][0] = b[p * n + j];
                                } else {
                                    staged_b[part][0] = {};
                                }
                            }
                            {
                                const long long t_j = tile_col + slot_inner + 1;
                                const long long t_p = next_p + slot_outer;
                                if (t_j < trips_j && t_p < trips_p) {
                                    int j = (int)t_j;
                                    int p = (int)((0) + t_p);
                                    staged_b[part][1] = b[p * n + j];
                                } else {
                                    staged_b[part][1] = {};
                                }
                            }
                            {
                                const long long t_j = tile_col + slot_inner + 2;
                                const long long t_p = next_p + slot_outer;
                                if (t_j < trips_j && t_p < trips_p) {
                                    int j = (int)t_j;
                                    int p = (int)((0) + t_p);
                                    staged_b[part][2] = b[p * n + j];
                                } else {
                                    staged_b[part][2] = {};
                                }
                            }
                            {
                                const long long t_j = tile_col + slot_inner + 3;
                                const long long t_p = next_p + slot_outer;
                                if (t_j < trips_j && t_p < trips_p) {
                                    int j = (int)t_j;
                                    int p = (int)((0) + t_p);
                                    staged_b[part][3] = b[p * n + j];
                                } else {
                                    staged_b[part][3] = {};
                                }
                            }
                        }
                    }
                    for (long long tile_p = 0; tile_p < trips_p; tile_p += 16) {
                        #pragma unroll
                        for (int part = 0; part < 1; part++) {
                            const int group = thread + part * 256;
                            const int slot_outer = group / 16;
                            const int slot_inner = (group % 16) * 4;
                            tile_a[slot_outer][slot_inner] = staged_a[part][0];
                            tile_a[slot_outer][slot_inner + 1] = staged_a[part][1];
                            tile_a[slot_outer][slot_inner + 2] = staged_a[part][2];
                            tile_a[slot_outer][slot_inner + 3] = staged_a[part][3];
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
                        next_p = tile_p + 16;
                        if (next_p < trips_p) {
                            #pragma unroll
                            for (int part = 0; part < 1; part++) {
                                const int group = thread + part * 256;
                                const int slot_outer = group / 16;
                                const int slot_inner = (group % 16) * 4;
                                bool loaded = false;
                                {
                                    const long long t_i = tile_row + slot_inner;
                                    const long long t_p = next_p + slot_outer;
                                    if (tile_row + slot_inner + 3 < trips_i && next_p + slot_outer < trips_p) {
                                        int i = (int)t_i;
                                        int p = (int)((0) + t_p);
                                        const float *address = &(a[p * m + i]);
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
                                        const long long t_i = tile_row + slot_inner;
                                        const long long t_p = next_p + slot_outer;
                                        if (t_i < trips_i && t_p < trips_p) {
                                            int i = (int)t_i;
                                            int p = (int)((0) + t_p);
                                            staged_a[part][0] = a[p * m + i];
                                        } else {
                                            staged_a[part][0] = {};
                                        }
                                    }
                                    {
                                        const long long t_i = tile_row + slot_inner + 1;
                                        const long long t_p = next_p + slot_outer;
                                        if (t_i < trips_i && t_p < trips_p) {
                                            int i = (int)t_i;
                                            int p = (int)((0) + t_p);
                                            staged_a[part][1] = a[p * m + i];
                                        } else {
                                            staged_a[part][1] = {};
                                        }
                                    }
                                    {
                                        const long long t_i = tile_row + slot_inner + 2;
                                        const long long t_p = next_p + slot_outer;
                                        if (t_i < trips_i && t_p < trips_p) {
                                            int i = (int)t_i;
                                            int p = (int)((0) + t_p);
                                            staged_a[part][2] = a[p * m + i];
                                        } else {
                                            staged_a[part][2] = {};
                                        }
                                    }
                                    {
                                        const long long t_i = tile_row + slot_inner + 3;
                                        const long long t_p = next_p + slot_outer;
                                        if (t_i < trips_i && t_p < trips_p) {
                                            int i = (int)t_i;
                                            int p = (int)((0) + t_p);
                                            staged_a[part][3] = a[p * m + i];
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
                                    const long long t_p = next_p + slot_outer;
                                    if (tile_col + slot_inner + 3 < trips_j && next_p + slot_outer < trips_p) {
                                        int j = (int)t_j;
                                        int p = (int)((0) + t_p);
                                        const float *address = &(b[p * n + j]);
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
                                        const long long t_p = next_p + slot_outer;
                                        if (t_j < trips_j && t_p < trips_p) {
                                            int j = (int)t_j;
                                            int p = (int)((0) + t_p);
                                            staged_b[part][0] = b[p * n + j];
                                        } else {
                                            staged_b[part][0] = {};
                                        }
                                    }
                                    {
                                        const long long t_j = tile_col + slot_inner + 1;
                                        const long long t_p = next_p + slot_outer;
                                        if (t_j < trips_j && t_p < trips_p) {
                                            int j = (int)t_j;
                                            int p = (int)((0) + t_p);
                                            staged_b[part][1] = b[p * n + j];
                                        } else {
                                            staged_b[part][1] = {};
                                        }
                                    }
                                    {
                                        const long long t_j = tile_col + slot_inner + 2;
                                        const long long t_p = next_p + slot_outer;
                                        if (t_j < trips_j && t_p < trips_p) {
                                            int j = (int)t_j;
                                            int p = (int)((0) + t_p);
                                            staged_b[part][2] = b[p * n + j];
                                        } else {
                                            staged_b[part][2] = {};
                                        }
                                    }
                                    {
                                        const long long t_j = tile_col + slot_inner + 3;
                                        const long long t_p = next_p + slot_outer;
                                        if (t_j < trips_j && t_p < trips_p) {
                                            int j = (int)t_j;
                                            int p = (int)((0) + t_p);
                                            staged_b[part][3] = b[p * n + j];
                                        } else {
                                            staged_b[part][3] = {};
                                        }
                                    }
                                }
                            }
                        }
                        const int count_p = (int)(trips_p - tile_p < 16 ? trips_p - tile_p : 16);
                        if (count_p == 16) {
                            #pragma unroll
                            for (int kk_p = 0; kk_p < 16; kk_p++) {
                                float frag_a[4];
                                #pragma unroll
                                for (int half = 0; half < 1; half++) {
                                    const float4 packed = *reinterpret_cast<const float4 *>(&tile_a[kk_p][half * 64 + threadIdx.y * 4]);
                                    frag_a[half * 4 + 0] = packed.x;
                                    frag_a[half * 4 + 1] = packed.y;
                                    frag_a[half * 4 + 2] = packed.z;
                                    frag_a[half * 4 + 3] = packed.w;
                                }
                                float frag_b[4];
                                #pragma unroll
                                for (int half = 0; half < 1; half++) {
                                    const float4 packed = *reinterpret_cast<const float4 *>(&tile_b[kk_p][half * 64 + threadIdx.x * 4]);
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
                            for (int kk_p = 0; kk_p < count_p; kk_p++) {
                                float frag_a[4];
                                #pragma unroll
                                for (int half = 0; half < 1; half++) {
                                    const float4 packed = *reinterpret_cast<const float4 *>(&tile_a[kk_p][half * 64 + threadIdx.y * 4]);
                                    frag_a[half * 4 + 0] = packed.x;
                                    frag_a[half * 4 + 1] = packed.y;
                                    frag_a[half * 4 + 2] = packed.z;
                                    frag_a[half * 4 + 3] = packed.w;
                                }
                                float frag_b[4];
                                #pragma unroll
                                for (int half = 0; half < 1; half++) {
                                    const float4 packed = *reinterpret_cast<const float4 *>(&tile_b[kk_p][half * 64 + threadIdx.x * 4]);
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
                                c[i * n + j] = 0.5f * sum_tile[out_r][out_c];
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
                const long long span_p = (long long)(k) - (long long)(0);
                const long long trips_p = span_p > 0 ? span_p : 0;
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
                long long next_p = 0;
                #pragma unroll
                for (int part = 0; part < 1; part++) {
                    const int group = thread + part * 256;
                    const int slot_outer = group / 32;
                    const int slot_inner = (group % 32) * 4;
                    bool loaded = false;
                    {
                        const long long t_i = tile_row + slot_inner;
                        const long long t_p = next_p + slot_outer;
                        if (tile_row + slot_inner + 3 < trips_i && next_p + slot_outer < trips_p) {
                            int i = (int)t_i;
                            int p = (int)((0) + t_p);
                            const float *address = &(a[p * m + i]);
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
                            const long long t_i = tile_row + slot_inner;
                            const long long t_p = next_p + slot_outer;
                            if (t_i < trips_i && t_p < trips_p) {
                                int i = (int)t_i;
                                int p = (int)((0) + t_p);
                                staged_a[part][0] = a[p * m + i];
                            } else {
                                staged_a[part][0] = {};
                            }
                        }
                        {
                            const long long t_i = tile_row + slot_inner + 1;
                            const long long t_p = next_p + slot_outer;
                            if (t_i < trips_i && t_p < trips_p) {
                                int i = (int)t_i;
                                int p = (int)((0) + t_p);
                                staged_a[part][1] = a[p * m + i];
                            } else {
                                staged_a[part][1] = {};
                            }
                        }
                        {
                            const long long t_i = tile_row + slot_inner + 2;
                            const long long t_p = next_p + slot_outer;
                            if (t_i < trips_i && t_p < trips_p) {
                                int i = (int)t_i;
                                int p = (int)((0) + t_p);
                                staged_a[part][2] = a[p * m + i];
                            } else {
                                staged_a[part][2] = {};
                            }
                        }
                        {
                            const long long t_i = tile_row + slot_inner + 3;
                            const long long t_p = next_p + slot_outer;
                            if (t_i < trips_i && t_p < trips_p) {
                                int i = (int)t_i;
                                int p = (int)((0) + t_p);
                                staged_a[part][3] = a[p * m + i];
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
                        const long long t_p = next_p + slot_outer;
                        if (tile_col + slot_inner + 3 < trips_j && next_p + slot_outer < trips_p) {
                            int j = (int)t_j;
                            int p = (int)((0) + t_p);
                            const float *address = &(b[p * n + j]);
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
                            const long long t_p = next_p + slot_outer;
                            if (t_j < trips_j && t_p < trips_p) {
                                int j = (int)t_j;
                                int p = (int)((0) + t_p);
                                staged_b[part][0] = b[p * n + j];
                            } else {
                                staged_b[part][0] = {};
                            }
                        }
                        {
                            const long long t_j = tile_col + slot_inner + 1;
                            const long long t_p = next_p + slot_outer;
                            if (t_j < trips_j && t_p < trips_p) {
                                int j = (int)t_j;
                                int p = (int)((0) + t_p);
                                staged_b[part][1] = b[p * n + j];
                            } else {
                                staged_b[part][1] = {};
                            }
                        }
                        {
                            const long long t_j = tile_col + slot_inner + 2;
                            const long long t_p = next_p + slot_outer;
                            if (t_j < trips_j && t_p < trips_p) {
                                int j = (int)t_j;
                                int p = (int)((0) + t_p);
                                staged_b[part][2] = b[p * n + j];
                            } else {
                                staged_b[part][2] = {};
                            }
                        }
                        {
                            const long long t_j = tile_col + slot_inner + 3;
                            const long long t_p = next_p + slot_outer;
                            if (t_j < trips_j && t_p < trips_p) {
                                int j = (int)t_j;
                                int p = (int)((0) + t_p);
                                staged_b[part][3] = b[p * n + j];
                            } else {
                                staged_b[part][3] = {};
                            }
                        }
                    }
                }
                for (long long tile_p = 0; tile_p < trips_p; tile_p += 8) {
                    #pragma unroll
                    for (int part = 0; part < 1; part++) {
                        const int group = thread + part * 256;
                        const int slot_outer = group / 32;
                        const int slot_inner = (group % 32) * 4;
                        tile_a[slot_outer][slot_inner] = staged_a[part][0];
                        tile_a[slot_outer][slot_inner + 1] = staged_a[part][1];
                        tile_a[slot_outer][slot_inner + 2] = staged_a[part][2];
                        tile_a[slot_outer][slot_inner + 3] = staged_a[part][3];
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
                    next_p = tile_p + 8;
                    if (next_p < trips_p) {
                        #pragma unroll
                        for (int part = 0; part < 1; part++) {
                            const int group = thread + part * 256;
                            const int slot_outer = group / 32;
                            const int slot_inner = (group % 32) * 4;
                            bool loaded = false;
                            {
                                const long long t_i = tile_row + slot_inner;
                                const long long t_p = next_p + slot_outer;
                                if (tile_row + slot_inner + 3 < trips_i && next_p + slot_outer < trips_p) {
                                    int i = (int)t_i;
                                    int p = (int)((0) + t_p);
                                    const float *address = &(a[p * m + i]);
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
                                    const long long t_i = tile_row + slot_inner;
                                    const long long t_p = next_p + slot_outer;
                                    if (t_i < trips_i && t_p < trips_p) {
                                        int i = (int)t_i;
                                        int p = (int)((0) + t_p);
                                        staged_a[part][0] = a[p * m + i];
                                    } else {
                                        staged_a[part][0] = {};
                                    }
                                }
                                {
                                    const long long t_i = tile_row + slot_inner + 1;
                                    const long long t_p = next_p + slot_outer;
                                    if (t_i < trips_i && t_p < trips_p) {
                                        int i = (int)t_i;
                                        int p = (int)((0) + t_p);
                                        staged_a[part][1] = a[p * m + i];
                                    } else {
                                        staged_a[part][1] = {};
                                    }
                                }
                                {
                                    const long long t_i = tile_row + slot_inner + 2;
                                    const long long t_p = next_p + slot_outer;
                                    if (t_i < trips_i && t_p < trips_p) {
                                        int i = (int)t_i;
                                        int p = (int)((0) + t_p);
                                        staged_a[part][2] = a[p * m + i];
                                    } else {
                                        staged_a[part][2] = {};
                                    }
                                }
                                {
                                    const long long t_i = tile_row + slot_inner + 3;
                                    const long long t_p = next_p + slot_outer;
                                    if (t_i < trips_i && t_p < trips_p) {
                                        int i = (int)t_i;
                                        int p = (int)((0) + t_p);
                                        staged_a[part][3] = a[p * m + i];
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
                                const long long t_p = next_p + slot_outer;
                                if (tile_col + slot_inner + 3 < trips_j && next_p + slot_outer < trips_p) {
                                    int j = (int)t_j;
                                    int p = (int)((0) + t_p);
                                    const float *address = &(b[p * n + j]);
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
                                    const long long t_p = next_p + slot_outer;
                                    if (t_j < trips_j && t_p < trips_p) {
                                        int j = (int)t_j;
                                        int p = (int)((0) + t_p);
                                        staged_b[part][0] = b[p * n + j];
                                    } else {
                                        staged_b[part][0] = {};
                                    }
                                }
                                {
                                    const long long t_j = tile_col + slot_inner + 1;
                                    const long long t_p = next_p + slot_outer;
                                    if (t_j < trips_j && t_p < trips_p) {
                                        int j = (int)t_j;
                                        int p = (int)((0) + t_p);
                                        staged_b[part][1] = b[p * n + j];
                                    } else {
                                        staged_b[part][1] = {};
                                    }
                                }
                                {
                                    const long long t_j = tile_col + slot_inner + 2;
                                    const long long t_p = next_p + slot_outer;
                                    if (t_j < trips_j && t_p < trips_p) {
                                        int j = (int)t_j;
                                        int p = (int)((0) + t_p);
                                        staged_b[part][2] = b[p * n + j];
                                    } else {
                                        staged_b[part][2] = {};
                                    }
                                }
                                {
                                    const long long t_j = tile_col + slot_inner + 3;
                                    const long long t_p = next_p + slot_outer;
                                    if (t_j < trips_j && t_p < trips_p) {
                                        int j = (int)t_j;
                                        int p = (int)((0) + t_p);
                                        staged_b[part][3] = b[p * n + j];
                                    } else {
                                        staged_b[part][3] = {};
                                    }
                                }
                            }
                        }
                    }
                    const int count_p = (int)(trips_p - tile_p < 8 ? trips_p - tile_p : 8);
                    if (count_p == 8) {
                        #pragma unroll
                        for (int kk_p = 0; kk_p < 8; kk_p++) {
                            float frag_a[8];
                            #pragma unroll
                            for (int half = 0; half < 2; half++) {
                                const float4 packed = *reinterpret_cast<const float4 *>(&tile_a[kk_p][half * 64 + threadIdx.y * 4]);
                                frag_a[half * 4 + 0] = packed.x;
                                frag_a[half * 4 + 1] = packed.y;
                                frag_a[half * 4 + 2] = packed.z;
                                frag_a[half * 4 + 3] = packed.w;
                            }
                            float frag_b[8];
                            #pragma unroll
                            for (int half = 0; half < 2; half++) {
                                const float4 packed = *reinterpret_cast<const float4 *>(&tile_b[kk_p][half * 64 + threadIdx.x * 4]);
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
                        for (int kk_p = 0; kk_p < count_p; kk_p++) {
                            float frag_a[8];
                            #pragma unroll
                            for (int half = 0; half < 2; half++) {
                                const float4 packed = *reinterpret_cast<const float4 *>(&tile_a[kk_p][half * 64 + threadIdx.y * 4]);
                                frag_a[half * 4 + 0] = packed.x;
                                frag_a[half * 4 + 1] = packed.y;
                                frag_a[half * 4 + 2] = packed.z;
                                frag_a[half * 4 + 3] = packed.w;
                            }
                            float frag_b[8];
                            #pragma unroll
                            for (int half = 0; half < 2; half++) {
                                const float4 packed = *reinterpret_cast<const float4 *>(&tile_b[kk_p][half * 64 + threadIdx.x * 4]);
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
                            c[i * n + j] = 0.5f * sum_tile[out_r][out_c];
                        }
                    }
                }
            }
        }
    }
}

/* cudaify gemm_tiling: 128 x 128 tiles where there are at least as many as multiprocessors, else 64 x 64 */
static int cross_kernel_tile(long long rows, long long cols)
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
static unsigned int cross_kernel_splits(long long rows, long long cols, long long trips, long long tile)
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

/* Few outputs, a long k: C = A^T * B (both read down columns), and a double product that
   starts each output from a bias and subtracts. Few tiles for the GPU's multiprocessors,
   so k is split over several blocks of each tile. */
void cross(int k, int m, int n, const float *a, const float *b, float *c)
{
    {
        /* cudaify: this loop nest runs on the GPU as cross_kernel */
        const long long trips_i = cudaify_trips(0, m, 1, 0);
        const long long trips_j = cudaify_trips(0, n, 1, 0);
        if (trips_i > 0 && trips_j > 0) {
            float *d_a = NULL;
            float *d_b = NULL;
            float *d_c = NULL;
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_a, (size_t)((long long)k*(long long)m) * sizeof(float)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_b, (size_t)((long long)k*(long long)n) * sizeof(float)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_c, (size_t)((long long)m*(long long)n) * sizeof(float)));
            CUDAIFY_CHECK(cudaMemcpy(d_a, a, (size_t)((long long)k*(long long)m) * sizeof(float), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_b, b, (size_t)((long long)k*(long long)n) * sizeof(float), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_c, c, (size_t)((long long)m*(long long)n) * sizeof(float), cudaMemcpyHostToDevice));
            const dim3 block(16, 16);
            const dim3 grid(cudaify_blocks(trips_j, cross_kernel_tile(trips_i, trips_j), 2147483647u), cudaify_blocks(trips_i, cross_kernel_tile(trips_i, trips_j), 65535u));
            cross_kernel<<<dim3(grid.x, grid.y, cross_kernel_splits(trips_i, trips_j, ((long long)((k)) - (long long)(0)), cross_kernel_tile(trips_i, trips_j))), block>>>(d_a, d_b, d_c, k, m, n, trips_i, trips_j);
            CUDAIFY_CHECK(cudaGetLastError());
            CUDAIFY_CHECK(cudaMemcpy(c, d_c, (size_t)((long long)m*(long long)n) * sizeof(float), cudaMemcpyDeviceToHost));
            CUDAIFY_CHECK(cudaify_free(d_a));
            CUDAIFY_CHECK(cudaify_free(d_b));
            CUDAIFY_CHECK(cudaify_free(d_c));
        }
    }
}

/* Loop nest 'i, j' of residual() (line 21): one thread per iteration. */
/* cudaify gemm_tiling: the partial sums of 'residual_kernel' where blocks share a tile's k, and how many of a tile's blocks have arrived */
static __device__ unsigned long long residual_kernel_partials[2097152];
static __device__ unsigned int residual_kernel_arrivals[4096];

__global__ void residual_kernel(double *bias, double *x, double *y, double *r, int k, int n, long long trips_i, long long trips_j)
{
    /* cudaify gemm_tiling: blocks of 16 x 16 threads own 64 x 64 outputs, each thread 4 x 4 of them in registers; 16 iterations of 'p' are staged at a time. */
    if (blockDim.x != 16 || blockDim.y != 16) __trap();
    const int thread_2 = threadIdx.y * 16 + threadIdx.x;
    if (__builtin_expect(gridDim.z > 1, 0)) {  /* k split over the blocks of each tile */
        alignas(16) __shared__ double tile_x[16][66];
        alignas(16) __shared__ double tile_y[16][66];
        for (long long tile_row_2 = blockIdx.y * 64LL; tile_row_2 < trips_i; tile_row_2 += 64LL * gridDim.y) {
            for (long long tile_col_2 = blockIdx.x * 64LL; tile_col_2 < trips_j; tile_col_2 += 64LL * gridDim.x) {
                double acc_tile[4][4];
                const long long span_p_2 = (long long)(k) - (long long)(0);
                const long long trips_p_2 = span_p_2 > 0 ? span_p_2 : 0;
                #pragma unroll
                for (int out_r_2 = 0; out_r_2 < 4; out_r_2++) {
                    #pragma unroll
                    for (int out_c_2 = 0; out_c_2 < 4; out_c_2++) {
                        const long long t_i = tile_row_2 + (out_r_2 / 2) * 32 + threadIdx.y * 2 + out_r_2 % 2;
                        const long long t_j = tile_col_2 + (out_c_2 / 2) * 32 + threadIdx.x * 2 + out_c_2 % 2;
                        const bool active_2 = t_i < trips_i && t_j < trips_j;
                        int j = (int)t_j;
                        acc_tile[out_r_2][out_c_2] = {};
                        if (active_2) {
                            acc_tile[out_r_2][out_c_2] = bias[j] * 2.0;
                        }
                    }
                }
                #pragma unroll
                for (int out_r_2 = 0; out_r_2 < 4; out_r_2++) {
                    #pragma unroll
                    for (int out_c_2 = 0; out_c_2 < 4; out_c_2++) {
                        acc_tile[out_r_2][out_c_2] = {};
                    }
                }
                double staged_x[2][2];
                double staged_y[2][2];
                long long next_p_2 = (long long)blockIdx.z * 16;
                #pragma unroll
                for (int part_2 = 0; part_2 < 2; part_2++) {
                    const int group_2 = thread_2 + part_2 * 256;
                    const int slot_outer_2 = group_2 / 8;
                    const int slot_inner_2 = (group_2 % 8) * 2;
                    bool loaded_2 = false;
                    {
                        const long long t_i = tile_row_2 + slot_outer_2;
                        const long long t_p_2 = next_p_2 + slot_inner_2;
                        if (tile_row_2 + slot_outer_2 < trips_i && next_p_2 + slot_inner_2 + 1 < trips_p_2) {
                            int i = (int)t_i;
                            int p = (int)((0) + t_p_2);
                            const double *address_2 = &(x[i * k + p]);
                            if (((unsigned long long)address_2 & 15ull) == 0) {
                                const double2 packed_2 = *reinterpret_cast<const double2 *>(address_2);
                                staged_x[part_2][0] = packed_2.x;
                                staged_x[part_2][1] = packed_2.y;
                                loaded_2 = true;
                            }
                        }
                    }
                    if (__builtin_expect(!loaded_2, 0)) {
                        {
                            const long long t_i = tile_row_2 + slot_outer_2;
                            const long long t_p_2 = next_p_2 + slot_inner_2;
                            if (t_i < trips_i && t_p_2 < trips_p_2) {
                                int i = (int)t_i;
                                int p = (int)((0) + t_p_2);
                                staged_x[part_2][0] = x[i * k + p];
                            } else {
                                staged_x[part_2][0] = {};
                            }
                        }
                        {
                            const long long t_i = tile_row_2 + slot_outer_2;
                            const long long t_p_2 = next_p_2 + slot_inner_2 + 1;
                            if (t_i < trips_i && t_p_2 < trips_p_2) {
                                int i = (int)t_i;
                                int p = (int)((0) + t_p_2);
                                staged_x[part_2][1] = x[i * k + p];
                            } else {
                                staged_x[part_2][1] = {};
                            }
                        }
                    }
                }
                #pragma unroll
                for (int part_2 = 0; part_2 < 2; part_2++) {
                    const int group_2 = thread_2 + part_2 * 256;
                    const int slot_outer_2 = group_2 / 32;
                    const int slot_inner_2 = (group_2 % 32) * 2;
                    bool loaded_2 = false;
                    {
                        const long long t_j = tile_col_2 + slot_inner_2;
                        const long long t_p_2 = next_p_2 + slot_outer_2;
                        if (tile_col_2 + slot_inner_2 + 1 < trips_j && next_p_2 + slot_outer_2 < trips_p_2) {
                            int j = (int)t_j;
                            int p = (int)((0) + t_p_2);
                            const double *address_2 = &(y[p * n + j]);
                            if (((unsigned long long)address_2 & 15ull) == 0) {
                                const double2 packed_2 = *reinterpret_cast<const double2 *>(address_2);
                                staged_y[part_2][0] = packed_2.x;
                                staged_y[part_2][1] = packed_2.y;
                                loaded_2 = true;
                            }
                        }
                    }
                    if (__builtin_expect(!loaded_2, 0)) {
                        {
                            const long long t_j = tile_col_2 + slot_inner_2;
                            const long long t_p_2 = next_p_2 + slot_outer_2;
                            if (t_j < trips_j && t_p_2 < trips_p_2) {
                                int j = (int)t_j;
                                int p = (int)((0) + t_p_2);
                                staged_y[part_2][0] = y[p * n + j];
                            } else {
                                staged_y[part_2][0] = {};
                            }
                        }
                        {
                            const long long t_j = tile_col_2 + slot_inner_2 + 1;
                            const long long t_p_2 = next_p_2 + slot_outer_2;
                            if (t_j < trips_j && t_p_2 < trips_p_2) {
                                int j = (int)t_j;
                                int p = (int)((0) + t_p_2);
                                staged_y[part_2][1] = y[p * n + j];
                            } else {
                                staged_y[part_2][1] = {};
                            }
                        }
                    }
                }
                for (long long tile_p_2 = 0; tile_p_2 < trips_p_2; tile_p_2 += 16) {
                    if ((tile_p_2 / 16) % gridDim.z != blockIdx.z) continue;
                    #pragma unroll
                    for (int part_2 = 0; part_2 < 2; part_2++) {
                        const int group_2 = thread_2 + part_2 * 256;
                        const int slot_outer_2 = group_2 / 8;
                        const int slot_inner_2 = (group_2 % 8) * 2;
                        tile_x[slot_inner_2][slot_outer_2] = staged_x[part_2][0];
                        tile_x[slot_inner_2 + 1][slot_outer_2] = staged_x[part_2][1];
                    }
                    #pragma unroll
                    for (int part_2 = 0; part_2 < 2; part_2++) {
                        const int group_2 = thread_2 + part_2 * 256;
                        const int slot_outer_2 = group_2 / 32;
                        const int slot_inner_2 = (group_2 % 32) * 2;
                        tile_y[slot_outer_2][slot_inner_2] = staged_y[part_2][0];
                        tile_y[slot_outer_2][slot_inner_2 + 1] = staged_y[part_2][1];
                    }
                    __syncthreads();
                    next_p_2 = tile_p_2 + 16LL * gridDim.z;
                    if (next_p_2 < trips_p_2) {
                        #pragma unroll
                        for (int part_2 = 0; part_2 < 2; part_2++) {
                            const int group_2 = thread_2 + part_2 * 256;
                            const int slot_outer_2 = group_2 / 8;
                            const int slot_inner_2 = (group_2 % 8) * 2;
                            bool loaded_2 = false;
                            {
                                const long long t_i = tile_row_2 + slot_outer_2;
                                const long long t_p_2 = next_p_2 + slot_inner_2;
                                if (tile_row_2 + slot_outer_2 < trips_i && next_p_2 + slot_inner_2 + 1 < trips_p_2) {
                                    int i = (int)t_i;
                                    int p = (int)((0) + t_p_2);
                                    const double *address_2 = &(x[i * k + p]);
                                    if (((unsigned long long)address_2 & 15ull) == 0) {
                                        const double2 packed_2 = *reinterpret_cast<const double2 *>(address_2);
                                        staged_x[part_2][0] = packed_2.x;
                                        staged_x[part_2][1] = packed_2.y;
                                        loaded_2 = true;
                                    }
                                }
                            }
                            if (__builtin_expect(!loaded_2, 0)) {
                                {
                                    const long long t_i = tile_row_2 + slot_outer_2;
                                    const long long t_p_2 = next_p_2 + slot_inner_2;
                                    if (t_i < trips_i && t_p_2 < trips_p_2) {
                                        int i = (int)t_i;
                                        int p = (int)((0) + t_p_2);
                                        staged_x[part_2][0] = x[i * k + p];
                                    } else {
                                        staged_x[part_2][0] = {};
                                    }
                                }
                                {
                                    const long long t_i = tile_row_2 + slot_outer_2;
                                    const long long t_p_2 = next_p_2 + slot_inner_2 + 1;
                                    if (t_i < trips_i && t_p_2 < trips_p_2) {
                                        int i = (int)t_i;
                                        int p = (int)((0) + t_p_2);
                                        staged_x[part_2][1] = x[i * k + p];
                                    } else {
                                        staged_x[part_2][1] = {};
                                    }
                                }
                            }
                        }
                        #pragma unroll
                        for (int part_2 = 0; part_2 < 2; part_2++) {
                            const int group_2 = thread_2 + part_2 * 256;
                            const int slot_outer_2 = group_2 / 32;
                            const int slot_inner_2 = (group_2 % 32) * 2;
                            bool loaded_2 = false;
                            {
                                const long long t_j = tile_col_2 + slot_inner_2;
                                const long long t_p_2 = next_p_2 + slot_outer_2;
                                if (tile_col_2 + slot_inner_2 + 1 < trips_j && next_p_2 + slot_outer_2 < trips_p_2) {
                                    int j = (int)t_j;
                                    int p = (int)((0) + t_p_2);
                                    const double *address_2 = &(y[p * n + j]);
                                    if (((unsigned long long)address_2 & 15ull) == 0) {
                                        const double2 packed_2 = *reinterpret_cast<const double2 *>(address_2);
                                        staged_y[part_2][0] = packed_2.x;
                                        staged_y[part_2][1] = packed_2.y;
                                        loaded_2 = true;
                                    }
                                }
                            }
                            if (__builtin_expect(!loaded_2, 0)) {
                                {
                                    const long long t_j = tile_col_2 + slot_inner_2;
                                    const long long t_p_2 = next_p_2 + slot_outer_2;
                                    if (t_j < trips_j && t_p_2 < trips_p_2) {
                                        int j = (int)t_j;
                                        int p = (int)((0) + t_p_2);
                                        staged_y[part_2][0] = y[p * n + j];
                                    } else {
                                        staged_y[part_2][0] = {};
                                    }
                                }
                                {
                                    const long long t_j = tile_col_2 + slot_inner_2 + 1;
                                    const long long t_p_2 = next_p_2 + slot_outer_2;
                                    if (t_j < trips_j && t_p_2 < trips_p_2) {
                                        int j = (int)t_j;
                                        int p = (int)((0) + t_p_2);
                                        staged_y[part_2][1] = y[p * n + j];
                                    } else {
                                        staged_y[part_2][1] = {};
                                    }
                                }
                            }
                        }
                    }
                    const int count_p_2 = (int)(trips_p_2 - tile_p_2 < 16 ? trips_p_2 - tile_p_2 : 16);
                    if (count_p_2 == 16) {
                        #pragma unroll
                        for (int kk_p_2 = 0; kk_p_2 < 16; kk_p_2++) {
                            double frag_x[4];
                            #pragma unroll
                            for (int half_2 = 0; half_2 < 2; half_2++) {
                                const double2 packed_2 = *reinterpret_cast<const double2 *>(&tile_x[kk_p_2][half_2 * 32 + threadIdx.y * 2]);
                                frag_x[half_2 * 2 + 0] = packed_2.x;
                                frag_x[half_2 * 2 + 1] = packed_2.y;
                            }
                            double frag_y[4];
                            #pragma unroll
                            for (int half_2 = 0; half_2 < 2; half_2++) {
                                const double2 packed_2 = *reinterpret_cast<const double2 *>(&tile_y[kk_p_2][half_2 * 32 + threadIdx.x * 2]);
                                frag_y[half_2 * 2 + 0] = packed_2.x;
                                frag_y[half_2 * 2 + 1] = packed_2.y;
                            }
                            #pragma unroll
                            for (int out_r_2 = 0; out_r_2 < 4; out_r_2++) {
                                #pragma unroll
                                for (int out_c_2 = 0; out_c_2 < 4; out_c_2++) {
                                    acc_tile[out_r_2][out_c_2] -= frag_x[out_r_2] * frag_y[out_c_2];
                                }
                            }
                        }
                    } else {
                        for (int kk_p_2 = 0; kk_p_2 < count_p_2; kk_p_2++) {
                            double frag_x[4];
                            #pragma unroll
                            for (int half_2 = 0; half_2 < 2; half_2++) {
                                const double2 packed_2 = *reinterpret_cast<const double2 *>(&tile_x[kk_p_2][half_2 * 32 + threadIdx.y * 2]);
                                frag_x[half_2 * 2 + 0] = packed_2.x;
                                frag_x[half_2 * 2 + 1] = packed_2.y;
                            }
                            double frag_y[4];
                            #pragma unroll
                            for (int half_2 = 0; half_2 < 2; half_2++) {
                                const double2 packed_2 = *reinterpret_cast<const double2 *>(&tile_y[kk_p_2][half_2 * 32 + threadIdx.x * 2]);
                                frag_y[half_2 * 2 + 0] = packed_2.x;
                                frag_y[half_2 * 2 + 1] = packed_2.y;
                            }
                            #pragma unroll
                            for (int out_r_2 = 0; out_r_2 < 4; out_r_2++) {
                                #pragma unroll
                                for (int out_c_2 = 0; out_c_2 < 4; out_c_2++) {
                                    acc_tile[out_r_2][out_c_2] -= frag_x[out_r_2] * frag_y[out_c_2];
                                }
                            }
                        }
                    }
                    __syncthreads();
                }
                /* k split over gridDim.z blocks: store this block's partial sums; the last block of the tile adds them in block order */
                #pragma unroll
                for (int out_r_2 = 0; out_r_2 < 4; out_r_2++) {
                    #pragma unroll
                    for (int out_c_2 = 0; out_c_2 < 4; out_c_2++) {
                        const long long t_i = tile_row_2 + (out_r_2 / 2) * 32 + threadIdx.y * 2 + out_r_2 % 2;
                        const long long t_j = tile_col_2 + (out_c_2 / 2) * 32 + threadIdx.x * 2 + out_c_2 % 2;
                        const bool active_2 = t_i < trips_i && t_j < trips_j;
                        if (active_2) {
                            ((double *)((unsigned char *)residual_kernel_partials))[((long long)blockIdx.z * (trips_i) + t_i) * (trips_j) + t_j] = acc_tile[out_r_2][out_c_2];
                        }
                    }
                }
                __threadfence();
                __syncthreads();
                int arrived_2 = 0;
                if (thread_2 == 0) {
                    const long long tile_index_2 = (tile_row_2 / 64) * (((trips_j) + 63) / 64) + tile_col_2 / 64;
                    arrived_2 = atomicAdd(&residual_kernel_arrivals[tile_index_2], 1u) == gridDim.z - 1u;
                    if (arrived_2) residual_kernel_arrivals[tile_index_2] = 0u;
                }
                const int last_split_2 = __syncthreads_or(arrived_2);
                if (!last_split_2) continue;
                __threadfence();
                #pragma unroll
                for (int out_r_2 = 0; out_r_2 < 4; out_r_2++) {
                    #pragma unroll
                    for (int out_c_2 = 0; out_c_2 < 4; out_c_2++) {
                        const long long t_i = tile_row_2 + (out_r_2 / 2) * 32 + threadIdx.y * 2 + out_r_2 % 2;
                        const long long t_j = tile_col_2 + (out_c_2 / 2) * 32 + threadIdx.x * 2 + out_c_2 % 2;
                        const bool active_2 = t_i < trips_i && t_j < trips_j;
                        int j = (int)t_j;
                        acc_tile[out_r_2][out_c_2] = {};
                        if (active_2) {
                            acc_tile[out_r_2][out_c_2] = bias[j] * 2.0;
                        }
                    }
                }
                #pragma unroll
                for (int out_r_2 = 0; out_r_2 < 4; out_r_2++) {
                    #pragma unroll
                    for (int out_c_2 = 0; out_c_2 < 4; out_c_2++) {
                        const long long t_i = tile_row_2 + (out_r_2 / 2) * 32 + threadIdx.y * 2 + out_r_2 % 2;
                        const long long t_j = tile_col_2 + (out_c_2 / 2) * 32 + threadIdx.x * 2 + out_c_2 % 2;
                        const bool active_2 = t_i < trips_i && t_j < trips_j;
                        if (active_2) {
                            for (unsigned int split_2 = 0; split_2 < gridDim.z; split_2++) {
                                acc_tile[out_r_2][out_c_2] += __ldcg(&((double *)((unsigned char *)residual_kernel_partials))[((long long)split_2 * (trips_i) + t_i) * (trips_j) + t_j]);
                            }
                        }
                    }
                }
                #pragma unroll
                for (int out_r_2 = 0; out_r_2 < 4; out_r_2++) {
                    #pragma unroll
                    for (int out_c_2 = 0; out_c_2 < 4; out_c_2++) {
                        const long long t_i = tile_row_2 + (out_r_2 / 2) * 32 + threadIdx.y * 2 + out_r_2 % 2;
                        const long long t_j = tile_col_2 + (out_c_2 / 2) * 32 + threadIdx.x * 2 + out_c_2 % 2;
                        const bool active_2 = t_i < trips_i && t_j < trips_j;
                        int i = (int)t_i;
                        int j = (int)t_j;
                        if (active_2) {
                            r[i * n + j] = acc_tile[out_r_2][out_c_2];
                        }
                    }
                }
            }
        }
    } else {
        alignas(16) __shared__ double tile_x[16][66];
        alignas(16) __shared__ double tile_y[16][66];
        for (long long tile_row_2 = blockIdx.y * 64LL; tile_row_2 < trips_i; tile_row_2 += 64LL * gridDim.y) {
            for (long long tile_col_2 = blockIdx.x * 64LL; tile_col_2 < trips_j; tile_col_2 += 64LL * gridDim.x) {
                double acc_tile[4][4];
                const long long span_p_2 = (long long)(k) - (long long)(0);
                const long long trips_p_2 = span_p_2 > 0 ? span_p_2 : 0;
                #pragma unroll
                for (int out_r_2 = 0; out_r_2 < 4; out_r_2++) {
                    #pragma unroll
                    for (int out_c_2 = 0; out_c_2 < 4; out_c_2++) {
                        const long long t_i = tile_row_2 + (out_r_2 / 2) * 32 + threadIdx.y * 2 + out_r_2 % 2;
                        const long long t_j = tile_col_2 + (out_c_2 / 2) * 32 + threadIdx.x * 2 + out_c_2 % 2;
                        const bool active_2 = t_i < trips_i && t_j < trips_j;
                        int j = (int)t_j;
                        acc_tile[out_r_2][out_c_2] = {};
                        if (active_2) {
                            acc_tile[out_r_2][out_c_2] = bias[j] * 2.0;
                        }
                    }
                }
                double staged_x[2][2];
                double staged_y[2][2];
                long long next_p_2 = 0;
                #pragma unroll
                for (int part_2 = 0; part_2 < 2; part_2++) {
                    const int group_2 = thread_2 + part_2 * 256;
                    const int slot_outer_2 = group_2 / 8;
                    const int slot_inner_2 = (group_2 % 8) * 2;
                    bool loaded_2 = false;
                    {
                        const long long t_i = tile_row_2 + slot_outer_2;
                        const long long t_p_2 = next_p_2 + slot_inner_2;
                        if (tile_row_2 + slot_outer_2 < trips_i && next_p_2 + slot_inner_2 + 1 < trips_p_2) {
                            int i = (int)t_i;
                            int p = (int)((0) + t_p_2);
                            const double *address_2 = &(x[i * k + p]);
                            if (((unsigned long long)address_2 & 15ull) == 0) {
                                const double2 packed_2 = *reinterpret_cast<const double2 *>(address_2);
                                staged_x[part_2][0] = packed_2.x;
                                staged_x[part_2][1] = packed_2.y;
                                loaded_2 = true;
                            }
                        }
                    }
                    if (__builtin_expect(!loaded_2, 0)) {
                        {
                            const long long t_i = tile_row_2 + slot_outer_2;
                            const long long t_p_2 = next_p_2 + slot_inner_2;
                            if (t_i < trips_i && t_p_2 < trips_p_2) {
                                int i = (int)t_i;
                                int p = (int)((0) + t_p_2);
                                staged_x[part_2][0] = x[i * k + p];
                            } else {
                                staged_x[part_2][0] = {};
                            }
                        }
                        {
                            const long long t_i = tile_row_2 + slot_outer_2;
                            const long long t_p_2 = next_p_2 + slot_inner_2 + 1;
                            if (t_i < trips_i && t_p_2 < trips_p_2) {
                                int i = (int)t_i;
                                int p = (int)((0) + t_p_2);
                                staged_x[part_2][1] = x[i * k + p];
                            } else {
                                staged_x[part_2][1] = {};
                            }
                        }
                    }
                }
                #pragma unroll
                for (int part_2 = 0; part_2 < 2; part_2++) {
                    const int group_2 = thread_2 + part_2 * 256;
                    const int slot_outer_2 = group_2 / 32;
                    const int slot_inner_2 = (group_2 % 32) * 2;
                    bool loaded_2 = false;
                    {
                        const long long t_j = tile_col_2 + slot_inner_2;
                        const long long t_p_2 = next_p_2 + slot_outer_2;
                        if (tile_col_2 + slot_inner_2 + 1 < trips_j && next_p_2 + slot_outer_2 < trips_p_2) {
                            int j = (int)t_j;
                            int p = (int)((0) + t_p_2);
                            const double *address_2 = &(y[p * n + j]);
                            if (((unsigned long long)address_2 & 15ull) == 0) {
                                const double2 packed_2 = *reinterpret_cast<const double2 *>(address_2);
                                staged_y[part_2][0] = packed_2.x;
                                staged_y[part_2][1] = packed_2.y;
                                loaded_2 = true;
                            }
                        }
                    }
                    if (__builtin_expect(!loaded_2, 0)) {
                        {
                            const long long t_j = tile_col_2 + slot_inner_2;
                            const long long t_p_2 = next_p_2 + slot_outer_2;
                            if (t_j < trips_j && t_p_2 < trips_p_2) {
                                int j = (int)t_j;
                                int p = (int)((0) + t_p_2);
                                staged_y[part_2][0] = y[p * n + j];
                            } else {
                                staged_y[part_2][0] = {};
                            }
                        }
                        {
                            const long long t_j = tile_col_2 + slot_inner_2 + 1;
                            const long long t_p_2 = next_p_2 + slot_outer_2;
                            if (t_j < trips_j && t_p_2 < trips_p_2) {
                                int j = (int)t_j;
                                int p = (int)((0) + t_p_2);
                                staged_y[part_2][1] = y[p * n + j];
                            } else {
                                staged_y[part_2][1] = {};
                            }
                        }
                    }
                }
                for (long long tile_p_2 = 0; tile_p_2 < trips_p_2; tile_p_2 += 16) {
                    #pragma unroll
                    for (int part_2 = 0; part_2 < 2; part_2++) {
                        const int group_2 = thread_2 + part_2 * 256;
                        const int slot_outer_2 = group_2 / 8;
                        const int slot_inner_2 = (group_2 % 8) * 2;
                        tile_x[slot_inner_2][slot_outer_2] = staged_x[part_2][0];
                        tile_x[slot_inner_2 + 1][slot_outer_2] = staged_x[part_2][1];
                    }
                    #pragma unroll
                    for (int part_2 = 0; part_2 < 2; part_2++) {
                        const int group_2 = thread_2 + part_2 * 256;
                        const int slot_outer_2 = group_2 / 32;
                        const int slot_inner_2 = (group_2 % 32) * 2;
                        tile_y[slot_outer_2][slot_inner_2] = staged_y[part_2][0];
                        tile_y[slot_outer_2][slot_inner_2 + 1] = staged_y[part_2][1];
                    }
                    __syncthreads();
                    next_p_2 = tile_p_2 + 16;
                    if (next_p_2 < trips_p_2) {
                        #pragma unroll
                        for (int part_2 = 0; part_2 < 2; part_2++) {
                            const int group_2 = thread_2 + part_2 * 256;
                            const int slot_outer_2 = group_2 / 8;
                            const int slot_inner_2 = (group_2 % 8) * 2;
                            bool loaded_2 = false;
                            {
                                const long long t_i = tile_row_2 + slot_outer_2;
                                const long long t_p_2 = next_p_2 + slot_inner_2;
                                if (tile_row_2 + slot_outer_2 < trips_i && next_p_2 + slot_inner_2 + 1 < trips_p_2) {
                                    int i = (int)t_i;
                                    int p = (int)((0) + t_p_2);
                                    const double *address_2 = &(x[i * k + p]);
                                    if (((unsigned long long)address_2 & 15ull) == 0) {
                                        const double2 packed_2 = *reinterpret_cast<const double2 *>(address_2);
                                        staged_x[part_2][0] = packed_2.x;
                                        staged_x[part_2][1] = packed_2.y;
                                        loaded_2 = true;
                                    }
                                }
                            }
                            if (__builtin_expect(!loaded_2, 0)) {
                                {
                                    const long long t_i = tile_row_2 + slot_outer_2;
                                    const long long t_p_2 = next_p_2 + slot_inner_2;
                                    if (t_i < trips_i && t_p_2 < trips_p_2) {
                                        int i = (int)t_i;
                                        int p = (int)((0) + t_p_2);
                                        staged_x[part_2][0] = x[i * k + p];
                                    } else {
                                        staged_x[part_2][0] = {};
                                    }
                                }
                                {
                                    const long long t_i = tile_row_2 + slot_outer_2;
                                    const long long t_p_2 = next_p_2 + slot_inner_2 + 1;
                                    if (t_i < trips_i && t_p_2 < trips_p_2) {
                                        int i = (int)t_i;
                                        int p = (int)((0) + t_p_2);
                                        staged_x[part_2][1] = x[i * k + p];
                                    } else {
                                        staged_x[part_2][1] = {};
                                    }
                                }
                            }
                        }
                        #pragma unroll
                        for (int part_2 = 0; part_2 < 2; part_2++) {
                            const int group_2 = thread_2 + part_2 * 256;
                            const int slot_outer_2 = group_2 / 32;
                            const int slot_inner_2 = (group_2 % 32) * 2;
                            bool loaded_2 = false;
                            {
                                const long long t_j = tile_col_2 + slot_inner_2;
                                const long long t_p_2 = next_p_2 + slot_outer_2;
                                if (tile_col_2 + slot_inner_2 + 1 < trips_j && next_p_2 + slot_outer_2 < trips_p_2) {
                                    int j = (int)t_j;
                                    int p = (int)((0) + t_p_2);
                                    const double *address_2 = &(y[p * n + j]);
                                    if (((unsigned long long)address_2 & 15ull) == 0) {
                                        const double2 packed_2 = *reinterpret_cast<const double2 *>(address_2);
                                        staged_y[part_2][0] = packed_2.x;
                                        staged_y[part_2][1] = packed_2.y;
                                        loaded_2 = true;
                                    }
                                }
                            }
                            if (__builtin_expect(!loaded_2, 0)) {
                                {
                                    const long long t_j = tile_col_2 + slot_inner_2;
                                    const long long t_p_2 = next_p_2 + slot_outer_2;
                                    if (t_j < trips_j && t_p_2 < trips_p_2) {
                                        int j = (int)t_j;
                                        int p = (int)((0) + t_p_2);
                                        staged_y[part_2][0] = y[p * n + j];
                                    } else {
                                        staged_y[part_2][0] = {};
                                    }
                                }
                                {
                                    const long long t_j = tile_col_2 + slot_inner_2 + 1;
                                    const long long t_p_2 = next_p_2 + slot_outer_2;
                                    if (t_j < trips_j && t_p_2 < trips_p_2) {
                                        int j = (int)t_j;
                                        int p = (int)((0) + t_p_2);
                                        staged_y[part_2][1] = y[p * n + j];
                                    } else {
                                        staged_y[part_2][1] = {};
                                    }
                                }
                            }
                        }
                    }
                    const int count_p_2 = (int)(trips_p_2 - tile_p_2 < 16 ? trips_p_2 - tile_p_2 : 16);
                    if (count_p_2 == 16) {
                        #pragma unroll
                        for (int kk_p_2 = 0; kk_p_2 < 16; kk_p_2++) {
                            double frag_x[4];
                            #pragma unroll
                            for (int half_2 = 0; half_2 < 2; half_2++) {
                                const double2 packed_2 = *reinterpret_cast<const double2 *>(&tile_x[kk_p_2][half_2 * 32 + threadIdx.y * 2]);
                                frag_x[half_2 * 2 + 0] = packed_2.x;
                                frag_x[half_2 * 2 + 1] = packed_2.y;
                            }
                            double frag_y[4];
                            #pragma unroll
                            for (int half_2 = 0; half_2 < 2; half_2++) {
                                const double2 packed_2 = *reinterpret_cast<const double2 *>(&tile_y[kk_p_2][half_2 * 32 + threadIdx.x * 2]);
                                frag_y[half_2 * 2 + 0] = packed_2.x;
                                frag_y[half_2 * 2 + 1] = packed_2.y;
                            }
                            #pragma unroll
                            for (int out_r_2 = 0; out_r_2 < 4; out_r_2++) {
                                #pragma unroll
                                for (int out_c_2 = 0; out_c_2 < 4; out_c_2++) {
                                    acc_tile[out_r_2][out_c_2] -= frag_x[out_r_2] * frag_y[out_c_2];
                                }
                            }
                        }
                    } else {
                        for (int kk_p_2 = 0; kk_p_2 < count_p_2; kk_p_2++) {
                            double frag_x[4];
                            #pragma unroll
                            for (int half_2 = 0; half_2 < 2; half_2++) {
                                const double2 packed_2 = *reinterpret_cast<const double2 *>(&tile_x[kk_p_2][half_2 * 32 + threadIdx.y * 2]);
                                frag_x[half_2 * 2 + 0] = packed_2.x;
                                frag_x[half_2 * 2 + 1] = packed_2.y;
                            }
                            double frag_y[4];
                            #pragma unroll
                            for (int half_2 = 0; half_2 < 2; half_2++) {
                                const double2 packed_2 = *reinterpret_cast<const double2 *>(&tile_y[kk_p_2][half_2 * 32 + threadIdx.x * 2]);
                                frag_y[half_2 * 2 + 0] = packed_2.x;
                                frag_y[half_2 * 2 + 1] = packed_2.y;
                            }
                            #pragma unroll
                            for (int out_r_2 = 0; out_r_2 < 4; out_r_2++) {
                                #pragma unroll
                                for (int out_c_2 = 0; out_c_2 < 4; out_c_2++) {
                                    acc_tile[out_r_2][out_c_2] -= frag_x[out_r_2] * frag_y[out_c_2];
                                }
                            }
                        }
                    }
                    __syncthreads();
                }
                #pragma unroll
                for (int out_r_2 = 0; out_r_2 < 4; out_r_2++) {
                    #pragma unroll
                    for (int out_c_2 = 0; out_c_2 < 4; out_c_2++) {
                        const long long t_i = tile_row_2 + (out_r_2 / 2) * 32 + threadIdx.y * 2 + out_r_2 % 2;
                        const long long t_j = tile_col_2 + (out_c_2 / 2) * 32 + threadIdx.x * 2 + out_c_2 % 2;
                        const bool active_2 = t_i < trips_i && t_j < trips_j;
                        int i = (int)t_i;
                        int j = (int)t_j;
                        if (active_2) {
                            r[i * n + j] = acc_tile[out_r_2][out_c_2];
                        }
                    }
                }
            }
        }
    }
}

/* cudaify gemm_tiling: where the output tiles are at most half the multiprocessors, k is split over the blocks of a tile that fill them in one wave, each a share of at least 128 iterations */
static unsigned int residual_kernel_splits(long long rows, long long cols, long long trips, long long tile)
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

void residual(int k, int m, int n, const double *x, const double *y, const double *bias,
              double *r)
{
    {
        /* cudaify: this loop nest runs on the GPU as residual_kernel */
        const long long trips_i = cudaify_trips(0, m, 1, 0);
        const long long trips_j = cudaify_trips(0, n, 1, 0);
        if (trips_i > 0 && trips_j > 0) {
            double *d_bias = NULL;
            double *d_x = NULL;
            double *d_y = NULL;
            double *d_r = NULL;
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_bias, (size_t)(n) * sizeof(double)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_x, (size_t)((long long)k*(long long)m) * sizeof(double)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_y, (size_t)((long long)k*(long long)n) * sizeof(double)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_r, (size_t)((long long)m*(long long)n) * sizeof(double)));
            CUDAIFY_CHECK(cudaMemcpy(d_bias, bias, (size_t)(n) * sizeof(double), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_x, x, (size_t)((long long)k*(long long)m) * sizeof(double), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_y, y, (size_t)((long long)k*(long long)n) * sizeof(double), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_r, r, (size_t)((long long)m*(long long)n) * sizeof(double), cudaMemcpyHostToDevice));
            const dim3 block(16, 16);
            const dim3 grid(cudaify_blocks(trips_j, 64, 2147483647u), cudaify_blocks(trips_i, 64, 65535u));
            residual_kernel<<<dim3(grid.x, grid.y, residual_kernel_splits(trips_i, trips_j, ((long long)((k)) - (long long)(0)), 64)), block>>>(d_bias, d_x, d_y, d_r, k, n, trips_i, trips_j);
            CUDAIFY_CHECK(cudaGetLastError());
            CUDAIFY_CHECK(cudaMemcpy(r, d_r, (size_t)((long long)m*(long long)n) * sizeof(double), cudaMemcpyDeviceToHost));
            CUDAIFY_CHECK(cudaify_free(d_bias));
            CUDAIFY_CHECK(cudaify_free(d_x));
            CUDAIFY_CHECK(cudaify_free(d_y));
            CUDAIFY_CHECK(cudaify_free(d_r));
        }
    }
}

/* Loop nest 'i, j' of moments() (line 33): one thread per iteration. */
/* cudaify gemm_tiling: the partial sums of 'moments_kernel' where blocks share a tile's k, and how many of a tile's blocks have arrived */
static __device__ unsigned long long moments_kernel_partials[2097152];
static __device__ unsigned int moments_kernel_arrivals[4096];

__global__ void moments_kernel(float *a, float *b, float *s1, float *s2, int k, int m, int n, long long trips_i, long long trips_j)
{
    /* cudaify gemm_tiling: blocks of 16 x 16 threads own 128 x 128 outputs, each thread 8 x 8 of them in registers; 8 iterations of 'p' are staged at a time. */
    if (blockDim.x != 16 || blockDim.y != 16) __trap();
    const int thread_3 = threadIdx.y * 16 + threadIdx.x;
    /* a grid sized for 64 x 64 outputs, each thread 4 x 4 of them in registers (more blocks than the wide tiles need): the GPU has more multiprocessors than wide tiles */
    const bool narrow_3 = (long long)gridDim.y > (trips_i + 127) / 128 || (long long)gridDim.x > (trips_j + 127) / 128;
    if (narrow_3) {
        if (__builtin_expect(gridDim.z > 1, 0)) {  /* k split over the blocks of each tile */
            alignas(16) __shared__ float tile_a_2[16][68];
            alignas(16) __shared__ float tile_b_2[16][68];
            for (long long tile_row_3 = blockIdx.y * 64LL; tile_row_3 < trips_i; tile_row_3 += 64LL * gridDim.y) {
                for (long long tile_col_3 = blockIdx.x * 64LL; tile_col_3 < trips_j; tile_col_3 += 64LL * gridDim.x) {
                    float s_tile[4][4];
                    float t_tile[4][4];
                    const long long span_p_3 = (long long)(k) - (long long)(0);
                    const long long trips_p_3 = span_p_3 > 0 ? span_p_3 : 0;
                    #pragma unroll
                    for (int out_r_3 = 0; out_r_3 < 4; out_r_3++) {
                        #pragma unroll
                        for (int out_c_3 = 0; out_c_3 < 4; out_c_3++) {
                            const long long t_i = tile_row_3 + (out_r_3 / 4) * 64 + threadIdx.y * 4 + out_r_3 % 4;
                            const long long t_j = tile_col_3 + (out_c_3 / 4) * 64 + threadIdx.x * 4 + out_c_3 % 4;
                            const bool active_3 = t_i < trips_i && t_j < trips_j;
                            s_tile[out_r_3][out_c_3] = {};
                            t_tile[out_r_3][out_c_3] = {};
                            if (active_3) {
                                s_tile[out_r_3][out_c_3] = 0.0f;
                                t_tile[out_r_3][out_c_3] = 1.0f;
                            }
                        }
                    }
                    #pragma unroll
                    for (int out_r_3 = 0; out_r_3 < 4; out_r_3++) {
                        #pragma unroll
                        for (int out_c_3 = 0; out_c_3 < 4; out_c_3++) {
                            s_tile[out_r_3][out_c_3] = {};
                            t_tile[out_r_3][out_c_3] = {};
                        }
                    }
                    float staged_a_2[1][4];
                    float staged_b_2[1][4];
                    long long next_p_3 = (long long)blockIdx.z * 16;
                    #pragma unroll
                    for (int part_3 = 0; part_3 < 1; part_3++) {
                        const int group_3 = thread_3 + part_3 * 256;
                        const int slot_outer_3 = group_3 / 16;
                        const int slot_inner_3 = (group_3 % 16) * 4;
                        bool loaded_3 = false;
                        {
                            const long long t_i = tile_row_3 + slot_inner_3;
                            const long long t_p_3 = next_p_3 + slot_outer_3;
                            if (tile_row_3 + slot_inner_3 + 3 < trips_i && next_p_3 + slot_outer_3 < trips_p_3) {
                                int i = (int)t_i;
                                int p = (int)((0) + t_p_3);
                                const float *address_3 = &(a[p * m + i]);
                                if (((unsigned long long)address_3 & 15ull) == 0) {
                                    const float4 packed_3 = *reinterpret_cast<const float4 *>(address_3);
                                    staged_a_2[part_3][0] = packed_3.x;
                                    staged_a_2[part_3][1] = packed_3.y;
                                    staged_a_2[part_3][2] = packed_3.z;
                                    staged_a_2[part_3][3] = packed_3.w;
                                    loaded_3 = true;
                                }
                            }
                        }
                        if (__builtin_expect(!loaded_3, 0)) {
                            {
                                const long long t_i = tile_row_3 + slot_inner_3;
                                const long long t_p_3 = next_p_3 + slot_outer_3;
                                if (t_i < trips_i && t_p_3 < trips_p_3) {
                                    int i = (int)t_i;
                                    int p = (int)((0) + t_p_3);
                                    staged_a_2[part_3][0] = a[p * m + i];
                                } else {
                                    staged_a_2[part_3][0] = {};
                                }
                            }
                            {
                                const long long t_i = tile_row_3 + slot_inner_3 + 1;
                                const long long t_p_3 = next_p_3 + slot_outer_3;
                                if (t_i < trips_i && t_p_3 < trips_p_3) {
                                    int i = (int)t_i;
                                    int p = (int)((0) + t_p_3);
                                    staged_a_2[part_3][1] = a[p * m + i];
                                } else {
                                    staged_a_2[part_3][1] = {};
                                }
                            }
                            {
                                const long long t_i = tile_row_3 + slot_inner_3 + 2;
                                const long long t_p_3 = next_p_3 + slot_outer_3;
                                if (t_i < trips_i && t_p_3 < trips_p_3) {
                                    int i = (int)t_i;
                                    int p = (int)((0) + t_p_3);
                                    staged_a_2[part_3][2] = a[p * m + i];
                                } else {
                                    staged_a_2[part_3][2] = {};
                                }
                            }
                            {
                                const long long t_i = tile_row_3 + slot_inner_3 + 3;
                                const long long t_p_3 = next_p_3 + slot_outer_3;
                                if (t_i < trips_i && t_p_3 < trips_p_3) {
                                    int i = (int)t_i;
                                    int p = (int)((0) + t_p_3);
                                    staged_a_2[part_3][3] = a[p * m + i];
                                } else {
                                    staged_a_2[part_3][3] = {};
                                }
                            }
                        }
                    }
                    #pragma unroll
                    for (int part_3 = 0; part_3 < 1; part_3++) {
                        const int group_3 = thread_3 + part_3 * 256;
                        const int slot_outer_3 = group_3 / 16;
                        const int slot_inner_3 = (group_3 % 16) * 4;
                        bool loaded_3 = false;
                        {
                            const long long t_j = tile_col_3 + slot_inner_3;
                            const long long t_p_3 = next_p_3 + slot_outer_3;
                            if (tile_col_3 + slot_inner_3 + 3 < trips_j && next_p_3 + slot_outer_3 < trips_p_3) {
                                int j = (int)t_j;
                                int p = (int)((0) + t_p_3);
                                const float *address_3 = &(b[p * n + j]);
                                if (((unsigned long long)address_3 & 15ull) == 0) {
                                    const float4 packed_3 = *reinterpret_cast<const float4 *>(address_3);
                                    staged_b_2[part_3][0] = packed_3.x;
                                    staged_b_2[part_3][1] = packed_3.y;
                                    staged_b_2[part_3][2] = packed_3.z;
                                    staged_b_2[part_3][3] = packed_3.w;
                                    loaded_3 = true;
                                }
                            }
                        }
                        if (__builtin_expect(!loaded_3, 0)) {
                            {
                                const long long t_j = tile_col_3 + slot_inner_3;
                                const long long t_p_3 = next_p_3 + slot_outer_3;
                                if (t_j < trips_j && t_p_3 < trips_p_3) {
                                    int j = (int)t_j;
                                    int p = (int)((0) + t_p_3);
                                    staged_b_2[part_3][0] = b[p * n + j];
                                } else {
                                    staged_b_2[part_3][0] = {};
                                }
                            }
                            {
                                const long long t_j = tile_col_3 + slot_inner_3 + 1;
                                const long long t_p_3 = next_p_3 + slot_outer_3;
                                if (t_j < trips_j && t_p_3 < trips_p_3) {
                                    int j = (int)t_j;
                                    int p = (int)((0) + t_p_3);
                                    staged_b_2[part_3][1] = b[p * n + j];
                                } else {
                                    staged_b_2[part_3][1] = {};
                                }
                            }
                            {
                                const long long t_j = tile_col_3 + slot_inner_3 + 2;
                                const long long t_p_3 = next_p_3 + slot_outer_3;
                                if (t_j < trips_j && t_p_3 < trips_p_3) {
                                    int j = (int)t_j;
                                    int p = (int)((0) + t_p_3);
                                    staged_b_2[part_3][2] = b[p * n + j];
                                } else {
                                    staged_b_2[part_3][2] = {};
                                }
                            }
                            {
                                const long long t_j = tile_col_3 + slot_inner_3 + 3;
                                const long long t_p_3 = next_p_3 + slot_outer_3;
                                if (t_j < trips_j && t_p_3 < trips_p_3) {
                                    int j = (int)t_j;
                                    int p = (int)((0) + t_p_3);
                                    staged_b_2[part_3][3] = b[p * n + j];
                                } else {
                                    staged_b_2[part_3][3] = {};
                                }
                            }
                        }
                    }
                    for (long long tile_p_3 = 0; tile_p_3 < trips_p_3; tile_p_3 += 16) {
                        if ((tile_p_3 / 16) % gridDim.z != blockIdx.z) continue;
                        #pragma unroll
                        for (int part_3 = 0; part_3 < 1; part_3++) {
                            const int group_3 = thread_3 + part_3 * 256;
                            const int slot_outer_3 = group_3 / 16;
                            const int slot_inner_3 = (group_3 % 16) * 4;
                            tile_a_2[slot_outer_3][slot_inner_3] = staged_a_2[part_3][0];
                            tile_a_2[slot_outer_3][slot_inner_3 + 1] = staged_a_2[part_3][1];
                            tile_a_2[slot_outer_3][slot_inner_3 + 2] = staged_a_2[part_3][2];
                            tile_a_2[slot_outer_3][slot_inner_3 + 3] = staged_a_2[part_3][3];
                        }
                        #pragma unroll
                        for (int part_3 = 0; part_3 < 1; part_3++) {
                            const int group_3 = thread_3 + part_3 * 256;
                            const int slot_outer_3 = group_3 / 16;
                            const int slot_inner_3 = (group_3 % 16) * 4;
                            tile_b_2[slot_outer_3][slot_inner_3] = staged_b_2[part_3][0];
                            tile_b_2[slot_outer_3][slot_inner_3 + 1] = staged_b_2[part_3][1];
                            tile_b_2[slot_outer_3][slot_inner_3 + 2] = staged_b_2[part_3][2];
                            tile_b_2[slot_outer_3][slot_inner_3 + 3] = staged_b_2[part_3][3];
                        }
                        __syncthreads();
                        next_p_3 = tile_p_3 + 16LL * gridDim.z;
                        if (next_p_3 < trips_p_3) {
                            #pragma unroll
                            for (int part_3 = 0; part_3 < 1; part_3++) {
                                const int group_3 = thread_3 + part_3 * 256;
                                const int slot_outer_3 = group_3 / 16;
                                const int slot_inner_3 = (group_3 % 16) * 4;
                                bool loaded_3 = false;
                                {
                                    const long long t_i = tile_row_3 + slot_inner_3;
                                    const long long t_p_3 = next_p_3 + slot_outer_3;
                                    if (tile_row_3 + slot_inner_3 + 3 < trips_i && next_p_3 + slot_outer_3 < trips_p_3) {
                                        int i = (int)t_i;
                                        int p = (int)((0) + t_p_3);
                                        const float *address_3 = &(a[p * m + i]);
                                        if (((unsigned long long)address_3 & 15ull) == 0) {
                                            const float4 packed_3 = *reinterpret_cast<const float4 *>(address_3);
                                            staged_a_2[part_3][0] = packed_3.x;
                                            staged_a_2[part_3][1] = packed_3.y;
                                            staged_a_2[part_3][2] = packed_3.z;
                                            staged_a_2[part_3][3] = packed_3.w;
                                            loaded_3 = true;
                                        }
                                    }
                                }
                                if (__builtin_expect(!loaded_3, 0)) {
                                    {
                                        const long long t_i = tile_row_3 + slot_inner_3;
                                        const long long t_p_3 = next_p_3 + slot_outer_3;
                                        if (t_i < trips_i && t_p_3 < trips_p_3) {
                                            int i = (int)t_i;
                                            int p = (int)((0) + t_p_3);
                                            staged_a_2[part_3][0] = a[p * m + i];
                                        } else {
                                            staged_a_2[part_3][0] = {};
                                        }
                                    }
                                    {
                                        const long long t_i = tile_row_3 + slot_inner_3 + 1;
                                        const long long t_p_3 = next_p_3 + slot_outer_3;
                                        if (t_i < trips_i && t_p_3 < trips_p_3) {
                                            int i = (int)t_i;
                                            int p = (int)((0) + t_p_3);
                                            staged_a_2[part_3][1] = a[p * m + i];
                                        } else {
                                            staged_a_2[part_3][1] = {};
                                        }
                                    }
                                    {
                                        const long long t_i = tile_row_3 + slot_inner_3 + 2;
                                        const long long t_p_3 = next_p_3 + slot_outer_3;
                                        if (t_i < trips_i && t_p_3 < trips_p_3) {
                                            int i = (int)t_i;
                                            int p = (int)((0) + t_p_3);
                                            staged_a_2[part_3][2] = a[p * m + i];
                                        } else {
                                            staged_a_2[part_3][2] = {};
                                        }
                                    }
                                    {
                                        const long long t_i = tile_row_3 + slot_inner_3 + 3;
                                        const long long t_p_3 = next_p_3 + slot_outer_3;
                                        if (t_i < trips_i && t_p_3 < trips_p_3) {
                                            int i = (int)t_i;
                                            int p = (int)((0) + t_p_3);
                                            staged_a_2[part_3][3] = a[p * m + i];
                                        } else {
                                            staged_a_2[part_3][3] = {};
                                        }
                                    }
                                }
                            }
                            #pragma unroll
                            for (int part_3 = 0; part_3 < 1; part_3++) {
                                const int group_3 = thread_3 + part_3 * 256;
                                const int slot_outer_3 = group_3 / 16;
                                const int slot_inner_3 = (group_3 % 16) * 4;
                                bool loaded_3 = false;
                                {
                                    const long long t_j = tile_col_3 + slot_inner_3;
                                    const long long t_p_3 = next_p_3 + slot_outer_3;
                                    if (tile_col_3 + slot_inner_3 + 3 < trips_j && next_p_3 + slot_outer_3 < trips_p_3) {
                                        int j = (int)t_j;
                                        int p = (int)((0) + t_p_3);
                                        const float *address_3 = &(b[p * n + j]);
                                        if (((unsigned long long)address_3 & 15ull) == 0) {
                                            const float4 packed_3 = *reinterpret_cast<const float4 *>(address_3);
                                            staged_b_2[part_3][0] = packed_3.x;
                                            staged_b_2[part_3][1] = packed_3.y;
                                            staged_b_2[part_3][2] = packed_3.z;
                                            staged_b_2[part_3][3] = packed_3.w;
                                            loaded_3 = true;
                                        }
                                    }
                                }
                                if (__builtin_expect(!loaded_3, 0)) {
                                    {
                                        const long long t_j = tile_col_3 + slot_inner_3;
                                        const long long t_p_3 = next_p_3 + slot_outer_3;
                                        if (t_j < trips_j && t_p_3 < trips_p_3) {
                                            int j = (int)t_j;
                                            int p = (int)((0) + t_p_3);
                                            staged_b_2[part_3][0] = b[p * n + j];
                                        } else {
                                            staged_b_2[part_3][0] = {};
                                        }
                                    }
                                    {
                                        const long long t_j = tile_col_3 + slot_inner_3 + 1;
                                        const long long t_p_3 = next_p_3 + slot_outer_3;
                                        if (t_j < trips_j && t_p_3 < trips_p_3) {
                                            int j = (int)t_j;
                                            int p = (int)((0) + t_p_3);
                                            staged_b_2[part_3][1] = b[p * n + j];
                                        } else {
                                            staged_b_2[part_3][1] = {};
                                        }
                                    }
                                    {
                                        const long long t_j = tile_col_3 + slot_inner_3 + 2;
                                        const long long t_p_3 = next_p_3 + slot_outer_3;
                                        if (t_j < trips_j && t_p_3 < trips_p_3) {
                                            int j = (int)t_j;
                                            int p = (int)((0) + t_p_3);
                                            staged_b_2[part_3][2] = b[p * n + j];
                                        } else {
                                            staged_b_2[part_3][2] = {};
                                        }
                                    }
                                    {
                                        const long long t_j = tile_col_3 + slot_inner_3 + 3;
                                        const long long t_p_3 = next_p_3 + slot_outer_3;
                                        if (t_j < trips_j && t_p_3 < trips_p_3) {
                                            int j = (int)t_j;
                                            int p = (int)((0) + t_p_3);
                                            staged_b_2[part_3][3] = b[p * n + j];
                                        } else {
                                            staged_b_2[part_3][3] = {};
                                        }
                                    }
                                }
                            }
                        }
                        const int count_p_3 = (int)(trips_p_3 - tile_p_3 < 16 ? trips_p_3 - tile_p_3 : 16);
                        if (count_p_3 == 16) {
                            #pragma unroll
                            for (int kk_p_3 = 0; kk_p_3 < 16; kk_p_3++) {
                                float frag_a_2[4];
                                #pragma unroll
                                for (int half_3 = 0; half_3 < 1; half_3++) {
                                    const float4 packed_3 = *reinterpret_cast<const float4 *>(&tile_a_2[kk_p_3][half_3 * 64 + threadIdx.y * 4]);
                                    frag_a_2[half_3 * 4 + 0] = packed_3.x;
                                    frag_a_2[half_3 * 4 + 1] = packed_3.y;
                                    frag_a_2[half_3 * 4 + 2] = packed_3.z;
                                    frag_a_2[half_3 * 4 + 3] = packed_3.w;
                                }
                                float frag_b_2[4];
                                #pragma unroll
                                for (int half_3 = 0; half_3 < 1; half_3++) {
                                    const float4 packed_3 = *reinterpret_cast<const float4 *>(&tile_b_2[kk_p_3][half_3 * 64 + threadIdx.x * 4]);
                                    frag_b_2[half_3 * 4 + 0] = packed_3.x;
                                    frag_b_2[half_3 * 4 + 1] = packed_3.y;
                                    frag_b_2[half_3 * 4 + 2] = packed_3.z;
                                    frag_b_2[half_3 * 4 + 3] = packed_3.w;
                                }
                                #pragma unroll
                                for (int out_r_3 = 0; out_r_3 < 4; out_r_3++) {
                                    #pragma unroll
                                    for (int out_c_3 = 0; out_c_3 < 4; out_c_3++) {
                                        s_tile[out_r_3][out_c_3] += frag_a_2[out_r_3] * frag_b_2[out_c_3];
                                        t_tile[out_r_3][out_c_3] = t_tile[out_r_3][out_c_3] + 0.25f * frag_a_2[out_r_3] * frag_b_2[out_c_3];
                                    }
                                }
                            }
                        } else {
                            for (int kk_p_3 = 0; kk_p_3 < count_p_3; kk_p_3++) {
                                float frag_a_2[4];
                                #pragma unroll
                                for (int half_3 = 0; half_3 < 1; half_3++) {
                                    const float4 packed_3 = *reinterpret_cast<const float4 *>(&tile_a_2[kk_p_3][half_3 * 64 + threadIdx.y * 4]);
                                    frag_a_2[half_3 * 4 + 0] = packed_3.x;
                                    frag_a_2[half_3 * 4 + 1] = packed_3.y;
                                    frag_a_2[half_3 * 4 + 2] = packed_3.z;
                                    frag_a_2[half_3 * 4 + 3] = packed_3.w;
                                }
                                float frag_b_2[4];
                                #pragma unroll
                                for (int half_3 = 0; half_3 < 1; half_3++) {
                                    const float4 packed_3 = *reinterpret_cast<const float4 *>(&tile_b_2[kk_p_3][half_3 * 64 + threadIdx.x * 4]);
                                    frag_b_2[half_3 * 4 + 0] = packed_3.x;
                                    frag_b_2[half_3 * 4 + 1] = packed_3.y;
                                    frag_b_2[half_3 * 4 + 2] = packed_3.z;
                                    frag_b_2[half_3 * 4 + 3] = packed_3.w;
                                }
                                #pragma unroll
                                for (int out_r_3 = 0; out_r_3 < 4; out_r_3++) {
                                    #pragma unroll
                                    for (int out_c_3 = 0; out_c_3 < 4; out_c_3++) {
                                        s_tile[out_r_3][out_c_3] += frag_a_2[out_r_3] * frag_b_2[out_c_3];
                                        t_tile[out_r_3][out_c_3] = t_tile[out_r_3][out_c_3] + 0.25f * frag_a_2[out_r_3] * frag_b_2[out_c_3];
                                    }
                                }
                            }
                        }
                        __syncthreads();
                    }
                    /* k split over gridDim.z blocks: store this block's partial sums; the last block of the tile adds them in block order */
                    const long long region_3 = (long long)gridDim.z * (trips_i) * (trips_j) * 8;
                    #pragma unroll
                    for (int out_r_3 = 0; out_r_3 < 4; out_r_3++) {
                        #pragma unroll
                        for (int out_c_3 = 0; out_c_3 < 4; out_c_3++) {
                            const long long t_i = tile_row_3 + (out_r_3 / 4) * 64 + threadIdx.y * 4 + out_r_3 % 4;
                            const long long t_j = tile_col_3 + (out_c_3 / 4) * 64 + threadIdx.x * 4 + out_c_3 % 4;
                            const bool active_3 = t_i < trips_i && t_j < trips_j;
                            if (active_3) {
                                ((float *)((unsigned char *)moments_kernel_partials))[((long long)blockIdx.z * (trips_i) + t_i) * (trips_j) + t_j] = s_tile[out_r_3][out_c_3];
                                ((float *)((unsigned char *)moments_kernel_partials + 1 * region_3))[((long long)blockIdx.z * (trips_i) + t_i) * (trips_j) + t_j] = t_tile[out_r_3][out_c_3];
                            }
                        }
                    }
                    __threadfence();
                    __syncthreads();
                    int arrived_3 = 0;
                    if (thread_3 == 0) {
                        const long long tile_index_3 = (tile_row_3 / 64) * (((trips_j) + 63) / 64) + tile_col_3 / 64;
                        arrived_3 = atomicAdd(&moments_kernel_arrivals[tile_index_3], 1u) == gridDim.z - 1u;
                        if (arrived_3) moments_kernel_arrivals[tile_index_3] = 0u;
                    }
                    const int last_split_3 = __syncthreads_or(arrived_3);
                    if (!last_split_3) continue;
                    __threadfence();
                    #pragma unroll
                    for (int out_r_3 = 0; out_r_3 < 4; out_r_3++) {
                        #pragma unroll
                        for (int out_c_3 = 0; out_c_3 < 4; out_c_3++) {
                            const long long t_i = tile_row_3 + (out_r_3 / 4) * 64 + threadIdx.y * 4 + out_r_3 % 4;
                            const long long t_j = tile_col_3 + (out_c_3 / 4) * 64 + threadIdx.x * 4 + out_c_3 % 4;
                            const bool active_3 = t_i < trips_i && t_j < trips_j;
                            s_tile[out_r_3][out_c_3] = {};
                            t_tile[out_r_3][out_c_3] = {};
                            if (active_3) {
                                s_tile[out_r_3][out_c_3] = 0.0f;
                                t_tile[out_r_3][out_c_3] = 1.0f;
                            }
                        }
                    }
                    #pragma unroll
                    for (int out_r_3 = 0; out_r_3 < 4; out_r_3++) {
                        #pragma unroll
                        for (int out_c_3 = 0; out_c_3 < 4; out_c_3++) {
                            const long long t_i = tile_row_3 + (out_r_3 / 4) * 64 + threadIdx.y * 4 + out_r_3 % 4;
                            const long long t_j = tile_col_3 + (out_c_3 / 4) * 64 + threadIdx.x * 4 + out_c_3 % 4;
                            const bool active_3 = t_i < trips_i && t_j < trips_j;
                            if (active_3) {
                                for (unsigned int split_3 = 0; split_3 < gridDim.z; split_3++) {
                                    s_tile[out_r_3][out_c_3] += __ldcg(&((float *)((unsigned char *)moments_kernel_partials))[((long long)split_3 * (trips_i) + t_i) * (trips_j) + t_j]);
                                    t_tile[out_r_3][out_c_3] += __ldcg(&((float *)((unsigned char *)moments_kernel_partials + 1 * region_3))[((long long)split_3 * (trips_i) + t_i) * (trips_j) + t_j]);
                                }
                            }
                        }
                    }
                    #pragma unroll
                    for (int out_r_3 = 0; out_r_3 < 4; out_r_3++) {
                        #pragma unroll
                        for (int out_c_3 = 0; out_c_3 < 4; out_c_3++) {
                            const long long t_i = tile_row_3 + (out_r_3 / 4) * 64 + threadIdx.y * 4 + out_r_3 % 4;
                            const long long t_j = tile_col_3 + (out_c_3 / 4) * 64 + threadIdx.x * 4 + out_c_3 % 4;
                            const bool active_3 = t_i < trips_i && t_j < trips_j;
                            int i = (int)t_i;
                            int j = (int)t_j;
                            if (active_3) {
                                s1[i * n + j] = s_tile[out_r_3][out_c_3];
                                s2[i * n + j] = t_tile[out_r_3][out_c_3] - s_tile[out_r_3][out_c_3];
                            }
                        }
                    }
                }
            }
        } else {
            alignas(16) __shared__ float tile_a_2[16][68];
            alignas(16) __shared__ float tile_b_2[16][68];
            for (long long tile_row_3 = blockIdx.y * 64LL; tile_row_3 < trips_i; tile_row_3 += 64LL * gridDim.y) {
                for (long long tile_col_3 = blockIdx.x * 64LL; tile_col_3 < trips_j; tile_col_3 += 64LL * gridDim.x) {
                    float s_tile[4][4];
                    float t_tile[4][4];
                    const long long span_p_3 = (long long)(k) - (long long)(0);
                    const long long trips_p_3 = span_p_3 > 0 ? span_p_3 : 0;
                    #pragma unroll
                    for (int out_r_3 = 0; out_r_3 < 4; out_r_3++) {
                        #pragma unroll
                        for (int out_c_3 = 0; out_c_3 < 4; out_c_3++) {
                            const long long t_i = tile_row_3 + (out_r_3 / 4) * 64 + threadIdx.y * 4 + out_r_3 % 4;
                            const long long t_j = tile_col_3 + (out_c_3 / 4) * 64 + threadIdx.x * 4 + out_c_3 % 4;
                            const bool active_3 = t_i < trips_i && t_j < trips_j;
                            s_tile[out_r_3][out_c_3] = {};
                            t_tile[out_r_3][out_c_3] = {};
                            if (active_3) {
                                s_tile[out_r_3][out_c_3] = 0.0f;
                                t_tile[out_r_3][out_c_3] = 1.0f;
                            }
                        }
                    }
                    float staged_a_2[1][4];
                    float staged_b_2[1][4];
                    long long next_p_3 = 0;
                    #pragma unroll
                    for (int part_3 = 0; part_3 < 1; part_3++) {
                        const int group_3 = thread_3 + part_3 * 256;
                        const int slot_outer_3 = group_3 / 16;
                        const int slot_inner_3 = (group_3 % 16) * 4;
                        bool loaded_3 = false;
                        {
                            const long long t_i = tile_row_3 + slot_inner_3;
                            const long long t_p_3 = next_p_3 + slot_outer_3;
                            if (tile_row_3 + slot_inner_3 + 3 < trips_i && next_p_3 + slot_outer_3 < trips_p_3) {
                                int i = (int)t_i;
                                int p = (int)((0) + t_p_3);
                                const float *address_3 = &(a[p * m + i]);
                                if (((unsigned long long)address_3 & 15ull) == 0) {
                                    const float4 packed_3 = *reinterpret_cast<const float4 *>(address_3);
                                    staged_a_2[part_3][0] = packed_3.x;
                                    staged_a_2[part_3][1] = packed_3.y;
                                    staged_a_2[part_3][2] = packed_3.z;
                                    staged_a_2[part_3][3] = packed_3.w;
                                    loaded_3 = true;
                                }
                            }
                        }
                        if (__builtin_expect(!loaded_3, 0)) {
                            {
                                const long long t_i = tile_row_3 + slot_inner_3;
                                const long long t_p_3 = next_p_3 + slot_outer_3;
                                if (t_i < trips_i && t_p_3 < trips_p_3) {
                                    int i = (int)t_i;
                                    int p = (int)((0) + t_p_3);
                                    staged_a_2[part_3][0] = a[p * m + i];
                                } else {
                                    staged_a_2[part_3][0] = {};
                                }
                            }
                            {
                                const long long t_i = tile_row_3 + slot_inner_3 + 1;
                                const long long t_p_3 = next_p_3 + slot_outer_3;
                                if (t_i < trips_i && t_p_3 < trips_p_3) {
                                    int i = (int)t_i;
                                    int p = (int)((0) + t_p_3);
                                    staged_a_2[part_3][1] = a[p * m + i];
                                } else {
                                    staged_a_2[part_3][1] = {};
                                }
                            }
                            {
                                const long long t_i = tile_row_3 + slot_inner_3 + 2;
                                const long long t_p_3 = next_p_3 + slot_outer_3;
                                if (t_i < trips_i && t_p_3 < trips_p_3) {
                                    int i = (int)t_i;
                                    int p = (int)((0) + t_p_3);
                                    staged_a_2[part_3][2] = a[p * m + i];
                                } else {
                                    staged_a_2[part_3][2] = {};
                                }
                            }
                            {
                                const long long t_i = tile_row_3 + slot_inner_3 + 3;
                                const long long t_p_3 = next_p_3 + slot_outer_3;
                                if (t_i < trips_i && t_p_3 < trips_p_3) {
                                    int i = (int)t_i;
                                    int p = (int)((0) + t_p_3);
                                    staged_a_2[part_3][3] = a[p * m + i];
                                } else {
                                    staged_a_2[part_3][3] = {};
                                }
                            }
                        }
                    }
                    #pragma unroll
                    for (int part_3 = 0; part_3 < 1; part_3++) {
                        const int group_3 = thread_3 + part_3 * 256;
                        const int slot_outer_3 = group_3 / 16;
                        const int slot_inner_3 = (group_3 % 16) * 4;
                        bool loaded_3 = false;
                        {
                            const long long t_j = tile_col_3 + slot_inner_3;
                            const long long t_p_3 = next_p_3 + slot_outer_3;
                            if (tile_col_3 + slot_inner_3 + 3 < trips_j && next_p_3 + slot_outer_3 < trips_p_3) {
                                int j = (int)t_j;
                                int p = (int)((0) + t_p_3);
                                const float *address_3 = &(b[p * n + j]);
                                if (((unsigned long long)address_3 & 15ull) == 0) {
                                    const float4 packed_3 = *reinterpret_cast<const float4 *>(address_3);
                                    staged_b_2[part_3][0] = packed_3.x;
                                    staged_b_2[part_3][1] = packed_3.y;
                                    staged_b_2[part_3][2] = packed_3.z;
                                    staged_b_2[part_3][3] = packed_3.w;
                                    loaded_3 = true;
                                }
                            }
                        }
                        if (__builtin_expect(!loaded_3, 0)) {
                            {
                                const long long t_j = tile_col_3 + slot_inner_3;
                                const long long t_p_3 = next_p_3 + slot_outer_3;
                                if (t_j < trips_j && t_p_3 < trips_p_3) {
                                    int j = (int)t_j;
                                    int p = (int)((0) + t_p_3);
                                    staged_b_2[part_3][0] = b[p * n + j];
                                } else {
                                    staged_b_2[part_3][0] = {};
                                }
                            }
                            {
                                const long long t_j = tile_col_3 + slot_inner_3 + 1;
                                const long long t_p_3 = next_p_3 + slot_outer_3;
                                if (t_j < trips_j && t_p_3 < trips_p_3) {
                                    int j = (int)t_j;
                                    int p = (int)((0) + t_p_3);
                                    staged_b_2[part_3][1] = b[p * n + j];
                                } else {
                                    staged_b_2[part_3][1] = {};
                                }
                            }
                            {
                                const long long t_j = tile_col_3 + slot_inner_3 + 2;
                                const long long t_p_3 = next_p_3 + slot_outer_3;
                                if (t_j < trips_j && t_p_3 < trips_p_3) {
                                    int j = (int)t_j;
                                    int p = (int)((0) + t_p_3);
                                    staged_b_2[part_3][2] = b[p * n + j];
                                } else {
                                    staged_b_2[part_3][2] = {};
                                }
                            }
                            {
                                const long long t_j = tile_col_3 + slot_inner_3 + 3;
                                const long long t_p_3 = next_p_3 + slot_outer_3;
                                if (t_j < trips_j && t_p_3 < trips_p_3) {
                                    int j = (int)t_j;
                                    int p = (int)((0) + t_p_3);
                                    staged_b_2[part_3][3] = b[p * n + j];
                                } else {
                                    staged_b_2[part_3][3] = {};
                                }
                            }
                        }
                    }
                    for (long long tile_p_3 = 0; tile_p_3 < trips_p_3; tile_p_3 += 16) {
                        #pragma unroll
                        for (int part_3 = 0; part_3 < 1; part_3++) {
                            const int group_3 = thread_3 + part_3 * 256;
                            const int slot_outer_3 = group_3 / 16;
                            const int slot_inner_3 = (group_3 % 16) * 4;
                            tile_a_2[slot_outer_3][slot_inner_3] = staged_a_2[part_3][0];
                            tile_a_2[slot_outer_3][slot_inner_3 + 1] = staged_a_2[part_3][1];
                            tile_a_2[slot_outer_3][slot_inner_3 + 2] = staged_a_2[part_3][2];
                            tile_a_2[slot_outer_3][slot_inner_3 + 3] = staged_a_2[part_3][3];
                        }
                        #pragma unroll
                        for (int part_3 = 0; part_3 < 1; part_3++) {
                            const int group_3 = thread_3 + part_3 * 256;
                            const int slot_outer_3 = group_3 / 16;
                            const int slot_inner_3 = (group_3 % 16) * 4;
                            tile_b_2[slot_outer_3][slot_inner_3] = staged_b_2[part_3][0];
                            tile_b_2[slot_outer_3][slot_inner_3 + 1] = staged_b_2[part_3][1];
                            tile_b_2[slot_outer_3][slot_inner_3 + 2] = staged_b_2[part_3][2];
                            tile_b_2[slot_outer_3][slot_inner_3 + 3] = staged_b_2[part_3][3];
                        }
                        __syncthreads();
                        next_p_3 = tile_p_3 + 16;
                        if (next_p_3 < trips_p_3) {
                            #pragma unroll
                            for (int part_3 = 0; part_3 < 1; part_3++) {
                                const int group_3 = thread_3 + part_3 * 256;
                                const int slot_outer_3 = group_3 / 16;
                                const int slot_inner_3 = (group_3 % 16) * 4;
                                bool loaded_3 = false;
                                {
                                    const long long t_i = tile_row_3 + slot_inner_3;
                                    const long long t_p_3 = next_p_3 + slot_outer_3;
                                    if (tile_row_3 + slot_inner_3 + 3 < trips_i && next_p_3 + slot_outer_3 < trips_p_3) {
                                        int i = (int)t_i;
                                        int p = (int)((0) + t_p_3);
                                        const float *address_3 = &(a[p * m + i]);
                                        if (((unsigned long long)address_3 & 15ull) == 0) {
                                            const float4 packed_3 = *reinterpret_cast<const float4 *>(address_3);
                                            staged_a_2[part_3][0] = packed_3.x;
                                            staged_a_2[part_3][1] = packed_3.y;
                                            staged_a_2[part_3][2] = packed_3.z;
                                            staged_a_2[part_3][3] = packed_3.w;
                                            loaded_3 = true;
                                        }
                                    }
                                }
                                if (__builtin_expect(!loaded_3, 0)) {
                                    {
                                        const long long t_i = tile_row_3 + slot_inner_3;
                                        const long long t_p_3 = next_p_3 + slot_outer_3;
                                        if (t_i < trips_i && t_p_3 < trips_p_3) {
                                            int i = (int)t_i;
                                            int p = (int)((0) + t_p_3);
                                            staged_a_2[part_3][0] = a[p * m + i];
                                        } else {
                                            staged_a_2[part_3][0] = {};
                                        }
                                    }
                                    {
                                        const long long t_i = tile_row_3 + slot_inner_3 + 1;
                                        const long long t_p_3 = next_p_3 + slot_outer_3;
                                        if (t_i < trips_i && t_p_3 < trips_p_3) {
                                            int i = (int)t_i;
                                            int p = (int)((0) + t_p_3);
                                            staged_a_2[part_3][1] = a[p * m + i];
                                        } else {
                                            staged_a_2[part_3][1] = {};
                                        }
                                    }
                                    {
                                        const long long t_i = tile_row_3 + slot_inner_3 + 2;
                                        const long long t_p_3 = next_p_3 + slot_outer_3;
                                        if (t_i < trips_i && t_p_3 < trips_p_3) {
                                            int i = (int)t_i;
                                            int p = (int)((0) + t_p_3);
                                            staged_a_2[part_3][2] = a[p * m + i];
                                        } else {
                                            staged_a_2[part_3][2] = {};
                                        }
                                    }
                                    {
                                        const long long t_i = tile_row_3 + slot_inner_3 + 3;
                                        const long long t_p_3 = next_p_3 + slot_outer_3;
                                        if (t_i < trips_i && t_p_3 < trips_p_3) {
                                            int i = (int)t_i;
                                            int p = (int)((0) + t_p_3);
                                            staged_a_2[part_3][3] = a[p * m + i];
                                        } else {
                                            staged_a_2[part_3][3] = {};
                                        }
                                    }
                                }
                            }
                            #pragma unroll
                            for (int part_3 = 0; part_3 < 1; part_3++) {
                                const int group_3 = thread_3 + part_3 * 256;
                                const int slot_outer_3 = group_3 / 16;
                                const int slot_inner_3 = (group_3 % 16) * 4;
                                bool loaded_3 = false;
                                {
                                    const long long t_j = tile_col_3 + slot_inner_3;
                                    const long long t_p_3 = next_p_3 + slot_outer_3;
                                    if (tile_col_3 + slot_inner_3 + 3 < trips_j && next_p_3 + slot_outer_3 < trips_p_3) {
                                        int j = (int)t_j;
                                        int p = (int)((0) + t_p_3);
                                        const float *address_3 = &(b[p * n + j]);
                                        if (((unsigned long long)address_3 & 15ull) == 0) {
                                            const float4 packed_3 = *reinterpret_cast<const float4 *>(address_3);
                                            staged_b_2[part_3][0] = packed_3.x;
                                            staged_b_2[part_3][1] = packed_3.y;
                                            staged_b_2[part_3][2] = packed_3.z;
                                            staged_b_2[part_3][3] = packed_3.w;
                                            loaded_3 = true;
                                        }
                                    }
                                }
                                if (__builtin_expect(!loaded_3, 0)) {
                                    {
                                        const long long t_j = tile_col_3 + slot_inner_3;
                                        const long long t_p_3 = next_p_3 + slot_outer_3;
                                        if (t_j < trips_j && t_p_3 < trips_p_3) {
                                            int j = (int)t_j;
                                            int p = (int)((0) + t_p_3);
                                            staged_b_2[part_3][0] = b[p * n + j];
                                        } else {
                                            staged_b_2[part_3][0] = {};
                                        }
                                    }
                                    {
                                        const long long t_j = tile_col_3 + slot_inner_3 + 1;
                                        const long long t_p_3 = next_p_3 + slot_outer_3;
                                        if (t_j < trips_j && t_p_3 < trips_p_3) {
                                            int j = (int)t_j;
                                            int p = (int)((0) + t_p_3);
                                            staged_b_2[part_3][1] = b[p * n + j];
                                        } else {
                                            staged_b_2[part_3][1] = {};
                                        }
                                    }
                                    {
                                        const long long t_j = tile_col_3 + slot_inner_3 + 2;
                                        const long long t_p_3 = next_p_3 + slot_outer_3;
                                        if (t_j < trips_j && t_p_3 < trips_p_3) {
                                            int j = (int)t_j;
                                            int p = (int)((0) + t_p_3);
                                            staged_b_2[part_3][2] = b[p * n + j];
                                        } else {
                                            staged_b_2[part_3][2] = {};
                                        }
                                    }
                                    {
                                        const long long t_j = tile_col_3 + slot_inner_3 + 3;
                                        const long long t_p_3 = next_p_3 + slot_outer_3;
                                        if (t_j < trips_j && t_p_3 < trips_p_3) {
                                            int j = (int)t_j;
                                            int p = (int)((0) + t_p_3);
                                            staged_b_2[part_3][3] = b[p * n + j];
                                        } else {
                                            staged_b_2[part_3][3] = {};
                                        }
                                    }
                                }
                            }
                        }
                        const int count_p_3 = (int)(trips_p_3 - tile_p_3 < 16 ? trips_p_3 - tile_p_3 : 16);
                        if (count_p_3 == 16) {
                            #pragma unroll
                            for (int kk_p_3 = 0; kk_p_3 < 16; kk_p_3++) {
                                float frag_a_2[4];
                                #pragma unroll
                                for (int half_3 = 0; half_3 < 1; half_3++) {
                                    const float4 packed_3 = *reinterpret_cast<const float4 *>(&tile_a_2[kk_p_3][half_3 * 64 + threadIdx.y * 4]);
                                    frag_a_2[half_3 * 4 + 0] = packed_3.x;
                                    frag_a_2[half_3 * 4 + 1] = packed_3.y;
                                    frag_a_2[half_3 * 4 + 2] = packed_3.z;
                                    frag_a_2[half_3 * 4 + 3] = packed_3.w;
                                }
                                float frag_b_2[4];
                                #pragma unroll
                                for (int half_3 = 0; half_3 < 1; half_3++) {
                                    const float4 packed_3 = *reinterpret_cast<const float4 *>(&tile_b_2[kk_p_3][half_3 * 64 + threadIdx.x * 4]);
                                    frag_b_2[half_3 * 4 + 0] = packed_3.x;
                                    frag_b_2[half_3 * 4 + 1] = packed_3.y;
                                    frag_b_2[half_3 * 4 + 2] = packed_3.z;
                                    frag_b_2[half_3 * 4 + 3] = packed_3.w;
                                }
                                #pragma unroll
                                for (int out_r_3 = 0; out_r_3 < 4; out_r_3++) {
                                    #pragma unroll
                                    for (int out_c_3 = 0; out_c_3 < 4; out_c_3++) {
                                        s_tile[out_r_3][out_c_3] += frag_a_2[out_r_3] * frag_b_2[out_c_3];
                                        t_tile[out_r_3][out_c_3] = t_tile[out_r_3][out_c_3] + 0.25f * frag_a_2[out_r_3] * frag_b_2[out_c_3];
                                    }
                                }
                            }
                        } else {
                            for (int kk_p_3 = 0; kk_p_3 < count_p_3; kk_p_3++) {
                                float frag_a_2[4];
                                #pragma unroll
                                for (int half_3 = 0; half_3 < 1; half_3++) {
                                    const float4 packed_3 = *reinterpret_cast<const float4 *>(&tile_a_2[kk_p_3][half_3 * 64 + threadIdx.y * 4]);
                                    frag_a_2[half_3 * 4 + 0] = packed_3.x;
                                    frag_a_2[half_3 * 4 + 1] = packed_3.y;
                                    frag_a_2[half_3 * 4 + 2] = packed_3.z;
                                    frag_a_2[half_3 * 4 + 3] = packed_3.w;
                                }
                                float frag_b_2[4];
                                #pragma unroll
                                for (int half_3 = 0; half_3 < 1; half_3++) {
                                    const float4 packed_3 = *reinterpret_cast<const float4 *>(&tile_b_2[kk_p_3][half_3 * 64 + threadIdx.x * 4]);
                                    frag_b_2[half_3 * 4 + 0] = packed_3.x;
                                    frag_b_2[half_3 * 4 + 1] = packed_3.y;
                                    frag_b_2[half_3 * 4 + 2] = packed_3.z;
                                    frag_b_2[half_3 * 4 + 3] = packed_3.w;
                                }
                                #pragma unroll
                                for (int out_r_3 = 0; out_r_3 < 4; out_r_3++) {
                                    #pragma unroll
                                    for (int out_c_3 = 0; out_c_3 < 4; out_c_3++) {
                                        s_tile[out_r_3][out_c_3] += frag_a_2[out_r_3] * frag_b_2[out_c_3];
                                        t_tile[out_r_3][out_c_3] = t_tile[out_r_3][out_c_3] + 0.25f * frag_a_2[out_r_3] * frag_b_2[out_c_3];
                                    }
                                }
                            }
                        }
                        __syncthreads();
                    }
                    #pragma unroll
                    for (int out_r_3 = 0; out_r_3 < 4; out_r_3++) {
                        #pragma unroll
                        for (int out_c_3 = 0; out_c_3 < 4; out_c_3++) {
                            const long long t_i = tile_row_3 + (out_r_3 / 4) * 64 + threadIdx.y * 4 + out_r_3 % 4;
                            const long long t_j = tile_col_3 + (out_c_3 / 4) * 64 + threadIdx.x * 4 + out_c_3 % 4;
                            const bool active_3 = t_i < trips_i && t_j < trips_j;
                            int i = (int)t_i;
                            int j = (int)t_j;
                            if (active_3) {
                                s1[i * n + j] = s_tile[out_r_3][out_c_3];
                                s2[i * n + j] = t_tile[out_r_3][out_c_3] - s_tile[out_r_3][out_c_3];
                            }
                        }
                    }
                }
            }
        }
    } else {
        alignas(16) __shared__ float tile_a_2[8][132];
        alignas(16) __shared__ float tile_b_2[8][132];
        for (long long tile_row_3 = blockIdx.y * 128LL; tile_row_3 < trips_i; tile_row_3 += 128LL * gridDim.y) {
            for (long long tile_col_3 = blockIdx.x * 128LL; tile_col_3 < trips_j; tile_col_3 += 128LL * gridDim.x) {
                float s_tile[8][8];
                float t_tile[8][8];
                const long long span_p_3 = (long long)(k) - (long long)(0);
                const long long trips_p_3 = span_p_3 > 0 ? span_p_3 : 0;
                #pragma unroll
                for (int out_r_3 = 0; out_r_3 < 8; out_r_3++) {
                    #pragma unroll
                    for (int out_c_3 = 0; out_c_3 < 8; out_c_3++) {
                        const long long t_i = tile_row_3 + (out_r_3 / 4) * 64 + threadIdx.y * 4 + out_r_3 % 4;
                        const long long t_j = tile_col_3 + (out_c_3 / 4) * 64 + threadIdx.x * 4 + out_c_3 % 4;
                        const bool active_3 = t_i < trips_i && t_j < trips_j;
                        s_tile[out_r_3][out_c_3] = {};
                        t_tile[out_r_3][out_c_3] = {};
                        if (active_3) {
                            s_tile[out_r_3][out_c_3] = 0.0f;
                            t_tile[out_r_3][out_c_3] = 1.0f;
                        }
                    }
                }
                float staged_a_2[1][4];
                float staged_b_2[1][4];
                long long next_p_3 = 0;
                #pragma unroll
                for (int part_3 = 0; part_3 < 1; part_3++) {
                    const int group_3 = thread_3 + part_3 * 256;
                    const int slot_outer_3 = group_3 / 32;
                    const int slot_inner_3 = (group_3 % 32) * 4;
                    bool loaded_3 = false;
                    {
                        const long long t_i = tile_row_3 + slot_inner_3;
                        const long long t_p_3 = next_p_3 + slot_outer_3;
                        if (tile_row_3 + slot_inner_3 + 3 < trips_i && next_p_3 + slot_outer_3 < trips_p_3) {
                            int i = (int)t_i;
                            int p = (int)((0) + t_p_3);
                            const float *address_3 = &(a[p * m + i]);
                            if (((unsigned long long)address_3 & 15ull) == 0) {
                                const float4 packed_3 = *reinterpret_cast<const float4 *>(address_3);
                                staged_a_2[part_3][0] = packed_3.x;
                                staged_a_2[part_3][1] = packed_3.y;
                                staged_a_2[part_3][2] = packed_3.z;
                                staged_a_2[part_3][3] = packed_3.w;
                                loaded_3 = true;
                            }
                        }
                    }
                    if (__builtin_expect(!loaded_3, 0)) {
                        {
                            const long long t_i = tile_row_3 + slot_inner_3;
                            const long long t_p_3 = next_p_3 + slot_outer_3;
                            if (t_i < trips_i && t_p_3 < trips_p_3) {
                                int i = (int)t_i;
                                int p = (int)((0) + t_p_3);
                                staged_a_2[part_3][0] = a[p * m + i];
                            } else {
                                staged_a_2[part_3][0] = {};
                            }
                        }
                        {
                            const long long t_i = tile_row_3 + slot_inner_3 + 1;
                            const long long t_p_3 = next_p_3 + slot_outer_3;
                            if (t_i < trips_i && t_p_3 < trips_p_3) {
                                int i = (int)t_i;
                                int p = (int)((0) + t_p_3);
                                staged_a_2[part_3][1] = a[p * m + i];
                            } else {
                                staged_a_2[part_3][1] = {};
                            }
                        }
                        {
                            const long long t_i = tile_row_3 + slot_inner_3 + 2;
                            const long long t_p_3 = next_p_3 + slot_outer_3;
                            if (t_i < trips_i && t_p_3 < trips_p_3) {
                                int i = (int)t_i;
                                int p = (int)((0) + t_p_3);
                                staged_a_2[part_3][2] = a[p * m + i];
                            } else {
                                staged_a_2[part_3][2] = {};
                            }
                        }
                        {
                            const long long t_i = tile_row_3 + slot_inner_3 + 3;
                            const long long t_p_3 = next_p_3 + slot_outer_3;
                            if (t_i < trips_i && t_p_3 < trips_p_3) {
                                int i = (int)t_i;
                                int p = (int)((0) + t_p_3);
                                staged_a_2[part_3][3] = a[p * m + i];
                            } else {
                                staged_a_2[part_3][3] = {};
                            }
                        }
                    }
                }
                #pragma unroll
                for (int part_3 = 0; part_3 < 1; part_3++) {
                    const int group_3 = thread_3 + part_3 * 256;
                    const int slot_outer_3 = group_3 / 32;
                    const int slot_inner_3 = (group_3 % 32) * 4;
                    bool loaded_3 = false;
                    {
                        const long long t_j = tile_col_3 + slot_inner_3;
                        const long long t_p_3 = next_p_3 + slot_outer_3;
                        if (tile_col_3 + slot_inner_3 + 3 < trips_j && next_p_3 + slot_outer_3 < trips_p_3) {
                            int j = (int)t_j;
                            int p = (int)((0) + t_p_3);
                            const float *address_3 = &(b[p * n + j]);
                            if (((unsigned long long)address_3 & 15ull) == 0) {
                                const float4 packed_3 = *reinterpret_cast<const float4 *>(address_3);
                                staged_b_2[part_3][0] = packed_3.x;
                                staged_b_2[part_3][1] = packed_3.y;
                                staged_b_2[part_3][2] = packed_3.z;
                                staged_b_2[part_3][3] = packed_3.w;
                                loaded_3 = true;
                            }
                        }
                    }
                    if (__builtin_expect(!loaded_3, 0)) {
                        {
                            const long long t_j = tile_col_3 + slot_inner_3;
                            const long long t_p_3 = next_p_3 + slot_outer_3;
                            if (t_j < trips_j && t_p_3 < trips_p_3) {
                                int j = (int)t_j;
                                int p = (int)((0) + t_p_3);
                                staged_b_2[part_3][0] = b[p * n + j];
                            } else {
                                staged_b_2[part_3][0] = {};
                            }
                        }
                        {
                            const long long t_j = tile_col_3 + slot_inner_3 + 1;
                            const long long t_p_3 = next_p_3 + slot_outer_3;
                            if (t_j < trips_j && t_p_3 < trips_p_3) {
                                int j = (int)t_j;
                                int p = (int)((0) + t_p_3);
                                staged_b_2[part_3][1] = b[p * n + j];
                            } else {
                                staged_b_2[part_3][1] = {};
                            }
                        }
                        {
                            const long long t_j = tile_col_3 + slot_inner_3 + 2;
                            const long long t_p_3 = next_p_3 + slot_outer_3;
                            if (t_j < trips_j && t_p_3 < trips_p_3) {
                                int j = (int)t_j;
                                int p = (int)((0) + t_p_3);
                                staged_b_2[part_3][2] = b[p * n + j];
                            } else {
                                staged_b_2[part_3][2] = {};
                            }
                        }
                        {
                            const long long t_j = tile_col_3 + slot_inner_3 + 3;
                            const long long t_p_3 = next_p_3 + slot_outer_3;
                            if (t_j < trips_j && t_p_3 < trips_p_3) {
                                int j = (int)t_j;
                                int p = (int)((0) + t_p_3);
                                staged_b_2[part_3][3] = b[p * n + j];
                            } else {
                                staged_b_2[part_3][3] = {};
                            }
                        }
                    }
                }
                for (long long tile_p_3 = 0; tile_p_3 < trips_p_3; tile_p_3 += 8) {
                    #pragma unroll
                    for (int part_3 = 0; part_3 < 1; part_3++) {
                        const int group_3 = thread_3 + part_3 * 256;
                        const int slot_outer_3 = group_3 / 32;
                        const int slot_inner_3 = (group_3 % 32) * 4;
                        tile_a_2[slot_outer_3][slot_inner_3] = staged_a_2[part_3][0];
                        tile_a_2[slot_outer_3][slot_inner_3 + 1] = staged_a_2[part_3][1];
                        tile_a_2[slot_outer_3][slot_inner_3 + 2] = staged_a_2[part_3][2];
                        tile_a_2[slot_outer_3][slot_inner_3 + 3] = staged_a_2[part_3][3];
                    }
                    #pragma unroll
                    for (int part_3 = 0; part_3 < 1; part_3++) {
                        const int group_3 = thread_3 + part_3 * 256;
                        const int slot_outer_3 = group_3 / 32;
                        const int slot_inner_3 = (group_3 % 32) * 4;
                        tile_b_2[slot_outer_3][slot_inner_3] = staged_b_2[part_3][0];
                        tile_b_2[slot_outer_3][slot_inner_3 + 1] = staged_b_2[part_3][1];
                        tile_b_2[slot_outer_3][slot_inner_3 + 2] = staged_b_2[part_3][2];
                        tile_b_2[slot_outer_3][slot_inner_3 + 3] = staged_b_2[part_3][3];
                    }
                    __syncthreads();
                    next_p_3 = tile_p_3 + 8;
                    if (next_p_3 < trips_p_3) {
                        #pragma unroll
                        for (int part_3 = 0; part_3 < 1; part_3++) {
                            const int group_3 = thread_3 + part_3 * 256;
                            const int slot_outer_3 = group_3 / 32;
                            const int slot_inner_3 = (group_3 % 32) * 4;
                            bool loaded_3 = false;
                            {
                                const long long t_i = tile_row_3 + slot_inner_3;
                                const long long t_p_3 = next_p_3 + slot_outer_3;
                                if (tile_row_3 + slot_inner_3 + 3 < trips_i && next_p_3 + slot_outer_3 < trips_p_3) {
                                    int i = (int)t_i;
                                    int p = (int)((0) + t_p_3);
                                    const float *address_3 = &(a[p * m + i]);
                                    if (((unsigned long long)address_3 & 15ull) == 0) {
                                        const float4 packed_3 = *reinterpret_cast<const float4 *>(address_3);
                                        staged_a_2[part_3][0] = packed_3.x;
                                        staged_a_2[part_3][1] = packed_3.y;
                                        staged_a_2[part_3][2] = packed_3.z;
                                        staged_a_2[part_3][3] = packed_3.w;
                                        loaded_3 = true;
                                    }
                                }
                            }
                            if (__builtin_expect(!loaded_3, 0)) {
                                {
                                    const long long t_i = tile_row_3 + slot_inner_3;
                                    const long long t_p_3 = next_p_3 + slot_outer_3;
                                    if (t_i < trips_i && t_p_3 < trips_p_3) {
                                        int i = (int)t_i;
                                        int p = (int)((0) + t_p_3);
                                        staged_a_2[part_3][0] = a[p * m + i];
                                    } else {
                                        staged_a_2[part_3][0] = {};
                                    }
                                }
                                {
                                    const long long t_i = tile_row_3 + slot_inner_3 + 1;
                                    const long long t_p_3 = next_p_3 + slot_outer_3;
                                    if (t_i < trips_i && t_p_3 < trips_p_3) {
                                        int i = (int)t_i;
                                        int p = (int)((0) + t_p_3);
                                        staged_a_2[part_3][1] = a[p * m + i];
                                    } else {
                                        staged_a_2[part_3][1] = {};
                                    }
                                }
                                {
                                    const long long t_i = tile_row_3 + slot_inner_3 + 2;
                                    const long long t_p_3 = next_p_3 + slot_outer_3;
                                    if (t_i < trips_i && t_p_3 < trips_p_3) {
                                        int i = (int)t_i;
                                        int p = (int)((0) + t_p_3);
                                        staged_a_2[part_3][2] = a[p * m + i];
                                    } else {
                                        staged_a_2[part_3][2] = {};
                                    }
                                }
                                {
                                    const long long t_i = tile_row_3 + slot_inner_3 + 3;
                                    const long long t_p_3 = next_p_3 + slot_outer_3;
                                    if (t_i < trips_i && t_p_3 < trips_p_3) {
                                        int i = (int)t_i;
                                        int p = (int)((0) + t_p_3);
                                        staged_a_2[part_3][3] = a[p * m + i];
                                    } else {
                                        staged_a_2[part_3][3] = {};
                                    }
                                }
                            }
                        }
                        #pragma unroll
                        for (int part_3 = 0; part_3 < 1; part_3++) {
                            const int group_3 = thread_3 + part_3 * 256;
                            const int slot_outer_3 = group_3 / 32;
                            const int slot_inner_3 = (group_3 % 32) * 4;
                            bool loaded_3 = false;
                            {
                                const long long t_j = tile_col_3 + slot_inner_3;
                                const long long t_p_3 = next_p_3 + slot_outer_3;
                                if (tile_col_3 + slot_inner_3 + 3 < trips_j && next_p_3 + slot_outer_3 < trips_p_3) {
                                    int j = (int)t_j;
                                    int p = (int)((0) + t_p_3);
                                    const float *address_3 = &(b[p * n + j]);
                                    if (((unsigned long long)address_3 & 15ull) == 0) {
                                        const float4 packed_3 = *reinterpret_cast<const float4 *>(address_3);
                                        staged_b_2[part_3][0] = packed_3.x;
                                        staged_b_2[part_3][1] = packed_3.y;
                                        staged_b_2[part_3][2] = packed_3.z;
                                        staged_b_2[part_3][3] = packed_3.w;
                                        loaded_3 = true;
                                    }
                                }
                            }
                            if (__builtin_expect(!loaded_3, 0)) {
                                {
                                    const long long t_j = tile_col_3 + slot_inner_3;
                                    const long long t_p_3 = next_p_3 + slot_outer_3;
                                    if (t_j < trips_j && t_p_3 < trips_p_3) {
                                        int j = (int)t_j;
                                        int p = (int)((0) + t_p_3);
                                        staged_b_2[part_3][0] = b[p * n + j];
                                    } else {
                                        staged_b_2[part_3][0] = {};
                                    }
                                }
                                {
                                    const long long t_j = tile_col_3 + slot_inner_3 + 1;
                                    const long long t_p_3 = next_p_3 + slot_outer_3;
                                    if (t_j < trips_j && t_p_3 < trips_p_3) {
                                        int j = (int)t_j;
                                        int p = (int)((0) + t_p_3);
                                        staged_b_2[part_3][1] = b[p * n + j];
                                    } else {
                                        staged_b_2[part_3][1] = {};
                                    }
                                }
                                {
                                    const long long t_j = tile_col_3 + slot_inner_3 + 2;
                                    const long long t_p_3 = next_p_3 + slot_outer_3;
                                    if (t_j < trips_j && t_p_3 < trips_p_3) {
                                        int j = (int)t_j;
                                        int p = (int)((0) + t_p_3);
                                        staged_b_2[part_3][2] = b[p * n + j];
                                    } else {
                                        staged_b_2[part_3][2] = {};
                                    }
                                }
                                {
                                    const long long t_j = tile_col_3 + slot_inner_3 + 3;
                                    const long long t_p_3 = next_p_3 + slot_outer_3;
                                    if (t_j < trips_j && t_p_3 < trips_p_3) {
                                        int j = (int)t_j;
                                        int p = (int)((0) + t_p_3);
                                        staged_b_2[part_3][3] = b[p * n + j];
                                    } else {
                                        staged_b_2[part_3][3] = {};
                                    }
                                }
                            }
                        }
                    }
                    const int count_p_3 = (int)(trips_p_3 - tile_p_3 < 8 ? trips_p_3 - tile_p_3 : 8);
                    if (count_p_3 == 8) {
                        #pragma unroll
                        for (int kk_p_3 = 0; kk_p_3 < 8; kk_p_3++) {
                            float frag_a_2[8];
                            #pragma unroll
                            for (int half_3 = 0; half_3 < 2; half_3++) {
                                const float4 packed_3 = *reinterpret_cast<const float4 *>(&tile_a_2[kk_p_3][half_3 * 64 + threadIdx.y * 4]);
                                frag_a_2[half_3 * 4 + 0] = packed_3.x;
                                frag_a_2[half_3 * 4 + 1] = packed_3.y;
                                frag_a_2[half_3 * 4 + 2] = packed_3.z;
                                frag_a_2[half_3 * 4 + 3] = packed_3.w;
                            }
                            float frag_b_2[8];
                            #pragma unroll
                            for (int half_3 = 0; half_3 < 2; half_3++) {
                                const float4 packed_3 = *reinterpret_cast<const float4 *>(&tile_b_2[kk_p_3][half_3 * 64 + threadIdx.x * 4]);
                                frag_b_2[half_3 * 4 + 0] = packed_3.x;
                                frag_b_2[half_3 * 4 + 1] = packed_3.y;
                                frag_b_2[half_3 * 4 + 2] = packed_3.z;
                                frag_b_2[half_3 * 4 + 3] = packed_3.w;
                            }
                            #pragma unroll
                            for (int out_r_3 = 0; out_r_3 < 8; out_r_3++) {
                                #pragma unroll
                                for (int out_c_3 = 0; out_c_3 < 8; out_c_3++) {
                                    s_tile[out_r_3][out_c_3] += frag_a_2[out_r_3] * frag_b_2[out_c_3];
                                    t_tile[out_r_3][out_c_3] = t_tile[out_r_3][out_c_3] + 0.25f * frag_a_2[out_r_3] * frag_b_2[out_c_3];
                                }
                            }
                        }
                    } else {
                        for (int kk_p_3 = 0; kk_p_3 < count_p_3; kk_p_3++) {
                            float frag_a_2[8];
                            #pragma unroll
                            for (int half_3 = 0; half_3 < 2; half_3++) {
                                const float4 packed_3 = *reinterpret_cast<const float4 *>(&tile_a_2[kk_p_3][half_3 * 64 + threadIdx.y * 4]);
                                frag_a_2[half_3 * 4 + 0] = packed_3.x;
                                frag_a_2[half_3 * 4 + 1] = packed_3.y;
                                frag_a_2[half_3 * 4 + 2] = packed_3.z;
                                frag_a_2[half_3 * 4 + 3] = packed_3.w;
                            }
                            float frag_b_2[8];
                            #pragma unroll
                            for (int half_3 = 0; half_3 < 2; half_3++) {
                                const float4 packed_3 = *reinterpret_cast<const float4 *>(&tile_b_2[kk_p_3][half_3 * 64 + threadIdx.x * 4]);
                                frag_b_2[half_3 * 4 + 0] = packed_3.x;
                                frag_b_2[half_3 * 4 + 1] = packed_3.y;
                                frag_b_2[half_3 * 4 + 2] = packed_3.z;
                                frag_b_2[half_3 * 4 + 3] = packed_3.w;
                            }
                            #pragma unroll
                            for (int out_r_3 = 0; out_r_3 < 8; out_r_3++) {
                                #pragma unroll
                                for (int out_c_3 = 0; out_c_3 < 8; out_c_3++) {
                                    s_tile[out_r_3][out_c_3] += frag_a_2[out_r_3] * frag_b_2[out_c_3];
                                    t_tile[out_r_3][out_c_3] = t_tile[out_r_3][out_c_3] + 0.25f * frag_a_2[out_r_3] * frag_b_2[out_c_3];
                                }
                            }
                        }
                    }
                    __syncthreads();
                }
                #pragma unroll
                for (int out_r_3 = 0; out_r_3 < 8; out_r_3++) {
                    #pragma unroll
                    for (int out_c_3 = 0; out_c_3 < 8; out_c_3++) {
                        const long long t_i = tile_row_3 + (out_r_3 / 4) * 64 + threadIdx.y * 4 + out_r_3 % 4;
                        const long long t_j = tile_col_3 + (out_c_3 / 4) * 64 + threadIdx.x * 4 + out_c_3 % 4;
                        const bool active_3 = t_i < trips_i && t_j < trips_j;
                        int i = (int)t_i;
                        int j = (int)t_j;
                        if (active_3) {
                            s1[i * n + j] = s_tile[out_r_3][out_c_3];
                            s2[i * n + j] = t_tile[out_r_3][out_c_3] - s_tile[out_r_3][out_c_3];
                        }
                    }
                }
            }
        }
    }
}

/* cudaify gemm_tiling: 128 x 128 tiles where there are at least as many as multiprocessors, else 64 x 64 */
static int moments_kernel_tile(long long rows, long long cols)
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
static unsigned int moments_kernel_splits(long long rows, long long cols, long long trips, long long tile)
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
    if (tiles > 4096 || (double)splits * rows * cols * 2 > 2097152.0)
        return 1u;
    return (unsigned int)splits;
}

/* two sums per output, one written X = X + E and starting at one */
void moments(int k, int m, int n, const float *a, const float *b, float *s1, float *s2)
{
    {
        /* cudaify: this loop nest runs on the GPU as moments_kernel */
        const long long trips_i = cudaify_trips(0, m, 1, 0);
        const long long trips_j = cudaify_trips(0, n, 1, 0);
        if (trips_i > 0 && trips_j > 0) {
            float *d_a = NULL;
            float *d_b = NULL;
            float *d_s1 = NULL;
            float *d_s2 = NULL;
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_a, (size_t)((long long)k*(long long)m) * sizeof(float)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_b, (size_t)((long long)k*(long long)n) * sizeof(float)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_s1, (size_t)((long long)m*(long long)n) * sizeof(float)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_s2, (size_t)((long long)m*(long long)n) * sizeof(float)));
            CUDAIFY_CHECK(cudaMemcpy(d_a, a, (size_t)((long long)k*(long long)m) * sizeof(float), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_b, b, (size_t)((long long)k*(long long)n) * sizeof(float), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_s1, s1, (size_t)((long long)m*(long long)n) * sizeof(float), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_s2, s2, (size_t)((long long)m*(long long)n) * sizeof(float), cudaMemcpyHostToDevice));
            const dim3 block(16, 16);
            const dim3 grid(cudaify_blocks(trips_j, moments_kernel_tile(trips_i, trips_j), 2147483647u), cudaify_blocks(trips_i, moments_kernel_tile(trips_i, trips_j), 65535u));
            moments_kernel<<<dim3(grid.x, grid.y, moments_kernel_splits(trips_i, trips_j, ((long long)((k)) - (long long)(0)), moments_kernel_tile(trips_i, trips_j))), block>>>(d_a, d_b, d_s1, d_s2, k, m, n, trips_i, trips_j);
            CUDAIFY_CHECK(cudaGetLastError());
            CUDAIFY_CHECK(cudaMemcpy(s1, d_s1, (size_t)((long long)m*(long long)n) * sizeof(float), cudaMemcpyDeviceToHost));
            CUDAIFY_CHECK(cudaMemcpy(s2, d_s2, (size_t)((long long)m*(long long)n) * sizeof(float), cudaMemcpyDeviceToHost));
            CUDAIFY_CHECK(cudaify_free(d_a));
            CUDAIFY_CHECK(cudaify_free(d_b));
            CUDAIFY_CHECK(cudaify_free(d_s1));
            CUDAIFY_CHECK(cudaify_free(d_s2));
        }
    }
}

int main(void)
{
    int k = 700, m = 40, n = 72;
    float *a = (float *)malloc(sizeof(float) * k * m);
    float *b = (float *)malloc(sizeof(float) * k * n);
    float *c = (float *)malloc(sizeof(float) * m * n);
    double *x = (double *)malloc(sizeof(double) * m * k);
    double *y = (double *)malloc(sizeof(double) * k * n);
    double *bias = (double *)malloc(sizeof(double) * n);
    double *r = (double *)malloc(sizeof(double) * m * n);
    float *s1 = (float *)malloc(sizeof(float) * m * n);
    float *s2 = (float *)malloc(sizeof(float) * m * n);
    for (int i = 0; i < k * m; i++)
        a[i] = (float)((i * 7) % 13) * 0.125f - 0.5f;
    for (int i = 0; i < k * n; i++)
        b[i] = (float)((i * 5) % 11) * 0.25f - 1.0f;
    for (int i = 0; i < m * k; i++)
        x[i] = (double)((i * 3) % 17) * 0.0625 - 0.25;
    for (int i = 0; i < k * n; i++)
        y[i] = (double)((i * 11) % 7) * 0.5 - 1.5;
    for (int j = 0; j < n; j++)
        bias[j] = (double)j * 0.75;
    /* twice, on other data the second time: each launch leaves the tiles' arrival counts
       as it found them */
    cross(k, m, n, a, b, c);
    double first = 0.0;
    for (int i = 0; i < m * n; i++)
        first += c[i] * (i % 3);
    for (int i = 0; i < k * n; i++)
        b[i] = 0.5f - b[i];
    cross(k, m, n, a, b, c);
    residual(k, m, n, x, y, bias, r);
    moments(k, m, n, a, b, s1, s2);
    double msum = 0.0;
    for (int i = 0; i < m * n; i++)
        msum += s1[i] * (i % 3) + s2[i];
    printf("msum=%.6e s2[0]=%.5f\n", msum, s2[0]);
    free(s1);
    free(s2);
    double sum = 0.0, weighted = 0.0, rsum = 0.0;
    for (int i = 0; i < m * n; i++) {
        sum += c[i];
        weighted += c[i] * (i % 7);
        rsum += r[i] * (i % 5);
    }
    printf("first=%.6e\n", first);
    printf("sum=%.6e weighted=%.6e c[0]=%.4f c[last]=%.4f\n", sum, weighted, c[0], c[m * n - 1]);
    printf("rsum=%.6e r[0]=%.6f r[last]=%.6f\n", rsum, r[0], r[m * n - 1]);
    free(a);
    free(b);
    free(c);
    free(x);
    free(y);
    free(bias);
    free(r);
    return 0;
}
