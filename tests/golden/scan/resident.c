/* Scans called every round of a time loop: an inclusive accumulator scan whose result is
   the next round's input (the pointers swap), and a linear recurrence on the output's
   previous element, whose starting value x[0] the host sets once. After `scan`,
   `data_residency` keeps every array on the device across the rounds. */
#include <stdio.h>
#include <stdlib.h>

#define N 3000
#define ROUNDS 3

void running(int n, const double *in, double *out)
{
    double acc = 0.0;
    for (int i = 0; i < n; i++) {
        acc += in[i];
        out[i] = acc;
    }
}

void smooth(int n, const double *a, const double *b, double *x)
{
    for (int i = 1; i < n; i++)
        x[i] = a[i] * x[i - 1] + b[i];
}

int main(void)
{
    double *v = (double *)malloc(sizeof(double) * N);
    double *s = (double *)malloc(sizeof(double) * N);
    double *a = (double *)malloc(sizeof(double) * N);
    double *x = (double *)malloc(sizeof(double) * N);
    unsigned int state = 11u;
    for (int i = 0; i < N; i++) {
        state = state * 1664525u + 1013904223u;
        v[i] = (double)(state >> 8) / 16777216.0;
        a[i] = 0.5 + 0.4 * (double)(state >> 20) / 4096.0;
    }
    x[0] = 1.0;
    for (int r = 0; r < ROUNDS; r++) {
        running(N, v, s);
        double *t = v;
        v = s;
        s = t;
        smooth(N, a, v, x);
    }
    printf("v: %.6e %.6e %.6e\n", v[0], v[N / 2], v[N - 1]);
    printf("x: %.6e %.6e %.6e\n", x[1], x[N / 3], x[N - 1]);
    free(v);
    free(s);
    free(a);
    free(x);
    return 0;
}
