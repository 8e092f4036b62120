/* complex_matmul: C = A * B for complex matrices stored as separate real and imaginary
 * planes. Pattern: matmul (i, j parallel, k reduction) with four products per step. */
#include <stdio.h>
#include <stdlib.h>

#define N 256

void cmatmul(int n, const float *ar, const float *ai, const float *br, const float *bi,
             float *cr, float *ci) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            float sr = 0.0f, si = 0.0f;
            for (int k = 0; k < n; k++) {
                sr += ar[i * n + k] * br[k * n + j] - ai[i * n + k] * bi[k * n + j];
                si += ar[i * n + k] * bi[k * n + j] + ai[i * n + k] * br[k * n + j];
            }
            cr[i * n + j] = sr;
            ci[i * n + j] = si;
        }
}

int main(void) {
    size_t bytes = sizeof(float) * N * N;
    float *ar = malloc(bytes), *ai = malloc(bytes), *br = malloc(bytes), *bi = malloc(bytes);
    float *cr = malloc(bytes), *ci = malloc(bytes);
    for (int i = 0; i < N * N; i++) {
        ar[i] = (float)((i % 17) - 8) / 8.0f;
        ai[i] = (float)((i % 5) - 2) / 4.0f;
        br[i] = (float)((i % 13) - 6) / 6.0f;
        bi[i] = (float)((i % 7) - 3) / 3.0f;
    }
    cmatmul(N, ar, ai, br, bi, cr, ci);
    double tr = 0.0, ti = 0.0;
    for (int i = 0; i < N; i++) {
        tr += cr[i * N + i];
        ti += ci[i * N + i];
    }
    printf("trace %.6e %+.6ei\n", tr, ti);
    free(ar); free(ai); free(br); free(bi); free(cr); free(ci);
    return 0;
}
