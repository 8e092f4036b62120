"""The frontend's analysis: parse, walk every function, and turn what the walk recorded
into the frozen facts of `frontend/facts.py`: loop nests with their accesses, which
levels are provably parallel (isl), reductions, scans, atomic updates, data regions,
and the call graph with static call estimates."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

import clang.cindex as ci

from cudaify.frontend import parse as parse_module
from cudaify.frontend.access import (
    ARRAY_TYPES,
    LoopNode,
    RawAccess,
    Walk,
    independent,
    member_name,
    norm,
    walk_function,
)
from cudaify.frontend.affine import (
    Poly,
    const,
    delinearize,
    poly_text,
    symbol,
    to_affine,
    to_poly,
)
from cudaify.frontend.allocations import element_spelling, sized_from_callers
from cudaify.frontend.benign import BenignRaces, NotBenign
from cudaify.frontend.callgraph import (
    Advance,
    advances,
    branching,
    estimate_calls,
    judged_calls,
    pure_functions,
    state_functions,
)
from cudaify.frontend.dependence import (
    Bound,
    Instance,
    always_within,
    carried,
    carried_dependences,
)
from cudaify.frontend.facts import (
    Access,
    Affine,
    ArrayData,
    CallSite,
    Function,
    Generator,
    Loop,
    Param,
    Program,
    Reduction,
    Span,
)
from cudaify.frontend.loops import (
    CK,
    Source,
    binary_operator,
    end_of,
    forget_trees,
    identity,
    is_integer_type,
    kids,
    start_of,
    unary_operator,
    unwrap,
)
from cudaify.frontend.regions import ArrayUse, array_data
from cudaify.frontend.scop import find_scops
from cudaify.frontend.templates import (
    describe,
    function_parameters,
    instantiations,
    template_parameters,
)

TK = ci.TypeKind
WRITE_MODES = ("write", "readwrite", "addr")


def analyze(path: str, flags: tuple[str, ...] = (), source: bytes | None = None) -> Program:
    parsed = parse_module.parse(path, tuple(flags), source)
    forget_trees()
    src = Source(parsed)
    definitions = list(_definitions(src, parsed.tu.cursor))
    notes: list[str] = []
    failed: set[str] = set()
    walks = {fn.hash: _walk(src, fn, notes, failed) for fn in definitions}
    pure = pure_functions(definitions, walks) - failed
    found = _guarded(
        src, "state kept through pointers", notes, {}, state_functions, definitions, walks, pure
    )
    state = {name: positions for name, positions in found.items() if name not in failed}
    stepped = _guarded(
        src, "generators' steps", notes, {}, advances, definitions, walks, state, src.text
    )
    aliases = shared_arguments(definitions, walks)
    bindings = _guarded(
        src, "template instantiations", notes, {}, instantiations, definitions, walks
    )
    functions = [
        _with_templates(
            fn,
            _facts(
                src, fn, walks[fn.hash], (pure, state, stepped), aliases.get(fn.spelling, {}), notes
            ),
            bindings,
        )
        for fn in definitions
    ]
    functions = _guarded(
        src,
        "array sizes from allocations",
        notes,
        functions,
        sized_from_callers,
        src,
        functions,
        {fn.spelling: walks[fn.hash] for fn in definitions},
        {fn.spelling: _pointee_elems(fn) for fn in definitions},
    )
    functions = estimate_calls(functions)
    return Program(
        path=path,
        source=parsed.text,
        language=parsed.language,
        flags=tuple(flags),
        functions=tuple(functions),
        globals=_globals(src, parsed.tu.cursor),
        includes=parse_module.included_files(parsed),
        warnings=parse_module.warnings_of(parsed) + tuple(notes),
    )


# A bug of ours in one function must not stop the run: that function keeps no loop
# facts (so nothing in it is offloaded) and the run says so.


def _internal(src: Source, fn: ci.Cursor, exc: Exception) -> str:
    line, column = src.line_col(start_of(fn))
    return (
        f"{src.path}:{line}:{column}: warning: cudaify could not analyze '{fn.spelling}' "
        f"({type(exc).__name__}: {exc}); its loops stay sequential"
    )


def _walk(src: Source, fn: ci.Cursor, notes: list[str], failed: set[str]) -> Walk:
    try:
        return walk_function(src, _body(fn))
    except Exception as exc:  # noqa: BLE001 - reported, and the function stays sequential
        notes.append(_internal(src, fn, exc))
        failed.add(fn.spelling)
        return Walk()


def _guarded(src: Source, what: str, notes: list[str], fallback, step, *args):
    """A whole-program step whose failure only loses what it adds (reported)."""
    try:
        return step(*args)
    except Exception as exc:  # noqa: BLE001 - reported; the facts stay as they were
        notes.append(
            f"{src.path}: warning: cudaify could not analyze {what} "
            f"({type(exc).__name__}: {exc}); left out"
        )
        return fallback


def _facts(src, fn, walk, callees, aliases, notes: list[str]) -> Function:
    """`callees`: the pure functions, the state functions and the generators' steps (see
    callgraph)."""
    pure, state, stepped = callees
    try:
        return FunctionAnalysis(src, fn, walk, pure, aliases, state, stepped).facts()
    except Exception as exc:  # noqa: BLE001 - reported, and the function stays sequential
        notes.append(_internal(src, fn, exc))
        return FunctionAnalysis(src, fn, Walk(), pure, aliases, state, stepped).facts()


def _pointee_elems(fn: ci.Cursor) -> tuple[str | None, ...]:
    found: list[str | None] = []
    for param in function_parameters(fn):
        t = param.type.get_canonical()
        pointer = t.kind == TK.POINTER
        found.append(element_spelling(t.get_pointee()) if pointer else None)
    return tuple(found)


def _with_templates(fn: ci.Cursor, facts: Function, bindings) -> Function:
    params = template_parameters(fn)
    if not params:
        return facts
    return replace(facts, template_params=params, instantiations=bindings.get(describe(fn).key, ()))


SCOPES = (CK.NAMESPACE, CK.CLASS_DECL, CK.STRUCT_DECL, CK.LINKAGE_SPEC, CK.CLASS_TEMPLATE)
FUNCTIONS = (CK.FUNCTION_DECL, CK.CXX_METHOD, CK.CONSTRUCTOR, CK.DESTRUCTOR, CK.FUNCTION_TEMPLATE)


def _definitions(src: Source, root: ci.Cursor):
    for cursor in kids(root):
        if not src.in_main(cursor):
            continue
        if cursor.kind in SCOPES:
            yield from _definitions(src, cursor)
        elif cursor.kind in FUNCTIONS and cursor.is_definition() and _body(cursor) is not None:
            yield cursor


def shared_arguments(
    definitions: list[ci.Cursor], walks: dict[int, Walk]
) -> dict[str, dict[frozenset[str], str]]:
    """Pointer parameters the program shows to alias: some call passes one argument
    (same text) to both. Maps callee -> {{param, param}: "line L: f(a, a)"}."""
    params = {
        fn.spelling: [
            (arg.spelling, arg.type.get_canonical().kind in POINTERISH)
            for arg in function_parameters(fn)
        ]
        for fn in definitions
    }
    found: dict[str, dict[frozenset[str], str]] = {}
    for walk in walks.values():
        for call in walk.calls:
            formals = params.get(call.name)
            if not formals or len(formals) != len(call.arguments):
                continue
            seen: dict[str, str] = {}
            for (name, is_pointer), actual in zip(formals, call.arguments, strict=True):
                key = norm(actual)
                if not is_pointer:
                    continue
                if key in seen:
                    where = f"line {call.line}: {call.name}(..., {actual}, ...)"
                    found.setdefault(call.name, {})[frozenset((seen[key], name))] = where
                seen[key] = name
    return found


POINTERISH = {TK.POINTER, TK.CONSTANTARRAY, TK.INCOMPLETEARRAY, TK.VARIABLEARRAY}


def _body(fn: ci.Cursor) -> ci.Cursor | None:
    for child in kids(fn):
        if child.kind == CK.COMPOUND_STMT:
            return child
    return None


def _globals(src: Source, root: ci.Cursor) -> tuple[str, ...]:
    return tuple(c.spelling for c in kids(root) if c.kind == CK.VAR_DECL and src.in_main(c))


class FunctionAnalysis:
    """Analysis of one function definition."""

    def __init__(
        self,
        src: Source,
        cursor: ci.Cursor,
        walk: Walk,
        pure: set[str],
        aliases: dict[frozenset[str], str] | None = None,
        state: dict[str, tuple[int, ...]] | None = None,
        stepped: dict[str, Advance] | None = None,
    ):
        self.src, self.cursor, self.walk, self.pure = src, cursor, walk, pure
        self.state = state or {}  # functions that keep a caller's scalar through a pointer
        self.stepped = stepped or {}  # those of them that advance it by an affine step
        self.aliases = aliases or {}
        self.borrowed = self._borrowed_pointers()
        # per-nest caches, keyed by the id of the nest's root LoopNode
        self._written: dict[tuple[int, int], tuple[set[int], set[str]]] = {}
        self._lets: dict[tuple[int, int], dict[int, Poly]] = {}
        self._bounds: dict[tuple[int, int, int], Bound] = {}
        self._constants: dict[str, Affine] | None = None
        self.address_taken = {r.decl for r in walk.refs if r.mode == "addr" and not r.is_pointer}
        self._verify_canonical()
        self.canonical = [n for n in walk.loops if n.canonical]
        for node in self.canonical:
            parent = node.parent
            while parent is not None and not parent.canonical:
                parent = parent.parent
            node.parent = parent
            node.children = []
        for node in self.canonical:
            if node.parent is not None:
                node.parent.children.append(node)
        self.roots = [n for n in self.canonical if n.parent is None]

    # canonical loops ------------------------------------------------------------------
    def _verify_canonical(self) -> None:
        """A `for` with a canonical header is canonical only if its body leaves the
        induction variable and the bound's variables and arrays alone."""
        for node in self.walk.loops:
            header = node.header
            if header is None:
                continue
            written = {
                r.decl for r in self.walk.refs if node.in_body(r.start) and r.mode in WRITE_MODES
            }
            upper = header.upper
            lo, hi = start_of(upper), end_of(upper)
            bound_decls = {r.decl for r in self.walk.refs if lo <= r.start < hi}
            bound_arrays = {a.array for a in self.walk.accesses if lo <= a.start < hi}
            array_writes = {
                a.array for a in self.walk.accesses if node.in_body(a.start) and a.is_write
            }
            unknown_write = "<unknown>" in array_writes and bool(bound_arrays)
            impure_bound = any(
                lo <= c.start < hi
                and c.name.split("::")[-1] not in ("size", "length")
                and c.name not in self.pure
                for c in self.walk.calls
            )
            node.canonical = (
                header.var_decl not in written
                and header.var_decl not in self.address_taken
                and not (bound_decls & (written | self.address_taken))
                and not (bound_arrays & array_writes)
                and not unknown_write
                and not impure_bound
            )

    def _borrowed_pointers(self) -> set[int]:
        """Local pointer variables that may point into another array: every value they
        get that is not a fresh allocation (`malloc`, `calloc`, `new`) might."""
        fresh_calls = {"malloc", "calloc", "aligned_alloc", "realloc"}

        def fresh(value: ci.Cursor | None) -> bool:
            if value is None:
                return True  # declared without a value: not pointing anywhere yet
            value = unwrap(value)
            if value.kind == CK.CXX_NEW_EXPR:
                return True
            return value.kind == CK.CALL_EXPR and value.spelling in fresh_calls

        borrowed: set[int] = set()
        for decl in self.walk.decls:
            if decl.cursor.type.get_canonical().kind != TK.POINTER:
                continue
            init = [c for c in kids(decl.cursor) if c.kind.is_expression()]
            if not fresh(init[-1] if init else None) or decl.decl in self.pointer_address_taken:
                borrowed.add(decl.decl)
        names = {d.name: d.decl for d in self.walk.decls if d.decl not in borrowed}
        for update in self.walk.updates:
            if update.target in names and update.cursor is not None:
                children = kids(update.cursor)
                if update.op != "=" or len(children) != 2 or not fresh(children[1]):
                    borrowed.add(names[update.target])
        return borrowed

    @property
    def pointer_address_taken(self) -> set[int]:
        return {r.decl for r in self.walk.refs if r.mode == "addr" and r.is_pointer}

    def chain_at(self, offset: int) -> list:
        """Canonical loops whose body holds `offset`, outermost first."""
        return [n for n in self.canonical if n.in_body(offset)]

    # affine forms ---------------------------------------------------------------------
    def resolver(self, root, chain: list):
        loop_vars = {n.header.var_decl: n.header.var for n in chain}
        written = self.written_in(root)
        lets = self.lets(root)
        declared = {d.decl for d in self.walk.decls if root.start <= d.start < root.end}

        def resolve(cursor: ci.Cursor) -> Poly | None:
            if cursor.kind == CK.MEMBER_REF_EXPR:
                text = member_name(self.src, cursor)
                if not is_integer_type(cursor.type) or text in written[1]:
                    return None
                base_decls = {
                    r.decl for r in self.walk.refs if start_of(cursor) <= r.start < end_of(cursor)
                }
                return None if base_decls & written[0] else symbol(text)
            ref = cursor.referenced
            if ref is not None and ref.kind == CK.TEMPLATE_NON_TYPE_PARAMETER:
                # fixed for each instantiation: a symbol like a parameter
                return symbol(ref.spelling) if is_integer_type(ref.type) else None
            if ref is None or ref.kind not in (CK.VAR_DECL, CK.PARM_DECL):
                return None
            if ref.hash in loop_vars:
                return symbol(loop_vars[ref.hash])
            if ref.hash in lets:
                return lets[ref.hash]
            if ref.hash in declared:
                return None  # a local of the nest that varies with the iterations
            if not is_integer_type(ref.type) or ref.hash in written[0]:
                return None
            if ref.hash in self.address_taken:
                return None
            return symbol(ref.spelling)

        return resolve

    def written_in(self, root) -> tuple[set[int], set[str]]:
        cache = self._written
        key = (root.start, root.end)
        if key not in cache:
            refs = [
                r
                for r in self.walk.refs
                if root.start <= r.start < root.end and r.mode in WRITE_MODES
            ]
            cache[key] = ({r.decl for r in refs}, {r.name for r in refs})
        return cache[key]

    def lets(self, root) -> dict[int, Poly]:
        """Integer locals declared in the nest with an affine initializer and never
        assigned again: `int row = i * n;` stands for its value."""
        cache = self._lets
        key = (root.start, root.end)
        if key in cache:
            return cache[key]
        found: dict[int, Poly] = {}
        cache[key] = found
        written = self.written_in(root)[0] | self.address_taken
        for decl in self.walk.decls:
            if not (root.start <= decl.start < root.end) or decl.decl in written:
                continue
            cursor = decl.cursor
            if not is_integer_type(cursor.type) or decl.is_static:
                continue
            init = [c for c in kids(cursor) if c.kind.is_expression()]
            if len(init) != 1:
                continue
            poly = to_poly(self.src, init[0], self.resolver(root, self.chain_at(decl.start)))
            if poly is not None:
                found[decl.decl] = poly
        return found

    def bound(self, root, node) -> Bound:
        """The loop's bounds as seen from `root` (a nest or a region): scalars written
        anywhere in `root` are not symbols."""
        cache = self._bounds
        key = (root.start, root.end, id(node))
        if key not in cache:
            cache[key] = self._bound(root, node)
        return cache[key]

    def _bound(self, root, node) -> Bound:
        chain = self.chain_at(node.start)
        resolve = self.resolver(root, chain)
        header = node.header
        lower = to_affine(to_poly(self.src, header.lower, resolve), self.src.text(header.lower))
        upper = to_affine(to_poly(self.src, header.upper, resolve), self.src.text(header.upper))
        return Bound(header.var, lower, upper, header.step, header.inclusive)

    def subscripts(
        self, root, access: RawAccess
    ) -> tuple[tuple[Affine | None, ...], tuple[str, ...] | None]:
        """Affine subscripts (delinearized when clear and proven) and the symbols of the
        delinearized row lengths (inner dimensions, outermost first)."""
        if access.kind == "unknown":
            return (None,), None
        chain = self.chain_at(access.start)
        resolve = self.resolver(root, chain)
        polys = [
            const(i) if isinstance(i, int) else None if i is None else to_poly(self.src, i, resolve)
            for i in access.indices
        ]
        texts = [
            str(i) if isinstance(i, int) else "?" if i is None else self.src.text(i)
            for i in access.indices
        ]
        affine = tuple(to_affine(p, t) for p, t in zip(polys, texts, strict=True))
        if len(polys) != 1 or affine[0] is not None or polys[0] is None:
            return affine, None
        split = delinearize(polys[0], {n.header.var for n in chain})
        if split is None:
            return affine, None
        dims, lengths = split
        parts = tuple(to_affine(d, poly_text(d)) for d in dims)
        if any(part is None for part in parts):
            return affine, None
        bounds = tuple(self.bound(root, node) for node in chain)
        context = self.context_for(bounds, parts, extra=lengths)
        for part, n in zip(parts[1:], lengths, strict=True):
            if not always_within(bounds, part, n, context):
                return affine, None
        return parts, lengths

    def constants(self) -> dict[str, Affine]:
        """Integer locals declared outside every loop, set once from parameters and
        never written again (`int w = lb + 1;`): their values are facts isl may use."""
        if self._constants is not None:
            return self._constants
        found: dict[str, Affine] = {}
        self._constants = found
        written = {r.decl for r in self.walk.refs if r.mode in WRITE_MODES} | self.address_taken

        def resolve(cursor: ci.Cursor) -> Poly | None:
            ref = cursor.referenced if cursor.kind == CK.DECL_REF_EXPR else None
            if ref is None or ref.hash in written or not is_integer_type(ref.type):
                return None
            return symbol(ref.spelling)

        for decl in self.walk.decls:
            cursor = decl.cursor
            if decl.decl in written or decl.is_static or not is_integer_type(cursor.type):
                continue
            if any(loop.contains(decl.start) for loop in self.walk.loops):
                continue
            init = [c for c in kids(cursor) if c.kind.is_expression()]
            if len(init) == 1:
                value = to_affine(to_poly(self.src, init[0], resolve), self.src.text(init[0]))
                if value is not None and decl.name not in value.names:
                    found[decl.name] = value
        return found

    def context_for(self, chain, subscripts, extra=()) -> tuple[tuple[str, Affine], ...]:
        """The constants a query mentions (in bounds, subscripts or `extra`)."""
        constants = self.constants()
        if not constants:
            return ()
        names = set(extra)
        for bound in chain:
            for aff in (bound.lower, bound.upper):
                names.update(aff.names if aff is not None else ())
        for sub in subscripts:
            names.update(sub.names if sub is not None else ())
        return tuple((name, constants[name]) for name in sorted(names) if name in constants)

    # facts ----------------------------------------------------------------------------
    def facts(self) -> Function:
        fn, src = self.cursor, self.src
        body = _body(fn)
        assert body is not None
        loops, data = [], []
        for root in self.roots:
            nest = NestAnalysis(self, root)
            loops.append(nest.loop(root, 0))
            data.append((root.line, nest.arrays()))
        start = start_of(fn)
        line, _ = src.line_col(fn.location.offset if src.in_main(fn) else start)
        try:
            scops, scop_notes = find_scops(self, body, src.path)
        except Exception as exc:  # noqa: BLE001 - reported; the loops keep their own facts
            scops, scop_notes = (
                (),
                (
                    _internal(src, fn, exc).replace(
                        "its loops stay", "its regions are not mapped; loops stay"
                    ),
                ),
            )
        return Function(
            name=fn.spelling,
            return_type=fn.result_type.spelling,
            params=self.params(),
            line=line,
            span=Span(start, end_of(fn)),
            body_span=Span(start_of(body), end_of(body)),
            signature=src.slice(start, start_of(body)).strip(),
            is_static=fn.storage_class == ci.StorageClass.STATIC,
            loops=tuple(loops),
            data=tuple(data),
            calls=self.call_sites(),
            scops=scops,
            scop_notes=scop_notes,
        )

    def params(self) -> tuple[Param, ...]:
        found = []
        for arg in function_parameters(self.cursor):
            t = arg.type
            canonical = t.get_canonical()
            pointer = canonical.kind in (
                TK.POINTER,
                TK.INCOMPLETEARRAY,
                TK.CONSTANTARRAY,
                TK.VARIABLEARRAY,
            )
            elem = None
            if canonical.kind == TK.POINTER:
                elem = _pointee_spelling(t)
            elif canonical.kind in (TK.INCOMPLETEARRAY, TK.CONSTANTARRAY, TK.VARIABLEARRAY):
                elem = t.element_type.spelling
            found.append(
                Param(
                    name=arg.spelling,
                    type=_param_type_text(self.src, arg),
                    is_pointer=pointer,
                    elem_type=elem,
                )
            )
        return tuple(found)

    def call_sites(self) -> tuple[CallSite, ...]:
        name = self.cursor.spelling
        return tuple(
            CallSite(
                callee=c.name,
                caller=name,
                line=self.src.line_col(c.start)[0],
                arguments=c.arguments,
                in_loop=bool(c.stack),
                loop_depth=len(c.stack),
            )
            for c in self.walk.calls
            if not c.name.startswith("operator")
        )


