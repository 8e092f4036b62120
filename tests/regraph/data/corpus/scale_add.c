#include <stdio.h>

#define N 4096

void scale_add(int n, const float *x, float *y, float a) {
    for (int i = 0; i < n; i++)
        y[i] = a * x[i] + y[i];
}

int main(void) {
    static float x[N], y[N];
    for (int i = 0; i < N; i++) {
        x[i] = (float)(i % 10);
        y[i] = 1.0f;
    }
    scale_add(N, x, y, 2.0f);
    double s = 0.0;
    for (int i = 0; i < N; i++)
        s += y[i];
    printf("sum %.3f\n", s);
    return 0;
}
