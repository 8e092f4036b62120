/* distance_field: for every grid cell, the distance to the nearest of a few fixed seed
 * points and the index of that seed (a Voronoi labelling). Pattern: 2-D nest with a short
 * inner loop over read-only seeds. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define GW 800
#define GH 600
#define SEEDS 24

void nearest_seed(int w, int h, int nseeds, const float *sx, const float *sy, float *dist,
                  int *label) {
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            float best = 1e30f;
            int who = -1;
            for (int s = 0; s < nseeds; s++) {
                float dx = x - sx[s], dy = y - sy[s];
                float d = dx * dx + dy * dy;
                if (d < best) {
                    best = d;
                    who = s;
                }
            }
            dist[y * w + x] = sqrtf(best);
            label[y * w + x] = who;
        }
}

int main(void) {
    float sx[SEEDS], sy[SEEDS];
    for (int s = 0; s < SEEDS; s++) {
        sx[s] = (float)((s * 271) % GW);
        sy[s] = (float)((s * 163 + 40) % GH);
    }
    float *dist = malloc(sizeof(float) * GW * GH);
    int *label = malloc(sizeof(int) * GW * GH);
    nearest_seed(GW, GH, SEEDS, sx, sy, dist, label);
    double dsum = 0.0;
    long long lsum = 0;
    for (int i = 0; i < GW * GH; i++) {
        dsum += dist[i];
        lsum += label[i] * (i % 3 + 1);
    }
    printf("distance sum %.6e label sum %lld\n", dsum, lsum);
    free(dist); free(label);
    return 0;
}
