/* gabor_atoms: sample a bank of Gabor atoms (a Gaussian envelope times a cosine carrier),
 * one atom per row of samples, and their energies.
 * Pattern: 2-D elementwise (atoms by samples) with expf and cosf in single precision, the
 * arguments kept within [-pi, pi] (a fast-math candidate). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define ATOMS 2048
#define SAMPLES 1024

void gabor_bank(int atoms, int samples, const float *freq, const float *width, float *out) {
    for (int a = 0; a < atoms; a++)
        for (int t = 0; t < samples; t++) {
            float u = ((float)t - 0.5f * (float)samples) / (float)samples * 6.0f;
            float s = u / width[a];
            out[a * samples + t] = expf(-0.5f * s * s) * cosf(freq[a] * u);
        }
}

int main(void) {
    float *freq = malloc(sizeof(float) * ATOMS), *width = malloc(sizeof(float) * ATOMS);
    float *out = malloc(sizeof(float) * ATOMS * SAMPLES);
    for (int a = 0; a < ATOMS; a++) {
        freq[a] = 0.1f + (float)(a % 19) * 0.048f;
        width[a] = 0.5f + (float)(a % 13) * 0.2f;
    }
    gabor_bank(ATOMS, SAMPLES, freq, width, out);
    double energy = 0.0, area = 0.0;
    for (int i = 0; i < ATOMS * SAMPLES; i++) {
        energy += (double)out[i] * out[i];
        area += out[i];
    }
    printf("gabor energy %.6e area %.6e\n", energy, area);
    free(freq); free(width); free(out);
    return 0;
}
