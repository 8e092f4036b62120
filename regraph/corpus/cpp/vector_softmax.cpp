// vector_softmax: a temperature-scaled softmax of each row of logits held in
// std::vector<float>, then the expected class index per row.
// Pattern: C++ std::vector parameters, per-row max/sum reductions and a normalisation.
#include <cmath>
#include <cstdio>
#include <vector>

static const int kRows = 4096;
static const int kClasses = 256;

void softmax_rows(const std::vector<float> &logits, std::vector<float> &probs, int rows,
                  int classes, float temperature) {
    for (int r = 0; r < rows; r++) {
        float m = logits[r * classes];
        for (int c = 1; c < classes; c++)
            m = std::fmax(m, logits[r * classes + c]);
        float sum = 0.0f;
        for (int c = 0; c < classes; c++) {
            float e = std::exp((logits[r * classes + c] - m) / temperature);
            probs[r * classes + c] = e;
            sum += e;
        }
        for (int c = 0; c < classes; c++)
            probs[r * classes + c] /= sum;
    }
}

int main() {
    std::vector<float> logits(kRows * kClasses), probs(kRows * kClasses);
    for (int i = 0; i < kRows * kClasses; i++)
        logits[i] = static_cast<float>((i * 37 + i / kClasses) % 101) * 0.05f;
    softmax_rows(logits, probs, kRows, kClasses, 0.7f);
    double expected = 0.0;
    for (int r = 0; r < kRows; r++)
        for (int c = 0; c < kClasses; c++)
            expected += probs[r * kClasses + c] * c;
    std::printf("mean expected class %.6f\n", expected / kRows);
    return 0;
}
