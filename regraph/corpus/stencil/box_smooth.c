/* box_smooth: repeated 3x3 weighted smoothing (1-2-1 kernel) of a 2-D field with clamped
 * edges, alternating two buffers. Pattern: 2-D 9-point stencil with a time loop. */
#include <stdio.h>
#include <stdlib.h>

#define NX 700
#define NY 500
#define PASSES 20

static int clampi(int v, int hi) { return v < 0 ? 0 : (v > hi ? hi : v); }

void smooth(int nx, int ny, const float *in, float *out) {
    for (int y = 0; y < ny; y++)
        for (int x = 0; x < nx; x++) {
            float acc = 0.0f;
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++) {
                    float w = (float)((2 - (dx < 0 ? -dx : dx)) * (2 - (dy < 0 ? -dy : dy)));
                    acc += w * in[clampi(y + dy, ny - 1) * nx + clampi(x + dx, nx - 1)];
                }
            out[y * nx + x] = acc / 16.0f;
        }
}

int main(void) {
    float *a = malloc(sizeof(float) * NX * NY), *b = malloc(sizeof(float) * NX * NY);
    for (int i = 0; i < NX * NY; i++)
        a[i] = (float)((i * 7 + i / NX * 3) % 50);
    for (int p = 0; p < PASSES; p++) {
        smooth(NX, NY, a, b);
        float *t = a;
        a = b;
        b = t;
    }
    double total = 0.0, corner = a[0] + a[NX * NY - 1];
    for (int i = 0; i < NX * NY; i++)
        total += a[i];
    printf("smoothed total %.6e corners %.6f\n", total, corner);
    free(a); free(b);
    return 0;
}
