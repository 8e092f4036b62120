#include <stdio.h>
#include <stdlib.h>

/* G = X X^T: one array read twice, once along i and once along j (two tiles) */
void gram(int n, int d, const float *x, float *g)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            float dot = 0.0f;
            for (int k = 0; k <= d - 1; k++)
                dot += x[i * d + k] * x[j * d + k];
            g[i * n + j] = dot;
        }
}

int main(void)
{
    int n = 130, d = 23;
    float *x = (float *)malloc(sizeof(float) * n * d);
    float *g = (float *)malloc(sizeof(float) * n * n);
    for (int i = 0; i < n * d; i++)
        x[i] = ((i * 13) % 23) * 0.125f - 1.0f;
    gram(n, d, x, g);
    double trace = 0.0, sum = 0.0;
    for (int i = 0; i < n; i++) {
        trace += g[i * n + i];
        for (int j = 0; j < n; j++)
            sum += g[i * n + j] * ((i + 2 * j) % 3);
    }
    printf("trace=%.6e weighted=%.6e\n", trace, sum);
    free(x);
    free(g);
    return 0;
}
