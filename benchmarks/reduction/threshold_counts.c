/*
 * Name: threshold_counts
 * Category: reduction
 * Computes: for many thresholds, how many integers of a large array exceed the threshold,
 *           their 64-bit sum and the XOR of all of them; prints exact integers.
 * Pattern: reduction (integer count, sum and xor; exact under any order)
 * CPU time: 0.83 s (gcc -O3, one core; user time, median of 3 runs, 2026-11-22)
 */
#include <stdio.h>
#include <stdlib.h>

#ifdef BENCH_SMALL
#define N 20000
#define NTHRESHOLDS 4
#else
#define N (1 << 24)
#define NTHRESHOLDS 96
#endif

typedef struct {
    long long count;
    long long sum;
    unsigned int xor_all;
} Tally;

static unsigned int lcg_next(unsigned int *state) {
    *state = *state * 1664525u + 1013904223u;
    return *state;
}

static void fill_ints(int *v, int n, unsigned int seed) {
    unsigned int state = seed;
    for (int i = 0; i < n; i++)
        v[i] = (int)(lcg_next(&state) >> 12); /* 0 .. 2^20-1 */
}

Tally tally_above(const int *v, int n, int threshold) {
    Tally t = {0, 0, 0u};
    for (int i = 0; i < n; i++) {
        if (v[i] > threshold) {
            t.count += 1;
            t.sum += v[i];
            t.xor_all ^= (unsigned int)v[i];
        }
    }
    return t;
}

int main(void) {
    int *v = (int *)malloc(sizeof(int) * N);
    if (!v) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    fill_ints(v, N, 31337u);
    long long grand = 0;
    for (int k = 0; k < NTHRESHOLDS; k++) {
        int threshold = k * ((1 << 20) / NTHRESHOLDS);
        Tally t = tally_above(v, N, threshold);
        grand += t.sum;
        if (k % 16 == 0)
            printf("threshold %d: count=%lld sum=%lld xor=%u\n", threshold, t.count, t.sum, t.xor_all);
    }
    printf("grand total=%lld\n", grand);
    free(v);
    return 0;
}
