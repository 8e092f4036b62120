#include <stdio.h>
#include <stdlib.h>
#include <math.h>

/* The nearest point to a query: an argmin whose index and x coordinate go with it. */
void nearest(int n, const double *x, const double *y, double qx, double qy,
             double *best_d, int *best_i, double *best_x) {
    double d0 = INFINITY;
    int k = -1;
    double bx = 0.0;
    for (int i = 0; i < n; i++) {
        double dx = x[i] - qx, dy = y[i] - qy;
        double d = dx * dx + dy * dy;
        if (d < d0) {
            d0 = d;
            k = i;
            bx = x[i];
        }
    }
    *best_d = d0; *best_i = k; *best_x = bx;
}

/* The last index of the largest value (>=: the last of equal values), above a floor. */
int last_max(int n, const int *v, int floor_value) {
    int m = floor_value;
    int at = -7;
    for (int i = 0; i < n; i++) {
        if (v[i] >= m) {
            m = v[i];
            at = i;
        }
    }
    return at * 1000 + m % 1000;
}

/* The first index of the smallest residue (<: the first of equal values). */
long first_min(int n, const int *v) {
    int m = 1000000;
    long at = -1;
    for (int i = 0; i < n; i++) {
        if (v[i] % 250 < m) {
            m = v[i] % 250;
            at = i;
        }
    }
    return at * 1000 + m;
}

int main(void) {
    int n = 6000;
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    int *v = malloc(n * sizeof *v);
    for (int i = 0; i < n; i++) {
        x[i] = (double)((i * 7919) % 10007) / 10007.0;
        y[i] = (double)((i * 104729) % 10009) / 10009.0;
        v[i] = 3 + (i * 7) % 1000; /* every value six times: ties across blocks */
    }
    double bd, bx;
    int bi;
    for (int r = 0; r < 3; r++) {
        nearest(n, x, y, 0.25 + 0.1 * r, 0.75 - 0.1 * r, &bd, &bi, &bx);
        printf("nearest %d %.9f %.6f\n", bi, bd, bx);
    }
    printf("last max %d\n", last_max(n, v, 0));
    printf("none above the floor %d\n", last_max(n, v, 100000));
    printf("first min %ld\n", first_min(n, v));
    free(x); free(y); free(v);
    return 0;
}
