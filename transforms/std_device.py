"""Device equivalents of the standard library operations the analysis models as pure
(frontend/stdlib_model.py): std::complex and its functions become `cuda::std::` ones
(libcu++, shipped with nvcc), std::pair too, std::min/max become `cudaify_min/max` (same
definition: `std::min` returns `b < a ? b : a`), and the <cmath> functions take their
`cuda::std::` overloads. A `std::` name the kernel would keep and that has no device
version is refused by name. Local lambdas the kernels call are defined again in them
(`lambdas_called`)."""

from __future__ import annotations

import re

from tree_sitter import Node

from cudaify.transforms import csource as cs
from cudaify.transforms.prelude import marker, runtime_text

COMPLEX = frozenset("complex polar abs arg norm conj proj real imag".split())
MATH = frozenset(
    """sqrt cbrt exp exp2 expm1 log log2 log10 log1p pow sin cos tan asin acos atan atan2
    sinh cosh tanh asinh acosh atanh fabs floor ceil round trunc fmod fmin fmax fma hypot
    erf erfc tgamma lgamma copysign rint nearbyint remainder fdim isnan isinf isfinite
    signbit""".split()
)
UTILITY = frozenset({"pair", "make_pair"})
MINMAX = {"min": "cudaify_min", "max": "cudaify_max"}
# Types the device sees as they are.
PLAIN_TYPES = frozenset(
    "size_t ptrdiff_t int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t".split()
)
_STD_NAME = re.compile(r"(?<![\w:])(?:::)?std::(\w+)")

STD_PRELUDE = runtime_text("std_device.cuh")

STD_MARKER = marker(STD_PRELUDE)


class NoDeviceVersion(Exception):
    """A `std::` name in kernel code that has no device version here."""


def device_text(code: str) -> str:
    """`code` with every modelled `std::` name replaced by its device version."""

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name in MINMAX:
            return MINMAX[name]
        if name in COMPLEX or name in MATH or name in UTILITY:
            return f"cuda::std::{name}"
        if name in PLAIN_TYPES:
            return match.group(0)
        raise NoDeviceVersion(f"std::{name}")

    return _STD_NAME.sub(replace, code)


def uses_std(code: str) -> bool:
    """Whether `device_text` changes `code` (the kernel needs STD_PRELUDE)."""
    return device_text(code) != code


class CaptureChanged(Exception):
    """A lambda the kernel would redefine uses a variable that changes after its definition."""


def lambdas_called(
    calls: set[str], definition: Node, start: int, end: int, source: bytes
) -> list[Node]:
    """The declarations `auto f = [...](...) {...};` before byte `start` of `definition` (the
    function) of the lambdas named in `calls`, the last one of each name: the kernels of the
    code at [start, end) define them again (a lambda defined in device code runs there; the
    analysis has checked that their bodies only read what they capture). What they capture
    must keep its value from the definition up to `end`, or the copy would see a newer one."""
    found: dict[str, Node] = {}
    for node in cs.walk(definition):
        if node.start_byte >= start:
            break
        name = lambda_declared(node, source)
        if name is not None and name in calls:
            found[name] = node
    for name, node in found.items():
        captured = {cs.text(i, source) for i in cs.identifiers_in(node)} - lambda_locals(
            node, source
        )
        for change in cs.walk(definition):
            if not node.end_byte <= change.start_byte < end:
                continue
            changes = change.type in ("assignment_expression", "update_expression") or (
                change.type == "pointer_expression" and cs.text(change, source).startswith("&")
            )
            touched = {cs.text(i, source) for i in cs.identifiers_in(change)} if changes else set()
            if captured & touched:
                raise CaptureChanged(
                    f"lambda '{name}' uses '{sorted(captured & touched)[0]}', which changes "
                    f"after the lambda is defined (line {cs.line_of(change)})"
                )
    return list(found.values())


def lambda_declared(node: Node, source: bytes) -> str | None:
    """`f` when `node` is the declaration `auto f = [...](...) {...};`."""
    if node.type != "declaration":
        return None
    declarators = [c for c in node.named_children if c.type == "init_declarator"]
    if len(declarators) != 1:
        return None
    value = declarators[0].child_by_field_name("value")
    name = declarators[0].child_by_field_name("declarator")
    if value is None or name is None or value.type != "lambda_expression":
        return None
    return cs.text(name, source) if name.type == "identifier" else None


def lambda_locals(node: Node, source: bytes) -> set[str]:
    """The lambda's own name, parameters and locals."""
    names = cs.names_declared_in(node, source)
    for n in cs.walk(node):
        if n.type in ("parameter_declaration", "optional_parameter_declaration"):
            names.update(cs.text(i, source) for i in cs.identifiers_in(n))
    return names
