/* C99 variable-length array parameters: 1-D, 2-D, 3-D, qualifiers and `static` in the
   brackets, a prototype before the definition, row pointers, and arrays passed on. */
#include <stdio.h>

void fill(int n, int m, double a[n][m]);

static double sum2(int n, int m, const double a[restrict n][m]) {
    double s = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            s += a[i][j] * (i + 1);
    return s;
}

void fill(int n, int m, double a[n][m]) {
    for (int i = 0; i < n; i++) {
        double *row = a[i]; /* a partial subscript is a row pointer */
        for (int j = 0; j < m; j++)
            row[j] = i * m + j;
    }
}

static double scale(int n, int m, double a[n][m], double f) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            a[i][j] *= f;
    return sum2(n, m, a); /* a flattened parameter passed on */
}

static int cube(int p, int q, int r, int t[p][q][r]) {
    int count = 0;
    for (int i = 0; i < p; i++)
        for (int j = 0; j < q; j++)
            for (int k = 0; k < r; k++)
                t[i][j][k] = count++;
    return t[p - 1][q - 1][r - 1] + t[1][0][1];
}

static double rows(int n, int m, double (*restrict a)[m]) { /* pointer to VLA rows */
    double s = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            s += a[i][j] * (j + 1);
    return s + (double)sizeof a;
}

static double last(int n, int m, double a[][m]) { return a[n - 1][m - 1] + rows(n, m, a); }

static int first(int n, int v[n]) { return v[0] + v[n - 1]; }

static int fixed(int v[static 4], int w[restrict 2][3]) { return v[3] + w[1][2]; }

int main(void) {
    double a[3][4];
    fill(3, 4, a);
    printf("%.1f\n", sum2(3, 4, a));
    printf("%.1f\n", scale(3, 4, a, 0.5));
    int t[2][3][4];
    printf("%d\n", cube(2, 3, 4, t));
    int v[5] = {1, 2, 3, 4, 5};
    int w[2][3] = {{1, 2, 3}, {4, 5, 6}};
    printf("%d %d\n", first(5, v), fixed(v, w));
    int n = 3;
    double local[n][n]; /* a local VLA is fine in nvcc and stays */
    fill(n, n, local);
    printf("%.1f %.1f %.1f\n", local[2][2], rows(n, n, local), last(3, 4, a));
    return 0;
}
