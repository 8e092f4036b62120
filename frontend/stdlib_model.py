"""The standard library's pure operations, as the analysis sees them.

A call is modelled only by the declaration libclang resolves it to (its qualified name in
namespace `std`, a trivial special member of a plain struct, or the `operator()` of a lambda
whose definition is in view), never by its spelling: a user function called `min` or a
`push_back` stays an unknown call. A modelled call reads its arguments and, for a member
call, uses its object as `object_mode` says; nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass

import clang.cindex as ci

from cudaify.frontend.loops import CK, kids, unwrap

TK = ci.TypeKind

# Functions of namespace std that only compute from their arguments (the <cmath> and
# <complex> overloads, std::min/max of two values, std::make_pair).
STD_FUNCTIONS = frozenset(
    {
        "abs", "fabs", "arg", "norm", "conj", "proj", "real", "imag", "polar",
        "sqrt", "cbrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "pow",
        "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh",
        "asinh", "acosh", "atanh", "floor", "ceil", "round", "trunc", "fmod", "fmin",
        "fmax", "fma", "hypot", "erf", "erfc", "tgamma", "lgamma", "copysign", "rint",
        "nearbyint", "remainder", "fdim", "isnan", "isinf", "isfinite", "signbit",
        "min", "max", "make_pair",
    }
)  # fmt: skip
# Free operators of namespace std on values (std::complex, std::pair): arithmetic and
# comparisons. `operator<<` and `operator>>` (streams) are not among them.
STD_OPERATORS = frozenset(
    "operator" + op for op in ("+", "-", "*", "/", "==", "!=", "<", ">", "<=", ">=")
)
# Members of std classes: how each uses its object. A const method only reads it.
COMPOUND = {"operator+=", "operator-=", "operator*=", "operator/="}
STD_MEMBERS: dict[str, dict[str, str]] = {
    "complex": {
        "complex": "write",
        "operator=": "write",
        **{op: "readwrite" for op in COMPOUND},
        "real": "read",
        "imag": "read",
    },
    "pair": {"pair": "write", "operator=": "write"},
    "vector": {"size": "read", "empty": "read", "data": "read"},
    "array": {"size": "read", "empty": "read", "data": "read"},
}
# The inline namespaces of libstdc++ and libc++: not part of a name.
INLINE_NAMESPACES = {"__1", "__cxx11", "__2"}


@dataclass(frozen=True)
class CallModel:
    """`kind`: "pure" (a modelled library operation) or "lambda" (the call of a lambda
    whose body is `lambda_expr`); `object_mode`: how a member call uses its object."""

    kind: str
    what: str  # the qualified name: std::complex::operator+=, Point::operator=, ...
    object_mode: str | None = None
    lambda_expr: ci.Cursor | None = None
    lambda_name: str = ""


def qualified_name(decl: ci.Cursor) -> str:
    parts = []
    node: ci.Cursor | None = decl
    while node is not None and node.kind != CK.TRANSLATION_UNIT:
        if node.kind == CK.LINKAGE_SPEC or node.spelling in INLINE_NAMESPACES:
            node = node.semantic_parent
            continue
        parts.append(node.spelling)
        node = node.semantic_parent
    return "::".join(reversed(parts))


def model(call: ci.Cursor) -> CallModel | None:
    """The model of `call`, or None when it is not a known pure operation."""
    decl = call.referenced
    if decl is None or decl.kind not in (
        CK.FUNCTION_DECL,
        CK.CXX_METHOD,
        CK.CONSTRUCTOR,
        CK.FUNCTION_TEMPLATE,
    ):
        return None
    name = qualified_name(decl)
    if decl.kind in (CK.CXX_METHOD, CK.CONSTRUCTOR):
        return _member(call, decl, name)
    parts = name.split("::")
    if len(parts) != 2 or parts[0] != "std" or not _value_parameters(decl):
        return None
    if parts[1] in STD_FUNCTIONS or parts[1] in STD_OPERATORS:
        if parts[1] in ("min", "max") and _argument_count(call) != 2:
            return None  # the comparator and initializer-list forms call user code
        return CallModel("pure", name)
    return None


def _member(call: ci.Cursor, decl: ci.Cursor, name: str) -> CallModel | None:
    owner = decl.semantic_parent
    if owner is None:
        return None
    if decl.spelling == "operator()" and owner.spelling.startswith("(lambda at "):
        return _lambda(call, owner, name)
    parts = name.split("::")
    if len(parts) == 3 and parts[0] == "std" and parts[1] in STD_MEMBERS:
        mode = STD_MEMBERS[parts[1]].get(parts[2])
        if mode is None or not _plain_arguments(owner):
            return None
        if parts[2] in ("real", "imag") and _argument_count(call) != 0:
            mode = "write"  # the setter form
        if parts[2] == "data" and not decl.is_const_method():
            return None  # a writable pointer into the container escapes
        return CallModel("pure", name, mode)
    if parts[0] == "std" and decl.kind == CK.CXX_METHOD and _const_reader(decl):
        return CallModel("pure", name, "read")  # `s.size()`, `v.front()` of a const object
    if _trivial_special_member(decl, owner):
        mode = "write"
        return CallModel("pure", name, mode)
    return None


def _const_reader(decl: ci.Cursor) -> bool:
    """A const method of a std class whose parameters and result give no write access."""
    result = decl.result_type.get_canonical()
    if result.kind == TK.POINTER and not result.get_pointee().is_const_qualified():
        return False
    return decl.is_const_method() and not decl.is_static_method() and _value_parameters(decl)


def _trivial_special_member(decl: ci.Cursor, owner: ci.Cursor) -> bool:
    """A copy or move of a plain struct (a POD: its special members are trivial)."""
    if owner.kind not in (CK.STRUCT_DECL, CK.CLASS_DECL) or not owner.type.is_pod():
        return False
    if decl.kind == CK.CONSTRUCTOR:
        return (
            decl.is_copy_constructor() or decl.is_move_constructor()
        ) or decl.is_default_constructor()
    return decl.is_copy_assignment_operator_method() or decl.is_move_assignment_operator_method()


def value_record(t: ci.Type) -> bool:
    """A struct the device can hold as a value: a plain struct (a POD), or std::complex or
    std::pair of plain values (their members are the modelled ones)."""
    canonical = t.get_canonical()
    if canonical.kind != TK.RECORD:
        return False
    if canonical.is_pod():
        return True
    decl = canonical.get_declaration()
    if decl is None or qualified_name(decl) not in ("std::complex", "std::pair"):
        return False
    return _plain_arguments(decl)


def _plain_arguments(owner: ci.Cursor) -> bool:
    """std::complex and std::pair of plain values only (a pair of strings copies through
    user-visible allocations)."""
    t = owner.type
    count = t.get_num_template_arguments()
    if count <= 0:
        return True
    for k in range(count):
        argument = t.get_template_argument_type(k).get_canonical()
        if argument.kind == TK.INVALID or not argument.is_pod():
            return _std_complex(argument)
    return True


def _std_complex(t: ci.Type) -> bool:
    decl = t.get_declaration()
    return decl is not None and qualified_name(decl) == "std::complex"


def _value_parameters(decl: ci.Cursor) -> bool:
    """No parameter through which the callee could write: by value or by const reference."""
    for param in decl.get_arguments() or ():
        t = param.type.get_canonical()
        if t.kind == TK.POINTER:
            return False
        if t.kind in (TK.LVALUEREFERENCE, TK.RVALUEREFERENCE):
            if not t.get_pointee().is_const_qualified():
                return False
    return True


def _argument_count(call: ci.Cursor) -> int:
    return sum(1 for _ in call.get_arguments())


def _lambda(call: ci.Cursor, owner: ci.Cursor, name: str) -> CallModel | None:
    """`f(x)` where `f` is a local variable initialised with a lambda expression."""
    children = kids(call)
    if not children:
        return None
    target = unwrap(children[0])
    if target.kind != CK.DECL_REF_EXPR or target.referenced is None:
        return None
    variable = target.referenced
    if variable.kind != CK.VAR_DECL:
        return None
    expression = _lambda_of(variable)
    if expression is None or expression.type.get_declaration() != owner:
        return None
    return CallModel("lambda", name, "read", expression, variable.spelling)


def _lambda_of(variable: ci.Cursor) -> ci.Cursor | None:
    for child in kids(variable):
        node = child
        while node.kind in (CK.UNEXPOSED_EXPR, CK.CALL_EXPR) and len(kids(node)) == 1:
            node = kids(node)[0]
        if node.kind == CK.LAMBDA_EXPR:
            return node
    return None


def lambda_parameters(expression: ci.Cursor) -> list[ci.Cursor]:
    return [c for c in kids(expression) if c.kind == CK.PARM_DECL]


def lambda_body(expression: ci.Cursor) -> ci.Cursor | None:
    bodies = [c for c in kids(expression) if c.kind == CK.COMPOUND_STMT]
    return bodies[-1] if bodies else None
