/*
 * Name: nearest_argmin
 * Category: cpp
 * Computes: for each of a series of query points, the index of the nearest point of a
 *           std::vector of structs (squared distance through a lambda; the first of equal
 *           distances), and the x coordinate kept with it; prints their sums.
 * Pattern: argmin with payloads (if (d < best) { best = d; k = i; bx = p.x; }) over a vector
 * CPU time: 0.52 s (g++ -O3, one core; user time, one run, 2026-11-25)
 */
#include <cstdio>
#include <vector>

#ifdef BENCH_SMALL
const int kPoints = 3000;
const int kQueries = 4;
#else
const int kPoints = 2000000;
const int kQueries = 300;
#endif

struct Point {
    double x, y;
};

int nearest_index(const std::vector<Point> &points, Point q, double *kept_x) {
    auto distance2 = [](const Point &a, const Point &b) {
        double dx = a.x - b.x, dy = a.y - b.y;
        return dx * dx + dy * dy;
    };
    const int n = static_cast<int>(points.size());
    double best = 1e300;
    int k = -1;
    double bx = 0.0;
    for (int i = 0; i < n; i++) {
        double d = distance2(points[i], q);
        if (d < best) {
            best = d;
            k = i;
            bx = points[i].x;
        }
    }
    *kept_x = bx;
    return k;
}

int main() {
    std::vector<Point> points(kPoints);
    unsigned int state = 97531u;
    for (auto &p : points) {
        state = state * 1664525u + 1013904223u;
        p.x = (double)(state >> 12 & 1023) / 8.0; /* a coarse grid: many equal distances */
        state = state * 1664525u + 1013904223u;
        p.y = (double)(state >> 12 & 1023) / 8.0;
    }
    long index_sum = 0;
    double x_sum = 0.0;
    for (int q = 0; q < kQueries; q++) {
        Point query = {3.0 + 1.7 * q, 120.0 - 1.3 * q};
        double x = 0.0;
        int k = nearest_index(points, query, &x);
        index_sum += k;
        x_sum += x;
    }
    std::printf("nearest: index sum %ld, x sum %.4f\n", index_sum, x_sum);
    return 0;
}
