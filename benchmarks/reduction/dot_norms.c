/*
 * Name: dot_norms
 * Category: reduction
 * Computes: the L1, L2 and max norms of two positive float vectors and their dot product
 *           at every lag 0..NLAGS-1 (a cross-correlation); prints the norms, the summed
 *           lagged dot products and the largest one.
 * Pattern: reduction (sum, sum of squares, max; double accumulators over float data)
 * CPU time: 0.76 s (gcc -O3, one core; user time, median of 3 runs, 2026-11-22)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef BENCH_SMALL
#define N 20000
#define NLAGS 4
#else
#define N (1 << 22)
#define NLAGS 160
#endif

static unsigned int lcg_next(unsigned int *state) {
    *state = *state * 1664525u + 1013904223u;
    return *state;
}

static float lcg_float(unsigned int *state) {
    return (float)(lcg_next(state) >> 8) * (1.0f / 16777216.0f);
}

static void fill_uniform(float *x, int n, float lo, float hi, unsigned int seed) {
    unsigned int state = seed;
    for (int i = 0; i < n; i++)
        x[i] = lo + (hi - lo) * lcg_float(&state);
}

double dot(int n, const float *x, const float *y) {
    double s = 0.0;
    for (int i = 0; i < n; i++)
        s += (double)x[i] * (double)y[i];
    return s;
}

double norm1(int n, const float *x) {
    double s = 0.0;
    for (int i = 0; i < n; i++)
        s += fabs((double)x[i]);
    return s;
}

double norm2(int n, const float *x) {
    double s = 0.0;
    for (int i = 0; i < n; i++)
        s += (double)x[i] * (double)x[i];
    return sqrt(s);
}

float norm_max(int n, const float *x) {
    float m = 0.0f;
    for (int i = 0; i < n; i++)
        if (fabsf(x[i]) > m)
            m = fabsf(x[i]);
    return m;
}

int main(void) {
    float *x = (float *)malloc(sizeof(float) * N);
    float *y = (float *)malloc(sizeof(float) * N);
    if (!x || !y) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    fill_uniform(x, N, 0.0f, 1.0f, 3u);
    fill_uniform(y, N, 0.5f, 1.5f, 5u);
    printf("x: l1=%.6e l2=%.6e max=%.6e\n", norm1(N, x), norm2(N, x), (double)norm_max(N, x));
    printf("y: l1=%.6e l2=%.6e max=%.6e\n", norm1(N, y), norm2(N, y), (double)norm_max(N, y));
    double total = 0.0, best = 0.0;
    for (int lag = 0; lag < NLAGS; lag++) {
        double d = dot(N - lag, x, y + lag);
        total += d;
        if (d > best)
            best = d;
    }
    printf("lagged dots: sum=%.6e max=%.6e\n", total, best);
    free(x);
    free(y);
    return 0;
}
