/*
 * Name: activations
 * Category: elementwise
 * Computes: the GELU (tanh form), softplus and logistic activations of a large vector,
 *           each into its own output, for several input scales; prints the sum of each.
 * Pattern: parallel loop (independent iterations, tanh/exp/log1p body, three outputs)
 * CPU time: 0.87 s (gcc -O3, one core; user time, median of 3 runs, 2026-11-22)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef BENCH_SMALL
#define N 10000
#define NSCALES 2
#else
#define N (1 << 22)
#define NSCALES 4
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

void activations(int n, float scale, const float *x, float *gelu, float *softplus, float *logistic) {
    const float c = 0.7978845608f; /* sqrt(2/pi) */
    for (int i = 0; i < n; i++) {
        float v = scale * x[i];
        gelu[i] = 0.5f * v * (1.0f + tanhf(c * (v + 0.044715f * v * v * v)));
        softplus[i] = log1pf(expf(v));
        logistic[i] = 1.0f / (1.0f + expf(-v));
    }
}

static double sum_of(const float *v, int n) {
    double s = 0.0;
    for (int i = 0; i < n; i++)
        s += v[i];
    return s;
}

int main(void) {
    float *x = (float *)malloc(sizeof(float) * N);
    float *gelu = (float *)malloc(sizeof(float) * N);
    float *softplus = (float *)malloc(sizeof(float) * N);
    float *logistic = (float *)malloc(sizeof(float) * N);
    if (!x || !gelu || !softplus || !logistic) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    /* skewed to positive inputs so that no sum is a near-cancellation */
    fill_uniform(x, N, -2.0f, 4.0f, 11u);
    for (int s = 0; s < NSCALES; s++) {
        float scale = 0.5f + 0.5f * (float)s;
        activations(N, scale, x, gelu, softplus, logistic);
        printf("scale=%.2f gelu=%.6e softplus=%.6e logistic=%.6e\n", scale, sum_of(gelu, N),
               sum_of(softplus, N), sum_of(logistic, N));
    }
    free(x);
    free(gelu);
    free(softplus);
    free(logistic);
    return 0;
}
