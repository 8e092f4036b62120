/*
 * Name: segment_sums
 * Category: cpp
 * Computes: the sum of a std::vector<double> over each segment of a CSR-like offsets
 *           std::vector<int> (segments of 1 to 64 values), into a std::vector<double> of
 *           sums, over several passes with a growing scale; prints the total and a weighted sum.
 * Pattern: segmented reduction (one inner sum per segment, bounds from offsets[s], offsets[s+1])
 * CPU time: 0.38 s (g++ -O3, one core; user time, one run, 2026-11-26)
 */
#include <cstdio>
#include <vector>

#ifdef BENCH_SMALL
const int kSegments = 400;
const int kPasses = 3;
#else
const int kSegments = 250000;
const int kPasses = 80;
#endif

void segment_sums(const std::vector<double> &values, const std::vector<int> &offsets,
                  std::vector<double> &sums, int segments, double scale) {
    for (int s = 0; s < segments; s++) {
        double acc = 0.0;
        for (int j = offsets[s]; j < offsets[s + 1]; j++)
            acc += values[j];
        sums[s] = scale * acc;
    }
}

int main() {
    unsigned int state = 777001u;
    std::vector<int> offsets(kSegments + 1);
    offsets[0] = 0;
    for (int s = 0; s < kSegments; s++) {
        state = state * 1664525u + 1013904223u;
        offsets[s + 1] = offsets[s] + 1 + static_cast<int>(state >> 16 & 63); /* 1 .. 64 */
    }
    const int total = offsets[kSegments];
    std::vector<double> values(total);
    for (int i = 0; i < total; i++) {
        state = state * 1664525u + 1013904223u;
        values[i] = 0.25 + static_cast<double>(state >> 8) / 16777216.0; /* 0.25 .. 1.25 */
    }
    std::vector<double> sums(kSegments);
    double grand = 0.0, weighted = 0.0;
    for (int p = 0; p < kPasses; p++) {
        segment_sums(values, offsets, sums, kSegments, 1.0 + 0.01 * p);
        for (int s = 0; s < kSegments; s++) {
            grand += sums[s];
            weighted += sums[s] * static_cast<double>(s % 5 + 1);
        }
    }
    std::printf("segments: %d values %d\n", kSegments, total);
    std::printf("segmented sum: total %.6e weighted %.6e\n", grand, weighted);
    return 0;
}
