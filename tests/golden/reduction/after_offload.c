/* A parallel loop (offload's) and a reduction over its result in one function. */
#include <stdio.h>
#include <stdlib.h>

double scale_and_sum(int n, double a, double *x)
{
    for (int i = 0; i < n; i++)
        x[i] = a * x[i] + 1.0;
    double total = 0.0;
    for (int i = 0; i < n; i++)
        total += x[i];
    return total;
}

int main(void)
{
    int n = 50000;
    double *x = (double *)malloc(sizeof(double) * n);
    for (int i = 0; i < n; i++)
        x[i] = (double)(i % 97) / 97.0;
    printf("total=%.6e\n", scale_and_sum(n, 0.5, x));
    printf("x[7]=%.6e\n", x[7]);
    free(x);
    return 0;
}
