/*
 * Name: pair_envelope
 * Category: cpp
 * Computes: a running envelope kept as a std::vector<std::pair<double, double>> (lowest,
 *           highest): each round copies a pair out, widens it with std::min / std::max
 *           against two signals and assigns it back; prints the envelope's aggregates.
 * Pattern: parallel loop (copy and assignment of std::pair elements; std::min, std::max)
 * CPU time: 0.29 s (g++ -O3, one core; user time, one run, 2026-11-25)
 */
#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

#ifdef BENCH_SMALL
const int kSize = 10000;
const int kRounds = 3;
#else
const int kSize = 1 << 22;
const int kRounds = 40;
#endif

class Lcg {
  public:
    explicit Lcg(unsigned int seed) : state_(seed) {}
    unsigned int next() {
        state_ = state_ * 1664525u + 1013904223u;
        return state_;
    }
    double uniform() { return static_cast<double>(next() >> 8) / 16777216.0; }

  private:
    unsigned int state_;
};

void widen(std::vector<std::pair<double, double>> &envelope, const std::vector<double> &a,
           const std::vector<double> &b, double shift) {
    for (std::size_t i = 0; i < envelope.size(); i++) {
        std::pair<double, double> e = envelope[i];
        e.first = std::min(e.first, a[i] - shift);
        e.second = std::max(e.second, b[i] + shift);
        envelope[i] = e;
    }
}

int main() {
    Lcg rng(8642u);
    std::vector<double> a(kSize), b(kSize);
    for (int i = 0; i < kSize; i++) {
        a[i] = rng.uniform();
        b[i] = rng.uniform();
    }
    std::vector<std::pair<double, double>> envelope(kSize, std::make_pair(0.5, 0.5));
    for (int r = 0; r < kRounds; r++)
        widen(envelope, a, b, 0.001 * (r % 7));
    double lows = 0.0, highs = 0.0;
    for (const auto &e : envelope) {
        lows += e.first;
        highs += e.second;
    }
    std::printf("envelope: lows=%.6e highs=%.6e width=%.6e\n", lows, highs, highs - lows);
    return 0;
}
