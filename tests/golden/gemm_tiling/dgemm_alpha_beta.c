#include <stdio.h>
#include <stdlib.h>

/* C = alpha * A * B^T + beta * C in double: B is stored column-major for the product
   (b[j * nk + k]), C accumulates in memory, sizes are not multiples of any tile. */
void dgemm(int ni, int nj, int nk, double alpha, double beta, const double *a, const double *b,
           double *c)
{
    for (int i = 0; i < ni; i++)
        for (int j = 0; j < nj; j++) {
            c[i * nj + j] *= beta;
            for (int k = 0; k < nk; k++)
                c[i * nj + j] += alpha * a[i * nk + k] * b[j * nk + k];
        }
}

int main(void)
{
    int ni = 70, nj = 45, nk = 37;
    double *a = (double *)malloc(sizeof(double) * ni * nk);
    double *b = (double *)malloc(sizeof(double) * nj * nk);
    double *c = (double *)malloc(sizeof(double) * ni * nj);
    for (int i = 0; i < ni * nk; i++)
        a[i] = (double)((i * 7) % 13) / 13.0;
    for (int i = 0; i < nj * nk; i++)
        b[i] = (double)((i * 5) % 11) / 11.0 - 0.5;
    for (int i = 0; i < ni * nj; i++)
        c[i] = (double)(i % 17) / 17.0;
    dgemm(ni, nj, nk, 1.5, 1.2, a, b, c);
    double sum = 0.0, weighted = 0.0;
    for (int i = 0; i < ni * nj; i++) {
        sum += c[i];
        weighted += c[i] * (i % 7);
    }
    printf("sum=%.10e weighted=%.10e c[0]=%.10f c[last]=%.10f\n", sum, weighted, c[0],
           c[ni * nj - 1]);
    free(a);
    free(b);
    free(c);
    return 0;
}
