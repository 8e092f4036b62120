/*
 * Name: compact_positive
 * Category: cpp
 * Computes: for a series of thresholds, the elements of a std::vector<float> above the
 *           threshold copied in order into an output vector with push_back; prints the total
 *           number kept, the sum of the kept elements, and a checksum of their order.
 * Pattern: stream compaction (filter with out.push_back(x) in a loop, order preserved)
 * CPU time: 0.84 s (g++ -O3, one core; user time, one run, 2026-11-26)
 */
#include <cstdio>
#include <vector>

#ifdef BENCH_SMALL
const int kSize = 40000;
const int kThresholds = 5;
#else
const int kSize = 4000000;
const int kThresholds = 40;
#endif

void keep_above(const std::vector<float> &in, float threshold, std::vector<float> &out) {
    out.clear();
    out.reserve(in.size());
    const int n = static_cast<int>(in.size());
    for (int i = 0; i < n; i++) {
        const float x = in[i];
        if (x > threshold)
            out.push_back(x);
    }
}

int main() {
    std::vector<float> in(kSize);
    unsigned int state = 777u;
    for (int i = 0; i < kSize; i++) {
        state = state * 1664525u + 1013904223u;
        /* multiples of 1/256 in [-128, 128): the thresholds below lie halfway between them,
           and every sum of kept elements is exact in double */
        in[i] = static_cast<float>(static_cast<int>(state >> 8 & 0xffff) - 32768) / 256.0f;
    }
    std::vector<float> out;
    long kept = 0;
    double kept_sum = 0.0, order_sum = 0.0;
    for (int t = 0; t < kThresholds; t++) {
        const float threshold = (6.0f * t - 100.0f) + 0.5f / 256.0f;
        keep_above(in, threshold, out);
        const int m = static_cast<int>(out.size());
        kept += m;
        for (int i = 0; i < m; i++)
            kept_sum += out[i];
        /* elements at fixed positions of the output: only right if the order is kept */
        for (int i = 0; i < m; i += 997)
            order_sum += out[i];
    }
    std::printf("kept: %ld\n", kept);
    std::printf("kept sum=%.6f order checksum=%.6f\n", kept_sum, order_sum);
    return 0;
}
