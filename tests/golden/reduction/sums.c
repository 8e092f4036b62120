/* Sum, sum of squares (subtracted), min and max of one array, with non-zero starting
   values, and a product; every result printed. */
#include <stdio.h>
#include <stdlib.h>

double sum_and_squares(int n, const float *x, double *squares_out)
{
    double s = 10.0, q = 1.0;
    for (int i = 0; i < n; i++) {
        s += x[i];
        q -= (double)x[i] * x[i];
    }
    *squares_out = q;
    return s;
}

float range(int n, const float *x, float *low)
{
    float lo = 0.5f, hi = -1.0f;
    for (int i = 0; i < n; i++) {
        if (x[i] < lo)
            lo = x[i];
        if (x[i] > hi)
            hi = x[i];
    }
    *low = lo;
    return hi;
}

double product(long n, const double *y)
{
    double p = 2.0;
    long i;
    for (i = 0; i < n; i++)
        p *= y[i];
    return p + (double)i;
}

int main(void)
{
    int n = 100000;
    float *x = (float *)malloc(sizeof(float) * n);
    double *y = (double *)malloc(sizeof(double) * n);
    unsigned int state = 7u;
    for (int i = 0; i < n; i++) {
        state = state * 1664525u + 1013904223u;
        x[i] = (float)(state >> 8) / 16777216.0f - 0.25f;
        y[i] = 1.0 + ((double)(state >> 20) - 2048.0) / 1.0e6;
    }
    double squares = 0.0;
    double s = sum_and_squares(n, x, &squares);
    float low = 0.0f;
    float high = range(n, x, &low);
    printf("sum=%.6e squares=%.6e\n", s, squares);
    printf("low=%.6e high=%.6e\n", (double)low, (double)high);
    printf("product=%.6e\n", product(n, y));
    printf("empty: sum=%.6e\n", sum_and_squares(0, x, &squares));
    free(x);
    free(y);
    return 0;
}
