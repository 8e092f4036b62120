/* One scalar, two nests, each using it as its own temporary: each nest keeps its copy in
   a register of each thread (row sums, then column sums). */
#include <stdio.h>

#define N 300
#define M 200

static double A[N][M], rows[N], cols[M];

static void sums(int n, int m, double A[N][M], double rows[N], double cols[M])
{
    double t;
    for (int i = 0; i < n; i++) {
        t = 0.0;
        for (int j = 0; j < m; j++)
            t += A[i][j];
        rows[i] = t;
    }
    for (int j = 0; j < m; j++) {
        t = 0.0;
        for (int i = 0; i < n; i++)
            t += A[i][j] * A[i][j];
        cols[j] = t;
    }
}

int main(void)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            A[i][j] = (double)((i * 31 + j * 17) % 101) / 101.0;
    sums(N, M, A, rows, cols);
    double r = 0.0, c = 0.0;
    for (int i = 0; i < N; i++)
        r += rows[i] * (i % 5);
    for (int j = 0; j < M; j++)
        c += cols[j] * (j % 3);
    printf("r=%.10e c=%.10e\n", r, c);
    return 0;
}
