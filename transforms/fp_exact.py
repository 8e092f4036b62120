"""`fp_exact`: kernel arithmetic that rounds like the CPU's.

nvcc contracts a floating multiplication and an addition into one fused multiply-add
(`--fmad=true` is its default, and ptxas fuses across statements too); gcc -O3 on x86-64
without `-march` does not. The two round differently, so a kernel can print numbers that
differ from the reference's in the fourth digit (a norm, a projection, a long dot product)
and be rejected at the default tolerance. nvcc has no per-file pragma for this; what it
never contracts are the IEEE round-to-nearest intrinsics. So inside `__global__` and
`__device__` functions every `*`, `+` and `-` (and `*=`, `+=`, `-=`) whose type is float or
double becomes `__fmul_rn`, `__fadd_rn`, `__fsub_rn` or `__dmul_rn`, `__dadd_rn`,
`__dsub_rn`, the operation's type chosen as C's usual arithmetic conversions choose it.

Types come from what the CUDA text declares: parameters, locals, file-scope globals,
typedefs and `#define NAME double`, array and pointer element types (one subscript per
level), casts, literals (`1.0` double, `1.0f` float), the rounding intrinsics themselves and
the float-suffixed math functions, the fields of the file's own structs (`p.x`, `q->x`,
`pts[i].x`). An operation whose operand type cannot be told (a template parameter, `long
double`, most calls) is left as written and the step's
detail says so; integer arithmetic (indices) is never touched, and neither are `__host__
__device__` helpers, which the host runs too.

The search applies this method to a candidate whose only mismatch with the reference is
rounding (backend/compare.py, mcgs/search.py `verify`), and to one with any other mismatch
whose kernels compare floating values (`compares_floats`: an argmin's `d < best` decided
otherwise by one unit in the last place changes an index, not a digit). Its graph node has
no in-edges, so the search does not try it otherwise: without FMA a kernel is slower, and
most outputs match without it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from tree_sitter import Node, Tree

from cudaify.core import Problem, Variant
from cudaify.frontend.edits import Edit, apply_edits
from cudaify.transforms import csource as cs
from cudaify.transforms import kernel_text as kt
from cudaify.transforms.base import Context, Method, Outcome

FLOAT, DOUBLE, INTEGER = "float", "double", "int"
FLOATING = (FLOAT, DOUBLE)
INTRINSICS = {
    (FLOAT, "*"): "__fmul_rn",
    (FLOAT, "+"): "__fadd_rn",
    (FLOAT, "-"): "__fsub_rn",
    (DOUBLE, "*"): "__dmul_rn",
    (DOUBLE, "+"): "__dadd_rn",
    (DOUBLE, "-"): "__dsub_rn",
}
OPERATOR_OF = {name: operator for (_type, operator), name in INTRINSICS.items()}
TYPE_OF = {name: type_ for (type_, _operator), name in INTRINSICS.items()}

# words of a declaration that do not change its arithmetic type
_QUALIFIERS = frozenset(
    """const volatile static register extern inline constexpr restrict __restrict__
    __restrict __shared__ __constant__ __device__""".split()
)
_INTEGER_WORDS = frozenset(
    """int long short char unsigned signed bool _Bool size_t ssize_t ptrdiff_t intptr_t
    uintptr_t int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t std::size_t
    std::ptrdiff_t""".split()
)
_BUILTIN_VECTORS = frozenset({"threadIdx", "blockIdx", "blockDim", "gridDim"})  # unsigned
# Calls whose result type overloads cannot change: the f-suffixed math is float in C and
# C++; the plain names are double when every argument is double.
_FLOAT_MATH = frozenset(
    """sqrtf fabsf expf exp2f logf log2f log10f powf sinf cosf tanf floorf ceilf fminf fmaxf
    fmodf rsqrtf __expf __logf __sinf __cosf __powf __fdividef __fdiv_rn __fsqrt_rn""".split()
)
_DOUBLE_MATH = frozenset(
    """sqrt fabs exp exp2 log log2 log10 pow sin cos tan floor ceil fmin fmax fmod rsqrt
    __ddiv_rn __dsqrt_rn""".split()
)
_COMPOUND = ("*=", "+=", "-=")
_DECIMAL_FLOAT = re.compile(r"(?:\d+\.\d*|\.\d+|\d+(?=[eE]))(?:[eE][+-]?\d+)?([fFlL]?)")
_HEX_FLOAT = re.compile(r"0[xX](?:[0-9a-fA-F]*\.?[0-9a-fA-F]*)[pP][+-]?\d+([fFlL]?)")
_INTEGER_LITERAL = re.compile(r"(?:0[xX][0-9a-fA-F]+|0[bB][01]+|\d+)[uUlLzZ]*")


@dataclass(frozen=True)
class Typed:
    """What an expression is: its scalar type (float, double, int; None when unknown) or the
    struct it is, and how many pointer or array levels lie above it (0: a value)."""

    scalar: str | None
    depth: int = 0
    record: str | None = None  # a struct or class of the file (`Point`), when scalar is None

    @property
    def arithmetic(self) -> str | None:
        return self.scalar if self.depth == 0 else None


UNKNOWN = Typed(None)


class FpExact(Method):
    name = "fp_exact"
    summary = "kernel float/double arithmetic as __dmul_rn, __dadd_rn...: no FMA, CPU rounding"
    category = "precision"
    # No in-edges: the search applies it to a candidate whose only mismatch is rounding,
    # not as a move of its own. It changes no mapping, so what may follow a kernel-making
    # method may follow it.
    follows = ()
    leads_to = (
        "reduction",
        "atomic_privatize",
        "scan",
        "wavefront",
        "data_residency",
        "coalesce",
        "readonly_cache",
        "shared_tiling",
        "register_tiling",
        "unroll",
        "fast_math",
        "launch_tuning",
    )
    instruction = (
        "Make the kernels' floating-point arithmetic round like the CPU's (no fused "
        "multiply-add). Inside __global__ and __device__ functions only, rewrite every "
        "multiplication, addition and subtraction whose type is float into __fmul_rn(a, b), "
        "__fadd_rn(a, b), __fsub_rn(a, b), and whose type is double into __dmul_rn(a, b), "
        "__dadd_rn(a, b), __dsub_rn(a, b); `x += e` becomes `x = __dadd_rn(x, e)` (likewise "
        "-= and *=). The type is C's: double if either operand is double, else float if "
        "either is float. Never change integer arithmetic (indices), host code or "
        "__host__ __device__ functions, and change nothing else."
    )

    def applies(self, variant: Variant, ctx: Context) -> str | None:
        plan = _plan(variant.code)
        return None if plan.edits else plan.refusal()

    def apply_rule(self, variant: Variant, ctx: Context) -> Outcome:
        plan = _plan(variant.code)
        if not plan.edits:
            return Outcome(None, plan.refusal())
        code = kt.decode(apply_edits(kt.encode(variant.code), plan.edits))
        return Outcome(variant.then(self.name, code, "rule", detail=plan.detail()))

    def check(self, before: Variant, after: Variant, ctx: Context) -> list[Problem]:
        """The host code is unchanged; each device function computes the same expression
        tree, with rounding intrinsics in place of operators, and has at least as many
        intrinsics as before (in all, more); no multiplication of a known floating type is
        left as an operator (nvcc could fuse it); every intrinsic rounds in its operation's
        C type (a `__fmul_rn` of doubles would lose precision)."""
        from cudaify.transforms import postcondition as pc

        common = pc.common_problems(self.name, before.code, after.code)
        if common:
            return common
        old, new = kt.encode(before.code), kt.encode(after.code)
        old_tree, new_tree = cs.parse(old), cs.parse(new)
        if _host_view(old_tree, old) != _host_view(new_tree, new):
            return [_problem("the host code changed: only __global__/__device__ code may")]
        old_bodies, new_bodies = _device_bodies(old_tree, old), _device_bodies(new_tree, new)
        problems = [
            _problem(f"{name}: computes something else, not the same operations rounded")
            for (name, old_body), (_, new_body) in zip(old_bodies, new_bodies, strict=True)
            if _canonical(old_body, old) != _canonical(new_body, new)
        ]
        added = sum(_intrinsics(b, new) for _, b in new_bodies) - sum(
            _intrinsics(b, old) for _, b in old_bodies
        )
        if added <= 0:
            problems.append(_problem("no floating-point operation was rewritten"))
        types = _Types(new_tree, new)
        for _name, body in new_bodies:
            problems += _plain_products(body, new, types)
            problems += _mistyped_intrinsics(body, new, types)
        return problems


def _problem(message: str, line: int | None = None) -> Problem:
    return Problem("fp_exact", message, line=line)


# -- which code is device code ------------------------------------------------------------


def _execution_spaces(definition: Node) -> set[str]:
    return {child.type for child in definition.children} & {"__global__", "__device__", "__host__"}


def _device_functions(tree: Tree) -> Iterator[Node]:
    """`__global__` and `__device__`-only function definitions (not `__host__ __device__`:
    the host runs those too, and the intrinsics exist only on the device)."""
    for node in cs.walk(tree.root_node):
        if node.type != "function_definition":
            continue
        spaces = _execution_spaces(node)
        if spaces and "__host__" not in spaces:
            yield node


def _host_device_helpers(tree: Tree, data: bytes) -> list[str]:
    return [
        cs.function_name(node, data) or "?"
        for node in cs.walk(tree.root_node)
        if node.type == "function_definition"
        and {"__host__", "__device__"} <= _execution_spaces(node)
    ]


def _device_bodies(tree: Tree, data: bytes) -> list[tuple[str, Node]]:
    found = []
    for definition in _device_functions(tree):
        body = definition.child_by_field_name("body")
        if body is not None:
            found.append((cs.function_name(definition, data) or "?", body))
    return found


def _host_view(tree: Tree, data: bytes) -> bytes:
    """The source with every device function's body emptied: what the host compiles."""
    bodies = _device_bodies(tree, data)
    return apply_edits(data, [Edit(b.start_byte, b.end_byte, "{}", "device") for _, b in bodies])


