#include <stdio.h>
#include <stdlib.h>

/* C = A * B^T on a band of outputs only (the guard inside a rectangular nest), the rest
   of C left as it was; sizes that are not multiples of any tile */
void band_product(int n, int m, int p, float alpha, const float *a, const float *b, float *c)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < p; j++)
            if (j <= i + 3 && i - j < 70) {
                float sum = 0.0f;
                for (int k = 0; k < m; k++)
                    sum += a[i * m + k] * b[j * m + k];
                c[i * p + j] = alpha * sum + c[i * p + j];
            }
}

int main(void)
{
    int n = 150, m = 45, p = 130;
    float *a = (float *)malloc(sizeof(float) * n * m);
    float *b = (float *)malloc(sizeof(float) * p * m);
    float *c = (float *)malloc(sizeof(float) * n * p);
    for (int i = 0; i < n * m; i++)
        a[i] = (float)((i * 7) % 13) * 0.125f;
    for (int i = 0; i < p * m; i++)
        b[i] = (float)((i * 5) % 11) * 0.25f - 1.0f;
    for (int i = 0; i < n * p; i++)
        c[i] = (float)(i % 9) - 4.0f;
    /* 40 x 30 outputs: one block, so the wide tiles' path; then the narrow tiles' grid */
    band_product(40, m, 30, 0.25f, a, b, c);
    band_product(n, m, p, 0.5f, a, b, c);
    double sum = 0.0, weighted = 0.0;
    for (int i = 0; i < n * p; i++) {
        sum += c[i];
        weighted += c[i] * (i % 7);
    }
    printf("sum=%.6e weighted=%.6e c[0]=%.4f c[last]=%.4f c[mid]=%.4f\n", sum, weighted, c[0],
           c[n * p - 1], c[75 * p + 40]);
    free(a);
    free(b);
    free(c);
    return 0;
}
