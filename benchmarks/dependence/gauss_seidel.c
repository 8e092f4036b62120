/*
 * Name: gauss_seidel
 * Category: dependence
 * Computes: lexicographic Gauss-Seidel sweeps for the 2-D Poisson equation with a constant
 *           source on a square grid (updated in place, so each point uses the new values
 *           of its north and west neighbours); prints the sum and probes of the solution.
 * Pattern: true dependence in both loop dimensions (in-place 5-point update); parallel only
 *          along anti-diagonals (wavefront)
 * CPU time: 1.21 s (gcc -O3, one core; user time, median of 3 runs, 2026-11-22)
 */
#include <stdio.h>
#include <stdlib.h>

#ifdef BENCH_SMALL
#define N 48
#define SWEEPS 10
#else
#define N 1024
#define SWEEPS 300
#endif

void gauss_seidel_sweep(int n, float h2_source, float *u) {
    for (int i = 1; i < n - 1; i++)
        for (int j = 1; j < n - 1; j++)
            u[i * n + j] = 0.25f * (u[(i - 1) * n + j] + u[(i + 1) * n + j] + u[i * n + j - 1] +
                                    u[i * n + j + 1] + h2_source);
}

int main(void) {
    float *u = (float *)malloc(sizeof(float) * N * N);
    if (!u) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    for (int i = 0; i < N * N; i++)
        u[i] = 0.0f;
    float h = 1.0f / (float)(N - 1);
    for (int s = 0; s < SWEEPS; s++)
        gauss_seidel_sweep(N, h * h * 100.0f, u);
    double total = 0.0;
    for (int i = 0; i < N * N; i++)
        total += u[i];
    printf("sum=%.6e\n", total);
    printf("probes: %.6e %.6e %.6e\n", (double)u[(N / 2) * N + N / 2], (double)u[(N / 4) * N + N / 4],
           (double)u[2 * N + 2]);
    free(u);
    return 0;
}
