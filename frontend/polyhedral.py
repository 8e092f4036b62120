"""The isl model of a static-control region: statement instances, accesses, the order the
program runs them in, and the dependences any new order must keep.

Each statement S of a region with n loops around it is the integer set S[i0..in-1] of
its iterations. Arrays touched through affine subscripts map instances to elements; an
access whose subscript is not affine maps an instance to every element (the statement
may touch any). Scalars the region writes are zero-dimensional arrays, except those it
sets before reading in every iteration of some outer loops and never hands on (private
temporaries): they are expanded over those loops, so that the iterations stop depending
on each other through them. Temporary arrays get the same treatment where exact dataflow
proves every value they are read for was written in the same iteration of those loops
and the last iteration leaves the final contents (see PrivateArray). The original order
is the classic 2d+1 schedule. Dependences are memory-based (read after write, write after
read, write after write)."""

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
    `array_ids`), live ranges of written scalars `V<k>` (`webs`), expanded temporary
    arrays `P<k>` (`privates`)."""

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
    privates: dict[str, PrivateArray] = field(default_factory=dict)  # array -> its expansion
    # arrays through which iterations of the loops around them meet, not expanded: why
    shared_arrays: dict[str, str] = field(default_factory=dict)

    def array_notes(self) -> list[str]:
        """What became of each array through which iterations of a loop meet:
        "array 'sum' is private to loops r, q: expanded", or why it stays shared."""
        notes = {name: private.note() for name, private in self.privates.items()}
        notes.update(
            {
                name: f"array '{name}' stays shared: {why}"
                for name, why in self.shared_arrays.items()
            }
        )
        return [notes[a.name] for a in self.scop.arrays if a.name in notes]

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
    model.privates, model.shared_arrays = _private_arrays(model)
    _model_accesses(model, sums)
    useless = _freeing_nothing(model)
    if useless:
        for name in useless:
            private = model.privates.pop(name)
            which = "loop" if len(private.loops) == 1 else "loops"
            model.shared_arrays[name] = (
                f"expanding it over {which} {', '.join(private.loops)} would free none of "
                "them (other accesses cross them)"
            )
        _model_accesses(model, sums)
    return model


def _model_accesses(model: Model, sums: frozenset[str]) -> None:
    """Fill in the model's accesses and dependences (private arrays expanded)."""
    model.tags = {}
    model.tagged_reads, model.tagged_writes = _accesses(model)
    untag = _untag(model.tagged_reads.union(model.tagged_writes))
    model.reads = model.tagged_reads.apply_domain(untag).intersect_domain(model.domain)
    model.writes = model.tagged_writes.apply_domain(untag).intersect_domain(model.domain)
    model.dependences, model.relaxed = _dependences(model, sums)


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


def _access_text(
    model: Model, statement: ScopStatement, access: ScopAccess, names, expand: bool = True
) -> str | None:
    """`S[i..] -> A[..]` for one access; None for a scalar the region never writes. An
    access to a private array goes to its expansion, `P[i0..id-1, ..]` (unless `expand`
    is False: the array itself)."""
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
    private = model.privates.get(access.target) if expand else None
    if private is not None and statement.name in private.statements:
        target = private.isl_id
        subscripts = names[: private.depth] + subscripts
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
    flow = _scalar_flow(model, name, users)
    dependences = flow.get_may_dependence().union(flow.get_must_dependence())
    return _same_iteration_depth(model, dependences, users, common)


def _outer(model: Model, users: list[ScopStatement], depth: int) -> isl.UnionMap:
    """S[i0..] -> [i0..i(depth-1)] for each statement: its iteration of the outer loops."""
    return _union_map(
        model.space.header(),
        [
            f"{st.name}[{', '.join(f'i{k}' for k in range(len(st.loops)))}] -> "
            f"[{', '.join(f'i{k}' for k in range(depth))}]"
            for st in users
        ],
    )


