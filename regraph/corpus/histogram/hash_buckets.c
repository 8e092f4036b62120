/* hash_buckets: load of each bucket of an open hash table for a stream of 64-bit keys
 * hashed with a multiply-shift hash, and the longest bucket. Pattern: histogram indexed by
 * a hash (random conflicts), followed by a max reduction. */
#include <stdio.h>
#include <stdlib.h>

#define KEYS 3000000
#define BUCKETS 4096

void bucket_loads(int n, const unsigned long long *keys, int *load) {
    for (int i = 0; i < n; i++) {
        unsigned long long h = keys[i] * 0x9E3779B97F4A7C15ull;
        load[h >> 52]++;
    }
}

int main(void) {
    unsigned long long *keys = malloc(sizeof(unsigned long long) * KEYS);
    unsigned long long k = 88172645463325252ull;
    for (int i = 0; i < KEYS; i++) {
        k ^= k << 13;
        k ^= k >> 7;
        k ^= k << 17;
        keys[i] = k % 1000003ull;
    }
    int *load = calloc(BUCKETS, sizeof(int));
    bucket_loads(KEYS, keys, load);
    int longest = 0;
    long long squares = 0;
    for (int b = 0; b < BUCKETS; b++) {
        if (load[b] > longest) longest = load[b];
        squares += (long long)load[b] * load[b];
    }
    printf("longest %d sum of squares %lld\n", longest, squares);
    free(keys); free(load);
    return 0;
}
