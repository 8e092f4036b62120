/*
 * Name: stencil2d_vector
 * Category: cpp
 * Computes: a 9-point 2-D blur (centre, edge and corner weights summing to 1) of a rows x cols
 *           std::vector<double> grid for T steps, boundary copied, double buffered with
 *           std::swap; prints the grid sum and a weighted sum of one row.
 * Pattern: 9-point 2-D stencil in a step loop over std::vector, double buffering (std::swap)
 * CPU time: 0.44 s (g++ -O3, one core; user time, one run, 2026-11-26)
 */
#include <cstdio>
#include <utility>
#include <vector>

#ifdef BENCH_SMALL
const int kRows = 64;
const int kCols = 80;
const int kSteps = 10;
#else
const int kRows = 1024;
const int kCols = 1024;
const int kSteps = 200;
#endif

void blur_step(const std::vector<double> &in, std::vector<double> &out, int rows, int cols) {
    const double wc = 0.25, we = 0.125, wd = 0.0625;
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) {
            int at = i * cols + j;
            if (i == 0 || j == 0 || i == rows - 1 || j == cols - 1) {
                out[at] = in[at];
                continue;
            }
            out[at] = wc * in[at] +
                      we * (in[at - 1] + in[at + 1] + in[at - cols] + in[at + cols]) +
                      wd * (in[at - cols - 1] + in[at - cols + 1] + in[at + cols - 1] +
                            in[at + cols + 1]);
        }
}

int main() {
    std::vector<double> grid(kRows * kCols), next(kRows * kCols);
    unsigned int state = 2718281u;
    for (int i = 0; i < kRows * kCols; i++) {
        state = state * 1664525u + 1013904223u;
        grid[i] = 1.0 + static_cast<double>(state >> 8) / 16777216.0; /* 1 .. 2 */
    }
    for (int t = 0; t < kSteps; t++) {
        blur_step(grid, next, kRows, kCols);
        std::swap(grid, next);
    }
    double sum = 0.0, row = 0.0;
    for (int i = 0; i < kRows * kCols; i++)
        sum += grid[i];
    for (int j = 0; j < kCols; j++)
        row += grid[(kRows / 2) * kCols + j] * static_cast<double>(j % 4 + 1);
    std::printf("stencil: grid sum %.6e\n", sum);
    std::printf("stencil: middle row weighted %.6e\n", row);
    return 0;
}
