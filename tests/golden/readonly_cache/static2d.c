#include <stdio.h>

#define N 300
#define M 500

static double a[N][M];
static double b[N][M];
static double c[N][M];

/* c = a + 2 b, element by element, on fixed-size global matrices */
void add(void)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            c[i][j] = a[i][j] + 2.0 * b[i][j];
}

int main(void)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++) {
            a[i][j] = i * 0.25 + j;
            b[i][j] = (i - j) * 0.5;
        }
    add();
    double sum = 0.0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            sum += c[i][j] * ((i + j) % 3);
    printf("c[0][0]=%.2f c[N-1][M-1]=%.2f weighted=%.6e\n", c[0][0], c[N - 1][M - 1], sum);
    return 0;
}
