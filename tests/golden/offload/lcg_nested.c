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

/* a particle: a tag, then three coordinates counted down, 1 + 3 draws each; the inner loop
   is too short for a launch of its own, so a thread per particle runs it */
static unsigned int fill_particles(float *pos, unsigned int *tags, int count, unsigned int state) {
    for (int p = 0; p < count; p++) {
        tags[p] = lcg_next(&state) >> 20;
        for (int d = 2; d >= 0; d--)
            pos[3 * p + d] = (float)p + lcg_float(&state);
    }
    return state;
}

/* a channel: a center, then its samples; the samples go on the grid, one launch a channel,
   the host moving the state past each */
static unsigned int fill_channels(float *data, int channels, int samples, unsigned int state) {
    for (int c = 0; c < channels; c++) {
        float center = (float)c + lcg_float(&state);
        for (int k = 0; k < samples; k++)
            data[c * samples + k] = center + lcg_float(&state);
    }
    return state;
}

int main(void) {
    int rows = 300, cols = 257, count = 5000, channels = 6, samples = 20000;
    float *a = (float *)calloc((size_t)rows * cols, sizeof(float));
    float *pos = (float *)malloc(sizeof(float) * 3 * count);
    unsigned int *tags = (unsigned int *)malloc(sizeof(unsigned int) * count);
    float *data = (float *)malloc(sizeof(float) * channels * samples);
    unsigned int state = fill_matrix(a, rows, cols, 2026u);
    state = fill_particles(pos, tags, count, state);
    state = fill_channels(data, channels, samples, state);
    double sum_a = 0.0, sum_pos = 0.0, sum_data = 0.0;
    unsigned long long tag_sum = 0;
    for (int i = 0; i < rows * cols; i++)
        sum_a += a[i];
    for (int i = 0; i < 3 * count; i++)
        sum_pos += pos[i];
    for (int p = 0; p < count; p++)
        tag_sum += tags[p];
    for (int i = 0; i < channels * samples; i++)
        sum_data += data[i];
    printf("%.6f %.6f %.6f %.6f %.6f %llu %u\n", a[0], a[rows * cols - 1], sum_a, sum_pos, sum_data,
           tag_sum, state);
    free(a);
    free(pos);
    free(tags);
    free(data);
    return 0;
}
