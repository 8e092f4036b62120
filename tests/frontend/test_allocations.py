"""A callee's unbounded pointer parameter takes its size from the callers' allocations,
only when that is sound at every call site."""

from __future__ import annotations

from cudaify.frontend.analyze import analyze

HISTOGRAM = """
#include <stdlib.h>
void histogram(int n, const int *data, int *bins, int nbins) {
    for (int i = 0; i < n; i++)
        bins[data[i]]++;
}
"""


def sizes(tmp_path, code: str, name: str = "histogram", suffix: str = ".c") -> dict:
    path = tmp_path / f"case{suffix}"
    path.write_text(code)
    fn = analyze(str(path)).function(name)
    assert fn is not None and fn.loops
    return {a.name: (a.count, a.access) for a in fn.arrays_for(fn.loops[0])}


def test_calloc_and_malloc_sizes_reach_the_callee(tmp_path):
    found = sizes(
        tmp_path,
        HISTOGRAM
        + """
int main(void) {
    int n = 100, nbins = 8;
    int *data = malloc(n * sizeof(int));
    int *bins = calloc(nbins, sizeof(int));
    int *more = (int *)malloc(sizeof(int) * (nbins * 2));
    for (int i = 0; i < n; i++) data[i] = i % nbins;
    histogram(n, data, bins, nbins);
    histogram(n, data, more, nbins * 2);
    return bins[0] + more[0];
}""",
    )
    assert found == {"data": ("n", "read"), "bins": ("nbins", "readwrite")}


def test_new_array_in_cxx(tmp_path):
    found = sizes(
        tmp_path,
        HISTOGRAM
        + """
int main() {
    const int n = 100;
    int nbins = 8;
    int *data = new int[n]();
    int *bins = new int[nbins]();
    histogram(n, data, bins, nbins);
    return bins[0];
}""",
        suffix=".cpp",
    )
    assert found["bins"] == ("nbins", "readwrite")


def test_write_only_array_sized_by_allocation_is_copied_in_too(tmp_path):
    found = sizes(
        tmp_path,
        """
#include <stdlib.h>
void mark(int n, const int *idx, float *out, int m) {
    for (int i = 0; i < n; i++) out[idx[i]] = 1.0f;
}
int main(void) {
    int *idx = calloc(10, sizeof(int));
    float *out = malloc(64 * sizeof(float));
    mark(10, idx, out, 64);
    return (int)out[0];
}""",
        name="mark",
    )
    assert found["out"] == ("m", "readwrite")


def unsound(tmp_path, main_body: str, extra: str = "") -> tuple:
    found = sizes(tmp_path, HISTOGRAM + extra + "int main(void) {" + main_body + "}")
    return found["bins"]


def test_no_size_when_it_is_not_sound(tmp_path):
    # the count changes after the allocation
    assert unsound(
        tmp_path,
        "int n = 9, nb = 4; int *d = malloc(n * sizeof(int)); int *b = calloc(nb, sizeof(int));"
        " nb = 8; histogram(n, d, b, nb); return 0;",
    ) == (None, "readwrite")
    # the pointer is reassigned
    assert (
        unsound(
            tmp_path,
            "int n = 9, nb = 4; int *d = malloc(n * sizeof(int)); int *b = calloc(nb, sizeof(int));"
            " b = d; histogram(n, d, b, nb); return 0;",
        )[0]
        is None
    )
    # the count passed is not the allocated one
    assert (
        unsound(
            tmp_path,
            "int n = 9, nb = 4; int *d = malloc(n * sizeof(int)); int *b = calloc(nb, sizeof(int));"
            " histogram(n, d, b, n); return 0;",
        )[0]
        is None
    )
    # one call site passes memory of unknown size
    assert (
        unsound(
            tmp_path,
            "int n = 9, nb = 4; static int s[4]; int *d = malloc(n * sizeof(int));"
            " int *b = calloc(nb, sizeof(int)); histogram(n, d, b, nb); histogram(n, d, s, nb);"
            " return 0;",
        )[0]
        is None
    )
    # the callee is also used as a function pointer
    assert (
        unsound(
            tmp_path,
            "int n = 9, nb = 4; int *d = malloc(n * sizeof(int)); int *b = calloc(nb, sizeof(int));"
            " void (*h)(int, const int *, int *, int) = histogram; h(n, d, b, nb);"
            " histogram(n, d, b, nb); return 0;",
        )[0]
        is None
    )
    # elements of another size
    assert (
        unsound(
            tmp_path,
            "int n = 9, nb = 4; int *d = malloc(n * sizeof(int));"
            " int *b = calloc(nb, sizeof(char)); histogram(n, d, b, nb); return 0;",
        )[0]
        is None
    )
    # the count is a global some other function may change
    assert (
        unsound(
            tmp_path,
            "int n = 9; int *d = malloc(n * sizeof(int)); int *b = calloc(g, sizeof(int));"
            " histogram(n, d, b, g); return 0;",
            extra="int g = 4;\n",
        )[0]
        is None
    )
