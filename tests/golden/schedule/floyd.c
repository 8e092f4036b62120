/* Floyd-Warshall: at a fixed k, (i, j) reads path[i][k] and path[k][j], which (i, k) and
   (k, j) write, so isl finds no parallel loop inside k. Each k step runs as one 2-D launch
   that reads a snapshot and checks that the pivot row and column keep their values; with
   a negative diagonal entry they change, and that step reruns in order. */
#include <stdio.h>

#define N 120

static int path[N][N];

static void floyd(int n, int path[N][N])
{
    for (int k = 0; k < n; k++)
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                path[i][j] = path[i][j] < path[i][k] + path[k][j] ? path[i][j]
                                                                  : path[i][k] + path[k][j];
}

static void fill(int negative)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            path[i][j] = i == j ? 0 : (i * 7 + j * 13) % 23 + 1;
    if (negative)
        path[N - 1][N - 1] = -1; /* a negative cycle the last step finds: no overflow */
}

static void print(const char *what)
{
    long sum = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            sum += (long)path[i][j] * (1 + (i + 2 * j) % 5);
    printf("%s: sum=%ld first=%d last=%d\n", what, sum, path[0][N - 1], path[N - 1][0]);
}

int main(void)
{
    fill(0);
    floyd(N, path);
    print("shortest paths");
    fill(1);
    floyd(N, path);
    print("with a negative cycle");
    return 0;
}
