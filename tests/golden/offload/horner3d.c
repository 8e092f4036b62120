#include <stdio.h>
#include <stdlib.h>

/* a 3-D box blur on an n*n*n cube stored flat, indexed in Horner form ((i*n + j)*n + k) */
void blur3d(int n, const double *in, double *out)
{
    for (int i = 1; i < n - 1; i++)
        for (int j = 1; j < n - 1; j++)
            for (int k = 1; k < n - 1; k++) {
                size_t at = ((size_t)i * n + j) * n + k;
                out[at] = 0.5 * in[at] + 0.25 * (in[at - (size_t)n * n] + in[at + n]) +
                          0.125 * (in[at - 1] + in[at + 1]);
            }
}

int main(void)
{
    int n = 70;
    size_t cells = (size_t)n * n * n;
    double *a = malloc(cells * sizeof(double));
    double *b = malloc(cells * sizeof(double));
    for (size_t c = 0; c < cells; c++) {
        a[c] = (double)(c % 37) * 0.5;
        b[c] = -1.0;
    }
    blur3d(n, a, b);
    double sum = 0.0;
    for (size_t c = 0; c < cells; c++)
        sum += b[c] * (double)(c % 7 + 1);
    printf("b[first]=%.4f b[mid]=%.6f sum=%.8e\n", b[0], b[((size_t)n / 2 * n + n / 3) * n + 5], sum);
    free(a);
    free(b);
    return 0;
}
