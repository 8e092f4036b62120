"""`schedule`: map a static-control region onto the GPU from an isl schedule (PPCG-style).

For each region of the input (see frontend/scop.py) isl computes a schedule that keeps
every dependence (frontend/polyhedral.py) while maximising outer parallelism, fusing or
distributing statements and interchanging, skewing or shifting loops as the dependences
allow. The schedule tree then decides the mapping:

- a band whose members are free of dependences inside it (zero distance on every
  dependence not already carried outside) becomes a kernel: up to three such members
  form the grid, the one whose consecutive values touch consecutive elements on x
  (coalescing); the band's other members and everything below run in order inside each
  thread;
- a band without such a member, with parallelism below it, becomes a loop on the host
  around the launches (time loops; the k loop of LU, Cholesky, Floyd-Warshall);
- what has no parallelism left runs in order in a single-thread kernel, so the data
  stays on the device.

An outer loop whose steps would be parallel but for reads of elements that other
instances of the step write (Floyd-Warshall's k: the pivot row and column) can run its
steps speculatively instead (polyhedral.Speculation), when that puts more loops on the grid:
a host loop around, per step, a snapshot of the arrays the step writes, one launch whose
reads come from the snapshot and whose writes that others read are compared with it bit
for bit, and, when one differs, the snapshot copied back and the step rerun in order by a
single thread.

The region's arrays are copied to the device once before it and back once after it;
everything in between (host loops included) works on the device copies. isl's AST
builder writes the host loops and each thread's loops; `isl_codegen` prints them with the
source's own statements in place.

Scalars the region writes are private to a thread when the analysis proves them
temporaries of some outer loops that map to the thread; otherwise they live in device
memory (one element), read and written through a pointer. Temporary arrays the analysis
expands over outer loops (doitgen's `sum[p]`, one per (r, q)) get one copy per iteration
of those loops in device memory; the last iteration's copy starts as the array's contents
and goes back into it after the region, which leaves the array as the loops would."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

import islpy as isl
from tree_sitter import Tree

from cudaify.core import Problem, Variant
from cudaify.frontend import polyhedral
from cudaify.frontend.dependence import guarded_count
from cudaify.frontend.edits import Edit, apply_edits
from cudaify.frontend.facts import ArrayData, Function, Program, Scop
from cudaify.transforms import csource as cs
from cudaify.transforms import isl_codegen as codegen
from cudaify.transforms import std_device
from cudaify.transforms.base import Context, Method, Outcome
from cudaify.transforms.kernel_codegen import (
    MATH_FUNCTIONS,
    byte_size,
    definition_node,
    device_free,
    device_malloc,
    element_type,
    grid_blocks,
    host_address,
    line_indent,
)
from cudaify.transforms.offload import PRELUDE

# Below this many statement instances (known at compile time) a region stays on the host.
MIN_INSTANCES = 1024
THREADS = {1: (256,), 2: (32, 8), 3: (32, 4, 2)}  # block shape per mapped rank, x first
MOST_BLOCKS = ("2147483647u", "65535u", "65535u")  # grid limit for x, y, z
DIMS = ("x", "y", "z")
# x blocks of a kernel that sums per warp: enough 256-thread blocks to fill a large GPU
# (132 SMs x 8) while each thread adds several instances before the warp's one atomicAdd
SUMMED_BLOCKS = "1024u"
# isl's scheduler is an ILP: a region that needs more than this many operations is not
# scheduled (the reason says so) rather than holding up the compile.
MAX_ISL_OPERATIONS = 3_000_000


class Refuse(Exception):
    """Why a region is not mapped (becomes the method's reason)."""


# -- the plan ----------------------------------------------------------------------------


@dataclass
class KernelPart:
    """One kernel of a region: which instances it runs, the host loop values it is
    launched for (`prefix`), the schedule members that form its grid (x first), and the
    order inside a thread (`inner`). `path` places its launch in the host's order."""

    domain: isl.UnionSet
    prefix: isl.UnionMap
    mapped: tuple[isl.UnionMap, ...]
    inner: isl.UnionMap
    path: tuple[tuple[str, int], ...]
    host_depth: int
    atomic: bool = False  # its sum statements update their targets with atomic adds
    # a speculative step (see polyhedral.Speculation): its launch is checked at run time
    # and, when the check fails, the next kernel of the plan (`fallback`) reruns the step
    speculative: bool = False
    fallback: bool = False  # launched only by the speculative kernel before it


@dataclass
class RegionPlan:
    function: Function
    scop: Scop
    model: polyhedral.Model
    kernels: list[KernelPart]
    summary: str = ""
    speculation: polyhedral.Speculation | None = None
    # why the outer loop's steps do not run speculatively (`cudaify analyze` says it)
    speculation_note: str = ""


# -- the method --------------------------------------------------------------------------


class ScheduleMapping(Method):
    name = "schedule"
    summary = (
        "map static-control loop nests onto the GPU from an isl schedule: parallel bands "
        "become the grid, time loops stay on the host, data stays on the device"
    )
    category = "mapping"
    follows = ("sequential",)
    supersedes = ("offload",)
    instruction = (
        "Map the loop nests of the marked region onto the GPU as a polyhedral compiler "
        "would: find the loops that carry no dependence (after interchanging, fusing or "
        "distributing loops where the dependences allow) and make them the grid of a "
        "__global__ kernel, the loop whose consecutive iterations touch consecutive "
        "elements on threadIdx.x; keep loops that carry dependences (time steps, the "
        "pivot loop of a factorization) on the host around the launches and the other "
        "sequential loops inside each thread. Copy every array to the device once before "
        "the region and the written ones back once after it. Check every CUDA call. Leave "
        "the rest of the program unchanged."
    )

    def applies(self, variant: Variant, ctx: Context) -> str | None:
        plans, reasons = plan_program(variant, ctx.program)
        if plans:
            return None
        return reasons[0] if reasons else "no static-control region with parallel loops"

    def apply_rule(self, variant: Variant, ctx: Context) -> Outcome:
        plans, reasons = plan_program(variant, ctx.program)
        if not plans:
            why = reasons[0] if reasons else "no static-control region with parallel loops"
            return Outcome(None, why)
        try:
            code = emit(ctx.program, plans)
        except Refuse as refusal:
            return Outcome(None, str(refusal))
        functions = tuple(dict.fromkeys(plan.function.name for plan in plans))
        detail = "; ".join(plan.summary for plan in plans)
        return Outcome(variant.then(self.name, code, "rule", detail=detail, offloaded=functions))

    def check(self, before: Variant, after: Variant, ctx: Context) -> list[Problem]:
        """A host loop nest is gone and its function launches a new kernel in its place."""
        from cudaify.transforms import postcondition as pc

        common = pc.common_problems(self.name, before.code, after.code)
        return common or pc.offloaded_problems(self.name, before.code, after.code)


# -- planning ----------------------------------------------------------------------------


def plan_program(variant: Variant, program: Program) -> tuple[list[RegionPlan], list[str]]:
    if "__global__" in variant.code:
        return [], ["the program already runs kernels (schedule maps the host program)"]
    if variant.code != program.source:
        return [], ["schedule rewrites the analysed host program; this variant differs from it"]
    plans: list[RegionPlan] = []
    reasons: list[str] = []
    for function in program.functions:
        for scop in function.scops:
            try:
                plans.append(plan_region(program, function, scop))
            except (Refuse, polyhedral.ModelError) as refusal:
                reasons.append(
                    f"{program.path}:{scop.line}:{scop.column}: region in "
                    f"'{function.name}' not mapped: {refusal}"
                )
        reasons.extend(function.scop_notes)
    return plans, reasons


def mapping_report(program: Program) -> list[str]:
    """One line per region: how the rule would map it (and why arrays through which loop
    iterations meet stay shared), or why it would not."""
    plans, reasons = plan_program(Variant(code=program.source), program)
    lines = []
    for plan in plans:
        shared = [f"array '{a}' stays shared: {why}" for a, why in plan.model.shared_arrays.items()]
        note = [plan.speculation_note] if plan.speculation_note else []
        summary = "; ".join([plan.summary, *shared, *note])
        lines.append(f"{program.path}:{plan.scop.line}:{plan.scop.column}: {summary}")
    return lines + [reason for reason in reasons if "region in" in reason]


def plan_region(program: Program, function: Function, scop: Scop) -> RegionPlan:
    if function.template_params:
        raise Refuse(f"'{function.name}' is a function template")
    _require_arrays(scop)
    _require_params(scop)
    source = program.source.encode("utf-8", errors="surrogateescape")
    model = polyhedral.build(scop, sums=_atomic_sums(scop, cs.parse(source), source))
    _require_enough_work(model)
    try:
        kernels = _plan_kernels(model)
    except Refuse as refusal:
        speculative, note = _speculate(model, 0)
        if speculative is None:
            # an array left shared may be what keeps the loops sequential
            notes = [*model.array_notes(), note] if note else model.array_notes()
            raise Refuse("; ".join([str(refusal), *notes])) from None
        kernels = []
    else:
        speculative, note = None, ""
        if any(k.host_depth for k in kernels):
            speculative, note = _speculate(model, max(len(k.mapped) for k in kernels))
    plan = RegionPlan(function, scop, model, kernels, speculation_note=note)
    if speculative is not None:
        plan.speculation, plan.kernels = speculative
        plan.speculation_note = ""
    plan.summary = _describe(plan)
    return plan


def _speculate(
    model: polyhedral.Model, rank: int
) -> tuple[tuple[polyhedral.Speculation, list[KernelPart]] | None, str]:
    """The speculative plan of the region (its outer loop on the host around a launch of
    each step's instances, checked at run time) when it gives a larger grid than `rank`,
    the rank the ordinary mapping reaches; else None and why not."""
    try:
        speculation = polyhedral.speculation(model)
    except polyhedral.NotSpeculated as why:
        return None, f"no speculative steps: {why}" if why.candidate else ""
    if min(len(speculation.inner), 3) <= rank:
        return None, ""  # the schedule maps as many loops without a check
    return (speculation, _speculative_kernels(model)), ""


def _speculative_kernels(model: polyhedral.Model) -> list[KernelPart]:
    """The step's launch (its loops form the grid, x the most coalescing one) and the
    single-thread kernel that reruns a step in order when its check fails."""
    header = model.space.header()
    domain = model.domain
    prefix, order, members = [], [], []
    statements = model.scop.statements
    depth = len(statements[0].loops)
    for statement in statements:
        dims = [f"i{k}" for k in range(depth)]
        steps = [model.scop.loops[k].step for k in statement.loops]
        signed = [d if step > 0 else f"-{d}" for d, step in zip(dims, steps, strict=True)]
        instance = f"{statement.name}[{', '.join(dims)}]"
        prefix.append(f"{instance} -> [{signed[0]}]")
        times = []
        for level in range(1, depth):
            times += [str(statement.position[level]), signed[level]]
        order.append(f"{instance} -> [{', '.join([*times, str(statement.position[depth])])}]")
        members.append([f"{instance} -> [{d}]" for d in dims[1:]])

    def union(pieces: list[str]) -> isl.UnionMap:
        return isl.UnionMap(f"{header}{{ {'; '.join(pieces)} }}").intersect_domain(domain)

    mapped = [union([m[k] for m in members]) for k in range(depth - 1)]
    scores = [_coalescing_score(member, model) for member in mapped]
    best = max(range(len(mapped)), key=lambda k: (scores[k], k))
    ranked = [best, *sorted((k for k in range(len(mapped)) if k != best), reverse=True)][:3]
    rest = [mapped[k] for k in range(len(mapped)) if k not in ranked]
    positions = union(
        [
            f"{st.name}[{', '.join(f'i{k}' for k in range(depth))}] -> [{st.position[depth]}]"
            for st in statements
        ]
    )
    common = {"domain": domain, "prefix": union(prefix), "path": (("dim", 0),), "host_depth": 1}
    return [
        KernelPart(
            mapped=tuple(mapped[k] for k in ranked),
            inner=_product([*rest, positions], domain),
            speculative=True,
            **common,
        ),
        KernelPart(mapped=(), inner=union(order), fallback=True, **common),
    ]


def _plan_kernels(model: polyhedral.Model) -> list[KernelPart]:
    schedule = compute_schedule(model)
    broken = polyhedral.violated(model, schedule.get_map())
    if not broken.is_empty():
        raise Refuse(f"the schedule would break a dependence ({broken.coalesce()})")
    mapper = _Mapper(model)
    mapper.walk(schedule.get_root(), ())
    if not any(kernel.mapped for kernel in mapper.kernels):
        raise Refuse("no loop of the region can run in parallel (every one carries a dependence)")
    return mapper.kernels


# atomicAdd's operand types, and what a 64-bit signed integer is added as
ATOMIC_ADD_TYPES = {
    "int": "int",
    "unsigned int": "unsigned int",
    "unsigned": "unsigned int",
    "float": "float",
    "double": "double",
    "unsigned long long": "unsigned long long",
    "unsigned long long int": "unsigned long long",
    "long long": "unsigned long long",
    "long long int": "unsigned long long",
    "long": "unsigned long long",
    "long int": "unsigned long long",
    "unsigned long": "unsigned long long",
    "size_t": "unsigned long long",
}


# the types a min/max update keeps atomically: the integers by atomicMax/atomicMin, float
# and double by a compare-and-swap loop on their bits
ATOMIC_EXTREME_TYPES = {
    "int": "int",
    "unsigned int": "unsigned int",
    "unsigned": "unsigned int",
    "long long": "long long",
    "long long int": "long long",
    "unsigned long long": "unsigned long long",
    "unsigned long long int": "unsigned long long",
    "float": "float",
    "double": "double",
}


# the types each reduction's atomic update takes, by its operator
_ATOMIC_TYPES = {"+": ATOMIC_ADD_TYPES, "max": ATOMIC_EXTREME_TYPES, "min": ATOMIC_EXTREME_TYPES}


def _atomic_sums(scop: Scop, tree: Tree, source: bytes) -> frozenset[str]:
    """Sum statements whose target atomicAdd can update, and min/max updates whose target
    an atomic min/max can, in a form the code generator reads (`if (v > m) m = v;`, `m =
    fmax(m, v)`, `m = v > m ? v : m`): their instances may run in any order."""
    types = {s.name: s.type for s in scop.scalars}
    types.update({a.name: element_type(a) for a in scop.arrays})

    def readable(st) -> bool:  # type: ignore[no-untyped-def]
        if st.reduction == "+":
            return True
        return (
            codegen.source_statement(tree, source, st.name, st.span.start).extreme_parts is not None
        )

    return frozenset(
        st.name
        for st in scop.statements
        if st.reduction in _ATOMIC_TYPES
        and any(
            a.is_write and " ".join(types.get(a.target, "").split()) in _ATOMIC_TYPES[st.reduction]
            for a in st.accesses
        )
        and readable(st)
    )


def _require_arrays(scop: Scop) -> None:
    bounded = {extent.array for extent in scop.runtime_extents}
    for data in scop.arrays:
        if data.count is None and data.name not in bounded:
            raise Refuse(f"the extent of array '{data.name}' is unknown")
        if not re.fullmatch(r"[A-Za-z_]\w*", data.name):
            raise Refuse(f"'{data.name}' is not a plain array")
        if "*" in data.elem_type:
            raise Refuse(f"array '{data.name}' holds pointers ({data.elem_type})")
    for scalar in scop.scalars:
        if scalar.written and scalar.global_:
            raise Refuse(f"it writes the global '{scalar.name}'")


def _require_params(scop: Scop) -> None:
    typed = {s.name for s in scop.scalars}
    for name in scop.params:
        if name not in typed:
            raise Refuse(f"the symbol '{name}' in a bound or subscript is not a variable")


def _require_enough_work(model: polyhedral.Model) -> None:
    if model.domain.params().dim(isl.dim_type.param) > 0:
        return  # sizes are the caller's: assume the region is worth it
    total = 0
    for piece in _sets(model.domain):
        count = piece.count_val()
        total += int(count.to_str())
    if total < MIN_INSTANCES:
        raise Refuse(f"it runs only {total} statement instances: a kernel launch costs more")


def compute_schedule(model: polyhedral.Model) -> isl.Schedule:
    ctx = isl.DEFAULT_CONTEXT
    ctx.set_schedule_outer_coincidence(1)
    ctx.set_schedule_maximize_coincidence(1)
    ctx.set_schedule_serialize_sccs(0)
    ctx.set_schedule_whole_component(0)
    deps = model.dependences
    constraints = (
        isl.ScheduleConstraints.on_domain(model.domain)
        .set_context(model.context)
        .set_validity(deps)
        .set_coincidence(deps)
        .set_proximity(deps)
    )
    ctx.set_max_operations(MAX_ISL_OPERATIONS)
    try:
        return constraints.compute_schedule()
    except isl.Error as exc:
        raise Refuse(f"isl could not schedule the region ({exc})") from None
    finally:
        ctx.reset_operations()
        ctx.set_max_operations(0)


# -- walking the schedule tree ---------------------------------------------------------

_PASS_THROUGH = (
    isl.schedule_node_type.domain,
    isl.schedule_node_type.filter,
    isl.schedule_node_type.mark,
    isl.schedule_node_type.context,
    isl.schedule_node_type.guard,
)


class _Mapper:
    """Walks the schedule tree from the top down, deciding host loops and kernels.

    A band member is parallel when every dependence live at the band has distance zero
    along it; it is parallel *with atomic sums* when that holds once the sum statements'
    dependences on themselves are left out (their updates then become atomic adds)."""

    def __init__(self, model: polyhedral.Model):
        self.model = model
        self.kernels: list[KernelPart] = []

    def walk(self, node: isl.ScheduleNode, path) -> isl.ScheduleNode:
        """Returns the node at the same place in the (possibly split) tree."""
        kind = node.get_type()
        T = isl.schedule_node_type
        if kind in _PASS_THROUGH:
            if not node.has_children():
                return node
            return self.walk(node.child(0), path).parent()
        if kind in (T.sequence, T.set):
            return self.sequence(node, path)
        if kind == T.leaf:
            self.kernels.append(_serial(node, path))
            return node
        if kind != T.band:
            raise Refuse(f"isl gave a schedule node of type {kind}")
        for relaxed in (False, True):
            parallel = _parallel_members(node, self.deps(relaxed))
            if parallel:
                self.kernels.append(_kernel(node, parallel, path, self.model, relaxed))
                return node
            if self.parallel_below(node, relaxed):
                return self.host_loop(node, path)
        self.kernels.append(_serial(node, path))
        return node

    def deps(self, relaxed: bool) -> isl.UnionMap:
        return self.model.relaxed if relaxed else self.model.dependences

    def host_loop(self, node: isl.ScheduleNode, path) -> isl.ScheduleNode:
        if node.band_n_member() > 1:
            node = node.band_split(1)
        depth = node.get_schedule_depth()
        return self.walk(node.child(0), (*path, ("dim", depth))).parent()

    def sequence(self, node: isl.ScheduleNode, path) -> isl.ScheduleNode:
        """Children in order; consecutive children with no parallelism become one
        single-thread kernel (one launch, and their temporaries stay in its registers)."""
        count, k = node.n_children(), 0
        while k < count:
            if self.any_parallel(node.child(k)):
                node = self.walk(node.child(k), (*path, ("pos", k))).parent()
                k += 1
                continue
            last = k
            while last + 1 < count and not self.any_parallel(node.child(last + 1)):
                last += 1
            self.kernels.append(_serial_children(node, k, last, (*path, ("pos", k))))
            k = last + 1
        return node

    def any_parallel(self, node: isl.ScheduleNode) -> bool:
        return self.parallel_below(node, False) or self.parallel_below(node, True)

    def parallel_below(self, node: isl.ScheduleNode, relaxed: bool) -> bool:
        T = isl.schedule_node_type
        for k in range(node.n_children()):
            child = node.child(k)
            if child.get_type() == T.band and _parallel_members(child, self.deps(relaxed)):
                return True
            if self.parallel_below(child, relaxed):
                return True
        return False


def _serial_children(node: isl.ScheduleNode, first: int, last: int, path) -> KernelPart:
    reaching = node.get_domain()
    domain = reaching.intersect(node.child(first).filter_get_filter())
    for k in range(first + 1, last + 1):
        domain = domain.union(reaching.intersect(node.child(k).filter_get_filter()))
    return KernelPart(
        domain=domain,
        prefix=node.get_prefix_schedule_union_map().intersect_domain(domain),
        mapped=(),
        inner=node.get_subtree_schedule_union_map().intersect_domain(domain),
        path=path,
        host_depth=node.get_schedule_depth(),
    )


def _live_dependences(node: isl.ScheduleNode, dependences: isl.UnionMap) -> isl.UnionMap:
    """Dependences between instances that reach the node with equal outer schedule values
    (the ones the node's own members must respect)."""
    domain = node.get_domain()
    deps = dependences.intersect_domain(domain).intersect_range(domain)
    prefix = node.get_prefix_schedule_union_map()
    return deps.intersect(prefix.apply_range(prefix.reverse()))


def _member_map(node: isl.ScheduleNode, k: int) -> isl.UnionMap:
    partial = node.band_get_partial_schedule()
    member = partial.get_union_pw_aff(k)
    return isl.UnionMap.from_union_pw_aff(member).intersect_domain(node.get_domain())


def _parallel_members(node: isl.ScheduleNode, dependences: isl.UnionMap) -> list[int]:
    """Band members with zero distance on every live dependence. In a permutable band
    any of them may move outermost; otherwise only a leading run of them."""
    live = _live_dependences(node, dependences)
    found = []
    for k in range(node.band_n_member()):
        member = _member_map(node, k)
        deltas = live.apply_domain(member).apply_range(member).deltas()
        if deltas.is_empty() or deltas.is_subset(_zero(deltas)):
            found.append(k)
        elif not node.band_get_permutable():
            break
    if not node.band_get_permutable():
        leading = [k for position, k in enumerate(found) if k == position]
        return leading
    return found


def _zero(like: isl.UnionSet) -> isl.UnionSet:
    return isl.UnionSet("{ [0] }").align_params(like.get_space())


def _kernel(
    node: isl.ScheduleNode, parallel: list[int], path, model, atomic: bool = False
) -> KernelPart:
    domain = node.get_domain()
    ordered = _by_coalescing(node, parallel, model)[:3]
    members = [_member_map(node, k) for k in range(node.band_n_member())]
    rest = [members[k] for k in range(len(members)) if k not in ordered]
    below = node.child(0).get_subtree_schedule_union_map().intersect_domain(domain)
    inner = _product([*rest, below], domain)
    return KernelPart(
        domain=domain,
        prefix=node.get_prefix_schedule_union_map().intersect_domain(domain),
        mapped=tuple(members[k] for k in ordered),
        inner=inner,
        path=path,
        host_depth=node.get_schedule_depth(),
        atomic=atomic,
    )


def _serial(node: isl.ScheduleNode, path) -> KernelPart:
    domain = node.get_domain()
    return KernelPart(
        domain=domain,
        prefix=node.get_prefix_schedule_union_map().intersect_domain(domain),
        mapped=(),
        inner=node.get_subtree_schedule_union_map().intersect_domain(domain),
        path=path,
        host_depth=node.get_schedule_depth(),
    )


def _product(maps: list[isl.UnionMap], domain: isl.UnionSet) -> isl.UnionMap:
    result = _zero_dim(domain)
    for piece in maps:
        result = result.flat_range_product(piece)
    return result


def _zero_dim(domain: isl.UnionSet) -> isl.UnionMap:
    """S -> [] for every statement of the domain."""
    pieces = []
    for statement in _sets(domain):
        pieces.append(isl.Map.from_domain(statement).project_out(isl.dim_type.out, 0, 0))
    result = isl.UnionMap.from_map(pieces[0])
    for piece in pieces[1:]:
        result = result.union(isl.UnionMap.from_map(piece))
    return result


def _by_coalescing(node: isl.ScheduleNode, parallel: list[int], model) -> list[int]:
    """Parallel members, the best for threadIdx.x first: the one whose next value moves
    the most accesses to the next element (last subscript), the fewest by a row."""
    scores = {k: _coalescing_score(_member_map(node, k), model) for k in parallel}
    best = max(parallel, key=lambda k: (scores[k], k))
    others = [k for k in parallel if k != best]
    # y then z: the innermost remaining members first (they vary fastest in the source)
    return [best, *sorted(others, reverse=True)]


def _coalescing_score(member: isl.UnionMap, model) -> int:
    score = 0
    for piece in _maps(member):
        name = piece.get_tuple_name(isl.dim_type.in_)
        statement = model.statement(name)
        position = _iterator_of(piece)
        if position is None:
            continue
        var = model.iterators[name][position]
        for access in statement.accesses:
            if access.scalar or not access.subscripts:
                continue
            subscripts = access.subscripts
            if any(sub.coeff(var) for sub in subscripts[:-1]):
                score -= 1
            elif abs(subscripts[-1].coeff(var)) == 1:
                score += 1
    return score


def _iterator_of(member: isl.Map) -> int | None:
    """The input dimension the 1-D map is (up to a constant), if any."""
    for q in range(member.dim(isl.dim_type.in_)):
        if member.reverse().apply_range(_identity_at(member, q)).deltas().is_singleton():
            return q
    return None


def _identity_at(member: isl.Map, q: int) -> isl.Map:
    """S[i0..] -> [iq] on the member's domain."""
    space = member.get_space()
    n_in = space.dim(isl.dim_type.in_)
    names = [f"i{k}" for k in range(n_in)]
    name = member.get_tuple_name(isl.dim_type.in_)
    params = [
        str(space.get_dim_name(isl.dim_type.param, k)) for k in range(space.dim(isl.dim_type.param))
    ]
    text = f"[{', '.join(params)}] -> {{ {name}[{', '.join(names)}] -> [{names[q]}] }}"
    return isl.Map(text).intersect_domain(member.domain())


def _describe(plan: RegionPlan) -> str:
    grids = [len(k.mapped) for k in plan.kernels]
    host = max((k.host_depth for k in plan.kernels), default=0)
    parts = [f"{len(plan.kernels)} kernel(s)"]
    parts.append("grids " + ", ".join(f"{g}-D" if g else "serial" for g in grids))
    if host:
        parts.append(f"{host} host loop level(s)")
    speculation = plan.speculation
    if speculation is not None:
        parts.append(
            f"{speculation.loop}: host loop around a {max(grids)}-D launch, speculative "
            "(reads across its instances checked at run time; a step that changes what "
            "they read reruns in order)"
        )
    text = f"{plan.function.name}: region at line {plan.scop.line} -> " + ", ".join(parts)
    return "; ".join([text, *(private.note() for private in plan.model.privates.values())])


# -- emitting ----------------------------------------------------------------------------


@dataclass
class _Names:
    """Fresh C names for one program: nothing the input spells."""

    taken: set[str]

    def fresh(self, base: str) -> str:
        base = re.sub(r"\W", "_", base)
        name, count = base, 1
        while name in self.taken:
            count += 1
            name = f"{base}_{count}"
        self.taken.add(name)
        return name


def emit(program: Program, plans: list[RegionPlan]) -> str:
    source = program.source.encode("utf-8", errors="surrogateescape")
    tree = cs.parse(source)
    names = _Names(
        {cs.text(n, source) for n in cs.walk(tree.root_node) if n.type.endswith("identifier")}
    )
    edits: list[Edit] = []
    kernels_by_function: dict[int, list[str]] = {}
    helpers: dict[str, None] = {}
    uses_std = False
    for plan in plans:
        region = _RegionEmitter(program, plan, tree, source, names)
        uses_std = uses_std or region.uses_std()
        host = region.host_code()
        kernels_by_function.setdefault(plan.function.span.start, []).append(region.kernel_code())
        edits.append(
            Edit(plan.scop.span.start, plan.scop.span.end, host, f"map {plan.function.name}")
        )
        helpers.update(dict.fromkeys(region.helpers))
    for position, start in enumerate(sorted(kernels_by_function)):
        at = _kernel_position(tree, source, start)
        prelude = PRELUDE + (std_device.STD_PRELUDE if uses_std else "")
        text = (prelude if position == 0 else "") + "".join(kernels_by_function[start])
        edits.append(Edit(at, at, text, "kernels"))
    for helper in helpers:
        edits.extend(_device_edits(helper, tree, source))
    return apply_edits(source, edits).decode("utf-8", errors="surrogateescape")


def _kernel_position(tree: Tree, source: bytes, start: int) -> int:
    node = definition_node(tree, start)
    at = node.start_byte if node is not None else start
    line_start = source.rfind(b"\n", 0, at) + 1
    return line_start if not source[line_start:at].strip() else at


def _device_edits(name: str, tree: Tree, source: bytes) -> list[Edit]:
    definition = cs.function_nodes(tree, source).get(name)
    if definition is None:
        raise Refuse(f"the region calls '{name}', whose definition is not in the file")
    nodes = [definition, *cs.prototypes(tree, source, name)]
    return [
        Edit(n.start_byte, n.start_byte, "__host__ __device__ ", f"{name} on the device")
        for n in nodes
    ]


@dataclass
class _Expansion:
    """A private live range stored in device memory, one element per iteration of the
    loops it is private to (the bounding box of their values, row-major)."""

    web: polyhedral.Web
    array: str
    lows: list[str]
    extents: list[str]
    bounds: list[tuple[isl.PwAff, isl.PwAff]]
    context: isl.Set

    @classmethod
    def of(cls, web: polyhedral.Web, model: polyhedral.Model, names: _Names) -> _Expansion:
        return cls(
            web=web,
            array=names.fresh(f"d_{web.scalar}_each"),
            lows=[names.fresh(f"lo_{web.scalar}") for _ in range(web.depth)],
            extents=[names.fresh(f"extent_{web.scalar}") for _ in range(web.depth)],
            bounds=_loop_box(model, web.statements, web.depth),
            context=model.context,
        )

    def allocation(self, type_: str, names: codegen.Names) -> list[str]:
        lines = _box_lines(self.lows, self.extents, self.bounds, self.context, names)
        size = " * ".join(f"(size_t)({e} > 0 ? {e} : 1)" for e in self.extents)
        lines.append(f"{type_} *{self.array} = NULL;")
        lines.append(device_malloc(self.array, f"{size} * sizeof({type_})"))
        return lines

    def params(self, type_: str) -> list[str]:
        return [f"{type_} *{self.array}", *(f"long long {n}" for n in self.lows + self.extents)]

    def arguments(self) -> list[str]:
        return [self.array, *self.lows, *self.extents]

    def element(self, iterators: list[str]) -> str:
        """The element for one instance, given its loop variables' values."""
        return f"{self.array}[{_box_index(iterators, self.lows, self.extents)}]"


def _loop_box(
    model: polyhedral.Model, statements: frozenset[str], depth: int
) -> list[tuple[isl.PwAff, isl.PwAff]]:
    """The lowest and highest value of each of the `depth` outer loops around the
    statements."""
    header = model.space.header()
    pieces = []
    for statement in sorted(statements):
        n = len(model.iterators[statement])
        dims = [f"i{k}" for k in range(n)]
        pieces.append(f"{statement}[{', '.join(dims)}] -> [{', '.join(dims[:depth])}]")
    projection = isl.UnionMap(f"{header}{{ {'; '.join(pieces)} }}")
    image = isl.Set.from_union_set(projection.intersect_domain(model.domain).range())
    bounds = []
    for k in range(depth):
        alone = image.project_out(isl.dim_type.set, k + 1, depth - k - 1)
        alone = alone.project_out(isl.dim_type.set, 0, k)
        bounds.append((alone.dim_min(0), alone.dim_max(0)))
    return bounds


def _box_lines(lows, extents, bounds, context: isl.Set, names: codegen.Names) -> list[str]:
    lines = []
    for lo, extent, (low, high) in zip(lows, extents, bounds, strict=True):
        lines.append(f"const long long {lo} = {codegen.pw_aff(low, context, names)};")
        high_text = codegen.pw_aff(high, context, names)
        lines.append(f"const long long {extent} = ({high_text}) - {lo} + 1;")
    return lines


def _box_index(iterators: list[str], lows: list[str], extents: list[str]) -> str:
    """Row-major position of the loops' values in their bounding box."""
    index = ""
    for k, lo in enumerate(lows):
        offset = f"(({iterators[k]}) - {lo})"
        index = offset if not index else f"({index}) * {extents[k]} + {offset}"
    return index


@dataclass
class _ArrayExpansion:
    """A private temporary array in device memory: one copy of its elements (`size` of
    them, laid out as the array is) per iteration of the loops it is private to, in the
    bounding box of their values, row-major. The copy of the last iteration that writes
    it (`last`, at offset `offset` when there is one, else -1) first receives the array's
    contents and is copied back into it after the region: it writes every element any
    iteration writes, and the others keep their values."""

    private: polyhedral.PrivateArray
    data: ArrayData
    array: str
    size: str
    offset: str
    lows: list[str]
    extents: list[str]
    bounds: list[tuple[isl.PwAff, isl.PwAff]]
    last: isl.Set
    context: isl.Set

    @classmethod
    def of(
        cls,
        private: polyhedral.PrivateArray,
        data: ArrayData,
        model: polyhedral.Model,
        names: _Names,
    ) -> _ArrayExpansion:
        name = private.array
        return cls(
            private=private,
            data=data,
            array=names.fresh(f"d_{name}_each"),
            size=names.fresh(f"elements_{name}"),
            offset=names.fresh(f"last_{name}"),
            lows=[names.fresh(f"lo_{name}_{loop}") for loop in private.loops],
            extents=[names.fresh(f"extent_{name}_{loop}") for loop in private.loops],
            bounds=_loop_box(model, private.statements, private.depth),
            last=polyhedral.last_iteration(model, private),
            context=model.context,
        )

    def allocation(self, device: str, names: codegen.Names) -> list[str]:
        """Its storage, and the last iteration's copy filled with the array's contents."""
        elem = element_type(self.data)
        lines = _box_lines(self.lows, self.extents, self.bounds, self.context, names)
        lines.append(f"const long long {self.size} = (long long)({self.data.count});")
        slices = " * ".join(f"(size_t)({e} > 0 ? {e} : 1)" for e in self.extents)
        lines.append(f"{elem} *{self.array} = NULL;")
        lines.append(device_malloc(self.array, f"{slices} * (size_t){self.size} * sizeof({elem})"))
        lines.append(f"long long {self.offset} = -1;")
        runs = self.last.params()
        within = self.context.intersect(runs.align_params(self.context.get_space()))
        values = [
            codegen.pw_aff(self.last.dim_max(k), within, names) for k in range(len(self.lows))
        ]
        place = f"{self.offset} = ({_box_index(values, self.lows, self.extents)}) * {self.size};"
        fill = f"CUDAIFY_CHECK(cudaMemcpy({self.array} + {self.offset}, {device}, {self._bytes()}, "
        fill += "cudaMemcpyDeviceToDevice));"
        if runs.intersect(self.context).is_equal(self.context):
            return [*lines, place, fill]
        build = isl.AstBuild.from_context(self.context)
        condition = codegen.expression(build.expr_from_set(runs), names)
        return [*lines, f"if ({condition}) {{", f"    {place}", f"    {fill}", "}"]

    def write_back(self, device: str) -> list[str]:
        return [
            f"if ({self.offset} >= 0) CUDAIFY_CHECK(cudaMemcpy({device}, {self.array} + "
            f"{self.offset}, {self._bytes()}, cudaMemcpyDeviceToDevice));"
        ]

    def _bytes(self) -> str:
        return f"(size_t){self.size} * sizeof({element_type(self.data)})"

    def params(self) -> list[str]:
        return [
            f"{element_type(self.data)} *{self.array}",
            f"long long {self.size}",
            *(f"long long {n}" for n in self.lows + self.extents),
        ]

    def arguments(self) -> list[str]:
        first = self.data.first.strip()
        # element `first` of the array is element 0 of each copy
        base = self.array if first == "0" else f"{self.array} - ({first})"
        return [base, self.size, *self.lows, *self.extents]

    def copy_of(self, iterators: list[str]) -> str:
        """The array's copy for one instance (its loop variables' values), as an
        expression that subscripts as the array does."""
        index = _box_index(iterators, self.lows, self.extents)
        pointer = f"{self.array} + ({index}) * {self.size}"
        if not self.data.dims:
            return f"({pointer})"
        shape = "".join(f"[{d}]" for d in self.data.dims)
        return f"(({element_type(self.data)} (*){shape})({pointer}))"


@dataclass
class _KernelText:
    name: str
    params: list[str]  # declarations
    body: list[str]
    grid: list[tuple[str, str]] = field(default_factory=list)  # (lo, trips) C names, x first
    host: list[str] = field(default_factory=list)  # C names of the host values it takes


# how a min/max update compares a value with what it keeps
_BETTER = {"max": ">", "min": "<"}


def _atomic_update(op: str, cast: str, target: str, value: str, prefix: str) -> list[str]:
    """`target op= value` as one atomic operation: atomicAdd for a sum, atomicMax or
    atomicMin for an integer extreme, a compare-and-swap loop on the bits of a float or a
    double (locals named from `prefix`)."""
    address = f"({cast} *)&({target})"
    if op == "+":
        return [f"atomicAdd({address}, {value});"]
    if cast not in ("float", "double"):
        return [f"atomic{op.capitalize()}({address}, {value});"]
    bits, to_bits, from_bits = {
        "float": ("unsigned int", "__float_as_uint", "__uint_as_float"),
        "double": ("unsigned long long", "(unsigned long long)__double_as_longlong",
                   "__longlong_as_double"),
    }[cast]  # fmt: skip
    at, seen, old, wanted = (f"{prefix}_{part}" for part in ("at", "seen", "old", "wanted"))
    cast_back = "(long long)" if cast == "double" else ""
    return [
        f"{{ {cast} *{at} = {address};",
        f"  const {cast} {wanted} = {value};",
        f"  {cast} {seen} = *{at};",
        f"  while ({wanted} {_BETTER[op]} {seen}) {{",
        f"    const {bits} {old} = atomicCAS(({bits} *){at}, {to_bits}({seen}), "
        f"{to_bits}({wanted}));",
        f"    if ({old} == {to_bits}({seen})) break;",
        f"    {seen} = {from_bits}({cast_back}{old});",
        "  } }",
    ]


@dataclass(frozen=True)
class _Partial:
    """A thread's share of a sum (`op` "+") or of a min/max update ("max", "min") whose
    target is the same for every thread of the launch (`s += a[i]`, `if (a[i] > m) m =
    a[i];`): the thread combines its instances in a register; where its whole warp is
    active, the warp combines its threads' shares with shuffles and one lane updates the
    target with one atomic operation, not one per instance; elsewhere (a partial warp)
    each thread updates it with its own share. The order of the additions changes, as with
    atomics already; a minimum or maximum is the same in any order (a NaN value is never
    taken, as `v > m` never takes it)."""

    name: str  # the register
    added: str  # whether this thread ran an instance (an untouched target is not read)
    target: str
    cast: str  # the type the atomic operation takes
    op: str = "+"

    def declaration(self) -> list[str]:
        return [f"    {self.cast} {self.name} = ({self.cast})0;", f"    bool {self.added} = false;"]

    def update(self, term: str) -> list[str]:
        """One instance: its term or value into the register."""
        if self.op == "+":
            return [f"{self.name} += ({self.cast})({term}); {self.added} = true;"]
        value = f"{self.name}_value"
        return [
            f"{{ const {self.cast} {value} = ({self.cast})({term});",
            f"  if ({self.added} ? {value} {_BETTER[self.op]} {self.name} : {value} == {value})"
            f" {{ {self.name} = {value}; {self.added} = true; }} }}",
        ]

    def atomic(self, value: str) -> list[str]:
        """`value` into the target atomically."""
        return _atomic_update(self.op, self.cast, self.target, value, self.name)

    def flush(self) -> list[str]:
        active, adders = f"{self.name}_active", f"{self.name}_adders"
        lane = "((threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) & 31u)"
        if self.op == "+":
            combine = [
                "                for (int offset = 16; offset > 0; offset /= 2)",
                f"                    {self.name} += "
                f"__shfl_xor_sync({active}, {self.name}, offset);",
            ]
        else:
            other, theirs = f"{self.name}_other", f"{self.name}_theirs"
            better = _BETTER[self.op]
            combine = [
                "                for (int offset = 16; offset > 0; offset /= 2) {",
                f"                    const {self.cast} {other} = "
                f"__shfl_xor_sync({active}, {self.name}, offset);",
                f"                    const int {theirs} = "
                f"__shfl_xor_sync({active}, (int){self.added}, offset);",
                f"                    if ({theirs} && "
                f"(!{self.added} || {other} {better} {self.name}))",
                f"                        {self.name} = {other};",
                f"                    {self.added} = {self.added} || {theirs};",
                "                }",
            ]
        first = f"(unsigned)(__ffs((int){adders}) - 1)"
        return [
            "    {",
            f"        const unsigned {active} = __activemask();",
            f"        if ({active} == 0xffffffffu) {{",
            f"            const unsigned {adders} = __ballot_sync({active}, {self.added});",
            f"            if ({adders} != 0u) {{",
            *combine,
            f"                if ({lane} == {first}) {{",
            *("                    " + line for line in self.atomic(self.name)),
            "                }",
            "            }",
            f"        }} else if ({self.added}) {{",
            *("            " + line for line in self.atomic(self.name)),
            "        }",
            "    }",
        ]


class _RegionEmitter:
    """The host code that replaces one region and the kernels it launches."""

    def __init__(
        self, program: Program, plan: RegionPlan, tree: Tree, source: bytes, names: _Names
    ):
        self.program, self.plan, self.tree, self.source = program, plan, tree, source
        self.names = names
        self.model = plan.model
        self.scop = plan.scop
        self.space = plan.model.space
        self.statements = {
            st.name: codegen.source_statement(tree, source, st.name, st.span.start)
            for st in self.scop.statements
        }
        self.lambdas = self._lambdas()
        self.helpers = self._helpers()
        self.inspected: dict[str, tuple[str, str]] = {}  # array -> (first, end) host names
        self.arrays = [self._sized(a) for a in self.scop.arrays]
        self.devices = {a.name: names.fresh(f"d_{a.name}") for a in self.arrays}
        # one device location per shared live range of a written scalar
        self.shared = {
            web.index: names.fresh(f"d_{web.scalar}") for web in self.model.webs if not web.depth
        }
        self.scalar_types = {s.name: s.type for s in self.scop.scalars}
        # a loop variable's type, when every loop over that name declares the same one
        types: dict[str, set[str]] = {}
        for loop in self.scop.loops:
            types.setdefault(loop.var, set()).add(loop.var_type)
        self.var_types = {var: next(iter(t)) for var, t in types.items() if len(t) == 1}
        self.locals, self.expanded = self._private_storage()
        self.private_arrays = {
            data.name: _ArrayExpansion.of(
                self.model.privates[data.name], data, self.model, self.names
            )
            for data in self.arrays
            if data.name in self.model.privates
        }
        self.sums = self._sum_casts()
        # speculative steps: device snapshots of the arrays a step writes (host names and
        # the kernel's names for them) and the flag a failed check sets
        written = plan.speculation.arrays if plan.speculation else ()
        self.snapshots = {a: names.fresh(f"d_{a}_before") for a in written}
        self.snapshot_params = {a: names.fresh(f"{a}_before") for a in written}
        self.flag = names.fresh("d_changed") if written else ""
        self.flag_param = names.fresh("changed") if written else ""
        self.kernels: list[_KernelText] = []
        self.launches: dict[str, list[str]] = {}
        for k, part in enumerate(plan.kernels):
            kernel_name = names.fresh(f"{plan.function.name}_kernel")
            self._emit_kernel(k, part, kernel_name)
        for k, part in enumerate(plan.kernels):
            if part.speculative:
                self.launches[f"K{k}"] = self._speculative_launch(k, k + 1)

    # -- helpers the statements call --------------------------------------------------
    def _statement_nodes(self) -> list:
        nodes = [codegen.statement_node(self.tree, st.span.start) for st in self.scop.statements]
        return [node for node in nodes if node is not None]

    def _lambdas(self) -> dict[str, list[str]]:
        """The local lambdas the statements call: name -> its declaration's lines, in
        device form, as the kernels that call it define it again."""
        calls = {
            name for node in self._statement_nodes() for name, _ in cs.calls_in(node, self.source)
        }
        definition = definition_node(self.tree, self.plan.function.span.start)
        if definition is None:
            return {}
        span = self.scop.span
        try:
            found = std_device.lambdas_called(calls, definition, span.start, span.end, self.source)
        except std_device.CaptureChanged as error:
            raise Refuse(str(error)) from None
        lambdas = {}
        for node in found:
            name = std_device.lambda_declared(node, self.source)
            assert name is not None
            indent = line_indent(self.source, node.start_byte)
            lines = cs.text(node, self.source).split("\n")
            lambdas[name] = ["    " + lines[0]] + [
                "    " + (line[len(indent) :] if line.startswith(indent) else line.lstrip())
                for line in lines[1:]
            ]
        return lambdas

    def _helpers(self) -> list[str]:
        found: list[str] = []
        definitions = cs.function_nodes(self.tree, self.source)
        lambda_nodes = [
            node
            for node in cs.walk(
                definition_node(self.tree, self.plan.function.span.start) or self.tree.root_node
            )
            if std_device.lambda_declared(node, self.source) in self.lambdas
        ]
        for node in [*self._statement_nodes(), *lambda_nodes]:
            for name, call in cs.calls_in(node, self.source):
                if name in MATH_FUNCTIONS or name in found or name in _CASTS:
                    continue
                if name in self.lambdas:
                    continue
                if _in_std(call, self.source):
                    continue  # modelled by the analysis; std_device's job
                if name not in definitions:
                    raise Refuse(f"it calls '{name}', which has no device version")
                found.append(name)
        return found

    # -- kernels ------------------------------------------------------------------------
    def _emit_kernel(self, index: int, part: KernelPart, kernel_name: str) -> None:
        model = self.model
        host = [f"H{index}_{j}" for j in range(part.host_depth)]
        threads = [f"T{index}_{k}" for k in range(len(part.mapped))]
        names = codegen.Names({v: k for k, v in self.space.params.items()})
        host_c = [self.names.fresh(f"h{j}") for j in range(part.host_depth)]
        mapped_c = self._mapped_names(part)
        for isl_name, c_name in zip(host, host_c, strict=True):
            names.add(isl_name, c_name)
        for isl_name, c_name in zip(threads, mapped_c, strict=True):
            names.add(isl_name, c_name)
        fixed = _fix(part, host, threads, self.space)
        instances = part.domain.intersect(fixed)
        schedule = part.inner.intersect_domain(instances)
        context = model.context.align_params(instances.get_space())
        launch = _launch_context(part, host, threads)
        build = isl.AstBuild.from_context(
            launch.intersect(context.align_params(launch.get_space()))
        )
        ast = build.node_from_schedule_map(schedule)
        self._name_iterators(ast, names, set(mapped_c) | set(host_c))
        for c_name in mapped_c:
            if c_name in self.var_types:
                names.types[c_name] = self.var_types[c_name]
        statements_used = {s.get_tuple_name() for s in _sets(part.domain)}
        webs = [w for w in model.webs if w.statements & statements_used]
        shared = {w.index: self.shared[w.index] for w in webs if not w.depth}
        private = self._local_names(webs)
        storage = {w.index: f"(*{self.shared[w.index]})" for w in webs if not w.depth}
        storage.update(private)
        expanded = [self.expanded[w.index] for w in webs if w.index in self.expanded]
        arrays = [e for e in self.private_arrays.values() if e.private.statements & statements_used]
        # names every thread of one launch sees alike: a sum into a target spelled only
        # with them is summed in a register and added once per warp
        uniform = {data.name for data in self.arrays} | set(shared.values()) | set(host_c)
        uniform |= {s.name for s in self.scop.scalars if not s.written}
        partials: dict[str, _Partial] = {}

        def on_user(statement: str, arguments: list[str]) -> list[str]:
            replace = {
                w.scalar: storage[w.index]
                for w in webs
                if statement in w.statements and w.index in storage and storage[w.index] != w.scalar
            }
            for expansion in expanded:
                if statement in expansion.web.statements:
                    replace[expansion.web.scalar] = expansion.element(arguments)
            for copies in arrays:
                if statement in copies.private.statements:
                    replace[copies.private.array] = copies.copy_of(arguments)
            for var, value in zip(model.iterators[statement], arguments, strict=True):
                if value != var:
                    replace[var] = f"({value})"
            if part.atomic and statement in self.sums:
                cast = self.sums[statement]
                source = self.statements[statement]
                op = self.model.statement(statement).reduction
                if op == "+":
                    target, term = codegen.sum_parts(source, replace)
                else:
                    target, term = codegen.extreme_parts(source, replace)
                shared_target = set(re.findall(r"[A-Za-z_]\w*", target)) <= uniform
                known = partials.get(statement)
                if not shared_target or (known is not None and known.target != target):
                    # a target per thread (or another place of the statement's with another
                    # target): one atomic operation per instance
                    if op == "+":
                        return [codegen.atomic_sum(source, replace, cast)]
                    prefix = self.names.fresh("extreme")
                    return _atomic_update(op, cast, target, f"({cast})({term})", prefix)
                if statement not in partials:
                    partials[statement] = _Partial(
                        self.names.fresh("partial"), self.names.fresh("added"), target, cast, op
                    )
                return partials[statement].update(term)
            if part.speculative:
                return self._checked(statement, replace, arguments)
            return [codegen.substituted(self.statements[statement], replace)]

        depth = len(part.mapped)
        indent = "    " * (depth + 1)
        body_lines: list[str] = []
        for web in webs:
            if web.index in private:
                body_lines.append(f"{indent}{self.scalar_types[web.scalar]} {private[web.index]};")
        body_lines += codegen.print_ast(ast, names, on_user, indent)
        params = self._kernel_params(part, statements_used, shared, host_c)
        grid: list[tuple[str, str]] = []
        bounds = _grid_bounds(part, host, model)
        for c_name in mapped_c:
            lo, trips = self.names.fresh(f"lo_{c_name}"), self.names.fresh(f"trips_{c_name}")
            grid.append((lo, trips))
            params += [f"long long {lo}", f"long long {trips}"]
        for expansion in expanded:
            params += expansion.params(self.scalar_types[expansion.web.scalar])
        for copies in arrays:
            params += copies.params()
        extra: list[str] = []
        if part.speculative:
            params += self._snapshot_params()
            extra = self._snapshot_arguments()
        loops: list[str] = []
        for level, k in enumerate(reversed(range(depth))):  # z or y outermost, x innermost
            dim, c_name, (lo, trips) = DIMS[k], mapped_c[k], grid[k]
            counter = self.names.fresh(f"t_{c_name}")
            ind = "    " * (level + 1)
            loops.append(
                f"{ind}for (long long {counter} = blockIdx.{dim} * (long long)blockDim.{dim} + "
                f"threadIdx.{dim}; {counter} < {trips}; {counter} += (long long)blockDim.{dim} * "
                f"gridDim.{dim}) {{"
            )
            type_ = names.types.get(c_name, "long long")
            cast = "" if type_ == "long long" else f"({type_})"
            stride = bounds[k][3]
            step = f"{stride} * " if stride != 1 else ""
            loops.append(f"{ind}    const {type_} {c_name} = {cast}({lo} + {step}{counter});")
        closing = ["    " * (level + 1) + "}" for level in reversed(range(depth))]
        called = "\n".join(body_lines)
        defined = [
            line
            for name, lines in self.lambdas.items()
            if re.search(rf"\b{re.escape(name)}\s*\(", called)
            for line in lines
        ]
        starts = [line for p in partials.values() for line in p.declaration()]
        ends = [line for p in partials.values() for line in p.flush()]
        body = [*defined, *starts, *loops, *body_lines, *closing, *ends]
        self.kernels.append(_KernelText(kernel_name, params, body, grid, host_c))
        self.launches[f"K{index}"] = self._launch_lines(
            index,
            part,
            kernel_name,
            host,
            threads,
            host_c,
            grid,
            bounds,
            shared,
            [*expanded, *arrays],
            extra,
            summed=bool(partials),
        )

    # -- speculative steps (polyhedral.Speculation) --------------------------------------
    def _checked(self, statement: str, replace: dict[str, str], arguments: list[str]) -> list[str]:
        """One instance of a speculative step: it reads the arrays the step writes from
        their snapshots and writes them in place; where another instance of the step
        reads the element it writes, it compares the stored bits with the snapshot's and
        sets the flag when they differ."""
        source = self.statements[statement]
        lines = [codegen.substituted(source, replace, self.snapshot_params)]
        guard = self._check_guard(statement, arguments)
        if guard is None:
            return lines
        now, then, byte = "cudaify_now", "cudaify_then", "cudaify_byte"
        for live, before in codegen.target_texts(source, replace, self.snapshot_params):
            lines += [
                f"if ({guard}) {{",
                f"    const unsigned char *{now} = (const unsigned char *)&({live});",
                f"    const unsigned char *{then} = (const unsigned char *)&({before});",
                f"    for (size_t {byte} = 0; {byte} < sizeof({live}); {byte}++)",
                f"        if ({now}[{byte}] != {then}[{byte}]) {{",
                f"            *{self.flag_param} = 1;",
                "            break;",
                "        }",
                "}",
            ]
        return lines

    def _check_guard(self, statement: str, arguments: list[str]) -> str | None:
        """The C condition under which an instance's write must be checked (None: never)."""
        assert self.plan.speculation is not None
        (domain,) = [s for s in _sets(self.model.domain) if s.get_tuple_name() == statement]
        checked = self.plan.speculation.checked.intersect(isl.UnionSet.from_set(domain))
        if checked.is_empty():
            return None
        piece = _loosened(isl.Set.from_union_set(checked)).intersect(domain)
        if domain.is_subset(piece):
            return "1"
        count, first = domain.dim(isl.dim_type.set), domain.dim(isl.dim_type.param)
        dims = [f"spec_i{k}" for k in range(count)]

        def as_params(instances: isl.Set) -> isl.Set:
            moved = instances.move_dims(isl.dim_type.param, first, isl.dim_type.set, 0, count)
            for k, name in enumerate(dims):
                moved = moved.set_dim_name(isl.dim_type.param, first + k, name)
            return moved.params()

        names = codegen.Names({v: k for k, v in self.space.params.items()})
        for name, value in zip(dims, arguments, strict=True):
            names.add(name, f"({value})")
        build = isl.AstBuild.from_context(as_params(domain))
        return codegen.expression(build.expr_from_set(as_params(piece)), names)

    def _snapshot_params(self) -> list[str]:
        params = [
            _array_param(replace(data, name=self.snapshot_params[data.name]))
            for data in self.arrays
            if data.name in self.snapshots
        ]
        return [*params, f"int *{self.flag_param}"]

    def _snapshot_arguments(self) -> list[str]:
        arguments = [
            self._array_argument(data, self.snapshots[data.name])
            for data in self.arrays
            if data.name in self.snapshots
        ]
        return [*arguments, self.flag]

    def _snapshot_copies(self, backwards: bool) -> list[str]:
        lines = []
        for data in self.arrays:
            if data.name not in self.snapshots:
                continue
            live, before = self.devices[data.name], self.snapshots[data.name]
            target, origin = (live, before) if backwards else (before, live)
            lines.append(
                f"CUDAIFY_CHECK(cudaMemcpy({target}, {origin}, {byte_size(data)}, "
                "cudaMemcpyDeviceToDevice));"
            )
        return lines

    def _speculative_launch(self, index: int, fallback: int) -> list[str]:
        """A step: snapshot, the parallel launch, the flag back to the host; when a check
        failed, the snapshots go back and the single-thread kernel reruns the step."""
        changed = self.names.fresh("changed")
        rerun = [
            *self._snapshot_copies(backwards=True),
            *(
                f"const long long {again} = {first};"
                for again, first in zip(
                    self.kernels[fallback].host, self.kernels[index].host, strict=True
                )
            ),
            *self.launches[f"K{fallback}"],
        ]
        return [
            *self._snapshot_copies(backwards=False),
            f"CUDAIFY_CHECK(cudaMemset({self.flag}, 0, sizeof(int)));",
            *self.launches[f"K{index}"],
            f"int {changed} = 0;",
            f"CUDAIFY_CHECK(cudaMemcpy(&{changed}, {self.flag}, sizeof(int), "
            "cudaMemcpyDeviceToHost));",
            f"if ({changed}) {{",
            *("    " + line for line in rerun),
            "}",
        ]

    def _name_iterators(self, ast: isl.AstNode, names: codegen.Names, used: set[str]) -> None:
        """C names for a thread's loops: the source's loop variable (with its type) when
        every statement under the loop has exactly that variable there, else a new one."""
        taken = set(used)
        for k, (iterator, uses) in enumerate(codegen.iterator_uses(ast).items()):
            if iterator in names.mapping:
                continue
            chosen: str | None = None
            for statement, position in uses:
                var = self.model.iterators[statement][position] if position is not None else None
                if var is None or chosen not in (None, var):
                    chosen = None
                    break
                chosen = var
            statements = {statement for statement, _ in uses}
            if chosen is None or chosen in taken or self._spelled_elsewhere(statements, chosen):
                chosen = self.names.fresh(f"c{k}")
            else:
                names.types[chosen] = self.var_types.get(chosen, "long long")
            taken.add(chosen)
            names.add(iterator, chosen)

    def _mapped_names(self, part: KernelPart) -> list[str]:
        """C names of the grid dimensions: the source's loop variable when every
        statement of the kernel has that variable there, else a new name."""
        result = []
        for k, member in enumerate(part.mapped):
            chosen: str | None = None
            for piece in _maps(member):
                statement = piece.get_tuple_name(isl.dim_type.in_)
                position = _exact_iterator(piece)
                var = self.model.iterators[statement][position] if position is not None else None
                if var is None or chosen not in (None, var):
                    chosen = None
                    break
                chosen = var
            if chosen is None or chosen in result or self._clashes(part, chosen):
                chosen = self.names.fresh(f"m{k}")
            result.append(chosen)
        return result

    def _clashes(self, part: KernelPart, var: str) -> bool:
        """Whether some statement of the kernel spells `var` without it being its loop
        variable (naming the grid dimension so would change what that statement reads)."""
        return self._spelled_elsewhere({p.get_tuple_name() for p in _sets(part.domain)}, var)

    def _spelled_elsewhere(self, statements: set[str], var: str) -> bool:
        for statement in statements:
            if var in self.model.iterators[statement]:
                continue
            if any(name == var for _, _, name in self.statements[statement].identifiers):
                return True
        return False

    def _sum_casts(self) -> dict[str, str]:
        """The type atomicAdd takes for each sum statement's target."""
        types = {s.name: s.type for s in self.scop.scalars}
        types.update({a.name: element_type(a) for a in self.arrays})
        found = {}
        for name in _atomic_sums(self.scop, self.tree, self.source):
            statement = self.model.statement(name)
            target = next(a.target for a in statement.accesses if a.is_write)
            found[name] = _ATOMIC_TYPES[statement.reduction][" ".join(types[target].split())]
        return found

    def _private_storage(self) -> tuple[set[int], dict[int, _Expansion]]:
        """Where each private live range lives: in a local of the one kernel that holds
        all of it, when a thread's host and grid values fix the loops it is private to;
        else in device memory with one element per iteration of those loops (the
        schedule spread it over several kernels or over the iterations of a thread)."""
        local: set[int] = set()
        expanded: dict[int, _Expansion] = {}
        for web in self.model.webs:
            if not web.depth:
                continue
            holders = [
                part
                for part in self.plan.kernels
                if web.statements & {st.get_tuple_name() for st in _sets(part.domain)}
            ]
            whole = len(holders) == 1 and web.statements <= {
                st.get_tuple_name() for st in _sets(holders[0].domain)
            }
            if whole and _fixed_per_thread(holders[0], set(web.statements), web.depth):
                local.add(web.index)
            else:
                expanded[web.index] = _Expansion.of(web, self.model, self.names)
        return local, expanded

    def _local_names(self, webs) -> dict[int, str]:
        """Local names of the private live ranges a kernel holds (two ranges of one
        scalar get two names)."""
        found: dict[int, str] = {}
        named: set[str] = set()
        for web in webs:
            if web.index not in self.locals:
                continue
            name = web.scalar if web.scalar not in named else self.names.fresh(web.scalar)
            named.add(web.scalar)
            found[web.index] = name
        return found

    def _kernel_params(
        self, part, statements: set[str], shared: dict[str, str], host_c
    ) -> list[str]:
        params = []
        for data in self.arrays:
            params.append(_array_param(data))
        for index, device in shared.items():
            params.append(f"{self.scalar_types[self.model.webs[index].scalar]} *{device}")
        for scalar in self.scop.scalars:
            if scalar.written:
                continue
            params.append(f"{scalar.type} {scalar.name}")
        params += [f"long long {h}" for h in host_c]
        return params

    def _launch_lines(
        self,
        index,
        part,
        kernel_name,
        host,
        threads,
        host_c,
        grid,
        bounds,
        shared,
        expanded,
        extra=(),
        summed: bool = False,
    ) -> list[str]:
        """What the host runs for one instance of the kernel's launch statement K<index>
        (its host values are the statement's arguments, h0.. in the generated text;
        `bounds`: each grid dimension's, from _grid_bounds).
        `summed`: the kernel adds per-warp partial sums, so fewer blocks along x, each
        thread summing several instances in its register, mean fewer atomic adds."""
        lines: list[str] = []
        names = codegen.Names({v: k for k, v in self.space.params.items()})
        for isl_name, c_name in zip(host, host_c, strict=True):
            names.add(isl_name, c_name)
        trips_names = []
        for (lo_pa, hi_pa, context, stride, nonempty), (lo, trips) in zip(
            bounds, grid, strict=True
        ):
            low = codegen.pw_aff(lo_pa, context, names)
            lines.append(f"const long long {lo} = {low};")
            hi = codegen.pw_aff(hi_pa, context, names)
            span = f"({hi}) - {lo}"
            # (hi - lo) / stride + 1, and none when hi < lo (C's division rounds toward 0)
            count = f"{span} + 1" if stride == 1 else f"({span}) >= 0 ? ({span}) / {stride} + 1 : 0"
            count = guarded_count(count, low + hi, nonempty, names)  # type: ignore[arg-type]
            lines.append(f"const long long {trips} = {count};")
            trips_names.append(trips)
        arguments = [self._array_argument(data) for data in self.arrays]
        arguments += list(shared.values())
        arguments += [_scalar_argument(s.name, s.type) for s in self.scop.scalars if not s.written]
        arguments += host_c
        for lo, trips in grid:
            arguments += [lo, trips]
        for expansion in expanded:
            arguments += expansion.arguments()
        arguments += extra
        if grid:
            shape = THREADS[len(grid)]
            if summed:
                # x holds at most SUMMED_BLOCKS blocks, each thread summing many instances
                most = [SUMMED_BLOCKS, *MOST_BLOCKS[1:]]
                blocks = [
                    f"cudaify_blocks({trips}, {shape[k]}, {most[k]})"
                    for k, trips in enumerate(trips_names)
                ]
            else:
                blocks = grid_blocks(trips_names, shape, list(MOST_BLOCKS[: len(grid)]))
            nonempty = " && ".join(f"{t} > 0" for t in trips_names)
            lines.append(f"if ({nonempty}) {{")
            launch = f"dim3({', '.join(blocks)}), dim3({', '.join(map(str, shape))})"
            lines.append(f"    {kernel_name}<<<{launch}>>>({', '.join(arguments)});")
            lines.append("    CUDAIFY_CHECK(cudaGetLastError());")
            lines.append("}")
        else:
            lines.append(f"{kernel_name}<<<1, 1>>>({', '.join(arguments)});")
            lines.append("CUDAIFY_CHECK(cudaGetLastError());")
        return lines

    def _array_argument(self, data: ArrayData, device: str | None = None) -> str:
        device = device or self.devices[data.name]
        pointer = device if data.first.strip() == "0" else f"{device} - ({data.first})"
        if not data.dims:
            return pointer
        shape = "".join(f"[{d}]" for d in data.dims)
        return f"({_device_element(data)} (*){shape})({pointer})"

    # -- the host side -------------------------------------------------------------------
    def kernel_code(self) -> str:
        """The kernels, with the modelled standard-library names in their device form."""
        try:
            return std_device.device_text(self._kernel_texts())
        except std_device.NoDeviceVersion as error:
            raise Refuse(f"the kernel cannot use '{error}'") from None

    def uses_std(self) -> bool:
        return std_device.uses_std(self._kernel_texts())

    def _kernel_texts(self) -> str:
        texts = []
        for kernel in self.kernels:
            header = (
                f"/* Region of {self.plan.function.name}() at line {self.scop.line}: scheduled by "
                "isl. */"
            )
            texts.append(
                "\n".join(
                    [
                        header,
                        f"__global__ void {kernel.name}({', '.join(kernel.params)})",
                        "{",
                        *kernel.body,
                        "}",
                    ]
                )
                + "\n\n"
            )
        return "".join(texts)

    def host_code(self) -> str:
        indent = line_indent(self.source, self.scop.span.start)
        inner = indent + "    "
        before = [self._prelude_text(span.start) for span in self.scop.prelude]
        before += [f"{type_} {name};" for type_, name in self.scop.hoisted]
        opening = "".join(f"{text}\n{indent}" for text in before) + "{"
        lines = [
            opening,
            f"{inner}/* cudaify: this region runs on the GPU ({self.plan.summary}) */",
        ]
        lines += [inner + line for line in self._allocate()]
        lines += self._host_loops(inner)
        lines += [inner + line for line in self._release()]
        lines.append(indent + "}")
        return "\n".join(lines)

    def _overwritten(self, data: ArrayData, names: codegen.Names) -> str | None:
        """When an array the region only writes has every element written whatever the
        data, the condition on the sizes under which that holds ("1": always); None
        when the array must be copied in (it is read, or only partly written)."""
        if data.access != "write" or data.first.strip() != "0" or data.name in self.inspected:
            return None
        if data.name in self.private_arrays:
            return None  # the copy that goes back starts as the array's contents
        extents = _extents(data)
        if extents is None or len(extents) != self.model.dims.get(data.name):
            return None
        if any(not e.isdigit() and e not in self.scop.params for e in extents):
            return None
        covered = polyhedral.covered_when(self.model, data.name, extents)
        if covered.is_empty():
            return None
        if covered.is_equal(self.model.context):
            return "1"
        build = isl.AstBuild.from_context(self.model.context)
        return codegen.expression(build.expr_from_set(covered), names)

    def _sized(self, data: ArrayData) -> ArrayData:
        """An array whose extent only the host can know at run time (a CSR value array
        read between row_ptr[i] and row_ptr[i + 1]) gets it from an inspector run before
        the copies (see _inspector)."""
        if data.count is not None:
            return data
        first = self.names.fresh(f"first_{data.name}")
        end = self.names.fresh(f"end_{data.name}")
        self.inspected[data.name] = (first, end)
        return replace(data, count=f"{end} - {first}", first=first, whole=False)

    def _inspector(self) -> list[str]:
        """Host loops over the statements' iterations that find the lowest and highest
        element each loop-bounded access reaches."""
        lines = []
        for name, (first, end) in self.inspected.items():
            seen = self.names.fresh(f"seen_{name}")
            lines += [f"long long {first} = 0, {end} = 0;", "{", f"    int {seen} = 0;"]
            for extent in (e for e in self.scop.runtime_extents if e.array == name):
                lines += ["    " + line for line in self._inspect(extent, first, end, seen)]
            lines.append("}")
        return lines

    def _inspect(self, extent, first: str, end: str, seen: str) -> list[str]:
        loops = [self.scop.loops[k] for k in extent.loops]
        lines, indent = [], ""
        for loop in loops:
            if loop.step > 0:
                test = "<=" if loop.inclusive else "<"
            else:
                test = ">=" if loop.inclusive else ">"
            lines.append(
                f"{indent}for ({loop.var_type} {loop.var} = {loop.lower.text}; "
                f"{loop.var} {test} {loop.upper.text}; {loop.var} += {loop.step}) {{"
            )
            indent += "    "
        if extent.step > 0:
            low = f"(long long)({extent.lower}) + {extent.offset}"
            high = f"(long long)({extent.upper}) + {int(extent.inclusive) + extent.offset}"
        else:
            low = f"(long long)({extent.upper}) + {int(not extent.inclusive) + extent.offset}"
            high = f"(long long)({extent.lower}) + {1 + extent.offset}"
        lo, hi = self.names.fresh("lo_reach"), self.names.fresh("hi_reach")
        lines += [
            f"{indent}const long long {lo} = {low}, {hi} = {high};",
            f"{indent}if ({lo} < {hi}) {{",
            f"{indent}    if (!{seen} || {lo} < {first}) {first} = {lo};",
            f"{indent}    if (!{seen} || {hi} > {end}) {end} = {hi};",
            f"{indent}    {seen} = 1;",
            f"{indent}}}",
        ]
        for _ in loops:
            indent = indent[:-4]
            lines.append(f"{indent}}}")
        return lines

    def _prelude_text(self, start: int) -> str:
        node = codegen.statement_node(self.tree, start)
        if node is None:
            raise Refuse(f"no statement starts at byte {start}")
        return cs.text(node, self.source)

    def _allocate(self) -> list[str]:
        lines = self._inspector()
        names = codegen.Names({v: k for k, v in self.space.params.items()})
        for data in self.arrays:
            device = self.devices[data.name]
            lines.append(f"{_device_element(data)} *{device} = NULL;")
            lines.append(device_malloc(device, byte_size(data)))
            copy = (
                f"CUDAIFY_CHECK(cudaMemcpy({device}, {host_address(data, False)}, "
                f"{byte_size(data)}, cudaMemcpyHostToDevice));"
            )
            covered = self._overwritten(data, names)
            if covered == "1":
                continue  # the region writes every element before anything reads one
            lines.append(copy if covered is None else f"if (!({covered})) {copy}")
        for expansion in self.expanded.values():
            lines += expansion.allocation(self.scalar_types[expansion.web.scalar], names)
        for name, copies in self.private_arrays.items():
            lines += copies.allocation(self.devices[name], names)
        for data in self.arrays:
            if data.name in self.snapshots:
                snapshot = self.snapshots[data.name]
                lines.append(f"{_device_element(data)} *{snapshot} = NULL;")
                lines.append(device_malloc(snapshot, byte_size(data)))
        if self.flag:
            lines.append(f"int *{self.flag} = NULL;")
            lines.append(device_malloc(self.flag, "sizeof(int)"))
        for index, device in self.shared.items():
            name = self.model.webs[index].scalar
            type_ = self.scalar_types[name]
            lines.append(f"{std_device.device_text(type_)} *{device} = NULL;")
            lines.append(device_malloc(device, f"sizeof({type_})"))
            scalar = next(s for s in self.scop.scalars if s.name == name)
            if not scalar.declared_inside:
                lines.append(
                    f"CUDAIFY_CHECK(cudaMemcpy({device}, &{name}, sizeof({type_}), "
                    "cudaMemcpyHostToDevice));"
                )
        return lines

    def _release(self) -> list[str]:
        lines = []
        for name, copies in self.private_arrays.items():
            lines += copies.write_back(self.devices[name])
        for data in self.arrays:
            if data.access in ("write", "readwrite"):
                host, device = host_address(data, True), self.devices[data.name]
                lines.append(
                    f"CUDAIFY_CHECK(cudaMemcpy({host}, {device}, {byte_size(data)}, "
                    "cudaMemcpyDeviceToHost));"
                )
        for index, device in self.shared.items():
            name = self.model.webs[index].scalar
            scalar = next(s for s in self.scop.scalars if s.name == name)
            if scalar.live_out:
                type_ = self.scalar_types[name]
                lines.append(
                    f"CUDAIFY_CHECK(cudaMemcpy(&{name}, {device}, sizeof({type_}), "
                    "cudaMemcpyDeviceToHost));"
                )
        if not lines:
            lines.append("CUDAIFY_CHECK(cudaDeviceSynchronize());")
        lines += [device_free(d) for d in self.devices.values()]
        lines += [device_free(d) for d in self.shared.values()]
        lines += [device_free(e.array) for e in self.expanded.values()]
        lines += [device_free(e.array) for e in self.private_arrays.values()]
        lines += [device_free(d) for d in self.snapshots.values()]
        if self.flag:
            lines.append(device_free(self.flag))
        return lines

    def _host_loops(self, indent: str) -> list[str]:
        """isl's AST of the launches: statement K<k>[h...] runs kernel k for host values h."""
        model = self.model
        domains: list[isl.UnionSet] = []
        schedules: list[isl.UnionMap] = []
        width = max((len(k.path) for k in self.plan.kernels), default=0)
        for index, part in enumerate(self.plan.kernels):
            if part.fallback:
                continue  # the speculative launch before it runs it (see _speculative_launch)
            domains.append(_host_set(part, index, model))
            schedules.append(_host_schedule(part, index, width, model))
        domain, schedule = domains[0], schedules[0]
        for more_domain, more_schedule in zip(domains[1:], schedules[1:], strict=True):
            domain = isl.UnionSet.union(domain, more_domain)
            schedule = isl.UnionMap.union(schedule, more_schedule)
        build = isl.AstBuild.from_context(model.context)
        ast = build.node_from_schedule_map(schedule.intersect_domain(domain))
        names = codegen.Names({v: k for k, v in self.space.params.items()})
        for k, iterator in enumerate(codegen.iterator_names(ast)):
            names.add(iterator, self.names.fresh(f"c{k}"))

        def on_user(statement: str, arguments: list[str]) -> list[str]:
            host_c = self.kernels[int(statement[1:])].host
            lines = ["{"]
            for c_name, value in zip(host_c, arguments, strict=True):
                lines.append(f"    const long long {c_name} = {value};")
            lines += ["    " + line for line in self.launches[statement]]
            lines.append("}")
            return lines

        return codegen.print_ast(ast, names, on_user, indent)


# -- isl helpers for emitting ---------------------------------------------------------


def _sets(union: isl.UnionSet) -> list[isl.Set]:
    found: list[isl.Set] = []
    union.foreach_set(found.append)
    return found


def _maps(union: isl.UnionMap) -> list[isl.Map]:
    found: list[isl.Map] = []
    union.foreach_map(found.append)
    return found


def _fix(part: KernelPart, host: list[str], threads: list[str], space) -> isl.UnionSet:
    """The kernel's instances whose host values are the parameters `host` and whose
    grid coordinates are the parameters `threads`."""
    schedule = part.prefix
    for member in part.mapped:
        schedule = schedule.flat_range_product(member)
    dims = [f"x{k}" for k in range(len(host) + len(threads))]
    equal = [f"{d} = {p}" for d, p in zip(dims, host + threads, strict=True)]
    params = list(space.params.values()) + host + threads
    text = f"[{', '.join(params)}] -> {{ [{', '.join(dims)}] : {' and '.join(equal) or 'true'} }}"
    return schedule.intersect_range(isl.UnionSet(text)).domain()


def _launch_context(part: KernelPart, host: list[str], threads: list[str]) -> isl.Set:
    """What a thread may assume: its host values are a launch's, and each of its grid
    coordinates lies between that dimension's lowest and highest value for them (the
    grid is the box around the kernel's instances, not the instances themselves)."""
    schedule = part.prefix
    for member in part.mapped:
        schedule = schedule.flat_range_product(member)
    image = schedule.intersect_domain(part.domain).range()
    if image.is_empty():
        return isl.Set("{ : }")
    image_set = isl.Set.from_union_set(image)
    p, d = part.host_depth, len(part.mapped)
    box = image_set.project_out(isl.dim_type.set, p, d).insert_dims(isl.dim_type.set, p, d)
    for k in range(d):
        alone = image_set.project_out(isl.dim_type.set, p + k + 1, d - k - 1)
        alone = alone.project_out(isl.dim_type.set, p, k)
        alone = alone.insert_dims(isl.dim_type.set, p, k).insert_dims(
            isl.dim_type.set, p + k + 1, d - k - 1
        )
        box = box.intersect(alone)
    first = box.dim(isl.dim_type.param)
    moved = box.move_dims(isl.dim_type.param, first, isl.dim_type.set, 0, p + d)
    for j, name in enumerate(host + threads):
        moved = moved.set_dim_name(isl.dim_type.param, first + j, name)
    return moved.params()


def _grid_bounds(
    part: KernelPart, host: list[str], model
) -> list[tuple[isl.PwAff, isl.PwAff, isl.Set, int, isl.Set]]:
    """Per grid dimension (x first): its lowest and highest value over the kernel's
    instances, as functions of the host values, the host context they hold in, the
    dimension's stride: its values are lowest + stride * t (`for (i = 0; i < n; i +=
    4099)` takes every 4099th value, and a thread for each value in between would run
    instances that do not exist), and the host values for which the kernel has any
    instance (beyond what the program's context implies)."""
    schedule = part.prefix
    for member in part.mapped:
        schedule = schedule.flat_range_product(member)
    image = isl.Set.from_union_set(schedule.intersect_domain(part.domain).range())
    image = image.move_dims(
        isl.dim_type.param, image.dim(isl.dim_type.param), isl.dim_type.set, 0, part.host_depth
    )
    first = image.dim(isl.dim_type.param) - part.host_depth
    for j, name in enumerate(host):
        image = image.set_dim_name(isl.dim_type.param, first + j, name)
    known = model.context.align_params(image.get_space())
    context = image.params().intersect(known)
    nonempty = image.params().gist(known)  # see guarded_count
    bounds = []
    count = len(part.mapped)
    for k in range(count):
        alone = image.project_out(isl.dim_type.set, k + 1, count - k - 1).project_out(
            isl.dim_type.set, 0, k
        )
        stride = alone.get_stride(0)
        step = stride.to_python() if stride.is_int() and stride.is_pos() else 1
        bounds.append((alone.dim_min(0), alone.dim_max(0), context, step, nonempty))
    return bounds


def _host_set(part: KernelPart, index: int, model) -> isl.UnionSet:
    launch = part.prefix.intersect_domain(part.domain).range()
    if part.host_depth == 0:
        return isl.UnionSet(f"{model.space.header()}{{ K{index}[] }}")
    as_set = isl.Set.from_union_set(launch).set_tuple_name(f"K{index}")
    return isl.UnionSet.from_set(as_set)


def _host_schedule(part: KernelPart, index: int, width: int, model) -> isl.UnionMap:
    dims = [f"h{j}" for j in range(part.host_depth)]
    times = [str(value) if kind == "pos" else f"h{value}" for kind, value in part.path]
    times += ["0"] * (width - len(times))
    if not times:
        times = ["0"]
    text = f"{model.space.header()}{{ K{index}[{', '.join(dims)}] -> [{', '.join(times)}] }}"
    return isl.UnionMap(text)


def _loosened(instances: isl.Set) -> isl.Set:
    """`instances` without the constraints of each piece that involve none of a step's
    own loops (only the outer loop and the sizes): a superset that prints as a short
    guard (checking a write more than needed costs a compare, never a wrong answer)."""
    inner = instances.dim(isl.dim_type.set) - 1
    loosened = isl.Set.empty(instances.get_space())

    def add(piece: isl.BasicSet) -> None:
        nonlocal loosened
        kept = piece.drop_constraints_not_involving_dims(isl.dim_type.set, 1, inner)
        loosened = loosened.union(isl.Set.from_basic_set(kept))

    instances.foreach_basic_set(add)
    return loosened.coalesce()


def _fixed_per_thread(part: KernelPart, users: set[str], depth: int) -> bool:
    """Whether each thread's host values and grid coordinates fix the first `depth` loops
    of every statement using the temporary (one copy per thread is then enough)."""
    schedule = part.prefix
    for member in part.mapped:
        schedule = schedule.flat_range_product(member)
    for piece in _maps(schedule):
        if piece.get_tuple_name(isl.dim_type.in_) not in users:
            continue
        n_in = piece.dim(isl.dim_type.in_)
        outer = piece.domain().identity().project_out(isl.dim_type.out, depth, n_in - depth)
        if not piece.reverse().apply_range(outer).is_single_valued():
            return False
    return True


def _exact_iterator(member: isl.Map) -> int | None:
    """The input dimension the 1-D map equals (no constant offset), if any."""
    n_in = member.dim(isl.dim_type.in_)
    for q in range(n_in):
        if member.is_equal(_identity_at(member, q)):
            return q
    return None


def _extents(data: ArrayData) -> list[str] | None:
    """The array's extent per dimension (integer literals or plain names), outermost
    first, when its element count and inner dimensions say them plainly."""
    count = data.count.strip() if data.count else ""
    while count.startswith("(") and count.endswith(")"):
        count = count[1:-1].strip()
    inner = [d.strip() for d in data.dims]
    if len(data.dim_values) == len(inner):
        # a macro's spelling gives way to the value the compiler saw
        inner = [
            str(v) if v is not None else d for d, v in zip(inner, data.dim_values, strict=True)
        ]
    if not re.fullmatch(r"\w+", count) or any(not re.fullmatch(r"\w+", d) for d in inner):
        return None
    if not inner:
        return [count]
    if not count.isdigit() or not all(d.isdigit() for d in inner):
        return None
    rows, rest = int(count), 1
    for d in inner:
        rest *= int(d)
    if rest == 0 or rows % rest:
        return None
    return [str(rows // rest), *inner]


def _array_param(data: ArrayData) -> str:
    elem = element_type(data)
    if data.dims:
        return f"{elem} (*{data.name})" + "".join(f"[{d}]" for d in data.dims)
    return f"{elem} *{data.name}"


def _device_element(data: ArrayData) -> str:
    """The element type as the device code spells it (`cuda::std::complex<double>`): the
    same layout as the host's, so the copies stay byte copies."""
    return std_device.device_text(element_type(data))


def _scalar_argument(name: str, type_: str) -> str:
    device = std_device.device_text(type_)
    if device == type_:
        return name
    return f"*reinterpret_cast<const {device} *>(&{name})"


def _in_std(call, source: bytes) -> bool:
    function = call.child_by_field_name("function")
    return function is not None and re.match(r"(?:::)?std::", cs.text(function, source)) is not None


# C++ casts parse as calls of a template (`static_cast<T>(x)`); they compile on the device.
_CASTS = frozenset({"static_cast", "const_cast", "reinterpret_cast"})
