"""`coalesce`: put the loop whose variable indexes contiguous memory on threadIdx.x.

Consecutive threads of a warp differ in threadIdx.x; their loads coalesce into few memory
transactions only when they touch consecutive addresses, that is when the x-mapped loop
variable is the one with unit stride in the last subscript of the accesses. The offload
maps the innermost parallel loop on x, which is wrong for column-major code such as
`b[j][i] = a[j][i]` inside `for i { for j }`. The rule counts, for every mapped loop of a
kernel, the accesses in which its variable has unit stride in the last subscript, and
gives x to the loop with the most, swapping grid dimensions with the loop that had it.

Every mapped level is a parallel loop run as a grid-stride loop, so any assignment of
loops to dimensions computes the same iterations: the rule changes speed, never results.
The grid follows the swap (each dimension's block count is computed from the trip count
of the loop it now carries, under that dimension's limit)."""

from __future__ import annotations

import re

from cudaify.core import Problem, Variant
from cudaify.frontend.edits import Edit, apply_edits
from cudaify.frontend.facts import Loop, Program
from cudaify.transforms import kernel_text as kt
from cudaify.transforms.base import Context, Method, Outcome


class Coalesce(Method):
    name = "coalesce"
    summary = "map the thread index x to the loop that walks contiguous memory"
    category = "memory"
    follows = (
        "offload",
        "reduction",
        "data_residency",
        "readonly_cache",
        "unroll",
        "fast_math",
        "launch_tuning",
    )
    instruction = (
        "Make consecutive threads touch consecutive addresses: in each kernel, the loop "
        "mapped to threadIdx.x/blockIdx.x must be the one whose variable has stride 1 in "
        "the last subscript of most accesses (e.g. for a[j][i] or a[j*n+i], the loop over "
        "i). When another mapped loop fits better, swap the two loops' grid dimensions in "
        "the kernel's index computation and swap the corresponding grid dimensions at the "
        "launch, keeping every grid-stride loop so that any trip count is covered. Do not "
        "change what any thread computes."
    )

    def applies(self, variant: Variant, ctx: Context) -> str | None:
        swaps, reasons = _swaps(variant.code, ctx.program)
        return None if swaps else _first(reasons)

    def apply_rule(self, variant: Variant, ctx: Context) -> Outcome:
        swaps, reasons = _swaps(variant.code, ctx.program)
        if not swaps:
            return Outcome(None, _first(reasons))
        data = kt.encode(variant.code)
        edits = [edit for swap in swaps for edit in swap.edits]
        code = kt.decode(apply_edits(data, edits))
        detail = "; ".join(swap.detail for swap in swaps)
        return Outcome(variant.then(self.name, code, "rule", detail=detail))

    def check(self, before: Variant, after: Variant, ctx: Context) -> list[Problem]:
        """A launched kernel runs its loops on other grid dimensions (threadIdx/blockIdx
        dimensions used in another order) or is launched with another shape; no kernel
        maps two loops on one dimension; as many kernels as before."""
        from cudaify.transforms import postcondition as pc

        problems = pc.common_problems(self.name, before.code, after.code)
        if problems:
            return problems
        if not pc.remapped(before.code, after.code):
            problems.append(
                Problem("coalesce", "no launched kernel maps its loops on other dimensions")
            )
        for kernel in kt.kernels(kt.encode(after.code)):
            dims = [level.dim for level in kernel.levels]
            if len(set(dims)) != len(dims):
                problems.append(
                    Problem("coalesce", f"kernel '{kernel.name}' maps two loops on one dimension")
                )
        if len(kt.kernels(kt.encode(after.code))) != len(kt.kernels(kt.encode(before.code))):
            problems.append(Problem("coalesce", "the number of kernels changed"))
        return problems


def _first(reasons: list[str]) -> str:
    return reasons[0] if reasons else "no kernel maps two or more loops on the grid"


class _Swap:
    def __init__(self, edits: list[Edit], detail: str) -> None:
        self.edits, self.detail = edits, detail


