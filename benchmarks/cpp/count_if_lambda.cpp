/*
 * Name: count_if_lambda
 * Category: cpp
 * Computes: for each of a series of half-open bands [lo, hi), how many values of a
 *           std::vector<double> fall in it, the test being a capturing lambda; prints the sum
 *           of the counts and a band-weighted sum (exact integers).
 * Pattern: count reduction through a capturing predicate lambda (if (in_band(x[i])) count++)
 * CPU time: 0.61 s (g++ -O3, one core; user time, one run, 2026-11-26)
 */
#include <cstdio>
#include <vector>

#ifdef BENCH_SMALL
const int kValues = 20000;
const int kBands = 8;
#else
const int kValues = 8000000;
const int kBands = 24;
#endif

long count_in_band(const std::vector<double> &values, double lo, double hi) {
    auto in_band = [lo, hi](double x) { return x >= lo && x < hi; };
    const int n = static_cast<int>(values.size());
    long count = 0;
    for (int i = 0; i < n; i++)
        if (in_band(values[i]))
            count++;
    return count;
}

int main() {
    std::vector<double> values(kValues);
    unsigned int state = 31337u;
    for (int i = 0; i < kValues; i++) {
        state = state * 1664525u + 1013904223u;
        double u = static_cast<double>(state >> 8) / 16777216.0; /* a multiple of 2^-24 in [0, 1) */
        /* half uniform (some values sit exactly on band edges), half skewed towards 0 */
        values[i] = (i % 2 == 0) ? u : u * u;
    }
    long total = 0, weighted = 0, widest = 0;
    for (int b = 0; b < kBands; b++) {
        /* edges are multiples of 1/64: exact, and the bands overlap */
        const double lo = static_cast<double>(b * 7 % 60) / 64.0;
        const double hi = lo + static_cast<double>(1 + b % 5) / 64.0;
        long count = count_in_band(values, lo, hi);
        total += count;
        weighted += count * (b + 1);
        if (count > widest)
            widest = count;
    }
    std::printf("bands: count sum %ld, weighted count sum %ld\n", total, weighted);
    std::printf("bands: largest count %ld\n", widest);
    return 0;
}
