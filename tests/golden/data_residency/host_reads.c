#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define LEN 200000

/* y = a * x + sin(x): x never changes, y is read by the host after every call */
void apply(int n, float a, const float *x, float *y)
{
    for (int i = 0; i < n; i++)
        y[i] = a * x[i] + sinf(x[i]);
}

static double sum_of(const float *y, int n)
{
    double s = 0.0;
    for (int i = 0; i < n; i++)
        s += y[i];
    return s;
}

/* a running blend: each element depends on the one before, so it stays on the host */
static void blend(float *y, int n)
{
    for (int i = 1; i < n; i++)
        y[i] = 0.5f * y[i] + 0.5f * y[i - 1];
}

int main(void)
{
    float *x = (float *)malloc(sizeof(float) * LEN);
    float *y = (float *)malloc(sizeof(float) * LEN);
    for (int i = 0; i < LEN; i++)
        x[i] = (float)(i % 997) * 0.01f;
    for (int r = 0; r < 5; r++) {
        float a = 0.5f + (float)r;
        apply(LEN, a, x, y);
        /* reads y: a read barrier copies it back, x stays on the device */
        printf("a=%.2f sum=%.6e\n", a, sum_of(y, LEN));
        if (r % 2 == 1) {
            /* writes x on the host: a write barrier makes the next call copy it again */
            blend(x, LEN);
            printf("x blended\n");
        }
    }
    free(x);
    free(y);
    return 0;
}
