/*
 * Name: row_cumsum
 * Category: cpp
 * Computes: the running sums of each row of a rows x cols std::vector<double> of weights (a
 *           per-row cumulative distribution, started at a per-row offset), over several
 *           passes with growing weights; main finds each row's median column in the sums.
 * Pattern: segmented scan (an inner prefix sum restarted for every row of an outer parallel loop)
 * CPU time: 0.38 s (g++ -O3, one core; user time, median of 3 runs, 2026-11-26)
 */
#include <cstdio>
#include <vector>

#ifdef BENCH_SMALL
const int kRows = 48;
const int kCols = 100;
const int kPasses = 2;
#else
const int kRows = 16384;
const int kCols = 512;
const int kPasses = 48;
#endif

void row_cumsum(const std::vector<double> &weights, std::vector<double> &cdf, int rows, int cols,
                double scale) {
    for (int r = 0; r < rows; r++) {
        double running = 0.001 * r;
        for (int c = 0; c < cols; c++) {
            running += scale * weights[r * cols + c];
            cdf[r * cols + c] = running;
        }
    }
}

int main() {
    std::vector<double> weights(static_cast<size_t>(kRows) * kCols), cdf(weights.size());
    unsigned int state = 4242u;
    for (size_t i = 0; i < weights.size(); i++) {
        state = state * 1664525u + 1013904223u;
        weights[i] = static_cast<double>(state >> 12 & 1023) / 1024.0; /* 0 .. 1 */
    }
    long long median_sum = 0;
    double last_sum = 0.0;
    for (int p = 0; p < kPasses; p++) {
        row_cumsum(weights, cdf, kRows, kCols, 1.0 + 0.25 * p);
        for (int r = 0; r < kRows; r += 7) {
            const double *row = &cdf[static_cast<size_t>(r) * kCols];
            const double half = 0.5 * row[kCols - 1];
            int lo = 0, hi = kCols - 1; /* the first column whose running sum reaches half */
            while (lo < hi) {
                const int mid = (lo + hi) / 2;
                if (row[mid] >= half)
                    hi = mid;
                else
                    lo = mid + 1;
            }
            median_sum += lo;
            last_sum += row[kCols - 1];
        }
    }
    std::printf("row cumsum: median column sum %lld\n", median_sum);
    std::printf("row cumsum: last value sum %.6e\n", last_sum);
    return 0;
}
