"""Data regions: which elements of each array a loop nest touches, as C expressions.

The first and last flat index come from isl (lexicographic minimum and maximum of the
index tuples every access touches over its iteration domain), so triangular loops,
strides and offsets are exact. They are written in terms of what is visible at the
loop: parameters, globals and constants. Fixed-size objects are copied whole."""

from __future__ import annotations

import math
from dataclasses import dataclass

import islpy as isl

from cudaify.frontend.affine import (
    Poly,
    add,
    const,
    mul,
    poly_of_affine,
    poly_text,
    symbol,
    to_affine,
)
from cudaify.frontend.dependence import Instance, Space, guarded_count, image, pw_aff_to_c
from cudaify.frontend.facts import Affine, ArrayData


@dataclass(frozen=True)
class ArrayUse:
    """What the nest does with one array."""

    name: str
    elem_type: str
    kind: str
    dim_sizes: tuple[int | None, ...]  # declared sizes of every dimension
    inner_dims: tuple[str, ...]  # spelled sizes of the inner dimensions, as indexed
    instances: tuple[Instance, ...]
    readable: bool  # every access has affine subscripts and affine loop bounds
    access: str  # read | write | readwrite


def array_data(use: ArrayUse) -> ArrayData:
    first, count, whole = extent(use)
    multi = len(use.dim_sizes) > 1
    return ArrayData(
        name=use.name,
        elem_type=use.elem_type,
        count=count,
        first=first,
        access=use.access,
        dims=use.inner_dims if multi else (),
        dim_values=tuple(use.dim_sizes[1:]) if multi else (),
        kind=use.kind,
        whole=whole,
    )


def extent(use: ArrayUse) -> tuple[str, str | None, bool]:
    """(first flat index, element count, whole object) of what the nest touches."""
    if use.kind == "vector":
        return "0", f"{use.name}.size()", True
    fixed = all(s is not None and s > 0 for s in use.dim_sizes)
    if use.dim_sizes and fixed and use.kind != "unknown":
        return "0", str(math.prod(s for s in use.dim_sizes if s is not None)), True
    if not use.readable or not use.instances:
        return "0", None, False
    try:
        return _bounded(use)
    except (isl.Error, ValueError):
        return "0", None, False


def _bounded(use: ArrayUse) -> tuple[str, str | None, bool]:
    space = Space()
    strides = _numeric_strides(use)
    if strides is not None:
        flat = None
        for inst in use.instances:
            index = _flatten(inst.subscripts, strides)
            img = image(inst.chain, (index,), space, inst.context)
            flat = img if flat is None else flat.union(img)
        assert flat is not None
        context = flat.params()
        low, high = flat.dim_min(0).coalesce(), flat.dim_max(0).coalesce()
        count = high.sub(low).add_constant_val(isl.Val(1)).coalesce()
        first, elements = pw_aff_to_c(low, context, space), pw_aff_to_c(count, context, space)
        return first, guarded_count(elements, first + elements, context, space), False
    return _symbolic(use, space)


def _numeric_strides(use: ArrayUse) -> tuple[int, ...] | None:
    """Row-major strides when every inner dimension has a known size."""
    inner = use.dim_sizes[1:] if len(use.dim_sizes) > 1 else ()
    if len(use.instances[0].subscripts) != len(inner) + 1:
        return None
    if any(s is None for s in inner):
        return None
    strides = [1]
    for size in reversed(inner):
        assert size is not None
        strides.insert(0, strides[0] * size)
    return tuple(strides)


def _flatten(subscripts: tuple[Affine | None, ...], strides: tuple[int, ...]) -> Affine:
    total = const(0)
    for sub, stride in zip(subscripts, strides, strict=True):
        assert sub is not None
        scaled = mul(poly_of_affine(sub), const(stride))
        assert scaled is not None
        total = add(total, scaled)
    flat = to_affine(total, "")
    assert flat is not None
    return flat


def _symbolic(use: ArrayUse, space: Space) -> tuple[str, str | None, bool]:
    """Inner sizes known only by name (`A[i*n + j]`, VLA parameters): the flat index of
    the lexicographic extremes, row * n + column, is exact while columns stay in range."""
    dims = len(use.instances[0].subscripts)
    if len(use.inner_dims) != dims - 1 or "?" in use.inner_dims:
        return "0", None, False
    union = None
    for inst in use.instances:
        subscripts = tuple(s for s in inst.subscripts if s is not None)
        img = image(inst.chain, subscripts, space, inst.context)
        union = img if union is None else union.union(img)
    assert union is not None
    context = union.params()
    low, high = union.lexmin_pw_multi_aff(), union.lexmax_pw_multi_aff()
    lows = [low.get_pw_aff(k) for k in range(dims)]
    highs = [high.get_pw_aff(k) for k in range(dims)]
    exact = _flat_poly(lows, use.inner_dims, space), _flat_poly(highs, use.inner_dims, space)
    if exact[0] is not None and exact[1] is not None:
        count = add(add(exact[1], exact[0], -1), const(1))
        return poly_text(exact[0]), poly_text(count), False
    low_parts = [pw_aff_to_c(pa, context, space) for pa in lows]
    high_parts = [pw_aff_to_c(pa, context, space) for pa in highs]
    first = _flat_text(low_parts, use.inner_dims)
    last = _flat_text(high_parts, use.inner_dims)
    count = f"{last} + 1" if first == "0" else f"({last}) - ({first}) + 1"
    return first, count, False


def _flat_poly(parts: list[isl.PwAff], inner: tuple[str, ...], space: Space) -> Poly | None:
    """row * n + column as a polynomial when every part is one plain affine piece."""
    total: Poly | None = None
    for part, size in zip(parts, (None, *inner), strict=True):
        poly = _single_piece(part, space)
        if poly is None:
            return None
        if total is None:
            total = poly
            continue
        assert size is not None
        factor = const(int(size)) if size.lstrip("-").isdigit() else symbol(size)
        scaled = mul(total, factor)
        if scaled is None:
            return None
        total = add(scaled, poly)
    return total


def _single_piece(pa: isl.PwAff, space: Space) -> Poly | None:
    pieces = pa.get_pieces()
    if len(pieces) != 1:
        return None
    aff = pieces[0][1]
    if aff.dim(isl.dim_type.div) != 0:
        return None
    value = aff.get_constant_val()
    if not value.is_int():
        return None
    poly = const(int(value.to_python()))
    for k in range(aff.dim(isl.dim_type.param)):
        coeff = aff.get_coefficient_val(isl.dim_type.param, k)
        if not coeff.is_int():
            return None
        if coeff.to_python():
            name = space.c_name(aff.get_dim_name(isl.dim_type.param, k))
            poly = add(poly, {(name,): int(coeff.to_python())})
    return poly


def _flat_text(parts: list[str], inner: tuple[str, ...]) -> str:
    text = parts[0]
    for part, size in zip(parts[1:], inner, strict=True):
        size_text = size if size.replace("_", "a").isalnum() else f"({size})"
        text = f"({text}) * {size_text} + {part}" if text != "0" else part
    return text