# -- types ---------------------------------------------------------------------------------

_HANDLERS = {
    "number_literal": "_literal",
    "char_literal": "_integer",
    "true": "_integer",
    "false": "_integer",
    "sizeof_expression": "_integer",
    "identifier": "_identifier",
    "subscript_expression": "_subscript",
    "pointer_expression": "_pointer",
    "field_expression": "_member",
    "parenthesized_expression": "_parenthesized",
    "cast_expression": "_cast",
    "unary_expression": "_unary",
    "update_expression": "_operand",
    "binary_expression": "_binary",
    "conditional_expression": "_conditional",
    "assignment_expression": "_assignment",
    "comma_expression": "_comma",
    "call_expression": "_call",
}


class _Types:
    """The type of an expression of one translation unit, from what it declares."""

    def __init__(self, tree: Tree, data: bytes):
        self.tree = tree
        self.data = data
        self.aliases = _aliases(tree, data)
        self.returns = _return_types(tree, data)
        self.records = _records(tree, data)

    def of(self, node: Node | None) -> Typed:
        handler = _HANDLERS.get(node.type) if node is not None else None
        if node is None or handler is None:
            return UNKNOWN
        typed: Typed = getattr(self, handler)(node)
        return typed

    def arithmetic(self, node: Node | None) -> str | None:
        return self.of(node).arithmetic

    def scalar(self, spelled: str, seen: frozenset[str] = frozenset()) -> str | None:
        """`const double` -> double, `size_t` -> int, `real` (a typedef) -> its type."""
        words = [w for w in spelled.replace("*", " ").split() if w not in _QUALIFIERS]
        if words in ([FLOAT], [DOUBLE]):
            return words[0]
        if words and all(w in _INTEGER_WORDS for w in words):
            return INTEGER
        if len(words) == 1 and words[0] in self.aliases and words[0] not in seen:
            return self.scalar(self.aliases[words[0]], seen | {words[0]})
        return None

    def _literal(self, node: Node) -> Typed:
        return Typed(literal_type(cs.text(node, self.data)))

    def _integer(self, node: Node) -> Typed:
        return Typed(INTEGER)

    def _identifier(self, node: Node) -> Typed:
        name = cs.text(node, self.data)
        declared = cs.visible(self.tree, self.data, name, node.start_byte)
        if declared is None:  # a macro standing for a number, or unknown
            value = self.aliases.get(name, "")
            return Typed(literal_type(value)) if value else UNKNOWN
        depth = _declared_depth(self.tree, self.data, declared)
        if depth is None or declared.kind == "function":
            return UNKNOWN
        scalar = self.scalar(declared.base)
        if scalar is None:
            return Typed(None, depth, self.record(declared.base))
        return Typed(scalar, depth)

    def record(self, spelled: str) -> str | None:
        """`const struct point` or `Point` (a reference's `&` aside) -> the struct's name,
        when the file defines it."""
        words = [w for w in spelled.replace("&", " ").split() if w not in _QUALIFIERS]
        if words and words[0] in ("struct", "class"):
            words = words[1:]
        return words[0] if len(words) == 1 and words[0] in self.records else None

    def _subscript(self, node: Node) -> Typed:
        array = self.of(node.child_by_field_name("argument"))
        return replace(array, depth=array.depth - 1) if array.depth > 0 else UNKNOWN

    def _pointer(self, node: Node) -> Typed:
        operand = self.of(node.child_by_field_name("argument"))
        if cs.text(node, self.data).lstrip().startswith("&"):
            return replace(operand, depth=operand.depth + 1)
        return replace(operand, depth=operand.depth - 1) if operand.depth > 0 else UNKNOWN

    def _member(self, node: Node) -> Typed:
        """`threadIdx.x` is an integer; `p.x` and `q->x` the field's type, where p is a
        struct of the file and q a pointer to one."""
        argument = node.child_by_field_name("argument")
        if argument is not None and cs.text(argument, self.data) in _BUILTIN_VECTORS:
            return Typed(INTEGER)
        owner = self.of(argument)
        arrow = _text(node.child_by_field_name("operator"), self.data) == "->"
        field_name = _text(node.child_by_field_name("field"), self.data)
        fields = self.records.get(owner.record or "", {})
        if owner.depth != int(arrow) or field_name not in fields:
            return UNKNOWN
        spelled, depth = fields[field_name]
        scalar = self.scalar(spelled)
        return Typed(scalar, depth) if scalar is not None else UNKNOWN

    def _parenthesized(self, node: Node) -> Typed:
        inner = node.named_children
        return self.of(inner[0]) if len(inner) == 1 else UNKNOWN

    def _cast(self, node: Node) -> Typed:
        spelled = _text(node.child_by_field_name("type"), self.data)
        scalar = self.scalar(spelled)
        return Typed(scalar, spelled.count("*")) if scalar is not None else UNKNOWN

    def _unary(self, node: Node) -> Typed:
        if _text(node.child_by_field_name("operator"), self.data) in ("!", "~"):
            return Typed(INTEGER)
        return self._operand(node)

    def _operand(self, node: Node) -> Typed:
        return self.of(node.child_by_field_name("argument"))

    def _binary(self, node: Node) -> Typed:
        operator = _text(node.child_by_field_name("operator"), self.data)
        left = self.of(node.child_by_field_name("left"))
        right = self.of(node.child_by_field_name("right"))
        if operator in ("==", "!=", "<", ">", "<=", ">=", "&&", "||"):
            return Typed(INTEGER)
        if left.depth or right.depth:
            return _pointer_arithmetic(operator, left, right)
        if operator in ("&", "|", "^", "<<", ">>", "%"):
            return Typed(INTEGER) if left.scalar and right.scalar else UNKNOWN
        return Typed(converted(left.scalar, right.scalar))

    def _conditional(self, node: Node) -> Typed:
        first = self.of(node.child_by_field_name("consequence"))
        second = self.of(node.child_by_field_name("alternative"))
        if first.depth or second.depth:
            return first if first == second else UNKNOWN
        return Typed(converted(first.scalar, second.scalar))

    def _assignment(self, node: Node) -> Typed:
        return self.of(node.child_by_field_name("left"))

    def _comma(self, node: Node) -> Typed:
        return self.of(node.child_by_field_name("right"))

    def _call(self, node: Node) -> Typed:
        name = cs.call_name(node, self.data)
        if name in TYPE_OF:
            return Typed(TYPE_OF[name])
        if name in _FLOAT_MATH:
            return Typed(FLOAT)
        if name in self.returns:  # a function of this file; every declaration agrees
            return Typed(self.scalar(self.returns[name]))
        arguments = _children(node.child_by_field_name("arguments"))
        if name in _DOUBLE_MATH and arguments:
            if all(self.arithmetic(a) == DOUBLE for a in arguments):
                return Typed(DOUBLE)
        return UNKNOWN


