#include <stdio.h>
#include <stdlib.h>

/* every other sample of a signal centred on zero, from -n to n - 2, kept in place */
void decimate(int n, const double *signal, double *half)
{
    for (int i = -n; i < n; i += 2)
        half[n + i] = 0.5 * (signal[i + n] + signal[i + n + 1]) + 0.001 * i;
}

int main(void)
{
    int n = 30000;
    double *signal = malloc((size_t)2 * n * sizeof(double));
    double *half = calloc((size_t)2 * n, sizeof(double));
    for (int k = 0; k < 2 * n; k++)
        signal[k] = (k % 13) * 0.25 - 1.0;
    decimate(n, signal, half);
    double sum = 0.0;
    for (int k = 0; k < 2 * n; k++)
        sum += half[k];
    printf("half[0]=%.4f half[last]=%.4f sum=%.6e\n", half[0], half[2 * n - 2], sum);
    free(signal);
    free(half);
    return 0;
}
