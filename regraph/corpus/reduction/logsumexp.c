/* logsumexp: numerically stable log(sum(exp(x))) per row of a score matrix (a softmax
 * denominator): a max reduction, then a sum reduction, per row. Pattern: two dependent
 * reductions inside a parallel loop over rows. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define ROWS 2048
#define COLS 512

void row_logsumexp(int rows, int cols, const float *x, float *out) {
    for (int r = 0; r < rows; r++) {
        float m = x[r * cols];
        for (int c = 1; c < cols; c++)
            m = fmaxf(m, x[r * cols + c]);
        double s = 0.0;
        for (int c = 0; c < cols; c++)
            s += exp((double)x[r * cols + c] - m);
        out[r] = m + (float)log(s);
    }
}

int main(void) {
    float *x = malloc(sizeof(float) * ROWS * COLS), *out = malloc(sizeof(float) * ROWS);
    for (int i = 0; i < ROWS * COLS; i++)
        x[i] = (float)((i * 2654435761u) % 10007) / 1000.0f - 5.0f;
    row_logsumexp(ROWS, COLS, x, out);
    double total = 0.0;
    for (int r = 0; r < ROWS; r++)
        total += out[r];
    printf("logsumexp total %.6e row0 %.6f\n", total, out[0]);
    free(x); free(out);
    return 0;
}
