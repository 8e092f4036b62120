/* CSR sparse matrix times vector: val and col are read between row_ptr[i] and
   row_ptr[i + 1], so their extents come from a host inspector over the rows. */
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

/* Region of spmv() at line 9: scheduled by isl. */
__global__ void spmv_kernel(int *row_ptr, double *val, int *col, double *x, double *y, int n, long long lo_i, long long trips_i)
{
    for (long long t_i = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_i < trips_i; t_i += (long long)blockDim.x * gridDim.x) {
        const int i = (int)(lo_i + t_i);
        double sum;
        sum = 0.0;
        for (int k = row_ptr[i]; k < row_ptr[i + 1]; k++)
            sum += val[k] * x[col[k]];
        y[i] = sum;
    }
}

static void spmv(int n, const int *row_ptr, const int *col, const double *val,
                 const double *x, double *y)
{
    {
        /* cudaify: this region runs on the GPU (spmv: region at line 9 -> 1 kernel(s), grids 1-D) */
        long long first_val = 0, end_val = 0;
        {
            int seen_val = 0;
            for (int i = 0; i < n; i += 1) {
                const long long lo_reach = (long long)(row_ptr[i]) + 0, hi_reach = (long long)(row_ptr[i + 1]) + 0;
                if (lo_reach < hi_reach) {
                    if (!seen_val || lo_reach < first_val) first_val = lo_reach;
                    if (!seen_val || hi_reach > end_val) end_val = hi_reach;
                    seen_val = 1;
                }
            }
        }
        long long first_col = 0, end_col = 0;
        {
            int seen_col = 0;
            for (int i = 0; i < n; i += 1) {
                const long long lo_reach_2 = (long long)(row_ptr[i]) + 0, hi_reach_2 = (long long)(row_ptr[i + 1]) + 0;
                if (lo_reach_2 < hi_reach_2) {
                    if (!seen_col || lo_reach_2 < first_col) first_col = lo_reach_2;
                    if (!seen_col || hi_reach_2 > end_col) end_col = hi_reach_2;
                    seen_col = 1;
                }
            }
        }
        int *d_row_ptr = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_row_ptr, (size_t)((n + 1)) * sizeof(int)));
        CUDAIFY_CHECK(cudaMemcpy(d_row_ptr, row_ptr, (size_t)((n + 1)) * sizeof(int), cudaMemcpyHostToDevice));
        double *d_val = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_val, (size_t)(end_val - first_val) * sizeof(double)));
        CUDAIFY_CHECK(cudaMemcpy(d_val, val + (first_val), (size_t)(end_val - first_val) * sizeof(double), cudaMemcpyHostToDevice));
        int *d_col = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_col, (size_t)(end_col - first_col) * sizeof(int)));
        CUDAIFY_CHECK(cudaMemcpy(d_col, col + (first_col), (size_t)(end_col - first_col) * sizeof(int), cudaMemcpyHostToDevice));
        double *d_x = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_x, (size_t)(n) * sizeof(double)));
        CUDAIFY_CHECK(cudaMemcpy(d_x, x, (size_t)(n) * sizeof(double), cudaMemcpyHostToDevice));
        double *d_y = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_y, (size_t)(n) * sizeof(double)));
        {
            const long long lo_i = 0;
            const long long trips_i = ((n - 1)) - lo_i + 1;
            if (trips_i > 0) {
                spmv_kernel<<<dim3(cudaify_blocks(cudaify_rows(trips_i, 1), 256, 2147483647u)), dim3(256)>>>(d_row_ptr, d_val - (first_val), d_col - (first_col), d_x, d_y, n, lo_i, trips_i);
                CUDAIFY_CHECK(cudaGetLastError());
            }
        }
        CUDAIFY_CHECK(cudaMemcpy(y, d_y, (size_t)(n) * sizeof(double), cudaMemcpyDeviceToHost));
        CUDAIFY_CHECK(cudaify_free(d_row_ptr));
        CUDAIFY_CHECK(cudaify_free(d_val));
        CUDAIFY_CHECK(cudaify_free(d_col));
        CUDAIFY_CHECK(cudaify_free(d_x));
        CUDAIFY_CHECK(cudaify_free(d_y));
    }
}

/* Region of main() at line 32: scheduled by isl. */
__global__ void main_kernel(int *col, double *val, double *x, int nnz, int n, long long lo_i_2, long long trips_i_2)
{
    for (long long t_i_2 = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_i_2 < trips_i_2; t_i_2 += (long long)blockDim.x * gridDim.x) {
        const int i = (int)(lo_i_2 + t_i_2);
        x[i] = 1.0 / (i + 1);
    }
}

/* Region of main() at line 32: scheduled by isl. */
__global__ void main_kernel_2(int *col, double *val, double *x, unsigned int *d_state, int nnz, int n)
{
    for (int k = 0; (k < nnz); k += 1) {
        (*d_state) = (*d_state) * 1664525u + 1013904223u;
        col[k] = (int)((*d_state) % (unsigned)n);
        val[k] = (double)((*d_state) >> 20) / 4096.0;
    }
}

