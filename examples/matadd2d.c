/* matadd2d: c[i][j] = sqrt(a[i][j]) * b[i][j] + i - j on static 2048x2048 arrays. */
#include <math.h>
#include <stdio.h>

#define N 2048
static double a[N][N], b[N][N], c[N][N];

void combine(void) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            c[i][j] = sqrt(a[i][j]) * b[i][j] + (double)(i - j);
}

int main(void) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            a[i][j] = (double)((i * 7 + j * 3) % 101);
            b[i][j] = 1.0 + (double)((i + j) % 13) * 0.25;
        }
    combine();
    double trace = 0.0, total = 0.0;
    for (int i = 0; i < N; i++) {
        trace += c[i][i];
        for (int j = 0; j < N; j++)
            total += c[i][j];
    }
    printf("trace = %.6e total = %.6e\n", trace, total);
    return 0;
}
