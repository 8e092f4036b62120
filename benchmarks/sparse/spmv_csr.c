/*
 * Name: spmv_csr
 * Category: sparse
 * Computes: power-iteration-like repeated sparse matrix-vector products y = A x with a
 *           random positive matrix in CSR format (a diagonal plus random off-diagonal
 *           entries per row), normalizing x by its sum after each product; prints the
 *           normalization factors and the final vector's statistics.
 * Pattern: parallel loop over rows with an irregular inner reduction (indirect gather x[col[k]])
 * CPU time: 1.82 s (gcc -O3, one core; user time, median of 3 runs, 2026-11-22)
 */
#include <stdio.h>
#include <stdlib.h>

#ifdef BENCH_SMALL
#define NROWS 2000
#define ITERS 3
#else
#define NROWS (1 << 20)
#define ITERS 30
#endif
#define MAX_PER_ROW 24

static unsigned int lcg_next(unsigned int *state) {
    *state = *state * 1664525u + 1013904223u;
    return *state;
}

static float lcg_float(unsigned int *state) {
    return (float)(lcg_next(state) >> 8) * (1.0f / 16777216.0f);
}

/* row i has 1 + (4..MAX_PER_ROW-1) entries; returns the number of nonzeros */
static long build_csr(int n, int *row_start, int *col, float *val, unsigned int seed) {
    unsigned int state = seed;
    long nnz = 0;
    for (int i = 0; i < n; i++) {
        row_start[i] = (int)nnz;
        col[nnz] = i;
        val[nnz] = 1.0f;
        nnz++;
        int extra = 4 + (int)((lcg_next(&state) >> 16) % (MAX_PER_ROW - 4));
        for (int e = 0; e < extra; e++) {
            col[nnz] = (int)((lcg_next(&state) >> 4) % (unsigned int)n);
            val[nnz] = 0.1f + lcg_float(&state);
            nnz++;
        }
    }
    row_start[n] = (int)nnz;
    return nnz;
}

void spmv_csr(int n, const int *row_start, const int *col, const float *val, const float *x, float *y) {
    for (int i = 0; i < n; i++) {
        float sum = 0.0f;
        for (int k = row_start[i]; k < row_start[i + 1]; k++)
            sum += val[k] * x[col[k]];
        y[i] = sum;
    }
}

static double scale_to_unit_sum(int n, const float *y, float *x) {
    double s = 0.0;
    for (int i = 0; i < n; i++)
        s += y[i];
    for (int i = 0; i < n; i++)
        x[i] = (float)(y[i] / s * n);
    return s;
}

int main(void) {
    int *row_start = (int *)malloc(sizeof(int) * (NROWS + 1));
    int *col = (int *)malloc(sizeof(int) * (size_t)NROWS * MAX_PER_ROW);
    float *val = (float *)malloc(sizeof(float) * (size_t)NROWS * MAX_PER_ROW);
    float *x = (float *)malloc(sizeof(float) * NROWS);
    float *y = (float *)malloc(sizeof(float) * NROWS);
    if (!row_start || !col || !val || !x || !y) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    long nnz = build_csr(NROWS, row_start, col, val, 55u);
    printf("rows=%d nnz=%ld\n", NROWS, nnz);
    for (int i = 0; i < NROWS; i++)
        x[i] = 1.0f;
    for (int it = 0; it < ITERS; it++) {
        spmv_csr(NROWS, row_start, col, val, x, y);
        double factor = scale_to_unit_sum(NROWS, y, x);
        if (it % 10 == 0 || it == ITERS - 1)
            printf("iter %d: factor=%.6e\n", it, factor);
    }
    double sumsq = 0.0;
    float largest = 0.0f;
    for (int i = 0; i < NROWS; i++) {
        sumsq += (double)x[i] * x[i];
        if (x[i] > largest)
            largest = x[i];
    }
    printf("final: sumsq=%.6e max=%.6e\n", sumsq, (double)largest);
    free(row_start);
    free(col);
    free(val);
    free(x);
    free(y);
    return 0;
}
