/* Loops that step by more than one: every 7th element summed, every 3rd from 1 scaled, and
   a 2-D update of every other row. A grid dimension covers only the values the loop takes
   (first + stride * t); a thread for each value in between would touch elements the loop
   never does (the sum would add all of them). */
#include <stdio.h>
#include <stdlib.h>

#define N 100000
#define ROWS 64
#define COLS 300

static double grid[ROWS][COLS];

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

/* Region of scale_every_third() at line 16: scheduled by isl. */
__global__ void scale_every_third_kernel(double *v, int n, long long lo_i, long long trips_i)
{
    for (long long t_i = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_i < trips_i; t_i += (long long)blockDim.x * gridDim.x) {
        const int i = (int)(lo_i + 3 * t_i);
        v[i] = 2.0 * v[i] + 1.0;
    }
}

void scale_every_third(int n, double *v)
{
    {
        /* cudaify: this region runs on the GPU (scale_every_third: region at line 16 -> 1 kernel(s), grids 1-D) */
        double *d_v = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_v, (size_t)((((n >= 2)) ? ((((-((n - 2) % 3)) + n) - 1)) : 0)) * sizeof(double)));
        CUDAIFY_CHECK(cudaMemcpy(d_v, v + (1), (size_t)((((n >= 2)) ? ((((-((n - 2) % 3)) + n) - 1)) : 0)) * sizeof(double), cudaMemcpyHostToDevice));
        {
            const long long lo_i = 1;
            const long long trips_i = (((n >= 2)) ? ((((((-((n - 2) % 3)) + n) - 1)) - lo_i) >= 0 ? (((((-((n - 2) % 3)) + n) - 1)) - lo_i) / 3 + 1 : 0) : 0);
            if (trips_i > 0) {
                scale_every_third_kernel<<<dim3(cudaify_blocks(cudaify_rows(trips_i, 1), 256, 2147483647u)), dim3(256)>>>(d_v - (1), n, lo_i, trips_i);
                CUDAIFY_CHECK(cudaGetLastError());
            }
        }
        CUDAIFY_CHECK(cudaMemcpy(v + (1), d_v, (size_t)((((n >= 2)) ? ((((-((n - 2) % 3)) + n) - 1)) : 0)) * sizeof(double), cudaMemcpyDeviceToHost));
        CUDAIFY_CHECK(cudaify_free(d_v));
    }
}

/* Region of main() at line 24: scheduled by isl. */
__global__ void main_kernel(long long *w, double *v, long long lo_i_2, long long trips_i_2)
{
    for (long long t_i_2 = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_i_2 < trips_i_2; t_i_2 += (long long)blockDim.x * gridDim.x) {
        const int i = (int)(lo_i_2 + t_i_2);
        w[i] = (long long)(i % 1013) * 977 - 400000;
    }
}

/* Region of main() at line 24: scheduled by isl. */
__global__ void main_kernel_2(long long *w, double *v, long long *d_probes)
{
    (*d_probes) = 0;
}

/* Region of main() at line 24: scheduled by isl. */
__global__ void main_kernel_3(long long *w, double *v, long long *d_probes, long long lo_i_3, long long trips_i_3)
{
    unsigned long long partial = (unsigned long long)0;
    bool added = false;
    for (long long t_i_3 = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_i_3 < trips_i_3; t_i_3 += (long long)blockDim.x * gridDim.x) {
        const int i = (int)(lo_i_3 + 7 * t_i_3);
        partial += (unsigned long long)((w[i])); added = true;
    }
    {
        const unsigned partial_active = __activemask();
        if (partial_active == 0xffffffffu) {
            const unsigned partial_adders = __ballot_sync(partial_active, added);
            if (partial_adders != 0u) {
                for (int offset = 16; offset > 0; offset /= 2)
                    partial += __shfl_xor_sync(partial_active, partial, offset);
                if (((threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) & 31u) == (unsigned)(__ffs((int)partial_adders) - 1)) {
                    atomicAdd((unsigned long long *)&((*d_probes)), partial);
                }
            }
        } else if (added) {
            atomicAdd((unsigned long long *)&((*d_probes)), partial);
        }
    }
}

/* Region of main() at line 24: scheduled by isl. */
__global__ void main_kernel_4(long long *w, double *v, long long lo_i_4, long long trips_i_4)
{
    for (long long t_i_4 = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_i_4 < trips_i_4; t_i_4 += (long long)blockDim.x * gridDim.x) {
        const int i = (int)(lo_i_4 + t_i_4);
        v[i] = (double)(i % 17) * 0.25;
    }
}

/* Region of main() at line 32: scheduled by isl. */
__global__ void main_kernel_5(double (*grid)[COLS], double *v, double *d_corner)
{
    (*d_corner) = 0.0;
}

