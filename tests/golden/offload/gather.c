#include <stdio.h>
#include <stdlib.h>

#define NNODES (1 << 16)
#define NEDGES (1 << 20)

/* out[i] = w[i] * src[idx[i]]: src's extent is no argument, but every caller passes an
   allocation of NNODES elements */
void gather(int n, const int *idx, const float *w, const float *src, float *out)
{
    for (int i = 0; i < n; i++)
        out[i] = w[i] * src[idx[i]];
}

int main(void)
{
    int *idx = (int *)malloc(sizeof(int) * NEDGES);
    float *w = (float *)malloc(sizeof(float) * NEDGES);
    float *node = (float *)malloc(sizeof(float) * NNODES);
    float *edge = (float *)malloc(sizeof(float) * NEDGES);
    for (int i = 0; i < NEDGES; i++) {
        idx[i] = (int)(((long long)i * 7919) % NNODES);
        w[i] = 0.5f + (float)(i % 5) * 0.25f;
    }
    for (int i = 0; i < NNODES; i++)
        node[i] = (float)(i % 100) * 0.01f;
    gather(NEDGES, idx, w, node, edge);
    double sum = 0.0;
    for (int i = 0; i < NEDGES; i++)
        sum += edge[i];
    printf("edge[1]=%.4f edge[n-1]=%.4f sum=%.6e\n", edge[1], edge[NEDGES - 1], sum);
    free(idx);
    free(w);
    free(node);
    free(edge);
    return 0;
}
