/* Work split over functions as PolyBench splits it: main calls an initialisation, the
   computation (y = A^T (A x), atax) and a printer. After `schedule`, `data_residency`
   opens one scope in main around the two calls, so the arrays the initialisation writes
   on the device stay there for the computation, and only the printer's barrier copies
   anything back. */
#include <stdio.h>
#include <stdlib.h>

#define M 90
#define N 110

static void init_array(int m, int n, double A[M][N], double x[N])
{
    int i, j;
    for (i = 0; i < n; i++)
        x[i] = 1 + (i / (double)n);
    for (i = 0; i < m; i++)
        for (j = 0; j < n; j++)
            A[i][j] = (double)((i + j) % n) / (5 * m);
}

static void kernel_atax(int m, int n, double A[M][N], double x[N], double y[N], double tmp[M])
{
    int i, j;
    for (i = 0; i < n; i++)
        y[i] = 0;
    for (i = 0; i < m; i++) {
        tmp[i] = 0.0;
        for (j = 0; j < n; j++)
            tmp[i] = tmp[i] + A[i][j] * x[j];
        for (j = 0; j < n; j++)
            y[j] = y[j] + A[i][j] * tmp[i];
    }
}

static void print_array(int n, double y[N])
{
    double sum = 0.0;
    for (int i = 0; i < n; i++)
        sum += y[i];
    printf("sum=%.10e y0=%.10e y_last=%.10e\n", sum, y[0], y[n - 1]);
}

int main(void)
{
    double (*A)[M][N] = (double (*)[M][N])malloc(sizeof(double) * M * N);
    double (*x)[N] = (double (*)[N])malloc(sizeof(double) * N);
    double (*y)[N] = (double (*)[N])malloc(sizeof(double) * N);
    double (*tmp)[M] = (double (*)[M])malloc(sizeof(double) * M);
    init_array(M, N, *A, *x);
    kernel_atax(M, N, *A, *x, *y, *tmp);
    print_array(N, *y);
    free(A);
    free(x);
    free(y);
    free(tmp);
    return 0;
}
