"""Retrieval: the edge's examples most like the code at hand, to show the SLM.

Similarity is TF-IDF cosine over identifiers, keywords and a few operators that tell loop
shapes apart (`+=`, `[`, `*`), standard library only. The document frequencies come from
the examples into the method asked for, so a word they all share (`int`, `for`) weighs
little and a telling one (`atomicAdd`, `__syncthreads`, a `[i-1]` neighbour) much. Vectors
are cached per code text: a second query on the same graph only tokenizes the query."""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from dataclasses import dataclass

from cudaify.regraph.graph import Example, ReGraph

_TOKEN = re.compile(r"[A-Za-z_]\w*|\+=|-=|\*=|\[|\]|->|<<|>>|\+\+|[-+*/%<>]")
_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)


@functools.lru_cache(maxsize=4096)
def tokens(code: str) -> Counter[str]:
    """Token counts of `code` without comments; neighbours `[i - 1]` also as one token
    (`[i-1]`), the surest sign of a stencil or a recurrence."""
    text = _COMMENT.sub(" ", code)
    counts = Counter(_TOKEN.findall(text))
    neighbours = re.findall(r"\[\s*[A-Za-z_]\w*\s*[-+]\s*\d+\s*\]", text)
    counts.update(re.sub(r"\s+", "", n) for n in neighbours)
    return counts


@dataclass(frozen=True)
class Hit:
    example: Example
    source: str  # the edge it came from
    target: str
    score: float


class _Space:
    """IDF weights over a set of documents and their cached unit vectors."""

    def __init__(self, documents: set[str]):
        frequency: Counter[str] = Counter()
        for code in documents:
            frequency.update(tokens(code).keys())
        total = len(documents) or 1
        self.idf = {t: math.log((1 + total) / (1 + n)) + 1.0 for t, n in frequency.items()}
        self.default_idf = math.log(1 + total) + 1.0
        self.vectors = {code: self.vector(code) for code in documents}
        self.queries: dict[str, dict[str, float]] = {}

    def vector(self, code: str) -> dict[str, float]:
        weights = {
            t: (1.0 + math.log(n)) * self.idf.get(t, self.default_idf)
            for t, n in tokens(code).items()
        }
        norm = math.sqrt(sum(w * w for w in weights.values())) or 1.0
        return {t: w / norm for t, w in weights.items()}

    def query(self, code: str) -> dict[str, float]:
        """The vector of a query; the search asks about the same variant for several edges."""
        if code not in self.queries:
            if len(self.queries) >= 64:
                self.queries.pop(next(iter(self.queries)))
            self.queries[code] = self.vectors.get(code) or self.vector(code)
        return self.queries[code]

    def similarity(self, query: dict[str, float], code: str) -> float:
        other = self.vectors.get(code) or self.vector(code)
        if len(other) < len(query):
            query, other = other, query
        return sum(w * other.get(t, 0.0) for t, w in query.items())


class Index:
    """Retrieval over a graph's examples. The candidates for a step into a method are the
    examples on the edges into it, so each method gets its own IDF space, built the first
    time a step into it asks (a search touches a few methods, not all)."""

    def __init__(self, graph: ReGraph):
        self.graph = graph
        self.entries = [
            (source, target, example)
            for source, target in graph.edges()
            for example in graph.examples(source, target)
        ]
        self._spaces: dict[str, _Space] = {}

    def space(self, target: str) -> _Space:
        if target not in self._spaces:
            self._spaces[target] = _Space({e.before for _, t, e in self.entries if t == target})
        return self._spaces[target]

    def search(self, code: str, source: str, target: str, k: int = 3) -> list[Hit]:
        """The k examples of edge source -> target most similar to `code`; when the edge
        has fewer than k, the best of the other edges into `target` fill the list."""
        space = self.space(target)
        query = space.query(code)
        scored = [
            (space.similarity(query, e.before), s == source, s, t, e)
            for s, t, e in self.entries
            if t == target
        ]
        # The edge's own examples first, then the rest; most similar first; program name
        # as the last key so that ties rank the same way on every run.
        scored.sort(key=lambda x: (not x[1], -x[0], x[4].program, x[2]))
        return [Hit(e, s, t, round(score, 6)) for score, _, s, t, e in scored[:k]]


_INDEXES: dict[int, tuple[ReGraph, int, Index]] = {}


def _size(graph: ReGraph) -> int:
    return sum(len(graph.examples(s, t)) for s, t in graph.graph.edges)


def index_for(graph: ReGraph) -> Index:
    """One index per graph object, rebuilt when examples were added to it in place."""
    cached = _INDEXES.get(id(graph))
    size = _size(graph)
    if cached is None or cached[0] is not graph or cached[1] != size:
        cached = (graph, size, Index(graph))
        _INDEXES[id(graph)] = cached
    return cached[2]


def retrieve(graph: ReGraph, code: str, source: str, target: str, k: int = 3) -> list[Example]:
    """The k examples to show for applying `target` after `source` to `code`."""
    return [hit.example for hit in index_for(graph).search(code, source, target, k)]
