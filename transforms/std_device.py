"""Device equivalents of the standard library operations the analysis models as pure
(frontend/stdlib_model.py): std::complex and its functions become `cuda::std::` ones
(libcu++, shipped with nvcc), std::pair too, std::min/max become `cudaify_min/max` (same
definition: `std::min` returns `b < a ? b : a`), and the <cmath> functions take their
`cuda::std::` overloads. A `std::` name the kernel would keep and that has no device
version is refused by name."""

from __future__ import annotations

import re

COMPLEX = frozenset("complex polar abs arg norm conj proj real imag".split())
MATH = frozenset(
    """sqrt cbrt exp exp2 expm1 log log2 log10 log1p pow sin cos tan asin acos atan atan2
    sinh cosh tanh asinh acosh atanh fabs floor ceil round trunc fmod fmin fmax fma hypot
    erf erfc tgamma lgamma copysign rint nearbyint remainder fdim isnan isinf isfinite
    signbit""".split()
)
UTILITY = frozenset({"pair", "make_pair"})
MINMAX = {"min": "cudaify_min", "max": "cudaify_max"}
# Types the device sees as they are.
PLAIN_TYPES = frozenset(
    "size_t ptrdiff_t int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t".split()
)
_STD_NAME = re.compile(r"(?<![\w:])(?:::)?std::(\w+)")

STD_PRELUDE = """\
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

"""


class NoDeviceVersion(Exception):
    """A `std::` name in kernel code that has no device version here."""


def device_text(code: str) -> str:
    """`code` with every modelled `std::` name replaced by its device version."""

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name in MINMAX:
            return MINMAX[name]
        if name in COMPLEX or name in MATH or name in UTILITY:
            return f"cuda::std::{name}"
        if name in PLAIN_TYPES:
            return match.group(0)
        raise NoDeviceVersion(f"std::{name}")

    return _STD_NAME.sub(replace, code)


def uses_std(code: str) -> bool:
    """Whether `device_text` changes `code` (the kernel needs STD_PRELUDE)."""
    return device_text(code) != code
