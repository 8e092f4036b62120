/* A function template with a value and a type parameter, instantiated twice: the kernel
   is a template too, and the launch names both parameters. */
#include <cstdio>
#include <vector>

template <int R, typename T>
void smooth(const std::vector<T> &in, std::vector<T> &out, T gain)
{
    const int n = static_cast<int>(in.size());
    for (int i = R; i < n - R; i++) {
        T acc = 0;
        for (int k = -R; k <= R; k++)
            acc += in[i + k];
        out[i] = gain * acc / (2 * R + 1);
    }
}

template <int R, typename T>
double run(int n)
{
    std::vector<T> a(n), b(n, T(0));
    for (int i = 0; i < n; i++)
        a[i] = static_cast<T>((i * 37) % 101);
    smooth<R, T>(a, b, T(2));
    double s = 0.0;
    for (int i = 0; i < n; i++)
        s += static_cast<double>(b[i]) * (1 + i % 3);
    return s;
}

int main()
{
    std::printf("%.6e %.6e\n", run<1, float>(5000), run<3, double>(7000));
    return 0;
}
