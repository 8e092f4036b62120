/*
 * Name: kmeans_assign
 * Category: nbody
 * Computes: Lloyd iterations of k-means on points drawn around well-separated lattice
 *           centers: the assignment step (nearest centroid of every point) and the update
 *           step (per-cluster sums and counts); prints the cluster sizes checksum and the inertia.
 * Pattern: parallel loop over points with an inner argmin over centroids; per-cluster
 *          accumulation (atomic update / reduction by key)
 * CPU time: 0.65 s (gcc -O3, one core; user time, median of 3 runs, 2026-11-22)
 */
#include <stdio.h>
#include <stdlib.h>

#ifdef BENCH_SMALL
#define NPOINTS 4000
#define ITERS 2
#else
#define NPOINTS (1 << 20)
#define ITERS 6
#endif
#define DIM 8
#define K 64

static unsigned int lcg_next(unsigned int *state) {
    *state = *state * 1664525u + 1013904223u;
    return *state;
}

static float lcg_float(unsigned int *state) {
    return (float)(lcg_next(state) >> 8) * (1.0f / 16777216.0f);
}

/* Cluster c sits at a corner of a 6-D lattice with spacing 4 (plus 2 fixed dims), so every
   point is far nearer to its own center than to any other: assignments have no near-ties. */
static void lattice_center(int c, float *center) {
    for (int d = 0; d < DIM; d++)
        center[d] = d < 6 ? 4.0f * (float)((c >> d) & 1) + 1.0f : 1.0f + 0.5f * (float)d;
}

static void make_points(int n, float *points, float *centroids, unsigned int seed) {
    unsigned int state = seed;
    float center[DIM];
    for (int i = 0; i < n; i++) {
        lattice_center((int)(lcg_next(&state) >> 20) % K, center);
        for (int d = 0; d < DIM; d++)
            points[i * DIM + d] = center[d] + 0.5f * (lcg_float(&state) - 0.5f);
    }
    for (int c = 0; c < K; c++) {
        lattice_center(c, center);
        for (int d = 0; d < DIM; d++)
            centroids[c * DIM + d] = center[d] + 0.3f;
    }
}

void assign_points(int n, int k, const float *points, const float *centroids, int *label, float *dist2) {
    for (int i = 0; i < n; i++) {
        int best = 0;
        float best_d = 3.0e38f;
        for (int c = 0; c < k; c++) {
            float d2 = 0.0f;
            for (int d = 0; d < DIM; d++) {
                float diff = points[i * DIM + d] - centroids[c * DIM + d];
                d2 += diff * diff;
            }
            if (d2 < best_d) {
                best_d = d2;
                best = c;
            }
        }
        label[i] = best;
        dist2[i] = best_d;
    }
}

void update_centroids(int n, int k, const float *points, const int *label, float *centroids, int *count) {
    double sums[K * DIM];
    for (int c = 0; c < k * DIM; c++)
        sums[c] = 0.0;
    for (int c = 0; c < k; c++)
        count[c] = 0;
    for (int i = 0; i < n; i++) {
        count[label[i]] += 1;
        for (int d = 0; d < DIM; d++)
            sums[label[i] * DIM + d] += points[i * DIM + d];
    }
    for (int c = 0; c < k; c++)
        if (count[c] > 0)
            for (int d = 0; d < DIM; d++)
                centroids[c * DIM + d] = (float)(sums[c * DIM + d] / count[c]);
}

int main(void) {
    float *points = (float *)malloc(sizeof(float) * NPOINTS * DIM);
    float *dist2 = (float *)malloc(sizeof(float) * NPOINTS);
    int *label = (int *)malloc(sizeof(int) * NPOINTS);
    float centroids[K * DIM];
    int count[K];
    if (!points || !dist2 || !label) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    make_points(NPOINTS, points, centroids, 123u);
    for (int it = 0; it < ITERS; it++) {
        assign_points(NPOINTS, K, points, centroids, label, dist2);
        update_centroids(NPOINTS, K, points, label, centroids, count);
        double inertia = 0.0;
        for (int i = 0; i < NPOINTS; i++)
            inertia += dist2[i];
        long long weighted = 0;
        for (int c = 0; c < K; c++)
            weighted += (long long)(c + 1) * count[c];
        printf("iter %d: inertia=%.6e sizes_checksum=%lld count0=%d\n", it, inertia, weighted, count[0]);
    }
    free(points);
    free(dist2);
    free(label);
    return 0;
}
