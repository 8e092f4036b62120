/* Gram-Schmidt-like projections: a dot product, a norm, a multiply-add update, and
   2x2 determinants whose cancellation shows any fused multiply-add in the printed digits.
   Double precision, with float, integer index arithmetic and a struct field alongside. */
#include <stdio.h>
#include <stdlib.h>

#define ROWS 512
#define COLS 256

typedef double real;

struct weight { double w; };

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

/* Loop nest 'j' of project() (line 16): one thread per iteration. */
__global__ void project_kernel(real *q, real *a, real *r, real *out, int rows, int cols, long long trips_j)
{
    for (long long t_j = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_j < trips_j;
         t_j += (long long)blockDim.x * gridDim.x) {
        int j = (int)t_j;
        real dot = 0.0;
        for (int i = 0; i < rows; i++)
            dot = __dadd_rn(dot, __dmul_rn(q[i * cols + j], a[i * cols + j]));
        r[j] = dot;
        for (int i = 0; i < rows; i++)
            out[i * cols + j] = __dsub_rn(a[i * cols + j], __dmul_rn(q[i * cols + j], dot));
    }
}

void project(int rows, int cols, const real *a, const real *q, real *r, real *out)
{
    {
        /* cudaify: this loop nest runs on the GPU as project_kernel */
        const long long trips_j = cudaify_trips(0, cols, 1, 0);
        if (trips_j > 0) {
            real *d_q = NULL;
            real *d_a = NULL;
            real *d_r = NULL;
            real *d_out = NULL;
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_q, (size_t)((long long)cols*(long long)rows) * sizeof(real)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_a, (size_t)((long long)cols*(long long)rows) * sizeof(real)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_r, (size_t)(cols) * sizeof(real)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_out, (size_t)((long long)cols*(long long)rows) * sizeof(real)));
            CUDAIFY_CHECK(cudaMemcpy(d_q, q, (size_t)((long long)cols*(long long)rows) * sizeof(real), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_a, a, (size_t)((long long)cols*(long long)rows) * sizeof(real), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_r, r, (size_t)(cols) * sizeof(real), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_out, out, (size_t)((long long)cols*(long long)rows) * sizeof(real), cudaMemcpyHostToDevice));
            const dim3 block(256);
            const dim3 grid(cudaify_blocks(cudaify_rows(trips_j, 1), 256, 2147483647u));
            project_kernel<<<grid, block>>>(d_q, d_a, d_r, d_out, rows, cols, trips_j);
            CUDAIFY_CHECK(cudaGetLastError());
            CUDAIFY_CHECK(cudaMemcpy(r, d_r, (size_t)(cols) * sizeof(real), cudaMemcpyDeviceToHost));
            CUDAIFY_CHECK(cudaMemcpy(out, d_out, (size_t)((long long)cols*(long long)rows) * sizeof(real), cudaMemcpyDeviceToHost));
            CUDAIFY_CHECK(cudaify_free(d_q));
            CUDAIFY_CHECK(cudaify_free(d_a));
            CUDAIFY_CHECK(cudaify_free(d_r));
            CUDAIFY_CHECK(cudaify_free(d_out));
        }
    }
}

/* Loop nest 'k' of determinants() (line 28): one thread per iteration. */
__global__ void determinants_kernel(double *det, double *x, double *y, float *f, int *idx, long long trips_k)
{
    for (long long t_k = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_k < trips_k;
         t_k += (long long)blockDim.x * gridDim.x) {
        int k = (int)t_k;
        det[k] = __dsub_rn(__dmul_rn(x[k], y[k + 1]), __dmul_rn(x[k + 1], y[k]));
        f[k] = __fmul_rn(f[k], 0.5f);
        f[k] = __fsub_rn(f[k], __fadd_rn(__fmul_rn((float)x[k], 2.0f), 1.0f));
        idx[k] = k * 3 + (k - 1) * 2;
    }
}

