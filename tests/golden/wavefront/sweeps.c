/* In-place Gauss-Seidel sweeps on a flattened grid and a DP table (minimum-cost path
   from the north, west and north-west cells) on a 2-D array. */
#include <stdio.h>
#include <stdlib.h>

#define M 300

void sweep(int n, float source, float *u)
{
    for (int i = 1; i < n - 1; i++)
        for (int j = 1; j < n - 1; j++)
            u[i * n + j] = 0.25f * (u[(i - 1) * n + j] + u[(i + 1) * n + j] + u[i * n + j - 1] +
                                    u[i * n + j + 1] + source);
}

void min_path(int rows, int cols, const int cost[M][M], int best[M][M])
{
    int i, j;
    for (i = 1; i < rows; i++)
        for (j = 1; j < cols; j++) {
            int up = best[i - 1][j], left = best[i][j - 1], diag = best[i - 1][j - 1];
            int low = up < left ? up : left;
            best[i][j] = cost[i][j] + (diag < low ? diag : low);
        }
}

int main(void)
{
    int n = 200;
    float *u = (float *)calloc((size_t)n * n, sizeof(float));
    for (int s = 0; s < 5; s++)
        sweep(n, 0.01f, u);
    double total = 0.0;
    for (int k = 0; k < n * n; k++)
        total += u[k];
    printf("sum=%.6e probe=%.6e\n", total, (double)u[(n / 2) * n + n / 2]);
    static int cost[M][M], best[M][M];
    unsigned int state = 1u;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < M; j++) {
            state = state * 1664525u + 1013904223u;
            cost[i][j] = (int)(state >> 27);
            best[i][j] = i == 0 || j == 0 ? i + j : 0;
        }
    min_path(M, M, cost, best);
    printf("path=%d middle=%d\n", best[M - 1][M - 1], best[M / 2][M / 3]);
    free(u);
    return 0;
}
