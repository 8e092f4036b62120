#include <stdio.h>

#define N 203
#define M 130

static double a[N][M];
static double out[N][M];

/* a 2-D nest without an inner loop: a statement before the store, locals per output */
void scale(double alpha, double shift)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++) {
            double v = a[i][j] * alpha;
            double w = v * v;
            out[i][j] = w + shift * (i - j);
        }
}

int main(void)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            a[i][j] = ((i * 7 + j * 3) % 19) * 0.125 - 1.0;
    scale(1.5, 0.01);
    double sum = 0.0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            sum += out[i][j] * ((i + j) % 5);
    printf("weighted=%.8e out[N-1][M-1]=%.6f\n", sum, out[N - 1][M - 1]);
    return 0;
}
