"""A static cost model: what a candidate will cost on the GPU, read from its CUDA text
before it is built, so that the search builds the promising candidates first and leaves
the hopeless ones for last (issue 17: rank candidates before building them).

The model counts memory traffic in *units*: one unit is one array element read or written
by a kernel with consecutive threads on consecutive addresses. A kernel's traffic is what
one output (one iteration of its grid levels) costs times its outputs (the grid levels'
trip counts). A loop's trip count is exact where its start, bound and step are constants
(`#define N (1 << 20)` in the `#ifdef`/`#else` branch the preprocessor takes, `const
int`, literals) or host values the text fixes: a local by its initializer when nothing
assigns it again, a parameter by the value every call passes (main's `int n = N;` reaches
the function that copies and launches, and its launch arguments the kernel's trip
counts); any other loop counts UNKNOWN_TRIPS iterations (divided by its step: a tile loop
`k0 += 32` makes UNKNOWN_TRIPS / 32), and so does an unknown name in a copy's size. What
it weighs:

- **coalescing**: a global access whose last subscript has unit stride in threadIdx.x
  (followed through the kernel's local definitions: `j = (int)t_j`, `t_j = blockIdx.x *
  blockDim.x + threadIdx.x`) costs 1; one that does not depend on it (the warp reads one
  address) UNIFORM; any other stride, or a subscript that is not a polynomial (gathers),
  STRIDED; an element whose address a pointer takes and the kernel reads through
  `reinterpret_cast<const VEC *>` (VEC a W-lane vector: float4, double2), lanes W elements
  apart, W coalesced elements (gemm_tiling's 16-byte loads);
- **reuse through shared memory**: an access to a `__shared__` array costs SHARED; one to
  a small array of the kernel's own (constant sizes, at most REGISTER_ELEMENTS elements:
  a micro-tile of outputs, a fragment) nothing, registers;
- **block tiles**: a loop over block tiles (its start reads blockIdx, not threadIdx:
  `row = blockIdx.y * 64`) is run by each of the block's 16 threads along y for 64 rows of
  outputs, so what a thread moves inside it counts 16 / 64 per output (the launch's
  block shape read from the text; without it, as a grid level); a loop inside it that
  deals a tile's rows to those threads (`r = threadIdx.y; r < 32; r += 8`) runs a
  thread's share, 32 / 8 times, and is no grid level;
- **atomics**: each atomic update costs ATOMIC;
- **work per output**: an access inside a loop of the kernel that is not a grid level
  costs the loop's trip count times more; a grid level whose stride is several grids wide
  (`+= blockDim.y * gridDim.y * 4`: four outputs per thread) divides what is inside it
  by that width; an if costs its branch, or the mean of its two branches, and a branch
  the code marks unlikely (`if (__builtin_expect(c, 0))`) nothing;
- **transfers**: a cudaMemcpy moves its elements over PCIe, TRANSFER units each (device
  memory is about 60x faster than PCIe), its size read from its size argument; a copy the
  residency runtime makes (data_residency) counts once, since it copies an array only when
  the other side's copy is stale;
- **parallelism**: a launch of fewer than MIN_PARALLEL outputs leaves the GPU mostly idle
  and takes as long as MIN_PARALLEL would (one output per thread of a 1-D grid over 1000
  rows, each running a whole inner nest, is slow however little it moves in all);
- **library scans**: a cub::DeviceScan call reads each item and writes each sum once,
  coalesced (2 units per item of its count), in two launches; the runtime's three-pass
  `cudaify_scan` reads each item twice and writes each result once (3 units an item), in
  two launches;
- **launches**: LAUNCH units each (a launch's few microseconds: a coalesced pass over a
  million elements);
- **repetition**: a launch or a copy inside host loops, or in a function called from inside
  loops, counts once per iteration of the loops around it (a copy in a time-step loop is
  what data_residency removes);
- **host work**: an element access the host code of a timed function (any but main) still
  makes costs HOST units per time it runs (a CPU core's access against a GPU's coalesced
  one): a variant that moves a function's small loop and leaves its main nest on the CPU
  costs what that nest costs there.

The cost is relative: it ranks siblings, it does not predict seconds. The search records
each state's predicted cost beside its measured region time in the trace, and the rank
correlation of the two over the run (`rank_agreement`), so the model can be checked on
every program and improved."""

from __future__ import annotations

import copy
import functools
import itertools
import math
import random
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace

from tree_sitter import Node, Tree

from cudaify.core import LaunchValues, Variant
from cudaify.transforms import csource as cs
from cudaify.transforms import kernel_codegen as kc
from cudaify.transforms import kernel_nest as kn
from cudaify.transforms import kernel_text as kt
from cudaify.transforms.narrow_counters import widened

UNKNOWN_TRIPS = 1024.0  # a loop whose bound (or a size) the text does not give
STRIDED = 8.0
UNIFORM = 0.25
SHARED = 0.05
ATOMIC = 4.0
TRANSFER = 60.0  # per element copied
LAUNCH = 1e6  # a launch's few microseconds, in element accesses
MIN_PARALLEL = 8192.0  # outputs (threads) under which a launch leaves the GPU mostly idle
# an element access the host code makes, in units. Fitted, not derived: by bandwidth a CPU
# core's access is worth 100-300 units, but the kernel terms underprice a short loop's GPU
# version (a reduction's launches and synchronisation), so from 8 up a 1-D sum left on the
# CPU outweighed the GPU variants that moved it and ran slower. Rank agreement of the
# predicted cost with the measured whole-program time over the states of 35 searches
# (three H100 runs of bench_time_budget.sh's 16 programs): +0.37 without host work, +0.58
# to +0.63 at 1-5 units (no program worse), +0.43 at 8-200.
HOST = 3.0
# deepest host call chain followed for repetition (recursion and deep chains stop here)
_CALL_DEPTH = 6
RUNTIME_PREFIX = "cudaify_"  # data_residency's runtime functions
_COPIES = frozenset({"cudaMemcpy", "cudaMemcpyAsync", "cudaMemcpy2D", "cudaMemcpyToSymbol"})
# Calls that give a pointer its device buffer: (&pointer, bytes, ...)
_DEVICE_MALLOCS = kc.DEVICE_MALLOCS | {"cudaMallocAsync", "cudaMallocManaged"}
_LOOPS = frozenset({"for_statement", "while_statement", "do_statement", "for_range_loop"})


@dataclass(frozen=True)
class Estimate:
    """A candidate's predicted cost (units, see the module) and where it comes from."""

    cost: float
    kernel: float  # memory traffic of the kernels, repetitions included
    transfer: float  # host<->device copies, repetitions included
    launch: float  # launch overheads, repetitions included
    coalesced: float  # the share of global accesses (by weight) that are coalesced
    host: float = 0.0  # element accesses left to the CPU in the timed functions

    def to_json(self) -> dict[str, float]:
        return {
            "cost": round(self.cost, 2),
            "kernel": round(self.kernel, 2),
            "transfer": round(self.transfer, 2),
            "launch": round(self.launch, 2),
            "coalesced": round(self.coalesced, 3),
            "host": round(self.host, 2),
        }


def predict(variant: Variant) -> Estimate | None:
    """The predicted cost of `variant`, or None when it runs nothing on the GPU (host
    code: no kernel launch and no call of cub's device-wide scan). A kernel that chooses
    its counters' width is read as its `long long` instance."""
    data = kt.encode(widened(variant.code))
    tree = cs.parse(data)
    kernels = {k.name: k for k in kt.kernels(data)}
    launches = _program_launches(data, kernels)
    scans, passes_scans = _scans(tree, data), _helper_scans(tree, data)
    if not launches and not scans and not passes_scans:
        return None
    constants = _constants(tree, data)
    repeats = _Repeats(tree, data, constants)
    # (kernel, its parameters' values) -> (units, coalesced units)
    traffic: dict[tuple, tuple[float, float]] = {}
    kernel = launch_cost = 0.0
    for launch in launches:
        # the kernel's integer parameters whose values the launch's arguments fix
        bound = _launch_values(kernels[launch.kernel], launch, data, repeats.values)
        block = _block_threads(launch, data, constants, repeats.values.of)
        key = (launch.kernel, *sorted(bound.items()), *sorted(block.items()))
        if key not in traffic:
            read = _Kernel(kernels[launch.kernel], tree, data, {**constants, **bound}, block)
            outputs = max(read.outputs, MIN_PARALLEL)
            traffic[key] = (read.units * outputs, read.good * outputs)
        times = repeats.at(launch.call)
        kernel += times * traffic[key][0]
        launch_cost += times * LAUNCH
    transfer = sum(
        TRANSFER * _elements(node, data, constants, repeats.values) * repeats.copies(node)
        for node in cs.walk(tree.root_node)
        if node.type == "call_expression" and cs.call_name(node, data) in _COPIES
    )
    # per call, in two launches, all of it coalesced: cub's single pass reads each item and
    # writes each sum once, side by side (its tile states' init, then the scan); the
    # runtime's two-pass scan reads the items twice and writes the results once
    scan_calls = [("cub", call, _scan_count(call, data), 2.0) for call in scans] + [
        ("passes", call, _argument(call, HELPER_SCAN_ITEMS), 3.0) for call in passes_scans
    ]
    for kind, call, count, per_item in scan_calls:
        items = repeats.values.of(count) if count is not None else None
        passes = per_item * (items or UNKNOWN_TRIPS)
        traffic[(kind, call.start_byte)] = (passes, passes)
        times = repeats.at(call)
        kernel += times * passes
        launch_cost += times * 2 * LAUNCH
    units = sum(units for units, _ in traffic.values())
    coalesced = sum(good for _, good in traffic.values()) / units if units else 1.0
    host = _host_work(data, repeats)
    cost = kernel + transfer + launch_cost + host
    return Estimate(cost, kernel, transfer, launch_cost, coalesced, host)


def _host_work(data: bytes, repeats: _Repeats) -> float:
    """HOST units per element access the host code of the timed functions (every function
    but main, the kernels, device functions and the runtime's) still makes, each as often
    as the code around it runs: a variant that offloads a function's first loop and leaves
    its main nest on the CPU is not cheaper than one that offloads the nest."""
    total = 0.0
    for name, definition in repeats.functions.items():
        if name == "main" or name.startswith(RUNTIME_PREFIX) or _device_side(definition):
            continue
        for node in cs.walk(definition):
            if node.type == "subscript_expression" and not _is_inner_subscript(node):
                total += HOST * repeats.at(node)
    return total


def _device_side(definition: Node) -> bool:
    """A kernel or a device function (`__host__ __device__` ones run on the GPU here)."""
    return any(child.type in ("__global__", "__device__") for child in definition.children)


def parameter_values(code: str, function: str) -> dict[str, int]:
    """The integer parameters of `function` that every call in `code` passes the same
    known value (the program's sizes, usually), by name."""
    data = kt.encode(code)
    tree = cs.parse(data)
    repeats = _Repeats(tree, data, _constants(tree, data))
    definition = repeats.functions.get(function)
    if definition is None:
        return {}
    found = {}
    for parameter in cs.parameter_nodes(definition):
        name = _parameter_name(parameter, data)
        value = repeats.values.parameter(definition, name) if name else None
        if name and value is not None:
            found[name] = value
    return found


def _launch_values(
    kernel: kt.Kernel, launch: kt.Launch, data: bytes, values: _Values
) -> dict[str, int]:
    """The kernel's parameters a launch passes known integers (trip counts, sizes)."""
    return _by_parameter(kernel, launch, data, values.of)


def _by_parameter(
    kernel: kt.Kernel, launch: kt.Launch, data: bytes, value_of: Callable[[Node], int | None]
) -> dict[str, int]:
    """Each kernel parameter's value, `value_of` its launch argument, where it has one."""
    arguments = launch.call.child_by_field_name("arguments")
    given = arguments.named_children if arguments is not None else []
    names = [_parameter_name(p, data) for p in cs.parameter_nodes(kernel.node)]
    found = {}
    for name, argument in zip(names, given, strict=False):
        value = value_of(argument) if name else None
        if name and value is not None:
            found[name] = value
    return found


def rank_agreement(pairs: Iterable[tuple[float, float]]) -> float | None:
    """Spearman's rank correlation of (predicted, measured) pairs (ties get their mean
    rank); None with fewer than three pairs or when either side is constant."""
    pairs = list(pairs)
    if len(pairs) < 3:
        return None
    predicted = _ranks([p for p, _ in pairs])
    measured = _ranks([m for _, m in pairs])
    mean = (len(pairs) + 1) / 2
    covariance = sum((a - mean) * (b - mean) for a, b in zip(predicted, measured, strict=True))
    spread = math.sqrt(
        sum((a - mean) ** 2 for a in predicted) * sum((b - mean) ** 2 for b in measured)
    )
    return covariance / spread if spread else None


def _ranks(values: Sequence[float]) -> list[float]:
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for position in range(start, end + 1):
            ranks[order[position]] = (start + end) / 2 + 1
        start = end + 1
    return ranks


# -- the kernels ------------------------------------------------------------------------


class _Kernel:
    """The traffic of one launch of a kernel, per thread of a one-output-per-thread grid."""

    def __init__(
        self,
        kernel: kt.Kernel,
        tree: Tree,
        data: bytes,
        constants: dict[str, int],
        block: dict[str, int] | None = None,
    ):
        self.data = data
        self.constants = constants
        self.block = block or {}  # the launch's threads per block along x, y, z
        body = kernel.node.child_by_field_name("body")
        self.tree = tree
        self.shared = _shared_arrays(body, data) if body is not None else set()
        self.registers = _register_arrays(body, data) if body is not None else set()
        self.seen: set[tuple[int, str]] = set()  # (enclosing loop, access) counted already
        self.units = self.good = 0.0
        # loops dealing a block tile's rows to its threads: a thread's share, not outputs
        tiled = body is not None and _block_tiled(body, data)
        self.dealt = {
            n.start_byte: step
            for n in (cs.walk(body) if tiled and body is not None else ())
            if n.type in _LOOPS
            and _grid_stride(n, data) is not None
            and (step := _dealt(n, data, self.block, self._value_of_text)) is not None
        }
        # the outputs of one launch: the trip counts of the grid levels, the deepest nest
        self.outputs = (
            _grid_outputs(body, data, constants, tree, frozenset(self.dealt))
            if body is not None
            else 1.0
        )
        if body is not None:
            self._walk(body, 1.0)

    def _walk(self, node: Node, weight: float) -> None:
        """Add the traffic under `node`, each access counted `weight` times."""
        kind = node.type
        if kind in _LOOPS:
            grid = _grid_stride(node, self.data)
            if node.start_byte in self.dealt:  # a thread's share of a tile's rows
                bound = _bound(node, self.data, self.constants, self.tree)
                weight *= bound / self.dealt[node.start_byte]
            elif grid is not None:  # a grid level: each thread runs it once per output...
                weight /= grid  # ...and covers `grid` outputs where it strides that far
                weight *= self._threads_per_output(node)
            elif not _retry_loop(node, self.data):  # a compare-and-swap mostly succeeds at once
                weight *= _trips(node, self.data, self.constants, self.tree)
        elif kind == "if_statement":
            self._branches(node, weight)
            return
        elif kind == "call_expression" and (cs.call_name(node, self.data) or "").startswith(
            "atomic"
        ):
            self.units += ATOMIC * weight
        elif kind == "subscript_expression" and not _is_inner_subscript(node):
            self._access(node, weight)
        for child in node.children:
            self._walk(child, weight)

    def _value_of_text(self, text: str) -> int | None:
        return _literal(text, self.constants)

    def _threads_per_output(self, loop: Node) -> float:
        """A loop over block tiles (`row = blockIdx.y * 64; ...; row += 64 * gridDim.y`)
        runs once per thread of the block along y for 64 outputs: each thread's traffic
        counts for 64 / 16 outputs there (its micro-tile's rows), so per output it is
        16 / 64 of it. 1 for any other grid level, or where the block's shape is not
        given."""
        tile = _block_tile(loop, self.data)
        threads = self.block.get(tile[0]) if tile else None
        return threads / tile[1] if tile and threads else 1.0

    def _branches(self, node: Node, weight: float) -> None:
        """An if costs its condition, its branch when it has one (a guard is mostly
        taken), and the mean of its two branches when it has two (nothing says which the
        threads take: a main path and its remainder tail, say)."""
        condition = node.child_by_field_name("condition")
        if condition is not None:
            self._walk(condition, weight)
        branches = [
            branch
            for branch in (node.child_by_field_name(n) for n in ("consequence", "alternative"))
            if branch is not None
        ]
        if condition is not None and _UNLIKELY.search(cs.text(condition, self.data)):
            # `if (__builtin_expect(c, 0))`: the code says it is rarely taken (gemm_tiling's
            # scalar loads where a vector's address is not aligned): its else alone counts
            branches = branches[1:]
            if not branches:
                return
        for branch in branches:
            part = copy.copy(self)
            part.seen = set(self.seen)
            part.units = part.good = 0.0
            part._walk(branch, weight)
            self.units += part.units / len(branches)
            self.good += part.good / len(branches)

    def _access(self, node: Node, weight: float) -> None:
        array = _array_name(node, self.data)
        if array is None:
            return
        # the same element read again in one iteration is a register's (the compiler keeps
        # it): counted once per loop body
        loop = node.parent
        while loop is not None and loop.type not in _LOOPS:
            loop = loop.parent
        key = (loop.start_byte if loop is not None else -1, kn.compact(cs.text(node, self.data)))
        if key in self.seen:
            return
        self.seen.add(key)
        if array in self.registers:
            return  # a micro-tile or a fragment: registers, no memory traffic
        if array in self.shared:
            self.units += SHARED * weight
            return
        width = _vector_start(node, self.data, self.tree)
        if width:  # each lane reads `width` contiguous elements, the warp a contiguous run
            self.units += width * weight
            self.good += width * weight
            return
        cost = _access_weight(node, self.data, self.tree)
        self.units += cost * weight
        if cost <= 1.0:
            self.good += cost * weight


