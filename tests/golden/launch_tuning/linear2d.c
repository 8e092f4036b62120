#include <stdio.h>
#include <stdlib.h>

/* B = s * A + 1 on row-major n x m matrices addressed as A[i*m + j] */
void scale(int n, int m, double s, const double *A, double *B)
{
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < m; j++) {
            B[i * m + j] = s * A[i * m + j] + 1.0;
        }
    }
}

int main(void)
{
    int n = 700, m = 900;
    double *A = malloc((size_t)n * m * sizeof(double));
    double *B = malloc((size_t)n * m * sizeof(double));
    for (int k = 0; k < n * m; k++)
        A[k] = (k % 101) * 0.01;
    scale(n, m, 3.0, A, B);
    double sum = 0.0;
    for (int k = 0; k < n * m; k++)
        sum += B[k];
    printf("B[0]=%.3f B[last]=%.3f sum=%.6e\n", B[0], B[n * m - 1], sum);
    free(A);
    free(B);
    return 0;
}
