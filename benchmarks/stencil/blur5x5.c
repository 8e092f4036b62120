/*
 * Name: blur5x5
 * Category: stencil
 * Computes: repeated 5x5 Gaussian blur (full 2-D weights, not separated) of a grayscale
 *           image with a 2-pixel border kept fixed; prints the image sum and per-band sums.
 * Pattern: parallel loop nest (2-D, 25-point stencil with a small constant weight table)
 * CPU time: 0.68 s (gcc -O3, one core; user time, median of 3 runs, 2026-11-22)
 */
#include <stdio.h>
#include <stdlib.h>

#ifdef BENCH_SMALL
#define WIDTH 96
#define HEIGHT 80
#define PASSES 2
#else
#define WIDTH 4096
#define HEIGHT 3072
#define PASSES 16
#endif

static unsigned int lcg_next(unsigned int *state) {
    *state = *state * 1664525u + 1013904223u;
    return *state;
}

static void init_image(float *img, int width, int height, unsigned int seed) {
    unsigned int state = seed;
    for (int i = 0; i < width * height; i++)
        img[i] = (float)(lcg_next(&state) >> 24); /* 0..255 */
}

void blur5x5(int width, int height, const float *weights, const float *in, float *out) {
    for (int y = 2; y < height - 2; y++)
        for (int x = 2; x < width - 2; x++) {
            float acc = 0.0f;
            for (int dy = -2; dy <= 2; dy++)
                for (int dx = -2; dx <= 2; dx++)
                    acc += weights[(dy + 2) * 5 + (dx + 2)] * in[(y + dy) * width + (x + dx)];
            out[y * width + x] = acc;
        }
}

static void make_weights(float *w) {
    const float row[5] = {1.0f, 4.0f, 6.0f, 4.0f, 1.0f};
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 5; j++)
            w[i * 5 + j] = row[i] * row[j] / 256.0f;
}

int main(void) {
    float *a = (float *)malloc(sizeof(float) * WIDTH * HEIGHT);
    float *b = (float *)malloc(sizeof(float) * WIDTH * HEIGHT);
    float weights[25];
    if (!a || !b) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    make_weights(weights);
    init_image(a, WIDTH, HEIGHT, 5u);
    init_image(b, WIDTH, HEIGHT, 5u);
    for (int p = 0; p < PASSES; p++) {
        blur5x5(WIDTH, HEIGHT, weights, a, b);
        float *swap = a;
        a = b;
        b = swap;
    }
    for (int band = 0; band < 4; band++) {
        double s = 0.0;
        for (int y = band * HEIGHT / 4; y < (band + 1) * HEIGHT / 4; y++)
            for (int x = 0; x < WIDTH; x++)
                s += a[y * WIDTH + x];
        printf("band %d sum=%.6e\n", band, s);
    }
    free(a);
    free(b);
    return 0;
}
