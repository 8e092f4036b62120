/* floyd_warshall: all-pairs shortest paths on a dense weighted digraph. Pattern: a
 * sequential k loop around a fully parallel (i, j) nest that reads row k and column k. */
#include <stdio.h>
#include <stdlib.h>

#define V 400
#define INF 1000000000

void shortest_paths(int n, int *dist) {
    for (int k = 0; k < n; k++)
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                int through = dist[i * n + k] + dist[k * n + j];
                if (dist[i * n + k] < INF && dist[k * n + j] < INF && through < dist[i * n + j])
                    dist[i * n + j] = through;
            }
}

int main(void) {
    int *dist = malloc(sizeof(int) * V * V);
    for (int i = 0; i < V; i++)
        for (int j = 0; j < V; j++) {
            unsigned int h = (unsigned int)(i * 7919 + j * 104729) % 1000u;
            dist[i * V + j] = i == j ? 0 : (h < 60 ? (int)(h % 50) + 1 : INF);
        }
    shortest_paths(V, dist);
    long long total = 0;
    int unreachable = 0;
    for (int i = 0; i < V * V; i++) {
        if (dist[i] >= INF) unreachable++;
        else total += dist[i];
    }
    printf("total %lld unreachable %d\n", total, unreachable);
    free(dist);
    return 0;
}
