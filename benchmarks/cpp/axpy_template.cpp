/*
 * Name: axpy_template
 * Category: cpp
 * Computes: repeated templated AXPY updates y = a*x + y on std::vector<float> and
 *           std::vector<double>, followed by a templated scaled-sum; prints the sums.
 * Pattern: parallel loop (function template instantiated for two element types; std::vector data)
 * CPU time: 1.66 s (g++ -O3, one core; user time, median of 3 runs, 2026-11-22)
 */
#include <cstdio>
#include <vector>

#ifdef BENCH_SMALL
const int kSize = 10000;
const int kRounds = 3;
#else
const int kSize = 1 << 23;
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

template <typename T>
void fill_uniform(std::vector<T> &v, unsigned int seed) {
    Lcg rng(seed);
    for (auto &value : v)
        value = static_cast<T>(rng.uniform());
}

template <typename T>
void axpy(T a, const std::vector<T> &x, std::vector<T> &y) {
    const int n = static_cast<int>(x.size());
    for (int i = 0; i < n; i++)
        y[i] = a * x[i] + y[i];
}

template <typename T>
double weighted_sum(const std::vector<T> &v) {
    double s = 0.0;
    for (std::size_t i = 0; i < v.size(); i++)
        s += static_cast<double>(v[i]) * (1.0 + static_cast<double>(i % 4));
    return s;
}

template <typename T>
void run_rounds(const char *label, unsigned int seed) {
    std::vector<T> x(kSize), y(kSize);
    fill_uniform(x, seed);
    fill_uniform(y, seed + 1);
    for (int r = 0; r < kRounds; r++) {
        T a = static_cast<T>(0.5 + 0.01 * r);
        axpy(a, x, y);
        axpy(static_cast<T>(0.25), y, x);
    }
    std::printf("%s: x=%.6e y=%.6e\n", label, weighted_sum(x), weighted_sum(y));
}

int main() {
    run_rounds<float>("float", 12u);
    run_rounds<double>("double", 34u);
    return 0;
}
