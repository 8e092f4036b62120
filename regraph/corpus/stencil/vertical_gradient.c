/* vertical_gradient: the vertical derivative of a height map by central differences, and
 * a slope mask where it exceeds a threshold, sweeping the grid column by column.
 * Pattern: 2-D stencil over static row-major arrays whose loops run columns outer and rows
 * inner (unit stride belongs to the outer loop: a coalescing candidate). */
#include <stdio.h>

#define H 1536
#define W 1536

static float height[H][W], dy[H][W];
static unsigned char steep[H][W];

void vertical_slope(float spacing, float threshold) {
    for (int x = 0; x < W; x++)
        for (int y = 1; y < H - 1; y++) {
            float g = (height[y + 1][x] - height[y - 1][x]) / (2.0f * spacing);
            dy[y][x] = g;
            steep[y][x] = g > threshold || g < -threshold;
        }
}

int main(void) {
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            height[y][x] = (float)((y * y / 7 + x * 3) % 503) * 0.02f + (float)(y % 37) * 0.1f;
    vertical_slope(0.5f, 2.0f);
    double total = 0.0, magnitude = 0.0;
    long count = 0;
    for (int y = 1; y < H - 1; y++)
        for (int x = 0; x < W; x++) {
            total += dy[y][x];
            magnitude += dy[y][x] > 0.0f ? dy[y][x] : -dy[y][x];
            count += steep[y][x];
        }
    printf("slope total %.6e magnitude %.6e steep %ld\n", total, magnitude, count);
    return 0;
}
