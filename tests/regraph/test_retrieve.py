from __future__ import annotations

from cudaify.regraph.graph import Example, ReGraph
from cudaify.regraph.retrieve import Index, retrieve, tokens

STENCIL = """void smooth(int n, const float *a, float *b) {
    for (int i = 1; i < n - 1; i++)
        b[i] = 0.25f * a[i - 1] + 0.5f * a[i] + 0.25f * a[i + 1];
}"""
HISTOGRAM = """void count(int n, const unsigned char *v, int *bins) {
    for (int i = 0; i < n; i++)
        bins[v[i] >> 4]++;
}"""
MATMUL = """void mm(int n, const double *a, const double *b, double *c) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++)
                s += a[i * n + k] * b[k * n + j];
            c[i * n + j] = s;
        }
}"""
QUERY = """/* heat step */
void heat(int m, const double *u, double *v) {
    for (int x = 1; x < m - 1; x++)
        v[x] = u[x] + 0.1 * (u[x - 1] - 2.0 * u[x] + u[x + 1]);
}"""


def _graph() -> ReGraph:
    graph = ReGraph()
    graph.add_method("sequential")
    for name, code in (("hist", HISTOGRAM), ("stencil", STENCIL), ("mm", MATMUL)):
        graph.add_example("sequential", "offload", Example(name, code, code + "// gpu"))
    graph.add_example("reduction", "offload", Example("other", STENCIL + " ", "x"))
    return graph


def test_the_most_similar_example_comes_first():
    found = retrieve(_graph(), QUERY, "sequential", "offload", k=3)
    assert [e.program for e in found][0] == "stencil"
    assert len(found) == 3
    assert {e.program for e in found} == {"stencil", "hist", "mm"}  # the edge's own first


def test_matmul_query_finds_matmul():
    query = MATMUL.replace("double", "float").replace("mm(", "gemm(")
    assert retrieve(_graph(), query, "sequential", "offload", k=1)[0].program == "mm"


def test_other_edges_into_the_target_fill_a_short_list():
    found = retrieve(_graph(), QUERY, "sequential", "offload", k=10)
    assert [e.program for e in found][-1] == "other"
    assert retrieve(_graph(), QUERY, "offload", "unroll", k=3) == []


def test_neighbour_subscripts_are_tokens_and_comments_are_not():
    counts = tokens(QUERY)
    assert counts["[x-1]"] == 1 and counts["[x+1]"] == 1
    assert "heat" in counts and "step" not in counts


def test_the_index_follows_examples_added_in_place():
    graph = _graph()
    assert len(Index(graph).entries) == 4
    retrieve(graph, QUERY, "sequential", "offload")
    graph.add_example("sequential", "offload", Example("copy", QUERY, "y"))
    assert retrieve(graph, QUERY, "sequential", "offload", k=1)[0].program == "copy"
