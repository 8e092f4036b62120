/* Zeroed-then-updated bins (the zeroing moves to the device; per-warp copies when small,
   global atomics when large, the host's run past the zeroed bins) and updates added to
   what the caller holds (saved before the launch, put back when an index is outside). */
#include <stdio.h>
#include <stdlib.h>

/* zeroed right before: the zeroing moves to the device; small bins: per-warp copies */
void clamped(int n, const int *key, int lo, int nbins, int limit, int *count, double *weight)
{
    for (int b = 0; b < nbins; b++) {
        count[b] = 0;
        weight[b] = 0.0;
    }
    for (int i = 0; i < n; i++) {
        int k = key[i] - lo;
        if (k < 0)
            k = 0;
        if (k >= limit)
            k = limit - 1; /* limit > nbins: past the zeroed bins, the host's run */
        count[k]++;
        weight[k] += 0.5 * (double)(key[i] % 7);
    }
}

/* accumulates into what the caller holds: saved and put back when an index is outside */
void accumulate(int n, const int *key, int nbins, int mod, long long *hist)
{
    for (int b = 0; b < nbins; b++)
        hist[b] = hist[b] / 2;
    for (int i = 0; i < n; i++)
        hist[key[i] % mod] += 2;
}

int main(void)
{
    int n = 6000, most = 20000;
    int *key = (int *)malloc(sizeof(int) * n);
    int *count = (int *)malloc(sizeof(int) * (most + 1));
    double *weight = (double *)malloc(sizeof(double) * (most + 1));
    long long *hist = (long long *)malloc(sizeof(long long) * (most + 1));
    unsigned int state = 5u;
    for (int i = 0; i < n; i++) {
        state = state * 1664525u + 1013904223u;
        key[i] = (int)((state >> 8) % 20000u);
    }
    for (int b = 0; b <= most; b++)
        hist[b] = b;
    for (int r = 0; r < 4; r++) {
        int nbins = r == 1 ? most : r == 3 ? 500 : 64;
        int lo = r == 3 ? 100 : 0;
        clamped(n, key, lo, nbins, r == 2 ? nbins + 1 : nbins, count, weight);
        long long check = 0;
        double total = 0.0;
        for (int b = 0; b < nbins; b++) {
            check += (long long)(b % 13 + 1) * count[b];
            total += weight[b];
        }
        printf("clamped %d: check=%lld first=%d last=%d total=%.6e\n", r, check, count[0],
               count[nbins - 1], total);
    }
    for (int r = 0; r < 3; r++) {
        int nbins = r == 1 ? most : 100;
        accumulate(n, key, nbins, r == 2 ? nbins + 1 : nbins, hist);
        long long check = 0;
        for (int b = 0; b <= most; b++)
            check += (long long)(b % 11 + 1) * hist[b];
        printf("accumulate %d: check=%lld h0=%lld h99=%lld\n", r, check, hist[0], hist[99]);
    }
    free(key);
    free(count);
    free(weight);
    free(hist);
    return 0;
}
