"""The reasoning graph (ReGraphT): optimization methods as nodes, verified transitions with
worked examples as edges.

    graph.py       data model on networkx, the JSON format (v2, v1 still read), validation
    trajectory.py  trajectories: a program's steps {think, method, detail, code}
    teacher.py     a model asked for trajectories (any `complete(messages, sampling)`)
    relabel.py     method names onto graph nodes: synonyms, then the teacher as judge
    build.py       verification and merging: corpus -> graph (`cudaify graph build`)
    retrieve.py    the examples most like the code at hand, for the SLM prompt
    learn.py       what runs verified and measured, into the user's files; the active graph
    report.py      stats, show, render
    cli.py         `cudaify graph ...`
    corpus/        the programs the shipped graph (data/default.json) is built from"""

from pathlib import Path


def user_graph_path() -> Path:
    """The user's reasoning graph (what --learn merged in). Here, not in learn.py, so that
    a compile served from the cache can name it without importing the graph (networkx)."""
    import platformdirs

    return Path(platformdirs.user_data_dir("cudaify")) / "graph.json"


def user_stats_path(graph_path: Path | None = None) -> Path:
    """The edge statistics every run on a GPU learns, beside the user's graph (or beside
    `graph_path`). A file of their own: they change with every run, and the result cache's
    key reads the user's graph (what --learn adds), so they must not be in it."""
    return (graph_path or user_graph_path()).with_name("edge-stats.json")
