/* Floyd-Warshall: at a fixed k, (i, j) reads path[i][k] and path[k][j], which (i, k) and
   (k, j) write, so isl finds no parallel loop inside k. Each k step runs as one 2-D launch
   that reads a snapshot and checks that the pivot row and column keep their values; with
   a negative diagonal entry they change, and that step reruns in order. */
#include <stdio.h>

#define N 120

static int path[N][N];

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

/* Region of floyd() at line 13: scheduled by isl. */
__global__ void floyd_kernel(int (*path)[N], int n, long long h0, long long lo_j, long long trips_j, long long lo_i, long long trips_i, int (*path_before)[N], int *changed)
{
    for (long long t_i = blockIdx.y * (long long)blockDim.y + threadIdx.y; t_i < trips_i; t_i += (long long)blockDim.y * gridDim.y) {
        const int i = (int)(lo_i + t_i);
        for (long long t_j = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_j < trips_j; t_j += (long long)blockDim.x * gridDim.x) {
            const int j = (int)(lo_j + t_j);
            path[i][j] = path_before[i][j] < path_before[i][(h0)] + path_before[(h0)][j] ? path_before[i][j]
                                                                  : path_before[i][(h0)] + path_before[(h0)][j];
            if (((((j)) == ((h0))) || (((i)) == ((h0))))) {
                const unsigned char *cudaify_now = (const unsigned char *)&(path[i][j]);
                const unsigned char *cudaify_then = (const unsigned char *)&(path_before[i][j]);
                for (size_t cudaify_byte = 0; cudaify_byte < sizeof(path[i][j]); cudaify_byte++)
                    if (cudaify_now[cudaify_byte] != cudaify_then[cudaify_byte]) {
                        *changed = 1;
                        break;
                    }
            }
        }
    }
}

/* Region of floyd() at line 13: scheduled by isl. */
__global__ void floyd_kernel_2(int (*path)[N], int n, long long h0_2)
{
    for (int i = 0; (i < n); i += 1) {
        for (int j = 0; (j < n); j += 1) {
            path[i][j] = path[i][j] < path[i][(h0_2)] + path[(h0_2)][j] ? path[i][j]
                                                                  : path[i][(h0_2)] + path[(h0_2)][j];
        }
    }
}

static void floyd(int n, int path[N][N])
{
    {
        /* cudaify: this region runs on the GPU (floyd: region at line 13 -> 2 kernel(s), grids 2-D, serial, 1 host loop level(s), k: host loop around a 2-D launch, speculative (reads across its instances checked at run time; a step that changes what they read reruns in order)) */
        int *d_path = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_path, (size_t)(14400) * sizeof(int)));
        CUDAIFY_CHECK(cudaMemcpy(d_path, path, (size_t)(14400) * sizeof(int), cudaMemcpyHostToDevice));
        int *d_path_before = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_path_before, (size_t)(14400) * sizeof(int)));
        int *d_changed = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_changed, sizeof(int)));
        for (long long c0 = 0; (c0 < n); c0 += 1) {
            {
                const long long h0 = c0;
                CUDAIFY_CHECK(cudaMemcpy(d_path_before, d_path, (size_t)(14400) * sizeof(int), cudaMemcpyDeviceToDevice));
                CUDAIFY_CHECK(cudaMemset(d_changed, 0, sizeof(int)));
                const long long lo_j = 0;
                const long long trips_j = ((n - 1)) - lo_j + 1;
                const long long lo_i = 0;
                const long long trips_i = ((n - 1)) - lo_i + 1;
                if (trips_j > 0 && trips_i > 0) {
                    floyd_kernel<<<dim3(cudaify_blocks(cudaify_rows(trips_j, 1), 32, 2147483647u), cudaify_blocks(cudaify_rows(trips_i, trips_j), 8, 65535u)), dim3(32, 8)>>>((int (*)[N])(d_path), n, h0, lo_j, trips_j, lo_i, trips_i, (int (*)[N])(d_path_before), d_changed);
                    CUDAIFY_CHECK(cudaGetLastError());
                }
                int changed_2 = 0;
                CUDAIFY_CHECK(cudaMemcpy(&changed_2, d_changed, sizeof(int), cudaMemcpyDeviceToHost));
                if (changed_2) {
                    CUDAIFY_CHECK(cudaMemcpy(d_path, d_path_before, (size_t)(14400) * sizeof(int), cudaMemcpyDeviceToDevice));
                    const long long h0_2 = h0;
                    floyd_kernel_2<<<1, 1>>>((int (*)[N])(d_path), n, h0_2);
                    CUDAIFY_CHECK(cudaGetLastError());
                }
            }
        }
        CUDAIFY_CHECK(cudaMemcpy(path, d_path, (size_t)(14400) * sizeof(int), cudaMemcpyDeviceToHost));
        CUDAIFY_CHECK(cudaify_free(d_path));
        CUDAIFY_CHECK(cudaify_free(d_path_before));
        CUDAIFY_CHECK(cudaify_free(d_changed));
    }
}

