/* gamma_lut: gamma-correct 8-bit samples through pow() and quantise back, with an
 * exposure factor per channel. Pattern: 1-D elementwise with a transcendental and a cast. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define N (3 * 640 * 480)

void gamma_correct(int n, const unsigned char *in, unsigned char *out, float gamma,
                   const float *exposure) {
    for (int i = 0; i < n; i++) {
        float x = in[i] / 255.0f * exposure[i % 3];
        if (x > 1.0f) x = 1.0f;
        out[i] = (unsigned char)(powf(x, 1.0f / gamma) * 255.0f + 0.5f);
    }
}

int main(void) {
    unsigned char *in = malloc(N), *out = malloc(N);
    float exposure[3] = {1.1f, 0.95f, 1.3f};
    for (int i = 0; i < N; i++)
        in[i] = (unsigned char)((i * 31 + i / 640) & 255);
    gamma_correct(N, in, out, 2.2f, exposure);
    unsigned long long sum = 0, weighted = 0;
    for (int i = 0; i < N; i++) {
        sum += out[i];
        weighted += (unsigned long long)out[i] * (i % 101);
    }
    printf("gamma sum %llu weighted %llu\n", sum, weighted);
    free(in); free(out);
    return 0;
}
