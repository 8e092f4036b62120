/* batched_3x3: many independent 3x3 rotations applied to 3x3 inertia tensors,
 * R * I * R^T, as in rigid-body codes. Pattern: batched tiny matrix products, one batch
 * item per iteration, fully unrollable inner loops. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define BATCH 200000

void rotate_tensors(int batch, const float *rot, const float *inertia, float *out) {
    for (int b = 0; b < batch; b++) {
        const float *r = rot + 9 * b, *m = inertia + 9 * b;
        float tmp[9];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                float s = 0.0f;
                for (int k = 0; k < 3; k++)
                    s += r[3 * i + k] * m[3 * k + j];
                tmp[3 * i + j] = s;
            }
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                float s = 0.0f;
                for (int k = 0; k < 3; k++)
                    s += tmp[3 * i + k] * r[3 * j + k];
                out[9 * b + 3 * i + j] = s;
            }
    }
}

int main(void) {
    float *rot = malloc(sizeof(float) * 9 * BATCH), *in = malloc(sizeof(float) * 9 * BATCH);
    float *out = malloc(sizeof(float) * 9 * BATCH);
    for (int b = 0; b < BATCH; b++) {
        float a = 0.001f * b, c = cosf(a), s = sinf(a);
        float r[9] = {c, -s, 0, s, c, 0, 0, 0, 1};
        for (int k = 0; k < 9; k++) {
            rot[9 * b + k] = r[k];
            in[9 * b + k] = (k % 4 == 0) ? 1.0f + (b % 5) : 0.1f * ((b + k) % 3);
        }
    }
    rotate_tensors(BATCH, rot, in, out);
    double trace = 0.0, off = 0.0;
    for (int b = 0; b < BATCH; b++) {
        trace += out[9 * b] + out[9 * b + 4] + out[9 * b + 8];
        off += out[9 * b + 1] * (b % 3);
    }
    printf("trace %.6e off-diagonal %.6e\n", trace, off);
    free(rot); free(in); free(out);
    return 0;
}
