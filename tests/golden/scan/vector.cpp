// An inclusive scan over std::vector<long>: operator[] of a vector of integers is an
// integer, so the long sums are exact in any order.
#include <cstdio>
#include <vector>

void running_totals(const std::vector<long> &in, std::vector<long> &out, int n) {
    long running = 0;
    for (int i = 0; i < n; i++) {
        running += in[i];
        out[i] = running;
    }
}

int main() {
    const int n = 5000;
    std::vector<long> in(n), out(n);
    unsigned state = 12345u;
    for (int i = 0; i < n; i++) {
        state = state * 1664525u + 1013904223u;
        in[i] = (long)(state >> 16 & 1023) - 300;
    }
    running_totals(in, out, n);
    long check = 0;
    for (int i = 0; i < n; i += 7) check += out[i] * (i % 5 + 1);
    std::printf("last %ld check %ld\n", out[n - 1], check);
    return 0;
}
