/* alpha_blend: composite a foreground image over a background with a per-pixel alpha
 * mask and a vignette that depends on the row and column. Pattern: 2-D nest, 2-D
 * subscripts on C99 arrays passed as parameters. */
#include <stdio.h>
#include <stdlib.h>

#define H 720
#define W 960

void blend(int h, int w, const float fg[][W], const float bg[][W], const float alpha[][W],
           float out[][W]) {
    for (int i = 0; i < h; i++)
        for (int j = 0; j < w; j++) {
            float di = (i - h / 2) / (float)h, dj = (j - w / 2) / (float)w;
            float vignette = 1.0f - 0.5f * (di * di + dj * dj);
            float a = alpha[i][j];
            out[i][j] = vignette * (a * fg[i][j] + (1.0f - a) * bg[i][j]);
        }
}

int main(void) {
    float (*fg)[W] = malloc(sizeof(float) * H * W), (*bg)[W] = malloc(sizeof(float) * H * W);
    float (*alpha)[W] = malloc(sizeof(float) * H * W), (*out)[W] = malloc(sizeof(float) * H * W);
    for (int i = 0; i < H; i++)
        for (int j = 0; j < W; j++) {
            fg[i][j] = (float)((i * 3 + j) % 256) / 255.0f;
            bg[i][j] = (float)((i + j * 5) % 256) / 255.0f;
            alpha[i][j] = (float)((i / 8 + j / 8) % 2) * 0.6f + 0.2f;
        }
    blend(H, W, (const float (*)[W])fg, (const float (*)[W])bg, (const float (*)[W])alpha, out);
    double total = 0.0, diag = 0.0;
    for (int i = 0; i < H; i++) {
        diag += out[i][i % W];
        for (int j = 0; j < W; j++)
            total += out[i][j];
    }
    printf("blend total %.6e diag %.6e\n", total, diag);
    free(fg); free(bg); free(alpha); free(out);
    return 0;
}
