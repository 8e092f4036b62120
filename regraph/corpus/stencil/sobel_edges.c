/* sobel_edges: the Sobel gradient magnitude of a grey image and the number of edge pixels
 * above a threshold; the two 3x3 operators are read from constant tables.
 * Pattern: 2-D stencil whose taps are two constant-trip (3x3) inner loops over small
 * weight tables (fully unrollable), neighbouring outputs sharing inputs. */
#include <math.h>
#include <stdio.h>

#define H 1200
#define W 1600

static const float GX[3][3] = {{-1.0f, 0.0f, 1.0f}, {-2.0f, 0.0f, 2.0f}, {-1.0f, 0.0f, 1.0f}};
static const float GY[3][3] = {{-1.0f, -2.0f, -1.0f}, {0.0f, 0.0f, 0.0f}, {1.0f, 2.0f, 1.0f}};
static float image[H][W], magnitude[H][W];

void sobel(void) {
    for (int y = 1; y < H - 1; y++)
        for (int x = 1; x < W - 1; x++) {
            float gx = 0.0f, gy = 0.0f;
            for (int dy = 0; dy < 3; dy++)
                for (int dx = 0; dx < 3; dx++) {
                    float v = image[y + dy - 1][x + dx - 1];
                    gx += GX[dy][dx] * v;
                    gy += GY[dy][dx] * v;
                }
            magnitude[y][x] = sqrtf(gx * gx + gy * gy);
        }
}

int main(void) {
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            image[y][x] = (float)(((x / 40 + y / 30) % 2) * 180 + (x * y) % 13);
    sobel();
    double total = 0.0;
    long edges = 0;
    for (int y = 1; y < H - 1; y++)
        for (int x = 1; x < W - 1; x++) {
            total += magnitude[y][x];
            edges += magnitude[y][x] > 100.0f;
        }
    printf("gradient total %.6e edges %ld\n", total, edges);
    return 0;
}
