/* vec_lerp: per-element linear interpolation between two signals with a per-element
 * weight, then a clamp to [lo, hi]. Pattern: 1-D elementwise, three inputs, one output. */
#include <stdio.h>
#include <stdlib.h>

#define N 1000000

static void fill(float *a, float *b, float *t, int n) {
    unsigned int s = 12345u;
    for (int i = 0; i < n; i++) {
        s = s * 1103515245u + 12345u;
        a[i] = (float)((s >> 16) % 1000) * 0.01f;
        b[i] = (float)((s >> 8) % 777) * 0.02f;
        t[i] = (float)(i % 97) / 96.0f;
    }
}

void lerp_clamp(int n, const float *a, const float *b, const float *t, float *out,
                float lo, float hi) {
    for (int i = 0; i < n; i++) {
        float v = a[i] + t[i] * (b[i] - a[i]);
        out[i] = v < lo ? lo : (v > hi ? hi : v);
    }
}

int main(void) {
    float *a = malloc(sizeof(float) * N), *b = malloc(sizeof(float) * N);
    float *t = malloc(sizeof(float) * N), *out = malloc(sizeof(float) * N);
    fill(a, b, t, N);
    lerp_clamp(N, a, b, t, out, 1.0f, 12.0f);
    double sum = 0.0;
    for (int i = 0; i < N; i++)
        sum += out[i] * (double)((i % 7) + 1);
    printf("lerp checksum %.6e first %.5f last %.5f\n", sum, out[0], out[N - 1]);
    free(a); free(b); free(t); free(out);
    return 0;
}
