/* CSR sparse matrix times vector: val and col are read between row_ptr[i] and
   row_ptr[i + 1], so their extents come from a host inspector over the rows. */
#include <stdio.h>
#include <stdlib.h>

static void spmv(int n, const int *row_ptr, const int *col, const double *val,
                 const double *x, double *y)
{
    for (int i = 0; i < n; i++) {
        double sum = 0.0;
        for (int k = row_ptr[i]; k < row_ptr[i + 1]; k++)
            sum += val[k] * x[col[k]];
        y[i] = sum;
    }
}

int main(void)
{
    int n = 3000;
    int *row_ptr = (int *)malloc((n + 1) * sizeof(int));
    int nnz = 0;
    for (int i = 0; i <= n; i++) {
        row_ptr[i] = nnz;
        nnz += 1 + i % 7;
    }
    nnz = row_ptr[n];
    int *col = (int *)malloc(nnz * sizeof(int));
    double *val = (double *)malloc(nnz * sizeof(double));
    double *x = (double *)malloc(n * sizeof(double));
    double *y = (double *)malloc(n * sizeof(double));
    unsigned int state = 7u;
    for (int k = 0; k < nnz; k++) {
        state = state * 1664525u + 1013904223u;
        col[k] = (int)(state % (unsigned)n);
        val[k] = (double)(state >> 20) / 4096.0;
    }
    for (int i = 0; i < n; i++)
        x[i] = 1.0 / (i + 1);
    spmv(n, row_ptr, col, val, x, y);
    double total = 0.0;
    for (int i = 0; i < n; i++)
        total += y[i];
    printf("total=%.9e y0=%.9e y_last=%.9e\n", total, y[0], y[n - 1]);
    return 0;
}
