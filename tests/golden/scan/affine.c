/* A first-order linear recurrence x[i] = a[i] * x[i-1] + b[i] (exponential smoothing),
   scanned as a composition of affine maps. */
#include <stdio.h>
#include <stdlib.h>

void smooth(int n, const double *a, const double *b, double *x)
{
    for (int i = 1; i < n; i++)
        x[i] = a[i] * x[i - 1] + b[i];
}

int main(void)
{
    int n = 100000;
    double *a = (double *)malloc(sizeof(double) * n);
    double *b = (double *)malloc(sizeof(double) * n);
    double *x = (double *)malloc(sizeof(double) * n);
    unsigned int state = 3u;
    for (int i = 0; i < n; i++) {
        state = state * 1664525u + 1013904223u;
        a[i] = 0.5 + 0.4 * (double)(state >> 8) / 16777216.0;
        b[i] = (double)(state >> 20) / 4096.0;
    }
    x[0] = 1.0;
    smooth(n, a, b, x);
    double sum = 0.0;
    for (int i = 0; i < n; i++)
        sum += x[i];
    printf("sum=%.6e last=%.6e x[10]=%.6e\n", sum, x[n - 1], x[10]);
    free(a);
    free(b);
    free(x);
    return 0;
}