def _pointer_arithmetic(operator: str, left: Typed, right: Typed) -> Typed:
    """`p + i` is a pointer like p; `p - q` an integer; nothing else is arithmetic."""
    if operator not in ("+", "-") or left.scalar is None or right.scalar is None:
        return UNKNOWN
    if left.depth and right.depth:
        return Typed(INTEGER) if operator == "-" else UNKNOWN
    return left if left.depth else right


def converted(left: str | None, right: str | None) -> str | None:
    """C's usual arithmetic conversions over float, double and the integers."""
    if left is None or right is None:
        return None
    if DOUBLE in (left, right):
        return DOUBLE
    if FLOAT in (left, right):
        return FLOAT
    return INTEGER


def literal_type(spelled: str) -> str | None:
    """`1.0` and `1e3` double, `1.0f` float, `2`, `0xff` and `10u` int; `1.0L` (long
    double) and anything else None."""
    text = spelled.strip().replace("'", "")
    if _INTEGER_LITERAL.fullmatch(text):
        return INTEGER
    match = _HEX_FLOAT.fullmatch(text) or _DECIMAL_FLOAT.fullmatch(text)
    if match is None:
        return None
    return {"": DOUBLE, "f": FLOAT}.get(match.group(1).lower())


def _aliases(tree: Tree, data: bytes) -> dict[str, str]:
    """File-scope `typedef double real;` and `#define NAME <a word or a number>`."""
    found: dict[str, str] = {}
    for node in tree.root_node.children:
        if node.type == "type_definition":
            declarator = node.child_by_field_name("declarator")
            aliased = node.child_by_field_name("type")
            if declarator is not None and declarator.type == "type_identifier" and aliased:
                found[cs.text(declarator, data)] = cs.text(aliased, data)
        elif node.type == "preproc_def":
            name = node.child_by_field_name("name")
            value = _text(node.child_by_field_name("value"), data).strip()
            if name is not None and re.fullmatch(r"[\w.]+(?: [\w.]+)*", value):
                found[cs.text(name, data)] = value
    return found


