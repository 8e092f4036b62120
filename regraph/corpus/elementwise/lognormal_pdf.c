/* lognormal_pdf: the log-normal density of many positive samples (particle sizes), each
 * with its own location and scale, and the mean log-likelihood.
 * Pattern: 1-D elementwise in single precision with logf and expf per element, plus a
 * 1 / sqrtf normalisation (a fast-math candidate). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define N 2500000

void lognormal_density(int n, const float *x, const float *mu, const float *sigma,
                       float *pdf) {
    for (int i = 0; i < n; i++) {
        float z = (logf(x[i]) - mu[i]) / sigma[i];
        float norm = 1.0f / sqrtf(2.0f * 3.14159265f * sigma[i] * sigma[i]);
        pdf[i] = norm / x[i] * expf(-0.5f * z * z);
    }
}

int main(void) {
    float *x = malloc(sizeof(float) * N), *mu = malloc(sizeof(float) * N);
    float *sigma = malloc(sizeof(float) * N), *pdf = malloc(sizeof(float) * N);
    for (int i = 0; i < N; i++) {
        x[i] = 0.2f + (float)(i % 997) * 0.004f;
        mu[i] = (float)(i % 7) * 0.1f - 0.3f;
        sigma[i] = 0.4f + (float)(i % 5) * 0.15f;
    }
    lognormal_density(N, x, mu, sigma, pdf);
    double total = 0.0, loglik = 0.0;
    for (int i = 0; i < N; i++) {
        total += pdf[i];
        loglik += log(pdf[i] + 1e-6);
    }
    printf("density total %.6e mean loglik %.6f\n", total, loglik / N);
    free(x); free(mu); free(sigma); free(pdf);
    return 0;
}
