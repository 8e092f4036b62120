/*
 * Name: gather_scatter
 * Category: sparse
 * Computes: repeated rounds of an indexed gather (out[i] = w[i] * src[gather_idx[i]]) and
 *           an indexed scatter-add with collisions (dst[scatter_idx[i]] += out[i]), as in
 *           unstructured-mesh edge-to-node assembly; prints sums of the assembled values.
 * Pattern: parallel loop with indirect reads (gather) and conflicting indirect writes
 *          (scatter-add, needs atomic update)
 * CPU time: 1.15 s (gcc -O3, one core; user time, median of 3 runs, 2026-11-22)
 */
#include <stdio.h>
#include <stdlib.h>

#ifdef BENCH_SMALL
#define NEDGES 20000
#define NNODES 5000
#define ROUNDS 3
#else
#define NEDGES (1 << 23)
#define NNODES (1 << 21)
#define ROUNDS 12
#endif

static unsigned int lcg_next(unsigned int *state) {
    *state = *state * 1664525u + 1013904223u;
    return *state;
}

static float lcg_float(unsigned int *state) {
    return (float)(lcg_next(state) >> 8) * (1.0f / 16777216.0f);
}

static void make_indices(int *idx, int n, int range, unsigned int seed) {
    unsigned int state = seed;
    for (int i = 0; i < n; i++)
        idx[i] = (int)((lcg_next(&state) >> 3) % (unsigned int)range);
}

static void fill_uniform(float *x, int n, float lo, float hi, unsigned int seed) {
    unsigned int state = seed;
    for (int i = 0; i < n; i++)
        x[i] = lo + (hi - lo) * lcg_float(&state);
}

void gather(int n, const int *idx, const float *w, const float *src, float *out) {
    for (int i = 0; i < n; i++)
        out[i] = w[i] * src[idx[i]];
}

void scatter_add(int n, const int *idx, const float *values, float *dst) {
    for (int i = 0; i < n; i++)
        dst[idx[i]] += values[i];
}

/* node values stay of order one from round to round */
static double relax_nodes(int n, const float *assembled, float *node) {
    double s = 0.0;
    for (int i = 0; i < n; i++) {
        node[i] = 0.5f * node[i] + 0.125f * assembled[i];
        s += node[i];
    }
    return s;
}

int main(void) {
    int *gather_idx = (int *)malloc(sizeof(int) * NEDGES);
    int *scatter_idx = (int *)malloc(sizeof(int) * NEDGES);
    float *w = (float *)malloc(sizeof(float) * NEDGES);
    float *edge = (float *)malloc(sizeof(float) * NEDGES);
    float *node = (float *)malloc(sizeof(float) * NNODES);
    float *assembled = (float *)malloc(sizeof(float) * NNODES);
    if (!gather_idx || !scatter_idx || !w || !edge || !node || !assembled) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    make_indices(gather_idx, NEDGES, NNODES, 71u);
    make_indices(scatter_idx, NEDGES, NNODES, 72u);
    fill_uniform(w, NEDGES, 0.5f, 1.5f, 73u);
    fill_uniform(node, NNODES, 1.0f, 2.0f, 74u);
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < NNODES; i++)
            assembled[i] = 0.0f;
        gather(NEDGES, gather_idx, w, node, edge);
        scatter_add(NEDGES, scatter_idx, edge, assembled);
        double total = relax_nodes(NNODES, assembled, node);
        printf("round %d: node_sum=%.6e\n", r, total);
    }
    free(gather_idx);
    free(scatter_idx);
    free(w);
    free(edge);
    free(node);
    free(assembled);
    return 0;
}
