/* Clamped bins with integer counts (incremented, and decremented for negative weights)
   and double weights: small bin counts use shared-memory copies, large ones do not,
   and an index outside the zeroed range makes the host run the loop. */
#include <stdio.h>
#include <stdlib.h>

void bin(int n, const float *x, const float *w, int nbins, int limit, int *count, double *weight)
{
    for (int b = 0; b < nbins; b++) {
        count[b] = 0;
        weight[b] = 0.0;
    }
    for (int i = 0; i < n; i++) {
        int k = (int)(x[i] * (float)nbins);
        if (k < 0)
            k = 0;
        if (k >= limit)
            k = limit - 1;
        if (w[i] < 0.0f)
            count[k]--;
        else
            count[k]++;
        weight[k] += w[i];
    }
}

static void run(int n, const float *x, const float *w, int nbins, int limit, int *count,
                double *weight)
{
    bin(n, x, w, nbins, limit, count, weight);
    long long check = 0;
    double total = 0.0;
    for (int b = 0; b < nbins; b++) {
        check += (long long)(b % 13 + 1) * count[b];
        total += weight[b];
    }
    printf("bins=%d limit=%d: check=%lld first=%d last=%d total=%.6e\n", nbins, limit, check,
           count[0], count[limit - 1], total);
}

int main(void)
{
    int n = 300000, most = 40000;
    float *x = (float *)malloc(sizeof(float) * n);
    float *w = (float *)malloc(sizeof(float) * n);
    int *count = (int *)malloc(sizeof(int) * (most + 1));
    double *weight = (double *)malloc(sizeof(double) * (most + 1));
    unsigned int state = 11u;
    for (int i = 0; i < n; i++) {
        state = state * 1664525u + 1013904223u;
        x[i] = (float)(state >> 8) / 16777216.0f * 1.1f - 0.05f;
        w[i] = (float)((state >> 4) & 1023u) / 512.0f - 0.5f;
    }
    run(n, x, w, 100, 100, count, weight);
    run(n, x, w, most, most, count, weight);
    run(n, x, w, 100, 101, count, weight); /* index 100 lies outside the zeroed bins */
    free(x);
    free(w);
    free(count);
    free(weight);
    return 0;
}