def _pointee_spelling(t: ci.Type) -> str:
    if t.kind == TK.POINTER:
        return t.get_pointee().spelling
    canonical = t.get_canonical()
    return canonical.get_pointee().spelling


def _param_type_text(src: Source, arg: ci.Cursor) -> str:
    text = src.text(arg) if src.in_main(arg) else arg.type.spelling
    name = arg.spelling
    if name and text.rstrip().endswith(name):
        return text.rstrip()[: -len(name)].rstrip()
    return arg.type.spelling


class NestAnalysis:
    """Facts about one loop nest (an outermost canonical loop and what it holds)."""

    def __init__(self, fa: FunctionAnalysis, root):
        self.fa, self.root = fa, root
        self.accesses = [a for a in fa.walk.accesses if root.start <= a.start < root.end]
        self.bounds = {
            id(n): fa.bound(root, n) for n in fa.canonical if root.start <= n.start < root.end
        }
        self.info = {}
        for a in self.accesses:
            subs, n = fa.subscripts(root, a)
            self.info[id(a)] = (subs, n)

    def instance(self, access: RawAccess) -> Instance:
        chain = tuple(
            self.bounds[id(n)] for n in self.fa.chain_at(access.start) if id(n) in self.bounds
        )
        subs, _ = self.info[id(access)]
        line = self.fa.src.line_col(access.start)[0]
        context = self.fa.context_for(chain, subs)
        return Instance(
            access.array, subs, access.is_write, access.is_read, chain, access.text, line, context
        )

    def public_access(self, access: RawAccess) -> Access:
        subs, _ = self.info[id(access)]
        return Access(
            array=access.array,
            subscripts=subs,
            is_write=access.is_write,
            is_read=access.is_read,
            span=Span(access.start, access.end),
            line=self.fa.src.line_col(access.start)[0],
        )

    def loop(self, node, depth: int) -> Loop:
        facts = LoopFacts.gather(self, node)
        verdict = judge(facts)
        header = node.header
        bound = self.bounds[id(node)]
        children = tuple(self.loop(child, depth + 1) for child in node.children)
        return Loop(
            var=header.var,
            lower=self.fa.src.text(header.lower),
            upper=self.fa.src.text(header.upper),
            step=header.step,
            upper_inclusive=header.inclusive,
            line=node.line,
            column=node.column,
            depth=depth,
            span=Span(node.start, node.end),
            body_span=Span(node.body_start, node.body_end),
            lower_affine=bound.lower,
            upper_affine=bound.upper,
            var_declared_in_header=header.declared_in_header,
            children=children,
            perfectly_nested=_perfectly_nested(node),
            prologue=self.prologue(node),
            early_exit=facts.early_exit,
            parallel=verdict.parallel,
            pattern=verdict.pattern,
            reductions=verdict.reductions,
            reason=verdict.reason,
            accesses=tuple(self.public_access(a) for a in facts.accesses),
            scalars_read=facts.scalars_read,
            scalars_written=facts.scalars_written,
            calls=facts.call_names,
            benign=tuple(facts.benign),
            precondition=" && ".join(f"({p})" for p in dict.fromkeys(facts.preconditions)),
            generators=tuple(facts.generators) if verdict.pattern == "generator" else (),
        )

    def prologue(self, node) -> Span | None:
        """The declarations that come before the only inner loop of `node`'s body, when
        each could run in every iteration of that loop instead with the same value
        (Loop.prologue): scalars or pointers with an initializer that reads, calls only
        pure functions, and reads no array element and no scalar that `node`'s body
        writes; the names they declare are never written again, their address is not
        taken and the inner loop's bounds do not use them."""
        if len(node.children) != 1 or not kids(node.cursor):
            return None
        child, body = node.children[0], kids(node.cursor)[-1]
        statements = kids(body) if body.kind == CK.COMPOUND_STMT else []
        if len(statements) < 2 or start_of(statements[-1]) != child.start:
            return None
        before = statements[:-1]
        if any(s.kind != CK.DECL_STMT for s in before):
            return None
        low, high = start_of(before[0]), end_of(before[-1])
        declared: set[int] = set()
        for statement in before:
            for variable in kids(statement):
                kind = variable.type.get_canonical().kind
                if (
                    variable.kind != CK.VAR_DECL
                    or kind in ARRAY_TYPES
                    or kind in (TK.RECORD, TK.LVALUEREFERENCE, TK.RVALUEREFERENCE)
                    or variable.storage_class == ci.StorageClass.STATIC
                    or not any(c.kind.is_expression() for c in kids(variable))
                ):
                    return None
                declared.add(variable.hash)
        walk = self.fa.walk

        def inside(at: int) -> bool:
            return low <= at < high

        written = {r.decl for r in walk.refs if node.in_body(r.start) and r.mode in WRITE_MODES}
        stored = {a.array for a in walk.accesses if node.in_body(a.start) and a.is_write}
        if any(r.mode != "read" or r.decl in written for r in walk.refs if inside(r.start)):
            return None
        if any(
            a.is_write or a.kind == "unknown" or a.array in stored or "<unknown>" in stored
            for a in walk.accesses
            if inside(a.start)
        ):
            return None
        for call in walk.calls:
            if inside(call.start) and any(k != "pure" for _, k in judged_calls(call, self.fa.pure)):
                return None
        header = child.header
        bounds = [(start_of(c), end_of(c)) for c in (header.lower, header.upper)]
        in_bounds = {r.decl for r in walk.refs if any(lo <= r.start < hi for lo, hi in bounds)}
        if declared & (written | self.fa.address_taken | in_bounds):
            return None
        return Span(low, high)

    def arrays(self) -> tuple[ArrayData, ...]:
        """What the nest needs on the device, one entry per array, in first-use order."""
        local = {
            d.decl
            for d in self.fa.walk.decls
            if self.root.start <= d.start < self.root.end and not d.is_static
        }
        groups: dict[str, list[RawAccess]] = {}
        for a in self.accesses:
            if a.root_decl in local and a.kind != "field":
                continue
            key = a.array if a.kind != "unknown" else a.text
            groups.setdefault(key, []).append(a)
        return tuple(array_data(self.use(name, group)) for name, group in groups.items())

    def use(self, name: str, group: list[RawAccess]) -> ArrayUse:
        first = group[0]
        reads = any(a.is_read for a in group)
        writes = any(a.is_write for a in group)
        access = "readwrite" if reads and writes else "write" if writes else "read"
        instances = tuple(self.instance(a) for a in group)
        shapes = {len(i.subscripts) for i in instances}
        rows = {self.info[id(a)][1] for a in group}
        readable = (
            first.kind != "unknown"
            and len(shapes) == 1
            and len(rows) == 1
            and all(all(s is not None for s in i.subscripts) for i in instances)
            and all(b.lower is not None and b.upper is not None for i in instances for b in i.chain)
        )
        row = next(iter(rows))
        inner = row if row is not None else first.dim_texts
        return ArrayUse(
            name=name,
            elem_type=first.elem_type,
            kind=first.kind if first.kind != "unknown" else "pointer",
            dim_sizes=first.dim_sizes,
            inner_dims=inner,
            instances=instances,
            readable=readable,
            access=access,
        )


