/*
 * Name: moments_minmax
 * Category: reduction
 * Computes: for each channel of a multi-channel signal, the mean, variance, minimum and
 *           maximum in one pass over the samples; prints per-channel aggregates.
 * Pattern: reduction (several reductions fused in one loop: sum, sum of squares, min, max)
 * CPU time: 0.63 s (gcc -O3, one core; user time, median of 3 runs, 2026-11-22)
 */
#include <stdio.h>
#include <stdlib.h>

#ifdef BENCH_SMALL
#define NCHANNELS 4
#define NSAMPLES 5000
#else
#define NCHANNELS 64
#define NSAMPLES (1 << 20)
#endif

typedef struct {
    double mean;
    double variance;
    float min;
    float max;
} Moments;

static unsigned int lcg_next(unsigned int *state) {
    *state = *state * 1664525u + 1013904223u;
    return *state;
}

static float lcg_float(unsigned int *state) {
    return (float)(lcg_next(state) >> 8) * (1.0f / 16777216.0f);
}

/* sum of four uniforms: a bell-shaped sample with the given center and spread */
static void fill_channels(float *data, int channels, int samples, unsigned int seed) {
    unsigned int state = seed;
    for (int c = 0; c < channels; c++) {
        float center = 10.0f + (float)c;
        for (int i = 0; i < samples; i++) {
            float u = lcg_float(&state) + lcg_float(&state) + lcg_float(&state) + lcg_float(&state);
            data[(size_t)c * samples + i] = center + 2.0f * (u - 2.0f);
        }
    }
}

Moments channel_moments(int n, const float *x) {
    double sum = 0.0, sumsq = 0.0;
    float lo = x[0], hi = x[0];
    for (int i = 0; i < n; i++) {
        sum += x[i];
        sumsq += (double)x[i] * (double)x[i];
        if (x[i] < lo)
            lo = x[i];
        if (x[i] > hi)
            hi = x[i];
    }
    Moments m;
    m.mean = sum / n;
    m.variance = sumsq / n - m.mean * m.mean;
    m.min = lo;
    m.max = hi;
    return m;
}

int main(void) {
    float *data = (float *)malloc(sizeof(float) * (size_t)NCHANNELS * NSAMPLES);
    if (!data) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    fill_channels(data, NCHANNELS, NSAMPLES, 17u);
    double mean_sum = 0.0, var_sum = 0.0;
    float lowest = 1e30f, highest = -1e30f;
    for (int rep = 0; rep < 4; rep++) {
        for (int c = 0; c < NCHANNELS; c++) {
            Moments m = channel_moments(NSAMPLES, data + (size_t)c * NSAMPLES);
            mean_sum += m.mean;
            var_sum += m.variance;
            if (m.min < lowest)
                lowest = m.min;
            if (m.max > highest)
                highest = m.max;
            if (rep == 0 && c < 4)
                printf("channel %d: mean=%.6e var=%.6e min=%.6e max=%.6e\n", c, m.mean, m.variance,
                       (double)m.min, (double)m.max);
        }
    }
    printf("all: mean_sum=%.6e var_sum=%.6e min=%.6e max=%.6e\n", mean_sum, var_sum, (double)lowest,
           (double)highest);
    free(data);
    return 0;
}