def _records(tree: Tree, data: bytes) -> dict[str, dict[str, tuple[str, int]]]:
    """Each struct or class the file defines, by name: its fields' spelled types and
    pointer or array levels (`struct Point { double x, y; }` -> x and y: ("double", 0)).
    Two definitions of one name (in different scopes) make it unknown."""
    found: dict[str, dict[str, tuple[str, int]]] = {}
    twice: set[str] = set()
    for node in cs.walk(tree.root_node):
        if node.type not in ("struct_specifier", "class_specifier"):
            continue
        name, body = node.child_by_field_name("name"), node.child_by_field_name("body")
        if name is None or body is None:
            continue
        fields: dict[str, tuple[str, int]] = {}
        for member in body.named_children:
            spelled = member.child_by_field_name("type")
            if member.type != "field_declaration" or spelled is None:
                continue
            for index, child in enumerate(member.children):
                if member.field_name_for_child(index) != "declarator":
                    continue
                identifier, depth = _field_declarator(child, data)
                if identifier:
                    fields[identifier] = (cs.text(spelled, data), depth)
        key = cs.text(name, data)
        if key in found:
            twice.add(key)
        found[key] = fields
    return {name: fields for name, fields in found.items() if name not in twice}


def _field_declarator(declarator: Node, data: bytes) -> tuple[str, int]:
    """A field declarator's name and its pointer or array levels ("", 0: a bit-field or
    a method, nothing to type)."""
    depth = 0
    current: Node | None = declarator
    while current is not None:
        if current.type == "field_identifier":
            return cs.text(current, data), depth
        if current.type not in ("pointer_declarator", "array_declarator"):
            return "", 0
        depth += 1
        current = current.child_by_field_name("declarator")
    return "", 0


