/* row_entropy: the Shannon entropy (in bits) of many 16-bin probability distributions
 * (normalised counts), one per row, and the total information.
 * Pattern: parallel rows, a constant 16-iteration inner sum (unrollable) with log2f in
 * single precision (a fast-math candidate). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define ROWS 200000
#define BINS 16

void row_entropy(int rows, const float *p, float *h) {
    for (int r = 0; r < rows; r++) {
        float s = 0.0f;
        for (int b = 0; b < BINS; b++) {
            float q = p[r * BINS + b];
            s -= q * log2f(q);
        }
        h[r] = s;
    }
}

int main(void) {
    float *p = malloc(sizeof(float) * ROWS * BINS), *h = malloc(sizeof(float) * ROWS);
    for (int r = 0; r < ROWS; r++) {
        float sum = 0.0f;
        for (int b = 0; b < BINS; b++) {
            p[r * BINS + b] = 1.0f + (float)((r * 11 + b * b * 5) % 23);
            sum += p[r * BINS + b];
        }
        for (int b = 0; b < BINS; b++)
            p[r * BINS + b] /= sum;
    }
    row_entropy(ROWS, p, h);
    double total = 0.0, lowest = 1e9;
    for (int r = 0; r < ROWS; r++) {
        total += h[r];
        lowest = h[r] < lowest ? h[r] : lowest;
    }
    printf("total entropy %.6e bits lowest %.6f\n", total, lowest);
    free(p); free(h);
    return 0;
}
