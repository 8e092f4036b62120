/*
 * Name: matmul
 * Category: linalg
 * Computes: C = A * B for square single-precision matrices (row-major, textbook i-j-k
 *           order with a scalar accumulator); prints the sum of C, its trace and row sums.
 * Pattern: parallel loop nest (2-D output) with an inner dot-product reduction; data reuse
 * CPU time: 0.73 s (gcc -O3, one core; user time, median of 3 runs, 2026-11-22)
 */
#include <stdio.h>
#include <stdlib.h>

#ifdef BENCH_SMALL
#define N 48
#else
#define N 900
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

void matmul(int n, const float *a, const float *b, float *c) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            float sum = 0.0f;
            for (int k = 0; k < n; k++)
                sum += a[i * n + k] * b[k * n + j];
            c[i * n + j] = sum;
        }
}

int main(void) {
    float *a = (float *)malloc(sizeof(float) * N * N);
    float *b = (float *)malloc(sizeof(float) * N * N);
    float *c = (float *)malloc(sizeof(float) * N * N);
    if (!a || !b || !c) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    fill_uniform(a, N * N, 1u);
    fill_uniform(b, N * N, 2u);
    matmul(N, a, b, c);
    double total = 0.0, trace = 0.0;
    for (int i = 0; i < N; i++) {
        trace += c[i * N + i];
        for (int j = 0; j < N; j++)
            total += c[i * N + j];
    }
    printf("sum=%.6e trace=%.6e\n", total, trace);
    for (int i = 0; i < N; i += N / 4) {
        double row = 0.0;
        for (int j = 0; j < N; j++)
            row += c[i * N + j];
        printf("row %d sum=%.6e\n", i, row);
    }
    free(a);
    free(b);
    free(c);
    return 0;
}
