"""Static-control regions (SCoPs) for the schedule-based mapping.

A region is a run of consecutive statements of one block whose loops are canonical `for`
loops with affine bounds, nested as written, and whose other statements (expression
statements, scalar declarations, and statements the model treats as one opaque step: an
`if`, a loop with data-dependent bounds) touch arrays through affine subscripts or, where
a subscript is not affine, possibly any element. Calls must be pure; nothing may leave the
region early. isl then sees each statement as a set of instances (its loops' iterations)
with reads and writes, and is free to reorder them as the dependences allow.

The region starts at its first loop and ends at its last: statements before the first
loop and after the last stay on the host as written. Runs are looked for in every block
(a function body, the body of a `while`, a branch of an `if`); a statement that breaks a
run says why in `Function.scop_notes`."""

from __future__ import annotations

from dataclasses import dataclass, field

import clang.cindex as ci

from cudaify.frontend import stdlib_model
from cudaify.frontend.access import LoopNode, RawAccess, Ref
from cudaify.frontend.affine import symbol, to_poly
from cudaify.frontend.callgraph import judged_calls
from cudaify.frontend.facts import (
    Affine,
    ArrayData,
    RuntimeExtent,
    Scop,
    ScopAccess,
    ScopLoop,
    ScopScalar,
    ScopStatement,
    Span,
)
from cudaify.frontend.loops import CK, end_of, kids, start_of

WRITE_MODES = ("write", "readwrite")


@dataclass(eq=False)
class RegionSpan:
    """The bytes of a candidate region, in the shape the analysis's caches key on."""

    start: int
    end: int


class NotModelled(Exception):
    """Why a statement cannot be part of a region (with the offset it concerns)."""

    def __init__(self, why: str, offset: int):
        super().__init__(why)
        self.offset = offset


@dataclass
class _Leaf:
    cursor: ci.Cursor
    start: int
    end: int
    loops: tuple[LoopNode, ...]  # the region's LoopNodes around it, outermost first
    position: tuple[int, ...]
    kind: str
    declares: list[tuple[str, str, int]] = field(default_factory=list)  # type, name, decl


