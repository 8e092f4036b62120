/*
 * Name: bfs_levels
 * Category: sparse
 * Computes: breadth-first-search levels of a random directed graph in CSR form from
 *           several sources, level-synchronously: each sweep relaxes the out-edges of every
 *           node on the current level; prints exact reach counts, level sums and depths.
 * Pattern: parallel loop over nodes with irregular inner loops and benign racing writes
 *          (every writer stores the same level) inside a sequential level loop
 * CPU time: 1.00 s (gcc -O3, one core; user time, median of 3 runs, 2026-11-22)
 */
#include <stdio.h>
#include <stdlib.h>

#ifdef BENCH_SMALL
#define NNODES 3000
#define NSOURCES 2
#else
#define NNODES (1 << 21)
#define NSOURCES 6
#endif
#define DEGREE 6

static unsigned int lcg_next(unsigned int *state) {
    *state = *state * 1664525u + 1013904223u;
    return *state;
}

/* every node gets DEGREE/2 .. DEGREE*3/2 random out-edges */
static void build_graph(int n, int *row_start, int *adj, unsigned int seed) {
    unsigned int state = seed;
    int e = 0;
    for (int v = 0; v < n; v++) {
        row_start[v] = e;
        int deg = DEGREE / 2 + (int)((lcg_next(&state) >> 16) % (DEGREE + 1));
        for (int k = 0; k < deg; k++)
            adj[e++] = (int)((lcg_next(&state) >> 4) % (unsigned int)n);
    }
    row_start[n] = e;
}

/* returns 1 when some node got the next level */
int relax_level(int n, const int *row_start, const int *adj, int level, int *dist) {
    int changed = 0;
    for (int v = 0; v < n; v++) {
        if (dist[v] != level)
            continue;
        for (int k = row_start[v]; k < row_start[v + 1]; k++) {
            int w = adj[k];
            if (dist[w] < 0) {
                dist[w] = level + 1;
                changed = 1;
            }
        }
    }
    return changed;
}

int main(void) {
    int *row_start = (int *)malloc(sizeof(int) * (NNODES + 1));
    int *adj = (int *)malloc(sizeof(int) * (size_t)NNODES * (DEGREE * 3 / 2 + 1));
    int *dist = (int *)malloc(sizeof(int) * NNODES);
    if (!row_start || !adj || !dist) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    build_graph(NNODES, row_start, adj, 99u);
    for (int s = 0; s < NSOURCES; s++) {
        int source = (int)(((long long)s * 7919) % NNODES);
        for (int v = 0; v < NNODES; v++)
            dist[v] = -1;
        dist[source] = 0;
        int level = 0;
        while (relax_level(NNODES, row_start, adj, level, dist))
            level++;
        long long reached = 0, level_sum = 0, per_level[64] = {0};
        for (int v = 0; v < NNODES; v++)
            if (dist[v] >= 0) {
                reached++;
                level_sum += dist[v];
                per_level[dist[v] < 63 ? dist[v] : 63]++;
            }
        printf("source %d: reached=%lld level_sum=%lld depth=%d at_level3=%lld\n", source, reached, level_sum,
               level, per_level[3]);
    }
    free(row_start);
    free(adj);
    free(dist);
    return 0;
}
