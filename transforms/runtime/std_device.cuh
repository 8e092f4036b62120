/* ---- cudaify: device versions of the standard library operations the kernels use ---- */
#include <cuda/std/complex>
#include <cuda/std/cmath>
#include <cuda/std/utility>

/* std::min and std::max, as the standard defines them (the first on ties). */
template <typename T>
__host__ __device__ inline const T &cudaify_min(const T &a, const T &b)
{
    return b < a ? b : a;
}
template <typename T>
__host__ __device__ inline const T &cudaify_max(const T &a, const T &b)
{
    return a < b ? b : a;
}

