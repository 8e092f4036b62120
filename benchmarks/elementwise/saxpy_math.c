/*
 * Name: saxpy_math
 * Category: elementwise
 * Computes: y[i] = a*x[i] + sin(x[i])*exp(-x[i]/2) + sqrt(x[i]+1) over a large float
 *           vector, for several values of a; prints the sum of y for each a.
 * Pattern: parallel loop (independent iterations, math-heavy body)
 * CPU time: 0.54 s (gcc -O3, one core; user time, median of 3 runs, 2026-11-22)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef BENCH_SMALL
#define N 10000
#define REPS 2
#else
#define N (1 << 23)
#define REPS 4
#endif

static unsigned int lcg_next(unsigned int *state) {
    *state = *state * 1664525u + 1013904223u;
    return *state;
}

/* uniform in [0, 1) from the top 24 bits of the generator */
static float lcg_float(unsigned int *state) {
    return (float)(lcg_next(state) >> 8) * (1.0f / 16777216.0f);
}

static void fill_uniform(float *x, int n, float lo, float hi, unsigned int seed) {
    unsigned int state = seed;
    for (int i = 0; i < n; i++)
        x[i] = lo + (hi - lo) * lcg_float(&state);
}

void saxpy_math(int n, float a, const float *x, float *y) {
    for (int i = 0; i < n; i++)
        y[i] = a * x[i] + sinf(x[i]) * expf(-0.5f * x[i]) + sqrtf(x[i] + 1.0f);
}

static double sum_of(const float *y, int n) {
    double s = 0.0;
    for (int i = 0; i < n; i++)
        s += y[i];
    return s;
}

int main(void) {
    float *x = (float *)malloc(sizeof(float) * N);
    float *y = (float *)malloc(sizeof(float) * N);
    if (!x || !y) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    fill_uniform(x, N, 0.0f, 4.0f, 42u);
    for (int r = 0; r < REPS; r++) {
        float a = 0.5f + (float)r;
        saxpy_math(N, a, x, y);
        printf("a=%.2f sum=%.6e\n", a, sum_of(y, N));
    }
    free(x);
    free(y);
    return 0;
}
