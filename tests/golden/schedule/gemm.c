/* C = alpha * A * B + beta * C, loops in i, k, j order (as PolyBench writes gemm):
   isl interchanges them so that i and j form the grid and k runs in each thread. */
#include <stdio.h>

#define NI 96
#define NJ 80
#define NK 72

static double A[NI][NK], B[NK][NJ], C[NI][NJ];

static void gemm(int ni, int nj, int nk, double alpha, double beta,
                 double C[NI][NJ], double A[NI][NK], double B[NK][NJ])
{
    int i, j, k;
    for (i = 0; i < ni; i++) {
        for (j = 0; j < nj; j++)
            C[i][j] *= beta;
        for (k = 0; k < nk; k++)
            for (j = 0; j < nj; j++)
                C[i][j] += alpha * A[i][k] * B[k][j];
    }
}

int main(void)
{
    for (int i = 0; i < NI; i++)
        for (int k = 0; k < NK; k++)
            A[i][k] = (double)((i * k + 1) % 17) / 17.0;
    for (int k = 0; k < NK; k++)
        for (int j = 0; j < NJ; j++)
            B[k][j] = (double)((k * (j + 2)) % 13) / 13.0;
    for (int i = 0; i < NI; i++)
        for (int j = 0; j < NJ; j++)
            C[i][j] = (double)((i + j) % 7) / 7.0;
    gemm(NI, NJ, NK, 1.5, 1.2, C, A, B);
    double sum = 0.0;
    for (int i = 0; i < NI; i++)
        for (int j = 0; j < NJ; j++)
            sum += C[i][j];
    printf("sum=%.10e c00=%.10e c_last=%.10e\n", sum, C[0][0], C[NI - 1][NJ - 1]);
    return 0;
}
