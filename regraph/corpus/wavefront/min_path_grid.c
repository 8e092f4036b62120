/* min_path_grid: the cheapest monotone path (right/down moves) through a cost grid, by
 * dynamic programming. Pattern: 2-D DP depending on the north and west cells (each
 * anti-diagonal is parallel: a wavefront). */
#include <stdio.h>
#include <stdlib.h>

#define R 1500
#define C 1500

void min_path(int rows, int cols, const int *cost, long long *best) {
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) {
            long long from;
            if (i == 0 && j == 0)
                from = 0;
            else if (i == 0)
                from = best[j - 1];
            else if (j == 0)
                from = best[(i - 1) * cols];
            else {
                long long up = best[(i - 1) * cols + j], left = best[i * cols + j - 1];
                from = up < left ? up : left;
            }
            best[i * cols + j] = from + cost[i * cols + j];
        }
}

int main(void) {
    int *cost = malloc(sizeof(int) * R * C);
    long long *best = malloc(sizeof(long long) * R * C);
    for (int i = 0; i < R * C; i++)
        cost[i] = (int)((i * 2654435761u) >> 24) % 100 + 1;
    min_path(R, C, cost, best);
    long long edge = 0;
    for (int j = 0; j < C; j++)
        edge += best[(R - 1) * C + j] % 1000;
    printf("min path %lld bottom-row checksum %lld\n", best[R * C - 1], edge);
    free(cost); free(best);
    return 0;
}
