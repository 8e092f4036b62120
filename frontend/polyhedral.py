"""The isl model of a static-control region: statement instances, accesses, the order the
program runs them in, and the dependences any new order must keep.

Each statement S of a region with n loops around it is the integer set S[i0..in-1] of
its iterations. Arrays touched through affine subscripts map instances to elements; an
access whose subscript is not affine maps an instance to every element (the statement
may touch any). Scalars the region writes are zero-dimensional arrays, except those it
sets before reading in every iteration of some outer loops and never hands on (private
temporaries): they are expanded over those loops, so that the iterations stop depending
on each other through them. The original order is the classic 2d+1 schedule. Dependences
are memory-based (read after write, write after read, write after write)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import islpy as isl

from cudaify.frontend.dependence import Bound, Space, affine_text, domain
from cudaify.frontend.facts import Scop, ScopAccess, ScopStatement


class ModelError(Exception):
    """The region cannot be modelled after all (said in the method's reason)."""


@dataclass
class Model:
    """isl objects for one region. Tuple names: statements `S<k>`, arrays `A<k>` (in
    `array_ids`), live ranges of written scalars `V<k>` (`webs`)."""

    scop: Scop
    space: Space  # isl parameter names <-> C symbols
    domain: isl.UnionSet
    reads: isl.UnionMap
    writes: isl.UnionMap
    original: isl.UnionMap
    dependences: isl.UnionMap
    context: isl.Set
    iterators: dict[str, tuple[str, ...]]  # statement -> its C loop variables, outermost first
    array_ids: dict[str, str] = field(default_factory=dict)
    webs: list[Web] = field(default_factory=list)  # live ranges of written scalars
    # dependences without the pairs a sum statement has with itself through its target
    relaxed: isl.UnionMap = field(default_factory=lambda: isl.UnionMap("{ }"))
    tagged_reads: isl.UnionMap = field(default_factory=lambda: isl.UnionMap("{ }"))
    tagged_writes: isl.UnionMap = field(default_factory=lambda: isl.UnionMap("{ }"))
    tags: dict[str, tuple[str, ScopAccess]] = field(default_factory=dict)
    dims: dict[str, int] = field(default_factory=dict)  # array -> dimensions modelled

    def web(self, statement: str, scalar: str) -> Web | None:
        """The live range of `scalar` that `statement` belongs to (None: not written)."""
        for web in self.webs:
            if web.scalar == scalar and statement in web.statements:
                return web
        return None

    def statement(self, name: str) -> ScopStatement:
        for statement in self.scop.statements:
            if statement.name == name:
                return statement
        raise KeyError(name)


def build(scop: Scop, sums: frozenset[str] = frozenset()) -> Model:
    """The model of `scop`. `sums` names the sum statements whose instances may run in
    any order (the caller can update their target atomically): `relaxed` leaves out
    their dependences on themselves."""
    space = Space()
    for name in scop.params:
        if not re.fullmatch(r"[A-Za-z_]\w*", name):
            raise ModelError(f"the bound or subscript symbol '{name}' is not a plain variable")
        space.param(name)
    written = {s.name for s in scop.scalars if s.written}
    model = Model(
        scop=scop,
        space=space,
        domain=isl.UnionSet("{ }"),
        reads=isl.UnionMap("{ }"),
        writes=isl.UnionMap("{ }"),
        original=isl.UnionMap("{ }"),
        dependences=isl.UnionMap("{ }"),
        context=isl.Set("{ : }"),
        iterators={},
    )
    model.array_ids = {a.name: f"A{k}" for k, a in enumerate(scop.arrays)}
    model.dims = _array_dims(scop)
    depth = max((len(s.loops) for s in scop.statements), default=0)
    domains, originals = [], []
    for statement in scop.statements:
        names, text = _domain_text(scop, statement, space)
        model.iterators[statement.name] = tuple(scop.loops[k].var for k in statement.loops)
        domains.append(text)
        originals.append(_original_text(scop, statement, names, depth, space))
    header = space.header()
    model.domain = _union_set(header, domains)
    model.original = _union_map(header, originals).intersect_domain(model.domain)
    model.context = _context(scop, space)
    model.webs = _webs(model, written)
    model.tagged_reads, model.tagged_writes = _accesses(model)
    untag = _untag(model.tagged_reads.union(model.tagged_writes))
    model.reads = model.tagged_reads.apply_domain(untag).intersect_domain(model.domain)
    model.writes = model.tagged_writes.apply_domain(untag).intersect_domain(model.domain)
    model.dependences, model.relaxed = _dependences(model, sums)
    return model


# -- text of the sets and maps ---------------------------------------------------------


def _chain(scop: Scop, statement: ScopStatement) -> tuple[Bound, ...]:
    return tuple(
        Bound(loop.var, loop.lower, loop.upper, loop.step, loop.inclusive)
        for loop in (scop.loops[k] for k in statement.loops)
    )


def _domain_text(scop: Scop, statement: ScopStatement, space: Space) -> tuple[list[str], str]:
    names, constraints, _ = domain(_chain(scop, statement), "i", space, scop.context)
    body = " and ".join(constraints) if constraints else "true"
    return names, f"{statement.name}[{', '.join(names)}] : {body}"


def _original_text(
    scop: Scop, statement: ScopStatement, names: list[str], depth: int, space: Space
) -> str:
    """S[i..] -> [p0, ±i0, p1, ±i1, ..., pn], padded with zeros: the program's order."""
    times: list[str] = []
    for k, position in enumerate(statement.position):
        times.append(str(position))
        if k < len(names):
            loop = scop.loops[statement.loops[k]]
            times.append(names[k] if loop.step > 0 else f"-{names[k]}")
    times += ["0"] * (2 * depth + 1 - len(times))
    return f"{statement.name}[{', '.join(names)}] -> [{', '.join(times)}]"


def _context(scop: Scop, space: Space) -> isl.Set:
    constraints = [
        f"{space.param(name)} = {affine_text(value, {}, space)}" for name, value in scop.context
    ]
    body = " and ".join(constraints) if constraints else ""
    return isl.Set(f"{space.header()}{{ : {body} }}")


def _union_set(header: str, pieces: list[str]) -> isl.UnionSet:
    if not pieces:
        return isl.UnionSet("{ }")
    return isl.UnionSet(f"{header}{{ {'; '.join(pieces)} }}")


def _union_map(header: str, pieces: list[str]) -> isl.UnionMap:
    if not pieces:
        return isl.UnionMap(f"{header}{{ }}")
    return isl.UnionMap(f"{header}{{ {'; '.join(pieces)} }}")


def _array_dims(scop: Scop) -> dict[str, int]:
    """The dimensions each array is modelled with: the most common number among its
    affine accesses (an access with another number touches any element)."""
    counts: dict[str, dict[int, int]] = {}
    for statement in scop.statements:
        for access in statement.accesses:
            if access.scalar or access.subscripts is None:
                counts.setdefault(access.target, {})
                continue
            seen = counts.setdefault(access.target, {})
            seen[len(access.subscripts)] = seen.get(len(access.subscripts), 0) + 1
    return {
        name: max(seen, key=lambda d: (seen[d], d)) if seen else 1 for name, seen in counts.items()
    }


def _access_text(model: Model, statement: ScopStatement, access: ScopAccess, names) -> str | None:
    """`S[i..] -> A[..]` for one access; None for a scalar the region never writes."""
    iterators = model.iterators[statement.name]
    dims = dict(zip(iterators, names, strict=True))
    source = f"{statement.name}[{', '.join(names)}]"
    if access.scalar:
        web = model.web(statement.name, access.target)
        if web is None:
            return None
        return f"{source} -> {web.isl_id}[{', '.join(names[: web.depth])}]"
    target = model.array_ids.get(access.target)
    if target is None:
        raise ModelError(f"the array '{access.target}' has no data facts")
    rank = model.dims[access.target]
    if access.subscripts is None or len(access.subscripts) != rank:
        free = [f"x{k}" for k in range(rank)]
        return f"{source} -> {target}[{', '.join(free)}]"
    subscripts = [affine_text(sub, dims, model.space) for sub in access.subscripts]
    return f"{source} -> {target}[{', '.join(subscripts)}]"


def _accesses(model: Model) -> tuple[isl.UnionMap, isl.UnionMap]:
    """Reads and writes, each access tagged by its own reference (`[S[i] -> R3[]] -> A[..]`),
    so that dependences can tell which access of a statement they come from."""
    reads, writes = [], []
    for statement in model.scop.statements:
        names = [f"i{k}" for k in range(len(statement.loops))]
        source = f"{statement.name}[{', '.join(names)}]"
        for access in statement.accesses:
            text = _access_text(model, statement, access, names)
            if text is None:
                continue
            tag = f"R{len(model.tags)}"
            model.tags[tag] = (statement.name, access)
            tagged = text.replace(source, f"[{source} -> {tag}[]]", 1)
            if access.is_read:
                reads.append(tagged)
            if access.is_write:
                writes.append(tagged)
    header = model.space.header()
    return _union_map(header, reads), _union_map(header, writes)


def _untag(tagged: isl.UnionMap) -> isl.UnionMap:
    """[S[i] -> R[]] -> S[i] for every tagged instance of `tagged`'s domain."""
    return isl.UnionMap.domain_map(tagged.domain().unwrap())


def _dependences(model: Model, allowed: frozenset[str]) -> tuple[isl.UnionMap, isl.UnionMap]:
    """All dependences, and those left when a sum statement's instances may run in any
    order (the pairs through its own target are dropped), both between instances."""
    reads, writes = model.tagged_reads, model.tagged_writes
    untag = _untag(reads.union(writes))
    before = model.original.lex_lt_union_map(model.original)
    before_tagged = untag.apply_range(before).apply_range(untag.reverse())
    flow = writes.apply_range(reads.reverse())
    anti = reads.apply_range(writes.reverse())
    output = writes.apply_range(writes.reverse())
    tagged = flow.union(anti).union(output).intersect(before_tagged)
    sums = {
        tag
        for tag, (statement, access) in model.tags.items()
        if statement in allowed and model.statement(statement).reduction and access.is_write
    }
    kept: list[isl.Map] = []

    def keep(piece: isl.Map) -> None:
        source, target = piece.domain().unwrap(), piece.range().unwrap()
        self_pair = (
            source.get_tuple_name(isl.dim_type.in_) == target.get_tuple_name(isl.dim_type.in_)
            and source.get_tuple_name(isl.dim_type.out) == target.get_tuple_name(isl.dim_type.out)
            and source.get_tuple_name(isl.dim_type.out) in sums
        )
        if not self_pair:
            kept.append(piece)

    tagged.foreach_map(keep)
    relaxed = isl.UnionMap("{ }")
    for piece in kept:
        relaxed = relaxed.union(isl.UnionMap.from_map(piece))
    plain = tagged.apply_domain(untag).apply_range(untag).coalesce()
    return plain, relaxed.apply_domain(untag).apply_range(untag).coalesce()


# -- scalar webs and private temporaries ------------------------------------------


@dataclass(frozen=True)
class Web:
    """One live range of a written scalar: the statements whose reads and writes of it
    are linked by the values they pass. A scalar reused by separate loop nests as a
    temporary has one web per nest; each web is its own storage. `depth` > 0: private
    to the first `depth` loops around its statements (every value it reads was written
    in the same iterations of them), else one shared location."""

    scalar: str
    index: int
    statements: frozenset[str]
    depth: int

    @property
    def isl_id(self) -> str:
        return f"V{self.index}"


def _webs(model: Model, written: set[str]) -> list[Web]:
    scop = model.scop
    live = {s.name for s in scop.scalars if s.live_out}
    webs: list[Web] = []
    for name in sorted(written):
        users = [
            st for st in scop.statements if any(a.scalar and a.target == name for a in st.accesses)
        ]
        if not users:
            continue
        flow = _scalar_flow(model, name, users)
        exposed = not flow.get_may_no_source().is_empty()
        if name in live or exposed:
            # its value comes in from before the region or goes out after it: one location
            webs.append(Web(name, len(webs), frozenset(st.name for st in users), 0))
            continue
        for group in _linked(users, flow):
            members = [st for st in users if st.name in group]
            depth = _private_depth(model, name, members, _common_loops(members))
            webs.append(Web(name, len(webs), frozenset(group), depth))
    return webs


def _scalar_flow(model: Model, name: str, users: list[ScopStatement]) -> isl.UnionFlow:
    """Which write each read of scalar `name` gets its value from (writes inside an
    opaque statement may not happen: they are may-sources)."""
    header = model.space.header()
    must: list[str] = []
    may: list[str] = []
    reads: list[str] = []
    for statement in users:
        names = [f"i{k}" for k in range(len(statement.loops))]
        source = f"{statement.name}[{', '.join(names)}]"
        for access in statement.accesses:
            if not (access.scalar and access.target == name):
                continue
            if access.is_read:
                reads.append(f"{source} -> V[]")
            if access.is_write:
                (may if statement.kind == "opaque" else must).append(f"{source} -> V[]")
    sink = _union_map(header, reads).intersect_domain(model.domain)
    info = isl.UnionAccessInfo.from_sink(sink)
    info = info.set_must_source(_union_map(header, must).intersect_domain(model.domain))
    info = info.set_may_source(_union_map(header, may).intersect_domain(model.domain))
    return info.set_schedule_map(model.original).compute_flow()


def _linked(users: list[ScopStatement], flow: isl.UnionFlow) -> list[set[str]]:
    """Statements grouped by the values they pass (connected components)."""
    parent = {st.name: st.name for st in users}

    def root(name: str) -> str:
        while parent[name] != name:
            parent[name] = parent[parent[name]]
            name = parent[name]
        return name

    def link(piece: isl.Map) -> None:
        a = root(piece.get_tuple_name(isl.dim_type.in_))
        b = root(piece.get_tuple_name(isl.dim_type.out))
        parent[a] = b

    flow.get_may_dependence().union(flow.get_must_dependence()).foreach_map(link)
    groups: dict[str, set[str]] = {}
    for st in users:
        groups.setdefault(root(st.name), set()).add(st.name)
    return list(groups.values())


def _common_loops(statements: list[ScopStatement]) -> int:
    if not statements:
        return 0
    first = statements[0].loops
    depth = len(first)
    for statement in statements[1:]:
        depth = min(depth, len(statement.loops))
        for k in range(depth):
            if statement.loops[k] != first[k]:
                depth = k
                break
    return depth


def _private_depth(model: Model, name: str, users: list[ScopStatement], common: int) -> int:
    """The most outer loops (of the `common` the statements share) whose iterations
    each set the scalar before reading it."""
    if common == 0:
        return 0
    header = model.space.header()
    flow = _scalar_flow(model, name, users)
    dependences = flow.get_may_dependence().union(flow.get_must_dependence())
    for depth in range(common, 0, -1):
        outer = _union_map(
            header,
            [
                f"{st.name}[{', '.join(f'i{k}' for k in range(len(st.loops)))}] -> "
                f"[{', '.join(f'i{k}' for k in range(depth))}]"
                for st in users
            ],
        )
        deltas = dependences.apply_domain(outer).apply_range(outer).deltas()
        zero = isl.UnionSet(f"{{ [{', '.join(['0'] * depth)}] }}")
        if deltas.is_subset(zero.align_params(deltas.get_space())):
            return depth
    return 0


def surely_written(model: Model, array: str) -> isl.UnionSet:
    """Elements of `array` that the region writes whatever the data: writes through affine
    subscripts by statements that always run them (not inside an opaque statement)."""
    header = model.space.header()
    pieces = []
    for statement in model.scop.statements:
        if statement.kind == "opaque":
            continue
        names = [f"i{k}" for k in range(len(statement.loops))]
        for access in statement.accesses:
            if access.scalar or access.target != array or not access.is_write:
                continue
            if access.subscripts is None or len(access.subscripts) != model.dims[array]:
                continue
            text = _access_text(model, statement, access, names)
            if text is not None:
                pieces.append(text)
    return _union_map(header, pieces).intersect_domain(model.domain).range()


def covered_when(model: Model, array: str, extents: list[str]) -> isl.Set:
    """The parameter values for which the region writes every element of `array`, whose
    dimensions have the given extents (integers or parameter names): then its old
    contents need not be copied to the device."""
    header = model.space.header()
    dims = [f"x{k}" for k in range(len(extents))]
    bounds = []
    for dim, extent in zip(dims, extents, strict=True):
        limit = extent if extent.lstrip("-").isdigit() else model.space.param(extent)
        bounds.append(f"0 <= {dim} < {limit}")
    box = isl.UnionSet(
        f"{header}{{ {model.array_ids[array]}[{', '.join(dims)}] : {' and '.join(bounds)} }}"
    )
    missing = box.subtract(surely_written(model, array))
    if missing.is_empty():
        return model.context
    bad = missing.params()
    return model.context.intersect(bad.complement())


def violated(model: Model, schedule: isl.UnionMap) -> isl.UnionMap:
    """The dependences a new schedule (instance -> time) does not keep: pairs whose target
    does not come strictly after their source. Empty for a legal schedule."""
    schedule = schedule.intersect_domain(model.domain)
    after = schedule.lex_lt_union_map(schedule)
    return model.dependences.subtract(after)


def loop_depth_of(model: Model, statement: str) -> int:
    return len(model.iterators[statement])


__all__ = [
    "Model",
    "ModelError",
    "Web",
    "build",
    "covered_when",
    "loop_depth_of",
    "surely_written",
    "violated",
]
