#include <math.h>
#include <stdio.h>

#define LEN 100000

static double smooth(double v);

/* out[i] = smooth(in[i]): a user function called from the loop body */
void apply(int n, const double *in, double *out)
{
    for (int i = 0; i < n; i++)
        out[i] = smooth(in[i]) + sqrt(in[i]);
}

static double square(double v)
{
    return v * v;
}

static double smooth(double v)
{
    return square(v) / (1.0 + square(v));
}

int main(void)
{
    static double in[LEN], out[LEN];
    for (int i = 0; i < LEN; i++)
        in[i] = (i % 500) * 0.01;
    apply(LEN, in, out);
    double sum = 0.0;
    for (int i = 0; i < LEN; i++)
        sum += out[i];
    printf("out[1]=%.6f out[499]=%.6f sum=%.6e\n", out[1], out[499], sum);
    return 0;
}