class ScopBuilder:
    """Finds the regions of one analysed function (`fa` is its FunctionAnalysis)."""

    def __init__(self, fa, notes_path: str):
        self.fa = fa
        self.src = fa.src
        self.path = notes_path
        self.canonical = {id(n): n for n in fa.canonical}
        self.by_cursor = {n.cursor.hash: n for n in fa.canonical}
        self.scops: list[Scop] = []
        self.notes: list[str] = []
        # per region being built: loop-bounded accesses, and all accesses, per array
        self._bounded: list[RuntimeExtent] = []
        self._counted: dict[str, int] = {}
        self._bounds_of: dict[int, tuple[int, int]] = {}
        self._alive: list[RegionSpan] = []  # caches key on id(): keep regions alive

    # -- blocks and runs ------------------------------------------------------------
    def function(self, body: ci.Cursor) -> None:
        self.block(body)

    def block(self, compound: ci.Cursor) -> None:
        self.statements([s for s in kids(compound) if s.kind != CK.NULL_STMT])

    def statements(self, statements: list[ci.Cursor]) -> None:
        """Maximal runs of statements that can be in a region; what holds loops but
        cannot be in one is searched for regions of its own."""
        run: list[ci.Cursor] = []
        for statement in statements:
            region_loop = self._has_loop(statement) and self._affine_loop(statement)
            if self._has_loop(statement) and not region_loop:
                self._note(self._not_affine(statement))
            if region_loop or not self._holds_loops(statement):
                why = self._why_not(statement)
                if why is None:
                    run.append(statement)
                    continue
                if self._holds_loops(statement):
                    self._note(why)
            self._close(run)
            run = []
            self._inner_blocks(statement)
        self._close(run)

    def _holds_loops(self, statement: ci.Cursor) -> bool:
        start, end = start_of(statement), end_of(statement)
        return any(start <= n.start < end for n in self.fa.canonical)

    def _inner_blocks(self, statement: ci.Cursor) -> None:
        """Regions inside a statement that is not one: loop bodies, branches, blocks."""
        for child in kids(statement):
            if child.kind == CK.COMPOUND_STMT:
                self.block(child)
            elif child.kind in (CK.FOR_STMT, CK.WHILE_STMT, CK.DO_STMT, CK.IF_STMT):
                self.statements([child])

    def _close(self, run: list[ci.Cursor]) -> None:
        while run and not self._has_loop(run[0]):
            run = run[1:]
        while run and not self._has_loop(run[-1]):
            run = run[:-1]
        if not run:
            return
        region = RegionSpan(start_of(run[0]), self._end(run[-1]))
        self._alive.append(region)
        try:
            self.scops.append(self._scop(run, region))
        except NotModelled as refusal:
            self._note(refusal)

    def _has_loop(self, statement: ci.Cursor) -> bool:
        return statement.kind == CK.FOR_STMT and statement.hash in self.by_cursor

    def _note(self, refusal: NotModelled) -> None:
        line, column = self.src.line_col(refusal.offset)
        text = f"{self.path}:{line}:{column}: not in a static-control region: {refusal}"
        if text not in self.notes:
            self.notes.append(text)

    def _end(self, statement: ci.Cursor) -> int:
        """The statement's last byte, its `;` included (libclang's extent stops before it)."""
        end = end_of(statement)
        following = self.src.token_after(end, end + 64)
        if (
            following is not None
            and following[1] == ";"
            and statement.kind
            not in (
                CK.COMPOUND_STMT,
                CK.FOR_STMT,
                CK.WHILE_STMT,
                CK.IF_STMT,
            )
        ):
            return following[0] + 1
        if statement.kind in (CK.FOR_STMT, CK.WHILE_STMT, CK.IF_STMT, CK.DO_STMT):
            # the body may be a single statement whose `;` libclang leaves out
            if following is not None and following[1] == ";" and self._bare_body(statement):
                return following[0] + 1
        return end

    def _bare_body(self, statement: ci.Cursor) -> bool:
        last = statement
        while last.kind in (CK.FOR_STMT, CK.WHILE_STMT, CK.IF_STMT, CK.DO_STMT):
            children = kids(last)
            if not children:
                return False
            last = children[-1]
        return last.kind != CK.COMPOUND_STMT

    # -- can a statement be in a region? ------------------------------------------------
    def _why_not(self, statement: ci.Cursor) -> NotModelled | None:
        try:
            self._check(statement)
        except NotModelled as refusal:
            return refusal
        return None

    def _check(self, statement: ci.Cursor) -> None:
        kind = statement.kind
        if kind in (CK.RETURN_STMT, CK.GOTO_STMT, CK.BREAK_STMT, CK.CONTINUE_STMT):
            raise NotModelled("the statement leaves the block", start_of(statement))
        if kind == CK.DECL_STMT:
            self._check_declaration(statement)
        if self._has_loop(statement) and self._affine_loop(statement):
            for child in self._body_statements(statement):
                self._check(child)
            return
        self._check_opaque(statement)

    def _affine_loop(self, statement: ci.Cursor) -> bool:
        node = self.by_cursor.get(statement.hash)
        if node is None:
            return False
        bound = self.fa.bound(RegionSpan(node.start, node.end), node)
        return bound.lower is not None and bound.upper is not None

    def _not_affine(self, statement: ci.Cursor) -> NotModelled:
        node = self.by_cursor[statement.hash]
        bound = self.fa.bound(RegionSpan(node.start, node.end), node)
        header = node.header
        cursor = header.lower if bound.lower is None else header.upper
        return NotModelled(
            f"loop '{header.var}' has a bound that is not affine in the function's "
            f"variables: {self.src.text(cursor)}",
            start_of(cursor),
        )

    def _body_statements(self, loop: ci.Cursor) -> list[ci.Cursor]:
        node = self.by_cursor[loop.hash]
        body = node.header.body
        if body.kind == CK.COMPOUND_STMT:
            return [s for s in kids(body) if s.kind != CK.NULL_STMT]
        return [body]

    def _check_declaration(self, statement: ci.Cursor) -> None:
        for decl in kids(statement):
            if decl.kind != CK.VAR_DECL:
                raise NotModelled("a declaration other than a variable", start_of(decl))
            canonical = decl.type.get_canonical()
            if canonical.kind in (
                ci.TypeKind.CONSTANTARRAY,
                ci.TypeKind.VARIABLEARRAY,
                ci.TypeKind.INCOMPLETEARRAY,
            ):
                raise NotModelled(f"declares the array '{decl.spelling}'", start_of(decl))
            if canonical.kind == ci.TypeKind.POINTER or (
                canonical.kind == ci.TypeKind.RECORD and not stdlib_model.value_record(decl.type)
            ):
                raise NotModelled(
                    f"declares '{decl.spelling}' of type {decl.type.spelling}", start_of(decl)
                )
            if decl.storage_class == ci.StorageClass.STATIC:
                raise NotModelled(f"declares the static '{decl.spelling}'", start_of(decl))

    def _check_opaque(self, statement: ci.Cursor) -> None:
        """A statement run as one step: no jump out, pure calls, readable accesses."""
        start, end = start_of(statement), self._end(statement)
        walk = self.fa.walk
        inner_loops = [n for n in walk.loops if start <= n.start < end]
        for jump in walk.jumps:
            if not start <= jump.start < end:
                continue
            if jump.kind in ("return", "goto"):
                raise NotModelled(f"a {jump.kind} leaves the statement", jump.start)
            if not any(n.contains(jump.start) for n in inner_loops):
                raise NotModelled(f"a {jump.kind} leaves the statement", jump.start)
        for call in walk.calls:
            if not start <= call.start < end or call.name == "operator[]":
                continue
            for name, kind in judged_calls(call, self.fa.pure, self.fa.state):
                if kind != "pure":
                    what = "does I/O" if kind == "io" else "may write memory or keep state"
                    raise NotModelled(f"calls '{name}', which {what}", call.start)
            if call.is_method and not call.model:
                raise NotModelled(
                    f"calls '{call.name}', which may write memory or keep state", call.start
                )
            if call.pointer_arguments:
                raise NotModelled(f"passes a pointer to '{call.name}'", call.start)
        local = {d.decl for d in walk.decls if start <= d.start < end}
        for access in walk.accesses:
            if not start <= access.start < end or access.root_decl in local:
                continue
            if access.kind == "unknown":
                raise NotModelled(
                    f"an access the analysis cannot read: {access.text}", access.start
                )
            if access.kind == "field":
                raise NotModelled(f"'{access.array}' is a {access.kind}", access.start)
            if access.mode == "addr":
                raise NotModelled(f"takes the address of {access.text}", access.start)
        for ref in walk.refs:
            if not start <= ref.start < end or ref.decl in local:
                continue
            if ref.mode == "addr":
                raise NotModelled(f"takes the address of '{ref.name}'", ref.start)
            if "->" in ref.name or "." in ref.name:
                raise NotModelled(f"uses the field '{ref.name}'", ref.start)
            if ref.is_pointer and ref.mode in WRITE_MODES:
                raise NotModelled(f"changes the pointer '{ref.name}'", ref.start)
            if ref.is_pointer:
                raise NotModelled(f"uses the pointer '{ref.name}' as a value", ref.start)
            if ref.is_global and ref.mode in WRITE_MODES:
                raise NotModelled(f"writes the global '{ref.name}'", ref.start)
        for decl in walk.decls:
            if start <= decl.start < end and decl.is_static:
                raise NotModelled(f"declares the static '{decl.name}'", decl.start)
            if start <= decl.start < end and decl.cursor.type.get_canonical().kind in (
                ci.TypeKind.CONSTANTARRAY,
                ci.TypeKind.VARIABLEARRAY,
            ):
                raise NotModelled(f"declares the array '{decl.name}'", decl.start)

    # -- the model of one region -------------------------------------------------------
    def _scop(self, run: list[ci.Cursor], region: RegionSpan) -> Scop:
        self._bounded, self._counted = [], {}
        leaves: list[_Leaf] = []
        loops: list[LoopNode] = []
        for position, statement in enumerate(run):
            self._collect(statement, (), (position,), leaves, loops)
        loop_facts = tuple(self._loop(node, region) for node in loops)
        loop_index = {id(node): k for k, node in enumerate(loops)}
        iterators = {node.header.var_decl for node in loops}
        params: dict[str, None] = {}
        for fact in loop_facts:
            for affine in (fact.lower, fact.upper):
                params.update(dict.fromkeys(n for n in affine.names))
        statements = []
        for k, leaf in enumerate(leaves):
            statement = self._statement(k, leaf, region, loop_index, iterators)
            for access in statement.accesses:
                for sub in access.subscripts or ():
                    params.update(dict.fromkeys(sub.names))
            statements.append(statement)
        loop_vars = {fact.var for fact in loop_facts}
        for name in list(params):
            if name in loop_vars:
                del params[name]
        self._require_iterators_inside(region, loops, leaves)
        ahead = _prelude(statements, leaves)
        prelude = [
            leaf
            for leaf, statement in zip(leaves, statements, strict=True)
            if statement.name in ahead
        ]
        kept = [statement for statement in statements if statement.name not in ahead]
        hoisted = tuple(
            (type_, name)
            for leaf, statement in zip(leaves, statements, strict=True)
            if not leaf.loops and statement.name not in ahead
            for type_, name, _ in leaf.declares
        )
        return Scop(
            function=self.fa.cursor.spelling,
            span=Span(region.start, region.end),
            line=self.src.line_col(region.start)[0],
            column=self.src.line_col(region.start)[1],
            loops=loop_facts,
            statements=tuple(kept),
            arrays=self._arrays(region),
            scalars=self._scalars(region, leaves, iterators, prelude),
            params=tuple(params),
            context=self._context(tuple(params)),
            prelude=tuple(Span(leaf.start, leaf.end) for leaf in prelude),
            hoisted=hoisted,
            runtime_extents=self._runtime_extents(region, kept),
        )

    def _collect(self, statement, loops: tuple, position: tuple[int, ...], leaves, all_loops):
        if self._has_loop(statement) and self._affine_loop(statement):
            node = self.by_cursor[statement.hash]
            all_loops.append(node)
            inner = (*loops, node)
            for k, child in enumerate(self._body_statements(statement)):
                self._collect(child, inner, (*position, k), leaves, all_loops)
            return
        kind = "declaration" if statement.kind == CK.DECL_STMT else "expression"
        if statement.kind not in (CK.DECL_STMT,) and not statement.kind.is_expression():
            kind = "opaque"
        leaf = _Leaf(statement, start_of(statement), self._end(statement), loops, position, kind)
        if kind == "declaration":
            for decl in kids(statement):
                leaf.declares.append((_value_type(decl.type), decl.spelling, decl.hash))
        leaves.append(leaf)

    def _loop(self, node, region: RegionSpan) -> ScopLoop:
        bound = self.fa.bound(region, node)
        if bound.lower is None or bound.upper is None:
            raise NotModelled(f"the bounds of loop '{node.header.var}' are not affine", node.start)
        return ScopLoop(
            var=node.header.var,
            var_type=self._iterator_type(node),
            lower=bound.lower,
            upper=bound.upper,
            step=bound.step,
            inclusive=bound.inclusive,
            declared_in_header=node.header.declared_in_header,
            span=Span(node.start, node.end),
            line=node.line,
        )

    def _iterator_type(self, node) -> str:
        for decl in self.fa.walk.decls:
            if decl.decl == node.header.var_decl:
                return _value_type(decl.cursor.type)
        for ref in self.fa.walk.refs:
            if ref.decl == node.header.var_decl:
                return ref.type.replace("const ", "").strip()
        return "long long"

    def _statement(self, k, leaf: _Leaf, region, loop_index, iterators) -> ScopStatement:
        walk = self.fa.walk
        inside = {d.decl for d in walk.decls if leaf.start <= d.start < leaf.end}
        inside -= {decl for _, _, decl in leaf.declares}
        own_vars = {node.header.var for node in leaf.loops}
        inner_loop_vars = {
            n.header.var for n in self.fa.canonical if leaf.start <= n.start < leaf.end
        }
        accesses: list[ScopAccess] = []
        for access in walk.accesses:
            if not leaf.start <= access.start < leaf.end or access.root_decl in inside:
                continue
            subs = self._subscripts(region, access, own_vars, inner_loop_vars)
            self._counted[access.array] = self._counted.get(access.array, 0) + 1
            if subs is None:
                self._loop_bounded(access, leaf, loop_index)
            line = self.src.line_col(access.start)[0]
            accesses.append(
                ScopAccess(access.array, subs, access.is_write, access.is_read, line, False)
            )
        for ref in walk.refs:
            if not leaf.start <= ref.start < leaf.end or ref.decl in inside or _closure(ref):
                continue
            if ref.decl in iterators:
                if ref.mode in WRITE_MODES:
                    raise NotModelled(f"the loop variable '{ref.name}' is written", ref.start)
                continue
            line = self.src.line_col(ref.start)[0]
            accesses.append(
                ScopAccess(ref.name, (), ref.mode in WRITE_MODES, ref.mode != "write", line, True)
            )
        for _, name, decl in leaf.declares:
            has_init = any(
                c.kind.is_expression() for d in kids(leaf.cursor) if d.hash == decl for c in kids(d)
            )
            if has_init:
                accesses.append(ScopAccess(name, (), True, False, leaf_line(self.src, leaf), True))
        line, column = self.src.line_col(leaf.start)
        merged = _merged(accesses)
        return ScopStatement(
            name=f"S{k}",
            span=Span(leaf.start, leaf.end),
            line=line,
            column=column,
            loops=tuple(loop_index[id(node)] for node in leaf.loops),
            position=leaf.position,
            accesses=tuple(merged),
            declares=tuple((type_, name) for type_, name, _ in leaf.declares),
            kind=leaf.kind,
            reduction=self._reduction(leaf, merged),
        )

    def _reduction(self, leaf: _Leaf, accesses: list[ScopAccess]) -> str:
        """ "+" when the statement is a sum into its one written location; "max" or "min"
        when it keeps the extreme of its values in one scalar (`if (v > m) m = v;`,
        `m = fmax(m, v)`): either way its instances may run in any order."""
        updates = [u for u in self.fa.walk.updates if u.start == leaf.start]
        if len(updates) != 1 or not updates[0].self_free:
            return ""
        op = updates[0].op
        if op == "+" and leaf.kind != "expression":
            return ""
        if op not in ("+", "max", "min"):
            return ""
        written = [a for a in accesses if a.is_write]
        if len(written) != 1 or not written[0].is_read:
            return ""
        target = written[0]
        if op != "+" and not target.scalar:
            return ""
        same = [a for a in accesses if a.target == target.target and a.scalar == target.scalar]
        if len(same) != 1 or (not target.scalar and target.subscripts is None):
            return ""
        inside = [c for c in self.fa.walk.calls if leaf.start <= c.start < leaf.end]
        return "" if inside and any(c.name in ("rand", "random") for c in inside) else op

    def _loop_bounded(self, access: RawAccess, leaf: _Leaf, loop_index) -> None:
        """Record `a[k + c]` for k a canonical loop inside the statement."""
        if len(access.indices) != 1 or access.indices[0] is None:
            return
        index = access.indices[0]
        if isinstance(index, int):
            return
        for node in self.fa.canonical:
            if not (leaf.start <= node.start < leaf.end) or not node.contains(access.start):
                continue
            var = node.header.var_decl

            def resolve(cursor: ci.Cursor, var=var) -> dict | None:
                ref = cursor.referenced
                return symbol("k") if ref is not None and ref.hash == var else None

            poly = to_poly(self.src, index, resolve)
            if poly is None or set(poly) - {(), ("k",)} or poly.get(("k",)) != 1:
                continue
            header = node.header
            self._bounded.append(
                RuntimeExtent(
                    array=access.array,
                    loops=tuple(loop_index[id(n)] for n in leaf.loops),
                    lower=self.src.text(header.lower),
                    upper=self.src.text(header.upper),
                    inclusive=header.inclusive,
                    step=header.step,
                    offset=poly.get((), 0),
                )
            )
            self._bounds_of[id(self._bounded[-1])] = (node.start, node.body_start)
            return

    def _runtime_extents(
        self, region, statements: list[ScopStatement]
    ) -> tuple[RuntimeExtent, ...]:
        """The loop-bounded accesses of arrays that have no other kind, whose bounds read
        nothing the region changes."""
        written_arrays = {
            a.target for st in statements for a in st.accesses if a.is_write and not a.scalar
        }
        written_scalars = {
            a.target for st in statements for a in st.accesses if a.is_write and a.scalar
        }
        kept = []
        for extent in self._bounded:
            start, end = self._bounds_of[id(extent)]
            read = {a.array for a in self.fa.walk.accesses if start <= a.start < end}
            scalars = {r.name for r in self.fa.walk.refs if start <= r.start < end}
            if read & written_arrays or scalars & written_scalars:
                continue
            kept.append(extent)
        covered: dict[str, int] = {}
        for extent in kept:
            covered[extent.array] = covered.get(extent.array, 0) + 1
        return tuple(e for e in kept if covered[e.array] == self._counted.get(e.array))

    def _subscripts(
        self, region, access: RawAccess, own_vars: set[str], inner_vars: set[str]
    ) -> tuple[Affine, ...] | None:
        subs, _ = self.fa.subscripts(region, access)
        if any(sub is None for sub in subs):
            return None
        names = {name for sub in subs for name in sub.names}  # type: ignore[union-attr]
        if names & (inner_vars - own_vars):
            return None  # indexed by a loop inside an opaque statement: any element
        return tuple(subs)  # type: ignore[arg-type]

    def _require_iterators_inside(self, region, loops, leaves) -> None:
        """A loop variable read outside its loop (its final value) is not modelled."""
        for node in loops:
            decl = node.header.var_decl
            for ref in self.fa.walk.refs:
                if ref.decl != decl or node.contains(ref.start):
                    continue
                if region.start <= ref.start < region.end:
                    inside_other = any(
                        other.header.var_decl == decl and other.contains(ref.start)
                        for other in loops
                    )
                    if not inside_other and not _in_header(node, ref):
                        raise NotModelled(
                            f"reads the loop variable '{ref.name}' outside its loop", ref.start
                        )
                elif self._live_after(region, ref) and not self._redefined(decl, ref):
                    raise NotModelled(
                        f"the loop variable '{ref.name}' is used after the loops", ref.start
                    )

    def _redefined(self, decl: int, ref: Ref) -> bool:
        """Whether the use is inside another loop over the same variable (which sets it)."""
        return any(n.header.var_decl == decl and n.contains(ref.start) for n in self.fa.canonical)

    def _live_after(self, region, ref: Ref) -> bool:
        if ref.start >= region.end:
            return True
        return any(
            n.start < region.start and region.end <= n.end and n.contains(ref.start)
            for n in self.fa.walk.loops
        )

    def _arrays(self, region: RegionSpan) -> tuple[ArrayData, ...]:
        from cudaify.frontend.analyze import NestAnalysis

        return NestAnalysis(self.fa, region).arrays()

    def _scalars(
        self, region, leaves: list[_Leaf], iterators: set[int], prelude: list[_Leaf]
    ) -> tuple[ScopScalar, ...]:
        """The scalars the region's statements use. A declaration inside one of its loops
        is private to the region; one at its top level (hoisted before the region) and
        what the prelude sets behave like variables declared before it."""
        walk = self.fa.walk
        ahead = {id(leaf) for leaf in prelude}
        inside = {
            decl: (type_, name)
            for leaf in leaves
            if leaf.loops
            for type_, name, decl in leaf.declares
        }
        declared = {decl for leaf in leaves for _, _, decl in leaf.declares}
        opaque_locals = {
            d.decl
            for leaf in leaves
            for d in walk.decls
            if leaf.start <= d.start < leaf.end and d.decl not in declared
        }
        found: dict[int, ScopScalar] = {}
        for decl, (type_, name) in inside.items():
            found[decl] = ScopScalar(name, type_, True, True, False)
        top_written = {
            decl
            for leaf in leaves
            if not leaf.loops and id(leaf) not in ahead
            for _, _, decl in leaf.declares
        }
        for ref in walk.refs:
            if not region.start <= ref.start < region.end:
                continue
            if ref.decl in iterators or ref.decl in opaque_locals or ref.decl in inside:
                continue
            if _closure(ref):
                continue
            if any(leaf.start <= ref.start < leaf.end for leaf in prelude):
                continue
            written = ref.mode in WRITE_MODES or ref.decl in top_written
            known = found.get(ref.decl)
            if known is None:
                live = any(
                    r.decl == ref.decl and self._live_after(region, r)
                    for r in walk.refs
                    if not region.start <= r.start < region.end
                )
                known = ScopScalar(
                    ref.name,
                    ref.type.replace("const ", "").strip(),
                    written,
                    False,
                    live,
                    ref.is_global,
                )
            elif written and not known.written:
                known = ScopScalar(
                    known.name,
                    known.type,
                    True,
                    known.declared_inside,
                    known.live_out,
                    known.global_,
                )
            found[ref.decl] = known
        for leaf in leaves:
            if leaf.loops or id(leaf) in ahead:
                continue
            for type_, name, decl in leaf.declares:
                if decl not in found:  # declared and never used again: still declared
                    found[decl] = ScopScalar(name, type_, True, False, False)
        names = [s.name for s in found.values()]
        duplicated = {n for n in names if names.count(n) > 1}
        if duplicated:
            raise NotModelled(
                f"two variables named '{sorted(duplicated)[0]}' (shadowing)", region.start
            )
        return tuple(found.values())

    def _context(self, params: tuple[str, ...]) -> tuple[tuple[str, Affine], ...]:
        constants = self.fa.constants()
        return tuple((name, constants[name]) for name in params if name in constants)


