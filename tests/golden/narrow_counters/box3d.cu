#include <stdio.h>
#include <stdlib.h>

/* the mean of each interior cell's six neighbours in an n^3 cube */
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

/* Region of smooth() at line 7: scheduled by isl. */
template <typename cudaify_counter_t>
static __device__ __forceinline__ void smooth_kernel_counted(float *out, float *in, int n, long long lo_k, long long trips_k, long long lo_j, long long trips_j, long long lo_i, long long trips_i)
{
    for (cudaify_counter_t t_i = blockIdx.z * (cudaify_counter_t)blockDim.z + threadIdx.z; t_i < (cudaify_counter_t)trips_i; t_i += (cudaify_counter_t)blockDim.z * gridDim.z) {
        const int i = (int)(lo_i + ((long long)t_i));
        for (cudaify_counter_t t_j = blockIdx.y * (cudaify_counter_t)blockDim.y + threadIdx.y; t_j < (cudaify_counter_t)trips_j; t_j += (cudaify_counter_t)blockDim.y * gridDim.y) {
            const int j = (int)(lo_j + ((long long)t_j));
            for (cudaify_counter_t t_k = blockIdx.x * (cudaify_counter_t)blockDim.x + threadIdx.x; t_k < (cudaify_counter_t)trips_k; t_k += (cudaify_counter_t)blockDim.x * gridDim.x) {
                const int k = (int)(lo_k + ((long long)t_k));
                size_t at;
                at = ((size_t)i * n + j) * n + k;
                out[at] = (in[at - 1] + in[at + 1] + in[at - n] + in[at + n] +
                           in[at - (size_t)n * n] + in[at + (size_t)n * n]) / 6.0f;
            }
        }
    }
}

__global__ void smooth_kernel(float *out, float *in, int n, long long lo_k, long long trips_k, long long lo_j, long long trips_j, long long lo_i, long long trips_i)
{
    if (trips_i >= 0 && trips_i <= 2147483647LL - (long long)blockDim.z * gridDim.z &&
        trips_j >= 0 && trips_j <= 2147483647LL - (long long)blockDim.y * gridDim.y &&
        trips_k >= 0 && trips_k <= 2147483647LL - (long long)blockDim.x * gridDim.x)
        smooth_kernel_counted<int>(out, in, n, lo_k, trips_k, lo_j, trips_j, lo_i, trips_i);
    else
        smooth_kernel_counted<long long>(out, in, n, lo_k, trips_k, lo_j, trips_j, lo_i, trips_i);
}

void smooth(int n, const float *in, float *out)
{
    {
        /* cudaify: this region runs on the GPU (smooth: region at line 7 -> 1 kernel(s), grids 3-D) */
        float *d_out = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_out, (size_t)(n*n*n - 2*n*n - 2*n - 2) * sizeof(float)));
        CUDAIFY_CHECK(cudaMemcpy(d_out, out + (n*n + n + 1), (size_t)(n*n*n - 2*n*n - 2*n - 2) * sizeof(float), cudaMemcpyHostToDevice));
        float *d_in = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_in, (size_t)(n*n*n - 2*n - 2) * sizeof(float)));
        CUDAIFY_CHECK(cudaMemcpy(d_in, in + (n + 1), (size_t)(n*n*n - 2*n - 2) * sizeof(float), cudaMemcpyHostToDevice));
        {
            const long long lo_k = 1;
            const long long trips_k = ((n - 2)) - lo_k + 1;
            const long long lo_j = 1;
            const long long trips_j = ((n - 2)) - lo_j + 1;
            const long long lo_i = 1;
            const long long trips_i = ((n - 2)) - lo_i + 1;
            if (trips_k > 0 && trips_j > 0 && trips_i > 0) {
                smooth_kernel<<<dim3(cudaify_blocks(cudaify_rows(trips_k, 1), 32, 2147483647u), cudaify_blocks(cudaify_rows(trips_j, trips_k), 4, 65535u), cudaify_blocks(cudaify_rows(trips_i, trips_k * trips_j), 2, 65535u)), dim3(32, 4, 2)>>>(d_out - (n*n + n + 1), d_in - (n + 1), n, lo_k, trips_k, lo_j, trips_j, lo_i, trips_i);
                CUDAIFY_CHECK(cudaGetLastError());
            }
        }
        CUDAIFY_CHECK(cudaMemcpy(out + (n*n + n + 1), d_out, (size_t)(n*n*n - 2*n*n - 2*n - 2) * sizeof(float), cudaMemcpyDeviceToHost));
        CUDAIFY_CHECK(cudaify_free(d_out));
        CUDAIFY_CHECK(cudaify_free(d_in));
    }
}

