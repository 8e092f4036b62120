/*
 * Name: recurrence
 * Category: dependence
 * Computes: the first-order linear recurrence x[i] = a[i] * x[i-1] + b[i] (a discounted
 *           running sum, as in exponential smoothing) over long series, for several decay
 *           factors; prints the sum and the last element of each result.
 * Pattern: true dependence (loop-carried through x[i-1]; parallel only as a scan of affine maps)
 * CPU time: 0.95 s (gcc -O3, one core; user time, median of 3 runs, 2026-11-22)
 */
#include <stdio.h>
#include <stdlib.h>

#ifdef BENCH_SMALL
#define N 20000
#define NDECAYS 2
#else
#define N (1 << 24)
#define NDECAYS 12
#endif

static unsigned int lcg_next(unsigned int *state) {
    *state = *state * 1664525u + 1013904223u;
    return *state;
}

static double lcg_double(unsigned int *state) { return (double)(lcg_next(state) >> 8) / 16777216.0; }

void linear_recurrence(int n, double x0, const double *a, const double *b, double *x) {
    x[0] = a[0] * x0 + b[0];
    for (int i = 1; i < n; i++)
        x[i] = a[i] * x[i - 1] + b[i];
}

int main(void) {
    double *a = (double *)malloc(sizeof(double) * N);
    double *base = (double *)malloc(sizeof(double) * N);
    double *b = (double *)malloc(sizeof(double) * N);
    double *x = (double *)malloc(sizeof(double) * N);
    if (!a || !base || !b || !x) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    unsigned int state = 314u;
    for (int i = 0; i < N; i++) {
        base[i] = lcg_double(&state);
        b[i] = 0.1 + lcg_double(&state);
    }
    for (int k = 0; k < NDECAYS; k++) {
        double decay = 0.5 + 0.04 * k;
        for (int i = 0; i < N; i++)
            a[i] = decay + 0.02 * base[i];
        linear_recurrence(N, 1.0, a, b, x);
        double sum = 0.0;
        for (int i = 0; i < N; i++)
            sum += x[i];
        printf("decay %.2f: sum=%.6e last=%.6e\n", decay, sum, x[N - 1]);
    }
    free(a);
    free(base);
    free(b);
    free(x);
    return 0;
}
