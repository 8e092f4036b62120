/* upwind_advection: 1-D advection of a square pulse with a first-order upwind scheme and
 * a velocity that varies in space, periodic boundary. Pattern: 1-D stencil with a
 * data-dependent neighbour choice, inside a time loop. */
#include <stdio.h>
#include <stdlib.h>

#define N 100000
#define STEPS 400

void advect(int n, double dt_dx, const double *vel, const double *q, double *out) {
    for (int i = 0; i < n; i++) {
        int left = (i + n - 1) % n, right = (i + 1) % n;
        double v = vel[i];
        double grad = v > 0.0 ? q[i] - q[left] : q[right] - q[i];
        out[i] = q[i] - dt_dx * v * grad;
    }
}

int main(void) {
    double *q = malloc(sizeof(double) * N), *out = malloc(sizeof(double) * N);
    double *vel = malloc(sizeof(double) * N);
    for (int i = 0; i < N; i++) {
        q[i] = (i > N / 4 && i < N / 2) ? 1.0 : 0.0;
        vel[i] = (i < 3 * N / 4) ? 0.8 : -0.3;
    }
    for (int t = 0; t < STEPS; t++) {
        advect(N, 0.9, vel, q, out);
        double *tmp = q;
        q = out;
        out = tmp;
    }
    double mass = 0.0, centre = 0.0;
    for (int i = 0; i < N; i++) {
        mass += q[i];
        centre += q[i] * i;
    }
    printf("mass %.8e centre %.6f\n", mass, centre / mass);
    free(q); free(out); free(vel);
    return 0;
}
