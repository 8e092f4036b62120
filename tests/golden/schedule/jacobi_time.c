/* A time loop around two parallel sweeps: the time loop stays on the host around two
   2-D launches, and the arrays go to the device once for all the steps. */
#include <stdio.h>

#define N 130
#define STEPS 40

static double A[N][N], B[N][N];

static void jacobi(int tsteps, int n, double A[N][N], double B[N][N])
{
    for (int t = 0; t < tsteps; t++) {
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++)
                B[i][j] = 0.2 * (A[i][j] + A[i][j - 1] + A[i][j + 1] + A[i + 1][j] + A[i - 1][j]);
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++)
                A[i][j] = 0.2 * (B[i][j] + B[i][j - 1] + B[i][j + 1] + B[i + 1][j] + B[i - 1][j]);
    }
}

int main(void)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            A[i][j] = ((double)i * (j + 2) + 2) / N;
            B[i][j] = ((double)i * (j + 3) + 3) / N;
        }
    jacobi(STEPS, N, A, B);
    double sum = 0.0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            sum += A[i][j];
    printf("sum=%.10e a=%.10e\n", sum, A[N / 2][N / 3]);
    return 0;
}
