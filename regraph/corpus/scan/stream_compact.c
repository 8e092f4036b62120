/* stream_compact: keep the samples above a threshold, in order: an exclusive scan of the
 * keep flags gives each kept sample its output slot, then a scatter. Pattern: flag map,
 * exclusive scan, scatter (the classic GPU compaction). */
#include <stdio.h>
#include <stdlib.h>

#define N 3000000

int compact_above(int n, const float *x, float threshold, int *slot, float *out) {
    int next = 0;
    for (int i = 0; i < n; i++) {
        slot[i] = next;
        next += x[i] > threshold;
    }
    for (int i = 0; i < n; i++)
        if (x[i] > threshold) out[slot[i]] = x[i];
    return next;
}

int main(void) {
    float *x = malloc(sizeof(float) * N), *out = malloc(sizeof(float) * N);
    int *slot = malloc(sizeof(int) * N);
    for (int i = 0; i < N; i++)
        x[i] = (float)((i * 48271u) % 1000u) / 1000.0f;
    int kept = compact_above(N, x, 0.87f, slot, out);
    double sum = 0.0;
    for (int i = 0; i < kept; i++)
        sum += out[i] * (i % 10);
    printf("kept %d weighted %.6e\n", kept, sum);
    free(x); free(out); free(slot);
    return 0;
}