def _perfectly_nested(node) -> bool:
    if len(node.children) != 1:
        return False
    child = node.children[0]
    body = node.cursor
    inner = [c for c in kids(body)][-1] if kids(body) else None
    if inner is None:
        return False
    if inner.kind == CK.COMPOUND_STMT:
        statements = kids(inner)
        return len(statements) == 1 and start_of(statements[0]) == child.start
    return start_of(inner) == child.start


# verdicts -------------------------------------------------------------------------------

REDUCTION_OPS = {"+", "*", "&", "|", "^", "&&", "||", "min", "max"}
ALIAS_NOTE = "distinct pointer parameters are assumed not to alias"


@dataclass
class LoopFacts:
    """Everything one loop level needs to be judged."""

    node: LoopNode
    accesses: list[RawAccess]
    early_exit: bool = False
    exit_reason: str = ""
    # `for (...) { if (C) { x = e; ...; break; } }`: the scalars set at the first hit
    find_first: tuple[str, ...] | None = None
    io_calls: list[str] = field(default_factory=list)
    impure_calls: list[str] = field(default_factory=list)
    call_names: tuple[str, ...] = ()
    scalars_read: tuple[str, ...] = ()
    scalars_written: tuple[str, ...] = ()
    reductions: list[Reduction] = field(default_factory=list)
    scans: list[str] = field(default_factory=list)
    atomics: list[str] = field(default_factory=list)
    blockers: list[str] = field(default_factory=list)
    generators: list[Generator] = field(default_factory=list)
    benign: list[str] = field(default_factory=list)  # arrays and flags racing benignly
    preconditions: list[str] = field(default_factory=list)  # C conditions they need

    @classmethod
    def gather(cls, nest: NestAnalysis, node) -> LoopFacts:
        facts = cls(node, [a for a in nest.accesses if node.in_body(a.start)])
        facts.exits(nest.fa.walk)
        if facts.early_exit:
            facts.find_first = find_first_payloads(nest.fa, node)
        facts.classify_calls(nest.fa)
        ScalarJudge(nest.fa, node, facts).run()
        ArrayJudge(nest, node, facts).run()
        return facts

    def exits(self, walk: Walk) -> None:
        node = self.node
        for jump in walk.jumps:
            if not node.in_body(jump.start):
                continue
            if jump.kind in ("return", "goto") or (
                jump.kind == "break" and jump.target == node.cursor.hash
            ):
                self.early_exit = True
                self.exit_reason = f"leaves the loop early ({jump.kind})"
                return

    def classify_calls(self, fa: FunctionAnalysis) -> None:
        names = []
        for call in fa.walk.calls:
            if not self.node.in_body(call.start) or call.name == "operator[]":
                continue
            names.append(call.name)
            for name, kind in judged_calls(call, fa.pure, fa.state):
                if kind == "io":
                    self.io_calls.append(name)
                elif kind == "impure":
                    self.impure_calls.append(name)
        self.call_names = tuple(dict.fromkeys(names))


