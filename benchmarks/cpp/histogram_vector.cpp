/*
 * Name: histogram_vector
 * Category: cpp
 * Computes: over several rounds, a 256-bin histogram of a std::vector<float> (bin
 *           (int)((x + offset) * 256), clamped to 0..255) and a 256-bin histogram of brightness-
 *           shifted unsigned char pixels (saturated to 0..255), both into std::vector<int>;
 *           prints weighted sums of the bins (exact integers).
 * Pattern: histogram: data-dependent bin index, clamped, increments with collisions (atomics)
 * CPU time: 0.36 s (g++ -O3, one core; user time, one run, 2026-11-26)
 */
#include <cstdio>
#include <vector>

#ifdef BENCH_SMALL
const int kValues = 30000;
const int kPixels = 40000;
const int kRounds = 3;
#else
const int kValues = 8000000;
const int kPixels = 8000000;
const int kRounds = 24;
#endif
const int kBins = 256;

void histograms(const std::vector<float> &values, float offset, const std::vector<unsigned char> &pixels, int brightness,
                std::vector<int> &value_bins, std::vector<int> &pixel_bins) {
    const int n = static_cast<int>(values.size());
    for (int i = 0; i < n; i++) {
        int b = static_cast<int>((values[i] + offset) * 256.0f);
        if (b < 0)
            b = 0;
        if (b > 255)
            b = 255;
        value_bins[b]++;
    }
    const int m = static_cast<int>(pixels.size());
    for (int i = 0; i < m; i++) {
        int v = pixels[i] + brightness;
        if (v < 0)
            v = 0;
        if (v > 255)
            v = 255;
        pixel_bins[v]++;
    }
}

int main() {
    std::vector<float> values(kValues);
    std::vector<unsigned char> pixels(kPixels);
    unsigned int state = 4242u;
    for (int i = 0; i < kValues; i++) {
        state = state * 1664525u + 1013904223u;
        int a = static_cast<int>(state >> 17 & 0x7fff);
        state = state * 1664525u + 1013904223u;
        int b = static_cast<int>(state >> 17 & 0x7fff);
        /* a triangular distribution over -1/16 .. 1 + 1/16, in steps of 2^-16: every sum below
         * is exact in float, and some values land exactly on bin edges */
        int sum = a + b;
        values[i] = static_cast<float>(sum + sum / 8 - 4096) / 65536.0f;
    }
    for (int i = 0; i < kPixels; i++) {
        state = state * 1664525u + 1013904223u;
        unsigned int r = state >> 24;
        pixels[i] = static_cast<unsigned char>((r * r) >> 8); /* skewed towards dark pixels */
    }
    std::vector<int> value_bins(kBins, 0), pixel_bins(kBins, 0);
    for (int round = 0; round < kRounds; round++) {
        const float offset = static_cast<float>(round - kRounds / 2) / 1024.0f;
        const int brightness = 200 * round / (kRounds - 1) - 100;
        histograms(values, offset, pixels, brightness, value_bins, pixel_bins);
    }
    long long value_weighted = 0, pixel_weighted = 0, value_squares = 0, pixel_squares = 0;
    for (int b = 0; b < kBins; b++) {
        value_weighted += static_cast<long long>(value_bins[b]) * b;
        pixel_weighted += static_cast<long long>(pixel_bins[b]) * b;
        value_squares += static_cast<long long>(value_bins[b]) * value_bins[b] % 1000003;
        pixel_squares += static_cast<long long>(pixel_bins[b]) * pixel_bins[b] % 1000003;
    }
    std::printf("value bins: weighted sum %lld, squares %lld, first %d, last %d\n", value_weighted, value_squares,
                value_bins[0], value_bins[kBins - 1]);
    std::printf("pixel bins: weighted sum %lld, squares %lld, first %d, last %d\n", pixel_weighted, pixel_squares,
                pixel_bins[0], pixel_bins[kBins - 1]);
    return 0;
}
