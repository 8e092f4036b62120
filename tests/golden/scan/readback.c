/* A scan called in a time loop whose caller reads the scan's last and middle elements
 * on the host right after it, then updates the input on the GPU's side of a kernel. */
#include <stdio.h>

#define N 5000
#define ROUNDS 3

void running(int n, const double *in, double *out)
{
    out[0] = in[0];
    for (int i = 1; i < n; i++)
        out[i] = out[i - 1] + in[i];
}

int main(void)
{
    static double in[N], out[N];
    for (int i = 0; i < N; i++)
        in[i] = 0.5 + (i % 7) * 0.25;
    for (int r = 0; r < ROUNDS; r++) {
        running(N, in, out);
        double last = out[N - 1], middle = out[N / 2];
        printf("round %d: last %.6e middle %.6e\n", r, last, middle);
        for (int i = 0; i < N; i++)
            in[i] = out[i] / last;
    }
    return 0;
}