def find_first_payloads(fa: FunctionAnalysis, node: LoopNode) -> tuple[str, ...] | None:
    """The scalars a find-first loop sets where it stops: its body is one `if` (no
    else) whose braces hold plain `x = e;` assignments and then the only jump of the body,
    a `break` of this loop; each `e` mentions none of the `x`. Or the `if` holds only a
    `return` (the function's answer at the first hit: nothing is set, the loop variable
    and what the loop only reads give it). None for any other loop."""
    jumps = [j for j in fa.walk.jumps if node.in_body(j.start)]
    if len(jumps) != 1:
        return None
    returns = jumps[0].kind == "return"
    if not returns and (jumps[0].kind != "break" or jumps[0].target != node.cursor.hash):
        return None
    body = kids(node.cursor)[-1]
    statements = kids(body) if body.kind == CK.COMPOUND_STMT else [body]
    if len(statements) != 1 or statements[0].kind != CK.IF_STMT:
        return None
    parts = kids(statements[0])
    if len(parts) != 2:  # an else branch, or a declaration in the condition
        return None
    then = parts[1]
    inner = kids(then) if then.kind == CK.COMPOUND_STMT else [then]
    if returns:
        return () if len(inner) == 1 and inner[0].kind == CK.RETURN_STMT else None
    if not inner or inner[-1].kind != CK.BREAK_STMT:
        return None
    kept: list[tuple[str, str]] = []
    for statement in inner[:-1]:
        assignment = unwrap(statement)
        if assignment.kind != CK.BINARY_OPERATOR or binary_operator(fa.src, assignment) != "=":
            return None
        lhs, rhs = kids(assignment)
        if unwrap(lhs).kind != CK.DECL_REF_EXPR:
            return None
        kept.append((norm(fa.src.text(lhs)), norm(fa.src.text(rhs))))
    return tuple(name for name, _ in kept) if independent(kept) else None