def _prelude(statements: list[ScopStatement], leaves: list[_Leaf]) -> set[str]:
    """Statements at the region's top level that only set a scalar from values the region
    never changes (`double a = 2.5;`, `w = n + 1;`): the host runs them before the region,
    so the kernels get the value as an argument. The scalar must have no other writer and
    no earlier reader in the region."""
    writers: dict[str, list[str]] = {}
    for statement in statements:
        for access in statement.accesses:
            if access.is_write:
                writers.setdefault(access.target, []).append(statement.name)
    chosen: set[str] = set()
    read_before: set[str] = set()
    for statement, leaf in zip(statements, leaves, strict=True):
        writes = [a for a in statement.accesses if a.is_write]
        reads = [a for a in statement.accesses if a.is_read]
        if (
            not leaf.loops
            and statement.kind in ("expression", "declaration")
            and len(writes) == 1
            and writes[0].scalar
            and not writes[0].is_read
            and writers[writes[0].target] == [statement.name]
            and writes[0].target not in read_before
            and all(a.scalar and all(w in chosen for w in writers.get(a.target, [])) for a in reads)
        ):
            chosen.add(statement.name)
        read_before.update(a.target for a in reads)
    return chosen


def _closure(ref: Ref) -> bool:
    """A local lambda named at its call: what the call reads of its captures is among the
    statement's own references (the kernels define the lambda again)."""
    return "(lambda at " in ref.type


