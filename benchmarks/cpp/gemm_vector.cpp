/*
 * Name: gemm_vector
 * Category: cpp
 * Computes: C = alpha * A * B + beta * C for row-major n x n std::vector<float> matrices
 *           (i-j-k triple loop, double accumulator), applied a few times with different
 *           alpha and beta; prints the sum of C and the sum of its diagonal.
 * Pattern: 2-D parallel nest (i, j) with an inner dot product over k; column reads of B
 * CPU time: 0.60 s (g++ -O3, one core; user time, one run, 2026-11-26)
 */
#include <cstdio>
#include <vector>

#ifdef BENCH_SMALL
const int kSize = 48;
const int kCalls = 2;
#else
const int kSize = 512;
const int kCalls = 3;
#endif

void gemm(const std::vector<float> &a, const std::vector<float> &b, std::vector<float> &c, int n,
          float alpha, float beta) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double acc = 0.0;
            for (int k = 0; k < n; k++)
                acc += static_cast<double>(a[i * n + k]) * static_cast<double>(b[k * n + j]);
            c[i * n + j] = alpha * static_cast<float>(acc) + beta * c[i * n + j];
        }
}

int main() {
    const int n = kSize;
    std::vector<float> a(n * n), b(n * n), c(n * n);
    unsigned int state = 4242u;
    for (int i = 0; i < n * n; i++) {
        state = state * 1664525u + 1013904223u;
        a[i] = static_cast<float>(state >> 8) / 16777216.0f; /* 0 .. 1 */
        state = state * 1664525u + 1013904223u;
        b[i] = static_cast<float>(state >> 8) / 16777216.0f;
        state = state * 1664525u + 1013904223u;
        c[i] = static_cast<float>(state >> 16) / 65536.0f;
    }
    for (int call = 0; call < kCalls; call++)
        gemm(a, b, c, n, 1.0f / static_cast<float>(n) + 0.001f * call, 0.5f + 0.1f * call);
    double sum = 0.0, trace = 0.0;
    for (int i = 0; i < n; i++) {
        trace += c[i * n + i];
        for (int j = 0; j < n; j++)
            sum += c[i * n + j];
    }
    std::printf("gemm: sum %.6e\n", sum);
    std::printf("gemm: trace %.6e\n", trace);
    return 0;
}