def _same_iteration_depth(
    model: Model, dependences: isl.UnionMap, users: list[ScopStatement], common: int
) -> int:
    """The most outer loops (of the `common` the statements share) that no dependence
    crosses: both ends of each lie in the same iteration of them."""
    for depth in range(common, 0, -1):
        outer = _outer(model, users, depth)
        deltas = dependences.apply_domain(outer).apply_range(outer).deltas()
        zero = isl.UnionSet(f"{{ [{', '.join(['0'] * depth)}] }}")
        if deltas.is_subset(zero.align_params(deltas.get_space())):
            return depth
    return 0


# -- temporary arrays: privatisation by expansion ------------------------------------


@dataclass(frozen=True)
class PrivateArray:
    """A temporary array expanded over the first `depth` loops around its statements: each
    of their iterations gets its own copy, indexed by those loops' values, then the
    array's own subscripts. Exact dataflow proves it: every value the region reads from it
    was written earlier in the same iteration of those loops (none comes from before the
    region or from another iteration), and every subscript is affine. Its final contents
    are then the copy of the last iteration that writes it, which writes every element any
    iteration writes (the rest keep their values): the write-back copies that one back."""

    array: str
    index: int
    statements: frozenset[str]
    depth: int
    loops: tuple[str, ...]  # C loop variables it is private to, outermost first
    steps: tuple[int, ...]  # their steps (a negative one runs its values downwards)

    @property
    def isl_id(self) -> str:
        return f"P{self.index}"

    def note(self) -> str:
        which = "loop" if len(self.loops) == 1 else "loops"
        return f"array '{self.array}' is private to {which} {', '.join(self.loops)}: expanded"


class _Shared(Exception):
    """Why an array is not privatised (it stays one array shared by every iteration)."""


def _private_arrays(model: Model) -> tuple[dict[str, PrivateArray], dict[str, str]]:
    """The arrays that can be expanded over outer loops, and why the others through which
    iterations of the loops around them meet cannot."""
    privates: dict[str, PrivateArray] = {}
    shared: dict[str, str] = {}
    for data in model.scop.arrays:
        users = _array_users(model.scop, data.name)
        if not users or not _carries_dependence(model, data.name, users):
            continue  # nothing to gain: no loop's iterations meet through it
        try:
            depth = _private_array_depth(model, data.name, users)
        except _Shared as why:
            shared[data.name] = str(why)
            continue
        first = users[0]
        private = PrivateArray(
            array=data.name,
            index=len(privates),
            statements=frozenset(st.name for st in users),
            depth=depth,
            loops=model.iterators[first.name][:depth],
            steps=tuple(model.scop.loops[k].step for k in first.loops[:depth]),
        )
        privates[data.name] = private
    return privates, shared


def _freeing_nothing(model: Model) -> list[str]:
    """Private arrays whose expansion leaves every loop they are expanded over crossed by
    some dependence (a time loop that other arrays carry): their copies would cost
    memory and buy no parallelism."""
    useless = []
    for name, private in model.privates.items():
        statement = model.statement(min(private.statements))
        if not any(
            _free_loop(model, statement.loops[level], level) for level in range(private.depth)
        ):
            useless.append(name)
    return useless


def _free_loop(model: Model, loop: int, level: int) -> bool:
    """Whether no dependence (sums' dependences on themselves aside) joins two different
    iterations of loop `loop` (Scop.loops index, at depth `level`) within one iteration
    of the loops around it."""
    inside = [st for st in model.scop.statements if loop in st.loops[level : level + 1]]
    outer = _outer(model, inside, level + 1)
    deltas = model.relaxed.apply_domain(outer).apply_range(outer).deltas()
    zeros = ", ".join(["0"] * level)
    crossing = isl.UnionSet(f"{{ [{zeros}{', ' if level else ''}x] : x != 0 }}")
    return deltas.intersect(crossing.align_params(deltas.get_space())).is_empty()


def _array_users(scop: Scop, name: str) -> list[ScopStatement]:
    return [
        st for st in scop.statements if any(not a.scalar and a.target == name for a in st.accesses)
    ]


