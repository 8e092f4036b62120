/*
 * Name: matvec
 * Category: linalg
 * Computes: power iteration on a positive matrix stored twice, row-major and column-major:
 *           each iteration multiplies by the row-major copy (one dot product per row) and
 *           then by the column-major copy (column-wise access); prints the dominant
 *           eigenvalue estimates and the sum of the final vector.
 * Pattern: parallel loop over rows with an inner reduction (row-major), strided access (column-major)
 * CPU time: 1.37 s (gcc -O3, one core; user time, median of 3 runs, 2026-11-22)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef BENCH_SMALL
#define N 64
#define ITERS 4
#else
#define N 4096
#define ITERS 24
#endif

static unsigned int lcg_next(unsigned int *state) {
    *state = *state * 1664525u + 1013904223u;
    return *state;
}

static float lcg_float(unsigned int *state) {
    return (float)(lcg_next(state) >> 8) * (1.0f / 16777216.0f);
}

/* the same matrix in both layouts */
static void fill_matrix(float *row_major, float *col_major, int n, unsigned int seed) {
    unsigned int state = seed;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            float v = lcg_float(&state);
            row_major[i * n + j] = v;
            col_major[j * n + i] = v;
        }
}

void matvec_row_major(int n, const float *a, const float *x, float *y) {
    for (int i = 0; i < n; i++) {
        float sum = 0.0f;
        for (int j = 0; j < n; j++)
            sum += a[i * n + j] * x[j];
        y[i] = sum;
    }
}

/* a is column-major: element (i, j) lives at a[j * n + i] */
void matvec_col_major(int n, const float *a, const float *x, float *y) {
    for (int i = 0; i < n; i++) {
        float sum = 0.0f;
        for (int j = 0; j < n; j++)
            sum += a[j * n + i] * x[j];
        y[i] = sum;
    }
}

/* scales v to unit 2-norm and returns the norm it had */
static double normalize(int n, float *v) {
    double s = 0.0;
    for (int i = 0; i < n; i++)
        s += (double)v[i] * v[i];
    double norm = sqrt(s);
    for (int i = 0; i < n; i++)
        v[i] = (float)(v[i] / norm);
    return norm;
}

int main(void) {
    float *row_major = (float *)malloc(sizeof(float) * N * N);
    float *col_major = (float *)malloc(sizeof(float) * N * N);
    float *x = (float *)malloc(sizeof(float) * N);
    float *y = (float *)malloc(sizeof(float) * N);
    if (!row_major || !col_major || !x || !y) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    fill_matrix(row_major, col_major, N, 77u);
    for (int i = 0; i < N; i++)
        x[i] = 1.0f;
    normalize(N, x);
    double lambda_row = 0.0, lambda_col = 0.0;
    for (int it = 0; it < ITERS; it++) {
        matvec_row_major(N, row_major, x, y);
        lambda_row = normalize(N, y);
        matvec_col_major(N, col_major, y, x);
        lambda_col = normalize(N, x);
    }
    double total = 0.0;
    for (int i = 0; i < N; i++)
        total += x[i];
    printf("lambda_row=%.6e lambda_col=%.6e sum_x=%.6e\n", lambda_row, lambda_col, total);
    free(row_major);
    free(col_major);
    free(x);
    free(y);
    return 0;
}
