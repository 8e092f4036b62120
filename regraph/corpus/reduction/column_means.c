/* column_means: the mean and the mean absolute deviation of every column of a row-major
 * table. Pattern: parallel over columns, reduction over rows (strided reads). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define ROWS 4000
#define COLS 700

void column_stats(int rows, int cols, const double *t, double *mean, double *mad) {
    for (int c = 0; c < cols; c++) {
        double s = 0.0;
        for (int r = 0; r < rows; r++)
            s += t[r * cols + c];
        double m = s / rows, d = 0.0;
        for (int r = 0; r < rows; r++)
            d += fabs(t[r * cols + c] - m);
        mean[c] = m;
        mad[c] = d / rows;
    }
}

int main(void) {
    double *t = malloc(sizeof(double) * ROWS * COLS);
    double *mean = malloc(sizeof(double) * COLS), *mad = malloc(sizeof(double) * COLS);
    for (int r = 0; r < ROWS; r++)
        for (int c = 0; c < COLS; c++)
            t[r * COLS + c] = (double)((r * 31 + c * 17) % 97) * (1.0 + c * 0.001);
    column_stats(ROWS, COLS, t, mean, mad);
    double sm = 0.0, sd = 0.0;
    for (int c = 0; c < COLS; c++) {
        sm += mean[c];
        sd += mad[c];
    }
    printf("means %.8e deviations %.8e\n", sm, sd);
    free(t); free(mean); free(mad);
    return 0;
}
