/*
 * Name: poly_eval
 * Category: elementwise
 * Computes: Horner evaluation of several degree-31 polynomials with positive coefficients
 *           at every point of a large vector in [0, 1); prints the sum and the maximum of
 *           each polynomial's values.
 * Pattern: parallel loop (independent iterations, long dependent multiply-add chain per element)
 * CPU time: 0.66 s (gcc -O3, one core; user time, median of 3 runs, 2026-11-22)
 */
#include <stdio.h>
#include <stdlib.h>

#ifdef BENCH_SMALL
#define N 10000
#define NPOLY 2
#else
#define N (1 << 22)
#define NPOLY 16
#endif
#define DEGREE 31

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

/* coeffs[0] is the constant term; coeffs[degree] the leading one */
void poly_horner(int n, int degree, const float *coeffs, const float *x, float *y) {
    for (int i = 0; i < n; i++) {
        float acc = coeffs[degree];
        for (int k = degree - 1; k >= 0; k--)
            acc = acc * x[i] + coeffs[k];
        y[i] = acc;
    }
}

static void summarize(const float *y, int n, double *sum, float *max) {
    double s = 0.0;
    float m = y[0];
    for (int i = 0; i < n; i++) {
        s += y[i];
        if (y[i] > m)
            m = y[i];
    }
    *sum = s;
    *max = m;
}

int main(void) {
    float *x = (float *)malloc(sizeof(float) * N);
    float *y = (float *)malloc(sizeof(float) * N);
    float coeffs[NPOLY][DEGREE + 1];
    if (!x || !y) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    fill_uniform(x, N, 0.0f, 1.0f, 7u);
    unsigned int state = 99u;
    for (int p = 0; p < NPOLY; p++)
        for (int k = 0; k <= DEGREE; k++)
            coeffs[p][k] = 0.1f + lcg_float(&state) / (float)(k + 1);
    for (int p = 0; p < NPOLY; p++) {
        double sum;
        float max;
        poly_horner(N, DEGREE, coeffs[p], x, y);
        summarize(y, N, &sum, &max);
        printf("poly %d: sum=%.6e max=%.6e\n", p, sum, (double)max);
    }
    free(x);
    free(y);
    return 0;
}
