#include <stdio.h>
#include <stdlib.h>

#define W 640
#define H 480

/* 3x3 weighted blur: in and the weights are only read, out only written */
void blur(int w, int h, const float *weights, const float *in, float *out)
{
    for (int y = 1; y < h - 1; y++)
        for (int x = 1; x < w - 1; x++) {
            float s = 0.0f;
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++)
                    s += weights[(dy + 1) * 3 + dx + 1] * in[(y + dy) * w + x + dx];
            out[y * w + x] = s;
        }
}

int main(void)
{
    float weights[9] = {1, 2, 1, 2, 4, 2, 1, 2, 1};
    float *in = (float *)malloc(sizeof(float) * W * H);
    float *out = (float *)calloc(W * H, sizeof(float));
    for (int k = 0; k < W * H; k++)
        in[k] = (float)((k * 7) % 255) / 16.0f;
    blur(W, H, weights, in, out);
    double sum = 0.0;
    for (int k = 0; k < W * H; k++)
        sum += out[k];
    printf("out[w+1]=%.4f sum=%.6e\n", out[W + 1], sum);
    free(in);
    free(out);
    return 0;
}