def _array_accesses(model: Model, name: str, users: list[ScopStatement]):
    """Reads and writes of array `name` (not expanded), statement instances to elements."""
    header = model.space.header()
    reads, writes = [], []
    for statement in users:
        names = [f"i{k}" for k in range(len(statement.loops))]
        for access in statement.accesses:
            if access.scalar or access.target != name:
                continue
            text = _access_text(model, statement, access, names, expand=False)
            if text is None:
                continue
            if access.is_read:
                reads.append(text)
            if access.is_write:
                writes.append(text)
    return (
        _union_map(header, reads).intersect_domain(model.domain),
        _union_map(header, writes).intersect_domain(model.domain),
    )


def _carries_dependence(model: Model, name: str, users: list[ScopStatement]) -> bool:
    """Whether two accesses to the array, one a write, meet in different iterations of
    the loops around all of its accesses (those it could be expanded over)."""
    common = _common_loops(users)
    if common == 0:
        return False
    reads, writes = _array_accesses(model, name, users)
    before = model.original.lex_lt_union_map(model.original)
    meets = (
        writes.apply_range(reads.reverse())
        .union(reads.apply_range(writes.reverse()))
        .union(writes.apply_range(writes.reverse()))
        .intersect(before)
    )
    outer = _outer(model, users, common)
    deltas = meets.apply_domain(outer).apply_range(outer).deltas()
    zero = isl.UnionSet(f"{{ [{', '.join(['0'] * common)}] }}")
    return not deltas.is_subset(zero.align_params(deltas.get_space()))


def _private_array_depth(model: Model, name: str, users: list[ScopStatement]) -> int:
    """How many of the loops around all of its accesses (there is one at least) the array
    can be expanded over, or _Shared with the reason."""
    for statement in users:
        for access in statement.accesses:
            if access.scalar or access.target != name:
                continue
            if access.subscripts is None or len(access.subscripts) != model.dims[name]:
                raise _Shared(f"line {access.line} indexes it with a subscript that is not affine")
            if access.is_write and statement.kind == "opaque":
                raise _Shared(
                    f"line {access.line} writes it inside a statement whose iterations the "
                    "model does not see"
                )
    common = _common_loops(users)
    reads, writes = _array_accesses(model, name, users)
    info = isl.UnionAccessInfo.from_sink(reads).set_must_source(writes)
    flow = info.set_schedule_map(model.original).compute_flow()
    outside = flow.get_may_no_source()
    if not outside.is_empty():
        line = _first_line(model, outside, isl.dim_type.in_)
        raise _Shared(f"the read at line {line} may take a value from before the region")
    dependences = flow.get_must_dependence().union(flow.get_may_dependence())
    depth = _same_iteration_depth(model, dependences, users, common)
    if depth == 0:
        loop = model.iterators[users[0].name][0]
        line = _crossing_read_line(model, dependences, users)
        raise _Shared(
            f"the read at line {line} takes a value written in an earlier iteration of loop {loop}"
        )
    for tried in range(depth, 0, -1):
        if _last_iteration_writes_all(model, name, users, tried):
            return tried
    loops = ", ".join(model.iterators[users[0].name][:depth])
    raise _Shared(
        f"the last iteration of {loops} does not write every element the others write, "
        "so no one copy holds its final contents"
    )


def _first_line(model: Model, union: isl.UnionMap, side: isl.dim_type) -> int:
    """The first line of the statements on one side of `union`'s pairs."""
    found: list[str] = []
    union.foreach_map(lambda piece: found.append(piece.get_tuple_name(side)))
    return min(model.statement(name).line for name in found)


def _crossing_read_line(model: Model, dependences: isl.UnionMap, users) -> int:
    """The line of a statement that reads a value written in another iteration of the
    outermost loop around the array's accesses."""
    outer = _outer(model, users, 1)
    crossing = dependences.subtract(outer.apply_range(outer.reverse()))
    if crossing.is_empty():
        return users[0].line
    return _first_line(model, crossing, isl.dim_type.out)


