/* Reductions into struct fields: an integer count, a 64-bit sum, an xor and an or, only
   for elements above a threshold (exact results under any order). */
#include <stdio.h>
#include <stdlib.h>

typedef struct {
    long long count;
    long long sum;
    unsigned int mixed;
    unsigned int any;
} Tally;

Tally tally(const int *v, int n, int threshold)
{
    Tally t = {5, -3, 0x55u, 0u};
    for (int i = 0; i < n; i++) {
        if (v[i] > threshold) {
            t.count += 1;
            t.sum += v[i];
            t.mixed ^= (unsigned int)v[i];
            t.any |= (unsigned int)v[i] & 0xF0u;
        }
    }
    return t;
}

int main(void)
{
    int n = 200000;
    int *v = (int *)malloc(sizeof(int) * n);
    unsigned int state = 99u;
    for (int i = 0; i < n; i++) {
        state = state * 1664525u + 1013904223u;
        v[i] = (int)(state >> 12) - 100000;
    }
    for (int k = 0; k < 3; k++) {
        Tally t = tally(v, n, k * 300000);
        printf("threshold %d: count=%lld sum=%lld mixed=%u any=%u\n", k * 300000, t.count, t.sum,
               t.mixed, t.any);
    }
    free(v);
    return 0;
}
