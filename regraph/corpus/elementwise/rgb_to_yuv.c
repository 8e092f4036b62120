/* rgb_to_yuv: convert an interleaved 8-bit RGB image to planar Y, U, V floats (BT.601).
 * Pattern: 1-D elementwise over pixels with strided (interleaved) reads. */
#include <stdio.h>
#include <stdlib.h>

#define WIDTH 1024
#define HEIGHT 768

static void make_image(unsigned char *rgb, int pixels) {
    for (int p = 0; p < pixels; p++) {
        rgb[3 * p] = (unsigned char)((p * 7) & 255);
        rgb[3 * p + 1] = (unsigned char)((p / 3 + 40) & 255);
        rgb[3 * p + 2] = (unsigned char)((p * 13 + 5) % 251);
    }
}

void rgb_to_yuv(int pixels, const unsigned char *rgb, float *y, float *u, float *v) {
    for (int p = 0; p < pixels; p++) {
        float r = rgb[3 * p], g = rgb[3 * p + 1], b = rgb[3 * p + 2];
        y[p] = 0.299f * r + 0.587f * g + 0.114f * b;
        u[p] = -0.14713f * r - 0.28886f * g + 0.436f * b;
        v[p] = 0.615f * r - 0.51499f * g - 0.10001f * b;
    }
}

int main(void) {
    int pixels = WIDTH * HEIGHT;
    unsigned char *rgb = malloc((size_t)pixels * 3);
    float *y = malloc(sizeof(float) * pixels), *u = malloc(sizeof(float) * pixels);
    float *v = malloc(sizeof(float) * pixels);
    make_image(rgb, pixels);
    rgb_to_yuv(pixels, rgb, y, u, v);
    double sy = 0, su = 0, sv = 0;
    for (int p = 0; p < pixels; p++) {
        sy += y[p];
        su += u[p];
        sv += v[p];
    }
    printf("Y %.4e U %.4e V %.4e\n", sy, su, sv);
    free(rgb); free(y); free(u); free(v);
    return 0;
}
