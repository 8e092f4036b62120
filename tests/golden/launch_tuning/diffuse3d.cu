/* A 7-point stencil over a cube: offload and schedule map its three loops on a 3-D grid. */
#include <stdio.h>
#include <stdlib.h>

#define N 20

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

/* Loop nest 'i, j, k' of diffuse() (line 9): one thread per iteration. */
__global__ void __launch_bounds__(256) diffuse_kernel(float *out, float *in, int n, float c0, float c1, long long trips_i, long long trips_j, long long trips_k)
{
    for (long long t_i = blockIdx.z * (long long)blockDim.z + threadIdx.z; t_i < trips_i;
         t_i += (long long)blockDim.z * gridDim.z) {
        int i = (int)(1 + t_i);
        for (long long t_j = blockIdx.y * (long long)blockDim.y + threadIdx.y; t_j < trips_j;
             t_j += (long long)blockDim.y * gridDim.y) {
            int j = (int)(1 + t_j);
            for (long long t_k = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_k < trips_k;
                 t_k += (long long)blockDim.x * gridDim.x) {
                int k = (int)(1 + t_k);
                int at = (i * n + j) * n + k;
                out[at] = c0 * in[at] + c1 * (in[at - 1] + in[at + 1] + in[at - n] + in[at + n] +
                                              in[at - n * n] + in[at + n * n]);
            }
        }
    }
}

void diffuse(int n, float c0, float c1, const float *in, float *out)
{
    {
        /* cudaify: this loop nest runs on the GPU as diffuse_kernel */
        const long long trips_i = cudaify_trips(1, n - 1, 1, 0);
        const long long trips_j = cudaify_trips(1, n - 1, 1, 0);
        const long long trips_k = cudaify_trips(1, n - 1, 1, 0);
        if (trips_i > 0 && trips_j > 0 && trips_k > 0) {
            float *d_out = NULL;
            float *d_in = NULL;
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_out, (size_t)((long long)n*(long long)n*(long long)n - 2*(long long)n*(long long)n - 2*(long long)n - 2) * sizeof(float)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_in, (size_t)((long long)n*(long long)n*(long long)n - 2*(long long)n - 2) * sizeof(float)));
            CUDAIFY_CHECK(cudaMemcpy(d_out, out + (n*n + n + 1), (size_t)((long long)n*(long long)n*(long long)n - 2*(long long)n*(long long)n - 2*(long long)n - 2) * sizeof(float), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_in, in + (n + 1), (size_t)((long long)n*(long long)n*(long long)n - 2*(long long)n - 2) * sizeof(float), cudaMemcpyHostToDevice));
            const dim3 block(64, 2, 2);
            const dim3 grid(cudaify_blocks(cudaify_rows(trips_k, 1), 64, 2147483647u), cudaify_blocks(cudaify_rows(trips_j, trips_k), 2, 65535u), cudaify_blocks(cudaify_rows(trips_i, trips_k * trips_j), 2, 65535u));
            diffuse_kernel<<<grid, block>>>(d_out - (n*n + n + 1), d_in - (n + 1), n, c0, c1, trips_i, trips_j, trips_k);
            CUDAIFY_CHECK(cudaGetLastError());
            CUDAIFY_CHECK(cudaMemcpy(out + (n*n + n + 1), d_out, (size_t)((long long)n*(long long)n*(long long)n - 2*(long long)n*(long long)n - 2*(long long)n - 2) * sizeof(float), cudaMemcpyDeviceToHost));
            CUDAIFY_CHECK(cudaify_free(d_out));
            CUDAIFY_CHECK(cudaify_free(d_in));
        }
    }
}

int main(void)
{
    float *a = (float *)malloc(sizeof(float) * N * N * N);
    float *b = (float *)malloc(sizeof(float) * N * N * N);
    for (int i = 0; i < N * N * N; i++) {
        a[i] = (float)((i * 7) % 17) / 17.0f;
        b[i] = 0.0f;
    }
    diffuse(N, 0.4f, 0.1f, a, b);
    diffuse(N, 0.4f, 0.1f, b, a);
    double sum = 0.0;
    for (int i = 0; i < N * N * N; i++)
        sum += a[i] * (1 + i % 5);
    printf("sum=%.6e a[mid]=%.6e\n", sum, (double)a[(N / 2 * N + N / 2) * N + N / 2]);
    free(a);
    free(b);
    return 0;
}
