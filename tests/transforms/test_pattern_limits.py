"""The identities the pattern helpers give min and max reductions (cudaify_limits) are the
ends of each type's range, or its infinities: the same values as the host's
std::numeric_limits, checked by running the helpers' host side (nvcc, no GPU needed)."""

import subprocess
from pathlib import Path

import pytest

from cudaify.transforms.pattern_support import PATTERN_INCLUDES, PATTERN_PRELUDE

TYPES = [
    "bool", "char", "signed char", "unsigned char", "short", "unsigned short", "int",
    "unsigned int", "long", "unsigned long", "long long", "unsigned long long", "float",
    "double",
]  # fmt: skip

CHECK = """
#include <limits>
#include <stdio.h>
template <class T>
static int differs(const char *name)
{
    typedef std::numeric_limits<T> L;
    T high = L::has_infinity ? L::infinity() : L::max();
    T low = L::has_infinity ? -L::infinity() : L::lowest();
    int bad = cudaify_minimum::identity<T>() != high || cudaify_maximum::identity<T>() != low;
    if (bad)
        printf("%s differs\\n", name);
    return bad;
}
int main()
{
    int bad = 0;
CALLS
    printf("%d of %d types differ\\n", bad, COUNT);
    return bad;
}
"""


def test_min_and_max_identities_are_each_types_limits(tmp_path: Path) -> None:
    calls = "\n".join(f'    bad += differs<{t}>("{t}");' for t in TYPES)
    source = (
        PATTERN_INCLUDES
        + PATTERN_PRELUDE
        + CHECK.replace("CALLS", calls).replace("COUNT", str(len(TYPES)))
    )
    (tmp_path / "limits.cu").write_text(source)
    built = subprocess.run(
        ["nvcc", "-std=c++17", "limits.cu", "-o", "limits"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    if built.returncode != 0 and "not found" in built.stderr:
        pytest.skip("nvcc is not installed")
    assert built.returncode == 0, built.stderr
    ran = subprocess.run(["./limits"], cwd=tmp_path, capture_output=True, text=True)
    assert ran.stdout.splitlines()[-1] == f"0 of {len(TYPES)} types differ", ran.stdout
    assert ran.returncode == 0


def test_the_helpers_need_no_libcu_header() -> None:
    """<cuda/std/...> headers took a second of each nvcc build of a pattern method."""
    assert "cuda/std" not in PATTERN_INCLUDES
    assert "cuda::std" not in PATTERN_PRELUDE
