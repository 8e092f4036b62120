/* Statistics in one pass: a sum, a float maximum (if form), a double minimum (fmin) and an
   int maximum (conditional form) over one array. Each keeps one scalar that every thread
   updates: per-thread registers, warp shuffles, one atomic per warp. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define N 20000

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

/* Region of stats() at line 16: scheduled by isl. */
__global__ void stats_kernel(float *x, double *d_s, int n, long long lo_i, long long trips_i)
{
    double partial = (double)0;
    bool added = false;
    for (long long t_i = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_i < trips_i; t_i += (long long)blockDim.x * gridDim.x) {
        const int i = (int)(lo_i + t_i);
        partial += (double)((x[i])); added = true;
    }
    {
        const unsigned partial_active = __activemask();
        if (partial_active == 0xffffffffu) {
            const unsigned partial_adders = __ballot_sync(partial_active, added);
            if (partial_adders != 0u) {
                for (int offset = 16; offset > 0; offset /= 2)
                    partial += __shfl_xor_sync(partial_active, partial, offset);
                if (((threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) & 31u) == (unsigned)(__ffs((int)partial_adders) - 1)) {
                    atomicAdd((double *)&((*d_s)), partial);
                }
            }
        } else if (added) {
            atomicAdd((double *)&((*d_s)), partial);
        }
    }
}

/* Region of stats() at line 16: scheduled by isl. */
__global__ void stats_kernel_2(float *x, double *d_m, int n, long long lo_i_2, long long trips_i_2)
{
    double partial_2 = (double)0;
    bool added_2 = false;
    for (long long t_i_2 = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_i_2 < trips_i_2; t_i_2 += (long long)blockDim.x * gridDim.x) {
        const int i = (int)(lo_i_2 + t_i_2);
        { const double partial_2_value = (double)((double)x[i] * 0.5);
          if (added_2 ? partial_2_value < partial_2 : partial_2_value == partial_2_value) { partial_2 = partial_2_value; added_2 = true; } }
    }
    {
        const unsigned partial_2_active = __activemask();
        if (partial_2_active == 0xffffffffu) {
            const unsigned partial_2_adders = __ballot_sync(partial_2_active, added_2);
            if (partial_2_adders != 0u) {
                for (int offset = 16; offset > 0; offset /= 2) {
                    const double partial_2_other = __shfl_xor_sync(partial_2_active, partial_2, offset);
                    const int partial_2_theirs = __shfl_xor_sync(partial_2_active, (int)added_2, offset);
                    if (partial_2_theirs && (!added_2 || partial_2_other < partial_2))
                        partial_2 = partial_2_other;
                    added_2 = added_2 || partial_2_theirs;
                }
                if (((threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) & 31u) == (unsigned)(__ffs((int)partial_2_adders) - 1)) {
                    { double *partial_2_at = (double *)&((*d_m));
                      const double partial_2_wanted = partial_2;
                      double partial_2_seen = *partial_2_at;
                      while (partial_2_wanted < partial_2_seen) {
                        const unsigned long long partial_2_old = atomicCAS((unsigned long long *)partial_2_at, (unsigned long long)__double_as_longlong(partial_2_seen), (unsigned long long)__double_as_longlong(partial_2_wanted));
                        if (partial_2_old == (unsigned long long)__double_as_longlong(partial_2_seen)) break;
                        partial_2_seen = __longlong_as_double((long long)partial_2_old);
                      } }
                }
            }
        } else if (added_2) {
            { double *partial_2_at = (double *)&((*d_m));
              const double partial_2_wanted = partial_2;
              double partial_2_seen = *partial_2_at;
              while (partial_2_wanted < partial_2_seen) {
                const unsigned long long partial_2_old = atomicCAS((unsigned long long *)partial_2_at, (unsigned long long)__double_as_longlong(partial_2_seen), (unsigned long long)__double_as_longlong(partial_2_wanted));
                if (partial_2_old == (unsigned long long)__double_as_longlong(partial_2_seen)) break;
                partial_2_seen = __longlong_as_double((long long)partial_2_old);
              } }
        }
    }
}

