#include <stdio.h>
#include <stdlib.h>

/* a byte pattern over more elements than an int counts: 2^31 + 4096 */
void pattern(long n, unsigned char *bytes)
{
    for (long i = 0; i < n; i++)
        bytes[i] = (unsigned char)((i >> 5) ^ (i & 255));
}

int main(void)
{
    long n = 2147483648L + 4096;
    unsigned char *bytes = malloc((size_t)n);
    if (!bytes)
        return 1;
    pattern(n, bytes);
    unsigned long long sum = 0;
    for (long i = 0; i < n; i += 4093)
        sum += bytes[i];
    printf("first=%u last=%u sampled=%llu\n", bytes[0], bytes[n - 1], sum);
    free(bytes);
    return 0;
}
