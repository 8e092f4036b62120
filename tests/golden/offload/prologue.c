#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned int lcg_next(unsigned int *state) {
    *state = *state * 1664525u + 1013904223u;
    return *state;
}

static float lcg_float(unsigned int *state) {
    return (float)(lcg_next(state) >> 8) * (1.0f / 16777216.0f);
}

/* each row's scale and offset are computed before its columns: they move into the column
   loop, and rows and columns both go on the grid */
void scale_rows(int n, int m, double alpha, const double *s, const double *a, const double *b,
                double *out) {
    for (int i = 0; i < n; i++) {
        double si = sqrt(s[i]) * alpha;
        int base = i * m;
        for (int j = 0; j < m; j++)
            out[base + j] = si * a[base + j] + b[j];
    }
}

/* a channel's center, then its samples drawn from one generator: a 2-D grid whose
   iteration (c, k) jumps c channels of samples and k draws */
static void fill_channels(float *data, int channels, int samples, unsigned int seed) {
    unsigned int state = seed;
    for (int c = 0; c < channels; c++) {
        float center = 10.0f + (float)c;
        for (int k = 0; k < samples; k++)
            data[c * samples + k] = center + lcg_float(&state);
    }
}

int main(void) {
    int n = 700, m = 900, channels = 50, samples = 3000;
    double *s = (double *)malloc(sizeof(double) * n);
    double *a = (double *)malloc(sizeof(double) * n * m);
    double *b = (double *)malloc(sizeof(double) * m);
    double *out = (double *)malloc(sizeof(double) * n * m);
    float *data = (float *)malloc(sizeof(float) * channels * samples);
    for (int i = 0; i < n; i++)
        s[i] = 1.0 + (i % 13);
    for (int i = 0; i < n * m; i++)
        a[i] = (double)(i % 101) / 101.0;
    for (int j = 0; j < m; j++)
        b[j] = 0.5 * (j % 7);
    scale_rows(n, m, 0.25, s, a, b, out);
    fill_channels(data, channels, samples, 7u);
    double total = 0.0, drawn = 0.0;
    for (int i = 0; i < n * m; i++)
        total += out[i];
    for (int i = 0; i < channels * samples; i++)
        drawn += data[i];
    printf("%.6f %.6f %.6f %.6f\n", out[0], out[n * m - 1], total, drawn);
    free(s);
    free(a);
    free(b);
    free(out);
    free(data);
    return 0;
}
