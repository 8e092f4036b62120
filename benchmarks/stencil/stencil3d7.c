/*
 * Name: stencil3d7
 * Category: stencil
 * Computes: a 7-point 3-D diffusion stencil on a cube with a warm interior block, for a
 *           number of time steps (two buffers); prints the total and the center value.
 * Pattern: parallel loop nest (3-D) inside a sequential time loop
 * CPU time: 0.73 s (gcc -O3, one core; user time, median of 3 runs, 2026-11-22)
 */
#include <stdio.h>
#include <stdlib.h>

#ifdef BENCH_SMALL
#define N 24
#define STEPS 4
#else
#define N 256
#define STEPS 40
#endif

static void init_cube(float *u, int n) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            for (int k = 0; k < n; k++) {
                int warm = i > n / 4 && i < 3 * n / 4 && j > n / 4 && j < 3 * n / 4 && k > n / 4 &&
                           k < 3 * n / 4;
                u[((size_t)i * n + j) * n + k] = warm ? 10.0f : 1.0f;
            }
}

void diffuse3d(int n, float c0, float c1, const float *in, float *out) {
    for (int i = 1; i < n - 1; i++)
        for (int j = 1; j < n - 1; j++)
            for (int k = 1; k < n - 1; k++) {
                size_t at = ((size_t)i * n + j) * n + k;
                out[at] = c0 * in[at] + c1 * (in[at - 1] + in[at + 1] + in[at - n] + in[at + n] +
                                               in[at - (size_t)n * n] + in[at + (size_t)n * n]);
            }
}

static double cube_sum(const float *u, int n) {
    double s = 0.0;
    for (size_t i = 0; i < (size_t)n * n * n; i++)
        s += u[i];
    return s;
}

int main(void) {
    size_t cells = (size_t)N * N * N;
    float *a = (float *)malloc(sizeof(float) * cells);
    float *b = (float *)malloc(sizeof(float) * cells);
    if (!a || !b) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    init_cube(a, N);
    init_cube(b, N);
    for (int t = 0; t < STEPS; t++) {
        diffuse3d(N, 0.4f, 0.1f, a, b);
        float *swap = a;
        a = b;
        b = swap;
    }
    printf("sum=%.6e\n", cube_sum(a, N));
    printf("center=%.6e corner=%.6e\n", (double)a[((size_t)N / 2 * N + N / 2) * N + N / 2],
           (double)a[((size_t)N / 4 * N + N / 4) * N + N / 4]);
    free(a);
    free(b);
    return 0;
}
