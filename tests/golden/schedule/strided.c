/* Loops that step by more than one: every 7th element summed, every 3rd from 1 scaled, and
   a 2-D update of every other row. A grid dimension covers only the values the loop takes
   (first + stride * t); a thread for each value in between would touch elements the loop
   never does (the sum would add all of them). */
#include <stdio.h>
#include <stdlib.h>

#define N 100000
#define ROWS 64
#define COLS 300

static double grid[ROWS][COLS];

void scale_every_third(int n, double *v)
{
    for (int i = 1; i < n; i += 3)
        v[i] = 2.0 * v[i] + 1.0;
}

int main(void)
{
    long long *w = (long long *)malloc(N * sizeof(long long));
    double *v = (double *)malloc(N * sizeof(double));
    for (int i = 0; i < N; i++) {
        w[i] = (long long)(i % 1013) * 977 - 400000;
        v[i] = (double)(i % 17) * 0.25;
    }
    long long probes = 0;
    for (int i = 0; i < N; i += 7)
        probes += w[i];
    scale_every_third(N, v);
    for (int r = 0; r < ROWS; r++)
        for (int c = 0; c < COLS; c++)
            grid[r][c] = (double)(r * COLS + c);
    for (int r = 1; r < ROWS; r += 2)
        for (int c = 0; c < COLS; c++)
            grid[r][c] = grid[r][c] * 0.5 + (double)r;
    double total = 0.0;
    for (int i = 0; i < N; i++)
        total += v[i];
    double corner = 0.0;
    for (int r = 0; r < ROWS; r++)
        corner += grid[r][COLS - 1];
    printf("probes=%lld total=%.9e corner=%.9e v1=%.3f v2=%.3f\n", probes, total, corner, v[1], v[2]);
    free(w);
    free(v);
    return 0;
}
