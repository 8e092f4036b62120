/* fir_filter: a 63-tap FIR low-pass filter over a long signal (valid part only).
 * Pattern: 1-D convolution: each output a dot product with a read-only coefficient array;
 * neighbouring outputs share inputs (tiling candidate). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define N 1000000
#define TAPS 63

void fir(int n, int taps, const float *x, const float *h, float *y) {
    for (int i = 0; i + taps <= n; i++) {
        float acc = 0.0f;
        for (int k = 0; k < taps; k++)
            acc += h[k] * x[i + k];
        y[i] = acc;
    }
}

int main(void) {
    float *x = malloc(sizeof(float) * N), *y = malloc(sizeof(float) * N);
    float h[TAPS];
    for (int k = 0; k < TAPS; k++) {
        float t = (float)(k - TAPS / 2);
        h[k] = (t == 0.0f ? 0.2f : sinf(0.2f * 3.14159265f * t) / (3.14159265f * t)) *
               (0.54f - 0.46f * cosf(2.0f * 3.14159265f * k / (TAPS - 1)));
    }
    for (int i = 0; i < N; i++)
        x[i] = sinf(0.01f * i) + 0.3f * sinf(1.7f * i);
    fir(N, TAPS, x, h, y);
    double energy = 0.0;
    for (int i = 0; i + TAPS <= N; i++)
        energy += (double)y[i] * y[i];
    printf("filtered energy %.6e y[1000] %.6f\n", energy, y[1000]);
    free(x); free(y);
    return 0;
}
