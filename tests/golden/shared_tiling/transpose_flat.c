#include <stdio.h>
#include <stdlib.h>

#define ROWS 75
#define COLS 50

/* out = alpha * in^T + beta for a non-square row-major matrix whose sizes are not
   multiples of a tile: rows i walk in's rows, columns j its unit-stride index, and the
   store walks out's columns, so one of the two accesses is strided along x. */
void transpose_scale(int rows, int cols, float alpha, float beta, const float *in, float *out)
{
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++)
            out[j * rows + i] = alpha * in[i * cols + j] + beta;
}

int main(void)
{
    float *in = (float *)malloc(sizeof(float) * ROWS * COLS);
    float *out = (float *)malloc(sizeof(float) * ROWS * COLS);
    for (int k = 0; k < ROWS * COLS; k++)
        in[k] = (float)((k * 37) % 101) * 0.25f;
    transpose_scale(ROWS, COLS, 1.5f, -2.0f, in, out);
    double sum = 0.0;
    for (int k = 0; k < ROWS * COLS; k++)
        sum += out[k] * (1 + k % 5);
    printf("out[0]=%.3f out[1]=%.3f out[ROWS]=%.3f out[last]=%.3f weighted=%.6e\n", out[0],
           out[1], out[ROWS], out[ROWS * COLS - 1], sum);
    free(in);
    free(out);
    return 0;
}
