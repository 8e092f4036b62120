/*
 * Name: sort_keys
 * Category: cpp
 * Computes: sorts std::vector<unsigned> keys with std::sort, then a position-weighted
 *           checksum of the sorted keys (sum of key[i] * (i % 7)), for a few key sets;
 *           prints the exact integer checksums.
 * Pattern: sort (std::sort on a vector), then a reduction that depends on the sorted order
 * CPU time: 0.55 s (g++ -O3, one core; user time, one run, 2026-11-26)
 */
#include <algorithm>
#include <cstdio>
#include <vector>

#ifdef BENCH_SMALL
const int kKeys = 20000;
const int kSets = 2;
#else
const int kKeys = 3000000;
const int kSets = 3;
#endif

unsigned long long sort_and_checksum(std::vector<unsigned> &keys, int n) {
    std::sort(keys.begin(), keys.end());
    unsigned long long sum = 0;
    for (int i = 0; i < n; i++)
        sum += static_cast<unsigned long long>(keys[i]) * static_cast<unsigned long long>(i % 7);
    return sum;
}

int main() {
    std::vector<unsigned> keys(kKeys);
    unsigned int state = 31337u;
    unsigned long long total = 0;
    unsigned long long first_keys = 0, last_keys = 0;
    for (int set = 0; set < kSets; set++) {
        for (int i = 0; i < kKeys; i++) {
            state = state * 1664525u + 1013904223u;
            /* later sets draw from fewer distinct values: more duplicates */
            keys[i] = (state ^ (state >> 13)) >> (set * 4);
        }
        total += sort_and_checksum(keys, kKeys);
        first_keys += keys[0];
        last_keys += keys[kKeys - 1];
    }
    std::printf("sorted checksum: %llu\n", total);
    std::printf("smallest key sum: %llu, largest key sum: %llu\n", first_keys, last_keys);
    return 0;
}
