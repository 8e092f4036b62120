/* Gram-Schmidt-like projections: a dot product, a norm, a multiply-add update, and
   2x2 determinants whose cancellation shows any fused multiply-add in the printed digits.
   Double precision, with float, integer index arithmetic and a struct field alongside. */
#include <stdio.h>
#include <stdlib.h>

#define ROWS 512
#define COLS 256

typedef double real;

struct weight { double w; };

void project(int rows, int cols, const real *a, const real *q, real *r, real *out)
{
    for (int j = 0; j < cols; j++) {
        real dot = 0.0;
        for (int i = 0; i < rows; i++)
            dot += q[i * cols + j] * a[i * cols + j];
        r[j] = dot;
        for (int i = 0; i < rows; i++)
            out[i * cols + j] = a[i * cols + j] - q[i * cols + j] * dot;
    }
}

void determinants(int n, const double *x, const double *y, double *det, float *f, int *idx)
{
    for (int k = 0; k < n; k++) {
        det[k] = x[k] * y[k + 1] - x[k + 1] * y[k];
        f[k] *= 0.5f;
        f[k] -= (float)x[k] * 2.0f + 1.0f;
        idx[k] = k * 3 + (k - 1) * 2;
    }
}

void weigh(int n, const struct weight *s, double *v)
{
    for (int k = 0; k < n; k++)
        v[k] = s[k].w * v[k] + 1.0;
}

int main(void)
{
    real *a = (real *)malloc(sizeof(real) * ROWS * COLS);
    real *q = (real *)malloc(sizeof(real) * ROWS * COLS);
    real *out = (real *)malloc(sizeof(real) * ROWS * COLS);
    real *r = (real *)malloc(sizeof(real) * COLS);
    double *x = (double *)malloc(sizeof(double) * (COLS + 1));
    double *y = (double *)malloc(sizeof(double) * (COLS + 1));
    double *det = (double *)malloc(sizeof(double) * COLS);
    float *f = (float *)malloc(sizeof(float) * COLS);
    int *idx = (int *)malloc(sizeof(int) * COLS);
    struct weight *s = (struct weight *)malloc(sizeof(struct weight) * COLS);
    double *v = (double *)malloc(sizeof(double) * COLS);
    for (int i = 0; i < ROWS * COLS; i++) {
        a[i] = 1.0 + (i % 97) / 7.0;
        q[i] = 1.0 / (1.0 + (i % 89));
    }
    for (int k = 0; k <= COLS; k++) {
        x[k] = 1.0 + k / 3.0;
        y[k] = 1.0 + (k + 1) / 3.0;
    }
    for (int k = 0; k < COLS; k++) {
        f[k] = k / 7.0f;
        s[k].w = 1.0 / (k + 1);
        v[k] = k / 11.0;
    }
    project(ROWS, COLS, a, q, r, out);
    determinants(COLS, x, y, det, f, idx);
    weigh(COLS, s, v);
    double rs = 0.0, os = 0.0, ds = 0.0, fs = 0.0, vs = 0.0;
    long is = 0;
    for (int j = 0; j < COLS; j++) {
        rs += r[j];
        ds += det[j];
        fs += f[j];
        vs += v[j];
        is += idx[j];
    }
    for (int i = 0; i < ROWS * COLS; i++)
        os += out[i];
    printf("r %.17g out %.17g\n", rs, os);
    printf("det %.17g det[7] %.17g f %.9g v %.17g idx %ld\n", ds, det[7], fs, vs, is);
    free(a); free(q); free(out); free(r); free(x); free(y); free(det); free(f); free(idx);
    free(s); free(v);
    return 0;
}
