/* phase_rotate: multiply complex samples (separate re/im arrays) by a position-dependent
 * phase factor exp(i * k * theta). Pattern: 1-D elementwise with sin/cos per element. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define N 500000

void rotate(int n, double theta, const double *re, const double *im, double *out_re,
            double *out_im) {
    for (int k = 0; k < n; k++) {
        double c = cos(theta * k), s = sin(theta * k);
        out_re[k] = re[k] * c - im[k] * s;
        out_im[k] = re[k] * s + im[k] * c;
    }
}

int main(void) {
    double *re = malloc(sizeof(double) * N), *im = malloc(sizeof(double) * N);
    double *ore = malloc(sizeof(double) * N), *oim = malloc(sizeof(double) * N);
    for (int k = 0; k < N; k++) {
        re[k] = 1.0 + (k % 11) * 0.1;
        im[k] = -0.5 + (k % 5) * 0.25;
    }
    rotate(N, 0.001, re, im, ore, oim);
    double energy = 0.0, sre = 0.0;
    for (int k = 0; k < N; k++) {
        energy += ore[k] * ore[k] + oim[k] * oim[k];
        sre += ore[k];
    }
    printf("energy %.8e sum_re %.8e\n", energy, sre);
    free(re); free(im); free(ore); free(oim);
    return 0;
}
