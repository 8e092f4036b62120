/* Loops the compact method runs on the GPU: a filter appending in order, appends of every
   iteration (indexed writes) after what the vector already holds, an emplace_back from a
   later start; and ones it leaves alone (the vector read in the loop, an else, two appends). */
#include <cstdio>
#include <vector>

void keep_large(const std::vector<float> &in, float limit, std::vector<float> &out)
{
    out.clear();
    const int n = (int)in.size();
    for (int i = 0; i < n; i++) {
        const float x = in[i];
        const float twice = 2.0f * x;
        if (x > limit && twice < 1900.0f)
            out.push_back(twice - limit);
    }
}

void squares(const double *a, int n, std::vector<double> &out)
{
    for (int i = 0; i < n; i++)
        out.push_back(a[i] * a[i] + 0.5);
}

void odd_positions(const std::vector<int> &v, std::vector<long> &out)
{
    for (int i = 3; i < (int)v.size(); i++) {
        if (v[i] % 2 != 0) {
            out.emplace_back((long)v[i] * i);
        }
    }
}

void running(const std::vector<int> &v, std::vector<int> &out)
{
    for (int i = 0; i < (int)v.size(); i++)
        if (out.empty() || v[i] > out.back())
            out.push_back(v[i]);
}

void split(const std::vector<int> &v, std::vector<int> &out)
{
    for (int i = 0; i < (int)v.size(); i++)
        if (v[i] > 0)
            out.push_back(v[i]);
        else
            out.push_back(-v[i]);
}

void twice(const std::vector<int> &v, std::vector<int> &out)
{
    for (int i = 0; i < (int)v.size(); i++) {
        out.push_back(v[i]);
        out.push_back(v[i] + 1);
    }
}

int main(void)
{
    const int n = 6000;
    unsigned int state = 4242u;
    std::vector<float> in(n);
    std::vector<double> a(n);
    std::vector<int> v(n);
    for (int i = 0; i < n; i++) {
        state = state * 1664525u + 1013904223u;
        in[i] = (float)(state >> 20);
        a[i] = (double)(state >> 16 & 255) / 4.0;
        v[i] = (int)(state >> 9 & 4095) - 2048;
    }
    std::vector<float> large;
    std::vector<double> sq(5, 1.0);
    std::vector<long> odd;
    std::vector<int> up, folded, pairs;
    for (int round = 0; round < 3; round++) {
        keep_large(in, 300.0f * round, large);
        squares(a.data(), n - round, sq);
        odd_positions(v, odd);
        running(v, up);
        split(v, folded);
        twice(v, pairs);
        double s = 0.0;
        for (size_t i = 0; i < large.size(); i++)
            s += large[i] * (double)(i % 13);
        double t = 0.0;
        for (size_t i = 0; i < sq.size(); i++)
            t += sq[i] * (double)(i % 7);
        long o = 0;
        for (size_t i = 0; i < odd.size(); i++)
            o += odd[i] * (long)(i % 3 + 1);
        printf("round %d: %zu large (%.2f), %zu squares (%.3f), %zu odd (%ld), %zu %zu %zu\n", round,
               large.size(), s, sq.size(), t, odd.size(), o, up.size(), folded.size(), pairs.size());
    }
    return 0;
}
