/* lower_tri_matvec: y = L * x for a lower-triangular matrix in packed row storage (row i
 * holds i+1 entries starting at i*(i+1)/2). Pattern: parallel rows of unequal length
 * (triangular loop bounds) with an inner reduction. */
#include <stdio.h>
#include <stdlib.h>

#define N 3000

void packed_lower_matvec(int n, const double *packed, const double *x, double *y) {
    for (int i = 0; i < n; i++) {
        const double *row = packed + (long)i * (i + 1) / 2;
        double s = 0.0;
        for (int j = 0; j <= i; j++)
            s += row[j] * x[j];
        y[i] = s;
    }
}

int main(void) {
    long size = (long)N * (N + 1) / 2;
    double *packed = malloc(sizeof(double) * size);
    double *x = malloc(sizeof(double) * N), *y = malloc(sizeof(double) * N);
    for (long k = 0; k < size; k++)
        packed[k] = (double)(k % 19) / 19.0 - 0.4;
    for (int j = 0; j < N; j++)
        x[j] = 1.0 / (1.0 + j);
    packed_lower_matvec(N, packed, x, y);
    double total = 0.0, last = y[N - 1];
    for (int i = 0; i < N; i++)
        total += y[i] * (i % 2 ? 1.0 : -1.0);
    printf("alternating sum %.10e last %.10e\n", total, last);
    free(packed); free(x); free(y);
    return 0;
}
