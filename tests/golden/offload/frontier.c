#include <stdio.h>
#include <stdlib.h>

/* one frontier step of a reachability sweep: nodes on `round` claim their unclaimed
   successors for round + 1 (benign races: every claimer stores the same value) */
int claim(int n, const int *succ, int round, int *mark)
{
    int grew = 0;
    for (int v = 0; v < n; v++) {
        if (mark[v] != round)
            continue;
        for (int e = 0; e < 3; e++) {
            int w = succ[3 * v + e];
            if (mark[w] == -1) {
                mark[w] = round + 1;
                grew = 1;
            }
        }
    }
    return grew;
}

/* flags every bucket some key falls into: many iterations store the same 1 */
void touch(int n, const int *key, int *seen)
{
    for (int i = 0; i < n; i++)
        seen[key[i]] = 1;
}

int main(void)
{
    int n = 50000;
    int *succ = malloc(sizeof(int) * 3 * n);
    int *mark = malloc(sizeof(int) * n);
    int *seen = malloc(sizeof(int) * n);
    unsigned int state = 7u;
    for (int k = 0; k < 3 * n; k++) {
        state = state * 1664525u + 1013904223u;
        succ[k] = (int)((state >> 8) % (unsigned int)n);
    }
    for (int v = 0; v < n; v++)
        mark[v] = -1;
    mark[0] = 0;
    int round = 0;
    while (claim(n, succ, round, mark))
        round++;
    long long reached = 0, total = 0;
    for (int v = 0; v < n; v++)
        if (mark[v] >= 0) {
            reached++;
            total += mark[v];
        }
    /* a negative round falls back to the host loop: nodes at -1 claim for round 0 */
    int grew = claim(n, succ, -1, mark);
    for (int b = 0; b < n; b++)
        seen[b] = 0;
    touch(3 * n, succ, seen);
    touch(n, succ + n, seen);
    int buckets = 0;
    for (int b = 0; b < n; b++)
        buckets += seen[b];
    printf("rounds=%d reached=%lld total=%lld grew=%d buckets=%d\n", round, reached, total, grew,
           buckets);
    free(succ);
    free(mark);
    free(seen);
    return 0;
}
