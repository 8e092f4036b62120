"""`cudaify analyze`: the analysis facts as JSON and as a readable report."""

from __future__ import annotations

from typing import Any

from cudaify.frontend.facts import Access, ArrayData, Function, Loop, Program, Scop

ALIASING = (
    "assumption: distinct pointer parameters do not alias each other "
    "(the dependence tests treat them as separate arrays) unless a call passes them "
    "the same argument"
)


def to_json(program: Program) -> dict[str, Any]:
    return {
        "path": program.path,
        "language": program.language,
        "assumptions": [ALIASING],
        "functions": [_function_json(fn) for fn in program.functions],
    }


def _function_json(fn: Function) -> dict[str, Any]:
    arrays: list[dict[str, Any]] = []
    for line, data in fn.data:
        arrays.extend(_array_json(a, line) for a in data)
    return {
        "name": fn.name,
        "line": fn.line,
        "signature": fn.signature,
        "estimated_calls": fn.estimated_calls,
        "template_params": list(fn.template_params),
        "instantiations": [dict(binding) for binding in fn.instantiations],
        "calls": [
            {
                "callee": c.callee,
                "line": c.line,
                "arguments": list(c.arguments),
                "in_loop": c.in_loop,
            }
            for c in fn.calls
        ],
        "loops": [_loop_json(loop) for top in fn.loops for loop in top.walk()],
        "arrays": arrays,
        "regions": [_scop_json(scop) for scop in fn.scops],
        "region_notes": list(fn.scop_notes),
    }


def _scop_json(scop: Scop) -> dict[str, Any]:
    return {
        "line": scop.line,
        "column": scop.column,
        "loops": [loop.var for loop in scop.loops],
        "statements": [
            {
                "name": st.name,
                "line": st.line,
                "kind": st.kind,
                "loops": [scop.loops[k].var for k in st.loops],
                "sum": st.reduction == "+",
                "reduction": st.reduction or None,  # "+", "max", "min"
            }
            for st in scop.statements
        ],
        "params": list(scop.params),
        "arrays": [a.name for a in scop.arrays],
        "scalars_written": [s.name for s in scop.scalars if s.written],
    }


def _loop_json(loop: Loop) -> dict[str, Any]:
    return {
        "line": loop.line,
        "column": loop.column,
        "var": loop.var,
        "depth": loop.depth,
        "lower": loop.lower,
        "upper": loop.upper,
        "step": loop.step,
        "upper_inclusive": loop.upper_inclusive,
        "parallel": loop.parallel,
        "pattern": loop.pattern,
        "reductions": [
            {"var": r.var, "op": r.op, **({"key": r.key, "strict": r.strict} if r.key else {})}
            for r in loop.reductions
        ],
        "reason": loop.reason,
        "early_exit": loop.early_exit,
        "perfectly_nested": loop.perfectly_nested,
        "prologue": (
            {"start": loop.prologue.start, "end": loop.prologue.end}
            if loop.prologue is not None
            else None
        ),
        "scalars_read": list(loop.scalars_read),
        "scalars_written": list(loop.scalars_written),
        "calls": list(loop.calls),
        "accesses": [_access_json(a) for a in loop.accesses],
    }


def _access_json(access: Access) -> dict[str, Any]:
    return {
        "array": access.array,
        "line": access.line,
        "subscripts": [s.text if s is not None else None for s in access.subscripts],
        "affine": access.affine,
        "read": access.is_read,
        "write": access.is_write,
    }


def _array_json(array: ArrayData, loop_line: int) -> dict[str, Any]:
    return {
        "name": array.name,
        "elem_type": array.elem_type,
        "size": array.count,
        "first": array.first,
        "access": array.access,
        "kind": array.kind,
        "dims": list(array.dims),
        "whole": array.whole,
        "loop_line": loop_line,
    }


def to_text(program: Program) -> str:
    lines = [
        f"{program.path}: {len(program.functions)} function(s), {program.language}",
        ALIASING,
        "",
    ]
    for fn in program.functions:
        lines += _function_text(program.path, fn)
    return "\n".join(lines).rstrip() + "\n"


def _function_text(path: str, fn: Function) -> list[str]:
    lines = [
        f"function {fn.name} (line {fn.line}), called about {fn.estimated_calls} time(s) from main"
    ]
    if fn.template_params:
        used = "; ".join(
            ", ".join(f"{name}={value}" for name, value in binding) for binding in fn.instantiations
        )
        lines.append(
            f"  template <{', '.join(fn.template_params)}>, instantiated as used: "
            + (used or "no instantiation found")
        )
    if not fn.loops:
        lines.append("  no canonical for loops")
    for top in fn.loops:
        for loop in top.walk():
            lines += _loop_text(path, loop)
        for array in fn.arrays_for(top):
            lines.append("    data " + _array_text(array))
    for scop in fn.scops:
        lines += _scop_text(path, scop)
    lines += [f"  {note}" for note in fn.scop_notes]
    lines.append("")
    return lines


def _scop_text(path: str, scop: Scop) -> list[str]:
    """A static-control region: what the schedule-based mapping may rearrange."""
    loops = ", ".join(dict.fromkeys(loop.var for loop in scop.loops))
    sums = [st for st in scop.statements if st.reduction == "+"]
    extremes = [st for st in scop.statements if st.reduction in ("max", "min")]
    lines = [
        f"  {path}:{scop.line}:{scop.column}: static-control region: "
        f"{len(scop.statements)} statement(s) in loops over {loops or 'nothing'}"
        + (f", {len(sums)} sum(s)" if sums else "")
        + (f", {len(extremes)} min/max reduction(s)" if extremes else "")
    ]
    if scop.params:
        lines.append(f"    sizes: {', '.join(scop.params)}")
    written = [s.name for s in scop.scalars if s.written]
    if written:
        lines.append(f"    scalars written: {', '.join(written)}")
    lines.append("    data: " + ", ".join(a.name for a in scop.arrays))
    return lines


def _loop_text(path: str, loop: Loop) -> list[str]:
    indent = "  " * (loop.depth + 1)
    bound = "<=" if loop.upper_inclusive else "<"
    if loop.step < 0:
        bound = ">=" if loop.upper_inclusive else ">"
    verdict = "parallel" if loop.parallel else f"not parallel ({loop.pattern})"
    lines = [
        f"{indent}{path}:{loop.line}:{loop.column}: loop {loop.var} from {loop.lower} "
        f"while {loop.var} {bound} {loop.upper} step {loop.step}: {verdict}",
        f"{indent}  why: {loop.reason}",
    ]
    if loop.reductions:
        lines.append(f"{indent}  reductions: " + ", ".join(r.label for r in loop.reductions))
    if loop.scalars_written:
        lines.append(f"{indent}  scalars written: {', '.join(loop.scalars_written)}")
    if loop.calls:
        lines.append(f"{indent}  calls: {', '.join(loop.calls)}")
    accesses = sorted({_access_text(a) for a in loop.accesses})
    if accesses:
        lines.append(f"{indent}  accesses: {', '.join(accesses)}")
    return lines


def _access_text(access: Access) -> str:
    subs = "".join(f"[{s.text if s is not None else '?'}]" for s in access.subscripts)
    mode = "rw" if access.is_read and access.is_write else "w" if access.is_write else "r"
    return f"{access.array}{subs}:{mode}"


def _array_text(array: ArrayData) -> str:
    size = array.count if array.count is not None else "unknown size"
    where = f" from [{array.first}]" if array.first != "0" else ""
    whole = ", whole object" if array.whole else ""
    return f"{array.name}: {array.elem_type} x {size}{where}, {array.access}, {array.kind}{whole}"
