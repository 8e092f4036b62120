/* column_zscore: standardise every column of a row-major table of sensor readings with the
 * column's mean and inverse standard deviation, then clip outliers to +-3 sigma.
 * Pattern: 2-D nest written column by column (columns outer, rows inner) over row-major
 * data: the loop with unit stride is the outer one (a coalescing candidate). */
#include <stdio.h>
#include <stdlib.h>

#define ROWS 2048
#define COLS 1024

void standardise_columns(int rows, int cols, const float *x, const float *mean,
                         const float *inv_sd, float *z) {
    for (int c = 0; c < cols; c++)
        for (int r = 0; r < rows; r++) {
            float v = (x[r * cols + c] - mean[c]) * inv_sd[c];
            z[r * cols + c] = v > 3.0f ? 3.0f : (v < -3.0f ? -3.0f : v);
        }
}

int main(void) {
    float *x = malloc(sizeof(float) * ROWS * COLS), *z = malloc(sizeof(float) * ROWS * COLS);
    float *mean = malloc(sizeof(float) * COLS), *inv_sd = malloc(sizeof(float) * COLS);
    for (int r = 0; r < ROWS; r++)
        for (int c = 0; c < COLS; c++)
            x[r * COLS + c] = (float)((r * 13 + c * 7) % 211) * 0.05f + (float)(c % 5);
    for (int c = 0; c < COLS; c++) {
        mean[c] = 5.0f + (float)(c % 5);
        inv_sd[c] = 1.0f / (1.5f + (float)(c % 9) * 0.25f);
    }
    standardise_columns(ROWS, COLS, x, mean, inv_sd, z);
    double total = 0.0, spread = 0.0;
    int clipped = 0;
    for (int i = 0; i < ROWS * COLS; i++) {
        total += z[i];
        spread += z[i] * z[i];
        clipped += z[i] == 3.0f || z[i] == -3.0f;
    }
    printf("z total %.6e spread %.6e clipped %d\n", total, spread, clipped);
    free(x); free(z); free(mean); free(inv_sd);
    return 0;
}
