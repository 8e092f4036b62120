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

/* Loop nest 'i, j' of dgemm() (line 9): one thread per iteration. */
__global__ void dgemm_kernel(double *c, double *a, double *b, int nj, double beta, int nk, double alpha, long long trips_i, long long trips_j)
{
    /* cudaify gemm_tiling: blocks of 16 x 16 threads own 64 x 64 outputs, each thread 4 x 4 of them in registers; 16 iterations of 'k' are staged at a time. */
    if (blockDim.x != 16 || blockDim.y != 16) __trap();
    const int thread = threadIdx.y * 16 + threadIdx.x;
    alignas(16) __shared__ double tile_a[16][66];
    alignas(16) __shared__ double tile_b[16][66];
    for (long long tile_row = blockIdx.y * 64LL; tile_row < trips_i; tile_row += 64LL * gridDim.y) {
        for (long long tile_col = blockIdx.x * 64LL; tile_col < trips_j; tile_col += 64LL * gridDim.x) {
            double acc_c[4][4];
            const long long span_k = (long long)(nk) - (long long)(0);
            const long long trips_k = span_k > 0 ? span_k : 0;
            #pragma unroll
            for (int out_r = 0; out_r < 4; out_r++) {
                #pragma unroll
                for (int out_c = 0; out_c < 4; out_c++) {
                    const long long t_i = tile_row + (out_r / 2) * 32 + threadIdx.y * 2 + out_r % 2;
                    const long long t_j = tile_col + (out_c / 2) * 32 + threadIdx.x * 2 + out_c % 2;
                    const bool active = t_i < trips_i && t_j < trips_j;
                    int i = (int)t_i;
                    int j = (int)t_j;
                    acc_c[out_r][out_c] = {};
                    if (active) {
                        c[i * nj + j] *= beta;
                        if (trips_k > 0) {
                            acc_c[out_r][out_c] = c[i * nj + j];
                        }
                    }
                }
            }
            double staged_a[2][2];
            double staged_b[2][2];
            long long next_k = 0;
            #pragma unroll
            for (int part = 0; part < 2; part++) {
                const int group = thread + part * 256;
                const int slot_outer = group / 8;
                const int slot_inner = (group % 8) * 2;
                bool loaded = false;
                {
                    const long long t_i = tile_row + slot_outer;
                    const long long t_k = next_k + slot_inner;
                    if (tile_row + slot_outer < trips_i && next_k + slot_inner + 1 < trips_k) {
                        int i = (int)t_i;
                        int k = (int)((0) + t_k);
                        const double *address = &(a[i * nk + k]);
                        if (((unsigned long long)address & 15ull) == 0) {
                            const double2 packed = *reinterpret_cast<const double2 *>(address);
                            staged_a[part][0] = packed.x;
                            staged_a[part][1] = packed.y;
                            loaded = true;
                        }
                    }
                }
                if (__builtin_expect(!loaded, 0)) {
                    {
                        const long long t_i = tile_row + slot_outer;
                        const long long t_k = next_k + slot_inner;
                        if (t_i < trips_i && t_k < trips_k) {
                            int i = (int)t_i;
                            int k = (int)((0) + t_k);
                            staged_a[part][0] = a[i * nk + k];
                        } else {
                            staged_a[part][0] = {};
                        }
                    }
                    {
                        const long long t_i = tile_row + slot_outer;
                        const long long t_k = next_k + slot_inner + 1;
                        if (t_i < trips_i && t_k < trips_k) {
                            int i = (int)t_i;
                            int k = (int)((0) + t_k);
                            staged_a[part][1] = a[i * nk + k];
                        } else {
                            staged_a[part][1] = {};
                        }
                    }
                }
            }
            #pragma unroll
            for (int part = 0; part < 2; part++) {
                const int group = thread + part * 256;
                const int slot_outer = group / 8;
                const int slot_inner = (group % 8) * 2;
                bool loaded = false;
                {
                    const long long t_j = tile_col + slot_outer;
                    const long long t_k = next_k + slot_inner;
                    if (tile_col + slot_outer < trips_j && next_k + slot_inner + 1 < trips_k) {
                        int j = (int)t_j;
                        int k = (int)((0) + t_k);
                        const double *address = &(b[j * nk + k]);
                        if (((unsigned long long)address & 15ull) == 0) {
                            const double2 packed = *reinterpret_cast<const double2 *>(address);
                            staged_b[part][0] = packed.x;
                            staged_b[part][1] = packed.y;
                            loaded = true;
                        }
                    }
                }
                if (__builtin_expect(!loaded, 0)) {
                    {
                        const long long t_j = tile_col + slot_outer;
                        const long long t_k = next_k + slot_inner;
                        if (t_j < trips_j && t_k < trips_k) {
                            int j = (int)t_j;
                            int k = (int)((0) + t_k);
                            staged_b[part][0] = b[j * nk + k];
                        } else {
                            staged_b[part][0] = {};
                        }
                    }
                    {
                        const long long t_j = tile_col + slot_outer;
                        const long long t_k = next_k + slot_inner + 1;
                        if (t_j < trips_j && t_k < trips_k) {
                            int j = (int)t_j;
                            int k = (int)((0) + t_k);
                            staged_b[part][1] = b[j * nk + k];
                        } else {
                            staged_b[part][1] = {};
                        }
                    }
                }
            }
            for (long long tile_k = 0; tile_k < trips_k; tile_k += 16) {
                #pragma unroll
                for (int part = 0; part < 2; part++) {
                    const int group = thread + part * 256;
                    const int slot_outer = group / 8;
                    const int slot_inner = (group % 8) * 2;
                    tile_a[slot_inner][slot_outer] = staged_a[part][0];
                    tile_a[slot_inner + 1][slot_outer] = staged_a[part][1];
                }
                #pragma unroll
                for (int part = 0; part < 2; part++) {
                    const int group = thread + part * 256;
                    const int slot_outer = group / 8;
                    const int slot_inner = (group % 8) * 2;
                    tile_b[slot_inner][slot_outer] = staged_b[part][0];
                    tile_b[slot_inner + 1][slot_outer] = staged_b[part][1];
                }
                __syncthreads();
                next_k = tile_k + 16;
                if (next_k < trips_k) {
                    #pragma unroll
                    for (int part = 0; part < 2; part++) {
                        const int group = thread + part * 256;
                        const int slot_outer = group / 8;
                        const int slot_inner = (group % 8) * 2;
                        bool loaded = false;
                        {
                            const long long t_i = tile_row + slot_outer;
                            const long long t_k = next_k + slot_inner;
                            if (tile_row + slot_outer < trips_i && next_k + slot_inner + 1 < trips_k) {
                                int i = (int)t_i;
                                int k = (int)((0) + t_k);
                                const double *address = &(a[i * nk + k]);
                                if (((unsigned long long)address & 15ull) == 0) {
                                    const double2 packed = *reinterpret_cast<const double2 *>(address);
                                    staged_a[part][0] = packed.x;
                                    staged_a[part][1] = packed.y;
                                    loaded = true;
                                }
                            }
                        }
                        if (__builtin_expect(!loaded, 0)) {
                            {
                                const long long t_i = tile_row + slot_outer;
                                const long long t_k = next_k + slot_inner;
                                if (t_i < trips_i && t_k < trips_k) {
                                    int i = (int)t_i;
                                    int k = (int)((0) + t_k);
                                    staged_a[part][0] = a[i * nk + k];
                                } else {
                                    staged_a[part][0] = {};
                                }
                            }
                            {
                                const long long t_i = tile_row + slot_outer;
                                const long long t_k = next_k + slot_inner + 1;
                                if (t_i < trips_i && t_k < trips_k) {
                                    int i = (int)t_i;
                                    int k = (int)((0) + t_k);
                                    staged_a[part][1] = a[i * nk + k];
                                } else {
                                    staged_a[part][1] = {};
                                }
                            }
                        }
                    }
                    #pragma unroll
                    for (int part = 0; part < 2; part++) {
                        const int group = thread + part * 256;
                        const int slot_outer = group / 8;
                        const int slot_inner = (group % 8) * 2;
                        bool loaded = false;
                        {
                            const long long t_j = tile_col + slot_outer;
                            const long long t_k = next_k + slot_inner;
                            if (tile_col + slot_outer < trips_j && next_k + slot_inner + 1 < trips_k) {
                                int j = (int)t_j;
                                int k = (int)((0) + t_k);
                                const double *address = &(b[j * nk + k]);
                                if (((unsigned long long)address & 15ull) == 0) {
                                    const double2 packed = *reinterpret_cast<const double2 *>(address);
                                    staged_b[part][0] = packed.x;
                                    staged_b[part][1] = packed.y;
                                    loaded = true;
                                }
                            }
                        }
                        if (__builtin_expect(!loaded, 0)) {
                            {
                                const long long t_j = tile_col + slot_outer;
                                const long long t_k = next_k + slot_inner;
                                if (t_j < trips_j && t_k < trips_k) {
                                    int j = (int)t_j;
                                    int k = (int)((0) + t_k);
                                    staged_b[part][0] = b[j * nk + k];
                                } else {
                                    staged_b[part][0] = {};
                                }
                            }
                            {
                                const long long t_j = tile_col + slot_outer;
                                const long long t_k = next_k + slot_inner + 1;
                                if (t_j < trips_j && t_k < trips_k) {
                                    int j = (int)t_j;
                                    int k = (int)((0) + t_k);
                                    staged_b[part][1] = b[j * nk + k];
                                } else {
                                    staged_b[part][1] = {};
                                }
                            }
                        }
                    }
                }
                const int count_k = (int)(trips_k - tile_k < 16 ? trips_k - tile_k : 16);
                if (count_k == 16) {
                    #pragma unroll
                    for (int kk_k = 0; kk_k < 16; kk_k++) {
                        double frag_a[4];
                        #pragma unroll
                        for (int half = 0; half < 2; half++) {
                            const double2 packed = *reinterpret_cast<const double2 *>(&tile_a[kk_k][half * 32 + threadIdx.y * 2]);
                            frag_a[half * 2 + 0] = packed.x;
                            frag_a[half * 2 + 1] = packed.y;
                        }
                        double frag_b[4];
                        #pragma unroll
                        for (int half = 0; half < 2; half++) {
                            const double2 packed = *reinterpret_cast<const double2 *>(&tile_b[kk_k][half * 32 + threadIdx.x * 2]);
                            frag_b[half * 2 + 0] = packed.x;
                            frag_b[half * 2 + 1] = packed.y;
                        }
                        #pragma unroll
                        for (int out_r = 0; out_r < 4; out_r++) {
                            #pragma unroll
                            for (int out_c = 0; out_c < 4; out_c++) {
                                acc_c[out_r][out_c] += alpha * frag_a[out_r] * frag_b[out_c];
                            }
                        }
                    }
                } else {
                    for (int kk_k = 0; kk_k < count_k; kk_k++) {
                        double frag_a[4];
                        #pragma unroll
                        for (int half = 0; half < 2; half++) {
                            const double2 packed = *reinterpret_cast<const double2 *>(&tile_a[kk_k][half * 32 + threadIdx.y * 2]);
                            frag_a[half * 2 + 0] = packed.x;
                            frag_a[half * 2 + 1] = packed.y;
                        }
                        double frag_b[4];
                        #pragma unroll
                        for (int half = 0; half < 2; half++) {
                            const double2 packed = *reinterpret_cast<const double2 *>(&tile_b[kk_k][half * 32 + threadIdx.x * 2]);
                            frag_b[half * 2 + 0] = packed.x;
                            frag_b[half * 2 + 1] = packed.y;
                        }
                        #pragma unroll
                        for (int out_r = 0; out_r < 4; out_r++) {
                            #pragma unroll
                            for (int out_c = 0; out_c < 4; out_c++) {
                                acc_c[out_r][out_c] += alpha * frag_a[out_r] * frag_b[out_c];
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
                    const long long t_i = tile_row + (out_r / 2) * 32 + threadIdx.y * 2 + out_r % 2;
                    const long long t_j = tile_col + (out_c / 2) * 32 + threadIdx.x * 2 + out_c % 2;
                    const bool active = t_i < trips_i && t_j < trips_j;
                    int i = (int)t_i;
                    int j = (int)t_j;
                    if (active) {
                        if (trips_k > 0) {
                            c[i * nj + j] = acc_c[out_r][out_c];
                        }
                    }
                }
            }
        }
    }
}

/* C = alpha * A * B^T + beta * C in double: B is stored column-major for the product
   (b[j * nk + k]), C accumulates in memory, sizes are not multiples of any tile. */
void dgemm(int ni, int nj, int nk, double alpha, double beta, const double *a, const double *b,
           double *c)
{
    {
        /* cudaify: this loop nest runs on the GPU as dgemm_kernel */
        const long long trips_i = cudaify_trips(0, ni, 1, 0);
        const long long trips_j = cudaify_trips(0, nj, 1, 0);
        if (trips_i > 0 && trips_j > 0) {
            double *d_c = NULL;
            double *d_a = NULL;
            double *d_b = NULL;
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_c, (size_t)((long long)ni*(long long)nj) * sizeof(double)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_a, (size_t)((long long)ni*(long long)nk) * sizeof(double)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_b, (size_t)((long long)nj*(long long)nk) * sizeof(double)));
            CUDAIFY_CHECK(cudaMemcpy(d_c, c, (size_t)((long long)ni*(long long)nj) * sizeof(double), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_a, a, (size_t)((long long)ni*(long long)nk) * sizeof(double), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_b, b, (size_t)((long long)nj*(long long)nk) * sizeof(double), cudaMemcpyHostToDevice));
            const dim3 block(16, 16);
            const dim3 grid(cudaify_blocks(trips_j, 64, 2147483647u), cudaify_blocks(trips_i, 64, 65535u));
            dgemm_kernel<<<grid, block>>>(d_c, d_a, d_b, nj, beta, nk, alpha, trips_i, trips_j);
            CUDAIFY_CHECK(cudaGetLastError());
            CUDAIFY_CHECK(cudaMemcpy(c, d_c, (size_t)((long long)ni*(long long)nj) * sizeof(double), cudaMemcpyDeviceToHost));
            CUDAIFY_CHECK(cudaify_free(d_c));
            CUDAIFY_CHECK(cudaify_free(d_a));
            CUDAIFY_CHECK(cudaify_free(d_b));
        }
    }
}

int main(void)
{
    int ni = 70, nj = 45, nk = 37;
    double *a = (double *)malloc(sizeof(double) * ni * nk);
    double *b = (double *)malloc(sizeof(double) * nj * nk);
    double *c = (double *)malloc(sizeof(double) * ni * nj);
    for (int i = 0; i < ni * nk; i++)
        a[i] = (double)((i * 7) % 13) / 13.0;
    for (int i = 0; i < nj * nk; i++)
        b[i] = (double)((i * 5) % 11) / 11.0 - 0.5;
    for (int i = 0; i < ni * nj; i++)
        c[i] = (double)(i % 17) / 17.0;
    dgemm(ni, nj, nk, 1.5, 1.2, a, b, c);
    double sum = 0.0, weighted = 0.0;
    for (int i = 0; i < ni * nj; i++) {
        sum += c[i];
        weighted += c[i] * (i % 7);
    }
    printf("sum=%.10e weighted=%.10e c[0]=%.10f c[last]=%.10f\n", sum, weighted, c[0],
           c[ni * nj - 1]);
    free(a);
    free(b);
    free(c);
    return 0;
}
