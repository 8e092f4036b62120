#include <math.h>
#include <stdio.h>

#define N 45
#define M 70

static double a[M][N];
static double b[N][M];

/* b = f(a^T) on fixed-size 2-D arrays: the store walks j, the x loop, and the read walks
   i, so here the read is the strided access; the element is read twice. */
void root_transpose(double shift)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            b[i][j] = sqrt(a[j][i] + shift) - 0.25 * a[j][i];
}

int main(void)
{
    for (int j = 0; j < M; j++)
        for (int i = 0; i < N; i++)
            a[j][i] = (double)((j * 13 + i * 7) % 29) + 0.5;
    root_transpose(1.0);
    double sum = 0.0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            sum += b[i][j] * ((i + 3 * j) % 5 + 1);
    printf("b[0][0]=%.6f b[1][0]=%.6f b[0][1]=%.6f b[N-1][M-1]=%.6f weighted=%.9e\n", b[0][0],
           b[1][0], b[0][1], b[N - 1][M - 1], sum);
    return 0;
}
