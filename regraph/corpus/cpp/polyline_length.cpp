// polyline_length: the lengths of many polylines (points in one std::vector, offsets in
// another) and the longest one. Pattern: C++ vectors of structs, irregular segments,
// a per-segment reduction and a global max.
#include <cmath>
#include <cstdio>
#include <vector>

struct Point {
    double x, y;
};

void polyline_lengths(const std::vector<Point> &pts, const std::vector<int> &start,
                      std::vector<double> &length) {
    for (size_t s = 0; s + 1 < start.size(); s++) {
        double total = 0.0;
        for (int k = start[s] + 1; k < start[s + 1]; k++) {
            double dx = pts[k].x - pts[k - 1].x, dy = pts[k].y - pts[k - 1].y;
            total += std::sqrt(dx * dx + dy * dy);
        }
        length[s] = total;
    }
}

int main() {
    std::vector<int> start{0};
    std::vector<Point> pts;
    for (int s = 0; s < 20000; s++) {
        int count = 2 + (s * 31) % 97;
        for (int k = 0; k < count; k++)
            pts.push_back({std::cos(0.1 * k + s) * (1 + s % 5), std::sin(0.07 * k) * k});
        start.push_back(static_cast<int>(pts.size()));
    }
    std::vector<double> length(start.size() - 1);
    polyline_lengths(pts, start, length);
    double total = 0.0, longest = 0.0;
    for (double l : length) {
        total += l;
        if (l > longest) longest = l;
    }
    std::printf("total %.8e longest %.8f points %zu\n", total, longest, pts.size());
    return 0;
}
