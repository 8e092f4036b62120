#include <stdio.h>
#include <stdlib.h>

/* a linear congruential generator whose state the caller keeps */
static unsigned int lcg_next(unsigned int *state) {
    *state = *state * 1664525u + 1013904223u;
    return *state;
}

static float lcg_float(unsigned int *state) {
    return (float)(lcg_next(state) >> 8) * (1.0f / 16777216.0f);
}

/* two loops draw from one stream, one after the other: the second starts where the first
   left the state, and the caller's state ends where both leave it */
unsigned int fill(float *x, unsigned int *bits, int n, int m, unsigned int seed) {
    unsigned int state = seed;
    for (int i = 0; i < n; i++) {
        float u = lcg_float(&state);
        float v = lcg_float(&state);
        x[i] = u + 0.5f * v;
    }
    for (int j = 0; j < m; j++)
        bits[j] = lcg_next(&state) >> 16;
    return state;
}

int main(void) {
    int n = 1 << 16, m = 1000;
    float *x = (float *)malloc(sizeof(float) * n);
    unsigned int *bits = (unsigned int *)malloc(sizeof(unsigned int) * m);
    unsigned int last = fill(x, bits, n, m, 17u);
    double sum = 0.0;
    for (int i = 0; i < n; i++)
        sum += x[i];
    unsigned long long bit_sum = 0;
    for (int j = 0; j < m; j++)
        bit_sum += bits[j];
    printf("%.6f %.6f %.6f %llu %u\n", x[0], x[n - 1], sum, bit_sum, last);
    free(x);
    free(bits);
    return 0;
}
