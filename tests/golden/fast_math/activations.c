#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define LEN 300000

static float softplus(float v)
{
    return logf(1.0f + expf(v));
}

/* float math in the loop body (intrinsics) and in a helper the host calls too (kept) */
void activate(int n, const float *x, float *y, float *z)
{
    for (int i = 0; i < n; i++) {
        y[i] = sinf(x[i]) * expf(-0.5f * x[i]) + powf(x[i], 1.5f) + softplus(x[i]);
        z[i] = 1.0f / sqrtf(x[i] + 1.0f) + cosf(x[i]);
    }
}

int main(void)
{
    float *x = (float *)malloc(sizeof(float) * LEN);
    float *y = (float *)malloc(sizeof(float) * LEN);
    float *z = (float *)malloc(sizeof(float) * LEN);
    for (int i = 0; i < LEN; i++)
        x[i] = (float)(i % 1000) * 0.004f;
    activate(LEN, x, y, z);
    double a = 0.0, b = 0.0;
    for (int i = 0; i < LEN; i++) {
        a += y[i];
        b += z[i];
    }
    printf("y=%.5e z=%.5e softplus(1)=%.5f\n", a, b, softplus(1.0f));
    free(x);
    free(y);
    free(z);
    return 0;
}
