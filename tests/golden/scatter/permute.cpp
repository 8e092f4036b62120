/* Stores through index arrays the scatter method runs on the GPU, checked there: a
   permutation of a vector, and an index array with repeats (the device sees them and the
   host runs the loop, with the same result); and ones it leaves alone (a pointer of unknown
   extent, the value reads the target array, the value has a side effect). */
#include <cstdio>
#include <vector>

void permute(const std::vector<double> &in, const std::vector<int> &perm, std::vector<double> &out,
             int n, double scale)
{
    for (int i = 0; i < n; i++)
        out[perm[i]] = in[i] * scale + 1.0;
}

void shifted_add(const float *a, const int *to, float *acc, int n, float bias)
{
    for (int i = 0; i < n; i++)
        acc[to[i] + 1] = a[i] * 0.5f + bias;
}

void last_wins(const std::vector<int> &keys, const std::vector<long> &values, std::vector<long> &table, int n)
{
    for (int i = 0; i < n; i++)
        table[keys[i]] = values[i];
}

void neighbours(const std::vector<int> &perm, std::vector<double> &out, int n)
{
    for (int i = 1; i < n; i++)
        out[perm[i]] = out[i - 1] + 1.0;
}

void self_index(std::vector<int> &perm, std::vector<int> &out, int n)
{
    for (int i = 0; i < n; i++)
        out[perm[i]] = perm[i]++;
}

int main(void)
{
    const int n = 20000;
    unsigned int state = 99u;
    std::vector<int> perm(n), keys(n);
    std::vector<double> in(n), out(n, 0.0), near(n, 0.0);
    std::vector<float> a(n), acc(n + 1, 0.0f);
    std::vector<long> values(n), table(n / 4, -1);
    std::vector<int> self(n, 0), copy(n);
    for (int i = 0; i < n; i++) {
        perm[i] = i;
        state = state * 1664525u + 1013904223u;
        in[i] = (double)(state >> 12) / 1024.0;
        a[i] = (float)(state >> 24);
        keys[i] = (int)((state >> 7) % (unsigned)(n / 4)); /* repeats */
        values[i] = (long)i * 3 - 7;
    }
    for (int i = n - 1; i > 0; i--) {
        state = state * 1664525u + 1013904223u;
        int j = (int)(((unsigned long long)state * (unsigned long long)(i + 1)) >> 32);
        int t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (int i = 0; i < n; i++)
        copy[i] = perm[i];
    for (int round = 0; round < 3; round++) {
        permute(in, perm, out, n, 1.0 + round);
        shifted_add(a.data(), perm.data(), acc.data(), n, 0.25f * round);
        last_wins(keys, values, table, n);
        neighbours(perm, near, n);
        self_index(copy, self, n / 2);
        double s = 0.0, t = 0.0, u = 0.0;
        long w = 0;
        for (int i = 0; i < n; i++) {
            s += out[i] * (double)(i % 7 + 1);
            t += acc[i] * (double)(i % 3);
            u += near[i];
        }
        for (int i = 0; i < n / 4; i++)
            w += table[i] * (i % 5 + 1);
        printf("round %d: %.4f %.2f %ld %.1f %d\n", round, s, t, w, u, self[5]);
    }
    return 0;
}