def _return_types(tree: Tree, data: bytes) -> dict[str, str]:
    """The spelled return type of each function the file defines or declares, when every
    definition and declaration of that name returns the same non-pointer type."""
    found: dict[str, str] = {}
    conflicting: set[str] = set()
    for node in cs.walk(tree.root_node):
        if node.type not in ("function_definition", "declaration"):
            continue
        declarator = node.child_by_field_name("declarator")
        spelled = node.child_by_field_name("type")
        if declarator is None or spelled is None or declarator.type != "function_declarator":
            continue  # a variable, or a function returning a pointer or reference
        name = cs.function_name(node, data) if node.type == "function_definition" else None
        inner = declarator.child_by_field_name("declarator")
        name = name or (cs.text(inner, data) if inner is not None else None)
        if not name:
            continue
        if found.setdefault(name, cs.text(spelled, data)) != cs.text(spelled, data):
            conflicting.add(name)
    return {name: spelled for name, spelled in found.items() if name not in conflicting}


def _declared_depth(tree: Tree, data: bytes, declared: cs.Declared) -> int | None:
    """Pointer and array levels of `declared`'s declarator (`double (*A)[100]`: 2); None
    when it is not a plain declarator (a function's)."""
    kinds = ("declaration", "parameter_declaration", "optional_parameter_declaration")
    node: Node | None = tree.root_node.descendant_for_byte_range(declared.start, declared.start)
    while node is not None and not (node.type in kinds and node.start_byte == declared.start):
        node = node.parent
    if node is None:
        return None
    for index, child in enumerate(node.children):
        if node.field_name_for_child(index) == "declarator":
            depth = _depth_to(child, declared.name, data)
            if depth is not None:
                return depth
    return None


