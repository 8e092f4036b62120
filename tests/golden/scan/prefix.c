/* Prefix sums in three spellings: an inclusive accumulator (64-bit integers; of computed
   terms too), an exclusive one whose final value is the total (offsets from counts), and a
   recurrence on the output's previous element (doubles, starting from out[0]). */
#include <stdio.h>
#include <stdlib.h>

#define N 100000

void running_total(int n, const long long *in, long long *out)
{
    long long running = 7;
    for (int i = 0; i < n; i++) {
        running += in[i];
        out[i] = running;
    }
}

int offsets(int n, const int *count, int *start)
{
    int next = 0;
    for (int i = 0; i < n; i++) {
        start[i] = next;
        next += count[i];
    }
    return next;
}

void cumulative(int n, const double *in, double *out)
{
    out[0] = in[0];
    for (int i = 1; i < n; i++)
        out[i] = out[i - 1] + 0.5 * in[i];
}

void weighted_total(int n, const long long *in, long long *out)
{
    long long acc = -5;
    for (int i = 0; i < n; i++) {
        acc += 3 * in[i] - 1;
        out[i] = acc;
    }
}

int main(void)
{
    long long *a = (long long *)malloc(sizeof(long long) * N);
    long long *sa = (long long *)malloc(sizeof(long long) * N);
    int *c = (int *)malloc(sizeof(int) * N);
    int *sc = (int *)malloc(sizeof(int) * N);
    double *d = (double *)malloc(sizeof(double) * N);
    double *sd = (double *)malloc(sizeof(double) * N);
    unsigned int state = 5u;
    for (int i = 0; i < N; i++) {
        state = state * 1664525u + 1013904223u;
        a[i] = (long long)(state >> 8) - 8000000;
        c[i] = (int)(state >> 28);
        d[i] = (double)(state >> 8) / 16777216.0;
    }
    running_total(N, a, sa);
    int total = offsets(N, c, sc);
    cumulative(N, d, sd);
    printf("ints: %lld %lld %lld\n", sa[0], sa[N / 2], sa[N - 1]);
    printf("offsets: %d %d %d total=%d\n", sc[0], sc[1], sc[N - 1], total);
    printf("doubles: %.6e %.6e %.6e\n", sd[0], sd[N / 3], sd[N - 1]);
    weighted_total(N - 1, a, sa + 1);
    printf("weighted: %lld %lld %lld\n", sa[0], sa[1], sa[N - 1]);
    free(a);
    free(sa);
    free(c);
    free(sc);
    free(d);
    free(sd);
    return 0;
}