def _retry_loop(loop: Node, data: bytes) -> bool:
    """A `while` around an atomicCAS: an atomic min/max, retried only under contention."""
    return loop.type == "while_statement" and "atomicCAS(" in cs.text(loop, data)


def _grid_outputs(
    node: Node,
    data: bytes,
    constants: dict[str, int],
    tree: Tree,
    per_thread: frozenset[int] = frozenset(),
) -> float:
    """The iterations of the grid levels under `node` (their trip counts multiplied along
    the deepest nest of them): how many outputs one launch computes. Loops in `per_thread`
    (their start bytes: loops dealing a tile's rows to the block's threads) are not
    levels."""
    inner = max(
        (_grid_outputs(child, data, constants, tree, per_thread) for child in node.named_children),
        default=1.0,
    )
    if node.type in _LOOPS and node.start_byte not in per_thread:
        if _grid_stride(node, data) is not None:
            return _bound(node, data, constants, tree) * inner
    return inner


def _dealt(
    loop: Node, data: bytes, block: dict[str, int], value_of: Callable[[str], int | None]
) -> int | None:
    """Inside block tiles, a loop that deals values to the block's threads: `for (r =
    threadIdx.y; r < 32; r += 8)` over 8 threads along y, or over the flat thread index
    `for (s = threadIdx.y * blockDim.x + threadIdx.x; s < 374; s += 256)` over 32 x 8:
    the threads together take every value, each one value in `step`. Its step, where the
    loop is one; None for any other."""
    init = loop.child_by_field_name("initializer")
    start = kn.compact(cs.text(init, data)) if init is not None else ""
    dim = re.search(r"=threadIdx\.([xyz]);?$", start)
    flat = re.search(r"=threadIdx\.y\*blockDim\.x\+threadIdx\.x;?$", start)
    if dim:
        threads = block.get(dim.group(1))
    else:
        threads = block.get("x", 0) * block.get("y", 0) if flat else None
    step = _update_step(loop, data, value_of)
    return step if threads and step == threads else None


def _start(init: Node) -> Node | None:
    """A for loop's first value: `int k = E` or `k = E`'s E."""
    if init.type == "declaration":
        return kn.initializer(init)
    return init.child_by_field_name("right") if init.type == "assignment_expression" else None


def _literal(text: str, constants: dict[str, int]) -> int | None:
    """A number or a file constant's value."""
    return int(text) if text.isdigit() else constants.get(text)


def _update_step(loop: Node, data: bytes, value_of: Callable[[str], int | None]) -> int | None:
    """`v += c`'s c, where `value_of` knows it."""
    update = loop.child_by_field_name("update")
    text = kn.compact(cs.text(update, data)) if update is not None else ""
    match = re.fullmatch(r"\w+\+=(.+)", text)
    return value_of(match.group(1)) if match else None


def _bound(loop: Node, data: bytes, constants: dict[str, int], tree: Tree) -> float:
    """A grid level's trip count: the whole grid covers [0, bound), so its bound when the
    text gives it, else UNKNOWN_TRIPS."""
    condition = loop.child_by_field_name("condition")
    right = condition.child_by_field_name("right") if condition is not None else None
    if right is None:
        return UNKNOWN_TRIPS
    bound = kn.evaluate(right, data, constants)
    if bound is None:
        bound = _clamped(right, tree, data, constants)
    return float(max(1, bound)) if bound is not None else UNKNOWN_TRIPS


def _elements(
    copy: Node, data: bytes, constants: dict[str, int], values: _Values | None = None
) -> float:
    """The elements a cudaMemcpy moves: its size argument with `sizeof` as 1, each name
    whose value the text does not give as UNKNOWN_TRIPS (`n * n * sizeof(float)`: 1024^2)."""
    arguments = copy.child_by_field_name("arguments")
    given = arguments.named_children if arguments is not None else []
    if cs.call_name(copy, data) == "cudaMemcpy2D":  # (dst, dpitch, src, spitch, width, rows)
        if len(given) > 5:
            return _size(given[4], data, constants, values) * _size(
                given[5], data, constants, values
            )
        return UNKNOWN_TRIPS
    # cudaMemcpy(dst, src, bytes, kind), cudaMemcpyAsync(...), cudaMemcpyToSymbol(s, src, bytes)
    return _size(given[2], data, constants, values) if len(given) > 2 else UNKNOWN_TRIPS


def _size(
    node: Node, data: bytes, constants: dict[str, int], values: _Values | None = None
) -> float:
    kind = node.type
    if kind == "sizeof_expression":
        return 1.0
    if kind == "number_literal":
        value = kn.evaluate(node, data, constants)
        return float(value) if value is not None else 1.0
    if kind == "identifier":
        known = constants.get(cs.text(node, data))
        if known is None and values is not None:
            known = values.of(node)
        return float(known) if known is not None else UNKNOWN_TRIPS
    if kind in ("parenthesized_expression", "cast_expression"):
        inner = node.child_by_field_name("value") if kind == "cast_expression" else None
        inner = inner or (node.named_children[-1] if node.named_children else None)
        return _size(inner, data, constants, values) if inner is not None else UNKNOWN_TRIPS
    if kind == "binary_expression":
        operator = cs.text(node.child_by_field_name("operator") or node, data)
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if left is None or right is None:
            return UNKNOWN_TRIPS
        a, b = _size(left, data, constants, values), _size(right, data, constants, values)
        if operator == "*":
            return a * b
        if operator == "/":
            return a / b if b else a
        return max(a, b)  # a sum or a difference: the larger term
    if kind == "conditional_expression":
        # a size guarded by its loop running at all (schedule's `(n >= 2) ? (...) : 0`): the
        # branch taken where the text fixes the condition, else the size where it runs
        condition = node.child_by_field_name("condition")
        lookup = (
            values.of if values is not None else (lambda name: constants.get(cs.text(name, data)))
        )
        holds = _evaluate(condition, data, lookup) if condition is not None else None
        branch = node.child_by_field_name("alternative" if holds == 0 else "consequence")
        return _size(branch, data, constants, values) if branch is not None else UNKNOWN_TRIPS
    return UNKNOWN_TRIPS


def _grid_stride(loop: Node, data: bytes) -> float | None:
    """For a loop over the grid (its start reads blockIdx or threadIdx): how many outputs
    apart a thread's iterations are, in units of the grid (the `4` of `+= blockDim.y *
    gridDim.y * 4`; 1 for offload's levels). None for any other loop."""
    init = loop.child_by_field_name("initializer")
    if init is None or not re.search(r"\b(?:blockIdx|threadIdx)\.", cs.text(init, data)):
        return None
    update = cs.text(loop.child_by_field_name("update") or init, data)
    factor = re.search(r"gridDim\.[xyz]\s*\*\s*(\d+)", update)
    return float(factor.group(1)) if factor else 1.0


def _lambdas(body: Node, data: bytes) -> dict[str, Node]:
    """`auto name = [...](...) { ... };` in a kernel: the body of each, by name."""
    found = {}
    for node in cs.walk(body):
        if node.type != "init_declarator":
            continue
        value = node.child_by_field_name("value")
        declarator = node.child_by_field_name("declarator")
        if value is None or value.type != "lambda_expression" or declarator is None:
            continue
        lambda_body = value.child_by_field_name("body")
        if lambda_body is not None and declarator.type == "identifier":
            found[cs.text(declarator, data)] = lambda_body
    return found


def _in_lambda(node: Node) -> bool:
    """Whether `node` lies in a lambda's body (inside the kernel being walked)."""
    current = node.parent
    while current is not None and current.type != "function_definition":
        if current.type == "lambda_expression":
            return True
        current = current.parent
    return False


def _block_strided(loop: Node, data: bytes) -> bool:
    """A loop each block runs whole, its threads dealt its values: it starts at the
    thread's index in the block and steps by the block's size (`for (k = threadIdx.x; k <
    n; k += blockDim.x)`)."""
    init = loop.child_by_field_name("initializer")
    update = loop.child_by_field_name("update")
    if init is None or update is None:
        return False
    start, step = cs.text(init, data), cs.text(update, data)
    return (
        "blockIdx." not in start and "gridDim." not in step and bool(re.search(r"blockDim\.", step))
    )


def _block_level(loop: Node, data: bytes) -> bool:
    """A loop over block tiles: its start reads blockIdx but not threadIdx."""
    init = loop.child_by_field_name("initializer")
    text = cs.text(init, data) if init is not None else ""
    return bool(re.search(r"\bblockIdx\.", text)) and not re.search(r"\bthreadIdx\.", text)


def _block_tiled(body: Node, data: bytes) -> bool:
    """Whether a kernel loops over block tiles anywhere in `body`."""
    return any(node.type in _LOOPS and _block_level(node, data) for node in cs.walk(body))


def _block_tile(loop: Node, data: bytes) -> tuple[str, int] | None:
    """A loop over block tiles' dimension and tile: `row = blockIdx.y * 64LL`: ("y", 64)."""
    if not _block_level(loop, data):
        return None
    init = loop.child_by_field_name("initializer")
    text = kn.compact(cs.text(init, data)) if init is not None else ""
    tile = re.search(r"\bblockIdx\.([xyz])\*(\d+)", text)
    return (tile.group(1), int(tile.group(2))) if tile and int(tile.group(2)) else None


def _trips(
    loop: Node,
    data: bytes,
    constants: dict[str, int],
    tree: Tree | None = None,
    values: _Values | None = None,
) -> float:
    """A loop's trip count: exact for `for (v = a; v < b; v += c)` with constant a, b and
    c (b may be a local clamped to a constant: `n = r < 16 ? r : 16`); UNKNOWN_TRIPS / c
    with an unknown bound; UNKNOWN_TRIPS for any other loop."""
    if loop.type != "for_statement":
        return UNKNOWN_TRIPS
    init = loop.child_by_field_name("initializer")
    condition = loop.child_by_field_name("condition")
    step = _update_step(loop, data, lambda text: _literal(text, constants)) or 1
    first = _value_assigned(init, data, constants)
    bound = None
    if condition is not None and condition.type == "binary_expression":
        operator = cs.text(condition.child_by_field_name("operator") or condition, data)
        right = condition.child_by_field_name("right")
        if operator in ("<", "<=") and right is not None:
            bound = kn.evaluate(right, data, constants)
            if bound is None and values is not None:
                bound = values.of(right)
            if bound is None and tree is not None:
                bound = _clamped(right, tree, data, constants)
            if bound is not None and operator == "<=":
                bound += 1
    if first is not None and bound is not None:
        return max(1.0, (bound - first) / max(step, 1))
    return max(1.0, UNKNOWN_TRIPS / max(step, 1))


def _condition(loop: Node) -> Node | None:
    """A for loop's condition without the parentheses around it: isl's generated code
    writes `for (int k = 0; (k < nk); k += 1)`. (The roofline's count reads it so; the
    search's price, `_trips` and `_bound`, still reads such a loop as UNKNOWN_TRIPS: its
    weights were fitted that way, so changing it waits for a measured refit.)"""
    condition = loop.child_by_field_name("condition")
    while condition is not None and condition.type == "parenthesized_expression":
        condition = condition.named_children[0] if condition.named_children else None
    return condition


def _clamped(bound: Node, tree: Tree, data: bytes, constants: dict[str, int]) -> int | None:
    """The constant a local bound is clamped to: the constant arm of the conditional
    expression it is declared with (`count = rest < 16 ? rest : 16` -> 16)."""
    if bound.type != "identifier":
        return None
    value = _Expansion(tree, data).initializer(cs.text(bound, data), bound)
    while value is not None and value.type in ("parenthesized_expression", "cast_expression"):
        inner = value.child_by_field_name("value") if value.type == "cast_expression" else None
        value = inner or (value.named_children[0] if value.named_children else None)
    if value is None or value.type != "conditional_expression":
        return None
    test = value.child_by_field_name("condition")
    then, other = value.child_by_field_name("consequence"), value.child_by_field_name("alternative")
    if test is None or test.type != "binary_expression" or then is None or other is None:
        return None
    operator = cs.text(test.child_by_field_name("operator") or test, data)
    left, right = test.child_by_field_name("left"), test.child_by_field_name("right")
    if left is None or right is None:
        return None
    spelled = [kn.compact(cs.text(n, data)) for n in (left, right, then, other)]
    # the smaller of the two: `a < b ? a : b` or `a > b ? b : a`
    smaller = (operator in ("<", "<=") and spelled[2:] == spelled[:2]) or (
        operator in (">", ">=") and spelled[2:] == spelled[1::-1]
    )
    if not smaller:
        return None
    known = [kn.evaluate(side, data, constants) for side in (left, right)]
    return min((k for k in known if k is not None), default=None)


def _value_assigned(init: Node | None, data: bytes, constants: dict[str, int]) -> int | None:
    value = _start(init) if init is not None else None
    return kn.evaluate(value, data, constants) if value is not None else None


def _constants(tree: Tree, data: bytes) -> dict[str, int]:
    """File-scope integer constants: `#define N 1024`, `#define N (1 << 20)`, `const int
    N = 1024;`, in the branches of `#ifdef`/`#ifndef`/`#if` the preprocessor takes (with
    no -D flags: sizes are usually chosen this way, `#ifdef SMALL ... #else ...`); an `#if`
    whose condition the text does not decide takes its first branch."""
    found: dict[str, int] = {}
    defined: set[str] = set()
    _visit_file_scope(tree.root_node.children, data, found, defined)
    return found


_CONDITIONALS = ("preproc_ifdef", "preproc_if", "preproc_elif")
_ALTERNATIVES = ("preproc_else", "preproc_elif", "preproc_elifdef")


def _visit_file_scope(
    nodes: Sequence[Node], data: bytes, found: dict[str, int], defined: set[str]
) -> None:
    for node in nodes:
        kind = node.type
        if kind in ("preproc_def", "preproc_function_def"):
            name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
            if name is None:
                continue
            defined.add(cs.text(name, data))
            number = _macro_value(value, data, found) if kind == "preproc_def" else None
            if number is not None:
                found[cs.text(name, data)] = number
        elif kind in _CONDITIONALS:
            alternative = node.child_by_field_name("alternative")
            guard = node.child_by_field_name("name" if kind == "preproc_ifdef" else "condition")
            body = [
                child
                for child in node.named_children
                if child not in (guard, alternative) and child.type not in _ALTERNATIVES
            ]
            if _branch_taken(node, guard, data, found, defined):
                _visit_file_scope(body, data, found, defined)
            elif alternative is not None:
                branch = alternative.named_children
                if alternative.type in _CONDITIONALS:
                    branch = [alternative]
                _visit_file_scope(branch, data, found, defined)
        elif kind == "declaration" and "const" in cs.text(node, data).split("=")[0]:
            for declarator in node.children:
                if declarator.type != "init_declarator":
                    continue
                name = declarator.child_by_field_name("declarator")
                value = declarator.child_by_field_name("value")
                number = kn.evaluate(value, data, found) if value is not None else None
                if name is not None and name.type == "identifier" and number is not None:
                    found[cs.text(name, data)] = number


