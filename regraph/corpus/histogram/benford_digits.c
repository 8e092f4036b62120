/* benford_digits: leading-digit histogram of a multiplicative sequence of positive
 * numbers (Benford's law). Pattern: histogram whose bin needs a short loop to compute. */
#include <stdio.h>
#include <stdlib.h>

#define N 3000000

static int leading_digit(double x) {
    while (x >= 10.0) x /= 10.0;
    while (x < 1.0) x *= 10.0;
    return (int)x;
}

static long counts[10];

void digit_histogram(int n, const double *values) {
    for (int i = 0; i < n; i++)
        counts[leading_digit(values[i])]++;
}

int main(void) {
    double *values = malloc(sizeof(double) * N);
    double x = 1.0;
    for (int i = 0; i < N; i++) {
        x *= 1.0 + (double)((i * 7) % 23) / 97.0;
        if (x > 1e12) x /= 1e11;
        values[i] = x;
    }
    digit_histogram(N, values);
    for (int d = 1; d <= 9; d++)
        printf("%d:%ld ", d, counts[d]);
    printf("\n");
    free(values);
    return 0;
}