/* Region of main() at line 32: scheduled by isl. */
__global__ void main_kernel_6(double (*grid)[COLS], double *v, long long lo_c, long long trips_c, long long lo_r, long long trips_r)
{
    for (long long t_r = blockIdx.y * (long long)blockDim.y + threadIdx.y; t_r < trips_r; t_r += (long long)blockDim.y * gridDim.y) {
        const int r = (int)(lo_r + t_r);
        for (long long t_c = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_c < trips_c; t_c += (long long)blockDim.x * gridDim.x) {
            const int c = (int)(lo_c + t_c);
            grid[r][c] = (double)(r * COLS + c);
            if ((((r + 1) % 2) == 0)) {
                grid[r][c] = grid[r][c] * 0.5 + (double)r;
            }
        }
    }
}

/* Region of main() at line 32: scheduled by isl. */
__global__ void main_kernel_7(double (*grid)[COLS], double *v, double *d_corner, long long lo_r_2, long long trips_r_2)
{
    double partial_2 = (double)0;
    bool added_2 = false;
    for (long long t_r_2 = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_r_2 < trips_r_2; t_r_2 += (long long)blockDim.x * gridDim.x) {
        const int r = (int)(lo_r_2 + t_r_2);
        partial_2 += (double)((grid[r][COLS - 1])); added_2 = true;
    }
    {
        const unsigned partial_2_active = __activemask();
        if (partial_2_active == 0xffffffffu) {
            const unsigned partial_2_adders = __ballot_sync(partial_2_active, added_2);
            if (partial_2_adders != 0u) {
                for (int offset = 16; offset > 0; offset /= 2)
                    partial_2 += __shfl_xor_sync(partial_2_active, partial_2, offset);
                if (((threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) & 31u) == (unsigned)(__ffs((int)partial_2_adders) - 1)) {
                    atomicAdd((double *)&((*d_corner)), partial_2);
                }
            }
        } else if (added_2) {
            atomicAdd((double *)&((*d_corner)), partial_2);
        }
    }
}

/* Region of main() at line 32: scheduled by isl. */
__global__ void main_kernel_8(double (*grid)[COLS], double *v, double *d_total)
{
    (*d_total) = 0.0;
}

/* Region of main() at line 32: scheduled by isl. */
__global__ void main_kernel_9(double (*grid)[COLS], double *v, double *d_total, long long lo_i_5, long long trips_i_5)
{
    double partial_3 = (double)0;
    bool added_3 = false;
    for (long long t_i_5 = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_i_5 < trips_i_5; t_i_5 += (long long)blockDim.x * gridDim.x) {
        const int i = (int)(lo_i_5 + t_i_5);
        partial_3 += (double)((v[i])); added_3 = true;
    }
    {
        const unsigned partial_3_active = __activemask();
        if (partial_3_active == 0xffffffffu) {
            const unsigned partial_3_adders = __ballot_sync(partial_3_active, added_3);
            if (partial_3_adders != 0u) {
                for (int offset = 16; offset > 0; offset /= 2)
                    partial_3 += __shfl_xor_sync(partial_3_active, partial_3, offset);
                if (((threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) & 31u) == (unsigned)(__ffs((int)partial_3_adders) - 1)) {
                    atomicAdd((double *)&((*d_total)), partial_3);
                }
            }
        } else if (added_3) {
            atomicAdd((double *)&((*d_total)), partial_3);
        }
    }
}

