/* outer_bias: rank-one update plus a column bias and a ReLU: m[i][j] = max(0, u[i]*v[j] +
 * b[j]). Pattern: 2-D nest over a static array, broadcast reads of two vectors. */
#include <stdio.h>

#define R 1024
#define C 1536

static float u[R], v[C], bias[C];
static float m[R][C];

void outer_relu(void) {
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++) {
            float x = u[i] * v[j] + bias[j];
            m[i][j] = x > 0.0f ? x : 0.0f;
        }
}

int main(void) {
    for (int i = 0; i < R; i++)
        u[i] = (float)((i % 21) - 10) * 0.1f;
    for (int j = 0; j < C; j++) {
        v[j] = (float)((j % 17) - 8) * 0.05f;
        bias[j] = (float)((j % 3) - 1) * 0.02f;
    }
    outer_relu();
    double total = 0.0;
    int positive = 0;
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++) {
            total += m[i][j];
            positive += m[i][j] > 0.0f;
        }
    printf("relu total %.6e positive %d\n", total, positive);
    return 0;
}
