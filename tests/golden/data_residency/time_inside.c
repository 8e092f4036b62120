#include <stdio.h>

#define LEN 4096
#define STEPS 50

/* Jacobi relaxation: the time loop stays on the host, its two sweeps run as kernels; the
   scope goes around the time loop inside the function. */
void relax(int steps, int n, double *u, double *v)
{
    for (int t = 0; t < steps; t++) {
        for (int i = 1; i < n - 1; i++)
            v[i] = 0.5 * (u[i - 1] + u[i + 1]) + 0.001 * t;
        for (int i = 1; i < n - 1; i++)
            u[i] = v[i];
    }
}

int main(void)
{
    static double u[LEN], v[LEN];
    for (int i = 0; i < LEN; i++)
        u[i] = (i % 64 == 0) ? 100.0 : 0.0;
    relax(STEPS, LEN, u, v);
    double sum = 0.0;
    for (int i = 0; i < LEN; i++)
        sum += u[i] * (1 + i % 3);
    printf("u[1]=%.6f u[LEN/2]=%.6f sum=%.6e\n", u[1], u[LEN / 2], sum);
    return 0;
}
