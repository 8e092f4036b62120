"""Loop-carried dependences with isl.

Each access is a statement instance set: the iteration domain of the canonical loops
around it (affine bounds; a non-affine bound is left out, which only enlarges the set)
and its affine subscripts. A dependence between accesses a (source) and b (target) of
one array, at least one a write, is carried by the loop at nest level k when some
instance of a runs before some instance of b in an earlier iteration of that loop
(equal iterators above k, smaller at k) and both touch the same element. Parameters
(loop-invariant integer scalars) are left free: a dependence that exists for any value
of them counts."""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from cudaify.frontend.facts import Affine


@dataclass(frozen=True)
class Bound:
    """A canonical loop seen by isl."""

    var: str
    lower: Affine | None
    upper: Affine | None
    step: int
    inclusive: bool


# Facts about parameters: `w` equals `lb + 1` when the function set `int w = lb + 1;`
# once and never wrote it again.
Context = tuple[tuple[str, Affine], ...]


@dataclass(frozen=True)
class Instance:
    """An access with the loops around it (outermost of the nest first)."""

    array: str
    subscripts: tuple[Affine | None, ...]
    is_write: bool
    is_read: bool
    chain: tuple[Bound, ...]
    text: str
    line: int
    context: Context = ()


@dataclass(frozen=True)
class Dependence:
    source: Instance
    target: Instance
    kind: str  # flow | anti | output

    def describe(self, loop_var: str) -> str:
        what = {
            "flow": f"{self.source.text} is written in one iteration of {loop_var} and "
            f"{self.target.text} reads it in a later one",
            "anti": f"{self.source.text} is read in one iteration of {loop_var} and "
            f"{self.target.text} overwrites it in a later one",
            "output": f"{self.source.text} and {self.target.text} write the same element "
            f"in different iterations of {loop_var}",
        }[self.kind]
        return f"{what} ({self.kind} dependence carried by {loop_var})"


class Space:
    """Names of isl parameters for C symbols (`n`, `p->n`) shared by one query."""

    def __init__(self) -> None:
        self.params: dict[str, str] = {}

    def param(self, name: str) -> str:
        if name not in self.params:
            self.params[name] = f"p{len(self.params)}"
        return self.params[name]

    def header(self) -> str:
        return "[" + ", ".join(self.params.values()) + "] -> "

    def c_name(self, isl_name: str) -> str:
        for c, i in self.params.items():
            if i == isl_name:
                return c
        return isl_name


def affine_text(a: Affine, dims: dict[str, str], space: Space) -> str:
    parts = [str(a.const)]
    for name, coeff in a.terms:
        parts.append(f"{coeff}*{dims[name] if name in dims else space.param(name)}")
    return " + ".join(parts)


def domain(
    chain: tuple[Bound, ...], prefix: str, space: Space, context: Context = ()
) -> tuple[list[str], list[str], dict[str, str]]:
    """(isl dimension names, constraints, C loop variable -> dimension) of a chain."""
    dims: dict[str, str] = {}
    names: list[str] = []
    constraints = [
        f"{space.param(name)} = {affine_text(value, {}, space)}" for name, value in context
    ]
    for k, loop in enumerate(chain):
        dim = f"{prefix}{k}"
        lower = affine_text(loop.lower, dims, space) if loop.lower else None
        upper = affine_text(loop.upper, dims, space) if loop.upper else None
        up, down = ("<=", ">=") if loop.inclusive else ("<", ">")
        if loop.step > 0:
            constraints += [f"{lower} <= {dim}"] if lower else []
            constraints += [f"{dim} {up} {upper}"] if upper else []
        else:
            constraints += [f"{dim} <= {lower}"] if lower else []
            constraints += [f"{dim} {down} {upper}"] if upper else []
        if abs(loop.step) > 1 and lower:
            constraints.append(f"exists (e{prefix}{k}: {dim} = {lower} + {loop.step}*e{prefix}{k})")
        names.append(dim)
        dims[loop.var] = dim
    return names, constraints, dims


_EMPTY: dict[str, bool] = {}
_IMAGES: dict[str, isl.Set] = {}
CACHE_LIMIT = 100_000


def integer_set_empty(space: Space, names: list[str], constraints: list[str]) -> bool:
    """Whether the integer set is empty; isl parsing is the cost, so answers are kept."""
    body = " and ".join(constraints) if constraints else "true"
    text = f"{space.header()}{{ [{', '.join(names)}] : {body} }}"
    if text not in _EMPTY:
        if len(_EMPTY) > CACHE_LIMIT:
            _EMPTY.clear()
        _EMPTY[text] = isl.Set(text).is_empty()
    return _EMPTY[text]


def pinned(a: Instance, b: Instance, level: int) -> bool:
    """A cheap proof of no carried dependence: some dimension is the same affine
    expression in both accesses, uses the level's iterator, and otherwise only outer
    iterators (equal in both) and parameters; then equal elements need equal iterators."""
    inner = {loop.var for loop in a.chain[level + 1 :]} | {
        loop.var for loop in b.chain[level + 1 :]
    }
    var = a.chain[level].var
    for sa, sb in zip(a.subscripts, b.subscripts, strict=True):
        if sa is None or sb is None or sa.terms != sb.terms or sa.const != sb.const:
            continue
        if sa.coeff(var) != 0 and not set(sa.names) & inner:
            return True
    return False


