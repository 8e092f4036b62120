/*
 * Name: transpose
 * Category: linalg
 * Computes: B = alpha * A^T + beta for a non-square row-major A (ROWS x COLS), then A back
 *           from B the same way, for a few rounds; prints the sums of both matrices, a
 *           weighted sum of A and a few elements of B.
 * Pattern: 2-D parallel nest with no inner loop whose read walks memory along one loop and
 *          whose store walks it along the other (transpose: a strided access either way)
 * CPU time: 0.41 s (gcc -O3, one core; user time, median of 3 runs, 2026-11-26)
 */
#include <stdio.h>
#include <stdlib.h>

#ifdef BENCH_SMALL
#define ROWS 150
#define COLS 85
#define ROUNDS 2
#else
#define ROWS 2900
#define COLS 1700
#define ROUNDS 24
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

/* out (cols x rows) = alpha * in^T + beta, in being rows x cols */
void transpose_scale(int rows, int cols, float alpha, float beta, const float *in, float *out) {
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++)
            out[j * rows + i] = alpha * in[i * cols + j] + beta;
}

int main(void) {
    float *a = (float *)malloc(sizeof(float) * ROWS * COLS);
    float *b = (float *)malloc(sizeof(float) * ROWS * COLS);
    if (!a || !b) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    fill_uniform(a, ROWS * COLS, 30u);
    for (int round = 0; round < ROUNDS; round++) {
        transpose_scale(ROWS, COLS, 1.25f, 0.5f, a, b);
        transpose_scale(COLS, ROWS, 0.75f, 0.125f, b, a);
    }
    double sum_a = 0.0, sum_b = 0.0, weighted = 0.0;
    for (int k = 0; k < ROWS * COLS; k++) {
        sum_a += a[k];
        sum_b += b[k];
        weighted += a[k] * (double)(1 + k % 7);
    }
    printf("sum_a=%.6e sum_b=%.6e weighted=%.6e\n", sum_a, sum_b, weighted);
    for (int j = 0; j < COLS; j += COLS / 4)
        printf("b[%d][%d]=%.5f\n", j, ROWS / 3, b[j * ROWS + ROWS / 3]);
    free(a);
    free(b);
    return 0;
}
