/* mandelbrot: escape-time iteration counts over a grid of the complex plane. Pattern:
 * 2-D nest, independent points, data-dependent inner while loop (divergence). */
#include <stdio.h>
#include <stdlib.h>

#define W 640
#define H 480
#define MAX_ITER 200

void escape_counts(int w, int h, int max_iter, int *counts) {
    for (int py = 0; py < h; py++)
        for (int px = 0; px < w; px++) {
            double cx = -2.2 + 3.2 * px / w, cy = -1.2 + 2.4 * py / h;
            double x = 0.0, y = 0.0;
            int it = 0;
            while (it < max_iter && x * x + y * y <= 4.0) {
                double xt = x * x - y * y + cx;
                y = 2.0 * x * y + cy;
                x = xt;
                it++;
            }
            counts[py * w + px] = it;
        }
}

int main(void) {
    int *counts = malloc(sizeof(int) * W * H);
    escape_counts(W, H, MAX_ITER, counts);
    long long total = 0;
    int inside = 0;
    for (int i = 0; i < W * H; i++) {
        total += counts[i];
        inside += counts[i] == MAX_ITER;
    }
    printf("iterations %lld inside %d\n", total, inside);
    free(counts);
    return 0;
}
