#include <stdio.h>
#include <stdlib.h>

/* y = A x for a row-major n x n matrix: one thread per row, the dot product stays
   sequential inside the thread */
void matvec(int n, const float *A, const float *x, float *y)
{
    for (int i = 0; i < n; i++) {
        float sum = 0.0f;
        for (int j = 0; j < n; j++)
            sum += A[i * n + j] * x[j];
        y[i] = sum;
    }
}

int main(void)
{
    int n = 1500;
    float *A = malloc((size_t)n * n * sizeof(float));
    float *x = malloc(n * sizeof(float));
    float *y = malloc(n * sizeof(float));
    for (int i = 0; i < n; i++) {
        x[i] = (i % 10) * 0.1f;
        for (int j = 0; j < n; j++)
            A[i * n + j] = ((i + 2 * j) % 17) * 0.01f;
    }
    matvec(n, A, x, y);
    double sum = 0.0;
    for (int i = 0; i < n; i++)
        sum += y[i];
    printf("y[0]=%.4f y[n-1]=%.4f sum=%.6e\n", y[0], y[n - 1], sum);
    free(A);
    free(x);
    free(y);
    return 0;
}
