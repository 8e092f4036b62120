#include <stdio.h>
#include <stdlib.h>

/* the mean of each interior cell's six neighbours in an n^3 cube */
void smooth(int n, const float *in, float *out)
{
    for (int i = 1; i < n - 1; i++)
        for (int j = 1; j < n - 1; j++)
            for (int k = 1; k < n - 1; k++) {
                size_t at = ((size_t)i * n + j) * n + k;
                out[at] = (in[at - 1] + in[at + 1] + in[at - n] + in[at + n] +
                           in[at - (size_t)n * n] + in[at + (size_t)n * n]) / 6.0f;
            }
}

int main(void)
{
    int n = 48;
    size_t cells = (size_t)n * n * n;
    float *in = malloc(cells * sizeof(float));
    float *out = calloc(cells, sizeof(float));
    for (size_t c = 0; c < cells; c++)
        in[c] = (float)(c % 31) * 0.5f;
    smooth(n, in, out);
    double sum = 0.0;
    for (size_t c = 0; c < cells; c++)
        sum += out[c];
    printf("out[center]=%.4f sum=%.6e\n", out[(cells + n * n + n) / 2], sum);
    free(in);
    free(out);
    return 0;
}
