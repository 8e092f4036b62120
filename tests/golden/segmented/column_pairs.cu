/* A kernel as schedule writes them, one thread per column, whose inner loop keeps two
   sums and resets one of them on its first run (isl fuses such resets into the loop):
   segmented's rows layout must share the loop among a block's rows with both sums in
   registers, run the reset before the loop where the loop runs at all, and print what
   the sequential loops print. 45 rows by 70 columns (three blocks of 32 columns, the
   last partly past the end); and a column of no rows, whose reset must not run. */
#include <stdio.h>
#include <stdlib.h>

#define ROWS 45
#define COLS 70

__global__ void pairs_kernel(double (*A)[COLS], double *sum, double *mag, int rows,
                             long long lo_j, long long trips_j)
{
    for (long long t_j = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_j < trips_j;
         t_j += (long long)blockDim.x * gridDim.x) {
        const int j = (int)(lo_j + t_j);
        sum[j] = 0.5;
        for (int i = 0; (i < rows); i += 1) {
            sum[j] = sum[j] + A[i][j];
            if ((i == 0)) {
                mag[j] = 0.0;
            }
            mag[j] += A[i][j] * A[i][j];
        }
    }
}

static double A[ROWS][COLS];
static double sum[COLS], mag[COLS];

static void run(int rows)
{
    double (*d_A)[COLS];
    double *d_sum, *d_mag;
    cudaMalloc((void **)&d_A, sizeof A);
    cudaMalloc((void **)&d_sum, sizeof sum);
    cudaMalloc((void **)&d_mag, sizeof mag);
    cudaMemcpy(d_A, A, sizeof A, cudaMemcpyHostToDevice);
    cudaMemcpy(d_mag, mag, sizeof mag, cudaMemcpyHostToDevice);
    const long long lo_j = 0, trips_j = COLS;
    pairs_kernel<<<dim3(3), dim3(32)>>>(d_A, d_sum, d_mag, rows, lo_j, trips_j);
    cudaMemcpy(sum, d_sum, sizeof sum, cudaMemcpyDeviceToHost);
    cudaMemcpy(mag, d_mag, sizeof mag, cudaMemcpyDeviceToHost);
    cudaFree(d_A);
    cudaFree(d_sum);
    cudaFree(d_mag);
}

int main(void)
{
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < COLS; j++)
            A[i][j] = (double)((i * 5 + j * 11) % 13) / 4.0 - 1.5;
    for (int j = 0; j < COLS; j++)
        mag[j] = -1.0;
    run(ROWS);
    for (int j = 0; j < COLS; j += 3)
        printf("%d %.6f %.6f\n", j, sum[j], mag[j]);
    run(0); /* no rows: sum is 0.5 and mag keeps its value */
    printf("empty %.6f %.6f\n", sum[7], mag[7]);
    return 0;
}