def _outer_writes(model: Model, name: str, users: list[ScopStatement], depth: int) -> isl.Map:
    """[l0..] -> A[..]: the elements each iteration of the outer `depth` loops writes."""
    _, writes = _array_accesses(model, name, users)
    written = writes.apply_domain(_outer(model, users, depth))
    if written.is_empty():
        dims = ", ".join(f"l{k}" for k in range(depth))
        return isl.Map(f"{model.space.header()}{{ [{dims}] -> [] : 1 = 0 }}")
    return isl.Map.from_union_map(written)


def _last(iterations: isl.Set, steps: tuple[int, ...]) -> isl.Set:
    """The iteration that runs last, per parameter value (a loop with a negative step
    runs its values downwards)."""
    dims = [f"l{k}" for k in range(len(steps))]
    signed = [d if step > 0 else f"-{d}" for d, step in zip(dims, steps, strict=True)]
    order = isl.Map(f"{{ [{', '.join(dims)}] -> [{', '.join(signed)}] }}")
    order = order.align_params(iterations.get_space())
    return iterations.apply(order).lexmax().apply(order.reverse())


def _last_iteration_writes_all(
    model: Model, name: str, users: list[ScopStatement], depth: int
) -> bool:
    written = _outer_writes(model, name, users, depth)
    steps = tuple(model.scop.loops[k].step for k in users[0].loops[:depth])
    last = _last(written.domain(), steps)
    every = written.range().intersect_params(model.context)
    return every.is_subset(written.intersect_domain(last).range())


def last_iteration(model: Model, private: PrivateArray) -> isl.Set:
    """The values of the loops a private array is expanded over in the last iteration that
    writes it (per parameter value; empty where none does): its copy holds the array's
    final contents."""
    users = [model.statement(name) for name in sorted(private.statements)]
    written = _outer_writes(model, private.array, users, private.depth)
    return _last(written.domain(), private.steps)


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


# -- speculative parallel steps of an outer loop ----------------------------------------

# A step whose reads across instances chain this many links deep is refused (see
# speculation): a recurrence chains as deep as its loop is long.
CHAIN_LINKS = 3


class NotSpeculated(Exception):
    """Why the steps of a region's outer loop cannot run speculatively in parallel.
    `candidate` is False when the region is not even shaped for it (not one perfect nest
    of 2 to 4 loops): that is not worth a note."""

    def __init__(self, why: str, candidate: bool = True):
        super().__init__(why)
        self.candidate = candidate


@dataclass(frozen=True)
class Speculation:
    """The steps of the outer loop `loop` (Floyd-Warshall's k) run one after another; the
    instances of one step, over the loops `inner`, run in parallel although some read
    elements that other instances of the step write ("cross reads": Floyd-Warshall's
    pivot row and column). It is exact under a run-time check. Before each step the
    arrays it writes (`arrays`) are copied into snapshots; every read of them (other
    than the write targets themselves) reads the snapshot, and every write instance in
    `checked` (its element is read by another instance of the step) compares the value
    it stored with the snapshot's, bit for bit. When none differs, every read saw the
    value the sequential step would have shown it, whatever the order: the step is
    done. Otherwise the snapshots go back into the arrays and the step reruns in order.

    The precondition (see `speculation`): the statements sit in one perfect nest of
    affine loops, write no scalar, each writes at most one array element per instance
    and no two instances of one step write the same element (injective writes; then
    every dependence inside a step is between a write and a read of another instance,
    which the snapshot and the check take care of), and the chains of cross reads are
    short (fewer than CHAIN_LINKS links): a value read across instances is not written
    from values read across instances written in turn from such values. A recurrence
    (`a[i][j]` from `a[i][j - 1]`) chains as deep as its loop is long; its values change
    by design, so its check would fail at every step and it is refused."""

    loop: str  # C variable of the outer loop
    inner: tuple[str, ...]  # C variables of the loops of one step, outermost first
    arrays: tuple[str, ...]  # arrays a step writes (snapshotted), in the scop's order
    checked: isl.UnionSet  # write instances whose element another instance of the step reads


