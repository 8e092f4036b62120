/* Accumulations that schedule maps one thread per row or column: segmented shares each
   row's loop among a warp's lanes (rows of 70 values: more than two lanes' turns) and
   each column's loop among a block's rows (45 values: a row past the end runs none).
   A matrix-vector product into array elements, a difference into a scalar, a product of
   factors near 1, a column sum, a column's mean then its variance (the second loop reads
   the first's total in every row), a row's sum and sum of squares in one pass (their
   resets fused into the loop by isl, as in PolyBench gesummv), a column's two sums in one
   pass, and two it must leave alone: a reset after the first sum, and every other column
   (neither layout reads it side by side). */
#include <stdio.h>

#define ROWS 45
#define COLS 70

static double A[ROWS][COLS];
static double x[COLS];
static double y[ROWS];
static double gap[ROWS];
static double prod[ROWS];
static double colsum[COLS];
static double fused[ROWS];
static double colvar[COLS];
static double half[COLS / 2];
static double rsum[ROWS], rsq[ROWS];
static double csum[COLS], cabs[COLS];

static void init(void)
{
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < COLS; j++)
            A[i][j] = (double)((i * 7 + j * 3) % 11) / 8.0 - 0.5;
    for (int j = 0; j < COLS; j++)
        x[j] = (double)(j % 5) / 4.0 + 0.25;
}

static void kernels(void)
{
    for (int i = 0; i < ROWS; i++) {
        y[i] = 0.5;
        for (int j = 0; j < COLS; j++)
            y[i] = y[i] + A[i][j] * x[j];
    }
    for (int i = 0; i < ROWS; i++) {
        double d = 1.0;
        for (int j = 0; j < COLS; j++)
            d -= A[i][j] * 0.5;
        gap[i] = d;
    }
    for (int i = 0; i < ROWS; i++) {
        prod[i] = 1.0;
        for (int j = 0; j < COLS; j++)
            prod[i] *= 1.0 + A[i][j] / 64.0;
    }
    for (int j = 0; j < COLS; j++) {
        colsum[j] = 0.0;
        for (int i = 0; i < ROWS; i++)
            colsum[j] += A[i][j];
    }
    for (int j = 0; j < COLS; j++) {
        double m = 0.0;
        for (int i = 0; i < ROWS; i++)
            m += A[i][j];
        m = m / ROWS;
        double v = 0.0;
        for (int i = 0; i < ROWS; i++)
            v = v + (A[i][j] - m) * (A[i][j] - m);
        colvar[j] = v;
    }
    for (int j = 0; j < COLS / 2; j++) {
        half[j] = 0.0;
        for (int i = 0; i < ROWS; i++)
            half[j] += A[i][2 * j];
    }
    for (int i = 0; i < ROWS; i++) {
        rsum[i] = 0.0;
        rsq[i] = 0.0;
        for (int j = 0; j < COLS; j++) {
            rsum[i] = A[i][j] * x[j] + rsum[i];
            rsq[i] = A[i][j] * A[i][j] + rsq[i];
        }
        rsq[i] = rsq[i] - rsum[i];
    }
    for (int j = 0; j < COLS; j++) {
        csum[j] = 1.0;
        cabs[j] = 0.0;
        for (int i = 0; i < ROWS; i++) {
            csum[j] += A[i][j];
            cabs[j] += A[i][j] > 0 ? A[i][j] : -A[i][j];
        }
    }
    for (int i = 0; i < ROWS; i++) {
        fused[i] = 0.0;
        for (int j = 0; j < COLS; j++) {
            fused[i] += A[i][j];
            if (j == 0)
                fused[i] = 1.0;
        }
    }
}

int main(void)
{
    init();
    kernels();
    double total = 0.0;
    for (int i = 0; i < ROWS; i++) {
        printf("%d %.6f %.6f %.6f %.6f %.6f %.6f\n", i, y[i], gap[i], prod[i], fused[i], rsum[i],
               rsq[i]);
        total += y[i];
    }
    for (int j = 0; j < COLS; j += 7)
        printf("col %d %.6f %.6f %.6f %.6f %.6f\n", j, colsum[j], colvar[j], half[j / 2], csum[j],
               cabs[j]);
    printf("total %.6f\n", total);
    return 0;
}
