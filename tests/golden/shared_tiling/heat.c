#include <stdio.h>
#include <stdlib.h>

/* a 1-D three-point stencil over a flat array whose length is not a multiple of any block */
void heat(int n, double alpha, const double *u, double *next)
{
    for (int i = 1; i < n - 1; i++)
        next[i] = u[i] + alpha * (u[i - 1] - 2.0 * u[i] + u[i + 1]);
}

int main(void)
{
    int n = 5003;
    double *u = (double *)malloc(sizeof(double) * n);
    double *next = (double *)malloc(sizeof(double) * n);
    for (int i = 0; i < n; i++)
        u[i] = next[i] = (i % 100 < 10) ? 50.0 : 1.0;
    for (int step = 0; step < 4; step++) {
        heat(n, 0.25, u, next);
        double *t = u;
        u = next;
        next = t;
    }
    double total = 0.0;
    for (int i = 0; i < n; i++)
        total += u[i] * (i % 3);
    printf("total=%.8e u[1]=%.6f u[n/2]=%.6f\n", total, u[1], u[n / 2]);
    free(u);
    free(next);
    return 0;
}