# Container members that add or remove elements: where an element lands depends on every
# iteration before, so such a loop is kept in order.
_GROWING = {"push_back", "emplace_back", "push_front", "emplace_front", "insert", "emplace"}
_SHRINKING = {"pop_back", "pop_front", "erase", "clear", "resize"}
_SCATTER = re.compile(r"\[\s*([A-Za-z_]\w*)\s*\[")


def io_reason(call: str) -> str:
    """Why a loop calling `call` (I/O or hidden state) stays in order, naming the idiom
    where there is one."""
    member = call.split("::")[-1]
    if member in _GROWING:
        return (
            f"calls {call}, which grows a container: where each element lands depends on "
            "every iteration before (the compact method runs such a loop as indexed writes "
            "or a stream compaction)"
        )
    if member in _SHRINKING:
        return f"calls {call}, which changes a container's size: must stay in order"
    return f"calls {call} (I/O or hidden state): must stay in order"


def non_affine_reason(access: str, name: str) -> str:
    """Why a write through a subscript isl cannot read blocks the loop; a scatter through
    an index array is named as such."""
    found = _SCATTER.search(access)
    if found:
        return (
            f"{access} is a scatter through the index array {found.group(1)}: parallel only "
            f"if {found.group(1)} never repeats a value (a permutation): the scatter method "
            "checks that on the device"
        )
    return f"{access} has a non-affine subscript and {name} is written in the loop"


@dataclass(frozen=True)
class Verdict:
    parallel: bool
    pattern: str
    reductions: tuple[Reduction, ...]
    reason: str


