/* A 7-point stencil over a cube: offload and schedule map its three loops on a 3-D grid. */
#include <stdio.h>
#include <stdlib.h>

#define N 20

void diffuse(int n, float c0, float c1, const float *in, float *out)
{
    for (int i = 1; i < n - 1; i++)
        for (int j = 1; j < n - 1; j++)
            for (int k = 1; k < n - 1; k++) {
                int at = (i * n + j) * n + k;
                out[at] = c0 * in[at] + c1 * (in[at - 1] + in[at + 1] + in[at - n] + in[at + n] +
                                              in[at - n * n] + in[at + n * n]);
            }
}

int main(void)
{
    float *a = (float *)malloc(sizeof(float) * N * N * N);
    float *b = (float *)malloc(sizeof(float) * N * N * N);
    for (int i = 0; i < N * N * N; i++) {
        a[i] = (float)((i * 7) % 17) / 17.0f;
        b[i] = 0.0f;
    }
    diffuse(N, 0.4f, 0.1f, a, b);
    diffuse(N, 0.4f, 0.1f, b, a);
    double sum = 0.0;
    for (int i = 0; i < N * N * N; i++)
        sum += a[i] * (1 + i % 5);
    printf("sum=%.6e a[mid]=%.6e\n", sum, (double)a[(N / 2 * N + N / 2) * N + N / 2]);
    free(a);
    free(b);
    return 0;
}
