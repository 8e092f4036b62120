/* transpose_scale: out = alpha * in^T + beta on a rectangular matrix. Pattern: 2-D nest
 * whose natural order reads rows and writes columns (a coalescing candidate). */
#include <stdio.h>
#include <stdlib.h>

#define ROWS 1500
#define COLS 1100

void transpose_scale(int rows, int cols, const double *in, double *out, double alpha,
                     double beta) {
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++)
            out[j * rows + i] = alpha * in[i * cols + j] + beta;
}

int main(void) {
    double *in = malloc(sizeof(double) * ROWS * COLS);
    double *out = malloc(sizeof(double) * ROWS * COLS);
    for (int i = 0; i < ROWS * COLS; i++)
        in[i] = (double)((i * 17) % 1009) / 1009.0;
    transpose_scale(ROWS, COLS, in, out, 2.5, -0.75);
    double check = 0.0;
    for (int j = 0; j < COLS; j++)
        check += out[j * ROWS + (j % ROWS)] * (j + 1);
    double total = 0.0;
    for (int i = 0; i < ROWS * COLS; i++)
        total += out[i];
    printf("transpose check %.6e total %.6e\n", check, total);
    free(in); free(out);
    return 0;
}
