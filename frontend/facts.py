"""Analysis facts about a C/C++ program. Frozen data: the frontend produces them, every
later stage reads them. Byte offsets (`Span`) index the UTF-8 bytes of `Program.source`."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Span:
    """Half-open byte range [start, end) in the main source file."""

    start: int
    end: int


@dataclass(frozen=True)
class Affine:
    """sum(coeff * name) + const, where names are loop variables or loop-invariant
    scalars (parameters, globals). `text` is the C spelling it came from."""

    terms: tuple[tuple[str, int], ...]
    const: int
    text: str

    def coeff(self, name: str) -> int:
        return dict(self.terms).get(name, 0)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.terms)


@dataclass(frozen=True)
class Access:
    """One array reference inside a loop nest. `subscripts` holds one entry per
    dimension (after delinearization where possible); an entry is None when that
    subscript is not affine (indirect `a[idx[i]]`, `a[i*i]`)."""

    array: str
    subscripts: tuple[Affine | None, ...]
    is_write: bool
    is_read: bool
    span: Span
    line: int

    @property
    def affine(self) -> bool:
        return all(sub is not None for sub in self.subscripts)


@dataclass(frozen=True)
class Reduction:
    var: str  # scalar name, or `s.field` for a struct field
    # + * min max & | ^ && ||; "payload": a value kept with the min/max `key`; "first":
    # a value a find-first loop sets where it stops
    op: str
    key: str = ""  # payload: the min/max variable whose chosen iteration it follows
    strict: bool = True  # payload: < or > (the first of equal keys wins), else the last

    @property
    def label(self) -> str:
        """`s (+)`, or for a payload `k (kept with m: argmin/argmax)`."""
        if self.op == "payload":
            return f"{self.var} (kept with {self.key}: argmin/argmax)"
        return f"{self.var} ({self.op})"


@dataclass(frozen=True)
class Generator:
    """A scalar a loop carries only as a linear congruential generator's state: each
    iteration advances it `steps` times by `x = x * multiplier + increment` in its unsigned
    `type` (modulo 2^bits), through calls of functions that keep it (`&x`). Iteration t then
    starts from the state before the loop advanced t * steps times: a closed form (a jump
    ahead, in log2(t * steps) steps), so the iterations are independent.

    `steps` is C text of type unsigned long long that holds before the loop: a number, or,
    where the calls are inside inner loops whose trip counts every iteration shares, the
    number times those trip counts (`4ull * (unsigned long long)((long long)(n) - ...)`).
    `label` says the same for people."""

    var: str
    type: str
    multiplier: int
    increment: int
    steps: str
    label: str = ""

    @property
    def constant(self) -> int | None:
        """The steps an iteration when they are a number."""
        return int(self.steps) if self.steps.isdigit() else None


@dataclass(frozen=True)
class Loop:
    """A `for` loop in canonical form `for (v = lower; v <op> upper; v += step)`.
    Bounds are C text plus their affine form when they have one. `upper_inclusive`
    says whether the test is `<=`/`>=`. `parallel` is True only when proven."""

    var: str
    lower: str
    upper: str
    step: int
    upper_inclusive: bool
    line: int
    column: int
    depth: int  # 0 for the outermost loop of a nest
    span: Span  # the whole `for` statement
    body_span: Span  # the body statement (compound or single)
    lower_affine: Affine | None = None
    upper_affine: Affine | None = None
    var_declared_in_header: bool = True
    children: tuple[Loop, ...] = ()
    perfectly_nested: bool = False  # body is exactly one loop (children[0])
    # declarations before the body's only inner loop (children[0]) that could run in every
    # iteration of that loop instead, with the same values: a nest that is perfect once
    # they move in (`for i { double xi = x[i]; for j ... }`); None where there are none
    # or one may not move
    prologue: Span | None = None
    early_exit: bool = False  # break/return/goto out of this loop
    parallel: bool = False
    pattern: str = "sequential"  # plain | reduction | scan | atomic_update | generator | sequential
    reductions: tuple[Reduction, ...] = ()
    reason: str = ""
    accesses: tuple[Access, ...] = ()  # all accesses in this loop's body, nested ones included
    scalars_read: tuple[str, ...] = ()  # declared outside the loop, read inside
    scalars_written: tuple[str, ...] = ()  # declared outside the loop, written inside
    calls: tuple[str, ...] = ()  # functions called inside the body
    # Arrays and flag scalars whose races are benign (every writer stores one value, no
    # read's outcome depends on the order), and the C condition on the function's
    # values that this needs ("" when it always holds): the host checks it before
    # running the loop in parallel.
    benign: tuple[str, ...] = ()
    precondition: str = ""
    # pattern "generator": the states each iteration starts from by a jump ahead
    generators: tuple[Generator, ...] = ()

    def walk(self) -> tuple[Loop, ...]:
        """This loop and every loop nested in it, outermost first."""
        found: list[Loop] = [self]
        for child in self.children:
            found.extend(child.walk())
        return tuple(found)


@dataclass(frozen=True)
class ArrayData:
    """An array the loop nest needs on the device. `count` is a C expression for the
    number of elements touched from `base` (`first` is the lowest index touched, a C
    expression, "0" when the access starts at the beginning). `whole` is True when the
    array is a fixed-size object whose full size is `count`."""

    name: str
    elem_type: str
    count: str | None
    first: str
    access: str  # "read" | "write" | "readwrite"
    dims: tuple[str, ...] = ()  # static inner dimensions for multi-dimensional arrays
    # their values where the declaration says them (a macro's value for `[N]`)
    dim_values: tuple[int | None, ...] = ()
    kind: str = "pointer"  # pointer | param_array | global_array | local_array | vector | field
    whole: bool = False


@dataclass(frozen=True)
class ScopLoop:
    """A loop of a static-control region: `for (var = lower; var <op> upper; var += step)`
    with affine bounds in the enclosing loops' variables and the region's parameters."""

    var: str
    var_type: str  # the iterator's declared type, as spelled ("int", "long")
    lower: Affine
    upper: Affine
    step: int
    inclusive: bool
    declared_in_header: bool
    span: Span
    line: int


@dataclass(frozen=True)
class ScopAccess:
    """What one statement does to an array or a scalar. `subscripts` is None when the
    element is not an affine function of the loops (an indirect or computed index): the
    statement may then touch any element. A scalar has no subscripts: ()."""

    target: str
    subscripts: tuple[Affine, ...] | None
    is_write: bool
    is_read: bool
    line: int
    scalar: bool = False


@dataclass(frozen=True)
class ScopStatement:
    """A statement of the region that isl schedules as a whole: an expression statement,
    a scalar declaration, or a statement the model does not look into (a loop with
    non-affine bounds, an `if`), which then runs in order inside one instance.
    `loops` indexes Scop.loops, outermost first; `position` is the statement's place
    among its siblings at each depth (one more entry than loops), the original order."""

    name: str
    span: Span
    line: int
    column: int
    loops: tuple[int, ...]
    position: tuple[int, ...]
    accesses: tuple[ScopAccess, ...]
    declares: tuple[tuple[str, str], ...] = ()  # (type, name): `double s = 0;` declares s
    kind: str = "expression"  # expression | declaration | opaque
    # "+" when the statement only adds to (or subtracts from) one location that nothing
    # else in it touches (`s += a[i]`, `y[j] = y[j] + e`): its instances may then run in
    # any order, and in parallel with atomic updates
    reduction: str = ""


@dataclass(frozen=True)
class ScopScalar:
    """A scalar the region uses that is not one of its loop variables."""

    name: str
    type: str
    written: bool
    declared_inside: bool  # declared by a statement of the region
    live_out: bool  # read after the region (or again before it, in a loop around it)
    global_: bool = False


@dataclass(frozen=True)
class RuntimeExtent:
    """The elements one access reaches through a loop inside an opaque statement
    (`val[k]` for k from row_ptr[i] to row_ptr[i + 1]): from that loop's lower bound to its
    upper bound, shifted by `offset`, over every iteration of the statement's loops. The
    host evaluates the bounds over those iterations before the region (an inspector),
    which gives the array's extent when no compile-time one is known."""

    array: str
    loops: tuple[int, ...]  # Scop.loops around the statement, outermost first
    lower: str  # C text of the inner loop's bounds
    upper: str
    inclusive: bool
    step: int
    offset: int