def judge(facts: LoopFacts) -> Verdict:
    var = facts.node.header.var
    reductions = tuple(facts.reductions)
    if facts.io_calls:
        return Verdict(
            False,
            "sequential",
            reductions,
            io_reason(facts.io_calls[0]),
        )
    if facts.early_exit:
        first = facts.find_first
        clean = not (
            facts.impure_calls or facts.blockers or facts.scans or facts.atomics or reductions
        )
        if first is not None and clean:
            kept = tuple(Reduction(name, "first") for name in first)
            told = f", keeping {', '.join(first)}" if first else ""
            return Verdict(
                False,
                "find_first",
                kept,
                f"finds the first {var} whose test holds (an early exit){told}; "
                f"otherwise no carried dependence; {ALIAS_NOTE}",
            )
        return Verdict(False, "sequential", reductions, facts.exit_reason)
    if facts.impure_calls:
        return Verdict(
            False,
            "sequential",
            reductions,
            f"calls {facts.impure_calls[0]}, which may write memory",
        )
    if facts.blockers:
        return Verdict(False, "sequential", reductions, facts.blockers[0])
    if facts.scans:
        return Verdict(
            False,
            "scan",
            reductions,
            f"prefix computation (scan) on {facts.scans[0]} across iterations of {var}",
        )
    if facts.atomics:
        return Verdict(
            False,
            "atomic_update",
            reductions,
            f"irregular updates of {facts.atomics[0]} (atomic candidates); "
            f"otherwise no carried dependence",
        )
    if facts.generators:
        listed = ", ".join(f"{g.var} ({g.label})" for g in facts.generators)
        carries = f"carries the state of a linear congruential generator: {listed}"
        if reductions or facts.benign:  # no mapping handles both yet
            other = "a reduction" if reductions else "benign races"
            return Verdict(False, "sequential", reductions, f"{carries}, and {other}")
        return Verdict(
            False,
            "generator",
            (),
            f"{carries}; each iteration starts from it jumped ahead; otherwise no carried "
            f"dependence; {ALIAS_NOTE}",
        )
    if reductions:
        listed = ", ".join(r.label for r in reductions)
        return Verdict(
            False,
            "reduction",
            reductions,
            f"reduction on {listed}; otherwise no carried dependence; {ALIAS_NOTE}",
        )
    if facts.benign:
        when = f" when {' && '.join(facts.preconditions)}" if facts.preconditions else ""
        return Verdict(
            True,
            "plain",
            (),
            f"only benign races on {', '.join(facts.benign)} (every writer stores the same "
            f"value and no read's outcome depends on the order){when}; {ALIAS_NOTE}",
        )
    return Verdict(True, "plain", (), f"no loop-carried dependence on {var} (isl); {ALIAS_NOTE}")


def _unconditional(body, at: int, kind=CK.CALL_EXPR) -> bool:
    """Whether the node of `kind` at byte `at` (a call; a loop) runs exactly once each time
    `body` runs: nothing on the way down to it branches or loops."""
    node = body
    while start_of(node) != at or node.kind != kind:
        inner = [c for c in kids(node) if start_of(c) <= at < end_of(c)]
        if not inner or branching(node):
            return False
        node = inner[0]
    return True