/* Region of stats() at line 16: scheduled by isl. */
__global__ void stats_kernel_3(float *x, float *d_p, int n, long long lo_i_3, long long trips_i_3)
{
    float partial_3 = (float)0;
    bool added_3 = false;
    for (long long t_i_3 = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_i_3 < trips_i_3; t_i_3 += (long long)blockDim.x * gridDim.x) {
        const int i = (int)(lo_i_3 + t_i_3);
        { const float partial_3_value = (float)(x[i]);
          if (added_3 ? partial_3_value > partial_3 : partial_3_value == partial_3_value) { partial_3 = partial_3_value; added_3 = true; } }
    }
    {
        const unsigned partial_3_active = __activemask();
        if (partial_3_active == 0xffffffffu) {
            const unsigned partial_3_adders = __ballot_sync(partial_3_active, added_3);
            if (partial_3_adders != 0u) {
                for (int offset = 16; offset > 0; offset /= 2) {
                    const float partial_3_other = __shfl_xor_sync(partial_3_active, partial_3, offset);
                    const int partial_3_theirs = __shfl_xor_sync(partial_3_active, (int)added_3, offset);
                    if (partial_3_theirs && (!added_3 || partial_3_other > partial_3))
                        partial_3 = partial_3_other;
                    added_3 = added_3 || partial_3_theirs;
                }
                if (((threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) & 31u) == (unsigned)(__ffs((int)partial_3_adders) - 1)) {
                    { float *partial_3_at = (float *)&((*d_p));
                      const float partial_3_wanted = partial_3;
                      float partial_3_seen = *partial_3_at;
                      while (partial_3_wanted > partial_3_seen) {
                        const unsigned int partial_3_old = atomicCAS((unsigned int *)partial_3_at, __float_as_uint(partial_3_seen), __float_as_uint(partial_3_wanted));
                        if (partial_3_old == __float_as_uint(partial_3_seen)) break;
                        partial_3_seen = __uint_as_float(partial_3_old);
                      } }
                }
            }
        } else if (added_3) {
            { float *partial_3_at = (float *)&((*d_p));
              const float partial_3_wanted = partial_3;
              float partial_3_seen = *partial_3_at;
              while (partial_3_wanted > partial_3_seen) {
                const unsigned int partial_3_old = atomicCAS((unsigned int *)partial_3_at, __float_as_uint(partial_3_seen), __float_as_uint(partial_3_wanted));
                if (partial_3_old == __float_as_uint(partial_3_seen)) break;
                partial_3_seen = __uint_as_float(partial_3_old);
              } }
        }
    }
}

/* Region of stats() at line 16: scheduled by isl. */
__global__ void stats_kernel_4(float *x, int *d_w, int n, long long lo_i_4, long long trips_i_4)
{
    int partial_4 = (int)0;
    bool added_4 = false;
    for (long long t_i_4 = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_i_4 < trips_i_4; t_i_4 += (long long)blockDim.x * gridDim.x) {
        const int i = (int)(lo_i_4 + t_i_4);
        { const int partial_4_value = (int)((i % 977));
          if (added_4 ? partial_4_value > partial_4 : partial_4_value == partial_4_value) { partial_4 = partial_4_value; added_4 = true; } }
    }
    {
        const unsigned partial_4_active = __activemask();
        if (partial_4_active == 0xffffffffu) {
            const unsigned partial_4_adders = __ballot_sync(partial_4_active, added_4);
            if (partial_4_adders != 0u) {
                for (int offset = 16; offset > 0; offset /= 2) {
                    const int partial_4_other = __shfl_xor_sync(partial_4_active, partial_4, offset);
                    const int partial_4_theirs = __shfl_xor_sync(partial_4_active, (int)added_4, offset);
                    if (partial_4_theirs && (!added_4 || partial_4_other > partial_4))
                        partial_4 = partial_4_other;
                    added_4 = added_4 || partial_4_theirs;
                }
                if (((threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) & 31u) == (unsigned)(__ffs((int)partial_4_adders) - 1)) {
                    atomicMax((int *)&((*d_w)), partial_4);
                }
            }
        } else if (added_4) {
            atomicMax((int *)&((*d_w)), partial_4);
        }
    }
}

