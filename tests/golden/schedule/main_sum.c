/* All the work in main: an initialisation, an update and a sum over malloc'ed arrays.
   The update maps to a kernel; the sum adds atomically; `a` is set on the host first. */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    int n = 50000;
    double *x = (double *)malloc(n * sizeof(double));
    double *y = (double *)malloc(n * sizeof(double));
    for (int i = 0; i < n; i++) {
        x[i] = (double)(i % 97) * 0.5;
        y[i] = (double)(i % 13);
    }
    double a = 2.5;
    for (int i = 0; i < n; i++)
        y[i] = a * x[i] + y[i];
    double sum = 0.0;
    for (int i = 0; i < n; i++)
        sum += y[i];
    printf("sum=%.9e y7=%.9e\n", sum, y[7]);
    free(x);
    free(y);
    return 0;
}
