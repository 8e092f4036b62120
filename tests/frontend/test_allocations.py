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


def test_fixed_size_arrays_give_their_size_when_every_call_agrees(tmp_path):
    code = (
        HISTOGRAM
        + """
#define NB 16
int main(void) {
    int data[100];
    int bins[NB] = {0};
    for (int i = 0; i < 100; i++) data[i] = i % NB;
    histogram(100, data, bins, NB);
    return bins[0];
}"""
    )
    assert sizes(tmp_path, code)["bins"] == ("16", "readwrite")
    disagree = code.replace(
        "    return bins[0];",
        "    int other[8] = {0};\n    histogram(8, data, other, 8);\n    return bins[0];",
    )
    assert sizes(tmp_path, disagree)["bins"][0] is None


def test_an_offset_pointer_reaches_the_count_minus_the_offset(tmp_path):
    code = (
        HISTOGRAM
        + """
#define NB 9
int main(void) {
    int data[100];
    int *bins = (int *)calloc(NB, sizeof(int));
    for (int i = 0; i < 100; i++) data[i] = i % 8;
    for (int r = 0; r < 2; r++)
        histogram(100, data, bins + r, NB - r);
    return bins[0];
}"""
    )
    assert sizes(tmp_path, code)["bins"] == ("nbins", "readwrite")
    # a count that is not the allocation's minus the offset proves nothing
    wrong = code.replace("bins + r, NB - r)", "bins + r, NB)")
    assert sizes(tmp_path, wrong)["bins"][0] is None


def test_constant_byte_counts_and_char_buffers(tmp_path):
    code = """
#include <stdlib.h>
#define N 300
#define D 3
long count(int n, const char *text, const int *adj) {
    long s = 0;
    for (int i = 0; i < n; i++)
        s += text[adj[(i * 37) % (2 * n)]];
    return s;
}
int main(void) {
    char *text = malloc(N);
    int *adj = (int *)malloc(sizeof(int) * (size_t)N * (D - 1));
    for (int i = 0; i < N; i++) text[i] = (char)i;
    for (int i = 0; i < N * 2; i++) adj[i] = i % N;
    return (int)count(N, text, adj);
}"""
    found = sizes(tmp_path, code, name="count")
    assert found["text"][0] == "n"
    assert found["adj"][0] == "600"


def test_a_constant_count_reaches_a_callee_that_is_not_passed_it(tmp_path):
    # gather's `src[idx[i]]` may touch any element of the caller's NNODES allocation,
    # and no argument carries NNODES: the macro's value is the extent
    code = """
#include <stdlib.h>
#define NNODES (1 << 12)
#define NEDGES 5000
void gather(int n, const int *idx, const float *src, float *out) {
    for (int i = 0; i < n; i++)
        out[i] = src[idx[i]];
}
int main(void) {
    int *idx = (int *)calloc(NEDGES, sizeof(int));
    float *node = (float *)malloc(sizeof(float) * NNODES);
    float *edge = (float *)malloc(sizeof(float) * NEDGES);
    for (int i = 0; i < NNODES; i++) node[i] = 1.0f;
    gather(NEDGES, idx, node, edge);
    return (int)edge[0];
}"""
    found = sizes(tmp_path, code, name="gather")
    assert found["src"] == ("4096", "read")
    assert found["out"] == ("n", "write")
    # a count passed as an argument is still preferred: it holds for every size
    passed = code.replace("int n, const int", "int n, int m, const int").replace(
        "gather(NEDGES, idx", "gather(NEDGES, NNODES, idx"
    )
    assert sizes(tmp_path, passed, name="gather")["src"][0] == "m"
    # calls with different constant sizes give no common extent
    differ = code.replace(
        "    return (int)edge[0];",
        "    float *small = (float *)malloc(sizeof(float) * 64);\n"
        "    gather(NEDGES, idx, small, edge);\n    return (int)edge[0];",
    )
    assert sizes(tmp_path, differ, name="gather")["src"][0] is None
    # a count held in a variable that is not passed proves nothing
    variable = code.replace("sizeof(float) * NNODES", "sizeof(float) * count").replace(
        "int main(void) {", "int main(int argc, char **argv) {\n    int count = argc * 4096;"
    )
    assert sizes(tmp_path, variable, name="gather")["src"][0] is None