def _branch_taken(
    node: Node, guard: Node | None, data: bytes, found: dict[str, int], defined: set[str]
) -> bool:
    if guard is None:
        return True
    if node.type == "preproc_ifdef":
        negated = cs.text(node.children[0], data).replace(" ", "") == "#ifndef"
        return (cs.text(guard, data) in defined) != negated
    known = {**found, **{name: 0 for name in defined if name not in found}}

    def lookup(identifier: Node) -> int | None:
        if identifier.parent is not None and identifier.parent.type == "preproc_defined":
            return int(cs.text(identifier, data) in defined)
        return known.get(cs.text(identifier, data))

    value = _evaluate(guard, data, lookup)
    return value is None or value != 0


def _macro_value(value: Node | None, data: bytes, found: dict[str, int]) -> int | None:
    """The integer a macro's body spells (`1024`, `(1 << 20)`, `N / 2`), or None."""
    if value is None:
        return None
    text = b"int cudaify_value = " + kt.encode(cs.text(value, data)) + b";"
    parsed = cs.parse(text)
    init = next((n for n in cs.walk(parsed.root_node) if n.type == "init_declarator"), None)
    expression = init.child_by_field_name("value") if init is not None else None
    if expression is None or parsed.root_node.has_error:
        return None
    return _evaluate(expression, text, lambda name: found.get(cs.text(name, text)))


def _evaluate(node: Node, data: bytes, lookup) -> int | None:  # type: ignore[no-untyped-def]
    """The integer value of an integer expression, names read through `lookup`, offload's
    `cudaify_trips(first, bound, step, inclusive)` computed as the runtime does."""

    def trips(call: Node) -> int | None:
        if cs.call_name(call, data) != "cudaify_trips":
            return None
        arguments = call.child_by_field_name("arguments")
        given = arguments.named_children if arguments is not None else []
        known = [_evaluate(argument, data, lookup) for argument in given]
        if len(known) != 4 or any(k is None for k in known):
            return None
        first, bound, step, inclusive = (int(k or 0) for k in known)
        span = (bound - first if step > 0 else first - bound) + (1 if inclusive else 0)
        stride = abs(step) or 1
        return (span + stride - 1) // stride if span > 0 else 0

    return kn.evaluate_with(node, data, lookup, trips)


def _shared_arrays(body: Node, data: bytes) -> set[str]:
    found = set()
    for node in cs.walk(body):
        if node.type == "declaration" and "__shared__" in cs.text(node, data).split("[")[0]:
            found |= {d.name for d in cs.declared_names(node, data, "local")}
    return found


REGISTER_ELEMENTS = 64  # the largest local array priced as registers (an 8 x 8 micro-tile)


def _register_arrays(body: Node, data: bytes) -> set[str]:
    """The kernel's own arrays (not `__shared__`) of constant sizes and at most
    REGISTER_ELEMENTS elements: gemm_tiling's micro-tile of outputs and its fragments,
    which nvcc keeps in registers (the loops over them are unrolled)."""
    found = set()
    for node in cs.walk(body):
        if node.type != "declaration" or "__shared__" in cs.text(node, data).split("[")[0]:
            continue
        for declarator in node.children_by_field_name("declarator"):
            sizes: list[str] = []
            current = declarator
            while current is not None and current.type == "array_declarator":
                size = current.child_by_field_name("size")
                sizes.append(cs.text(size, data).strip() if size is not None else "")
                current = current.child_by_field_name("declarator")
            if not sizes or current is None or current.type != "identifier":
                continue
            if all(s.isdigit() for s in sizes) and math.prod(map(int, sizes)) <= REGISTER_ELEMENTS:
                found.add(cs.text(current, data))
    return found


def _is_inner_subscript(node: Node) -> bool:
    """`a[i]` inside `a[i][j]`: the outer subscript is the access."""
    parent = node.parent
    return (
        parent is not None
        and parent.type == "subscript_expression"
        and parent.child_by_field_name("argument") == node
    )


def _array_name(node: Node, data: bytes) -> str | None:
    current: Node | None = node
    while current is not None and current.type == "subscript_expression":
        current = current.child_by_field_name("argument")
    if current is None:
        return None
    if current.type == "field_expression":
        current = current.child_by_field_name("argument")
    return cs.text(current, data) if current is not None and current.type == "identifier" else None


THREAD_X = "threadIdx.x"
_EXPANSION_DEPTH = 8  # local definitions followed from a subscript back to threadIdx.x
_UNLIKELY = re.compile(r"^\(?\s*__builtin_expect\s*\(.*,\s*0[lL]*\s*\)\s*\)?$", re.S)
# a vector type's lanes: float4, double2, int4, longlong2...
_VECTOR = re.compile(r"(?:u?char|u?short|u?int|u?long|u?longlong|float|double)([1-4])")


def _vector_start(node: Node, data: bytes, tree: Tree) -> int:
    """W where `node`, an element `a[...]`, is the start of a vector each lane reads: its
    address initializes a pointer the kernel reads through `reinterpret_cast<const
    VEC *>(pointer)` with VEC a W-lane vector type, and consecutive lanes' elements lie W
    apart (gemm_tiling's float4 / double2 loads: one 16-byte load a lane, the warp's run
    contiguous). 0 for any other access."""
    parent = node.parent
    while parent is not None and parent.type == "parenthesized_expression":
        parent = parent.parent
    if (
        parent is None
        or parent.type != "pointer_expression"
        or not cs.text(parent, data).startswith("&")
    ):
        return 0
    declarator = parent.parent
    if declarator is None or declarator.type != "init_declarator":
        return 0
    pointer = declarator.child_by_field_name("declarator")
    while pointer is not None and pointer.type == "pointer_declarator":
        pointer = pointer.child_by_field_name("declarator")
    if pointer is None or pointer.type != "identifier":
        return 0
    scope = cs.enclosing_function(declarator) or tree.root_node
    name = re.escape(cs.text(pointer, data))
    casts = re.findall(
        rf"reinterpret_cast\s*<\s*const\s+(\w+)\s*\*\s*>\s*\(\s*{name}\s*\)", cs.text(scope, data)
    )
    widths = {int(m.group(1)) for m in (_VECTOR.fullmatch(c) for c in casts) if m}
    if len(widths) != 1:
        return 0
    (width,) = widths
    index = _last_index(node)
    polynomial = _Expansion(tree, data).of(index, 0) if index is not None else None
    stride = kn.derivative(polynomial, THREAD_X) if polynomial is not None else None
    return width if width > 1 and stride == {(): width} else 0


def _access_weight(node: Node, data: bytes, tree: Tree) -> float:
    """1 coalesced (unit stride in threadIdx.x), UNIFORM when the warp reads one address
    (no dependence on threadIdx.x), STRIDED otherwise (another stride, a gather). The
    subscript is followed through the kernel's local definitions (`int j = (int)t_j;`,
    `t_j = blockIdx.x * blockDim.x + threadIdx.x`) to threadIdx.x."""
    index = _last_index(node)
    if index is None:
        return UNIFORM
    if any(_mentions_thread_x(outer, tree, data) for outer in _outer_indices(node)):
        return STRIDED  # `A[i][j]` with i the thread's: each lane reads its own row
    polynomial = _Expansion(tree, data).of(index, 0)
    if polynomial is None:
        # not a polynomial (a gather through another array, a division): coalesced only by
        # luck, unless it does not involve the thread's index at all
        return STRIDED if _mentions_thread_x(index, tree, data) else UNIFORM
    stride = kn.derivative(polynomial, THREAD_X)
    if stride is None:
        return STRIDED
    if not stride:
        return UNIFORM
    return 1.0 if stride in ({(): 1}, {(): -1}) else STRIDED


class _Expansion:
    """An index expression as a polynomial over the names it reads, each local variable
    replaced by its initializer (threadIdx.x, blockIdx.x... are names of their own)."""

    def __init__(self, tree: Tree, data: bytes):
        self.tree = tree
        self.data = data

    def of(self, node: Node, depth: int) -> kn.Poly | None:
        kind = node.type
        if kind == "field_expression":
            return {(kn.compact(cs.text(node, self.data)),): 1}
        if kind == "identifier":
            name = cs.text(node, self.data)
            value = self.initializer(name, node) if depth < _EXPANSION_DEPTH else None
            return self.of(value, depth + 1) if value is not None else {(name,): 1}
        if kind in ("parenthesized_expression", "cast_expression"):
            inner = node.child_by_field_name("value") if kind == "cast_expression" else None
            inner = inner or (node.named_children[0] if node.named_children else None)
            return self.of(inner, depth) if inner is not None else None
        if kind == "binary_expression":
            operator = cs.text(node.child_by_field_name("operator") or node, self.data)
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            warp = _warp_arithmetic(operator, right, self.data)
            if warp == "warp" and left is not None:
                # `(blockIdx.x * blockDim.x + threadIdx.x) / 32`: one value for a warp
                return {(kn.compact(cs.text(node, self.data)),): 1}
            if warp == "lane" and left is not None:
                return self.of(left, depth)  # `threadIdx.x % 32`: side by side in a warp
            if operator not in ("+", "-", "*") or left is None or right is None:
                return None
            a, b = self.of(left, depth), self.of(right, depth)
            if a is None or b is None:
                return None
            if operator == "*":
                return kn.multiplied(a, b)
            return kn.added(a, b if operator == "+" else kn.scaled(b, -1))
        return kn.polynomial(node, self.data)

    def initializer(self, name: str, use: Node) -> Node | None:
        """The value `name` is declared with, where it is a local of the kernel."""
        declared = cs.visible(self.tree, self.data, name, use.start_byte)
        if declared is None or declared.scope not in ("local", "header"):
            return None
        node = cs.node_at(self.tree, declared.start, "declaration")
        for child in cs.walk(node) if node is not None else ():
            if child.type != "init_declarator":
                continue
            target = child.child_by_field_name("declarator")
            if target is not None and cs.text(target, self.data) == name:
                return child.child_by_field_name("value")
        return None


def _warp_arithmetic(operator: str, right: Node | None, data: bytes) -> str | None:
    """`x / 32k` is one value across a warp (`warp`), `x % 32k` steps as x does within it
    (`lane`): warps start at multiples of 32 threads."""
    value = _literal(cs.text(right, data), {}) if right is not None else None
    if value is None or value <= 0 or value % 32:
        return None
    return {"/": "warp", "%": "lane"}.get(operator)


def _mentions_thread_x(index: Node, tree: Tree, data: bytes) -> bool:
    expansion = _Expansion(tree, data)
    for node in cs.walk(index):
        if node.type == "identifier" or node.type == "field_expression":
            polynomial = expansion.of(node, 0)
            if polynomial is None or any(THREAD_X in monomial for monomial in polynomial):
                return True
    return False


def _outer_indices(node: Node) -> list[Node]:
    """The subscripts before the last one (`i` of `A[i][j]`): rows, planes."""
    found = []
    inner = node.child_by_field_name("argument")
    while inner is not None and inner.type == "subscript_expression":
        index = _last_index(inner)
        if index is not None:
            found.append(index)
        inner = inner.child_by_field_name("argument")
    return found


def _last_index(node: Node) -> Node | None:
    """The subscript of the outermost `[...]`: the one that walks contiguous memory."""
    index = node.child_by_field_name("index") or node.child_by_field_name("indices")
    if index is not None and index.type == "subscript_argument_list":
        children = index.named_children
        return children[-1] if children else None
    return index


# -- the host: how often a launch or a copy runs ----------------------------------------


class _Values:
    """Integer values of host expressions where the text fixes them: file constants,
    a local by its initializer (when nothing assigns it again), a parameter by the value
    every call passes. A program's sizes usually reach the function that copies and
    launches as a parameter, from main's `int n = N;`."""

    def __init__(self, tree: Tree, data: bytes, constants: dict[str, int], calls):  # type: ignore[no-untyped-def]
        self.tree, self.data, self.constants, self.calls = tree, data, constants, calls
        self._parameters: dict[tuple[int, str], int | None] = {}
        self._assignments: dict[int, set[str]] = {}  # function -> the names it assigns

    def of(self, node: Node | None, depth: int = 0) -> int | None:
        if node is None or depth > _CALL_DEPTH:
            return None
        return _evaluate(node, self.data, lambda name: self._name(name, depth))

    def _name(self, identifier: Node, depth: int) -> int | None:
        name = cs.text(identifier, self.data)
        declared = cs.visible(self.tree, self.data, name, identifier.start_byte)
        if declared is None or declared.scope == "global":
            return self.constants.get(name)
        function = cs.enclosing_function(identifier)
        if function is None or name in self._assigned(function):
            return None
        if declared.scope == "param":
            return self._parameter(function, name, depth)
        value = _Expansion(self.tree, self.data).initializer(name, identifier)
        return self.of(value, depth + 1)

    def _assigned(self, function: Node) -> set[str]:
        """The names `function` assigns besides their declarations (`n = ...`, `n++`,
        `&n` passed on)."""
        if function.start_byte not in self._assignments:
            self._assignments[function.start_byte] = cs.names_written(function, self.data)
        return self._assignments[function.start_byte]

    def parameter(self, function: Node, name: str) -> int | None:
        """The value every call of `function` passes its parameter `name`, if known."""
        return self._parameter(function, name, 0)

    def _parameter(self, function: Node, name: str, depth: int) -> int | None:
        key = (function.start_byte, name)
        if key in self._parameters:
            return self._parameters[key]
        self._parameters[key] = None  # a call cycle: unknown
        names = [_parameter_name(p, self.data) for p in cs.parameter_nodes(function)]
        callee = cs.function_name(function, self.data)
        values: set[int | None] = set()
        if name in names and callee is not None:
            position = names.index(name)
            for call in self.calls.get(callee, []):
                arguments = call.child_by_field_name("arguments")
                given = arguments.named_children if arguments is not None else []
                values.add(self.of(given[position], depth + 1) if position < len(given) else None)
        value = values.pop() if len(values) == 1 else None
        self._parameters[key] = value
        return value


def _parameter_name(parameter: Node, data: bytes) -> str | None:
    declared = cs.declared_names(parameter, data, "param")
    return declared[0].name if declared else None


class _Repeats:
    """How often a host site runs: the trip counts of the loops around it, within its
    function and around the calls that lead to it (the most repeated call chain, up to
    _CALL_DEPTH functions)."""

    def __init__(self, tree: Tree, data: bytes, constants: dict[str, int]):
        self.data = data
        self.tree = tree
        self.constants = constants
        self.functions = cs.function_nodes(tree, data)
        self.calls: dict[str, list[Node]] = {}
        for name, definition in self.functions.items():
            for node in cs.walk(definition):
                if node.type == "call_expression":
                    callee = cs.call_name(node, data)
                    if callee in self.functions and callee != name:
                        self.calls.setdefault(callee, []).append(node)
        self._function_repeats: dict[str, float] = {}
        self.values = _Values(tree, data, constants, self.calls)

    def copies(self, node: Node) -> float:
        """How often a copy runs: once where the residency runtime (a `cudaify_` function)
        makes it, since it copies an array only when the other side's copy is stale; else
        as often as the code around it runs."""
        function = cs.enclosing_function(node)
        name = cs.function_name(function, self.data) if function is not None else None
        return 1.0 if name and name.startswith(RUNTIME_PREFIX) else self.at(node)

    def at(self, node: Node) -> float:
        function = cs.enclosing_function(node)
        name = cs.function_name(function, self.data) if function is not None else None
        local = self._loops_around(node, function)
        return local * (self._of(name, 0) if name else 1.0)

    def _of(self, function: str, depth: int) -> float:
        if function in self._function_repeats:
            return self._function_repeats[function]
        if depth >= _CALL_DEPTH:
            return 1.0
        self._function_repeats[function] = 1.0  # a call cycle counts once
        repeats = 1.0
        for call in self.calls.get(function, []):
            caller = cs.enclosing_function(call)
            caller_name = cs.function_name(caller, self.data) if caller is not None else None
            around = self._loops_around(call, caller)
            outer = self._of(caller_name, depth + 1) if caller_name else 1.0
            repeats = max(repeats, around * outer)
        self._function_repeats[function] = repeats
        return repeats

    def _loops_around(self, node: Node, function: Node | None) -> float:
        """The product of the trip counts of the loops around `node` in its function."""
        times = 1.0
        current = node.parent
        while current is not None and current != function:
            if current.type in _LOOPS:
                times *= _trips(current, self.data, self.constants, self.tree, self.values)
            current = current.parent
        return times