def carried(a: Instance, b: Instance, level: int) -> bool:
    """Whether some instance of a precedes an instance of b at `level` on one element."""
    space = Space()
    a_names, a_cons, a_dims = domain(a.chain, "a", space, a.context)
    b_names, b_cons, b_dims = domain(b.chain, "b", space)
    cons = a_cons + b_cons
    for k in range(level):
        cons.append(f"a{k} = b{k}")
    order = "<" if a.chain[level].step > 0 else ">"
    cons.append(f"a{level} {order} b{level}")
    for sa, sb in zip(a.subscripts, b.subscripts, strict=True):
        assert sa is not None and sb is not None
        cons.append(f"{affine_text(sa, a_dims, space)} = {affine_text(sb, b_dims, space)}")
    return not integer_set_empty(space, a_names + b_names, cons)


def carried_dependences(instances: list[Instance], level: int) -> list[Dependence]:
    """Every (source, target) pair with a dependence carried at `level`; instances
    must all lie inside the loop at that level and have affine subscripts."""
    found = []
    for a in instances:
        for b in instances:
            if a.array != b.array or not (a.is_write or b.is_write):
                continue
            if len(a.subscripts) != len(b.subscripts):
                continue
            if pinned(a, b, level):
                continue
            if carried(a, b, level):
                kind = "output" if a.is_write and b.is_write else "flow" if a.is_write else "anti"
                if a.is_write and b.is_read and not b.is_write:
                    kind = "flow"
                found.append(Dependence(a, b, kind))
                return found  # one is enough to refuse the level; keep queries few
    return found


def always_within(
    chain: tuple[Bound, ...], value: Affine, limit: str, context: Context = ()
) -> bool:
    """Whether 0 <= value < limit holds on the whole iteration domain (limit a symbol)."""
    space = Space()
    names, cons, dims = domain(chain, "a", space, context)
    v = affine_text(value, dims, space)
    n = space.param(limit)
    return integer_set_empty(space, names, cons + [f"({v} < 0 or {v} >= {n})"])


def image(
    chain: tuple[Bound, ...], subscripts: tuple[Affine, ...], space: Space, context: Context = ()
) -> isl.Set:
    """The set of index tuples an access touches over its domain."""
    names, cons, dims = domain(chain, "a", space, context)
    outs = [f"x{k}" for k in range(len(subscripts))]
    eqs = [f"x{k} = {affine_text(s, dims, space)}" for k, s in enumerate(subscripts)]
    body = " and ".join(cons + eqs) if cons + eqs else "true"
    space_text = f"[{', '.join(names)}] -> [{', '.join(outs)}]"
    text = f"{space.header()}{{ {space_text} : {body} }}"
    if text not in _IMAGES:
        if len(_IMAGES) > CACHE_LIMIT:
            _IMAGES.clear()
        _IMAGES[text] = isl.Map(text).range()
    return _IMAGES[text]


# C text of isl expressions ------------------------------------------------------------


def pw_aff_to_c(pa: isl.PwAff, context: isl.Set, space: Space) -> str:
    build = isl.AstBuild.from_context(context)
    return ast_to_c(build.expr_from_pw_aff(pa), space)


def set_to_c(holds: isl.Set, space: Space) -> str:
    """A parameter set as a C condition (`(m >= 1)`)."""
    build = isl.AstBuild.from_context(isl.Set.universe(holds.get_space()))
    return f"({ast_to_c(build.expr_from_set(holds), space)})"


def guarded_count(count: str, texts: str, nonempty: isl.Set, space: Space) -> str:
    """`count` (an element or trip count whose bounds are `texts`), none outside
    `nonempty`: isl prints a bound for the parameters where its set has elements, and a
    quotient or remainder in it (`m - 1 - (m - 1) % 997`) is a floor's only there; an
    affine bound needs no guard (where the set is empty it gives a count of none)."""
    guard = nonempty.coalesce()
    if not any(op in texts for op in "/%") or guard.plain_is_universe():
        return count
    return f"({set_to_c(guard, space)} ? ({count}) : 0)"


def ast_to_c(expr: isl.AstExpr, space: Space) -> str:
    kind = expr.get_type()
    if kind == isl.ast_expr_type.int:
        return expr.get_val().to_str()
    if kind == isl.ast_expr_type.id:
        name = space.c_name(expr.get_id().get_name())
        return name if name.replace("_", "a").isalnum() else f"({name})"
    op = expr.get_op_type()
    args = [ast_to_c(expr.get_op_arg(i), space) for i in range(expr.get_op_n_arg())]
    T = isl.ast_expr_op_type
    binary = {
        T.add: "+",
        T.sub: "-",
        T.mul: "*",
        T.pdiv_q: "/",
        T.pdiv_r: "%",
        T.zdiv_r: "%",
        T.div: "/",
        T.eq: "==",
        T.le: "<=",
        T.lt: "<",
        T.ge: ">=",
        T.gt: ">",
        T.and_: "&&",  # type: ignore[attr-defined]
        T.and_then: "&&",
        T.or_: "||",  # type: ignore[attr-defined]
        T.or_else: "||",
    }
    if op in binary:
        return f"({args[0]} {binary[op]} {args[1]})"
    if op == T.minus:
        return f"(-{args[0]})"
    if op == T.fdiv_q:
        a, b = args
        return f"(({a}) >= 0 ? ({a}) / {b} : -((-({a}) + {b} - 1) / {b}))"
    if op in (T.min, T.max):
        pick = "<" if op == T.min else ">"
        result = args[0]
        for other in args[1:]:
            result = f"(({result}) {pick} ({other}) ? ({result}) : ({other}))"
        return result
    if op in (T.cond, T.select):
        return f"(({args[0]}) ? ({args[1]}) : ({args[2]}))"
    raise ValueError(f"isl expression {expr.to_C_str()} has no C form here")