static void stats(const float *x, int n, double *total, float *peak, double *low, int *widest)
{
    double s = 0.0;
    float p = -1.0f;
    double m = 1e300;
    int w = 0;
    {
        /* cudaify: this region runs on the GPU (stats: region at line 16 -> 4 kernel(s), grids 1-D, 1-D, 1-D, 1-D) */
        float *d_x = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_x, (size_t)(n) * sizeof(float)));
        CUDAIFY_CHECK(cudaMemcpy(d_x, x, (size_t)(n) * sizeof(float), cudaMemcpyHostToDevice));
        double *d_m = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_m, sizeof(double)));
        CUDAIFY_CHECK(cudaMemcpy(d_m, &m, sizeof(double), cudaMemcpyHostToDevice));
        float *d_p = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_p, sizeof(float)));
        CUDAIFY_CHECK(cudaMemcpy(d_p, &p, sizeof(float), cudaMemcpyHostToDevice));
        double *d_s = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_s, sizeof(double)));
        CUDAIFY_CHECK(cudaMemcpy(d_s, &s, sizeof(double), cudaMemcpyHostToDevice));
        int *d_w = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_w, sizeof(int)));
        CUDAIFY_CHECK(cudaMemcpy(d_w, &w, sizeof(int), cudaMemcpyHostToDevice));
        {
            const long long lo_i = 0;
            const long long trips_i = ((n - 1)) - lo_i + 1;
            if (trips_i > 0) {
                stats_kernel<<<dim3(cudaify_blocks(trips_i, 256, 1024u)), dim3(256)>>>(d_x, d_s, n, lo_i, trips_i);
                CUDAIFY_CHECK(cudaGetLastError());
            }
        }
        {
            const long long lo_i_2 = 0;
            const long long trips_i_2 = ((n - 1)) - lo_i_2 + 1;
            if (trips_i_2 > 0) {
                stats_kernel_2<<<dim3(cudaify_blocks(trips_i_2, 256, 1024u)), dim3(256)>>>(d_x, d_m, n, lo_i_2, trips_i_2);
                CUDAIFY_CHECK(cudaGetLastError());
            }
        }
        {
            const long long lo_i_3 = 0;
            const long long trips_i_3 = ((n - 1)) - lo_i_3 + 1;
            if (trips_i_3 > 0) {
                stats_kernel_3<<<dim3(cudaify_blocks(trips_i_3, 256, 1024u)), dim3(256)>>>(d_x, d_p, n, lo_i_3, trips_i_3);
                CUDAIFY_CHECK(cudaGetLastError());
            }
        }
        {
            const long long lo_i_4 = 0;
            const long long trips_i_4 = ((n - 1)) - lo_i_4 + 1;
            if (trips_i_4 > 0) {
                stats_kernel_4<<<dim3(cudaify_blocks(trips_i_4, 256, 1024u)), dim3(256)>>>(d_x, d_w, n, lo_i_4, trips_i_4);
                CUDAIFY_CHECK(cudaGetLastError());
            }
        }
        CUDAIFY_CHECK(cudaMemcpy(&m, d_m, sizeof(double), cudaMemcpyDeviceToHost));
        CUDAIFY_CHECK(cudaMemcpy(&p, d_p, sizeof(float), cudaMemcpyDeviceToHost));
        CUDAIFY_CHECK(cudaMemcpy(&s, d_s, sizeof(double), cudaMemcpyDeviceToHost));
        CUDAIFY_CHECK(cudaMemcpy(&w, d_w, sizeof(int), cudaMemcpyDeviceToHost));
        CUDAIFY_CHECK(cudaify_free(d_x));
        CUDAIFY_CHECK(cudaify_free(d_m));
        CUDAIFY_CHECK(cudaify_free(d_p));
        CUDAIFY_CHECK(cudaify_free(d_s));
        CUDAIFY_CHECK(cudaify_free(d_w));
    }
    *total = s;
    *peak = p;
    *low = m;
    *widest = w;
}

/* Region of main() at line 32: scheduled by isl. */
__global__ void main_kernel(float *x, long long lo_i_5, long long trips_i_5)
{
    for (long long t_i_5 = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_i_5 < trips_i_5; t_i_5 += (long long)blockDim.x * gridDim.x) {
        const int i = (int)(lo_i_5 + t_i_5);
        x[i] = (float)((i * 7919) % 10007) * 0.01f - 20.0f;
    }
}

int main(void)
{
    float *x = (float *)malloc(sizeof(float) * N);
    {
        /* cudaify: this region runs on the GPU (main: region at line 32 -> 1 kernel(s), grids 1-D) */
        float *d_x_2 = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_x_2, (size_t)(20000) * sizeof(float)));
        {
            const long long lo_i_5 = 0;
            const long long trips_i_5 = (19999) - lo_i_5 + 1;
            if (trips_i_5 > 0) {
                main_kernel<<<dim3(cudaify_blocks(cudaify_rows(trips_i_5, 1), 256, 2147483647u)), dim3(256)>>>(d_x_2, lo_i_5, trips_i_5);
                CUDAIFY_CHECK(cudaGetLastError());
            }
        }
        CUDAIFY_CHECK(cudaMemcpy(x, d_x_2, (size_t)(20000) * sizeof(float), cudaMemcpyDeviceToHost));
        CUDAIFY_CHECK(cudaify_free(d_x_2));
    }
    double total, low;
    float peak;
    int widest;
    stats(x, N, &total, &peak, &low, &widest);
    printf("total=%.6e peak=%.6e low=%.6e widest=%d\n", total, (double)peak, low, widest);
    free(x);
    return 0;
}
