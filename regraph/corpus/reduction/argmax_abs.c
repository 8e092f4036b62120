/* argmax_abs: the index and value of the element of largest magnitude (first one on
 * ties), as in the pivot search of Gaussian elimination. Pattern: argmax reduction. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define N 3000000

int argmax_abs(int n, const double *x) {
    int best = 0;
    double best_value = fabs(x[0]);
    for (int i = 1; i < n; i++) {
        double a = fabs(x[i]);
        if (a > best_value) {
            best_value = a;
            best = i;
        }
    }
    return best;
}

int main(void) {
    double *x = malloc(sizeof(double) * N);
    unsigned int s = 2024u;
    for (int i = 0; i < N; i++) {
        s = s * 1664525u + 1013904223u;
        x[i] = ((double)(s >> 9) / 8388608.0 - 0.5) * (1.0 + (i % 1000) * 1e-3);
    }
    int k = argmax_abs(N, x);
    x[k] = 0.0;
    int k2 = argmax_abs(N, x);
    printf("pivot %d second %d value %.9f\n", k, k2, x[k2]);
    free(x);
    return 0;
}