class ScalarJudge:
    """Scalars declared outside the loop and written in it: private, reduction, scan,
    or a dependence."""

    def __init__(self, fa: FunctionAnalysis, node, facts: LoopFacts):
        self.fa, self.node, self.facts = fa, node, facts
        walk = fa.walk
        # a static local keeps its value from one iteration to the next: not private
        local = {d.decl for d in walk.decls if node.start <= d.start < node.end and not d.is_static}
        self.refs = [
            r
            for r in walk.refs
            if node.in_body(r.start) and r.decl not in local and r.decl != node.header.var_decl
        ]
        self.updates = [u for u in walk.updates if node.in_body(u.start)]

    def run(self) -> None:
        groups: dict[str, list] = {}
        for ref in self.refs:
            groups.setdefault(ref.name, []).append(ref)
        self.facts.scalars_read = tuple(
            name
            for name, refs in groups.items()
            if any(r.mode in ("read", "readwrite") for r in refs) and not refs[0].is_pointer
        )
        written = [
            name
            for name, refs in groups.items()
            if any(r.mode in ("write", "readwrite") for r in refs)
            or (any(r.mode == "addr" for r in refs) and not refs[0].is_pointer)
        ]
        self.facts.scalars_written = tuple(written)
        kept = set(self.facts.find_first or ())
        for name in written:
            if name in kept and all(r.mode == "write" for r in groups[name]):
                continue  # set where a find-first loop stops: its own pattern
            self.judge(name, groups[name])

    def judge(self, name: str, refs: list) -> None:
        if self.private(refs):
            return
        generator = self.generator(name, refs)
        if generator is not None:
            self.facts.generators.append(generator)
            return
        covered, loose = self.covered(name, refs)
        ops = {u.op for u in covered}
        if covered and not loose and ops == {"payload"}:
            keys = {(u.key, u.strict) for u in covered}
            if len(keys) == 1:  # one key, one comparison: an argmin or argmax payload
                key, strict = keys.pop()
                self.facts.reductions.append(Reduction(name, "payload", key, strict))
                return
        if covered and not loose and len(ops) == 1 and ops <= REDUCTION_OPS:
            self.facts.reductions.append(Reduction(name, ops.pop()))
            return
        if (
            covered
            and len(ops) == 1
            and ops <= REDUCTION_OPS
            and all(r.mode == "read" for r in loose)
        ):
            self.facts.scans.append(name)
            return
        if self.benign_flag(name, refs):
            return
        self.facts.blockers.append(
            f"scalar {name} is written in one iteration of {self.node.header.var} and used in "
            "another (not a recognised reduction)"
        )

    def generator(self, name: str, refs: list) -> Generator | None:
        """`name` as a generator's state (see facts.Generator): every use in the body is
        `&name` given to a function that advances it by the same affine step (callgraph
        `advances`), each call runs the same number of times every iteration: in the body
        itself or in inner `for` loops whose trip counts no iteration changes (`_trips`),
        never under a branch, `?:`, `&&` or `||`, and nothing jumps in the body."""
        first = refs[0]
        if first.is_global or first.is_pointer or any(r.mode != "addr" for r in refs):
            return None
        if any(self.node.in_body(j.start) for j in self.fa.walk.jumps):
            return None
        found: list[Advance] = []
        per_nest: dict[tuple[LoopNode, ...], int] = {}
        for ref in refs:
            call = self._advancing_call(ref.start)
            if call is None or self.node not in call.stack:
                return None
            inner = call.stack[call.stack.index(self.node) + 1 :]
            if not self._every_iteration(inner, call.start):
                return None
            found.append(self.fa.stepped[call.name])
            per_nest[inner] = per_nest.get(inner, 0) + found[-1].steps
        steps = {(a.multiplier, a.increment, a.type) for a in found}
        if len(steps) != 1:
            return None
        multiplier, increment, type_ = steps.pop()
        terms, labels = [], []
        for inner, count in per_nest.items():
            trips = [self._trips(loop) for loop in inner]
            if None in trips:
                return None
            if not inner:
                terms.append(f"{count}ull")
                labels.append(f"{count} step(s) an iteration")
                continue
            terms.append(" * ".join([f"{count}ull", *(f"({t})" for t in trips)]))
            where = ", ".join(f"{loop.header.var} (line {loop.line})" for loop in inner)
            labels.append(f"{count} step(s) in each iteration of the inner loop(s) on {where}")
        if len(per_nest) == 1 and () in per_nest:
            total = str(per_nest[()])
        else:
            total = " + ".join(terms)
        return Generator(name, type_, multiplier, increment, total, " + ".join(labels))

    def _every_iteration(self, inner: tuple[LoopNode, ...], at: int) -> bool:
        """Whether the call at byte `at`, inside the `inner` loops of this loop's body (outer
        first), runs as often in every iteration: each of those loops, and the call in the
        last one's body, reached with no branch on the way."""
        body = kids(self.node.cursor)[-1]
        for loop in inner:
            if not _unconditional(body, loop.start, loop.cursor.kind):
                return False
            body = kids(loop.cursor)[-1]
        return _unconditional(body, at)

    def _trips(self, loop: LoopNode) -> str | None:
        """The trip count of `loop`, an inner loop of this one, as C text of type unsigned
        long long that holds before this loop, when every iteration of this loop shares it:
        a canonical `for` whose bounds are arithmetic on literals and on local variables
        declared before this loop that nothing in it writes or takes the address of."""
        header = loop.header
        if loop.kind != "for" or header is None or not loop.canonical or header.step == 0:
            return None
        # what this loop writes (its own variable included) or lets a call write
        written = self.fa.written_in(self.node)[0] | self.fa.address_taken
        for bound in (header.lower, header.upper):
            if not self._invariant(bound, written):
                return None
        lower, upper = self.fa.src.text(header.lower), self.fa.src.text(header.upper)
        high, low = (upper, lower) if header.step > 0 else (lower, upper)
        span = f"(long long)({high})"
        if low.strip() != "0":
            span += f" - (long long)({low})"
        span += " + 1" if header.inclusive else ""
        stride = abs(header.step)
        if stride == 1:
            return f"({span}) > 0 ? (unsigned long long)({span}) : 0ull"
        return f"({span}) > 0 ? (unsigned long long)(({span} + {stride - 1}) / {stride}) : 0ull"

    def _invariant(self, bound, written: set[int]) -> bool:
        """Whether expression `bound` has one value in every iteration of this loop, known
        before it: literals, arithmetic, and locals or parameters declared outside the loop
        and in `written` nowhere."""
        for cursor in bound.walk_preorder():
            kind = cursor.kind
            if kind in (CK.INTEGER_LITERAL, CK.PAREN_EXPR, CK.UNEXPOSED_EXPR, CK.TYPE_REF):
                continue
            if kind in (CK.CSTYLE_CAST_EXPR, CK.CXX_FUNCTIONAL_CAST_EXPR):
                continue
            if kind == CK.BINARY_OPERATOR:
                if binary_operator(self.fa.src, cursor) in ("+", "-", "*", "/", "%", "<<", ">>"):
                    continue
                return False
            if kind == CK.UNARY_OPERATOR:
                operator = unary_operator(self.fa.src, cursor)
                if operator is not None and operator[0] in ("-", "+") and operator[1]:
                    continue
                return False
            if kind != CK.DECL_REF_EXPR or cursor.referenced is None:
                return False
            declared = cursor.referenced
            if declared.kind == CK.ENUM_CONSTANT_DECL:
                continue
            local = declared.semantic_parent is not None and declared.semantic_parent.kind in (
                CK.FUNCTION_DECL,
                CK.CXX_METHOD,
                CK.FUNCTION_TEMPLATE,
            )
            inside = self.node.start <= start_of(declared) < self.node.end
            if declared.kind not in (CK.VAR_DECL, CK.PARM_DECL) or not local or inside:
                return False
            if declared.hash in written:
                return False
        return True

    def _advancing_call(self, at: int):
        """The call of a generator-advancing function whose first argument is `&x` with x
        at byte `at`."""
        for call in self.fa.walk.calls:
            if call.name not in self.fa.stepped or not self.node.in_body(call.start):
                continue
            arguments = list(call.cursor.get_arguments())
            if len(arguments) != 1:
                continue
            operand = kids(unwrap(arguments[0]))
            if operand and start_of(unwrap(operand[0])) == at:
                return call
        return None

    def benign_flag(self, name: str, refs: list) -> bool:
        first = refs[0]
        if first.is_global or first.decl in self.fa.address_taken or first.is_pointer:
            return False
        chain = self.fa.chain_at(self.node.start)
        root = chain[0] if chain else self.node
        try:
            BenignRaces(self.fa, root, self.node).flag(name)
        except NotBenign:
            return False
        self.facts.benign.append(name)
        return True

    def covered(self, name: str, refs: list) -> tuple[list, list]:
        """Reduction updates that cover the references, and the references they miss."""
        used: list = []
        loose: list = []
        for ref in refs:
            hit = [
                u
                for u in self.updates
                if u.target == name
                and u.start <= ref.start < u.end
                and (u.op in REDUCTION_OPS or u.op == "payload")
                and u.self_free
            ]
            if hit:
                used.extend(h for h in hit if h not in used)
            else:
                loose.append(ref)
        # an if-assign min/max holds its own plain assignment: keep only the outermost
        outer = [
            u
            for u in used
            if not any(o is not u and o.start <= u.start and u.end <= o.end for o in used)
        ]
        return outer, loose

    def private(self, refs: list) -> bool:
        first = refs[0]
        if first.is_global or first.decl in self.fa.address_taken or first.decl == 0:
            return False
        return self.written_first(refs) and self.dead_after(first)

    def written_first(self, refs: list) -> bool:
        decl = refs[0].decl
        inits = [
            n
            for n in self.fa.walk.loops
            if n.header is not None and n.header.var_decl == decl and self.node.in_body(n.start)
        ]
        if all(any(n.start <= r.start < n.end for n in inits) for r in refs):
            return True
        first = min(refs, key=lambda r: r.start)
        if first.mode != "write":
            return False
        body = kids(self.node.cursor)[-1]
        for u in self.fa.walk.updates:
            if u.start <= first.start < u.end and u.op == "=" and u.self_free and u.cursor:
                # a statement with no recorded parent is no statement of this body; the
                # check also keeps None out of Cursor.__eq__, which only takes cursors
                parent = self.fa.walk.parents.get(identity(u.cursor))
                return (parent is not None and parent == body) or u.cursor == body
        return False

    def dead_after(self, ref) -> bool:
        """No path from the end of the loop reads the value it leaves in the scalar:
        walking out from the loop, the next statements kill it before any use, and
        every enclosing loop that may run again kills it before reaching us."""
        walk = self.fa.walk
        refs = [r for r in walk.refs if r.decl == ref.decl]
        current = self.node.cursor
        while True:
            parent = walk.parents.get(identity(current))
            if parent is None:
                return True
            siblings = kids(parent)
            index = next((k for k, s in enumerate(siblings) if s == current), None)
            if index is None:
                return False
            if parent.kind == CK.COMPOUND_STMT:
                status = self.sequence(siblings[index + 1 :], refs, ref)
                if status in ("kill", "use"):
                    return status == "kill"
                outer = walk.parents.get(identity(parent))
                if (
                    outer is not None
                    and outer.kind in (CK.FOR_STMT, CK.WHILE_STMT, CK.DO_STMT)
                    and self.sequence(siblings[:index], refs, ref) == "use"
                ):
                    return False  # read again when the enclosing loop comes round
            elif parent.kind in (CK.FOR_STMT, CK.WHILE_STMT, CK.DO_STMT):
                if self.header_uses(parent, refs):
                    return False
            elif parent.kind not in (
                CK.IF_STMT,
                CK.SWITCH_STMT,
                CK.CASE_STMT,
                CK.DEFAULT_STMT,
                CK.LABEL_STMT,
            ):
                return False
            current = parent

    def kills(self, statement, ref) -> bool:
        """`x = e;` (e without x) or a `for` whose header starts by assigning x."""
        if statement.kind == CK.FOR_STMT:
            return any(
                n.cursor == statement and n.header is not None and n.header.var_decl == ref.decl
                for n in self.fa.walk.loops
            )
        return any(
            u.cursor is not None
            and u.cursor == statement
            and u.op == "="
            and u.self_free
            and u.target == ref.name
            for u in self.fa.walk.updates
        )

    def header_uses(self, loop, refs: list) -> bool:
        body = kids(loop)[-1 if loop.kind != CK.DO_STMT else 0]
        lo, hi = start_of(body), end_of(body)
        return any(
            start_of(loop) <= r.start < end_of(loop) and not lo <= r.start < hi for r in refs
        )

    def sequence(self, statements: list, refs: list, ref) -> str | None:
        """kill | use | maybe (killed on some paths, used on none) | None (untouched)."""
        seen = None
        for statement in statements:
            status = self.status(statement, refs, ref)
            if status in ("kill", "use"):
                return status
            seen = seen or status
        return seen

    def status(self, statement, refs: list, ref) -> str | None:
        lo, hi = start_of(statement), end_of(statement)
        if not any(lo <= r.start < hi for r in refs):
            return None
        if self.kills(statement, ref):
            return "kill"
        if statement.kind == CK.COMPOUND_STMT:
            return self.sequence(kids(statement), refs, ref)
        if statement.kind in (CK.FOR_STMT, CK.WHILE_STMT):
            if self.header_uses(statement, refs):
                return "use"
            body = kids(statement)[-1]
            inner = self.status(body, refs, ref)
            return "use" if inner == "use" else "maybe"
        return "use"


