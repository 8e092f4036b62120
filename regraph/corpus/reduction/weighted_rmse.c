/* weighted_rmse: weighted root-mean-square error between predictions and targets.
 * Pattern: 1-D sum reduction of a computed term into a double, two accumulators. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define N 2000000

double weighted_sq_error(int n, const float *pred, const float *target, const float *w,
                         double *weight_sum) {
    double err = 0.0, ws = 0.0;
    for (int i = 0; i < n; i++) {
        double d = (double)pred[i] - target[i];
        err += w[i] * d * d;
        ws += w[i];
    }
    *weight_sum = ws;
    return err;
}

int main(void) {
    float *pred = malloc(sizeof(float) * N), *target = malloc(sizeof(float) * N);
    float *w = malloc(sizeof(float) * N);
    for (int i = 0; i < N; i++) {
        target[i] = (float)(i % 1000) * 0.001f;
        pred[i] = target[i] + (float)((int)((unsigned)i * 7919u % 201u) - 100) * 1e-4f;
        w[i] = 0.5f + (float)(i % 4) * 0.25f;
    }
    double ws = 0.0;
    double err = weighted_sq_error(N, pred, target, w, &ws);
    printf("rmse %.8e weights %.6e\n", sqrt(err / ws), ws);
    free(pred); free(target); free(w);
    return 0;
}
