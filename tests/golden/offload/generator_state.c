#include <stdio.h>
#include <stdlib.h>

/* a generator whose state the caller keeps: each element draws from its own */
static unsigned int next_state(unsigned int *s) {
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

static float uniform(unsigned int *s) {
    return (float)(next_state(s) >> 8) * (1.0f / 16777216.0f);
}

void jitter(float *out, const float *base, int n, unsigned int seed) {
    for (int i = 0; i < n; i++) {
        unsigned int s = seed ^ (2654435761u * (unsigned int)(i + 1));
        float u = uniform(&s) - 0.5f;  /* the scales are powers of two: exact, FMA or not */
        out[i] = base[i] + 0.25f * u + 0.125f * (uniform(&s) - 0.5f);
    }
}

int main(void) {
    int n = 1 << 16;
    float *base = (float *)malloc(sizeof(float) * n);
    float *out = (float *)malloc(sizeof(float) * n);
    for (int i = 0; i < n; i++)
        base[i] = (float)(i % 100) * 0.5f;
    jitter(out, base, n, 12345u);
    double sum = 0.0;
    for (int i = 0; i < n; i++)
        sum += out[i];
    printf("%.6f %.6f %.6f\n", out[0], out[n - 1], sum);
    free(base);
    free(out);
    return 0;
}
