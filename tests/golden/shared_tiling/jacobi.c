#include <stdio.h>

#define N 83
#define M 71

static float u[N][M];
static float v[N][M];

/* a 2-D five-point stencil on fixed-size arrays, plus an asymmetric far neighbour;
   the sweep runs inside a time loop */
void sweep(float w)
{
    for (int i = 1; i < N - 2; i++)
        for (int j = 1; j < M - 1; j++)
            v[i][j] = w * (u[i - 1][j] + u[i + 1][j] + u[i][j - 1] + u[i][j + 1]) +
                      (1.0f - 4.0f * w) * u[i][j] + 0.01f * u[i + 2][j];
}

int main(void)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            u[i][j] = ((i * 5 + j * 3) % 17) * 0.5f;
    for (int step = 0; step < 3; step++) {
        sweep(0.2f);
        for (int i = 1; i < N - 2; i++)
            for (int j = 1; j < M - 1; j++)
                u[i][j] = v[i][j];
    }
    double sum = 0.0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            sum += u[i][j] * ((i + 2 * j) % 7);
    printf("weighted=%.6e u[1][1]=%.5f u[N-3][M-2]=%.5f\n", sum, u[1][1], u[N - 3][M - 2]);
    return 0;
}