def speculation(model: Model) -> Speculation:
    """The speculative parallel form of the region's outer-loop steps, or NotSpeculated
    with the reason."""
    statements = list(model.scop.statements)
    loops = _one_perfect_nest(model, statements)
    _require_plain_accesses(model, statements)
    if model.privates:
        raise NotSpeculated("it expands a temporary array")
    outer = _outer(model, statements, 1)
    same_step = outer.apply_range(outer.reverse())
    itself = model.domain.identity()
    loop = model.scop.loops[loops[0]].var
    if model.dependences.subtract(same_step).is_empty():
        raise NotSpeculated(f"loop {loop} carries no dependence: nothing to speculate on")
    writes = model.writes
    clash = writes.apply_range(writes.reverse()).intersect(same_step).subtract(itself)
    if not clash.is_empty():
        line = _first_line(model, clash, isl.dim_type.in_)
        array = _array_of(model, clash, writes)
        raise NotSpeculated(
            f"two instances of one step of loop {loop} write the same element of "
            f"'{array}' (line {line})"
        )
    cross = writes.apply_range(model.reads.reverse()).intersect(same_step).subtract(itself)
    if cross.is_empty():
        raise NotSpeculated(f"no instance of a step of loop {loop} reads what another writes")
    chain = cross
    for _ in range(CHAIN_LINKS - 1):
        chain = chain.apply_range(cross)
    if not chain.is_empty():
        line = _first_line(model, cross, isl.dim_type.out)
        raise NotSpeculated(
            f"the reads across instances of a step of loop {loop} chain {CHAIN_LINKS} deep "
            f"or more (line {line}), as a recurrence's do: their values change by design, "
            "so the run-time check would fail at every step"
        )
    written = {a.target for st in statements for a in st.accesses if a.is_write}
    return Speculation(
        loop=loop,
        inner=tuple(model.scop.loops[k].var for k in loops[1:]),
        arrays=tuple(a.name for a in model.scop.arrays if a.name in written),
        checked=cross.domain(),
    )


def _one_perfect_nest(model: Model, statements: list[ScopStatement]) -> tuple[int, ...]:
    """The loops of the nest every statement sits in, outermost first."""
    if not statements or not statements[0].loops:
        raise NotSpeculated("it has no outer loop", candidate=False)
    loops = statements[0].loops
    if any(st.loops != loops for st in statements):
        raise NotSpeculated(
            "its statements are not all in the body of one perfect loop nest", candidate=False
        )
    if not 1 <= len(loops) - 1 <= 3:
        raise NotSpeculated(
            f"a step of loop {model.scop.loops[loops[0]].var} has {len(loops) - 1} loops "
            "(1 to 3 form a grid)",
            candidate=False,
        )
    return loops


def _require_plain_accesses(model: Model, statements: list[ScopStatement]) -> None:
    for statement in statements:
        if statement.kind == "opaque":
            raise NotSpeculated(
                f"line {statement.line} is a statement whose accesses the model does not see"
            )
        array_writes = 0
        for access in statement.accesses:
            if access.scalar:
                if access.is_write:
                    raise NotSpeculated(f"line {access.line} writes the scalar '{access.target}'")
                continue
            if access.subscripts is None or len(access.subscripts) != model.dims[access.target]:
                raise NotSpeculated(
                    f"line {access.line} indexes '{access.target}' with a subscript that is "
                    "not affine"
                )
            array_writes += access.is_write
        if array_writes > 1:
            raise NotSpeculated(f"line {statement.line} writes more than one array element")


def _array_of(model: Model, pairs: isl.UnionMap, writes: isl.UnionMap) -> str:
    """The C name of an array that the sources of `pairs` write."""
    found: list[str] = []
    writes.intersect_domain(pairs.domain()).foreach_map(
        lambda piece: found.append(piece.get_tuple_name(isl.dim_type.out))
    )
    names = {v: k for k, v in model.array_ids.items()}
    return names.get(min(found), "?") if found else "?"


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
    "NotSpeculated",
    "PrivateArray",
    "Speculation",
    "Web",
    "build",
    "covered_when",
    "last_iteration",
    "loop_depth_of",
    "speculation",
    "surely_written",
    "violated",
]
