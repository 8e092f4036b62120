/* cumulative_trapezoid: the cumulative integral of sampled velocity by the trapezoid rule
 * (positions over time) on a non-uniform time grid. Pattern: a map (trapezoid areas)
 * feeding an inclusive floating-point scan. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define N 2000000

void cumulative_trapezoid(int n, const double *t, const double *v, double *pos) {
    pos[0] = 0.0;
    for (int i = 1; i < n; i++)
        pos[i] = pos[i - 1] + 0.5 * (v[i] + v[i - 1]) * (t[i] - t[i - 1]);
}

int main(void) {
    double *t = malloc(sizeof(double) * N), *v = malloc(sizeof(double) * N);
    double *pos = malloc(sizeof(double) * N);
    double now = 0.0;
    for (int i = 0; i < N; i++) {
        now += 1e-5 * (1.0 + (i % 3));
        t[i] = now;
        v[i] = sin(now) + 0.5 * cos(3.0 * now);
    }
    cumulative_trapezoid(N, t, v, pos);
    double mean = 0.0;
    for (int i = 0; i < N; i++)
        mean += pos[i];
    printf("final position %.10f mean %.10f\n", pos[N - 1], mean / N);
    free(t); free(v); free(pos);
    return 0;
}