def unit_stride_counts(loop: Loop, names: list[str]) -> dict[str, int]:
    """For each loop variable in `names`: the accesses of the nest in which it has stride
    +-1 in the last subscript (the contiguous one)."""
    counts = dict.fromkeys(names, 0)
    for access in loop.accesses:
        if not access.subscripts or access.subscripts[-1] is None:
            continue
        last = access.subscripts[-1]
        for name in names:
            if abs(last.coeff(name)) == 1:
                counts[name] += 1
    return counts


def _nest(program: Program, function: str, line: int) -> Loop | None:
    fn = program.function(function)
    if fn is None:
        return None
    for outer in fn.loops:
        for loop in outer.walk():
            if loop.line == line:
                return loop
    return None


def _swaps(code: str, program: Program) -> tuple[list[_Swap], list[str]]:
    data = kt.encode(code)
    launches = kt.launches(data)
    swaps: list[_Swap] = []
    reasons: list[str] = []
    for kernel in kt.kernels(data):
        if len(kernel.levels) < 2:
            reasons.append(f"kernel '{kernel.name}' maps one loop: nothing to swap")
            continue
        nest = _nest(program, kernel.function, kernel.line)
        if nest is None:
            reasons.append(f"kernel '{kernel.name}': its loop nest is not in the analysis")
            continue
        counts = unit_stride_counts(nest, [level.var for level in kernel.levels])
        on_x = next((level for level in kernel.levels if level.dim == "x"), None)
        best = max(kernel.levels, key=lambda level: counts[level.var])
        if on_x is None or counts[best.var] <= counts[on_x.var]:
            reasons.append(
                f"kernel '{kernel.name}': loop '{on_x.var if on_x else '?'}' on x already "
                "walks contiguous memory"
            )
            continue
        mine = [launch for launch in launches if launch.kernel == kernel.name]
        if not mine or any(launch.grid is None for launch in mine):
            reasons.append(f"kernel '{kernel.name}': its launch grid is not a dim3 it can read")
            continue
        edits = _header_edits(data, best, on_x)
        for launch in mine:
            edits += _grid_edits(launch.grid, kernel, best, on_x)  # type: ignore[arg-type]
        detail = (
            f"{kernel.name}: loop '{best.var}' ({counts[best.var]} unit-stride accesses) moves "
            f"to x, loop '{on_x.var}' ({counts[on_x.var]}) to {best.dim}"
        )
        swaps.append(_Swap(edits, detail))
    return swaps, reasons


def _header_edits(data: bytes, first: kt.Level, second: kt.Level) -> list[Edit]:
    edits = []
    for level, dim in ((first, second.dim), (second, first.dim)):
        header = kt.decode(data[level.start : level.end])
        match = kt.GRID_STRIDE.fullmatch(header)
        assert match is not None
        new = (
            f"for (long long {match['index']} = blockIdx.{dim} * (long long)blockDim.{dim} + "
            f"threadIdx.{dim}; {match['index']} < {match['trips']};{match['gap']}"
            f"{match['index']} += (long long)blockDim.{dim} * gridDim.{dim})"
        )
        edits.append(Edit(level.start, level.end, new, f"loop '{level.var}' on {dim}"))
    return edits


def _grid_edits(grid: kt.Shape, kernel: kt.Kernel, first: kt.Level, second: kt.Level) -> list[Edit]:
    """The grid's arguments in x, y, z order, with the two loops' trip counts exchanged."""
    args = list(grid.args)
    position = {"x": 0, "y": 1, "z": 2}
    a, b = position[first.dim], position[second.dim]
    if max(a, b) >= len(args):
        return []
    # every mention swaps at once: y's row cap names x's trip count (`cudaify_rows`)
    swap = {first.trips: second.trips, second.trips: first.trips}
    alternatives = "|".join(re.escape(trips) for trips in sorted(swap, key=len, reverse=True))
    mention = re.compile(rf"(?<![\w.])(?:{alternatives})(?!\w)")
    args = [mention.sub(lambda found: swap[found.group(0)], arg) for arg in args]
    return [Edit(grid.start, grid.end, "(" + ", ".join(args) + ")", f"grid of {kernel.name}")]
