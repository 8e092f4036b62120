#include <math.h>
#include <stdio.h>

#define LEN 100000

__host__ __device__ static double smooth(double v);

/* ---- cudaify runtime helpers ---- */
#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime.h>

/* Every CUDA call is checked: on failure, say where and why on stderr and exit non-zero. */
#define CUDAIFY_CHECK(call)                                                              \
    do {                                                                                 \
        cudaError_t cudaify_status_ = (call);                                            \
        if (cudaify_status_ != cudaSuccess) {                                            \
            fprintf(stderr, "%s:%d: CUDA error: %s\n", __FILE__, __LINE__,               \
                    cudaGetErrorString(cudaify_status_));                                \
            exit(EXIT_FAILURE);                                                          \
        }                                                                                \
    } while (0)

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

/* Blocks that give every iteration its own thread, capped at what the grid dimension
   holds (the kernels' grid-stride loops cover the rest). */
static inline unsigned int cudaify_blocks(long long trips, unsigned int threads,
                                          unsigned int most)
{
    long long blocks = (trips + threads - 1) / threads;
    return (unsigned int)(blocks < 1 ? 1 : (blocks > (long long)most ? most : blocks));
}

/* Loop nest 'i' of apply() (line 11): one thread per iteration. */
__global__ void apply_kernel(double *__restrict__ out, const double *__restrict__ in, long long trips_i)
{
    for (long long t_i = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_i < trips_i;
         t_i += (long long)blockDim.x * gridDim.x) {
        int i = (int)t_i;
        out[i] = smooth(in[i]) + sqrt(in[i]);
    }
}

/* out[i] = smooth(in[i]): a user function called from the loop body */
void apply(int n, const double *in, double *out)
{
    {
        /* cudaify: this loop nest runs on the GPU as apply_kernel */
        const long long trips_i = cudaify_trips(0, n, 1, 0);
        if (trips_i > 0) {
            double *d_out = NULL;
            double *d_in = NULL;
            CUDAIFY_CHECK(cudaMalloc((void **)&d_out, (size_t)(n) * sizeof(double)));
            CUDAIFY_CHECK(cudaMalloc((void **)&d_in, (size_t)(n) * sizeof(double)));
            CUDAIFY_CHECK(cudaMemcpy(d_out, out, (size_t)(n) * sizeof(double), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_in, in, (size_t)(n) * sizeof(double), cudaMemcpyHostToDevice));
            const dim3 block(256);
            const dim3 grid(cudaify_blocks(trips_i, 256, 2147483647u));
            apply_kernel<<<grid, block>>>(d_out, d_in, trips_i);
            CUDAIFY_CHECK(cudaGetLastError());
            CUDAIFY_CHECK(cudaMemcpy(out, d_out, (size_t)(n) * sizeof(double), cudaMemcpyDeviceToHost));
            CUDAIFY_CHECK(cudaFree(d_out));
            CUDAIFY_CHECK(cudaFree(d_in));
        }
    }
}

__host__ __device__ static double square(double v)
{
    return v * v;
}

__host__ __device__ static double smooth(double v)
{
    return square(v) / (1.0 + square(v));
}

int main(void)
{
    static double in[LEN], out[LEN];
    for (int i = 0; i < LEN; i++)
        in[i] = (i % 500) * 0.01;
    apply(LEN, in, out);
    double sum = 0.0;
    for (int i = 0; i < LEN; i++)
        sum += out[i];
    printf("out[1]=%.6f out[499]=%.6f sum=%.6e\n", out[1], out[499], sum);
    return 0;
}
