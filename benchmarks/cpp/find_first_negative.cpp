/*
 * Name: find_first_negative
 * Category: cpp
 * Computes: for a series of offsets, the first index i of a std::vector<double> where
 *           a[i] + offset < 0 (-1 if there is none); prints the sum of the indices found and
 *           the number of searches that found nothing.
 * Pattern: find-first with an early exit (return i; inside the loop), -1 when nothing matches
 * CPU time: 0.43 s (g++ -O3, one core; user time, one run, 2026-11-26)
 */
#include <cstdio>
#include <vector>

#ifdef BENCH_SMALL
const int kSize = 30000;
const int kQueries = 50;
#else
const int kSize = 4000000;
const int kQueries = 600;
#endif
const int kScale = 64; /* the data and the offsets are multiples of 1/kScale */

int first_negative(const std::vector<double> &a, int n, double offset) {
    for (int i = 0; i < n; i++) {
        if (a[i] + offset < 0.0)
            return i;
    }
    return -1;
}

int main() {
    std::vector<double> a(kSize);
    unsigned int state = 31337u;
    for (int i = 0; i < kSize; i++) {
        state = state * 1664525u + 1013904223u;
        /* a level decaying from about 1000 to 0 plus noise in [0, 256), on a 1/kScale grid */
        const long trend = 1000L * kScale * (kSize - i) / kSize;
        const long noise = static_cast<long>(state >> 8 & (256u * kScale - 1u));
        a[i] = static_cast<double>(trend + noise) / kScale;
    }
    long index_sum = 0;
    int misses = 0;
    for (int q = 0; q < kQueries; q++) {
        /* offsets halfway between the grid points (a[i] + offset is exact and never zero);
           the first match lies deeper for lower levels, and every 50th offset never matches */
        const int j = (q * 7919) % (1000 * kScale);
        const double offset = (q % 50 == 49) ? 0.5 / kScale : -(j + 0.5) / kScale;
        const int at = first_negative(a, kSize, offset);
        if (at < 0)
            misses++;
        else
            index_sum += at;
    }
    std::printf("first negative: index sum %ld\n", index_sum);
    std::printf("misses: %d\n", misses);
    return 0;
}