# -- the work of a launch: bytes and FLOPs for the roofline -----------------------------

# Element sizes of the scalar types kernels index, in bytes (qualifiers dropped)
_ELEMENT_BYTES = {
    "float": 4,
    "double": 8,
    "int": 4,
    "unsigned": 4,
    "unsigned int": 4,
    "int32_t": 4,
    "uint32_t": 4,
    "long": 8,
    "unsigned long": 8,
    "long long": 8,
    "unsigned long long": 8,
    "int64_t": 8,
    "uint64_t": 8,
    "size_t": 8,
    "short": 2,
    "unsigned short": 2,
    "int16_t": 2,
    "uint16_t": 2,
    "char": 1,
    "unsigned char": 1,
    "signed char": 1,
    "int8_t": 1,
    "uint8_t": 1,
    "bool": 1,
    "half": 2,
    "__half": 2,
    "float2": 8,
    "float4": 16,
    "double2": 16,
    "int2": 8,
    "int4": 16,
    "void *": 8,
}
_QUALIFIERS = re.compile(
    r"(?:\b(?:const|volatile|__restrict__|restrict|signed(?= \w)|struct|static|register)\b"
    r"|\b__(?:shared|constant|device|managed)__)"
)
# math functions and the FLOPs each counts (an FMA is a multiply and an add); any other
# call of these families counts 1, which is where a count becomes an estimate
_FLOP_CALLS = {"fmaf": 2, "fma": 2, "__fmaf_rn": 2, "__fma_rn": 2}
_FLOAT_CALL = re.compile(
    r"^(?:__)?(?:sqrt|rsqrt|exp|exp2|expm1|log|log2|log10|log1p|sin|cos|tan|sinh|cosh|tanh|"
    r"asin|acos|atan|atan2|pow|fabs|fmin|fmax|fdiv|fmul|fadd|fsub|dmul|dadd|dsub|ddiv|"
    r"floor|ceil|erf|cbrt|hypot|fma|saturate)(?:f|_rn|f_rn|_rz|_ru|_rd)?$"
)
_FREE_CALLS = frozenset({"fabs", "fabsf", "fmin", "fminf", "fmax", "fmaxf", "floor", "floorf"})
_ARITHMETIC = frozenset({"+", "-", "*", "/"})
_COMPOUND = frozenset({"+=", "-=", "*=", "/="})
_COMPLEX_FLOPS = {"+": 2.0, "-": 2.0, "*": 6.0, "/": 11.0}


@dataclass(frozen=True)
class Work:
    """What one launch of a kernel must do, counted from its text and the values its
    launch passes: `bytes`, its DRAM footprint: per global array the distinct elements
    its reads cover plus those its writes cover (the union of its accesses' index ranges,
    capped by the array's extent; the traffic no cache can save: the roofline's bytes),
    and `flops`, its floating-point additions, subtractions, multiplications and
    divisions (an FMA counts 2, a math function 1). `precision`: "fp64" where any counted
    operation is double, "fp32" where all are float, None where there are none. `exact`
    is False where a count is an estimate: a subscript that is not affine in the loops
    (gathers), a loop of unknown trips (capped by the extent), a union of several
    subscripts of one array, an if with two branches (the larger is counted), a math
    function. `kernel_work` gives no Work where the bytes cannot be counted: an extent,
    a trip count or an element size it needs is not in the text."""

    bytes: float
    flops: float
    precision: str | None
    exact: bool
    flops_known: bool = True  # False where FLOPs lie in a loop of unknown trips


def kernel_work(code: str) -> dict[str, Work]:
    """Per kernel launched in `code`: the work of one launch. A kernel launched from
    several places with different sizes gets their mean weighted by how often each
    place runs (an estimate). A kernel whose threads are not counted by grid-stride
    loops or by a guard on their index (`if (i < n)`) is left out: its extent is the
    launch's shape, which this count does not read."""
    data = kt.encode(widened(code))
    tree = cs.parse(data)
    kernels = {k.name: k for k in kt.kernels(data)}
    launches = _program_launches(data, kernels)
    constants = _constants(tree, data)
    repeats = _Repeats(tree, data, constants)
    extents = _Extents(tree, data, repeats)
    layouts = _Layouts(tree, data)
    sites: dict[str, list[tuple[Work | None, float]]] = {}
    for launch in launches:
        kernel = kernels[launch.kernel]
        bound = _launch_values(kernel, launch, data, repeats.values)
        given = extents.of_launch(kernel, launch)
        block = _block_threads(launch, data, constants, repeats.values.of)
        work = _Counted(kernel, tree, data, {**constants, **bound}, given, block, layouts).work()
        sites.setdefault(launch.kernel, []).append((work, repeats.at(launch.call)))
    scans = [
        (_scan_work(call, tree, data, repeats.values), repeats.at(call))
        for call in _scans(tree, data)
    ]
    if scans:
        sites[LIBRARY_SCAN] = scans
    passes = [
        (_helper_scan_work(call, tree, data, repeats.values, layouts), repeats.at(call))
        for call in _helper_scans(tree, data)
    ]
    if passes:
        sites[HELPER_SCAN] = passes
    # a kernel one of whose launches cannot be counted is not counted
    return {
        name: _mean_work([(work, times) for work, times in found if work is not None])
        for name, found in sites.items()
        if all(work is not None for work, _ in found)
    }


def launched_work(code: str, kernel: str, launches: Sequence[LaunchValues]) -> Work | None:
    """The work of one launch of `kernel` (its name in `code`) from the values its launches
    passed at run time (`launches`, from the event-timed run): each parameter of an
    integer type its value, each pointer the elements from it to its allocation's end
    (the cap `_Extents` reads from the text), the block shape the launch gave. For a
    kernel whose sizes the text does not give (a `std::vector`'s size, a length that
    changes from call to call: `dot(N - lag, ...)`). The launches' mean weighted by their
    counts; None where a launch's work cannot be counted, or without launches."""
    if not launches:
        return None
    data = _specialized(kt.encode(widened(code)), kernel, launches[0].kernel)
    tree = cs.parse(data)
    found = next((k for k in kt.kernels(data) if k.name == kernel), None)
    if found is None or found.node.child_by_field_name("body") is None:
        return None
    constants = _constants(tree, data)
    parameters = _parameter_types(found, tree, data)
    layouts = _Layouts(tree, data)
    sites: list[tuple[Work, float]] = []
    for launch in launches:
        values, extents = _passed(parameters, launch, layouts)
        block = dict(zip("xyz", launch.block, strict=True))
        counted = _Counted(found, tree, data, {**constants, **values}, extents, block, layouts)
        work = counted.work()
        if work is None:
            return None
        sites.append((work, float(launch.count)))
    return replace(_mean_work(sites), exact=False) if len(sites) > 1 else sites[0][0]


def _specialized(data: bytes, kernel: str, reported: str) -> bytes:
    """`data` with the function template `kernel` replaced by the instance the runtime
    reported (`_Z19stencil_step_kernelILi4EfEvPT0_S1_S1_x`: R = 4, T = float), its
    template parameters spelled out in its text, so that its element sizes and trip
    counts are those of the instance; `data` as it is for a kernel that is no template or
    an instance whose arguments this does not read."""
    arguments = _template_arguments(reported, kernel)
    if arguments is None:
        return data
    tree = cs.parse(data)
    for node in cs.walk(tree.root_node):
        if node.type != "template_declaration":
            continue
        definition = next((c for c in node.named_children if c.type == "function_definition"), None)
        if definition is None or cs.function_name(definition, data) != kernel:
            continue
        listed = node.child_by_field_name("parameters")
        names = [_template_parameter(p, data) for p in (listed.named_children if listed else [])]
        if len(names) != len(arguments) or None in names:
            return data
        text = cs.text(definition, data)
        for name, argument in zip(names, arguments, strict=True):
            text = re.sub(rf"\b{re.escape(name or '')}\b", argument, text)
        return data[: node.start_byte] + text.encode() + data[node.end_byte :]
    return data


def _template_parameter(parameter: Node, data: bytes) -> str | None:
    """The name a template parameter declares (`typename T`: T; `int R`: R)."""
    if parameter.type == "type_parameter_declaration":
        names = [c for c in parameter.named_children if c.type == "type_identifier"]
        return cs.text(names[-1], data) if names else None
    if parameter.type == "parameter_declaration":
        declarator = parameter.child_by_field_name("declarator")
        return cs.text(declarator, data) if declarator is not None else None
    return None


# Itanium's builtin types, by their one-letter codes
_MANGLED_TYPES = {
    "b": "bool", "c": "char", "a": "signed char", "h": "unsigned char", "s": "short",
    "t": "unsigned short", "i": "int", "j": "unsigned int", "l": "long",
    "m": "unsigned long", "x": "long long", "y": "unsigned long long", "f": "float",
    "d": "double",
}  # fmt: skip


def _template_arguments(reported: str, kernel: str) -> list[str] | None:
    """The template arguments of a reported instance of `kernel` at file scope
    (`_Z11axpy_kernelIdEvPT_S1_S0_x`: ["double"]), as C++ text: builtin types, types by
    their plain names, integer constants. None for any other name."""
    prefix = f"_Z{len(kernel)}{kernel}I"
    if not reported.startswith(prefix):
        return None
    rest, found = reported[len(prefix) :], []
    while rest and rest[0] != "E":
        literal = re.match(r"L([a-z])(n?)(\d+)E", rest)
        named = re.match(r"(\d+)", rest)
        if literal is not None and literal[1] in _MANGLED_TYPES:
            found.append(("-" if literal[2] else "") + literal[3])
            rest = rest[literal.end() :]
        elif rest[0] in _MANGLED_TYPES:
            found.append(_MANGLED_TYPES[rest[0]])
            rest = rest[1:]
        elif named is not None:
            length = int(named[1])
            found.append(rest[named.end() : named.end() + length])
            rest = rest[named.end() + length :]
        else:
            return None
    return found if rest.startswith("E") and found else None


def _parameter_types(kernel: kt.Kernel, tree: Tree, data: bytes) -> list[cs.Declared | None]:
    """Each parameter of `kernel` as declared, in order (None for one without a name)."""
    body = kernel.node.child_by_field_name("body")
    found: list[cs.Declared | None] = []
    for parameter in cs.parameter_nodes(kernel.node):
        name = _parameter_name(parameter, data)
        declared = cs.visible(tree, data, name, body.start_byte) if name and body else None
        found.append(declared if declared is not None and declared.scope == "param" else None)
    return found


def _passed(
    parameters: Sequence[cs.Declared | None], launch: LaunchValues, layouts: _Layouts
) -> tuple[dict[str, int], dict[str, int]]:
    """The integer values and the pointers' extents (in elements) one recorded launch
    passed, by parameter name."""
    values: dict[str, int] = {}
    extents: dict[str, int] = {}
    for declared, bits, extent in zip(parameters, launch.values, launch.extents, strict=False):
        if declared is None or bits is None:
            continue
        if declared.kind == "scalar" and _plain_type(declared.base) in _INTEGERS:
            size, signed = _INTEGERS[_plain_type(declared.base)]
            bits &= (1 << 8 * size) - 1
            values[declared.name] = (
                bits - (1 << 8 * size) if signed and bits >> (8 * size - 1) else bits
            )
        elif declared.kind in ("pointer", "array") and extent is not None:
            element = _element_bytes(declared.base, layouts)
            if element:
                extents[declared.name] = extent // element
    return values, extents


# integer parameter types: (bytes, signed)
_INTEGERS = {
    **{
        name: (size, True)
        for name, size in (
            ("int", 4),
            ("int32_t", 4),
            ("long", 8),
            ("long long", 8),
            ("long int", 8),
            ("long long int", 8),
            ("int64_t", 8),
            ("ptrdiff_t", 8),
            ("short", 2),
            ("int16_t", 2),
            ("signed char", 1),
            ("int8_t", 1),
        )
    },
    **{
        name: (size, False)
        for name, size in (
            ("unsigned", 4),
            ("unsigned int", 4),
            ("uint32_t", 4),
            ("unsigned long", 8),
            ("unsigned long long", 8),
            ("uint64_t", 8),
            ("size_t", 8),
            ("unsigned short", 2),
            ("uint16_t", 2),
            ("unsigned char", 1),
            ("uint8_t", 1),
            ("bool", 1),
            ("char", 1),
        )
    },
}


# cub's device-wide scans (transforms/scan.py writes them, and so may a model's answer) are
# a library's kernels: the timing reports them by their mangled names (an init kernel and
# one single-pass scan kernel per call), and the roofline places them together under this
# name, with the work of the calls that launch them
LIBRARY_SCAN = "cub::DeviceScan"
# where each scan takes its item count, after (storage, storage_bytes, in, out)
_SCAN_ITEMS = {
    "InclusiveSum": 4,
    "ExclusiveSum": 4,
    "InclusiveScan": 5,
    "ExclusiveScan": 6,
    "InclusiveScanInit": 6,
}
_NO_STORAGE = frozenset({"nullptr", "NULL", "0"})


def _scans(tree: Tree, data: bytes) -> list[Node]:
    """The calls of cub::DeviceScan that launch a scan: a call whose storage is null only
    asks for the storage's size."""
    found = []
    for node in cs.walk(tree.root_node):
        if node.type != "call_expression" or node.child_by_field_name("function") is None:
            continue
        function = kn.compact(cs.text(node.child_by_field_name("function"), data))
        if not function.startswith(f"{LIBRARY_SCAN}::"):
            continue
        arguments = node.child_by_field_name("arguments")
        given = arguments.named_children if arguments is not None else []
        if given and kn.compact(cs.text(_unwrapped(given[0]), data)) not in _NO_STORAGE:
            found.append(node)
    return found


def _scan_work(call: Node, tree: Tree, data: bytes, values: _Values) -> Work | None:
    """What one scan must move: its input read and its output written once each, the
    item count and the element sizes read from the call (None where the text does not
    give them: a ByKey scan, an iterator, an in-place call, an unknown count). Its
    operations are not counted: one per element is far below any GPU's ridge, so a scan
    stands against the bandwidth."""
    count = _scan_count(call, data)
    arguments = call.child_by_field_name("arguments")
    given = arguments.named_children if arguments is not None else []
    items = values.of(count) if count is not None else None
    sizes = [_pointee_bytes(operand, tree, data) for operand in given[2:4]]
    if items is None or None in sizes:
        return None
    return Work(
        bytes=float(items * sum(s for s in sizes if s)), flops=0.0, precision=None, exact=True
    )


def _scan_count(call: Node, data: bytes) -> Node | None:
    """The item count a cub::DeviceScan call passes (None for a form it does not read)."""
    function = kn.compact(cs.text(call.child_by_field_name("function") or call, data))
    position = _SCAN_ITEMS.get(function.rsplit("::", 1)[-1])
    return _argument(call, position) if position is not None else None


def _pointee_bytes(operand: Node, tree: Tree, data: bytes) -> int | None:
    """The element size of the pointer or array `operand` names (`d_in`, `d_x + 1`)."""
    operand = _unwrapped(operand)
    left = operand.child_by_field_name("left")
    while operand.type == "binary_expression" and left is not None:
        operand = _unwrapped(left)
        left = operand.child_by_field_name("left")
    if operand.type != "identifier":
        return None
    declared = cs.visible(tree, data, cs.text(operand, data), operand.start_byte)
    if declared is None or declared.kind not in ("pointer", "array"):
        return None
    return _element_bytes(declared.base)


