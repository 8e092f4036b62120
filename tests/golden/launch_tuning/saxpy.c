#include <stdio.h>
#include <stdlib.h>

/* y = a * x + y over n elements */
void saxpy(int n, float a, const float *x, float *y)
{
    for (int i = 0; i < n; i++) {
        y[i] = a * x[i] + y[i];
    }
}

int main(void)
{
    int n = 1 << 20;
    float *x = malloc(n * sizeof(float));
    float *y = malloc(n * sizeof(float));
    for (int i = 0; i < n; i++) {
        x[i] = (float)(i % 1000) * 0.5f;
        y[i] = (float)(i % 7);
    }
    saxpy(n, 2.5f, x, y);
    double sum = 0.0;
    for (int i = 0; i < n; i++)
        sum += y[i];
    printf("y[0]=%.3f y[n-1]=%.3f sum=%.6e\n", y[0], y[n - 1], sum);
    free(x);
    free(y);
    return 0;
}
