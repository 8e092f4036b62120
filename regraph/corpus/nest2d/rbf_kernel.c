/* rbf_kernel: the Gaussian (RBF) kernel matrix between two sets of 4-D feature vectors,
 * K[i][j] = exp(-gamma * |a_i - b_j|^2), and its row sums (as in kernel ridge regression).
 * Pattern: 2-D nest of independent entries, a constant 4-iteration inner loop (unrollable)
 * and expf in single precision (a fast-math candidate). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define NA 1200
#define NB 1000
#define DIM 4

void rbf_matrix(int na, int nb, const float *a, const float *b, float gamma, float *k) {
    for (int i = 0; i < na; i++)
        for (int j = 0; j < nb; j++) {
            float d2 = 0.0f;
            for (int d = 0; d < DIM; d++) {
                float diff = a[i * DIM + d] - b[j * DIM + d];
                d2 += diff * diff;
            }
            k[i * nb + j] = expf(-gamma * d2);
        }
}

int main(void) {
    float *a = malloc(sizeof(float) * NA * DIM), *b = malloc(sizeof(float) * NB * DIM);
    float *k = malloc(sizeof(float) * NA * NB);
    for (int i = 0; i < NA * DIM; i++)
        a[i] = (float)((i * 37) % 101) * 0.01f;
    for (int i = 0; i < NB * DIM; i++)
        b[i] = (float)((i * 53) % 89) * 0.011f;
    rbf_matrix(NA, NB, a, b, 1.5f, k);
    double total = 0.0, diagonal = 0.0;
    for (int i = 0; i < NA; i++)
        for (int j = 0; j < NB; j++) {
            total += k[i * NB + j];
            if (i % NB == j)
                diagonal += k[i * NB + j];
        }
    printf("kernel total %.6e diagonal %.6e\n", total, diagonal);
    free(a); free(b); free(k);
    return 0;
}
