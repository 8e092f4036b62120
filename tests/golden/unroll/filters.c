#include <stdio.h>
#include <stdlib.h>

#define W 512
#define H 384
#define TAPS 48

/* a 5x5 box filter (5 and 5 iterations: unrolled fully) and a 48-tap row filter (by 4) */
void filters(int w, int h, const float *in, float *box, float *row)
{
    for (int y = 2; y < h - 2; y++)
        for (int x = 2; x < w - 2; x++) {
            float s = 0.0f;
            for (int dy = -2; dy <= 2; dy++)
                for (int dx = -2; dx <= 2; dx++)
                    s += in[(y + dy) * w + x + dx];
            box[y * w + x] = s / 25.0f;
        }
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w - TAPS; x++) {
            float s = 0.0f;
            for (int t = 0; t < TAPS; t++)
                s += in[y * w + x + t] * (float)(t % 3);
            row[y * w + x] = s;
        }
}

/* a loop with a run-time bound is left alone */
void partial(int n, int k, const float *in, float *out)
{
    for (int i = 0; i < n; i++) {
        float s = 0.0f;
        for (int j = 0; j < k; j++)
            s += in[i] * (float)j;
        out[i] = s;
    }
}

int main(void)
{
    float *in = (float *)malloc(sizeof(float) * W * H);
    float *box = (float *)calloc(W * H, sizeof(float));
    float *row = (float *)calloc(W * H, sizeof(float));
    for (int k = 0; k < W * H; k++)
        in[k] = (float)((k * 13) % 97) * 0.125f;
    filters(W, H, in, box, row);
    partial(W * H, 7, in, row);
    double a = 0.0, b = 0.0;
    for (int k = 0; k < W * H; k++) {
        a += box[k];
        b += row[k];
    }
    printf("box=%.6e row=%.6e\n", a, b);
    free(in);
    free(box);
    free(row);
    return 0;
}
