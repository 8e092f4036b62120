/* restrict-qualified pointers, which C++ spells __restrict__. */
#include <stdio.h>

static void saxpy(int n, float a, const float *restrict x, float *restrict y) {
    for (int i = 0; i < n; i++)
        y[i] = a * x[i] + y[i];
}

int main(void) {
    float x[8], y[8];
    float *restrict px = x;
    for (int i = 0; i < 8; i++) {
        px[i] = (float)i;
        y[i] = 1.0f;
    }
    saxpy(8, 2.0f, x, y);
    for (int i = 0; i < 8; i++)
        printf("%.1f ", y[i]);
    printf("\n");
    return 0;
}