void determinants(int n, const double *x, const double *y, double *det, float *f, int *idx)
{
    {
        /* cudaify: this loop nest runs on the GPU as determinants_kernel */
        const long long trips_k = cudaify_trips(0, n, 1, 0);
        if (trips_k > 0) {
            double *d_det = NULL;
            double *d_x = NULL;
            double *d_y = NULL;
            float *d_f = NULL;
            int *d_idx = NULL;
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_det, (size_t)(n) * sizeof(double)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_x, (size_t)(((long long)n + 1)) * sizeof(double)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_y, (size_t)(((long long)n + 1)) * sizeof(double)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_f, (size_t)(n) * sizeof(float)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_idx, (size_t)(n) * sizeof(int)));
            CUDAIFY_CHECK(cudaMemcpy(d_det, det, (size_t)(n) * sizeof(double), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_x, x, (size_t)(((long long)n + 1)) * sizeof(double), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_y, y, (size_t)(((long long)n + 1)) * sizeof(double), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_f, f, (size_t)(n) * sizeof(float), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_idx, idx, (size_t)(n) * sizeof(int), cudaMemcpyHostToDevice));
            const dim3 block(256);
            const dim3 grid(cudaify_blocks(cudaify_rows(trips_k, 1), 256, 2147483647u));
            determinants_kernel<<<grid, block>>>(d_det, d_x, d_y, d_f, d_idx, trips_k);
            CUDAIFY_CHECK(cudaGetLastError());
            CUDAIFY_CHECK(cudaMemcpy(det, d_det, (size_t)(n) * sizeof(double), cudaMemcpyDeviceToHost));
            CUDAIFY_CHECK(cudaMemcpy(f, d_f, (size_t)(n) * sizeof(float), cudaMemcpyDeviceToHost));
            CUDAIFY_CHECK(cudaMemcpy(idx, d_idx, (size_t)(n) * sizeof(int), cudaMemcpyDeviceToHost));
            CUDAIFY_CHECK(cudaify_free(d_det));
            CUDAIFY_CHECK(cudaify_free(d_x));
            CUDAIFY_CHECK(cudaify_free(d_y));
            CUDAIFY_CHECK(cudaify_free(d_f));
            CUDAIFY_CHECK(cudaify_free(d_idx));
        }
    }
}

/* Loop nest 'k' of weigh() (line 38): one thread per iteration. */
__global__ void weigh_kernel(double *v, struct weight *s, long long trips_k)
{
    for (long long t_k = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_k < trips_k;
         t_k += (long long)blockDim.x * gridDim.x) {
        int k = (int)t_k;
        v[k] = __dadd_rn(__dmul_rn(s[k].w, v[k]), 1.0);
    }
}

void weigh(int n, const struct weight *s, double *v)
{
    {
        /* cudaify: this loop nest runs on the GPU as weigh_kernel */
        const long long trips_k = cudaify_trips(0, n, 1, 0);
        if (trips_k > 0) {
            double *d_v = NULL;
            struct weight *d_s = NULL;
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_v, (size_t)(n) * sizeof(double)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_s, (size_t)(n) * sizeof(struct weight)));
            CUDAIFY_CHECK(cudaMemcpy(d_v, v, (size_t)(n) * sizeof(double), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_s, s, (size_t)(n) * sizeof(struct weight), cudaMemcpyHostToDevice));
            const dim3 block(256);
            const dim3 grid(cudaify_blocks(cudaify_rows(trips_k, 1), 256, 2147483647u));
            weigh_kernel<<<grid, block>>>(d_v, d_s, trips_k);
            CUDAIFY_CHECK(cudaGetLastError());
            CUDAIFY_CHECK(cudaMemcpy(v, d_v, (size_t)(n) * sizeof(double), cudaMemcpyDeviceToHost));
            CUDAIFY_CHECK(cudaify_free(d_v));
            CUDAIFY_CHECK(cudaify_free(d_s));
        }
    }
}

int main(void)
{
    real *a = (real *)malloc(sizeof(real) * ROWS * COLS);
    real *q = (real *)malloc(sizeof(real) * ROWS * COLS);
    real *out = (real *)malloc(sizeof(real) * ROWS * COLS);
    real *r = (real *)malloc(sizeof(real) * COLS);
    double *x = (double *)malloc(sizeof(double) * (COLS + 1));
    double *y = (double *)malloc(sizeof(double) * (COLS + 1));
    double *det = (double *)malloc(sizeof(double) * COLS);
    float *f = (float *)malloc(sizeof(float) * COLS);
    int *idx = (int *)malloc(sizeof(int) * COLS);
    struct weight *s = (struct weight *)malloc(sizeof(struct weight) * COLS);
    double *v = (double *)malloc(sizeof(double) * COLS);
    for (int i = 0; i < ROWS * COLS; i++) {
        a[i] = 1.0 + (i % 97) / 7.0;
        q[i] = 1.0 / (1.0 + (i % 89));
    }
    for (int k = 0; k <= COLS; k++) {
        x[k] = 1.0 + k / 3.0;
        y[k] = 1.0 + (k + 1) / 3.0;
    }
    for (int k = 0; k < COLS; k++) {
        f[k] = k / 7.0f;
        s[k].w = 1.0 / (k + 1);
        v[k] = k / 11.0;
    }
    project(ROWS, COLS, a, q, r, out);
    determinants(COLS, x, y, det, f, idx);
    weigh(COLS, s, v);
    double rs = 0.0, os = 0.0, ds = 0.0, fs = 0.0, vs = 0.0;
    long is = 0;
    for (int j = 0; j < COLS; j++) {
        rs += r[j];
        ds += det[j];
        fs += f[j];
        vs += v[j];
        is += idx[j];
    }
    for (int i = 0; i < ROWS * COLS; i++)
        os += out[i];
    printf("r %.17g out %.17g\n", rs, os);
    printf("det %.17g det[7] %.17g f %.9g v %.17g idx %ld\n", ds, det[7], fs, vs, is);
    free(a); free(q); free(out); free(r); free(x); free(y); free(det); free(f); free(idx);
    free(s); free(v);
    return 0;
}
