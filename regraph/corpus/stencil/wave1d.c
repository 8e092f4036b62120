/* wave1d: the 1-D wave equation by leapfrog: u_next = 2u - u_prev + c^2 (u[i-1] - 2u[i] +
 * u[i+1]), fixed ends, three rotating buffers. Pattern: 1-D stencil inside a time loop. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define N 200000
#define STEPS 300

void wave_step(int n, double c2, const double *prev, const double *cur, double *next) {
    for (int i = 1; i < n - 1; i++)
        next[i] = 2.0 * cur[i] - prev[i] + c2 * (cur[i - 1] - 2.0 * cur[i] + cur[i + 1]);
    next[0] = 0.0;
    next[n - 1] = 0.0;
}

int main(void) {
    double *a = calloc(N, sizeof(double)), *b = calloc(N, sizeof(double));
    double *c = calloc(N, sizeof(double));
    for (int i = 0; i < N; i++) {
        double x = (double)(i - N / 3) / 500.0;
        a[i] = b[i] = exp(-x * x);
    }
    for (int t = 0; t < STEPS; t++) {
        wave_step(N, 0.25, a, b, c);
        double *tmp = a;
        a = b;
        b = c;
        c = tmp;
    }
    double energy = 0.0, peak = 0.0;
    for (int i = 0; i < N; i++) {
        energy += b[i] * b[i];
        if (fabs(b[i]) > peak) peak = fabs(b[i]);
    }
    printf("energy %.8e peak %.8f\n", energy, peak);
    free(a); free(b); free(c);
    return 0;
}