/* Region of main() at line 41: scheduled by isl. */
__global__ void main_kernel_3(double *y, double *d_total, int n, long long lo_i_3, long long trips_i_3)
{
    double partial = (double)0;
    bool added = false;
    for (long long t_i_3 = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_i_3 < trips_i_3; t_i_3 += (long long)blockDim.x * gridDim.x) {
        const int i = (int)(lo_i_3 + t_i_3);
        partial += (double)((y[i])); added = true;
    }
    {
        const unsigned partial_active = __activemask();
        if (partial_active == 0xffffffffu) {
            const unsigned partial_adders = __ballot_sync(partial_active, added);
            if (partial_adders != 0u) {
                for (int offset = 16; offset > 0; offset /= 2)
                    partial += __shfl_xor_sync(partial_active, partial, offset);
                if (((threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) & 31u) == (unsigned)(__ffs((int)partial_adders) - 1)) {
                    atomicAdd((double *)&((*d_total)), partial);
                }
            }
        } else if (added) {
            atomicAdd((double *)&((*d_total)), partial);
        }
    }
}

int main(void)
{
    int n = 3000;
    int *row_ptr = (int *)malloc((n + 1) * sizeof(int));
    int nnz = 0;
    for (int i = 0; i <= n; i++) {
        row_ptr[i] = nnz;
        nnz += 1 + i % 7;
    }
    nnz = row_ptr[n];
    int *col = (int *)malloc(nnz * sizeof(int));
    double *val = (double *)malloc(nnz * sizeof(double));
    double *x = (double *)malloc(n * sizeof(double));
    double *y = (double *)malloc(n * sizeof(double));
    unsigned int state = 7u;
    {
        /* cudaify: this region runs on the GPU (main: region at line 32 -> 2 kernel(s), grids 1-D, serial) */
        int *d_col_2 = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_col_2, (size_t)(nnz) * sizeof(int)));
        double *d_val_2 = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_val_2, (size_t)(nnz) * sizeof(double)));
        double *d_x_2 = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_x_2, (size_t)(3000) * sizeof(double)));
        unsigned int *d_state = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_state, sizeof(unsigned int)));
        CUDAIFY_CHECK(cudaMemcpy(d_state, &state, sizeof(unsigned int), cudaMemcpyHostToDevice));
        {
            const long long lo_i_2 = 0;
            const long long trips_i_2 = (2999) - lo_i_2 + 1;
            if (trips_i_2 > 0) {
                main_kernel<<<dim3(cudaify_blocks(cudaify_rows(trips_i_2, 1), 256, 2147483647u)), dim3(256)>>>(d_col_2, d_val_2, d_x_2, nnz, n, lo_i_2, trips_i_2);
                CUDAIFY_CHECK(cudaGetLastError());
            }
        }
        {
            main_kernel_2<<<1, 1>>>(d_col_2, d_val_2, d_x_2, d_state, nnz, n);
            CUDAIFY_CHECK(cudaGetLastError());
        }
        CUDAIFY_CHECK(cudaMemcpy(col, d_col_2, (size_t)(nnz) * sizeof(int), cudaMemcpyDeviceToHost));
        CUDAIFY_CHECK(cudaMemcpy(val, d_val_2, (size_t)(nnz) * sizeof(double), cudaMemcpyDeviceToHost));
        CUDAIFY_CHECK(cudaMemcpy(x, d_x_2, (size_t)(3000) * sizeof(double), cudaMemcpyDeviceToHost));
        CUDAIFY_CHECK(cudaify_free(d_col_2));
        CUDAIFY_CHECK(cudaify_free(d_val_2));
        CUDAIFY_CHECK(cudaify_free(d_x_2));
        CUDAIFY_CHECK(cudaify_free(d_state));
    }
    spmv(n, row_ptr, col, val, x, y);
    double total = 0.0;
    {
        /* cudaify: this region runs on the GPU (main: region at line 41 -> 1 kernel(s), grids 1-D) */
        double *d_y_2 = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_y_2, (size_t)(3000) * sizeof(double)));
        CUDAIFY_CHECK(cudaMemcpy(d_y_2, y, (size_t)(3000) * sizeof(double), cudaMemcpyHostToDevice));
        double *d_total = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_total, sizeof(double)));
        CUDAIFY_CHECK(cudaMemcpy(d_total, &total, sizeof(double), cudaMemcpyHostToDevice));
        {
            const long long lo_i_3 = 0;
            const long long trips_i_3 = (2999) - lo_i_3 + 1;
            if (trips_i_3 > 0) {
                main_kernel_3<<<dim3(cudaify_blocks(trips_i_3, 256, 1024u)), dim3(256)>>>(d_y_2, d_total, n, lo_i_3, trips_i_3);
                CUDAIFY_CHECK(cudaGetLastError());
            }
        }
        CUDAIFY_CHECK(cudaMemcpy(&total, d_total, sizeof(double), cudaMemcpyDeviceToHost));
        CUDAIFY_CHECK(cudaify_free(d_y_2));
        CUDAIFY_CHECK(cudaify_free(d_total));
    }
    printf("total=%.9e y0=%.9e y_last=%.9e\n", total, y[0], y[n - 1]);
    return 0;
}
