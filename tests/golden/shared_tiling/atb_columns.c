#include <stdio.h>
#include <stdlib.h>

/* C = A^T B: both operands are read down their columns (unit stride along i and j) */
void atb(int k, int m, int n, const double *a, const double *b, double *c)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double sum = 0.0;
            for (int p = 0; p < k; p++)
                sum += a[p * m + i] * b[p * n + j];
            c[i * n + j] = sum;
        }
}

int main(void)
{
    int k = 45, m = 33, n = 50;
    double *a = (double *)malloc(sizeof(double) * k * m);
    double *b = (double *)malloc(sizeof(double) * k * n);
    double *c = (double *)malloc(sizeof(double) * m * n);
    for (int i = 0; i < k * m; i++)
        a[i] = ((i * 3) % 17) * 0.5 - 2.0;
    for (int i = 0; i < k * n; i++)
        b[i] = ((i * 11) % 19) * 0.25;
    atb(k, m, n, a, b, c);
    double sum = 0.0, weighted = 0.0;
    for (int i = 0; i < m * n; i++) {
        sum += c[i];
        weighted += c[i] * (i % 5);
    }
    printf("sum=%.8e weighted=%.8e c[7]=%.6f\n", sum, weighted, c[7]);
    free(a);
    free(b);
    free(c);
    return 0;
}
