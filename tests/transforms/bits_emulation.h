/* CUDA's bit casts between floating-point values and integers of their size, for the CPU
   emulators (the min/max kernels compare-and-swap a float's or a double's bits). */
#pragma once
#include <cstring>

inline unsigned int __float_as_uint(float x) { unsigned int u; std::memcpy(&u, &x, 4); return u; }
inline float __uint_as_float(unsigned int u) { float x; std::memcpy(&x, &u, 4); return x; }
inline long long __double_as_longlong(double x) { long long u; std::memcpy(&u, &x, 8); return u; }
inline double __longlong_as_double(long long u) { double x; std::memcpy(&x, &u, 8); return x; }
