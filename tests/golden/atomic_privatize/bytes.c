/* A 256-bin histogram of bytes: the bins are zeroed by an earlier loop. */
#include <stdio.h>
#include <stdlib.h>

void histogram(const unsigned char *buf, long n, unsigned int *hist)
{
    for (int b = 0; b < 256; b++)
        hist[b] = 0u;
    for (long i = 0; i < n; i++)
        hist[buf[i]] += 1u;
}

int main(void)
{
    long n = 1 << 20;
    unsigned char *buf = (unsigned char *)malloc(n);
    unsigned int hist[256];
    unsigned int state = 3u;
    for (long i = 0; i < n; i++) {
        state = state * 1664525u + 1013904223u;
        buf[i] = (unsigned char)((state >> 24) & (state >> 16));
    }
    histogram(buf, n, hist);
    unsigned long long check = 0;
    for (int b = 0; b < 256; b++)
        check += (unsigned long long)(b + 1) * hist[b];
    printf("bins: %u %u %u check=%llu\n", hist[0], hist[1], hist[255], check);
    free(buf);
    return 0;
}
