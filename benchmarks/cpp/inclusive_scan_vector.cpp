/*
 * Name: inclusive_scan_vector
 * Category: cpp
 * Computes: the inclusive prefix sums of several std::vector<long> inputs (small positive
 *           integers, exact) into an output std::vector<long>, over several passes; prints
 *           the sum of the last elements and a strided checksum of the outputs.
 * Pattern: inclusive scan (out[i] = out[i-1] + in[i]), a loop-carried dependence over a vector
 * CPU time: 0.36 s (g++ -O3, one core; user time, one run, 2026-11-26)
 */
#include <cstdio>
#include <vector>

#ifdef BENCH_SMALL
const int kLength = 5000;
const int kVectors = 3;
const int kPasses = 2;
const int kStride = 97;
#else
const int kLength = 2000000;
const int kVectors = 4;
const int kPasses = 80;
const int kStride = 997;
#endif

void inclusive_scan(const std::vector<long> &in, std::vector<long> &out, int n) {
    long running = 0;
    for (int i = 0; i < n; i++) {
        running += in[i];
        out[i] = running;
    }
}

int main() {
    std::vector<std::vector<long>> inputs(kVectors, std::vector<long>(kLength));
    std::vector<long> out(kLength);
    unsigned int state = 20261126u;
    for (int v = 0; v < kVectors; v++)
        for (int i = 0; i < kLength; i++) {
            state = state * 1664525u + 1013904223u;
            inputs[v][i] = static_cast<long>(state >> 16 & 1023) + v; /* 0 .. 1026 */
        }
    long last_sum = 0, strided = 0;
    for (int p = 0; p < kPasses; p++)
        for (int v = 0; v < kVectors; v++) {
            inclusive_scan(inputs[v], out, kLength);
            last_sum += out[kLength - 1];
            for (int i = (p + v) % kStride; i < kLength; i += kStride)
                strided += out[i] % 1000003;
        }
    std::printf("scan: last element sum %ld\n", last_sum);
    std::printf("scan: strided checksum %ld\n", strided);
    return 0;
}
