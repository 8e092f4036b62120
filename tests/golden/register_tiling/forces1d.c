#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* all-pairs interactions: every i reads every j's position and weight (1-D kernel;
   the j-only reads are shared by the whole block), n not a multiple of the block */
void forces(int n, float eps, const float *pos, const float *w, float *out)
{
    for (int i = 0; i < n; i++) {
        float fx = 0.0f, fy = 0.0f;
        for (int j = 0; j < n; j++) {
            float dx = pos[2 * j] - pos[2 * i];
            float dy = pos[2 * j + 1] - pos[2 * i + 1];
            float inv = 1.0f / sqrtf(dx * dx + dy * dy + eps);
            fx += w[j] * dx * inv;
            fy += w[j] * dy * inv;
        }
        out[2 * i] = fx;
        out[2 * i + 1] = fy;
    }
}

int main(void)
{
    int n = 1500;
    float *pos = (float *)malloc(sizeof(float) * 2 * n);
    float *w = (float *)malloc(sizeof(float) * n);
    float *out = (float *)malloc(sizeof(float) * 2 * n);
    for (int i = 0; i < 2 * n; i++)
        pos[i] = ((i * 37) % 101) * 0.01f;
    for (int i = 0; i < n; i++)
        w[i] = 1.0f + (i % 5) * 0.25f;
    forces(n, 0.01f, pos, w, out);
    double sx = 0.0, sy = 0.0;
    for (int i = 0; i < n; i++) {
        sx += out[2 * i] * (i % 3);
        sy += out[2 * i + 1];
    }
    printf("sx=%.5e sy=%.5e\n", sx, sy);
    free(pos);
    free(w);
    free(out);
    return 0;
}
