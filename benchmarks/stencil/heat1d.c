/*
 * Name: heat1d
 * Category: stencil
 * Computes: explicit finite-difference integration of the 1-D heat equation on a rod with
 *           a periodic pattern of hot spots and fixed cold ends, for many time steps;
 *           prints the total heat and the peak temperature.
 * Pattern: parallel loop inside a sequential time loop (3-point stencil, double buffering)
 * CPU time: 0.98 s (gcc -O3, one core; user time, median of 3 runs, 2026-11-22)
 */
#include <stdio.h>
#include <stdlib.h>

#ifdef BENCH_SMALL
#define N 4096
#define STEPS 50
#else
#define N (1 << 20)
#define STEPS 3000
#endif

static void init_rod(float *u, int n) {
    for (int i = 0; i < n; i++)
        u[i] = (i % 1000 < 50) ? 100.0f : 1.0f;
    u[0] = 0.0f;
    u[n - 1] = 0.0f;
}

void heat_step(int n, float alpha, const float *u, float *next) {
    for (int i = 1; i < n - 1; i++)
        next[i] = u[i] + alpha * (u[i - 1] - 2.0f * u[i] + u[i + 1]);
}

static void report(const float *u, int n) {
    double total = 0.0;
    float peak = 0.0f;
    for (int i = 0; i < n; i++) {
        total += u[i];
        if (u[i] > peak)
            peak = u[i];
    }
    printf("total=%.6e peak=%.6e\n", total, (double)peak);
}

int main(void) {
    float *u = (float *)malloc(sizeof(float) * N);
    float *next = (float *)malloc(sizeof(float) * N);
    if (!u || !next) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    init_rod(u, N);
    init_rod(next, N);
    for (int t = 0; t < STEPS; t++) {
        heat_step(N, 0.25f, u, next);
        float *swap = u;
        u = next;
        next = swap;
    }
    report(u, N);
    int probe = 1000 * (N / 2000) + 25; /* the middle of a hot spot near the center */
    printf("u[%d]=%.6e\n", probe, (double)u[probe]);
    free(u);
    free(next);
    return 0;
}
