/*
 * Name: syrk
 * Category: linalg
 * Computes: the lower triangle of C = alpha * A * A^T + beta * C (a symmetric rank-k
 *           update, A is N x K row-major); prints the sum of the lower triangle, the
 *           trace and a few row sums.
 * Pattern: parallel triangular loop nest (j <= i) with an inner dot-product reduction
 * CPU time: 0.55 s (gcc -O3, one core; user time, median of 3 runs, 2026-11-22)
 */
#include <stdio.h>
#include <stdlib.h>

#ifdef BENCH_SMALL
#define N 40
#define K 24
#else
#define N 1536
#define K 512
#endif

static unsigned int lcg_next(unsigned int *state) {
    *state = *state * 1664525u + 1013904223u;
    return *state;
}

static float lcg_float(unsigned int *state) {
    return (float)(lcg_next(state) >> 8) * (1.0f / 16777216.0f);
}

static void fill_uniform(float *x, int n, unsigned int seed) {
    unsigned int state = seed;
    for (int i = 0; i < n; i++)
        x[i] = lcg_float(&state);
}

void syrk_lower(int n, int k, float alpha, float beta, const float *a, float *c) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j <= i; j++) {
            float sum = 0.0f;
            for (int p = 0; p < k; p++)
                sum += a[i * k + p] * a[j * k + p];
            c[i * n + j] = alpha * sum + beta * c[i * n + j];
        }
}

int main(void) {
    float *a = (float *)malloc(sizeof(float) * N * K);
    float *c = (float *)malloc(sizeof(float) * N * N);
    if (!a || !c) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    fill_uniform(a, N * K, 3u);
    fill_uniform(c, N * N, 4u);
    syrk_lower(N, K, 0.5f, 2.0f, a, c);
    double lower = 0.0, trace = 0.0;
    for (int i = 0; i < N; i++) {
        trace += c[i * N + i];
        for (int j = 0; j <= i; j++)
            lower += c[i * N + j];
    }
    printf("lower_sum=%.6e trace=%.6e\n", lower, trace);
    for (int i = N / 4; i < N; i += N / 4) {
        double row = 0.0;
        for (int j = 0; j <= i; j++)
            row += c[i * N + j];
        printf("row %d sum=%.6e\n", i, row);
    }
    free(a);
    free(c);
    return 0;
}
