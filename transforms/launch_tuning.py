"""`launch_tuning`: try the next block shape of a fixed list; measurement picks.

The best block shape depends on the kernel's registers, its memory pattern and the GPU,
which the text does not tell. So the rule does not guess: each application moves every
tunable launch to the next shape of a fixed list (1-D: 256 -> 128 -> 512 -> 1024 -> 64;
2-D: 32x8 -> 16x16 -> 32x4 -> 64x4 -> 32x16; 3-D: 32x4x2 -> 64x2x2 -> 32x2x4 -> 128x2x1 ->
32x8x1), and the search, which times every variant, keeps the fastest. A launch's shapes
are `dim3` values declared before it (offload) or written in the launch itself
(schedule's `k<<<dim3(...), dim3(32, 4, 2)>>>`). The grid follows: each dimension's block
count is computed from its trip count and the new block size (`cudaify_blocks`), and the
kernels' grid-stride loops cover any trip count with any shape. The kernel gets
`__launch_bounds__` of the new thread count, so the compiler can budget registers for
exactly that block size. A grid that counts
several outputs per thread (register_tiling's `cudaify_blocks(trips, 4 * 256, ...)`: each
thread computes 4) keeps that factor: the new block size times the same factor.

A kernel that uses shared memory, barriers or warp shuffles may depend on its block
size; its launches keep their shape."""

from __future__ import annotations

import math
import re

from tree_sitter import Node

from cudaify.core import Problem, Variant
from cudaify.frontend.edits import Edit, apply_edits
from cudaify.transforms import csource as cs
from cudaify.transforms import kernel_nest as kn
from cudaify.transforms import kernel_text as kt
from cudaify.transforms.base import Context, Method, Outcome
from cudaify.transforms.data_residency import split_arguments

SHAPES: dict[int, tuple[tuple[int, ...], ...]] = {
    1: ((256,), (128,), (512,), (1024,), (64,)),
    2: ((32, 8), (16, 16), (32, 4), (64, 4), (32, 16)),
    # 3-D: the order of stencil3d7's 7-point kernel over 256^3 floats on an H100 (0.124, 0.122,
    # 0.124, 0.125, 0.128 ms; 64x4x1 0.127, 32x16x1 0.136)
    3: ((32, 4, 2), (64, 2, 2), (32, 2, 4), (128, 2, 1), (32, 8, 1)),
}
_BLOCK_SIZED = re.compile(r"__shared__|__syncthreads|__shfl|warpSize|cooperative_groups")
_BLOCKS_CALL = re.compile(r"^cudaify_blocks\((?P<args>.*)\)$")


class _Refuse(Exception):
    pass


class LaunchTuning(Method):
    name = "launch_tuning"
    summary = "try the next block shape of a fixed list; the measurements pick"
    category = "launch"
    follows = (
        "offload",
        "data_residency",
        "coalesce",
        "readonly_cache",
        "unroll",
        "fast_math",
        "register_tiling",
        "launch_tuning",
        "narrow_counters",
    )
    instruction = (
        "Change the thread-block shape of the kernel launches to the next candidate "
        "(1-D: 256 -> 128 -> 512 -> 1024 -> 64; 2-D: 32x8 -> 16x16 -> 32x4 -> 64x4 -> "
        "32x16; 3-D: 32x4x2 -> 64x2x2 -> 32x2x4 -> 128x2x1 -> 32x8x1), recompute each grid "
        "dimension from its trip count and the new block size, "
        "and add __launch_bounds__(threads per block) to the kernel. Keep the grid-stride "
        "loops. Leave kernels that use shared memory, __syncthreads or warp shuffles alone."
    )

    def applies(self, variant: Variant, ctx: Context) -> str | None:
        edits, _, reasons = _plan(variant.code)
        return None if edits else _first(reasons)

    def apply_rule(self, variant: Variant, ctx: Context) -> Outcome:
        edits, details, reasons = _plan(variant.code)
        if not edits:
            return Outcome(None, _first(reasons))
        code = kt.decode(apply_edits(kt.encode(variant.code), edits))
        return Outcome(variant.then(self.name, code, "rule", detail="; ".join(details)))

    def check(self, before: Variant, after: Variant, ctx: Context) -> list[Problem]:
        """A launched kernel is launched with another configuration or gained
        `__launch_bounds__`; each tuned launch's grid counts blocks of the block's sizes
        (times the outputs per thread it counted before), dimension by dimension."""
        from cudaify.transforms import postcondition as pc

        problems = pc.common_problems(self.name, before.code, after.code)
        if problems:
            return problems
        bounds = pc.leaf_count(frozenset({"__launch_bounds__"}), pc.whole)
        if not (
            pc.relaunched(before.code, after.code)
            or pc.kernel_gained(before.code, after.code, bounds)
        ):
            problems.append(
                Problem("launch_tuning", "no launch of a kernel changed its configuration")
            )
        data = kt.encode(after.code)
        kernels = {kernel.name: kernel for kernel in kt.kernels(data)}
        for launch in kt.launches(data):
            try:
                block, threads = _block_sizes(launch), _grid_threads(launch)
            except _Refuse:
                continue
            kernel = kernels.get(launch.kernel)
            factor = _factors(kernel, data, len(threads)) if kernel else (1,) * len(threads)
            expected = tuple(size * f for size, f in zip(block, factor, strict=False))
            if tuple(threads) != expected[: len(threads)]:
                coarse = "" if set(factor) == {1} else f" and each thread computes {factor}"
                problems.append(
                    Problem(
                        "launch_tuning",
                        f"the grid of '{launch.kernel}' counts blocks of {threads}, "
                        f"the block is {block}{coarse}",
                        line=cs.line_of(launch.call),
                    )
                )
        return problems


