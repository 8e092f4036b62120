/* running_max: the running maximum of a price series and the largest drawdown from it.
 * Pattern: prefix-max scan (associative, not a sum) followed by a max reduction. */
#include <stdio.h>
#include <stdlib.h>

#define N 4000000

void running_max(int n, const double *x, double *peak) {
    double m = x[0];
    for (int i = 0; i < n; i++) {
        if (x[i] > m) m = x[i];
        peak[i] = m;
    }
}

double max_drawdown(int n, const double *x, const double *peak) {
    double worst = 0.0;
    for (int i = 0; i < n; i++) {
        double d = (peak[i] - x[i]) / peak[i];
        if (d > worst) worst = d;
    }
    return worst;
}

int main(void) {
    double *x = malloc(sizeof(double) * N), *peak = malloc(sizeof(double) * N);
    double price = 100.0;
    for (int i = 0; i < N; i++) {
        price *= 1.0 + ((double)((unsigned)i * 7907u % 2001u) - 1000.0) * 1e-5 + 1.7e-5;
        x[i] = price;
    }
    running_max(N, x, peak);
    printf("final peak %.6f drawdown %.8f\n", peak[N - 1], max_drawdown(N, x, peak));
    free(x); free(peak);
    return 0;
}