class ArrayJudge:
    """Arrays written in the loop: element reductions, atomic updates, scans, or
    dependences tested with isl."""

    def __init__(self, nest: NestAnalysis, node, facts: LoopFacts):
        self.nest, self.node, self.facts = nest, node, facts
        walk = nest.fa.walk
        self.local = {
            d.decl for d in walk.decls if node.start <= d.start < node.end and not d.is_static
        }
        self.updates = [u for u in walk.updates if node.in_body(u.start)]
        self.level = len(nest.fa.chain_at(node.start))
        self.inner_vars = {
            n.header.var for n in nest.fa.canonical if node.start <= n.start < node.end
        }

    def run(self) -> None:
        groups: dict[str, list[RawAccess]] = {}
        for a in self.facts.accesses:
            if a.root_decl in self.local and a.kind not in ("field", "unknown"):
                continue
            groups.setdefault(a.array, []).append(a)
        any_write = any(a.is_write for g in groups.values() for a in g)
        borrowed = [g[0].array for g in groups.values() if g[0].root_decl in self.nest.fa.borrowed]
        if borrowed and any_write and len(groups) > 1:
            self.facts.blockers.append(
                f"{borrowed[0]} is a local pointer that may point into another array the loop uses"
            )
        for pair, where in self.nest.fa.aliases.items():
            first, second = sorted(pair)
            both = groups.get(first, []) + groups.get(second, [])
            if first in groups and second in groups and any(a.is_write for a in both):
                self.facts.blockers.append(
                    f"{first} and {second} may be the same array ({where}) and one is written"
                )
        for name, group in groups.items():
            if not any(a.is_write for a in group):
                if name == "<unknown>" and any_write:
                    self.facts.blockers.append(
                        f"reads memory through {group[0].text}, which may be written by the loop"
                    )
                continue
            self.judge(name, group)

    def judge(self, name: str, group: list[RawAccess]) -> None:
        if name == "<unknown>":
            self.facts.blockers.append(f"writes memory through {group[0].text}: target unknown")
            return
        subs = [self.nest.info[id(a)][0] for a in group]
        op = self.reduction_op(group)
        if op is not None:
            texts = {norm(a.text) for a in group}
            invariant = all(
                s is not None and not (set(s.names) & self.inner_vars) for sub in subs for s in sub
            )
            if invariant and len(texts) == 1:
                self.facts.reductions.append(Reduction(group[0].text, op))
                return
            if not all(s is not None for sub in subs for s in sub) or self.dependences(group):
                self.facts.atomics.append(name)
            return
        if not all(s is not None for sub in subs for s in sub):
            if self.benign(name):
                return
            bad = next(a for a, sub in zip(group, subs, strict=True) if None in sub)
            self.facts.blockers.append(non_affine_reason(bad.text, name))
            return
        if (
            len({len(sub) for sub in subs}) != 1
            or len({self.nest.info[id(a)][1] for a in group}) != 1
        ):
            self.facts.blockers.append(f"{name} is indexed in more than one shape")
            return
        found = self.dependences(group)
        if not found:
            return
        if self.is_scan(group, subs):
            self.facts.scans.append(name)
            return
        if self.benign(name):
            return
        self.facts.blockers.append(found[0].describe(self.node.header.var))

    def benign(self, name: str) -> bool:
        """Races on `name` that every order resolves the same way (frontend/benign.py)."""
        try:
            precondition = BenignRaces(self.nest.fa, self.nest.root, self.node).array(name)
        except NotBenign:
            return False
        self.facts.benign.append(name)
        if precondition:
            self.facts.preconditions.append(precondition)
        return True

    def reduction_op(self, group: list[RawAccess]) -> str | None:
        ops: set[str] = set()
        for a in group:
            text = norm(a.text)
            hit = [
                u
                for u in self.updates
                if u.target == text
                and u.start <= a.start < u.end
                and u.op in REDUCTION_OPS
                and u.self_free
            ]
            if not hit:
                return None
            ops.update(u.op for u in hit)
        return ops.pop() if len(ops) == 1 else None

    def dependences(self, group: list[RawAccess]):
        instances = [self.nest.instance(a) for a in group]
        return carried_dependences(instances, self.level)

    def is_scan(self, group: list[RawAccess], subs: list) -> bool:
        """`s[i] = s[i-1] + a[i]`: one write and one read of the same array in one
        assignment, the read taking what an earlier iteration wrote (flow only)."""
        if len(group) != 2 or {a.mode for a in group} != {"write", "read"}:
            return False
        w, r = sorted(group, key=lambda a: a.mode != "write")
        statement = next(
            (u for u in self.updates if u.target == norm(w.text) and u.start <= w.start < u.end),
            None,
        )
        if statement is None or not statement.start <= r.start < statement.end:
            return False
        ws, rs = self.nest.info[id(w)][0], self.nest.info[id(r)][0]
        if any(
            a is None or b is None or dict(a.terms) != dict(b.terms)
            for a, b in zip(ws, rs, strict=True)
        ):
            return False
        write, read = self.nest.instance(w), self.nest.instance(r)
        return carried(write, read, self.level) and not carried(read, write, self.level)
