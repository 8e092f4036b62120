/*
 * Name: black_scholes
 * Category: elementwise
 * Computes: European call and put prices with the Black-Scholes formula (polynomial
 *           approximation of the normal CDF) for a large batch of options, at several
 *           risk-free rates; prints the summed call and put prices per rate.
 * Pattern: parallel loop (independent iterations, exp/log/sqrt-heavy body, two outputs)
 * CPU time: 0.77 s (gcc -O3, one core; user time, median of 3 runs, 2026-11-22)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef BENCH_SMALL
#define N 10000
#define NRATES 2
#else
#define N (1 << 22)
#define NRATES 4
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

/* Abramowitz-Stegun 26.2.17 approximation of the standard normal CDF */
static float normal_cdf(float d) {
    const float a1 = 0.31938153f, a2 = -0.356563782f, a3 = 1.781477937f;
    const float a4 = -1.821255978f, a5 = 1.330274429f, rsqrt2pi = 0.39894228040143267794f;
    float k = 1.0f / (1.0f + 0.2316419f * fabsf(d));
    float poly = k * (a1 + k * (a2 + k * (a3 + k * (a4 + k * a5))));
    float cnd = rsqrt2pi * expf(-0.5f * d * d) * poly;
    return d > 0.0f ? 1.0f - cnd : cnd;
}

void black_scholes(int n, const float *spot, const float *strike, const float *years,
                   float rate, float volatility, float *call, float *put) {
    for (int i = 0; i < n; i++) {
        float sqrt_t = sqrtf(years[i]);
        float d1 = (logf(spot[i] / strike[i]) + (rate + 0.5f * volatility * volatility) * years[i]) /
                   (volatility * sqrt_t);
        float d2 = d1 - volatility * sqrt_t;
        float discount = expf(-rate * years[i]);
        call[i] = spot[i] * normal_cdf(d1) - strike[i] * discount * normal_cdf(d2);
        put[i] = strike[i] * discount * normal_cdf(-d2) - spot[i] * normal_cdf(-d1);
    }
}

static double sum_of(const float *v, int n) {
    double s = 0.0;
    for (int i = 0; i < n; i++)
        s += v[i];
    return s;
}

int main(void) {
    float *spot = (float *)malloc(sizeof(float) * N);
    float *strike = (float *)malloc(sizeof(float) * N);
    float *years = (float *)malloc(sizeof(float) * N);
    float *call = (float *)malloc(sizeof(float) * N);
    float *put = (float *)malloc(sizeof(float) * N);
    if (!spot || !strike || !years || !call || !put) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    fill_uniform(spot, N, 5.0f, 30.0f, 1u);
    fill_uniform(strike, N, 1.0f, 100.0f, 2u);
    fill_uniform(years, N, 0.25f, 10.0f, 3u);
    for (int r = 0; r < NRATES; r++) {
        float rate = 0.01f + 0.01f * (float)r;
        black_scholes(N, spot, strike, years, rate, 0.30f, call, put);
        printf("rate=%.2f calls=%.6e puts=%.6e\n", rate, sum_of(call, N), sum_of(put, N));
    }
    free(spot);
    free(strike);
    free(years);
    free(call);
    free(put);
    return 0;
}
