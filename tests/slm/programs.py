"""Inputs shared by the slm tests and the fixture recorder."""

SAXPY = """\
#include <stdio.h>
#include <stdlib.h>

void saxpy(int n, float a, const float *x, float *y) {
    for (int i = 0; i < n; i++)
        y[i] = a * x[i] + y[i];
}

int main(void) {
    int n = 1 << 20;
    float *x = malloc(n * sizeof(float));
    float *y = malloc(n * sizeof(float));
    for (int i = 0; i < n; i++) { x[i] = i * 0.5f; y[i] = 1.0f; }
    saxpy(n, 2.0f, x, y);
    double sum = 0;
    for (int i = 0; i < n; i++) sum += y[i];
    printf("%.3f\\n", sum);
    free(x); free(y);
    return 0;
}
"""

OFFLOAD_INSTRUCTION = (
    "Move the parallel loop into a __global__ kernel with one thread per iteration. In the "
    "original function (same signature) allocate device buffers, copy the arrays in, launch "
    "the kernel, copy the results back and free the buffers. Leave the rest unchanged."
)

CHOICES = {
    "offload": "run a parallel loop nest as a CUDA kernel, one thread per iteration",
    "shared_tiling": "stage reused tiles of global arrays in shared memory",
    "loop_unroll": "unroll inner loops to expose instruction-level parallelism",
}
