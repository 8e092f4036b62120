#include <stdio.h>
#include <stdlib.h>

/* one explicit step of the heat equation on a rod; the ends stay fixed */
void step(int n, float alpha, const float *u, float *next)
{
    for (int i = 1; i < n - 1; i++)
        next[i] = u[i] + alpha * (u[i - 1] - 2.0f * u[i] + u[i + 1]);
}

int main(void)
{
    int n = 100000;
    float *u = malloc((size_t)n * sizeof(float));
    float *v = malloc((size_t)n * sizeof(float));
    for (int i = 0; i < n; i++)
        u[i] = v[i] = (i % 997 < 40) ? 50.0f : 1.0f;
    for (int t = 0; t < 20; t++) {
        step(n, 0.25f, u, v);
        float *swap = u;
        u = v;
        v = swap;
    }
    double sum = 0.0;
    for (int i = 0; i < n; i++)
        sum += u[i];
    printf("u[1]=%.5f u[500]=%.5f sum=%.6e\n", u[1], u[500], sum);
    free(u);
    free(v);
    return 0;
}
