// tiny_mlp: score many feature vectors with a fixed two-layer perceptron (8 inputs, 8
// hidden units with a ReLU, one output squashed by a logistic), weights in std::arrays.
// Pattern: C++ std::vector of inputs, independent samples, constant-trip inner loops over
// the layer sizes (fully unrollable) and expf in single precision.
#include <array>
#include <cmath>
#include <cstdio>
#include <vector>

const int kIn = 8;
const int kHidden = 8;
const int kSamples = 400000;

void score(const std::vector<float> &x, const std::array<float, kIn * kHidden> &w1,
           const std::array<float, kHidden> &w2, std::vector<float> &out, int n) {
    for (int s = 0; s < n; s++) {
        float z = 0.25f;
        for (int h = 0; h < kHidden; h++) {
            float a = 0.0f;
            for (int k = 0; k < kIn; k++)
                a += w1[h * kIn + k] * x[s * kIn + k];
            z += w2[h] * (a > 0.0f ? a : 0.0f);
        }
        out[s] = 1.0f / (1.0f + expf(-z));
    }
}

int main() {
    std::vector<float> x(kSamples * kIn), out(kSamples);
    std::array<float, kIn * kHidden> w1;
    std::array<float, kHidden> w2;
    for (int i = 0; i < kIn * kHidden; i++)
        w1[i] = static_cast<float>((i * 7) % 11 - 5) * 0.1f;
    for (int h = 0; h < kHidden; h++)
        w2[h] = static_cast<float>(h % 3 - 1) * 0.4f + 0.05f;
    for (int i = 0; i < kSamples * kIn; i++)
        x[i] = static_cast<float>((i * 13) % 29) * 0.07f - 1.0f;
    score(x, w1, w2, out, kSamples);
    double total = 0.0;
    int positive = 0;
    for (int s = 0; s < kSamples; s++) {
        total += out[s];
        positive += out[s] > 0.5f;
    }
    std::printf("mean score %.6f positive %d\n", total / kSamples, positive);
    return 0;
}
