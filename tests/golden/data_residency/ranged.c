/* Range-limited barriers: the host loops and element reads between launches touch only
   the elements they name, so the arrays they do not name stay on the device. relax()'s
   `changed` flag is a local whose address comes back every call: it keeps its copies. */
#include <stdio.h>
#include <stdlib.h>

#define N 4096
#define DEG 3

/* returns 1 when some node got the next level */
int relax(int n, const int *adj, int level, int *dist)
{
    int changed = 0;
    for (int v = 0; v < n; v++) {
        if (dist[v] != level)
            continue;
        for (int k = DEG * v; k < DEG * v + DEG; k++) {
            int w = adj[k];
            if (dist[w] < 0) {
                dist[w] = level + 1;
                changed = 1;
            }
        }
    }
    return changed;
}

void smooth(int n, const float *in, float *out)
{
    for (int i = 1; i < n - 1; i++)
        out[i] = 0.25f * in[i - 1] + 0.5f * in[i] + 0.25f * in[i + 1];
}

int main(void)
{
    int *adj = (int *)malloc(sizeof(int) * N * DEG);
    int *dist = (int *)malloc(sizeof(int) * N);
    float *x = (float *)malloc(sizeof(float) * N);
    float *y = (float *)malloc(sizeof(float) * N);
    if (!adj || !dist || !x || !y)
        return 1;
    unsigned int state = 7u;
    for (int e = 0; e < N * DEG; e++) {
        state = state * 1664525u + 1013904223u;
        adj[e] = (int)((state >> 8) % N);
    }
    for (int i = 0; i < N; i++)
        x[i] = y[i] = (float)(i % 17);
    for (int s = 0; s < 3; s++) {
        for (int v = 0; v < N; v++)
            dist[v] = -1;
        dist[s * 101] = 0;
        int level = 0;
        while (relax(N, adj, level, dist))
            level++;
        long long per_level[16] = {0};
        for (int v = 0; v < N; v++)
            if (dist[v] >= 0)
                per_level[dist[v] < 15 ? dist[v] : 15]++;
        smooth(N, x, y);
        smooth(N, y, x);
        double edge = 0.0;
        for (int i = 1; i <= 8; i++)
            edge += x[i - 1] + x[i + 1];
        x[s + 1] = 1.0f;
        printf("source %d: depth=%d level1=%lld edge=%.4f mid=%.4f\n", s, level, per_level[1], edge,
               (double)y[N / 2]);
    }
    free(adj);
    free(dist);
    free(x);
    free(y);
    return 0;
}
