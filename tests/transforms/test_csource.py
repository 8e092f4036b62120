from __future__ import annotations

from cudaify.transforms import csource as cs

CODE = b"""\
static const double alpha = 2.0, *table, grid[3][4];
int counter;
static double helper(double v);

void f(int n, double a[][64], const float *__restrict__ x, struct point p)
{
    long i, j = 0;
    double t;
    for (i = 0; i < n; i++) {
        int local = i * 2;
        t = a[i][0] + local;
        j++;
        counter += (int)t;
        helper(t);
        for (int k = 0; k < 3; k++)
            grid[0][k] = std::sqrt(t);
    }
}

struct S { void add(int v) { total += v; } int total; };
"""


def tree():
    return cs.parse(CODE)


def at(text: bytes) -> int:
    return CODE.index(text)


def test_declarations_keep_their_type_without_storage_class() -> None:
    declaration = tree().root_node.children[0]
    found = cs.declared_names(declaration, CODE, "global")
    assert [(d.name, d.kind, d.base) for d in found] == [
        ("alpha", "scalar", "const double"),
        ("table", "pointer", "const double"),
        ("grid", "array", "const double"),
    ]


def test_names_resolve_in_the_innermost_scope_first() -> None:
    loop = at(b"for (i = 0")
    resolved = {
        name: cs.visible(tree(), CODE, name, loop)
        for name in ("n", "a", "x", "p", "i", "j", "t", "alpha", "counter", "local", "helper")
    }
    assert resolved["n"] is not None and resolved["n"].scope == "param"
    assert resolved["a"] is not None and resolved["a"].kind == "array"
    assert resolved["x"] is not None and (resolved["x"].kind, resolved["x"].base) == (
        "pointer",
        "const float",
    )
    assert resolved["p"] is not None and resolved["p"].base == "struct point"
    assert resolved["i"] is not None and (resolved["i"].scope, resolved["i"].base) == (
        "local",
        "long",
    )
    assert resolved["j"] is not None and resolved["j"].kind == "scalar"
    assert resolved["alpha"] is not None and resolved["alpha"].scope == "global"
    assert resolved["counter"] is not None and resolved["counter"].scope == "global"
    assert resolved["local"] is None  # declared inside the loop, after this point
    assert resolved["helper"] is not None and resolved["helper"].kind == "function"
    inner = cs.visible(tree(), CODE, "k", at(b"grid[0][k]"))
    assert inner is not None and inner.scope == "header" and inner.base == "int"


def test_writes_declarations_and_calls_inside_a_loop() -> None:
    loop = cs.node_at(tree(), at(b"for (i = 0"), "for_statement")
    assert loop is not None
    assert cs.names_written(loop, CODE) == {"i", "t", "j", "counter", "k"}
    assert cs.names_declared_in(loop, CODE) == {"local", "k"}
    assert [name for name, _ in cs.calls_in(loop, CODE)] == ["helper", "sqrt"]


def test_functions_top_level_and_members() -> None:
    top = cs.function_nodes(tree(), CODE)
    assert list(top) == ["f"]
    everywhere = cs.all_function_nodes(tree(), CODE)
    assert set(everywhere) == {"f", "add"}
    assert len(cs.prototypes(tree(), CODE, "helper")) == 1
    params = cs.parameter_nodes(top["f"])
    assert [cs.text(p, CODE) for p in params][:2] == ["int n", "double a[][64]"]


def test_problem_nodes_point_at_the_broken_line() -> None:
    broken = cs.parse(b"int main(void)\n{\n    int x = ;\n    return 0;\n}\n")
    lines = {cs.line_of(node) for node in cs.problem_nodes(broken)}
    assert lines == {3}
    assert cs.problem_nodes(tree()) == []
