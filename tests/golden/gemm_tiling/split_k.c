#include <stdio.h>
#include <stdlib.h>

/* Few outputs, a long k: C = A^T * B (both read down columns), and a double product that
   starts each output from a bias and subtracts. Few tiles for the GPU's multiprocessors,
   so k is split over several blocks of each tile. */
void cross(int k, int m, int n, const float *a, const float *b, float *c)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            float sum = 0.0f;
            for (int p = 0; p < k; p++)
                sum += a[p * m + i] * b[p * n + j];
            c[i * n + j] = 0.5f * sum;
        }
}

void residual(int k, int m, int n, const double *x, const double *y, const double *bias,
              double *r)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double acc = bias[j] * 2.0;
            for (int p = 0; p < k; p++)
                acc -= x[i * k + p] * y[p * n + j];
            r[i * n + j] = acc;
        }
}

/* two sums per output, one written X = X + E and starting at one */
void moments(int k, int m, int n, const float *a, const float *b, float *s1, float *s2)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            float s = 0.0f;
            float t = 1.0f;
            for (int p = 0; p < k; p++) {
                s += a[p * m + i] * b[p * n + j];
                t = t + 0.25f * a[p * m + i] * b[p * n + j];
            }
            s1[i * n + j] = s;
            s2[i * n + j] = t - s;
        }
}

int main(void)
{
    int k = 700, m = 40, n = 72;
    float *a = (float *)malloc(sizeof(float) * k * m);
    float *b = (float *)malloc(sizeof(float) * k * n);
    float *c = (float *)malloc(sizeof(float) * m * n);
    double *x = (double *)malloc(sizeof(double) * m * k);
    double *y = (double *)malloc(sizeof(double) * k * n);
    double *bias = (double *)malloc(sizeof(double) * n);
    double *r = (double *)malloc(sizeof(double) * m * n);
    float *s1 = (float *)malloc(sizeof(float) * m * n);
    float *s2 = (float *)malloc(sizeof(float) * m * n);
    for (int i = 0; i < k * m; i++)
        a[i] = (float)((i * 7) % 13) * 0.125f - 0.5f;
    for (int i = 0; i < k * n; i++)
        b[i] = (float)((i * 5) % 11) * 0.25f - 1.0f;
    for (int i = 0; i < m * k; i++)
        x[i] = (double)((i * 3) % 17) * 0.0625 - 0.25;
    for (int i = 0; i < k * n; i++)
        y[i] = (double)((i * 11) % 7) * 0.5 - 1.5;
    for (int j = 0; j < n; j++)
        bias[j] = (double)j * 0.75;
    /* twice, on other data the second time: each launch leaves the tiles' arrival counts
       as it found them */
    cross(k, m, n, a, b, c);
    double first = 0.0;
    for (int i = 0; i < m * n; i++)
        first += c[i] * (i % 3);
    for (int i = 0; i < k * n; i++)
        b[i] = 0.5f - b[i];
    cross(k, m, n, a, b, c);
    residual(k, m, n, x, y, bias, r);
    moments(k, m, n, a, b, s1, s2);
    double msum = 0.0;
    for (int i = 0; i < m * n; i++)
        msum += s1[i] * (i % 3) + s2[i];
    printf("msum=%.6e s2[0]=%.5f\n", msum, s2[0]);
    free(s1);
    free(s2);
    double sum = 0.0, weighted = 0.0, rsum = 0.0;
    for (int i = 0; i < m * n; i++) {
        sum += c[i];
        weighted += c[i] * (i % 7);
        rsum += r[i] * (i % 5);
    }
    printf("first=%.6e\n", first);
    printf("sum=%.6e weighted=%.6e c[0]=%.4f c[last]=%.4f\n", sum, weighted, c[0], c[m * n - 1]);
    printf("rsum=%.6e r[0]=%.6f r[last]=%.6f\n", rsum, r[0], r[m * n - 1]);
    free(a);
    free(b);
    free(c);
    free(x);
    free(y);
    free(bias);
    free(r);
    return 0;
}