def leaf_line(src, leaf: _Leaf) -> int:
    return src.line_col(leaf.start)[0]


def _in_header(node, ref: Ref) -> bool:
    return node.start <= ref.start < node.body_start


def _value_type(t: ci.Type) -> str:
    spelled = t.spelling
    for qualifier in ("const ", "volatile "):
        spelled = spelled.replace(qualifier, "")
    return spelled.strip()


def _merged(accesses: list[ScopAccess]) -> list[ScopAccess]:
    """One entry per (target, subscripts): `a[i] += x` reads and writes a[i] once."""
    merged: dict[tuple, ScopAccess] = {}
    for access in accesses:
        key = (access.target, access.subscripts, access.scalar)
        known = merged.get(key)
        if known is None:
            merged[key] = access
            continue
        merged[key] = ScopAccess(
            access.target,
            access.subscripts,
            known.is_write or access.is_write,
            known.is_read or access.is_read,
            known.line,
            access.scalar,
        )
    return list(merged.values())


def find_scops(fa, body: ci.Cursor, path: str) -> tuple[tuple[Scop, ...], tuple[str, ...]]:
    """The static-control regions of one function and the reasons other statements are
    not in one."""
    builder = ScopBuilder(fa, path)
    builder.function(body)
    return tuple(builder.scops), tuple(builder.notes)
