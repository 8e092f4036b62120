/*
 * Name: atb
 * Category: linalg
 * Computes: C = A^T * B for a tall A (K x M) and a tall B (K x N), both row-major, as a
 *           Gram-like cross product; prints the sum of C and the sums of a few columns.
 * Pattern: parallel loop nest (2-D output) with an inner reduction over the long dimension;
 *          both operands read down columns
 * CPU time: 1.03 s (gcc -O3, one core; user time, median of 3 runs, 2026-11-22)
 */
#include <stdio.h>
#include <stdlib.h>

#ifdef BENCH_SMALL
#define K 256
#define M 24
#define N 32
#else
#define K 1536
#define M 384
#define N 512
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

void transpose_multiply(int k, int m, int n, const float *a, const float *b, float *c) {
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            float sum = 0.0f;
            for (int p = 0; p < k; p++)
                sum += a[p * m + i] * b[p * n + j];
            c[i * n + j] = sum;
        }
}

int main(void) {
    float *a = (float *)malloc(sizeof(float) * K * M);
    float *b = (float *)malloc(sizeof(float) * K * N);
    float *c = (float *)malloc(sizeof(float) * M * N);
    if (!a || !b || !c) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    fill_uniform(a, K * M, 10u);
    fill_uniform(b, K * N, 20u);
    transpose_multiply(K, M, N, a, b, c);
    double total = 0.0;
    for (int i = 0; i < M * N; i++)
        total += c[i];
    printf("sum=%.6e\n", total);
    for (int j = 0; j < N; j += N / 4) {
        double col = 0.0;
        for (int i = 0; i < M; i++)
            col += c[i * N + j];
        printf("column %d sum=%.6e\n", j, col);
    }
    free(a);
    free(b);
    free(c);
    return 0;
}
