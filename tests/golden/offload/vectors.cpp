#include <cstdio>
#include <vector>

// y = a x + y on std::vector: the kernel sees the elements through plain pointers
void axpy(double a, const std::vector<double> &x, std::vector<double> &y)
{
    for (size_t i = 0; i < y.size(); i++)
        y[i] = a * x[i] + y[i];
}

int main()
{
    const int n = 300000;
    std::vector<double> x(n), y(n);
    for (int i = 0; i < n; i++) {
        x[i] = (i % 100) * 0.5;
        y[i] = (i % 9) * 1.0;
    }
    axpy(3.0, x, y);
    double sum = 0.0;
    for (int i = 0; i < n; i++)
        sum += y[i];
    std::printf("y[0]=%.2f y[n-1]=%.2f sum=%.6e\n", y[0], y[n - 1], sum);
    return 0;
}
