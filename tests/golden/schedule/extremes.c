/* Statistics in one pass: a sum, a float maximum (if form), a double minimum (fmin) and an
   int maximum (conditional form) over one array. Each keeps one scalar that every thread
   updates: per-thread registers, warp shuffles, one atomic per warp. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define N 20000

static void stats(const float *x, int n, double *total, float *peak, double *low, int *widest)
{
    double s = 0.0;
    float p = -1.0f;
    double m = 1e300;
    int w = 0;
    for (int i = 0; i < n; i++) {
        s += x[i];
        if (x[i] > p)
            p = x[i];
        m = fmin(m, (double)x[i] * 0.5);
        w = (i % 977) > w ? (i % 977) : w;
    }
    *total = s;
    *peak = p;
    *low = m;
    *widest = w;
}

int main(void)
{
    float *x = (float *)malloc(sizeof(float) * N);
    for (int i = 0; i < N; i++)
        x[i] = (float)((i * 7919) % 10007) * 0.01f - 20.0f;
    double total, low;
    float peak;
    int widest;
    stats(x, N, &total, &peak, &low, &widest);
    printf("total=%.6e peak=%.6e low=%.6e widest=%d\n", total, (double)peak, low, widest);
    free(x);
    return 0;
}