def _depth_to(declarator: Node, name: str, data: bytes) -> int | None:
    depth = 0
    current: Node | None = declarator
    while current is not None:
        if current.type == "identifier":
            return depth if cs.text(current, data) == name else None
        if current.type == "function_declarator":
            return None
        if current.type in ("pointer_declarator", "array_declarator"):
            depth += 1
        inner = current.child_by_field_name("declarator")
        if inner is None:
            inner = next(
                (
                    c
                    for c in current.named_children
                    if "declarator" in c.type or c.type == "identifier"
                ),
                None,
            )
        current = inner
    return None


def _text(node: Node | None, data: bytes) -> str:
    return cs.text(node, data) if node is not None else ""


def _children(node: Node | None) -> list[Node]:
    return list(node.named_children) if node is not None else []


# -- the rewrite ---------------------------------------------------------------------------

Where = tuple[str, str, int]  # (function, expression, line)


@dataclass
class _Plan:
    edits: list[Edit] = field(default_factory=list)
    counts: dict[str, dict[str, int]] = field(default_factory=dict)  # function -> name -> n
    unknown: list[Where] = field(default_factory=list)  # operand type not known
    impure: list[Where] = field(default_factory=list)  # `x op= e` whose x has side effects
    helpers: list[str] = field(default_factory=list)  # __host__ __device__: left alone
    rounded: int = 0  # rounding intrinsics the device code already calls

    def refusal(self) -> str:
        if self.rounded:
            return "the kernels' float and double arithmetic already rounds through intrinsics"
        reason = "no __global__ or __device__ function has float or double arithmetic"
        skipped = self.unknown + self.impure
        if not skipped:
            return reason + " to round"
        function, text, line = skipped[0]
        return f"{reason} of a known type to round ({function}: '{text}', line {line}, is not)"

    def detail(self) -> str:
        parts = []
        for function, counts in self.counts.items():
            used = ", ".join(f"{name} x{count}" for name, count in sorted(counts.items()))
            parts.append(f"{function}: {used}")
        for skipped, why in (
            (self.unknown, "an operand's type is unknown"),
            (self.impure, "its target has side effects"),
        ):
            if skipped:
                function, text, line = skipped[0]
                parts.append(
                    f"{len(skipped)} left as written, {why} (first: {function}: '{text}', "
                    f"line {line})"
                )
        if self.helpers:
            helpers = ", ".join(self.helpers)
            parts.append(f"__host__ __device__ helpers left as written: {helpers}")
        return "; ".join(parts)