# the runtime's two-pass scan (transforms/runtime/scan_passes.cuh, which scan writes for
# an affine recurrence): its kernels are generic (the items come from a functor), so the
# roofline places them together under this name with the work of the calls, as it does
# cub's; the position of a call's item count
HELPER_SCAN = "cudaify_scan"
HELPER_SCAN_ITEMS = 2
_HELPER_KERNELS = frozenset({"cudaify_scan_shares", "cudaify_scan_share"})


def _program_launches(data: bytes, kernels: dict[str, kt.Kernel]) -> list[kt.Launch]:
    """The launches of the program's kernels: the runtime's two-pass scan launches its
    own, counted at its calls (`_helper_scans`)."""
    return [
        launch
        for launch in kt.launches(data)
        if launch.kernel in kernels and launch.kernel not in _HELPER_KERNELS
    ]


def _helper_scans(tree: Tree, data: bytes) -> list[Node]:
    """The calls of the runtime's `cudaify_scan` (its template arguments aside)."""
    return [
        node
        for node in cs.walk(tree.root_node)
        if node.type == "call_expression" and cs.call_name(node, data) == HELPER_SCAN
    ]


def _argument(call: Node, position: int) -> Node | None:
    arguments = call.child_by_field_name("arguments")
    given = arguments.named_children if arguments is not None else []
    return given[position] if position < len(given) else None


def _helper_scan_work(
    call: Node, tree: Tree, data: bytes, values: _Values, layouts: _Layouts
) -> Work | None:
    """What one `cudaify_scan(term{...}, store{...}, n, ...)` must move: per item, the
    elements its term functor reads and its store functor writes at the item's index, once
    each (as a cub scan's item is read and its sum written once). None where the count,
    a functor or an element size is not found."""
    items = values.of(_argument(call, HELPER_SCAN_ITEMS))
    per_item = [_functor_bytes(_argument(call, k), tree, data, layouts) for k in (0, 1)]
    if items is None or None in per_item:
        return None
    return Work(
        bytes=float(items * sum(b for b in per_item if b is not None)),
        flops=0.0,
        precision=None,
        exact=True,
    )


def _functor_bytes(argument: Node | None, tree: Tree, data: bytes, layouts: _Layouts) -> int | None:
    """The bytes of the distinct elements `Functor{...}`'s call operator reads or writes
    through its members at an index that depends on the item (its first parameter, or a
    local computed in the operator): `a[i]` counts, `out[-1]` (the same element for every
    item) does not. None where the struct, its operator or a member's element size (a row
    pointer, a type not laid out) is not found."""
    if argument is None or argument.type != "compound_literal_expression":
        return None
    named = argument.child_by_field_name("type")
    if named is None:
        return None
    struct = next(
        (
            n
            for n in cs.walk(tree.root_node)
            if n.type == "struct_specifier"
            and n.child_by_field_name("body") is not None
            and cs.text(n.child_by_field_name("name") or n, data) == cs.text(named, data)
        ),
        None,
    )
    if struct is None:
        return None
    # pointer members by their element type; a member of another shape (a row pointer,
    # an array) by None: subscripted, it leaves the functor uncounted. Scalars never are.
    members: dict[str, str | None] = {}
    operator: Node | None = None
    for field in struct.child_by_field_name("body").named_children:
        if field.type == "field_declaration":
            base = field.child_by_field_name("type")
            for declarator in field.children_by_field_name("declarator"):
                if declarator.type == "field_identifier":
                    continue
                name = next((n for n in cs.walk(declarator) if n.type == "field_identifier"), None)
                if name is None:
                    return None
                plain = declarator.type == "pointer_declarator" and base is not None
                members[cs.text(name, data)] = cs.text(base, data) if plain else None
        elif field.type == "function_definition":
            operator = field
    body = operator.child_by_field_name("body") if operator is not None else None
    if operator is None or body is None:
        return None
    varying = {
        cs.text(n, data)
        for n in cs.walk(operator)
        if n.type == "identifier"
        and n.parent is not None
        and n.parent.type in ("parameter_declaration", "init_declarator")
    }
    accessed: dict[tuple[str, str], int] = {}
    for node in cs.walk(body):
        if node.type != "subscript_expression":
            continue
        array = node.child_by_field_name("argument")
        index = node.child_by_field_name("index") or node.child_by_field_name("indices")
        if array is None or index is None or cs.text(array, data) not in members:
            continue
        if not {cs.text(n, data) for n in cs.identifiers_in(index)} & varying:
            continue
        element = members[cs.text(array, data)]
        size = _element_bytes(element, layouts) if element is not None else None
        if size is None:
            return None
        accessed[(cs.text(array, data), cs.text(index, data))] = size
    return sum(accessed.values())


def _block_threads(
    launch: kt.Launch,
    data: bytes,
    constants: dict[str, int],
    value_of: Callable[[Node], int | None],
) -> dict[str, int]:
    """The threads per block a launch gives along x, y and z, where the text gives them:
    `<<<grid, dim3(16, 16)>>>`, `const dim3 block(16, 16);` before `<<<grid, block>>>`, or
    `<<<blocks, 256>>>` (a dimension not named is 1)."""
    syntax = next((c for c in launch.call.children if c.type == "kernel_call_syntax"), None)
    configuration = syntax.named_children if syntax is not None else []
    if len(configuration) < 2:
        return {}
    shape = configuration[1]
    sizes: list[int | None]
    if shape.type == "call_expression" and cs.call_name(shape, data) == "dim3":
        arguments = shape.child_by_field_name("arguments")
        sizes = [value_of(a) for a in (arguments.named_children if arguments else [])]
    elif launch.block is not None:
        sizes = [
            int(a) if a.isdigit() else constants.get(a) for a in map(str.strip, launch.block.args)
        ]
    else:
        sizes = [value_of(shape)]
    sizes += [1] * (3 - len(sizes))
    return {dim: size for dim, size in zip("xyz", sizes, strict=False) if size}


def _mean_work(sites: list[tuple[Work, float]]) -> Work:
    works = {work for work, _ in sites}
    if len(works) == 1:
        return sites[0][0]
    total = sum(times for _, times in sites) or 1.0
    precisions = {work.precision for work in works} - {None}
    return Work(
        bytes=sum(work.bytes * times for work, times in sites) / total,
        flops=sum(work.flops * times for work, times in sites) / total,
        precision="fp64" if "fp64" in precisions else next(iter(precisions), None),
        exact=False,
        flops_known=all(work.flops_known for work in works),
    )


