#include <stdio.h>
#include <stdlib.h>

#define ROWS 600
#define COLS 500

/* Column-major matrices: element (i, j) lives at [j * rows + i], so i walks memory. The
   nest runs j innermost, which the offload puts on x. */
void scale_add(int rows, int cols, float s, const float *a, float *b)
{
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++)
            b[j * rows + i] = s * a[j * rows + i] + b[j * rows + i];
}

int main(void)
{
    float *a = (float *)malloc(sizeof(float) * ROWS * COLS);
    float *b = (float *)malloc(sizeof(float) * ROWS * COLS);
    for (int k = 0; k < ROWS * COLS; k++) {
        a[k] = (float)(k % 101) * 0.5f;
        b[k] = (float)(k % 7);
    }
    scale_add(ROWS, COLS, 2.0f, a, b);
    double sum = 0.0;
    for (int k = 0; k < ROWS * COLS; k++)
        sum += b[k] * (1 + k % 3);
    printf("b[0]=%.3f b[last]=%.3f sum=%.6e\n", b[0], b[ROWS * COLS - 1], sum);
    free(a);
    free(b);
    return 0;
}
