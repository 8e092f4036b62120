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

/* a matrix drawn row by row: every row takes as many draws as its inner loop runs, so row i
   starts i * (draws a row) steps on; both levels are independent once that is known */
static unsigned int fill_matrix(float *a, int rows, int cols, unsigned int state) {
    for (int i = 0; i < rows; i++)
        for (int j = 1; j <= cols; j += 2)
            a[i * cols + j - 1] = lcg_float(&state) - 0.5f;
    return state;
}

/* one draw for the channel, then a countdown over its samples: 1 + samples draws each */
static unsigned int fill_channels(float *data, unsigned int *tags, int channels, int samples,
                                  unsigned int state) {
    for (int c = 0; c < channels; c++) {
        float center = (float)c;
        tags[c] = lcg_next(&state) >> 20;
        for (int k = samples - 1; k >= 0; k--)
            data[c * samples + k] = center + lcg_float(&state);
    }
    return state;
}

int main(void) {
    int rows = 300, cols = 257, channels = 40, samples = 1000;
    float *a = (float *)calloc((size_t)rows * cols, sizeof(float));
    float *data = (float *)malloc(sizeof(float) * channels * samples);
    unsigned int *tags = (unsigned int *)malloc(sizeof(unsigned int) * channels);
    unsigned int state = fill_matrix(a, rows, cols, 2026u);
    state = fill_channels(data, tags, channels, samples, state);
    double sum_a = 0.0, sum_data = 0.0;
    unsigned long long tag_sum = 0;
    for (int i = 0; i < rows * cols; i++)
        sum_a += a[i];
    for (int i = 0; i < channels * samples; i++)
        sum_data += data[i];
    for (int c = 0; c < channels; c++)
        tag_sum += tags[c];
    printf("%.6f %.6f %.6f %.6f %llu %u\n", a[0], a[rows * cols - 1], sum_a, sum_data, tag_sum,
           state);
    free(a);
    free(data);
    free(tags);
    return 0;
}
