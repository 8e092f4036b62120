#include <stdio.h>
#include <stdlib.h>

/* C = alpha * A^T * B + beta * C in float: A is stored column-major (a[k * m + i]), the
   alpha/beta scaling is in the epilogue, sizes are not multiples of any tile. */
void sgemm_tn(int m, int n, int p, float alpha, float beta, const float *a, const float *b,
              float *c)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            float acc = 0.0f;
            for (int k = 0; k < p; k++)
                acc += a[k * m + i] * b[k * n + j];
            c[i * n + j] = alpha * acc + beta * c[i * n + j];
        }
}

int main(void)
{
    int m = 133, n = 61, p = 29;
    float *a = (float *)malloc(sizeof(float) * p * m);
    float *b = (float *)malloc(sizeof(float) * p * n);
    float *c = (float *)malloc(sizeof(float) * m * n);
    for (int i = 0; i < p * m; i++)
        a[i] = (float)((i * 3) % 19) * 0.0625f;
    for (int i = 0; i < p * n; i++)
        b[i] = (float)((i * 11) % 7) * 0.5f - 1.5f;
    for (int i = 0; i < m * n; i++)
        c[i] = (float)(i % 5) * 0.25f;
    sgemm_tn(m, n, p, 0.75f, -0.5f, a, b, c);
    double sum = 0.0, weighted = 0.0;
    for (int i = 0; i < m * n; i++) {
        sum += c[i];
        weighted += c[i] * (i % 7);
    }
    printf("sum=%.6e weighted=%.6e c[0]=%.4f c[last]=%.4f\n", sum, weighted, c[0], c[m * n - 1]);
    free(a);
    free(b);
    free(c);
    return 0;
}