@dataclass(frozen=True)
class Scop:
    """A static-control region of a function: consecutive statements whose loops have
    affine bounds and whose accesses isl can model, which the schedule-based mapping
    may move to the GPU as a whole. `span` covers the statements (the bytes replaced)."""

    function: str
    span: Span
    line: int
    column: int
    loops: tuple[ScopLoop, ...]
    statements: tuple[ScopStatement, ...]
    arrays: tuple[ArrayData, ...]
    scalars: tuple[ScopScalar, ...]
    params: tuple[str, ...]  # integer symbols the bounds and subscripts use
    context: tuple[tuple[str, Affine], ...] = ()  # known values of some parameters
    # top-level statements that only set a scalar from values the region never changes:
    # run on the host, in order, before the region
    prelude: tuple[Span, ...] = ()
    # scalars declared at the region's top level (the declaration is an assignment in
    # the region; the variable is declared before it, for what follows the region)
    hoisted: tuple[tuple[str, str], ...] = ()
    # for arrays every access of which is such a loop-bounded access
    runtime_extents: tuple[RuntimeExtent, ...] = ()

    def loop_vars(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(loop.var for loop in self.loops))


@dataclass(frozen=True)
class Param:
    name: str
    type: str  # as declared, e.g. "const double *restrict"
    is_pointer: bool
    elem_type: str | None  # pointee / element type for pointers and arrays


