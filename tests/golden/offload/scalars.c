#include <stdio.h>

#define SIZE 200000

double bias = 0.5;

/* Every other element from `lo` on, with scalars from a parameter, a local and a global;
   the loop variable is declared before the loop and read after it. */
int update(long lo, long hi, double gain, double *v)
{
    long k;
    double offset = gain * 2.0;
    for (k = lo; k < hi; k += 2)
        v[k] = gain * v[k] + offset - bias;
    return (int)k;
}

int main(void)
{
    static double v[SIZE];
    for (int i = 0; i < SIZE; i++)
        v[i] = i % 13;
    int end = update(3, SIZE - 1, 1.5, v);
    double sum = 0.0;
    for (int i = 0; i < SIZE; i++)
        sum += v[i] * (i % 5);
    printf("end=%d v[2]=%.2f v[3]=%.2f v[5]=%.2f sum=%.6e\n", end, v[2], v[3], v[5], sum);
    return 0;
}
