#include <stdio.h>
#include <stdlib.h>

/* C = A * B, row-major flat arrays, sizes that are not multiples of any tile */
void matmul(int n, int m, int p, const float *a, const float *b, float *c)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < p; j++) {
            float sum = 0.0f;
            for (int k = 0; k < m; k++)
                sum += a[i * m + k] * b[k * p + j];
            c[i * p + j] = sum;
        }
}

int main(void)
{
    int n = 77, m = 53, p = 41;
    float *a = (float *)malloc(sizeof(float) * n * m);
    float *b = (float *)malloc(sizeof(float) * m * p);
    float *c = (float *)malloc(sizeof(float) * n * p);
    for (int i = 0; i < n * m; i++)
        a[i] = (float)((i * 7) % 13) * 0.125f;
    for (int i = 0; i < m * p; i++)
        b[i] = (float)((i * 5) % 11) * 0.25f - 1.0f;
    matmul(n, m, p, a, b, c);
    double sum = 0.0, weighted = 0.0;
    for (int i = 0; i < n * p; i++) {
        sum += c[i];
        weighted += c[i] * (i % 7);
    }
    printf("sum=%.6e weighted=%.6e c[0]=%.4f c[last]=%.4f\n", sum, weighted, c[0], c[n * p - 1]);
    free(a);
    free(b);
    free(c);
    return 0;
}
