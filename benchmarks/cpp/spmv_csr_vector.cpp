/*
 * Name: spmv_csr_vector
 * Category: cpp
 * Computes: power iteration y = A x, x = y / sum(y) with a sparse positive matrix A in CSR form
 *           held in std::vectors (row_ptr, col, val); prints the dominant-eigenvalue estimate
 *           and weighted sums of the final vector.
 * Pattern: CSR SpMV over std::vector: per-row irregular inner reduction with an indirect gather
 * CPU time: 0.47 s (g++ -O3, one core; user time, one run, 2026-11-26)
 */
#include <cstdio>
#include <vector>

#ifdef BENCH_SMALL
const int kRows = 2000;
const int kIterations = 4;
#else
const int kRows = 400000;
const int kIterations = 40;
#endif
const int kMinPerRow = 4;
const int kMaxPerRow = 36;

void spmv_csr(const std::vector<int> &row_ptr, const std::vector<int> &col, const std::vector<double> &val,
              const std::vector<double> &x, std::vector<double> &y, int rows) {
    for (int r = 0; r < rows; r++) {
        double sum = 0.0;
        for (int k = row_ptr[r]; k < row_ptr[r + 1]; k++)
            sum += val[k] * x[col[k]];
        y[r] = sum;
    }
}

int main() {
    std::vector<int> row_ptr(kRows + 1), col;
    std::vector<double> val;
    unsigned int state = 271828u;
    row_ptr[0] = 0;
    for (int r = 0; r < kRows; r++) {
        state = state * 1664525u + 1013904223u;
        const int count = kMinPerRow + static_cast<int>((state >> 16) % (kMaxPerRow - kMinPerRow + 1));
        for (int k = 0; k < count; k++) {
            state = state * 1664525u + 1013904223u;
            int c;
            if (k % 2 == 0) /* half near the diagonal, half anywhere */
                c = (r + static_cast<int>(state >> 26) - 32 + kRows) % kRows;
            else
                c = static_cast<int>((state >> 4) % kRows);
            col.push_back(c);
            state = state * 1664525u + 1013904223u;
            val.push_back(0.05 + static_cast<double>(state >> 8) / 16777216.0);
        }
        row_ptr[r + 1] = static_cast<int>(col.size());
    }
    std::vector<double> x(kRows), y(kRows);
    for (int i = 0; i < kRows; i++)
        x[i] = 1.0 / kRows;
    double lambda = 0.0;
    for (int it = 0; it < kIterations; it++) {
        spmv_csr(row_ptr, col, val, x, y, kRows);
        double total = 0.0;
        for (int i = 0; i < kRows; i++)
            total += y[i];
        lambda = total; /* sum(A x) with sum(x) = 1 */
        for (int i = 0; i < kRows; i++)
            x[i] = y[i] / total;
    }
    double weighted = 0.0, largest = 0.0;
    for (int i = 0; i < kRows; i++) {
        weighted += x[i] * (i % 13 + 1);
        if (x[i] > largest)
            largest = x[i];
    }
    std::printf("spmv: nonzeros %d, eigenvalue estimate %.6e\n", row_ptr[kRows], lambda);
    std::printf("spmv: weighted sum %.6e, largest entry %.6e\n", weighted, largest * kRows);
    return 0;
}