_ORDERING = ("<", ">", "<=", ">=", "==", "!=")


def compares_floats(code: str) -> bool:
    """Whether a `__global__` or `__device__` function of `code` compares float or double
    values (`d < best`): there rounding can decide a branch, so an FMA that moves a value
    by one unit in the last place can change an index, a count or a path, not only a
    printed digit."""
    data = kt.encode(code)
    tree = cs.parse(data)
    types = _Types(tree, data)
    for _name, body in _device_bodies(tree, data):
        for node in cs.walk(body):
            if node.type != "binary_expression":
                continue
            if _text(node.child_by_field_name("operator"), data) not in _ORDERING:
                continue
            sides = (node.child_by_field_name("left"), node.child_by_field_name("right"))
            if any(types.arithmetic(side) in FLOATING for side in sides):
                return True
    return False


def _plan(code: str) -> _Plan:
    data = kt.encode(code)
    tree = cs.parse(data)
    types = _Types(tree, data)
    plan = _Plan(helpers=_host_device_helpers(tree, data))
    for name, body in _device_bodies(tree, data):
        plan.edits += _Rewriter(types, data, name, plan).edits(body)
        plan.rounded += _intrinsics(body, data)
    return plan


class _Rewriter:
    """The rewrite of one device function's body."""

    def __init__(self, types: _Types, data: bytes, function: str, plan: _Plan):
        self.types = types
        self.data = data
        self.function = function
        self.plan = plan

    def edits(self, node: Node) -> list[Edit]:
        """Non-overlapping edits rewriting every typed floating operation under `node`;
        an operation inside another is part of the outer one's edit."""
        replacement = self._replacement(node)
        if replacement is not None:
            return [Edit(node.start_byte, node.end_byte, replacement, "fp_exact")]
        return [edit for child in node.children for edit in self.edits(child)]

    def _spliced(self, node: Node | None) -> str:
        """`node`'s text with everything under it rewritten, without the parentheses
        around it (it becomes a call's argument) unless they hold a comma expression."""
        if node is None:
            return ""
        inner = node.named_children
        if node.type == "parenthesized_expression" and len(inner) == 1:
            if inner[0].type != "comma_expression":
                return self._spliced(inner[0])
        start = node.start_byte
        edits = [Edit(e.start - start, e.end - start, e.text, e.reason) for e in self.edits(node)]
        return kt.decode(apply_edits(self.data[start : node.end_byte], edits))

    def _replacement(self, node: Node) -> str | None:
        if node.type not in ("binary_expression", "assignment_expression"):
            return None
        operator = _text(node.child_by_field_name("operator"), self.data)
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if operator in ("*", "+", "-") and node.type == "binary_expression":
            result = self._operation_type(node, left, right)
            if result is None:
                return None
            name = self._intrinsic(result, operator)
            return f"{name}({self._spliced(left)}, {self._spliced(right)})"
        if operator in _COMPOUND:
            return self._compound(node, operator, left, right)
        return None

    def _compound(
        self, node: Node, operator: str, left: Node | None, right: Node | None
    ) -> str | None:
        """`x += e` -> `x = __dadd_rn(x, e)` when x is float or double and has no side
        effects (it is evaluated twice now)."""
        result = self._operation_type(node, left, right)
        if result is None or left is None or self.types.arithmetic(left) not in FLOATING:
            return None
        if cs.has_side_effects(left):
            self.plan.impure.append(self._where(node))
            return None
        target = cs.text(left, self.data)
        name = self._intrinsic(result, operator[0])
        return f"{target} = {name}({target}, {self._spliced(right)})"

    def _operation_type(self, node: Node, left: Node | None, right: Node | None) -> str | None:
        """float or double when the operation is floating and both types are known, else
        None. An operation that may be floating but whose types are not known is recorded;
        integer arithmetic (an index, a known integer with an unknown) is not."""
        left_type, right_type = self.types.of(left), self.types.of(right)
        if left_type.depth or right_type.depth:
            return None  # pointer arithmetic
        result = converted(left_type.scalar, right_type.scalar)
        if result is None and INTEGER not in (left_type.scalar, right_type.scalar):
            self.plan.unknown.append(self._where(node))
        return result if result in FLOATING else None

    def _intrinsic(self, result: str, operator: str) -> str:
        name = INTRINSICS[(result, operator)]
        counts = self.plan.counts.setdefault(self.function, {})
        counts[name] = counts.get(name, 0) + 1
        return name

    def _where(self, node: Node) -> Where:
        text = " ".join(cs.text(node, self.data).split())
        return self.function, text if len(text) <= 60 else text[:57] + "...", cs.line_of(node)


