/*
 * Name: polygon_area_lambda
 * Category: cpp
 * Computes: the shoelace areas of many small star-shaped polygons whose vertices are stored
 *           flattened in one std::vector of structs with an offsets vector (a cross-product
 *           lambda per edge); prints the total area and the largest polygon's area.
 * Pattern: parallel loop over polygons with an irregular inner reduction (offsets) through a lambda
 * CPU time: 0.45 s (g++ -O3, one core; user time, one run, 2026-11-26)
 */
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#ifdef BENCH_SMALL
const int kPolygons = 2000;
const int kPasses = 2;
#else
const int kPolygons = 600000;
const int kPasses = 30;
#endif
const int kMinVertices = 3;
const int kMaxVertices = 14;

struct Point {
    double x, y;
};

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

void polygon_areas(const std::vector<Point> &vertices, const std::vector<int> &offsets,
                   std::vector<double> &areas, int polygons) {
    auto cross = [](const Point &a, const Point &b) { return a.x * b.y - a.y * b.x; };
    for (int p = 0; p < polygons; p++) {
        const int first = offsets[p];
        const int last = offsets[p + 1] - 1;
        double twice = cross(vertices[last], vertices[first]);
        for (int k = first; k < last; k++)
            twice += cross(vertices[k], vertices[k + 1]);
        areas[p] = 0.5 * twice;
    }
}

int main() {
    Lcg rng(8642u);
    const double two_pi = 6.283185307179586;
    std::vector<int> offsets(kPolygons + 1);
    std::vector<Point> vertices;
    vertices.reserve(static_cast<size_t>(kPolygons) * kMaxVertices);
    offsets[0] = 0;
    for (int p = 0; p < kPolygons; p++) {
        const int m = kMinVertices + static_cast<int>(rng.next() >> 16) % (kMaxVertices - kMinVertices + 1);
        const double cx = 50.0 * rng.uniform(), cy = 50.0 * rng.uniform();
        const double scale = 0.2 + 1.8 * rng.uniform();
        for (int j = 0; j < m; j++) {
            /* counter-clockwise angles, one per sector, and a positive radius: a simple polygon */
            const double angle = two_pi * (j + 0.8 * rng.uniform()) / m;
            const double radius = scale * (0.4 + 0.6 * rng.uniform());
            vertices.push_back(Point{cx + radius * std::cos(angle), cy + radius * std::sin(angle)});
        }
        offsets[p + 1] = offsets[p] + m;
    }
    std::vector<double> areas(kPolygons);
    double total = 0.0, largest = 0.0;
    for (int pass = 0; pass < kPasses; pass++) {
        polygon_areas(vertices, offsets, areas, kPolygons);
        for (int p = 0; p < kPolygons; p++) {
            total += areas[p];
            largest = std::max(largest, areas[p]);
        }
        /* the next pass sees every polygon moved: the areas stay, the cross products change */
        for (auto &v : vertices) {
            v.x += 0.75;
            v.y -= 0.5;
        }
    }
    std::printf("polygon areas: total=%.6e largest=%.6e\n", total, largest);
    std::printf("vertices: %d\n", offsets[kPolygons]);
    return 0;
}
