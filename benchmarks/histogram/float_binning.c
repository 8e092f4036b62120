/*
 * Name: float_binning
 * Category: histogram
 * Computes: bins a large set of bell-shaped float samples into fixed-width bins over a
 *           range (out-of-range values go to the end bins), counting and summing a
 *           positive weight per bin; prints exact counts and weight sums.
 * Pattern: atomic update (data-dependent bin index; integer counts and float sums per bin)
 * CPU time: 0.60 s (gcc -O3, one core; user time, median of 3 runs, 2026-11-22)
 */
#include <stdio.h>
#include <stdlib.h>

#ifdef BENCH_SMALL
#define N 20000
#define NBINS 64
#define REPS 2
#else
#define N (1 << 24)
#define NBINS 1000
#define REPS 12
#endif

static unsigned int lcg_next(unsigned int *state) {
    *state = *state * 1664525u + 1013904223u;
    return *state;
}

static float lcg_float(unsigned int *state) {
    return (float)(lcg_next(state) >> 8) * (1.0f / 16777216.0f);
}

static void fill_samples(float *x, float *w, int n, unsigned int seed) {
    unsigned int state = seed;
    for (int i = 0; i < n; i++) {
        x[i] = lcg_float(&state) + lcg_float(&state) + lcg_float(&state) - 1.5f;
        w[i] = 0.5f + lcg_float(&state);
    }
}

void bin_samples(int n, const float *x, const float *w, float lo, float hi, int nbins, int *count,
                 double *weight) {
    float scale = (float)nbins / (hi - lo);
    for (int b = 0; b < nbins; b++) {
        count[b] = 0;
        weight[b] = 0.0;
    }
    for (int i = 0; i < n; i++) {
        int bin = (int)((x[i] - lo) * scale);
        if (bin < 0)
            bin = 0;
        if (bin >= nbins)
            bin = nbins - 1;
        count[bin] += 1;
        weight[bin] += w[i];
    }
}

int main(void) {
    float *x = (float *)malloc(sizeof(float) * N);
    float *w = (float *)malloc(sizeof(float) * N);
    int *count = (int *)malloc(sizeof(int) * NBINS);
    double *weight = (double *)malloc(sizeof(double) * NBINS);
    if (!x || !w || !count || !weight) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    fill_samples(x, w, N, 606u);
    for (int r = 0; r < REPS; r++) {
        /* a range narrower than the data, shrinking, so the end bins catch outliers */
        float half = 1.5f - 0.1f * (float)r;
        bin_samples(N, x, w, -half, half, NBINS, count, weight);
        long long checksum = 0;
        double total_weight = 0.0;
        for (int b = 0; b < NBINS; b++) {
            checksum += (long long)(b + 1) * count[b];
            total_weight += weight[b];
        }
        printf("range %.3f: checksum=%lld first=%d middle=%d last=%d weight=%.6e mid_weight=%.6e\n",
               (double)half, checksum, count[0], count[NBINS / 2], count[NBINS - 1], total_weight,
               weight[NBINS / 2]);
    }
    free(x);
    free(w);
    free(count);
    free(weight);
    return 0;
}
