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

/* Loop nest 'i, j' of gram() (line 7): one thread per iteration. */
__global__ void gram_kernel(float *x, float *g, int d, int n, long long trips_i, long long trips_j)
{
    /* cudaify shared_tiling: blocks of 16 x 16 threads own a tile of outputs and stage 16 iterations of 'k' at a time. */
    if (blockDim.x != 16 || blockDim.y != 16) __trap();
    __shared__ float tile_x[16][17];
    __shared__ float tile_x_2[16][17];
    for (long long tile_row = blockIdx.y * 16LL; tile_row < trips_i; tile_row += 16LL * gridDim.y) {
        for (long long tile_col = blockIdx.x * 16LL; tile_col < trips_j; tile_col += 16LL * gridDim.x) {
            const long long t_i = tile_row + threadIdx.y;
            const long long t_j = tile_col + threadIdx.x;
            const bool active = t_i < trips_i && t_j < trips_j;
            int i = (int)t_i;
            int j = (int)t_j;
            float dot = 0.0f;
            const long long span_k = (long long)(d - 1) - (long long)(0) + 1;
            const long long trips_k = span_k > 0 ? span_k : 0;
            for (long long tile_k = 0; tile_k < trips_k; tile_k += 16) {
                {
                    const long long t_i = tile_row + threadIdx.y;
                    const long long t_k = tile_k + threadIdx.x;
                    if (t_i < trips_i && t_k < trips_k) {
                        int i = (int)t_i;
                        int k = (int)((0) + t_k);
                        tile_x[threadIdx.y][threadIdx.x] = x[i * d + k];
                    } else {
                        tile_x[threadIdx.y][threadIdx.x] = {};
                    }
                }
                {
                    const long long t_j = tile_col + threadIdx.y;
                    const long long t_k = tile_k + threadIdx.x;
                    if (t_j < trips_j && t_k < trips_k) {
                        int j = (int)t_j;
                        int k = (int)((0) + t_k);
                        tile_x_2[threadIdx.y][threadIdx.x] = x[j * d + k];
                    } else {
                        tile_x_2[threadIdx.y][threadIdx.x] = {};
                    }
                }
                __syncthreads();
                if (active) {
                    const int count_k = (int)(trips_k - tile_k < 16 ? trips_k - tile_k : 16);
                    if (count_k == 16) {
                        #pragma unroll
                        for (int kk_k = 0; kk_k < 16; kk_k++) {
                            dot += tile_x[threadIdx.y][kk_k] * tile_x_2[threadIdx.x][kk_k];
                        }
                    } else {
                        for (int kk_k = 0; kk_k < count_k; kk_k++) {
                            dot += tile_x[threadIdx.y][kk_k] * tile_x_2[threadIdx.x][kk_k];
                        }
                    }
                }
                __syncthreads();
            }
            if (active) {
                g[i * n + j] = dot;
            }
        }
    }
}

/* G = X X^T: one array read twice, once along i and once along j (two tiles) */
void gram(int n, int d, const float *x, float *g)
{
    {
        /* cudaify: this loop nest runs on the GPU as gram_kernel */
        const long long trips_i = cudaify_trips(0, n, 1, 0);
        const long long trips_j = cudaify_trips(0, n, 1, 0);
        if (trips_i > 0 && trips_j > 0) {
            float *d_x = NULL;
            float *d_g = NULL;
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_x, (size_t)((long long)d*(long long)n) * sizeof(float)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_g, (size_t)((long long)n*(long long)n) * sizeof(float)));
            CUDAIFY_CHECK(cudaMemcpy(d_x, x, (size_t)((long long)d*(long long)n) * sizeof(float), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_g, g, (size_t)((long long)n*(long long)n) * sizeof(float), cudaMemcpyHostToDevice));
            const dim3 block(16, 16);
            const dim3 grid(cudaify_blocks(trips_j, 16, 2147483647u), cudaify_blocks(trips_i, 16, 65535u));
            gram_kernel<<<grid, block>>>(d_x, d_g, d, n, trips_i, trips_j);
            CUDAIFY_CHECK(cudaGetLastError());
            CUDAIFY_CHECK(cudaMemcpy(g, d_g, (size_t)((long long)n*(long long)n) * sizeof(float), cudaMemcpyDeviceToHost));
            CUDAIFY_CHECK(cudaify_free(d_x));
            CUDAIFY_CHECK(cudaify_free(d_g));
        }
    }
}

int main(void)
{
    int n = 130, d = 23;
    float *x = (float *)malloc(sizeof(float) * n * d);
    float *g = (float *)malloc(sizeof(float) * n * n);
    for (int i = 0; i < n * d; i++)
        x[i] = ((i * 13) % 23) * 0.125f - 1.0f;
    gram(n, d, x, g);
    double trace = 0.0, sum = 0.0;
    for (int i = 0; i < n; i++) {
        trace += g[i * n + i];
        for (int j = 0; j < n; j++)
            sum += g[i * n + j] * ((i + 2 * j) % 3);
    }
    printf("trace=%.6e weighted=%.6e\n", trace, sum);
    free(x);
    free(g);
    return 0;
}