/* Region of fill() at line 22: scheduled by isl. */
__global__ void fill_kernel(int (*path)[N], long long lo_j_2, long long trips_j_2, long long lo_i_2, long long trips_i_2)
{
    for (long long t_i_2 = blockIdx.y * (long long)blockDim.y + threadIdx.y; t_i_2 < trips_i_2; t_i_2 += (long long)blockDim.y * gridDim.y) {
        const int i = (int)(lo_i_2 + t_i_2);
        for (long long t_j_2 = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_j_2 < trips_j_2; t_j_2 += (long long)blockDim.x * gridDim.x) {
            const int j = (int)(lo_j_2 + t_j_2);
            path[i][j] = i == j ? 0 : (i * 7 + j * 13) % 23 + 1;
        }
    }
}

static void fill(int negative)
{
    {
        /* cudaify: this region runs on the GPU (fill: region at line 22 -> 1 kernel(s), grids 2-D) */
        int *d_path_2 = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_path_2, (size_t)(14400) * sizeof(int)));
        {
            const long long lo_j_2 = 0;
            const long long trips_j_2 = (119) - lo_j_2 + 1;
            const long long lo_i_2 = 0;
            const long long trips_i_2 = (119) - lo_i_2 + 1;
            if (trips_j_2 > 0 && trips_i_2 > 0) {
                fill_kernel<<<dim3(cudaify_blocks(cudaify_rows(trips_j_2, 1), 32, 2147483647u), cudaify_blocks(cudaify_rows(trips_i_2, trips_j_2), 8, 65535u)), dim3(32, 8)>>>((int (*)[N])(d_path_2), lo_j_2, trips_j_2, lo_i_2, trips_i_2);
                CUDAIFY_CHECK(cudaGetLastError());
            }
        }
        CUDAIFY_CHECK(cudaMemcpy(path, d_path_2, (size_t)(14400) * sizeof(int), cudaMemcpyDeviceToHost));
        CUDAIFY_CHECK(cudaify_free(d_path_2));
    }
    if (negative)
        path[N - 1][N - 1] = -1; /* a negative cycle the last step finds: no overflow */
}

/* Region of print() at line 32: scheduled by isl. */
__global__ void print_kernel(int (*path)[N], long *d_sum, long long lo_i_3, long long trips_i_3)
{
    unsigned long long partial = (unsigned long long)0;
    bool added = false;
    for (long long t_i_3 = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_i_3 < trips_i_3; t_i_3 += (long long)blockDim.x * gridDim.x) {
        const int i = (int)(lo_i_3 + t_i_3);
        for (int j = 0; (j <= 119); j += 1) {
            partial += (unsigned long long)(((long)path[i][j] * (1 + (i + 2 * j) % 5))); added = true;
        }
    }
    {
        const unsigned partial_active = __activemask();
        if (partial_active == 0xffffffffu) {
            const unsigned partial_adders = __ballot_sync(partial_active, added);
            if (partial_adders != 0u) {
                for (int offset = 16; offset > 0; offset /= 2)
                    partial += __shfl_xor_sync(partial_active, partial, offset);
                if (((threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) & 31u) == (unsigned)(__ffs((int)partial_adders) - 1)) {
                    atomicAdd((unsigned long long *)&((*d_sum)), partial);
                }
            }
        } else if (added) {
            atomicAdd((unsigned long long *)&((*d_sum)), partial);
        }
    }
}

static void print(const char *what)
{
    long sum = 0;
    {
        /* cudaify: this region runs on the GPU (print: region at line 32 -> 1 kernel(s), grids 1-D) */
        int *d_path_3 = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_path_3, (size_t)(14400) * sizeof(int)));
        CUDAIFY_CHECK(cudaMemcpy(d_path_3, path, (size_t)(14400) * sizeof(int), cudaMemcpyHostToDevice));
        long *d_sum = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_sum, sizeof(long)));
        CUDAIFY_CHECK(cudaMemcpy(d_sum, &sum, sizeof(long), cudaMemcpyHostToDevice));
        {
            const long long lo_i_3 = 0;
            const long long trips_i_3 = (119) - lo_i_3 + 1;
            if (trips_i_3 > 0) {
                print_kernel<<<dim3(cudaify_blocks(trips_i_3, 256, 1024u)), dim3(256)>>>((int (*)[N])(d_path_3), d_sum, lo_i_3, trips_i_3);
                CUDAIFY_CHECK(cudaGetLastError());
            }
        }
        CUDAIFY_CHECK(cudaMemcpy(&sum, d_sum, sizeof(long), cudaMemcpyDeviceToHost));
        CUDAIFY_CHECK(cudaify_free(d_path_3));
        CUDAIFY_CHECK(cudaify_free(d_sum));
    }
    printf("%s: sum=%ld first=%d last=%d\n", what, sum, path[0][N - 1], path[N - 1][0]);
}

int main(void)
{
    fill(0);
    floyd(N, path);
    print("shortest paths");
    fill(1);
    floyd(N, path);
    print("with a negative cycle");
    return 0;
}
