// column_clip: clamp each column of a row-major feature table (std::vector<float>) to that
// column's [low, high] bounds, and count the values clamped.
// Pattern: C++ vectors, a 2-D nest written columns outer, rows inner over row-major data
// (a coalescing candidate).
#include <cstdio>
#include <vector>

static const int kRows = 3000;
static const int kCols = 768;

void clip_columns(const std::vector<float> &in, std::vector<float> &out,
                  const std::vector<float> &low, const std::vector<float> &high, int rows,
                  int cols) {
    for (int c = 0; c < cols; c++)
        for (int r = 0; r < rows; r++) {
            float v = in[r * cols + c];
            out[r * cols + c] = v < low[c] ? low[c] : (v > high[c] ? high[c] : v);
        }
}

int main() {
    std::vector<float> in(kRows * kCols), out(kRows * kCols), low(kCols), high(kCols);
    for (int i = 0; i < kRows * kCols; i++)
        in[i] = static_cast<float>((i * 29 + i / kCols) % 401) * 0.01f - 2.0f;
    for (int c = 0; c < kCols; c++) {
        low[c] = -1.0f + static_cast<float>(c % 7) * 0.1f;
        high[c] = 1.0f + static_cast<float>(c % 11) * 0.05f;
    }
    clip_columns(in, out, low, high, kRows, kCols);
    double total = 0.0;
    long clamped = 0;
    for (int i = 0; i < kRows * kCols; i++) {
        total += out[i];
        clamped += out[i] != in[i];
    }
    std::printf("clipped total %.6e clamped %ld\n", total, clamped);
    return 0;
}
