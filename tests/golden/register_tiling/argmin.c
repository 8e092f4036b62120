#include <stdio.h>
#include <stdlib.h>

#define DIM 3

/* nearest centre of every point: nested loops with the same bounds for every point
   (fused across a thread's outputs), a data-dependent update, two outputs per point */
void nearest(int n, int k, const float *points, const float *centres, int *label, float *best)
{
    for (int i = 0; i < n; i++) {
        int which = -1;
        float closest = 1.0e30f, second = 1.0e30f;
        for (int c = 0; c < k; c++) {
            float d2 = 0.0f;
            for (int d = 0; d < DIM; d++) {
                float diff = points[i * DIM + d] - centres[c * DIM + d];
                d2 += diff * diff;
            }
            if (d2 < closest) {
                second = closest;
                closest = d2;
                which = c;
            } else if (d2 < second) {
                second = d2;
            }
        }
        label[i] = which;
        best[i] = closest - 0.5f * second;
    }
}

int main(void)
{
    int n = 2333, k = 17;
    float *points = (float *)malloc(sizeof(float) * n * DIM);
    float *centres = (float *)malloc(sizeof(float) * k * DIM);
    int *label = (int *)malloc(sizeof(int) * n);
    float *best = (float *)malloc(sizeof(float) * n);
    for (int i = 0; i < n * DIM; i++)
        points[i] = ((i * 29) % 97) * 0.1f;
    for (int i = 0; i < k * DIM; i++)
        centres[i] = ((i * 13) % 41) * 0.25f;
    nearest(n, k, points, centres, label, best);
    long histogram = 0;
    double total = 0.0;
    for (int i = 0; i < n; i++) {
        histogram += (long)label[i] * (i % 11);
        total += best[i];
    }
    printf("labels=%ld total=%.5e\n", histogram, total);
    free(points);
    free(centres);
    free(label);
    free(best);
    return 0;
}
