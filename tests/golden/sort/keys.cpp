/* Sorts the sort method runs on the GPU: a whole vector, part of one, a pointer range, a
   descending functor, a descending lambda, a stable sort of doubles; and one it leaves alone
   (keys compared by their magnitude). */
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <vector>

static unsigned int state = 12345u;

static unsigned int draw(void)
{
    state = state * 1664525u + 1013904223u;
    return state >> 8;
}

long long whole(std::vector<int> &keys)
{
    std::sort(keys.begin(), keys.end());
    long long sum = 0;
    for (size_t i = 0; i < keys.size(); i++)
        sum += keys[i] * (long long)(i % 5);
    return sum;
}

void middle(std::vector<unsigned> &keys, int from, int to)
{
    std::sort(keys.begin() + from, keys.begin() + to);
}

void pointer_range(float *values, int n)
{
    std::sort(values, values + n, std::less<float>());
}

void descending(std::vector<long> &keys)
{
    std::sort(keys.begin(), keys.end(), std::greater<long>());
}

void by_lambda(short *keys, int n)
{
    std::sort(keys, keys + n, [](short a, short b) { return b < a; });
}

void stable(std::vector<double> &values)
{
    std::stable_sort(values.begin(), values.end());
}

void by_magnitude(std::vector<double> &values)
{
    std::sort(values.begin(), values.end(), [](double a, double b) { return std::fabs(a) < std::fabs(b); });
}

int main(void)
{
    const int n = 5000;
    std::vector<int> a(n);
    std::vector<unsigned> b(n);
    std::vector<float> c(n);
    std::vector<long> d(n);
    std::vector<short> e(n);
    std::vector<double> f(n), g(n);
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < n; i++) {
            a[i] = (int)(draw() % 2001) - 1000;
            b[i] = draw();
            c[i] = (float)((int)(draw() % 4001) - 2000) / 8.0f;
            d[i] = (long)draw() * (long)(draw() % 7) - 50000000L;
            e[i] = (short)((int)(draw() % 60001) - 30000);
            f[i] = (double)((int)(draw() % 100001) - 50000) / 64.0;
            g[i] = f[i];
        }
        long long checksum = whole(a);
        middle(b, 100 * round, n - 37);
        pointer_range(c.data(), n - round);
        descending(d);
        by_lambda(e.data(), n);
        stable(f);
        by_magnitude(g);
        double weighted = 0.0;
        for (int i = 0; i < n; i += 7)
            weighted += (double)b[i] * 1e-9 + c[i] + (double)d[i] * 1e-6 + e[i] + f[i] + std::fabs(g[i]);
        printf("round %d: checksum %lld, first %d last %d, weighted %.6f\n", round, checksum, a[0], a[n - 1],
               weighted);
        printf("round %d: b %u %u, c %.3f, d %ld %ld, e %d %d, f %.4f\n", round, b[100 * round], b[n - 38],
               c[0], d[0], d[n - 1], e[0], e[n - 1], f[n / 2]);
    }
    return 0;
}
