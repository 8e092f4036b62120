/*
 * Name: vector_struct_reduce
 * Category: cpp
 * Computes: reductions over a std::vector of sample structs through a function template
 *           taking a functor: weighted mean, energy, per-label counts and the largest
 *           value; repeated for several value offsets. Prints aggregates and exact counts.
 * Pattern: reduction (templated transform-reduce over an array of structs; per-label counts)
 * CPU time: 0.75 s (g++ -O3, one core; user time, median of 3 runs, 2026-11-22)
 */
#include <cstdio>
#include <vector>

#ifdef BENCH_SMALL
const int kSamples = 10000;
const int kRounds = 2;
#else
const int kSamples = 1 << 22;
const int kRounds = 24;
#endif
const int kLabels = 8;

struct Sample {
    float value;
    float weight;
    int label;
};

class Lcg {
  public:
    explicit Lcg(unsigned int seed) : state_(seed) {}
    unsigned int next() {
        state_ = state_ * 1664525u + 1013904223u;
        return state_;
    }
    float uniform() { return static_cast<float>(next() >> 8) * (1.0f / 16777216.0f); }

  private:
    unsigned int state_;
};

std::vector<Sample> make_samples(int n, unsigned int seed) {
    Lcg rng(seed);
    std::vector<Sample> samples(n);
    for (auto &s : samples) {
        s.value = 1.0f + 9.0f * rng.uniform();
        s.weight = 0.1f + rng.uniform();
        s.label = static_cast<int>(rng.next() >> 28) % kLabels;
    }
    return samples;
}

template <typename Map>
double transform_reduce(const std::vector<Sample> &samples, Map map) {
    double total = 0.0;
    for (std::size_t i = 0; i < samples.size(); i++)
        total += map(samples[i]);
    return total;
}

struct Weighted {
    float offset;
    double operator()(const Sample &s) const { return static_cast<double>(s.weight) * (s.value + offset); }
};

struct Energy {
    float offset;
    double operator()(const Sample &s) const {
        float v = s.value + offset;
        return 0.5 * s.weight * v * v;
    }
};

void count_labels(const std::vector<Sample> &samples, float threshold, long long *counts) {
    for (int k = 0; k < kLabels; k++)
        counts[k] = 0;
    for (std::size_t i = 0; i < samples.size(); i++)
        if (samples[i].value > threshold)
            counts[samples[i].label] += 1;
}

float largest_value(const std::vector<Sample> &samples) {
    float best = samples[0].value;
    for (std::size_t i = 1; i < samples.size(); i++)
        if (samples[i].value > best)
            best = samples[i].value;
    return best;
}

int main() {
    std::vector<Sample> samples = make_samples(kSamples, 2468u);
    double weight_total = transform_reduce(samples, [](const Sample &s) { return static_cast<double>(s.weight); });
    std::printf("weight total=%.6e max=%.6e\n", weight_total, static_cast<double>(largest_value(samples)));
    double mean_sum = 0.0, energy_sum = 0.0;
    long long count_sum = 0;
    for (int r = 0; r < kRounds; r++) {
        float offset = 0.25f * static_cast<float>(r);
        double mean = transform_reduce(samples, Weighted{offset}) / weight_total;
        double energy = transform_reduce(samples, Energy{offset});
        long long counts[kLabels];
        count_labels(samples, 2.0f + 0.25f * static_cast<float>(r), counts);
        for (int k = 0; k < kLabels; k++)
            count_sum += (k + 1) * counts[k];
        mean_sum += mean;
        energy_sum += energy;
        if (r % 8 == 0)
            std::printf("round %d: mean=%.6e energy=%.6e label0=%lld label7=%lld\n", r, mean, energy, counts[0],
                        counts[7]);
    }
    std::printf("totals: mean=%.6e energy=%.6e counts=%lld\n", mean_sum, energy_sum, count_sum);
    return 0;
}
