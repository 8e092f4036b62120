"""kernel_nest.evaluate_with: the integer evaluator the tiling rules and the cost model
share. C's semantics: division truncates toward zero, exact at any size."""

from __future__ import annotations

import pytest

from cudaify.transforms import csource as cs
from cudaify.transforms import kernel_nest as kn


def value_of(expression: str, names: dict[str, int] | None = None, calls: int | None = None):
    code = f"long long v = {expression};".encode()
    tree = cs.parse(code)
    init = next(n for n in cs.walk(tree.root_node) if n.type == "init_declarator")
    known = names or {}
    return kn.evaluate_with(
        init.child_by_field_name("value"),
        code,
        lambda name: known.get(cs.text(name, code)),
        (lambda call: calls) if calls is not None else None,
    )


@pytest.mark.parametrize(
    "expression, expected",
    [
        ("-7 / 2", -3),  # toward zero, not floor
        ("7 / -2", -3),
        ("-7 % 2", -1),  # the sign of the dividend
        ("(1 << 20) / 3", 349525),
        ("1000000000000000001 / 1", 1000000000000000001),  # no float on the way
        ("(long long)N * N", 1 << 20),
        ("N > 512 && !(N == 0)", 1),
        ("N / 0", None),
        ("M + 1", None),  # a name nobody knows
        ("(N >= 2) ? (N - 1 - (N - 2) % 3) : 0", 1021),  # the branch the condition takes
        ("(N < 2) ? M : 7", 7),  # the branch not taken may be unknown
        ("(M >= 2) ? N : 0", None),
    ],
)
def test_c_integer_semantics(expression: str, expected: int | None) -> None:
    assert value_of(expression, {"N": 1024}) == expected


def test_calls_are_read_through_the_callback_or_unknown() -> None:
    assert value_of("f(3) * 2", calls=21) == 42
    assert value_of("f(3) * 2") is None
