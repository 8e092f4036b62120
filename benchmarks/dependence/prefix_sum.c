/*
 * Name: prefix_sum
 * Category: dependence
 * Computes: inclusive prefix sums: of 64-bit integers (exact), and of positive doubles,
 *           where each round's scan is normalized by its total to give the next round's input;
 *           prints exact integer totals and scaled checksums of the float scans.
 * Pattern: scan (a loop-carried true dependence out[i] = out[i-1] + in[i], parallel as a scan)
 * CPU time: 1.39 s (gcc -O3, one core; user time, median of 3 runs, 2026-11-22)
 */
#include <stdio.h>
#include <stdlib.h>

#ifdef BENCH_SMALL
#define N 20000
#define ROUNDS 2
#else
#define N (1 << 24)
#define ROUNDS 12
#endif

static unsigned int lcg_next(unsigned int *state) {
    *state = *state * 1664525u + 1013904223u;
    return *state;
}

void inclusive_scan_i64(int n, const long long *in, long long *out) {
    long long running = 0;
    for (int i = 0; i < n; i++) {
        running += in[i];
        out[i] = running;
    }
}

void inclusive_scan_f64(int n, const double *in, double *out) {
    out[0] = in[0];
    for (int i = 1; i < n; i++)
        out[i] = out[i - 1] + in[i];
}

/* next round's input: the scan divided by its total, so values stay in (0, 1] */
static double normalize_scan(int n, const double *scan, double *next) {
    double total = scan[n - 1], checksum = 0.0;
    for (int i = 0; i < n; i++) {
        next[i] = scan[i] / total;
        checksum += next[i];
    }
    return checksum;
}

int main(void) {
    long long *ints = (long long *)malloc(sizeof(long long) * N);
    long long *int_scan = (long long *)malloc(sizeof(long long) * N);
    double *values = (double *)malloc(sizeof(double) * N);
    double *scan = (double *)malloc(sizeof(double) * N);
    if (!ints || !int_scan || !values || !scan) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    unsigned int state = 8080u;
    for (int i = 0; i < N; i++) {
        ints[i] = (long long)(lcg_next(&state) >> 12) - 300000;
        values[i] = 0.25 + (double)(lcg_next(&state) >> 8) / 16777216.0;
    }
    for (int r = 0; r < ROUNDS; r++) {
        inclusive_scan_i64(N, ints, int_scan);
        long long probe_sum = 0;
        for (int i = 0; i < N; i += 4099)
            probe_sum += int_scan[i];
        inclusive_scan_f64(N, values, scan);
        double last = scan[N - 1], middle = scan[N / 2];
        double checksum = normalize_scan(N, scan, values);
        printf("round %d: int_last=%lld int_probes=%lld f_last=%.6e f_mid=%.6e f_checksum=%.6e\n", r,
               int_scan[N - 1], probe_sum, last, middle, checksum);
        for (int i = 0; i < N; i++)
            ints[i] = int_scan[i] % 1000003 - 500000;
    }
    free(ints);
    free(int_scan);
    free(values);
    free(scan);
    return 0;
}
