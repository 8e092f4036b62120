/* Function templates on std::vector called in time loops: `a.swap(b)` keeps both
   buffers resident, `.size()` reads no element, a value of the template's type declared
   in the loop is passed by value, and a host read of an element gets its barrier. */
#include <array>
#include <cstdio>
#include <vector>

template <typename T>
void axpy(T a, const std::vector<T> &x, std::vector<T> &y)
{
    const int n = static_cast<int>(x.size());
    for (int i = 0; i < n; i++)
        y[i] = a * x[i] + y[i];
}

template <int R, typename T>
void smooth(const std::vector<T> &in, std::vector<T> &out, const std::array<T, 2 * R + 1> &w)
{
    const int n = static_cast<int>(in.size());
    for (int i = R; i < n - R; i++) {
        T acc = 0;
        for (int k = -R; k <= R; k++)
            acc += w[k + R] * in[i + k];
        out[i] = acc;
    }
}

template <typename T>
double rounds(int n)
{
    std::vector<T> x(n), y(n);
    for (int i = 0; i < n; i++) {
        x[i] = static_cast<T>((i * 37) % 101) / 100;
        y[i] = static_cast<T>((i * 11) % 7);
    }
    for (int r = 0; r < 6; r++) {
        T a = static_cast<T>(0.5 + 0.01 * r);
        axpy(a, x, y);
        axpy(static_cast<T>(0.25), y, x);
    }
    double s = 0.0;
    for (int i = 0; i < n; i++)
        s += static_cast<double>(x[i]) + 2.0 * static_cast<double>(y[i]);
    return s;
}

template <int R>
double smoothing(int n, int steps)
{
    std::vector<float> a(n), b(n);
    for (int i = 0; i < n; i++)
        a[i] = static_cast<float>((i * 53) % 97);
    b = a;
    std::array<float, 2 * R + 1> w;
    w.fill(1.0f / (2 * R + 1));
    double probes = 0.0;
    for (int t = 0; t < steps; t++) {
        smooth<R>(a, b, w);
        a.swap(b);
        if (t % 4 == 3)
            probes += a[n / 2];
    }
    double s = probes;
    for (float v : a)
        s += v;
    return s;
}

int main()
{
    std::printf("%.6e %.6e\n", rounds<float>(3000), rounds<double>(5000));
    std::printf("%.6e %.6e\n", smoothing<1>(4000, 12), smoothing<3>(4000, 9));
    return 0;
}
