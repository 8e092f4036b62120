/*
 * Name: jacobi2d
 * Category: stencil
 * Computes: Jacobi relaxation of the 2-D Laplace equation on a square grid with a hot top
 *           edge, for a fixed number of time steps (two buffers, swapped each step);
 *           prints the sum of the field and a few probe values.
 * Pattern: parallel loop inside a sequential time loop (5-point stencil, double buffering)
 * CPU time: 0.74 s (gcc -O3, one core; user time, median of 3 runs, 2026-11-22)
 */
#include <stdio.h>
#include <stdlib.h>

#ifdef BENCH_SMALL
#define N 64
#define STEPS 20
#else
#define N 1024
#define STEPS 2000
#endif

static void init_grid(float *grid, int n) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            grid[i * n + j] = (i == 0) ? 1.0f : 0.0f;
}

void jacobi_step(int n, const float *in, float *out) {
    for (int i = 1; i < n - 1; i++)
        for (int j = 1; j < n - 1; j++)
            out[i * n + j] = 0.25f * (in[(i - 1) * n + j] + in[(i + 1) * n + j] +
                                      in[i * n + j - 1] + in[i * n + j + 1]);
}

static double grid_sum(const float *grid, int n) {
    double s = 0.0;
    for (int i = 0; i < n * n; i++)
        s += grid[i];
    return s;
}

int main(void) {
    float *a = (float *)malloc(sizeof(float) * N * N);
    float *b = (float *)malloc(sizeof(float) * N * N);
    if (!a || !b) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    init_grid(a, N);
    init_grid(b, N);
    for (int t = 0; t < STEPS; t++) {
        jacobi_step(N, a, b);
        float *swap = a;
        a = b;
        b = swap;
    }
    printf("sum=%.6e\n", grid_sum(a, N));
    printf("probes: %.6e %.6e %.6e\n", (double)a[1 * N + N / 2], (double)a[4 * N + N / 2],
           (double)a[8 * N + N / 4]);
    free(a);
    free(b);
    return 0;
}
