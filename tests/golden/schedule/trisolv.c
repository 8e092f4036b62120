/* Forward substitution: each x[i] needs every earlier x[j], so i stays on the host; the
   sum over j of one row runs in parallel, with atomic adds into x[i]. */
#include <stdio.h>

#define N 400

static double L[N][N], b[N], x[N];

static void trisolv(int n, double L[N][N], double x[N], double b[N])
{
    for (int i = 0; i < n; i++) {
        x[i] = b[i];
        for (int j = 0; j < i; j++)
            x[i] -= L[i][j] * x[j];
        x[i] = x[i] / L[i][i];
    }
}

int main(void)
{
    for (int i = 0; i < N; i++) {
        b[i] = (double)(i % 11) - 5.0;
        for (int j = 0; j <= i; j++)
            L[i][j] = (i == j) ? 4.0 + (double)(i % 3) : (double)((i + j) % 5) / (20.0 * N);
    }
    trisolv(N, L, x, b);
    double sum = 0.0;
    for (int i = 0; i < N; i++)
        sum += x[i] * (1 + i % 4);
    printf("sum=%.10e x0=%.10e x_last=%.10e\n", sum, x[0], x[N - 1]);
    return 0;
}