/* Region of main() at line 22: scheduled by isl. */
template <typename cudaify_counter_t>
static __device__ __forceinline__ void main_kernel_counted(float *in, size_t cells, long long lo_c, long long trips_c)
{
    for (cudaify_counter_t t_c = blockIdx.x * (cudaify_counter_t)blockDim.x + threadIdx.x; t_c < (cudaify_counter_t)trips_c; t_c += (cudaify_counter_t)blockDim.x * gridDim.x) {
        const size_t c = (size_t)(lo_c + ((long long)t_c));
        in[c] = (float)(c % 31) * 0.5f;
    }
}

__global__ void main_kernel(float *in, size_t cells, long long lo_c, long long trips_c)
{
    if (trips_c >= 0 && trips_c <= 2147483647LL - (long long)blockDim.x * gridDim.x)
        main_kernel_counted<int>(in, cells, lo_c, trips_c);
    else
        main_kernel_counted<long long>(in, cells, lo_c, trips_c);
}

/* Region of main() at line 26: scheduled by isl. */
__global__ void main_kernel_2(float *out, double *d_sum, size_t cells, long long lo_c_2, long long trips_c_2)
{
    double partial = (double)0;
    bool added = false;
    for (long long t_c_2 = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_c_2 < trips_c_2; t_c_2 += (long long)blockDim.x * gridDim.x) {
        const size_t c = (size_t)(lo_c_2 + t_c_2);
        partial += (double)((out[c])); added = true;
    }
    {
        const unsigned partial_active = __activemask();
        if (partial_active == 0xffffffffu) {
            const unsigned partial_adders = __ballot_sync(partial_active, added);
            if (partial_adders != 0u) {
                for (int offset = 16; offset > 0; offset /= 2)
                    partial += __shfl_xor_sync(partial_active, partial, offset);
                if (((threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) & 31u) == (unsigned)(__ffs((int)partial_adders) - 1)) {
                    atomicAdd((double *)&((*d_sum)), partial);
                }
            }
        } else if (added) {
            atomicAdd((double *)&((*d_sum)), partial);
        }
    }
}

int main(void)
{
    int n = 48;
    size_t cells = (size_t)n * n * n;
    float *in = (float *)malloc(cells * sizeof(float));
    float *out = (float *)calloc(cells, sizeof(float));
    {
        /* cudaify: this region runs on the GPU (main: region at line 22 -> 1 kernel(s), grids 1-D) */
        float *d_in_2 = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_in_2, (size_t)(cells) * sizeof(float)));
        {
            const long long lo_c = 0;
            const long long trips_c = ((cells - 1)) - lo_c + 1;
            if (trips_c > 0) {
                main_kernel<<<dim3(cudaify_blocks(cudaify_rows(trips_c, 1), 256, 2147483647u)), dim3(256)>>>(d_in_2, cells, lo_c, trips_c);
                CUDAIFY_CHECK(cudaGetLastError());
            }
        }
        CUDAIFY_CHECK(cudaMemcpy(in, d_in_2, (size_t)(cells) * sizeof(float), cudaMemcpyDeviceToHost));
        CUDAIFY_CHECK(cudaify_free(d_in_2));
    }
    smooth(n, in, out);
    double sum = 0.0;
    {
        /* cudaify: this region runs on the GPU (main: region at line 26 -> 1 kernel(s), grids 1-D) */
        float *d_out_2 = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_out_2, (size_t)(cells) * sizeof(float)));
        CUDAIFY_CHECK(cudaMemcpy(d_out_2, out, (size_t)(cells) * sizeof(float), cudaMemcpyHostToDevice));
        double *d_sum = NULL;
        CUDAIFY_CHECK(cudaify_malloc((void **)&d_sum, sizeof(double)));
        CUDAIFY_CHECK(cudaMemcpy(d_sum, &sum, sizeof(double), cudaMemcpyHostToDevice));
        {
            const long long lo_c_2 = 0;
            const long long trips_c_2 = ((cells - 1)) - lo_c_2 + 1;
            if (trips_c_2 > 0) {
                main_kernel_2<<<dim3(cudaify_blocks(trips_c_2, 256, 1024u)), dim3(256)>>>(d_out_2, d_sum, cells, lo_c_2, trips_c_2);
                CUDAIFY_CHECK(cudaGetLastError());
            }
        }
        CUDAIFY_CHECK(cudaMemcpy(&sum, d_sum, sizeof(double), cudaMemcpyDeviceToHost));
        CUDAIFY_CHECK(cudaify_free(d_out_2));
        CUDAIFY_CHECK(cudaify_free(d_sum));
    }
    printf("out[center]=%.4f sum=%.6e\n", out[(cells + n * n + n) / 2], sum);
    free(in);
    free(out);
    return 0;
}