int main(void)
{
    long long *w = (long long *)malloc(N * sizeof(long long));
    double *v = (double *)malloc(N * sizeof(double));
    long long probes;
    {
        /* cudaify: this region runs on the GPU (main: region at line 24 -> 4 kernel(s), grids 1-D, serial, 1-D, 1-D) */
        long long *d_w = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_w, (size_t)(100000) * sizeof(long long)));
        CUDAIFY_CHECK(cudaMemcpy(d_w, w, (size_t)(100000) * sizeof(long long), cudaMemcpyHostToDevice));
        double *d_v_2 = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_v_2, (size_t)(100000) * sizeof(double)));
        long long *d_probes = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_probes, sizeof(long long)));
        CUDAIFY_CHECK(cudaMemcpy(d_probes, &probes, sizeof(long long), cudaMemcpyHostToDevice));
        {
            const long long lo_i_2 = 0;
            const long long trips_i_2 = (99999) - lo_i_2 + 1;
            if (trips_i_2 > 0) {
                main_kernel<<<dim3(cudaify_blocks(cudaify_rows(trips_i_2, 1), 256, 2147483647u)), dim3(256)>>>(d_w, d_v_2, lo_i_2, trips_i_2);
                CUDAIFY_CHECK(cudaGetLastError());
            }
        }
        {
            main_kernel_2<<<1, 1>>>(d_w, d_v_2, d_probes);
            CUDAIFY_CHECK(cudaGetLastError());
        }
        {
            const long long lo_i_3 = 0;
            const long long trips_i_3 = ((99995) - lo_i_3) >= 0 ? ((99995) - lo_i_3) / 7 + 1 : 0;
            if (trips_i_3 > 0) {
                main_kernel_3<<<dim3(cudaify_blocks(trips_i_3, 256, 1024u)), dim3(256)>>>(d_w, d_v_2, d_probes, lo_i_3, trips_i_3);
                CUDAIFY_CHECK(cudaGetLastError());
            }
        }
        {
            const long long lo_i_4 = 0;
            const long long trips_i_4 = (99999) - lo_i_4 + 1;
            if (trips_i_4 > 0) {
                main_kernel_4<<<dim3(cudaify_blocks(cudaify_rows(trips_i_4, 1), 256, 2147483647u)), dim3(256)>>>(d_w, d_v_2, lo_i_4, trips_i_4);
                CUDAIFY_CHECK(cudaGetLastError());
            }
        }
        CUDAIFY_CHECK(cudaMemcpy(w, d_w, (size_t)(100000) * sizeof(long long), cudaMemcpyDeviceToHost));
        CUDAIFY_CHECK(cudaMemcpy(v, d_v_2, (size_t)(100000) * sizeof(double), cudaMemcpyDeviceToHost));
        CUDAIFY_CHECK(cudaMemcpy(&probes, d_probes, sizeof(long long), cudaMemcpyDeviceToHost));
        CUDAIFY_CHECK(cudaify_free(d_w));
        CUDAIFY_CHECK(cudaify_free(d_v_2));
        CUDAIFY_CHECK(cudaify_free(d_probes));
    }
    scale_every_third(N, v);
    double total;
    double corner;
    {
        /* cudaify: this region runs on the GPU (main: region at line 32 -> 5 kernel(s), grids serial, 2-D, 1-D, serial, 1-D) */
        double *d_grid = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_grid, (size_t)(19200) * sizeof(double)));
        CUDAIFY_CHECK(cudaMemcpy(d_grid, grid, (size_t)(19200) * sizeof(double), cudaMemcpyHostToDevice));
        double *d_v_3 = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_v_3, (size_t)(100000) * sizeof(double)));
        CUDAIFY_CHECK(cudaMemcpy(d_v_3, v, (size_t)(100000) * sizeof(double), cudaMemcpyHostToDevice));
        double *d_corner = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_corner, sizeof(double)));
        CUDAIFY_CHECK(cudaMemcpy(d_corner, &corner, sizeof(double), cudaMemcpyHostToDevice));
        double *d_total = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_total, sizeof(double)));
        CUDAIFY_CHECK(cudaMemcpy(d_total, &total, sizeof(double), cudaMemcpyHostToDevice));
        {
            main_kernel_5<<<1, 1>>>((double (*)[COLS])(d_grid), d_v_3, d_corner);
            CUDAIFY_CHECK(cudaGetLastError());
        }
        {
            const long long lo_c = 0;
            const long long trips_c = (299) - lo_c + 1;
            const long long lo_r = 0;
            const long long trips_r = (63) - lo_r + 1;
            if (trips_c > 0 && trips_r > 0) {
                main_kernel_6<<<dim3(cudaify_blocks(cudaify_rows(trips_c, 1), 32, 2147483647u), cudaify_blocks(cudaify_rows(trips_r, trips_c), 8, 65535u)), dim3(32, 8)>>>((double (*)[COLS])(d_grid), d_v_3, lo_c, trips_c, lo_r, trips_r);
                CUDAIFY_CHECK(cudaGetLastError());
            }
        }
        {
            const long long lo_r_2 = 0;
            const long long trips_r_2 = (63) - lo_r_2 + 1;
            if (trips_r_2 > 0) {
                main_kernel_7<<<dim3(cudaify_blocks(trips_r_2, 256, 1024u)), dim3(256)>>>((double (*)[COLS])(d_grid), d_v_3, d_corner, lo_r_2, trips_r_2);
                CUDAIFY_CHECK(cudaGetLastError());
            }
        }
        {
            main_kernel_8<<<1, 1>>>((double (*)[COLS])(d_grid), d_v_3, d_total);
            CUDAIFY_CHECK(cudaGetLastError());
        }
        {
            const long long lo_i_5 = 0;
            const long long trips_i_5 = (99999) - lo_i_5 + 1;
            if (trips_i_5 > 0) {
                main_kernel_9<<<dim3(cudaify_blocks(trips_i_5, 256, 1024u)), dim3(256)>>>((double (*)[COLS])(d_grid), d_v_3, d_total, lo_i_5, trips_i_5);
                CUDAIFY_CHECK(cudaGetLastError());
            }
        }
        CUDAIFY_CHECK(cudaMemcpy(grid, d_grid, (size_t)(19200) * sizeof(double), cudaMemcpyDeviceToHost));
        CUDAIFY_CHECK(cudaMemcpy(&corner, d_corner, sizeof(double), cudaMemcpyDeviceToHost));
        CUDAIFY_CHECK(cudaMemcpy(&total, d_total, sizeof(double), cudaMemcpyDeviceToHost));
        CUDAIFY_CHECK(cudaify_free(d_grid));
        CUDAIFY_CHECK(cudaify_free(d_v_3));
        CUDAIFY_CHECK(cudaify_free(d_corner));
        CUDAIFY_CHECK(cudaify_free(d_total));
    }
    printf("probes=%lld total=%.9e corner=%.9e v1=%.3f v2=%.3f\n", probes, total, corner, v[1], v[2]);
    free(w);
    free(v);
    return 0;
}
