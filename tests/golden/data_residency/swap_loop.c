#include <stdio.h>
#include <stdlib.h>

#define LEN 100000
#define STEPS 40

/* one explicit diffusion step: next = u + alpha * laplacian(u), ends fixed */
void diffuse(int n, float alpha, const float *u, float *next)
{
    for (int i = 1; i < n - 1; i++)
        next[i] = u[i] + alpha * (u[i - 1] - 2.0f * u[i] + u[i + 1]);
}

int main(void)
{
    float *u = (float *)malloc(sizeof(float) * LEN);
    float *next = (float *)malloc(sizeof(float) * LEN);
    for (int i = 0; i < LEN; i++)
        u[i] = next[i] = (i % 1000 < 50) ? 100.0f : 1.0f;
    /* the time loop only launches and swaps pointers: both buffers stay on the device */
    for (int t = 0; t < STEPS; t++) {
        diffuse(LEN, 0.25f, u, next);
        float *swap = u;
        u = next;
        next = swap;
    }
    double total = 0.0;
    for (int i = 0; i < LEN; i++)
        total += u[i];
    printf("total=%.6e u[25]=%.6e\n", total, (double)u[25]);
    free(u);
    free(next);
    return 0;
}
