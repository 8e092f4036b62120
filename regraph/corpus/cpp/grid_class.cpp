// grid_class: a small Grid class with an operator() accessor; a member function computes
// the gradient magnitude of a scalar field by central differences.
// Pattern: C++ class with a member function holding a 2-D nest, accessor calls in the body.
#include <cmath>
#include <cstdio>
#include <vector>

class Grid {
  public:
    Grid(int nx, int ny) : nx_(nx), ny_(ny), data_(static_cast<size_t>(nx) * ny, 0.0) {}
    double &operator()(int i, int j) { return data_[static_cast<size_t>(j) * nx_ + i]; }
    double operator()(int i, int j) const { return data_[static_cast<size_t>(j) * nx_ + i]; }
    int nx() const { return nx_; }
    int ny() const { return ny_; }

    void gradient_magnitude(const Grid &field, double h) {
        for (int j = 1; j < ny_ - 1; j++)
            for (int i = 1; i < nx_ - 1; i++) {
                double gx = (field(i + 1, j) - field(i - 1, j)) / (2.0 * h);
                double gy = (field(i, j + 1) - field(i, j - 1)) / (2.0 * h);
                (*this)(i, j) = std::sqrt(gx * gx + gy * gy);
            }
    }

  private:
    int nx_, ny_;
    std::vector<double> data_;
};

int main() {
    const int n = 1200;
    Grid field(n, n), grad(n, n);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++)
            field(i, j) = std::sin(0.01 * i) * std::cos(0.013 * j) + 0.001 * i;
    grad.gradient_magnitude(field, 0.5);
    double total = 0.0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++)
            total += grad(i, j);
    std::printf("gradient total %.8e centre %.8f\n", total, grad(n / 2, n / 2));
    return 0;
}