def _first(reasons: list[str]) -> str:
    return reasons[0] if reasons else "no kernel launch with a dim3 block and grid"


def _block_sizes(launch: kt.Launch) -> tuple[int, ...]:
    if launch.block is None or launch.grid is None:
        raise _Refuse("its block or grid is not a dim3 declared before the launch")
    try:
        return tuple(int(arg.rstrip("uU")) for arg in launch.block.args)
    except ValueError:
        raise _Refuse("its block shape is not made of integer constants") from None


def _grid_threads(launch: kt.Launch) -> list[int]:
    """The block size each grid dimension divides by (`cudaify_blocks(trips, T, most)`)."""
    assert launch.grid is not None
    sizes = []
    for arg in launch.grid.args:
        match = _BLOCKS_CALL.match(arg.strip())
        parts: tuple[str, ...] = split_arguments(match.group("args")) if match else ()
        if len(parts) != 3 or not parts[1].isdigit():
            raise _Refuse("its grid is not computed with cudaify_blocks")
        sizes.append(int(parts[1]))
    return sizes


def _factors(kernel: kt.Kernel, data: bytes, dims: int) -> tuple[int, ...]:
    """Per grid dimension (x, y, z), the outputs each thread of `kernel` computes: the
    factor its grid-stride loop steps by (`blockDim.x * gridDim.x * 4` after
    register_tiling), 1 for offload's loops."""
    text = re.sub(r"\s+|\(long long\)", "", cs.text(kernel.node, data))
    factors = []
    for dim in "xyz"[:dims]:
        found = re.search(rf"blockDim\.{dim}\*gridDim\.{dim}\*(\d+)\)", text)
        factors.append(int(found.group(1)) if found else 1)
    return tuple(factors)


def _plan(code: str) -> tuple[list[Edit], list[str], list[str]]:
    data = kt.encode(code)
    kernels = {kernel.name: kernel for kernel in kt.kernels(data)}
    by_kernel: dict[str, list[kt.Launch]] = {}
    for launch in kt.launches(data):
        by_kernel.setdefault(launch.kernel, []).append(launch)
    edits: list[Edit] = []
    details: list[str] = []
    reasons: list[str] = []
    for name, launches in by_kernel.items():
        kernel = kernels.get(name)
        try:
            if kernel is None:
                raise _Refuse("it is not defined in this file")
            if _depends_on_block_size(kernel.node, data):
                raise _Refuse("it uses shared memory, barriers or shuffles")
            shapes = {_block_sizes(launch) for launch in launches}
            for launch in launches:
                if len(_grid_threads(launch)) != len(_block_sizes(launch)):
                    raise _Refuse("its grid and block have different numbers of dimensions")
            if len(shapes) != 1:
                raise _Refuse("its launches use different shapes")
            current = shapes.pop()
            new = _next_shape(current)
            factor = _factors(kernel, data, len(new))
        except _Refuse as refusal:
            reasons.append(f"kernel '{name}': {refusal}")
            continue
        for launch in launches:
            edits.extend(_launch_edits(launch, new, factor))
        edits.extend(kn.launch_bounds_edits(kernel.node, math.prod(new)))
        details.append(f"{name}: block {_show(current)} -> {_show(new)}")
    return edits, details, reasons


def _depends_on_block_size(kernel: Node, data: bytes) -> bool:
    """Whether the kernel, or a function it calls (transitively), uses shared memory,
    barriers or shuffles."""
    definitions = cs.all_function_nodes(cs.parse(data), data)
    seen: set[str] = set()
    pending = [kernel]
    while pending:
        node = pending.pop()
        if _BLOCK_SIZED.search(cs.text(node, data)):
            return True
        for name, _ in cs.calls_in(node, data):
            if name not in seen:
                seen.add(name)
                pending.extend(definitions.get(name, []))
    return False


def _next_shape(current: tuple[int, ...]) -> tuple[int, ...]:
    shapes = SHAPES.get(len(current))
    if shapes is None:
        raise _Refuse(f"no list of {len(current)}-D shapes to try")
    if current not in shapes:
        raise _Refuse(f"its block {_show(current)} is not in the list of shapes")
    index = shapes.index(current)
    if index == len(shapes) - 1:
        raise _Refuse("every shape in the list has been tried")
    return shapes[index + 1]


def _show(shape: tuple[int, ...]) -> str:
    return "x".join(str(size) for size in shape)


def _launch_edits(launch: kt.Launch, new: tuple[int, ...], factor: tuple[int, ...]) -> list[Edit]:
    assert launch.block is not None and launch.grid is not None
    edits = [
        Edit(
            launch.block.start,
            launch.block.end,
            "(" + ", ".join(str(size) for size in new) + ")",
            "block shape",
        )
    ]
    args = []
    for position, arg in enumerate(launch.grid.args):
        match = _BLOCKS_CALL.match(arg.strip())
        assert match is not None
        trips, _, most = split_arguments(match.group("args"))
        args.append(f"cudaify_blocks({trips}, {new[position] * factor[position]}, {most})")
    edits.append(Edit(launch.grid.start, launch.grid.end, "(" + ", ".join(args) + ")", "grid"))
    return edits
