/*
 * Name: complex_fir
 * Category: cpp
 * Computes: a cascade of 64-tap complex FIR filters y[n] = sum_k h[k] * x[n-k] over a
 *           std::vector<std::complex<float>> signal (std::complex multiply-accumulate), then
 *           the outputs' total magnitude (std::abs, double sum) in a separate loop.
 * Pattern: parallel loop over outputs with a short inner complex reduction (std::complex<float>)
 * CPU time: 0.61 s (g++ -O3, one core; user time, one run, 2026-11-26)
 */
#include <cmath>
#include <complex>
#include <cstdio>
#include <vector>

#ifdef BENCH_SMALL
const int kSignal = 20000;
const int kStages = 2;
#else
const int kSignal = 2000000;
const int kStages = 4;
#endif
const int kTaps = 64;

class Lcg {
  public:
    explicit Lcg(unsigned int seed) : state_(seed) {}
    unsigned int next() {
        state_ = state_ * 1664525u + 1013904223u;
        return state_;
    }
    float uniform() { return static_cast<float>(next() >> 8) / 16777216.0f; }

  private:
    unsigned int state_;
};

void fir_filter(const std::vector<std::complex<float>> &x, const std::vector<std::complex<float>> &h,
                std::vector<std::complex<float>> &y, int n, int taps) {
    for (int i = 0; i < n; i++) {
        std::complex<float> acc(0.0f, 0.0f);
        const int kmax = i < taps - 1 ? i : taps - 1;
        for (int k = 0; k <= kmax; k++)
            acc += h[k] * x[i - k];
        y[i] = acc;
    }
}

double total_magnitude(const std::vector<std::complex<float>> &y, int n) {
    double total = 0.0;
    for (int i = 0; i < n; i++)
        total += std::abs(y[i]);
    return total;
}

int main() {
    Lcg rng(4096u);
    std::vector<std::complex<float>> x(kSignal), h(kTaps), y(kSignal);
    float gain = 0.0f;
    for (int k = 0; k < kTaps; k++) {
        /* a windowed low-pass with a small complex rotation, normalised to unit DC gain */
        const float w = 0.54f - 0.46f * std::cos(6.2831853f * k / (kTaps - 1));
        h[k] = std::complex<float>(w * (0.5f + 0.5f * rng.uniform()), 0.2f * w * rng.uniform());
        gain += h[k].real();
    }
    for (int k = 0; k < kTaps; k++)
        h[k] /= gain;
    for (int i = 0; i < kSignal; i++)
        x[i] = std::complex<float>(std::sin(0.001f * i) + rng.uniform(), 0.5f * rng.uniform());
    /* a cascade of identical stages: each stage filters the previous stage's output */
    for (int s = 0; s < kStages; s++) {
        fir_filter(x, h, y, kSignal, kTaps);
        x.swap(y);
    }
    x.swap(y);
    const double total = total_magnitude(y, kSignal);
    std::printf("fir output: total magnitude=%.6e\n", total);
    std::printf("fir output: y[last] magnitude=%.6e\n", static_cast<double>(std::abs(y[kSignal - 1])));
    return 0;
}