@dataclass(frozen=True)
class CallSite:
    callee: str
    caller: str
    line: int
    arguments: tuple[str, ...]
    in_loop: bool
    loop_depth: int = 0  # loops (of any kind) around the call in the caller


@dataclass(frozen=True)
class Function:
    name: str
    return_type: str
    params: tuple[Param, ...]
    line: int
    span: Span  # the whole definition
    body_span: Span
    signature: str  # source text of the declarator up to the body
    is_static: bool = False
    loops: tuple[Loop, ...] = ()  # outermost loops of each nest, in source order
    data: tuple[tuple[int, tuple[ArrayData, ...]], ...] = ()  # (loop line, arrays) per nest
    calls: tuple[CallSite, ...] = ()
    estimated_calls: int = 0  # static estimate of how often main reaches this function
    # A function template: its parameters, and the bindings the program uses, e.g.
    # (("T", "float"),) and (("T", "double"),); element types spelled `T` resolve there.
    template_params: tuple[str, ...] = ()
    instantiations: tuple[tuple[tuple[str, str], ...], ...] = ()
    # static-control regions for the schedule-based mapping, and why other loops are not
    # in one (file:line:col: reason)
    scops: tuple[Scop, ...] = ()
    scop_notes: tuple[str, ...] = ()

    def arrays_for(self, loop: Loop) -> tuple[ArrayData, ...]:
        for line, arrays in self.data:
            if line == loop.line:
                return arrays
        return ()


@dataclass(frozen=True)
class Program:
    """The input program: source, language, compiler flags and analysis facts."""

    path: str
    source: str
    language: str  # "c" | "c++"
    flags: tuple[str, ...] = ()
    functions: tuple[Function, ...] = ()
    globals: tuple[str, ...] = ()
    includes: tuple[str, ...] = ()  # every file the parse read (for -MD dependency files)
    warnings: tuple[str, ...] = field(default=())

    def function(self, name: str) -> Function | None:
        for fn in self.functions:
            if fn.name == name:
                return fn
        return None