class _Extents:
    """The elements of the array a launch passes a kernel's pointer parameter, followed
    back through the host code: an array declared with its sizes (`static float x[N]`),
    a pointer the residency runtime, malloc, cudaify_malloc or cudaMalloc gave
    (`cudaify_map(x, (size_t)n * sizeof(float), ...)`: n), through casts and offsets
    (`d_u - 1`: the same block),
    and a host function's parameter by the largest its calls pass. A size counts its
    `sizeof` as 1 (the element's)."""

    def __init__(self, tree: Tree, data: bytes, repeats: _Repeats):
        self.tree, self.data = tree, data
        self.values, self.calls, self.functions = repeats.values, repeats.calls, repeats.functions

    def of_launch(self, kernel: kt.Kernel, launch: kt.Launch) -> dict[str, int]:
        return _by_parameter(kernel, launch, self.data, self.of)

    def of(self, node: Node, depth: int = 0) -> int | None:
        if depth > _CALL_DEPTH:
            return None
        node = _unwrapped(node)
        if node.type == "binary_expression":
            operator = cs.text(node.child_by_field_name("operator") or node, self.data)
            left = node.child_by_field_name("left")
            return self.of(left, depth) if operator in ("+", "-") and left else None
        if node.type == "call_expression" and (cs.call_name(node, self.data) or "").endswith(
            "_cast"
        ):
            arguments = node.child_by_field_name("arguments")
            inner = arguments.named_children if arguments is not None else []
            return self.of(inner[0], depth) if len(inner) == 1 else None
        if node.type != "identifier":
            return None
        declared = cs.visible(self.tree, self.data, cs.text(node, self.data), node.start_byte)
        if declared is None:
            return None
        if declared.kind == "array":
            return _declared_elements(self.tree, self.data, declared, self.values.of)
        if declared.scope == "param":
            return self._parameter(node, declared.name, depth)
        return self._allocated(node, declared.name)

    def _parameter(self, use: Node, name: str, depth: int) -> int | None:
        function = cs.enclosing_function(use)
        callee = cs.function_name(function, self.data) if function is not None else None
        names = (
            [_parameter_name(p, self.data) for p in cs.parameter_nodes(function)]
            if function
            else []
        )
        calls = self.calls.get(callee or "", [])
        if name not in names or not calls:
            return None
        position = names.index(name)
        found = []
        for call in calls:
            arguments = call.child_by_field_name("arguments")
            given = arguments.named_children if arguments is not None else []
            found.append(self.of(given[position], depth + 1) if position < len(given) else None)
        return max(found) if None not in found else None  # type: ignore[type-var]

    def _allocated(self, use: Node, name: str) -> int | None:
        """A pointer's block: its initializer, its one assignment, or cudaify_malloc(&it, ...)
        (after `float *d_x = NULL;`)."""
        value = _LoopExpansion(self.tree, self.data, set()).initializer(name, use)
        value = value or self._pointer_initializer(name, use)
        found = self._allocation(value) if value is not None else None
        if found is not None:
            return found
        function = cs.enclosing_function(use)
        for call in cs.walk(function) if function is not None else ():
            if call.type != "call_expression":
                continue
            if cs.call_name(call, self.data) not in _DEVICE_MALLOCS:
                continue
            arguments = call.child_by_field_name("arguments")
            given = arguments.named_children if arguments is not None else []
            if len(given) >= 2 and re.fullmatch(
                rf"(?:\(\w+\s*\*\*\))?&{name}", kn.compact(cs.text(given[0], self.data))
            ):
                return self._count(given[1])
        return None

    def _pointer_initializer(self, name: str, use: Node) -> Node | None:
        """The value `float *d_x = ...;` declares `d_x` with."""
        declared = cs.visible(self.tree, self.data, name, use.start_byte)
        node = cs.node_at(self.tree, declared.start, "declaration") if declared else None
        for child in cs.walk(node) if node is not None else ():
            target = child.child_by_field_name("declarator")
            if child.type != "init_declarator" or target is None:
                continue
            identifier = cs.declarator_kind(target)[1]
            if identifier is not None and cs.text(identifier, self.data) == name:
                return child.child_by_field_name("value")
        return None

    def _allocation(self, value: Node) -> int | None:
        value = _unwrapped(value)
        if value.type != "call_expression":
            return None
        name = cs.call_name(value, self.data)
        arguments = value.child_by_field_name("arguments")
        given = arguments.named_children if arguments is not None else []
        if name in ("cudaify_map", "calloc") and len(given) >= 2:
            return self._count(given[1]) if name == "cudaify_map" else self.values.of(given[0])
        if name == "malloc" and given:
            return self._count(given[0])
        return None

    def _count(self, size: Node) -> int | None:
        """A byte size in elements: its value with each `sizeof` as 1."""
        size = _unwrapped(size)
        if size.type == "sizeof_expression":
            return 1
        if size.type == "binary_expression" and "sizeof" in cs.text(size, self.data):
            operator = cs.text(size.child_by_field_name("operator") or size, self.data)
            left, right = size.child_by_field_name("left"), size.child_by_field_name("right")
            a = self._count(left) if left is not None else None
            b = self._count(right) if right is not None else None
            if a is None or b is None or operator not in ("*", "/"):
                return None
            return a * b if operator == "*" else (a // b if b else None)
        return self.values.of(size)


def _unwrapped(node: Node) -> Node:
    """`node` without the parentheses and casts around it."""
    while node.type in ("parenthesized_expression", "cast_expression"):
        inner = node.child_by_field_name("value") if node.type == "cast_expression" else None
        inner = inner or (node.named_children[-1] if node.named_children else None)
        if inner is None:
            return node
        node = inner
    return node


@dataclass(frozen=True)
class _Loop:
    var: str | None
    span: float  # how far its variable ranges (its values times its step)
    known: bool
    step: float = 1.0
    # a loop over block tiles: the block's threads that run each value (a loop dealing
    # values to those threads: the share of them each thread runs)
    threads: float = 1.0
    first: float = 0.0  # a sequential loop's first value, where known (else 0)
    # a loop whose start or bound moves with the loops around it (`k = i + 1`): its trips
    # are their mean, its variable's range is not one the footprint can read
    moving: bool = False

    @property
    def values(self) -> float:
        """The values its variable takes."""
        return self.span / self.step

    @property
    def trips(self) -> float:
        """How often its body runs, all threads that run it together counted once each."""
        return self.values * self.threads


@dataclass(frozen=True)
class _Access:
    array: str
    subscripts: tuple[kn.Poly | None, ...]  # one per `[...]`, the outermost last
    loops: tuple[_Loop, ...]  # the loops around it
    element_bytes: float | None  # None: a type of unknown size
    extent: float | None  # the elements of the array it indexes, where the text gives them
    at: int = -1  # where it stands in the text (its first byte)


class _Counted:
    """Walks one kernel for one launch's values: FLOPs weighted by the iterations around
    them, global accesses with the loops around them (their footprints come after)."""

    def __init__(
        self,
        kernel: kt.Kernel,
        tree: Tree,
        data: bytes,
        constants: dict[str, int],
        extents: dict[str, int] | None = None,
        block: dict[str, int] | None = None,
        layouts: _Layouts | None = None,
    ):
        self.tree, self.data, self.constants = tree, data, constants
        self.layouts = layouts or _Layouts(tree, data)
        self.extents = extents or {}  # pointer parameter -> the elements its launch passes
        self.block = block or {}  # "x", "y", "z" -> the launch's threads per block, if given
        self.parameters = {
            name
            for name in (_parameter_name(p, data) for p in cs.parameter_nodes(kernel.node))
            if name
        }
        self.node = kernel.node
        self.body = kernel.node.child_by_field_name("body")
        self.shared = _shared_arrays(self.body, data) if self.body is not None else set()
        self.written = cs.names_written(self.body, data) if self.body is not None else set()
        self.flops = 0.0
        self.fp64 = self.fp32 = False
        self.exact = True
        self.flops_known = True  # False once FLOPs are counted in a loop of unknown trips
        self.inside_unknown = 0  # loops of unknown trips around the walk's position
        self.open: list[_Loop] = []  # the loops around the walk's position, innermost last
        self.bounds: set[int] = set()  # the `break`s that are shared loops' bounds
        self.accesses: list[tuple[_Access, str]] = []  # (access, "read" | "write")
        # grid-stride levels count the threads; without them, guards on the thread's index
        self.grid = self.body is not None and any(
            node.type in _LOOPS and _grid_stride(node, data) is not None
            for node in cs.walk(self.body)
        )
        self.guarded = False
        # a loop over block tiles whose block shape is not given, or one left early
        self.uncounted = False
        # in a kernel over block tiles the loops count every thread of the block
        self.block_tiled = self.body is not None and _block_tiled(self.body, data)
        # the kernel's lambdas by name: their work counts where they are called
        self.lambdas = _lambdas(self.body, data) if self.body is not None else {}
        self.calling: set[str] = set()
        if self.body is not None:
            self._walk(self.body, (), 1.0)

    def work(self) -> Work | None:
        """None where the bytes cannot be counted (see `Work`). The FLOPs are scaled by
        the share of the outputs the kernel stores (`_StoreShare`): a triangle's
        kernel runs its box of threads, and what it must compute is the triangle; so
        are the bytes of an array it writes whose every access sits where the outputs
        are kept (the triangle of C; the rows of A its products read stay whole)."""
        if (not self.grid and not self.guarded) or self.uncounted:
            return None
        stored = _StoreShare(self)
        share, enumerated = stored.share()
        if share < 1.0:
            self.flops *= share
            self.exact = self.exact and enumerated
        total = 0.0
        by_array: dict[tuple[str, str], list[_Access]] = {}
        for access, direction in self.accesses:
            by_array.setdefault((access.array, direction), []).append(access)
        written = {array for array, direction in by_array if direction == "write"}
        for (array, _), found in by_array.items():
            moved = self._bytes(found)
            if moved is None:
                return None
            if share < 1.0 and array in written and all(stored.kept(a.at) for a in found):
                moved *= share  # an output array touched only where the outputs are kept
            total += moved
        precision = "fp64" if self.fp64 else "fp32" if self.fp32 else None
        return Work(total, self.flops, precision, self.exact, self.flops_known)

    # -- the walk

    def _walk(self, node: Node, loops: tuple[_Loop, ...], weight: float) -> None:
        kind = node.type
        if kind in _LOOPS:
            loop = self._loop(node)
            loops, weight = loops + (loop,), weight * loop.trips
            self.open.append(loop)
            self.inside_unknown += 0 if loop.known else 1
            for child in node.children:
                self._walk(child, loops, weight)
            self.inside_unknown -= 0 if loop.known else 1
            self.open.pop()
            return
        elif kind in ("break_statement", "return_statement") and self._leaves_early(node):
            self.uncounted = True  # its trips are the most it runs: no least bytes
        elif kind == "if_statement" and not self.grid and self._guards(node):
            guards = self._guards(node)
            self.guarded = True
            inner = loops + guards
            self._if(node, inner, weight * math.prod(g.span for g in guards))
            return
        elif kind == "if_statement":
            self._if(node, loops, weight)
            return
        elif kind == "assignment_expression":
            self._assignment(node, loops, weight)
            return
        elif kind == "update_expression":
            self._update(node, loops, weight)
        elif kind == "binary_expression":
            self._binary(node, weight)
        elif kind == "lambda_expression":
            return  # walked where it is called
        elif kind == "call_expression":
            self._call(node, weight)
            self._atomic(node, loops)
            self._lambda_call(node, loops, weight)
        elif kind == "subscript_expression" and not _is_inner_subscript(node):
            self._access(node, loops, "read")
        for child in node.children:
            self._walk(child, loops, weight)

    def _lambda_call(self, node: Node, loops: tuple[_Loop, ...], weight: float) -> None:
        """A call of a lambda the kernel defines: its body's work, once per call."""
        function = node.child_by_field_name("function")
        name = cs.text(function, self.data) if function is not None else ""
        body = self.lambdas.get(name)
        if body is None or name in self.calling:
            return
        self.calling.add(name)
        self._walk(body, loops, weight)
        self.calling.discard(name)

    def _leaves_early(self, node: Node) -> bool:
        """A `break` out of a loop of known trips (not out of a switch), or a `return`
        inside one: a find-first's thread stops at its first match, so the loop's trips
        and the bytes counted from them are what it may read, not what it must
        (find_first_negative's kernel read 101% of the copy bandwidth by them)."""
        if node.type == "return_statement":
            if _in_lambda(node):
                return False  # a lambda's return leaves the lambda, not the kernel's loop
            return any(loop.known for loop in self.open)
        if node.start_byte in self.bounds:
            return False  # a shared loop's bound (`_shared_loop`)
        current = node.parent
        while current is not None and current.type not in _LOOPS:
            if current.type == "switch_statement":
                return False
            current = current.parent
        return bool(self.open) and self.open[-1].known

    def _loop(self, loop: Node) -> _Loop:
        """A grid level ranges over its bound; another loop over its trips times its step."""
        var = _loop_variable(loop, self.data)
        shared = self._shared_loop(loop, var)
        if shared is not None:
            return shared
        if _block_level(loop, self.data):
            return self._block_loop(loop, var)
        if self.block_tiled and _grid_stride(loop, self.data) is not None:
            return self._threads_loop(loop, var)
        stride = _grid_stride(loop, self.data)
        if stride is not None:
            self.grid = True
            bound = self._grid_bound(loop)
            if bound is None and _block_strided(loop, self.data):
                # each block runs all of it (zeroing or merging a block's shared copies):
                # a loop of unknown trips, which matters only where it reaches device memory
                self.exact = False
                return _Loop(var, UNKNOWN_TRIPS, False)
            if bound is None:
                # the launch's size is not in the text (or changes from launch to launch, as
                # a wavefront's diagonals): the arrays' extents would bound what it may
                # touch, not what it must; no count
                self.uncounted = True
            span = float(max(bound, 0)) if bound is not None else UNKNOWN_TRIPS
            # a level whose stride is several grids wide (`+= blockDim.x * gridDim.x * 4`,
            # register_tiling: four outputs per pass) runs its body once per four values
            return _Loop(var, span, bound is not None, threads=1.0 / max(stride, 1.0))
        read = self._trips(loop)
        if read is None:
            self.exact = False
            return _Loop(var, UNKNOWN_TRIPS, False)
        trips, first, moving = read
        step = self._step(loop)
        return _Loop(var, trips * step, True, step, first=float(first or 0), moving=moving)

    def _shared_loop(self, loop: Node, var: str | None) -> _Loop | None:
        """A loop a warp's lanes or a block's rows share, as `segmented` writes it: `for
        (long long c = lane;; c += 32) { T j = (T)(first + c * step); if (!(j < bound))
        break; ... }`, `lane` a local holding `threadIdx.x % 32` or `threadIdx.y`. The 32
        threads together run each value of c once, so per iteration of the level around
        it the body runs (bound - first) / step times, as the source loop did; its `break`
        is its bound, not an early exit. None for any other loop."""
        init, update = loop.child_by_field_name("initializer"), loop.child_by_field_name("update")
        body = loop.child_by_field_name("body")
        if loop.type != "for_statement" or _condition(loop) is not None:
            return None
        start = _start(init) if init is not None else None
        lane = (
            _Expansion(self.tree, self.data).initializer(cs.text(start, self.data), start)
            if start is not None and start.type == "identifier"
            else None
        )
        statements = kn.statements_of(body) if body is not None else []
        if (
            var is None
            or lane is None
            or kn.compact(cs.text(lane, self.data)) not in ("threadIdx.x%32", "threadIdx.y")
            or update is None
            or kn.compact(cs.text(update, self.data)) != f"{var}+=32"
            or len(statements) < 2
            or statements[1].type != "if_statement"
        ):
            return None
        value, first = kn.declared_variable(statements[0], self.data), kn.initializer(statements[0])
        test = statements[1].child_by_field_name("condition") or statements[1]
        test = _unwrapped(test.named_children[-1] if test.type == "condition_clause" else test)
        leave = statements[1].child_by_field_name("consequence")
        argument = test.child_by_field_name("argument") if test.type == "unary_expression" else None
        compared = _unwrapped(argument) if argument is not None else None
        if compared is None or compared.type != "binary_expression" or leave is None:
            return None
        operator = cs.text(compared.child_by_field_name("operator") or compared, self.data)
        left, right = compared.child_by_field_name("left"), compared.child_by_field_name("right")
        if (
            cs.text(test.child_by_field_name("operator") or test, self.data) != "!"
            or operator not in ("<", "<=")
            or left is None
            or cs.text(left, self.data) != value
            or right is None
            or first is None
            or kn.compact(cs.text(leave, self.data)) not in ("break;", "{break;}")
        ):
            return None
        polynomial = _LoopExpansion(self.tree, self.data, {var}).of(first, 0)
        bound = self._value(right)
        if polynomial is None or bound is None or set(polynomial) - {(), (var,)}:
            return None  # the value is not a number plus c times a step
        step, low = polynomial.get((var,), 0), polynomial.get((), 0)
        if step <= 0:
            return None
        trips = max(0, math.ceil((bound - low + (operator == "<=")) / step))
        self.bounds.add((leave.named_children[0] if leave.named_children else leave).start_byte)
        return _Loop(var, float(trips), True)

    def _block_loop(self, loop: Node, var: str | None) -> _Loop:
        """A loop over block tiles, as shared_tiling and gemm_tiling write it: `for (row =
        blockIdx.y * 64; row < T; row += 64 * gridDim.y)`. Its variable takes every 64th
        value below T, and every thread of the block runs each value on outputs it picks
        inside (its micro-tile), so its body runs T / 64 times the block's threads along y:
        with a micro-tile of 64 / 16 rows that is one run per row below T, the source's
        count. Without the launch's block shape its trips are unknown, and so is the
        kernel's work (a thread's outputs are not one per value here)."""
        tile = _block_tile(loop, self.data)
        bound = self._grid_bound(loop)
        threads = self.block.get(tile[0]) if tile else None
        self.grid = True
        if tile is None or bound is None or not threads:
            self.uncounted = True
            return _Loop(var, UNKNOWN_TRIPS, False)
        return _Loop(var, float(bound), True, float(tile[1]), float(threads))

    def _threads_loop(self, loop: Node, var: str | None) -> _Loop:
        """Inside block tiles, a loop that deals a tile's rows to the block's threads
        (`_dealt`): its variable ranges over all of them, its body runs a thread's share.
        Any other loop starting at the thread's index is not read."""
        bound = self._grid_bound(loop)
        step = _dealt(loop, self.data, self.block, self._value_of_text)
        if bound is None or step is None:
            self.uncounted = True
            return _Loop(var, UNKNOWN_TRIPS, False)
        return _Loop(var, float(bound), True, 1.0, 1.0 / step)

    def _step(self, loop: Node) -> float:
        """A sequential loop's step (1 where not constant); 1 for a grid level, whose
        threads together take every value of its range."""
        if _grid_stride(loop, self.data) is not None:
            return 1.0
        step = _update_step(loop, self.data, self._value_of_text)
        return float(step) if step and step > 0 else 1.0

    def _value_of_text(self, text: str) -> int | None:
        return _literal(text, self.constants)

    def _guards(self, node: Node) -> tuple[_Loop, ...]:
        """`if (i < n && j < m)` on locals computed from the thread's global index
        (`blockIdx.x * blockDim.x + threadIdx.x`): each such local ranges over [0, bound)
        like a grid level (a kernel of one thread per element). A local the block's place
        moves otherwise (`tile_j * 32 + threadIdx.x`, `tile_j` from a launch argument, as a
        wavefront's diagonal of tiles) covers what that launch covers, which the text does
        not give: no guard of the grid (lcs_edit's 1374 launches were each counted as the
        whole table: 555% of the copy bandwidth)."""
        condition = node.child_by_field_name("condition")
        found: list[_Loop] = []
        for operator, left, right in _comparisons(condition, self.data):
            if operator in ("<", "<=") and left.type == "identifier":
                value = _Expansion(self.tree, self.data).initializer(cs.text(left, self.data), left)
                bound = self._value(right)
                thread = value is not None and _GLOBAL_INDEX.search(cs.text(value, self.data))
                if thread and bound is not None:
                    span = float(bound + (1 if operator == "<=" else 0))
                    found.append(_Loop(cs.text(left, self.data), span, True))
        return tuple(found)

    def _grid_bound(self, loop: Node) -> int | None:
        condition = _condition(loop)
        right = condition.child_by_field_name("right") if condition is not None else None
        return self._value(right) if right is not None else None

    def _trips(self, loop: Node) -> tuple[float, int | None, bool] | None:
        """Trips of `for (v = a; v < b; v += c)`, with its first value a where known and
        whether they are a triangular loop's mean (`_triangular_trips`): exact where a, b
        and c are known (kernel locals followed to their initializers), else None."""
        if loop.type != "for_statement":
            return None
        init = loop.child_by_field_name("initializer")
        condition = _condition(loop)
        if init is None or condition is None or condition.type != "binary_expression":
            return None
        operator = cs.text(condition.child_by_field_name("operator") or condition, self.data)
        right = condition.child_by_field_name("right")
        start = _start(init)
        first = self._value(start) if start is not None else None
        bound = self._value(right) if right is not None else None
        halving = self._halving_trips(loop, operator, first, bound)
        if halving is not None:
            return halving, first, False
        if bound is None and right is not None:  # a tile's tail: `n = r < 16 ? r : 16`
            bound = _clamped(right, self.tree, self.data, self.constants)
            self.exact = self.exact and bound is None
        if operator not in ("<", "<="):
            return None
        extra = 1 if operator == "<=" else 0
        if first is None or bound is None:
            mean = self._triangular_trips(start, right, extra, self._step(loop))
            return (mean, first, True) if mean is not None else None
        return max(0.0, math.ceil((bound - first + extra) / self._step(loop))), first, False

    def _triangular_trips(
        self, start: Node | None, bound: Node | None, extra: int, step: float
    ) -> float | None:
        """A loop whose start or bound moves with the loops around it, `for (k = i + 1; k <
        m; k++)` inside `for (i = 0; i < m - 1; i++)`: its trips averaged over their values
        (the mean start and bound, affine in them: m / 2 here, the nest's (m - 1) m / 2 in
        all, exact where the span never falls below zero), an estimate."""
        around = {loop.var: loop for loop in self.open if loop.var and loop.known}
        if start is None or bound is None or not around:
            return None
        first, last = self._mean(start, around), self._mean(bound, around)
        if first is None or last is None:
            return None
        self.exact = False
        return max(0.0, (last - first + extra) / step)

    def _mean(self, node: Node, around: dict[str, _Loop]) -> float | None:
        """The mean of an expression affine in the variables of the loops `around` (each
        ranging over its values from its first), the other names launch values or
        constants; None for any other."""
        polynomial = self._polynomial(node, set(around))
        if polynomial is None:
            return None
        total = 0.0
        for monomial, coefficient in polynomial.items():
            if sum(name in around for name in monomial) > 1:
                return None
            term = float(coefficient)
            for name in monomial:
                loop = around.get(name)
                value = (
                    loop.first + loop.step * (math.ceil(loop.values) - 1) / 2
                    if loop is not None
                    else self.constants.get(name)
                )
                if value is None:
                    return None
                term *= value
            total += term
        return total

    def _halving_trips(
        self, loop: Node, operator: str, first: int | None, bound: int | None
    ) -> float | None:
        """Trips of a tree reduction's `for (s = 16; s > 0; s /= 2)` (or `s >>= 1`), from
        the loop's start and bound as `_trips` read them."""
        update = loop.child_by_field_name("update")
        text = kn.compact(cs.text(update, self.data)) if update is not None else ""
        if not re.fullmatch(r"\w+(?:/=2|>>=1)", text) or operator not in (">", ">="):
            return None
        if first is None or bound is None:
            return None
        trips, value = 0, first
        while (value > bound if operator == ">" else value >= bound) and trips < 64:
            trips, value = trips + 1, value // 2
        return float(trips)

    def _value(self, node: Node, depth: int = 0) -> int | None:
        """An integer expression's value: launch values and file constants, the kernel's
        locals (never assigned again) through their initializers, `c ? a : b`."""
        if depth > _EXPANSION_DEPTH:
            return None
        node = _unwrapped(node)
        if node.type in ("parenthesized_expression", "cast_expression"):
            return None  # one with nothing inside
        if node.type == "conditional_expression":
            test = node.child_by_field_name("condition")
            taken = self._value(test, depth + 1) if test is not None else None
            branch = node.child_by_field_name("consequence" if taken else "alternative")
            return self._value(branch, depth + 1) if taken is not None and branch else None
        return _evaluate(node, self.data, lambda name: self._name_value(name, depth))

    def _name_value(self, identifier: Node, depth: int) -> int | None:
        found = self._definition(identifier)
        return self._value(found, depth + 1) if isinstance(found, Node) else found

    def _definition(self, identifier: Node) -> int | Node | None:
        """What a name in the kernel stands for: a launch value or file constant (None
        where unknown), or a local's initializer (None where the kernel assigns it)."""
        name = cs.text(identifier, self.data)
        declared = cs.visible(self.tree, self.data, name, identifier.start_byte)
        if declared is None or declared.scope in ("global", "param"):
            return self.constants.get(name)
        if name in self.written:
            return None
        return _Expansion(self.tree, self.data).initializer(name, identifier)

    def _if(self, node: Node, loops: tuple[_Loop, ...], weight: float) -> None:
        """A guard (one branch) is counted as taken; of two branches the one that does
        more (a main path beside its remainder tail), an estimate."""
        condition = node.child_by_field_name("condition")
        if condition is not None:
            self._walk(condition, loops, weight)
        branches = [
            branch
            for branch in (node.child_by_field_name(n) for n in ("consequence", "alternative"))
            if branch is not None
        ]
        if condition is not None and _UNLIKELY.search(cs.text(condition, self.data)):
            branches = branches[1:]  # the code says it is rarely taken, as the price reads it
            if not branches:
                return
        if len(branches) == 1:
            self._walk(branches[0], loops, weight)
            return
        self.exact = False
        parts = []
        for branch in branches:
            part = copy.copy(self)
            part.flops, part.accesses = 0.0, []
            part._walk(branch, loops, weight)
            parts.append(part)
            self.flops_known = self.flops_known and part.flops_known
        larger = max(parts, key=lambda p: (p.flops, len(p.accesses)))
        self.flops += larger.flops
        self.accesses.extend(access for part in parts for access in part.accesses)
        self.fp32 = any(p.fp32 for p in parts) or self.fp32
        self.fp64 = any(p.fp64 for p in parts) or self.fp64
        self.grid = any(p.grid for p in parts) or self.grid
        self.guarded = any(p.guarded for p in parts) or self.guarded
        self.uncounted = any(p.uncounted for p in parts) or self.uncounted

    def _assignment(self, node: Node, loops: tuple[_Loop, ...], weight: float) -> None:
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        operator = cs.text(node.child_by_field_name("operator") or node, self.data)
        if right is not None:
            self._walk(right, loops, weight)
        if left is None:
            return
        if operator in _COMPOUND:
            self._count(self._floating(left), weight * self._complex_flops(left, operator[0]))
        if left.type == "subscript_expression":
            if operator != "=":
                self._access(left, loops, "read")
            self._access(left, loops, "write")
            for index in _subscripts(left):
                self._walk(index, loops, weight)
        else:
            self._walk(left, loops, weight)

    def _update(self, node: Node, loops: tuple[_Loop, ...], weight: float) -> None:
        argument = node.child_by_field_name("argument")
        if argument is not None and argument.type == "subscript_expression":
            self._access(argument, loops, "write")  # the read is the walk's

    def _binary(self, node: Node, weight: float) -> None:
        operator = cs.text(node.child_by_field_name("operator") or node, self.data)
        if operator in _ARITHMETIC:
            self._count(self._floating(node), weight * self._complex_flops(node, operator))

    def _complex_flops(self, node: Node, operator: str) -> float:
        """The real operations one `operator` stands for where an operand of `node` is a
        complex number (`std::complex`, `cuda::std::complex`): 2 for + and -, 6 for *,
        11 for / (an estimate); 1 for real operands."""
        operands = [node]
        if node.type == "binary_expression":
            operands = [c for c in (node.child_by_field_name(f) for f in ("left", "right")) if c]
        for operand in operands:
            operand = _unwrapped(operand)
            name = self._named(operand)
            if name is not None and _COMPLEX.match(_plain_type(self._type(name, operand))):
                self.exact = False
                return _COMPLEX_FLOPS.get(operator, 1.0)
        return 1.0

    def _call(self, node: Node, weight: float) -> None:
        name = cs.call_name(node, self.data) or ""
        if name in _FLOP_CALLS:
            self._count(self._floating(node), weight * _FLOP_CALLS[name])
        elif _FLOAT_CALL.match(name) and name not in _FREE_CALLS:
            self.exact = False
            self._count(self._floating(node), weight)

    def _atomic(self, node: Node, loops: tuple[_Loop, ...]) -> None:
        """`atomicAdd(&bins[k], 1)` writes the element it reads (the read is the walk's)."""
        if not (cs.call_name(node, self.data) or "").startswith("atomic"):
            return
        arguments = node.child_by_field_name("arguments")
        target = arguments.named_children[0] if arguments and arguments.named_children else None
        target = _unwrapped(target) if target is not None else None
        if target is not None and target.type == "pointer_expression":
            inner = target.child_by_field_name("argument")
            inner = _unwrapped(inner) if inner is not None else None
            if inner is not None and inner.type == "subscript_expression":
                self._access(inner, loops, "write")

    def _count(self, precision: str | None, flops: float) -> None:
        if precision is None:
            return
        self.flops_known = self.flops_known and not self.inside_unknown
        self.flops += flops
        if precision == "fp64":
            self.fp64 = True
        else:
            self.fp32 = True

    def _floating(self, node: Node | None) -> str | None:
        """ "fp64" or "fp32" for an expression of that floating type, None for any other."""
        if node is None:
            return None
        kind = node.type
        if kind == "number_literal":
            text = cs.text(node, self.data).lower()
            if text.startswith("0x") or not re.search(r"[.e]", text):
                return None
            return "fp32" if text.endswith("f") else "fp64"
        if kind in ("identifier", "subscript_expression"):
            name = _array_name(node, self.data) if kind != "identifier" else None
            name = name or cs.text(node, self.data)
            return _precision_of(self._type(name, node))
        if kind == "field_expression":  # a struct's member: `points[i].x`, `a.y`
            return _precision_of(self._member_type(node) or "")
        if kind == "cast_expression":
            cast = node.child_by_field_name("type")
            return _precision_of(cs.text(cast, self.data)) if cast is not None else None
        if kind == "call_expression":
            name = cs.call_name(node, self.data) or ""
            if _FLOAT_CALL.match(name) or name in _FLOP_CALLS:
                arguments = node.child_by_field_name("arguments")
                given = arguments.named_children if arguments is not None else []
                precisions = {self._floating(argument) for argument in given}
                if name.endswith("f") or name.startswith("__f") or "f_r" in name:
                    return "fp32"
                return "fp64" if "fp64" in precisions or name.startswith("__d") else "fp32"
            return None
        if kind in ("binary_expression", "conditional_expression", "parenthesized_expression"):
            parts = [
                child
                for child in node.named_children
                if kind != "conditional_expression"
                or child != node.child_by_field_name("condition")
            ]
            if kind == "binary_expression":
                operator = cs.text(node.child_by_field_name("operator") or node, self.data)
                if operator not in _ARITHMETIC:
                    return None
            found = {self._floating(part) for part in parts}
            return "fp64" if "fp64" in found else "fp32" if "fp32" in found else None
        if kind in ("unary_expression", "assignment_expression"):
            operand = node.child_by_field_name("argument") or node.child_by_field_name("left")
            return self._floating(operand)
        return None

    def _member_type(self, node: Node) -> str | None:
        """The declared type of the member a field expression names, where the object's
        type is a struct or class of the text."""
        argument = node.child_by_field_name("argument")
        field = node.child_by_field_name("field")
        if argument is None or field is None:
            return None
        argument = _unwrapped(argument)
        name = self._named(argument)
        if name is None:
            return None
        owner = _plain_type(self._type(name, argument).replace("*", " ").replace("&", " "))
        return self.layouts.member(owner, cs.text(field, self.data))

    def _named(self, node: Node) -> str | None:
        """The variable an operand reads: a name, or an element's array; None for others."""
        if node.type == "subscript_expression":
            return _array_name(node, self.data)
        return cs.text(node, self.data) if node.type == "identifier" else None

    def _type(self, name: str, use: Node) -> str:
        declared = cs.visible(self.tree, self.data, name, use.start_byte)
        return declared.base if declared is not None else ""

    def _access(self, node: Node, loops: tuple[_Loop, ...], direction: str) -> None:
        """A global array's element read or written (shared and local arrays are not
        device memory traffic)."""
        array = _array_name(node, self.data)
        if array is None or array in self.shared:
            return
        declared = cs.visible(self.tree, self.data, array, node.start_byte)
        if declared is None or declared.scope not in ("param", "global"):
            return
        if declared.kind not in ("pointer", "array"):
            return
        size = _element_bytes(declared.base, self.layouts)
        if declared.scope == "global":
            extent = _declared_elements(self.tree, self.data, declared, self.constants)
        else:
            extent = self.extents.get(array)
        atoms = {loop.var for loop in loops if loop.var}
        subscripts = tuple(self._polynomial(index, atoms) for index in _subscripts(node))
        access = _Access(
            array,
            subscripts,
            loops,
            float(size) if size else None,
            float(extent) if extent is not None else None,
            node.start_byte,
        )
        self.accesses.append((access, direction))

    def _polynomial(self, index: Node, atoms: set[str]) -> kn.Poly | None:
        return _LoopExpansion(self.tree, self.data, atoms).of(index, 0)

    # -- footprints

    def _bytes(self, accesses: list[_Access]) -> float | None:
        """The bytes of the distinct elements a set of accesses of one array (in one
        direction) touches over the launch; None where they cannot be counted."""
        size = accesses[0].element_bytes
        elements = self._elements(accesses)
        if size is None or elements is None:
            return None
        return elements * size

    def _elements(self, accesses: list[_Access]) -> float | None:
        """The distinct elements of the union of the accesses' index ranges (`_union`),
        capped by the array's extent where the launch gives it. An access whose range
        cannot be read (a gather `x[col[k]]`, a subscript on a per-thread value, a loop
        of unknown trips) counts at most one element per iteration of its loops, and at
        most the extent: without the extent, None."""
        extent = accesses[0].extent
        regular: list[tuple[_Range, ...]] = []
        irregular = 0.0
        for access in accesses:
            ranges = self._ranges(access)
            if ranges is not None:
                regular.append(ranges)
                continue
            self.exact = False
            if extent is None:
                return None
            irregular += min(_references(access), extent)
        if len({_spelled(access.subscripts) for access in accesses}) > 1:
            self.exact = False  # a union of several subscripts
        elements = _union(regular) + irregular
        return min(elements, extent) if extent is not None else elements

    def _ranges(self, access: _Access) -> tuple[_Range, ...] | None:
        loops = {loop.var: loop for loop in access.loops if loop.var}
        ranges = []
        for subscript in access.subscripts:
            found = self._range(subscript, loops) if subscript is not None else None
            if found is None:
                return None
            ranges.append(found)
        return tuple(ranges)

    def _range(self, subscript: kn.Poly, loops: dict[str, _Loop]) -> _Range | None:
        """The values an affine subscript takes over the loops around it, or None where
        it is not affine in them with known coefficients. Terms in the launch's shape
        (`base + 2 * blockDim.x`: register tiling's outputs; `k0 + threadIdx.x`: a tile's
        column) are how the threads share a range the grid levels already span: dropped,
        and the range counted as filled."""
        offset, filled = 0, False
        symbolic: dict[tuple[str, ...], int] = {}
        slopes: dict[str, int] = {}
        for monomial, coefficient in subscript.items():
            if any(_THREAD_SHAPE.match(name) for name in monomial):
                if not self.grid:
                    return None  # its range is the launch's shape, which this count does not read
                filled = True
                continue
            variables = [name for name in monomial if name in loops]
            value, unknown = coefficient, []
            for name in (name for name in monomial if name not in loops):
                if name in self.constants:
                    value *= self.constants[name]
                elif name in self.parameters:
                    unknown.append(name)  # one value for the whole launch
                else:
                    return None  # a value of each thread's own
            if not variables and unknown:
                symbolic[tuple(unknown)] = symbolic.get(tuple(unknown), 0) + value
                continue
            if not variables:
                offset += value
                continue
            loop = loops[variables[0]] if len(variables) == 1 else None
            if loop is None or unknown or not loop.known or loop.moving:
                return None
            slopes[variables[0]] = slopes.get(variables[0], 0) + value
        return _Range.over(offset, symbolic, slopes, loops, filled)


@dataclass(frozen=True)
class _Range:
    """The values one subscript takes over a launch: from `low` to `high` every `stride`
    (0: one value), `count` distinct ones, plus `symbolic`, the terms in launch values the
    text does not fix (ranges with different ones are not compared)."""

    symbolic: tuple[tuple[tuple[str, ...], int], ...]
    low: int
    high: int
    stride: int
    count: float

    @staticmethod
    def over(
        offset: int,
        symbolic: dict[tuple[str, ...], int],
        slopes: dict[str, int],
        loops: dict[str, _Loop],
        filled: bool,
    ) -> _Range:
        low = high = offset
        count, steps = 1.0, []
        for var, slope in slopes.items():
            loop = loops[var]
            step = int(round(slope * loop.step))
            if not step:
                continue
            reach = step * max(math.ceil(loop.values) - 1, 0)
            if filled and loop.step > 1:  # the threads fill each step, up to the loop's end
                reach = int(round(slope * (loop.span - 1)))
            low, high = low + min(0, reach), high + max(0, reach)
            count *= loop.values
            steps.append(abs(step))
        stride = 1 if filled and steps else math.gcd(*steps)
        length = (high - low) // stride + 1 if stride else 1
        count = float(length) if filled else min(count, float(length))
        return _Range(tuple(sorted(symbolic.items())), low, high, stride, count)


def _union(accesses: list[tuple[_Range, ...]]) -> float:
    """Distinct elements of the union of the accesses' ranges: for the accesses whose
    offsets compare (the same terms in unknown launch values), the smaller of the sum of
    their own counts and the box spanned by merging their ranges subscript by subscript
    (`u[i-1], u[i], u[i+1]` over n values of i: n + 2); other groups add up."""
    groups: dict[tuple, list[tuple[_Range, ...]]] = {}
    for ranges in accesses:
        key = (len(ranges), tuple(r.symbolic for r in ranges))
        groups.setdefault(key, []).append(ranges)
    total = 0.0
    for members in groups.values():
        separate = sum(math.prod(r.count for r in ranges) for ranges in members)
        dimensions = len(members[0])
        box = math.prod(_merged([ranges[d] for ranges in members]) for d in range(dimensions))
        total += min(separate, float(box))
    return total


def _merged(ranges: list[_Range]) -> int:
    """Values in the union of ranges of one subscript: on a common stride, the merged
    intervals of each residue class; with different strides, every value between."""
    strides = {r.stride for r in ranges}
    stride = strides.pop() if len(strides) == 1 and 0 not in strides else 1
    classes: dict[int, list[tuple[int, int]]] = {}
    for r in ranges:
        residue = r.low % stride
        classes.setdefault(residue, []).append(
            ((r.low - residue) // stride, (r.high - residue) // stride)
        )
    total = 0
    for intervals in classes.values():
        intervals.sort()
        start, end = intervals[0]
        for low, high in intervals[1:]:
            if low > end + 1:
                total += end - start + 1
                start, end = low, high
            else:
                end = max(end, high)
        total += end - start + 1
    return total


def _references(access: _Access) -> float:
    """Iterations of the loops around an access (one element each), infinite where a
    loop's trips are unknown. A loop over block tiles runs whole blocks: the last tile's
    threads past the edge run it too (their loads guarded, but not counted apart)."""
    return math.prod(
        (math.ceil(loop.values) * loop.threads if loop.known else math.inf) for loop in access.loops
    )


_SHARE_POINTS = 4096  # at most this many points of the outputs' lattice are evaluated


class _StoreShare:
    """Which share of a kernel's outputs it stores: the conditions of the one-branch ifs
    around every store to device memory (`if ((i >= j))` of a triangle, as schedule maps
    it; the `active` of a tiled kernel, `t_i < trips_i && t_j < trips_j && (i >= j)`),
    evaluated on the lattice of the positions they read. The positions are the variables
    of grid-stride loops (`t_i` over [0, trips_i)) and the names a condition bounds
    (`t_i < trips_i`, from 0); locals are followed to their values. A condition that
    cannot be evaluated everywhere (a block's vote, memory, a call) counts as kept: the
    count errs towards more work. Up to _SHARE_POINTS points, one drawn in each stratum
    of the ranges beyond that (then an estimate)."""

    def __init__(self, counted: _Counted):
        self.counted = counted
        self.data = counted.data
        self.tree = counted.tree
        self.expansion = _Expansion(counted.tree, counted.data)
        self.ranges: dict[str, int] = {}  # lattice variable -> its values' count
        # per condition around every store, the byte ranges of the branches it guards
        self.branches: dict[str, list[tuple[int, int]]] = {}
        self.values: dict[tuple[int, int], Node | int | None] = {}  # per identifier use

    def share(self) -> tuple[float, bool]:
        """(the share stored, whether every point was evaluated); (1, True) where no
        condition selects."""
        counted = self.counted
        body = counted.body
        if body is None:
            return 1.0, True
        common: dict[str, Node] | None = None
        spans: list[tuple[str, tuple[int, int]]] = []
        # the stores to device memory the walk recorded (assignments, updates, atomics)
        for access, direction in counted.accesses:
            if direction != "write":
                continue
            store = self.tree.root_node.descendant_for_byte_range(access.at, access.at)
            guards = self._guards(store, body) if store is not None else []
            found = {key: condition for key, condition, _ in guards}
            common = found if common is None else {k: common[k] for k in common if k in found}
            spans.extend((key, span) for key, _, span in guards)
        if not common:
            return 1.0, True
        for key, span in spans:
            if key in common:
                self.branches.setdefault(key, []).append(span)
        conditions = list(common.values())
        for condition in conditions:
            self._bounds(condition)
            self._lattice(condition, 0)
        if not self.ranges or len(self.ranges) > 3:
            return 1.0, True
        per = max(2, int(_SHARE_POINTS ** (1 / len(self.ranges))))
        names = list(self.ranges)
        counts = [self.ranges[n] for n in names]
        enumerated = all(count <= per for count in counts)
        # a range longer than `per` is cut into `per` strata, each point a value drawn in
        # its stratum (seeded: the same count each time), so that a thin band is not
        # missed or hit by every point alike, as a lattice of the strata's middles does
        draw = random.Random(0)
        kept = total = 0
        live = list(conditions)
        for cell in itertools.product(*(range(min(c, per)) for c in counts)):
            point = [
                s if c <= per else int((s + draw.random()) * c / per)
                for s, c in zip(cell, counts, strict=True)
            ]
            env = dict(zip(names, point, strict=True))
            total += 1
            holds = True
            read = functools.partial(self._read, env=env)
            for condition in list(live):
                value = kn.evaluate_with(condition, self.data, read)
                if value is None:  # not a function of the lattice: counts as kept
                    live.remove(condition)
                    continue
                holds = holds and bool(value)
            kept += holds
        return (kept / total if total else 1.0), enumerated

    def kept(self, at: int) -> bool:
        """Whether the byte `at` lies in a branch of each condition around every store."""
        return bool(self.branches) and all(
            any(low <= at < high for low, high in spans) for spans in self.branches.values()
        )

    def _guards(self, store: Node, body: Node) -> list[tuple[str, Node, tuple[int, int]]]:
        """The conditions of the one-branch ifs whose branch holds `store`, with the
        branch's byte range."""
        found = []
        current = store
        while current.parent is not None and current != body:
            parent = current.parent
            if (
                parent.type == "if_statement"
                and parent.child_by_field_name("alternative") is None
                and parent.child_by_field_name("consequence") == current
            ):
                condition = parent.child_by_field_name("condition")
                if condition is not None:
                    condition = _unwrapped(_clause(condition))
                    # by text: the same test on two paths (a tiled kernel's two shapes)
                    key = kn.compact(cs.text(condition, self.data))
                    found.append((key, condition, (current.start_byte, current.end_byte)))
            current = parent
        return found

    def _bounds(self, condition: Node) -> None:
        """Notes the `name < bound` conjuncts of `condition` (const locals followed: a
        tiled kernel's `active`) as lattice variables."""

        def value(identifier: Node) -> Node | None:
            return self.expansion.initializer(cs.text(identifier, self.data), identifier)

        for operator, left, right in _comparisons(condition, self.data, value):
            if operator == "<" and _unwrapped(left).type == "identifier":
                bound = self.counted._value(right)
                if bound is not None and bound > 0:
                    self.ranges.setdefault(cs.text(_unwrapped(left), self.data), bound)

    def _lattice(self, node: Node, depth: int) -> None:
        """Notes the grid-stride loop variables `node` reads, through the locals' values."""
        if depth > _EXPANSION_DEPTH:
            return
        for identifier in cs.identifiers_in(node):
            name = cs.text(identifier, self.data)
            if name in self.ranges:
                continue
            declared = cs.visible(self.tree, self.data, name, identifier.start_byte)
            if declared is None or declared.scope not in ("local", "header"):
                continue
            loop = self.tree.root_node.descendant_for_byte_range(declared.start, declared.start)
            while loop is not None and loop.type != "for_statement":
                loop = loop.parent
            if declared.scope == "header" and loop is not None:
                if _grid_stride(loop, self.data) is not None:
                    bound = self.counted._grid_bound(loop)
                    if bound is not None and bound > 0:
                        self.ranges[name] = bound
                continue
            value = self.expansion.initializer(name, identifier)
            if value is not None:
                self._lattice(value, depth + 1)

    def _read(self, identifier: Node, env: dict[str, int]) -> int | None:
        name = cs.text(identifier, self.data)
        if name in env:
            return env[name]
        key = (identifier.start_byte, identifier.end_byte)
        if key not in self.values:
            self.values[key] = self.counted._definition(identifier)
        found = self.values[key]
        if found is None or isinstance(found, int):
            return found
        return kn.evaluate_with(found, self.data, lambda i: self._read(i, env))


def _comparisons(
    condition: Node | None, data: bytes, follow: Callable[[Node], Node | None] | None = None
) -> Iterator[tuple[str, Node, Node]]:
    """(operator, left, right) of each binary term of the conjunction `condition` is
    (`a && b && ...`, parentheses and an if's clause unwrapped); with `follow`, a term that
    is a name is replaced by the value `follow` gives it (a const local's initializer)."""
    pending = [condition] if condition is not None else []
    while pending:
        current = _unwrapped(_clause(pending.pop()))
        if current.type == "identifier" and follow is not None:
            value = follow(current)
            if value is not None:
                pending.append(value)
            continue
        if current.type != "binary_expression":
            continue
        operator = cs.text(current.child_by_field_name("operator") or current, data)
        left, right = current.child_by_field_name("left"), current.child_by_field_name("right")
        if left is None or right is None:
            continue
        if operator == "&&":
            pending += [left, right]
        else:
            yield operator, left, right


def _clause(condition: Node) -> Node:
    """An if's condition without its `condition_clause` wrapper."""
    if condition.type == "condition_clause" and condition.named_children:
        return condition.named_children[-1]
    return condition


class _LoopExpansion(_Expansion):
    """Index polynomials over the variables of the loops around an access (`atoms`): any
    other local is replaced by its initializer."""

    def __init__(self, tree: Tree, data: bytes, atoms: set[str]):
        super().__init__(tree, data)
        self.loop_vars = atoms

    def of(self, node: Node, depth: int) -> kn.Poly | None:
        if node.type == "identifier" and cs.text(node, self.data) in self.loop_vars:
            return {(cs.text(node, self.data),): 1}
        return super().of(node, depth)

    def initializer(self, name: str, use: Node) -> Node | None:
        """Its declaration's value, or where it is declared without one (`size_t at;`),
        the value of the one assignment the function makes it (`at = (i * n + j) * n +
        k;`)."""
        value = super().initializer(name, use)
        declared = cs.visible(self.tree, self.data, name, use.start_byte)
        if value is not None or declared is None or declared.scope != "local":
            return value
        function = cs.enclosing_function(use)
        if function is None:
            return None
        assigned = [
            node
            for node in cs.walk(function)
            if node.type in ("assignment_expression", "update_expression")
            and cs.text(
                node.child_by_field_name("left") or node.child_by_field_name("argument") or node,
                self.data,
            )
            == name
        ]
        if len(assigned) != 1 or assigned[0].type != "assignment_expression":
            return None
        operator = cs.text(assigned[0].child_by_field_name("operator") or assigned[0], self.data)
        return assigned[0].child_by_field_name("right") if operator == "=" else None


def _loop_variable(loop: Node, data: bytes) -> str | None:
    init = loop.child_by_field_name("initializer")
    if init is None:
        return None
    if init.type == "declaration":
        return kn.declared_variable(init, data)
    if init.type == "assignment_expression":
        left = init.child_by_field_name("left")
        return cs.text(left, data) if left is not None and left.type == "identifier" else None
    return None


def _subscripts(node: Node) -> list[Node]:
    """The indices of `a[i][j]` (or `a[i, j]`), outermost first."""
    found: list[Node] = []
    current: Node | None = node
    while current is not None and current.type == "subscript_expression":
        index = current.child_by_field_name("index") or current.child_by_field_name("indices")
        if index is not None and index.type == "subscript_argument_list":
            found[:0] = index.named_children
        elif index is not None:
            found.insert(0, index)
        current = current.child_by_field_name("argument")
    return found


def _spelled(subscripts: tuple[kn.Poly | None, ...]) -> str:
    return repr([sorted(s.items()) if s is not None else None for s in subscripts])


# a thread's global index: its block's place times the block's size, plus its own
_GLOBAL_INDEX = re.compile(
    r"blockIdx\.[xyz]\s*\*\s*(?:\(\w+(?:\s+\w+)*\)\s*)?blockDim\.[xyz]"
    r"|blockDim\.[xyz]\s*\*\s*(?:\(\w+(?:\s+\w+)*\)\s*)?blockIdx\.[xyz]"
)
_THREAD_SHAPE = re.compile(r"^(?:threadIdx|blockIdx|blockDim|gridDim)\.[xyz]$")
_PAIR = re.compile(r"^(?:\w+::)*pair\s*<(.+),(.+)>$")
# scan's affine maps (transforms/scan.py AFFINE_HELPERS): a multiplier and an addend
_AFFINE = re.compile(r"^cudaify_affine\s*<(.+)>$")
_COMPLEX = re.compile(r"^(?:\w+::)*complex\s*<(.+)>$")
# a member's type as reduction declares a struct field's partials
_MEMBER_TYPE = re.compile(r"^decltype\s*\(\s*cudaify_declval\s*<(.+)>\s*\(\s*\)\s*\.\s*(\w+)\s*\)$")


def _element_bytes(base: str, layouts: _Layouts | None = None) -> int | None:
    """The size of an element of type `base`: a scalar of _ELEMENT_BYTES, a pair of them
    (`std::pair<double, double>`: 16, scan's `cudaify_affine<double>` the same), a
    complex number of them, and with `layouts` (the text's own types) a struct or class of
    such members laid out as the C ABI does, or one member's type (`decltype(
    cudaify_declval<Tally>().count)`: reduction's partials of a struct's field); None for
    any other."""
    found = _layout(base, layouts, 0)
    return found[0] if found is not None else None


def _layout(base: str, layouts: _Layouts | None, depth: int) -> tuple[int, int] | None:
    """(size, alignment) of type `base`, as `_element_bytes` reads it."""
    plain = _plain_type(base)
    if plain in _ELEMENT_BYTES:
        size = _ELEMENT_BYTES[plain]
        return size, size  # CUDA's vector types too are aligned to their size
    if depth > 8:
        return None
    pair = _PAIR.match(plain) or _AFFINE.match(plain) or _COMPLEX.match(plain)
    if pair is not None:
        parts = pair.groups() if len(pair.groups()) == 2 else pair.groups() * 2
        return _packed([_layout(part.strip(), layouts, depth + 1) for part in parts])
    if layouts is None:
        return None
    member = _MEMBER_TYPE.match(plain)
    if member is not None:
        field = layouts.member(member[1].strip(), member[2])
        return _layout(field, layouts, depth + 1) if field is not None else None
    fields = layouts.fields(plain)
    if fields is None:
        return None
    return _packed([_layout(field, layouts, depth + 1) for field in fields])


def _packed(members: Sequence[tuple[int, int] | None]) -> tuple[int, int] | None:
    """(size, alignment) of a struct with these members in order (each at the next offset
    its alignment allows, the whole padded to the largest alignment); None if any is."""
    offset, alignment = 0, 1
    for member in members:
        if member is None:
            return None
        size, align = member
        offset = -(-offset // align) * align + size
        alignment = max(alignment, align)
    return (-(-offset // alignment) * alignment, alignment) if members else None


class _Layouts:
    """The struct and class definitions of a text: the type of each data member, in
    order, an array member as that many members. A type with a base class, a virtual
    function or a bit-field is not laid out here (its size is not the members')."""

    def __init__(self, tree: Tree, data: bytes):
        self.tree, self.data = tree, data
        self._found: dict[str, list[tuple[str, str]] | None] | None = None
        self._known: dict[str, int] | None = None

    def _constants(self) -> dict[str, int]:
        if self._known is None:
            self._known = _constants(self.tree, self.data)
        return self._known

    def fields(self, name: str) -> list[str] | None:
        members = self._definitions().get(name)
        return [type_ for type_, _ in members] if members is not None else None

    def member(self, name: str, field: str) -> str | None:
        members = self._definitions().get(name)
        return next((type_ for type_, known in members or () if known == field), None)

    def _definitions(self) -> dict[str, list[tuple[str, str]] | None]:
        if self._found is None:
            self._found = {}
            for node in cs.walk(self.tree.root_node):
                if node.type not in ("struct_specifier", "class_specifier"):
                    continue
                body = node.child_by_field_name("body")
                name = node.child_by_field_name("name")
                if body is None:
                    continue
                if name is None and node.parent is not None:
                    if node.parent.type != "type_definition":
                        continue
                    name = node.parent.child_by_field_name("declarator")
                if name is not None:
                    spelled = _plain_type(cs.text(name, self.data))
                    self._found.setdefault(spelled, self._members(node, body))
        return self._found

    def _members(self, node: Node, body: Node) -> list[tuple[str, str]] | None:
        if any(child.type == "base_class_clause" for child in node.children):
            return None
        members: list[tuple[str, str]] = []
        for field in body.named_children:
            if field.type in ("function_definition", "declaration", "template_declaration"):
                if "virtual" in cs.text(field, self.data).split("(")[0].split():
                    return None
                continue  # a member function, or a static member
            if field.type != "field_declaration":
                continue
            kinds = {child.type for child in field.children}
            if "bitfield_clause" in kinds:
                return None
            if "storage_class_specifier" in kinds:
                continue  # static: not in the object
            type_node = field.child_by_field_name("type")
            if type_node is None:
                return None
            type_ = cs.text(type_node, self.data)
            for declarator in field.children_by_field_name("declarator"):
                if declarator.type == "function_declarator":
                    if "virtual" in cs.text(field, self.data).split():
                        return None
                    continue
                count, current = 1, declarator
                while current.type == "array_declarator":
                    size = current.child_by_field_name("size")
                    value = (
                        _literal(cs.text(size, self.data), self._constants())
                        if size is not None
                        else None
                    )
                    if value is None:
                        return None
                    count *= value
                    inner = current.child_by_field_name("declarator")
                    if inner is None:
                        return None
                    current = inner
                spelled = "void *" if current.type == "pointer_declarator" else type_
                if current.type not in ("field_identifier", "pointer_declarator"):
                    return None
                name = cs.text(current, self.data).lstrip("* ")
                members.extend([(spelled, name)] * count)
        return members


def _declared_elements(
    tree: Tree,
    data: bytes,
    declared: cs.Declared,
    lookup,  # type: ignore[no-untyped-def]
) -> int | None:
    """The elements an array declaration holds (`float x[N][M]`: N * M), its sizes
    read by `lookup` (a dict of constants, or a function of a node); None if unknown."""
    node = cs.node_at(tree, declared.start, "declaration")
    for child in cs.walk(node) if node is not None else ():
        if child.type != "array_declarator" or child.parent is None:
            continue
        if child.parent.type == "array_declarator":
            continue  # the outermost `[...]` holds the rest
        if cs.declarator_kind(child)[1] is None:
            continue
        name = cs.declarator_kind(child)[1]
        if name is None or cs.text(name, data) != declared.name:
            continue
        total = 1
        current: Node | None = child
        while current is not None and current.type == "array_declarator":
            size = current.child_by_field_name("size")
            if size is None:
                return None
            value = lookup(size) if callable(lookup) else kn.evaluate(size, data, lookup)
            if value is None:
                return None
            total *= value
            current = current.child_by_field_name("declarator")
        return total
    return None


def _plain_type(base: str) -> str:
    return " ".join(_QUALIFIERS.sub(" ", base).split())


def _precision_of(type_text: str) -> str | None:
    plain = _plain_type(type_text.replace("*", " ").replace("&", " "))
    complex_ = _COMPLEX.match(plain)
    if complex_ is not None:  # a complex number's arithmetic is its parts'
        return _precision_of(complex_[1])
    if plain in ("double", "double2", "long double"):
        return "fp64"
    if plain in ("float", "float2", "float4", "half", "__half"):
        return "fp32"
    return None