# -- what the postcondition reads ------------------------------------------------------------


def _canonical(node: Node, data: bytes) -> str:
    """The expression tree under `node` with rounding intrinsics read as their operators,
    `x op= e` as `x = x op e`, parentheses and comments dropped: two bodies that differ
    only by this method's rewrite read the same."""
    kind = node.type
    inner = node.named_children
    if kind == "comment":
        return ""
    if kind == "parenthesized_expression" and len(inner) == 1:
        if inner[0].type != "comma_expression":
            return _canonical(inner[0], data)
    if kind == "call_expression":
        name = cs.call_name(node, data)
        arguments = _children(node.child_by_field_name("arguments"))
        if name in OPERATOR_OF and len(arguments) == 2:
            operands = " ".join(_canonical(a, data) for a in arguments)
            return f"({OPERATOR_OF[name]} {operands})"
    if kind in ("binary_expression", "assignment_expression"):
        operator = _text(node.child_by_field_name("operator"), data)
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if left is not None and right is not None:
            first, second = _canonical(left, data), _canonical(right, data)
            if kind == "assignment_expression" and operator in _COMPOUND:
                return f"(= {first} ({operator[0]} {first} {second}))"
            return f"({operator} {first} {second})"
    if node.child_count == 0:
        return cs.text(node, data)
    return f"({kind} " + " ".join(_canonical(c, data) for c in node.children) + ")"


def _intrinsics(body: Node, data: bytes) -> int:
    return sum(1 for name, _call in cs.calls_in(body, data) if name in OPERATOR_OF)


def _plain_products(body: Node, data: bytes, types: _Types) -> list[Problem]:
    """A float or double `*` (or `*=`) left as an operator: nvcc may fuse it into an FMA.
    (Not `x *= e` whose x has side effects: the rule cannot evaluate it twice.)"""
    problems = []
    for node in cs.walk(body):
        if node.type not in ("binary_expression", "assignment_expression"):
            continue
        operator = _text(node.child_by_field_name("operator"), data)
        if operator not in ("*", "*="):
            continue
        left = types.of(node.child_by_field_name("left"))
        right = types.of(node.child_by_field_name("right"))
        if left.depth or right.depth or converted(left.scalar, right.scalar) not in FLOATING:
            continue
        target = node.child_by_field_name("left")
        if operator == "*=" and (left.scalar not in FLOATING or cs.has_side_effects(target)):
            continue
        text = " ".join(cs.text(node, data).split())
        problems.append(_problem(f"'{text}': a floating product nvcc may fuse", cs.line_of(node)))
    return problems


def _mistyped_intrinsics(body: Node, data: bytes, types: _Types) -> list[Problem]:
    """`__fmul_rn` with a double operand rounds a double operation to float; `__dmul_rn`
    on two floats rounds a float operation in double: both differ from what C computes."""
    problems = []
    for name, call in cs.calls_in(body, data):
        arguments = _children(call.child_by_field_name("arguments"))
        if name not in TYPE_OF or len(arguments) != 2:
            continue
        first, second = (types.arithmetic(a) for a in arguments)
        computed = converted(first, second)
        if computed is not None and computed != TYPE_OF[name]:
            problems.append(
                _problem(
                    f"'{name}' of {first} and {second}: C computes this in {computed}",
                    cs.line_of(call),
                )
            )
    return problems
