#include <stdio.h>
#include <stdlib.h>

#define DIM 3

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

/* Loop nest 'i' of nearest() (line 10): one thread per iteration. */
__global__ void nearest_kernel(float *points, float *centres, int *label, float *best, int k, long long trips_i)
{
    /* cudaify register_tiling: each thread computes 4 outputs along 'i', blockDim.x apart. */
    for (long long base_i = blockIdx.x * (long long)blockDim.x * 4 + threadIdx.x; base_i < trips_i;
         base_i += (long long)blockDim.x * gridDim.x * 4) {
        if (base_i + 3LL * blockDim.x < trips_i) {
            const long long t_i_0 = base_i;
            int i_0 = (int)t_i_0;
            const long long t_i_1 = base_i + 1LL * blockDim.x;
            int i_1 = (int)t_i_1;
            const long long t_i_2 = base_i + 2LL * blockDim.x;
            int i_2 = (int)t_i_2;
            const long long t_i_3 = base_i + 3LL * blockDim.x;
            int i_3 = (int)t_i_3;
            int which_0 = -1;
            int which_1 = -1;
            int which_2 = -1;
            int which_3 = -1;
            float closest_0 = 1.0e30f, second_0 = 1.0e30f;
            float closest_1 = 1.0e30f, second_1 = 1.0e30f;
            float closest_2 = 1.0e30f, second_2 = 1.0e30f;
            float closest_3 = 1.0e30f, second_3 = 1.0e30f;
            for (int c = 0; c < k; c++) {
                float d2_0 = 0.0f;
                float d2_1 = 0.0f;
                float d2_2 = 0.0f;
                float d2_3 = 0.0f;
                for (int d = 0; d < DIM; d++) {
                    float diff_0 = points[i_0 * DIM + d] - centres[c * DIM + d];
                    float diff_1 = points[i_1 * DIM + d] - centres[c * DIM + d];
                    float diff_2 = points[i_2 * DIM + d] - centres[c * DIM + d];
                    float diff_3 = points[i_3 * DIM + d] - centres[c * DIM + d];
                    d2_0 += diff_0 * diff_0;
                    d2_1 += diff_1 * diff_1;
                    d2_2 += diff_2 * diff_2;
                    d2_3 += diff_3 * diff_3;
                }
                if (d2_0 < closest_0) {
                    second_0 = closest_0;
                    closest_0 = d2_0;
                    which_0 = c;
                } else if (d2_0 < second_0) {
                    second_0 = d2_0;
                }
                if (d2_1 < closest_1) {
                    second_1 = closest_1;
                    closest_1 = d2_1;
                    which_1 = c;
                } else if (d2_1 < second_1) {
                    second_1 = d2_1;
                }
                if (d2_2 < closest_2) {
                    second_2 = closest_2;
                    closest_2 = d2_2;
                    which_2 = c;
                } else if (d2_2 < second_2) {
                    second_2 = d2_2;
                }
                if (d2_3 < closest_3) {
                    second_3 = closest_3;
                    closest_3 = d2_3;
                    which_3 = c;
                } else if (d2_3 < second_3) {
                    second_3 = d2_3;
                }
            }
            label[i_0] = which_0;
            label[i_1] = which_1;
            label[i_2] = which_2;
            label[i_3] = which_3;
            best[i_0] = closest_0 - 0.5f * second_0;
            best[i_1] = closest_1 - 0.5f * second_1;
            best[i_2] = closest_2 - 0.5f * second_2;
            best[i_3] = closest_3 - 0.5f * second_3;
        } else {
            for (int output = 0; output < 4; output++) {
                const long long t_i = base_i + output * (long long)blockDim.x;
                if (t_i < trips_i) {
                    int i = (int)t_i;
                    int which = -1;
                    float closest = 1.0e30f, second = 1.0e30f;
                    for (int c = 0; c < k; c++) {
                        float d2 = 0.0f;
                        for (int d = 0; d < DIM; d++) {
                            float diff = points[i * DIM + d] - centres[c * DIM + d];
                            d2 += diff * diff;
                        }
                        if (d2 < closest) {
                            second = closest;
                            closest = d2;
                            which = c;
                        } else if (d2 < second) {
                            second = d2;
                        }
                    }
                    label[i] = which;
                    best[i] = closest - 0.5f * second;
                }
            }
        }
    }
}

/* nearest centre of every point: nested loops with the same bounds for every point
   (fused across a thread's outputs), a data-dependent update, two outputs per point */
void nearest(int n, int k, const float *points, const float *centres, int *label, float *best)
{
    {
        /* cudaify: this loop nest runs on the GPU as nearest_kernel */
        const long long trips_i = cudaify_trips(0, n, 1, 0);
        if (trips_i > 0) {
            float *d_points = NULL;
            float *d_centres = NULL;
            int *d_label = NULL;
            float *d_best = NULL;
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_points, (size_t)((3 * (long long)n)) * sizeof(float)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_centres, (size_t)((3 * (long long)k)) * sizeof(float)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_label, (size_t)(n) * sizeof(int)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_best, (size_t)(n) * sizeof(float)));
            CUDAIFY_CHECK(cudaMemcpy(d_points, points, (size_t)((3 * (long long)n)) * sizeof(float), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_centres, centres, (size_t)((3 * (long long)k)) * sizeof(float), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_label, label, (size_t)(n) * sizeof(int), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_best, best, (size_t)(n) * sizeof(float), cudaMemcpyHostToDevice));
            const dim3 block(256);
            const dim3 grid(cudaify_blocks(cudaify_rows(trips_i, 1), 1024, 2147483647u));
            nearest_kernel<<<grid, block>>>(d_points, d_centres, d_label, d_best, k, trips_i);
            CUDAIFY_CHECK(cudaGetLastError());
            CUDAIFY_CHECK(cudaMemcpy(label, d_label, (size_t)(n) * sizeof(int), cudaMemcpyDeviceToHost));
            CUDAIFY_CHECK(cudaMemcpy(best, d_best, (size_t)(n) * sizeof(float), cudaMemcpyDeviceToHost));
            CUDAIFY_CHECK(cudaify_free(d_points));
            CUDAIFY_CHECK(cudaify_free(d_centres));
            CUDAIFY_CHECK(cudaify_free(d_label));
            CUDAIFY_CHECK(cudaify_free(d_best));
        }
    }
}

int main(void)
{
    int n = 2333, k = 17;
    float *points = (float *)malloc(sizeof(float) * n * DIM);
    float *centres = (float *)malloc(sizeof(float) * k * DIM);
    int *label = (int *)malloc(sizeof(int) * n);
    float *best = (float *)malloc(sizeof(float) * n);
    for (int i = 0; i < n * DIM; i++)
        points[i] = ((i * 29) % 97) * 0.1f;
    for (int i = 0; i < k * DIM; i++)
        centres[i] = ((i * 13) % 41) * 0.25f;
    nearest(n, k, points, centres, label, best);
    long histogram = 0;
    double total = 0.0;
    for (int i = 0; i < n; i++) {
        histogram += (long)label[i] * (i % 11);
        total += best[i];
    }
    printf("labels=%ld total=%.5e\n", histogram, total);
    free(points);
    free(centres);
    free(label);
    free(best);
    return 0;
}
