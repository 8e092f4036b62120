/* saxpy: y = a*x + y on 2^24 floats, repeated; the hot loop is independent. */
#include <stdio.h>
#include <stdlib.h>

void saxpy(int n, float a, const float *x, float *y) {
    for (int i = 0; i < n; i++)
        y[i] = a * x[i] + y[i];
}

int main(void) {
    int n = 1 << 24;
    float *x = malloc(n * sizeof(float));
    float *y = malloc(n * sizeof(float));
    for (int i = 0; i < n; i++) {
        x[i] = (float)(i % 1000) * 0.001f;
        y[i] = 1.0f;
    }
    for (int rep = 0; rep < 10; rep++)
        saxpy(n, 0.5f, x, y);
    double sum = 0.0;
    for (int i = 0; i < n; i++)
        sum += y[i];
    printf("sum = %.6e\n", sum);
    free(x);
    free(y);
    return 0;
}
