// template_saturate: a function template that scales, offsets and saturates an array,
// instantiated for float and for int. Pattern: C++ templates over element types,
// elementwise work in the instantiations.
#include <cstdio>
#include <vector>

template <typename T>
void scale_saturate(int n, const T *in, T *out, T scale, T offset, T lo, T hi) {
    for (int i = 0; i < n; i++) {
        T v = in[i] * scale + offset;
        out[i] = v < lo ? lo : (v > hi ? hi : v);
    }
}

int main() {
    const int n = 1 << 21;
    std::vector<float> fin(n), fout(n);
    std::vector<int> iin(n), iout(n);
    for (int i = 0; i < n; i++) {
        fin[i] = static_cast<float>(i % 1000) * 0.01f - 5.0f;
        iin[i] = (i * 7) % 5000 - 2500;
    }
    scale_saturate<float>(n, fin.data(), fout.data(), 1.5f, 0.25f, -4.0f, 4.0f);
    scale_saturate<int>(n, iin.data(), iout.data(), 3, -7, -3000, 3000);
    double fs = 0.0;
    long long is = 0;
    for (int i = 0; i < n; i++) {
        fs += fout[i];
        is += iout[i];
    }
    std::printf("float sum %.6e int sum %lld\n", fs, is);
    return 0;
}
