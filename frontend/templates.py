"""Function templates, "instantiated as used".

libclang exposes the body of a function template, not the bodies of its implicit
instantiations. The loop structure of a template does not depend on its parameters, so
the analysis reads the template's own body with its type parameters as opaque types and
its non-type parameters as symbols. What does depend on them (the element types the
data transfers need, the values of integer parameters) comes from the instantiations
the program uses, found here from the call sites:
- a call outside any template names a specialization: libclang gives its arguments;
- a call inside a template is dependent: its callee is found by name, and the
  template's parameter types are matched against the argument types with the caller's
  own bindings substituted, until nothing new is found (templates calling templates).
Bindings are spelled as C++ (`float`, `2`), in the template's parameter order."""

from __future__ import annotations

import re
from dataclasses import dataclass

import clang.cindex as ci

from cudaify.frontend.access import Walk

CK = ci.CursorKind
TEMPLATE_PARAMETERS = (
    CK.TEMPLATE_TYPE_PARAMETER,
    CK.TEMPLATE_NON_TYPE_PARAMETER,
    CK.TEMPLATE_TEMPLATE_PARAMETER,
)
Binding = tuple[tuple[str, str], ...]  # (parameter, C++ spelling), in parameter order
MAX_INSTANTIATIONS = 16  # per template: enough for real programs, bounded for recursion


@dataclass(frozen=True)
class Template:
    name: str
    params: tuple[str, ...]  # template parameters
    arg_types: tuple[str, ...]  # function parameter types, as spelled by libclang
    key: tuple[str, int]  # (file, offset) of the definition


def template_parameters(fn: ci.Cursor) -> tuple[str, ...]:
    if fn.kind != CK.FUNCTION_TEMPLATE:
        return ()
    return tuple(c.spelling for c in fn.get_children() if c.kind in TEMPLATE_PARAMETERS)


def function_parameters(fn: ci.Cursor) -> list[ci.Cursor]:
    """PARM_DECLs of a function or function template (libclang's `get_arguments` gives
    none for a template)."""
    if fn.kind != CK.FUNCTION_TEMPLATE:
        return list(fn.get_arguments())
    return [c for c in fn.get_children() if c.kind == CK.PARM_DECL]


def _key(cursor: ci.Cursor) -> tuple[str, int]:
    location = cursor.location
    return (location.file.name if location.file else "", location.offset)


def describe(fn: ci.Cursor) -> Template:
    return Template(
        name=fn.spelling,
        params=template_parameters(fn),
        arg_types=tuple(p.type.spelling for p in function_parameters(fn)),
        key=_key(fn),
    )


def _words(spelling: str) -> str:
    """A type spelling with references, top-level const and spacing normalised."""
    text = re.sub(r"\s*&{1,2}\s*$", "", spelling.strip())
    text = re.sub(r"^const\s+", "", text)
    text = re.sub(r"\s+", " ", text)
    return re.sub(r"\s*([<>,*&()\[\]])\s*", r"\1", text)


def substitute(spelling: str, binding: dict[str, str]) -> str:
    if not binding:
        return spelling
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, binding)) + r")\b")
    return pattern.sub(lambda m: binding[m.group(1)], spelling)


def unify(template: Template, argument_types: list[str]) -> dict[str, str] | None:
    """Template parameters read off by matching parameter types against argument types;
    None when some parameter type does not match."""
    if len(argument_types) != len(template.arg_types):
        return None
    found: dict[str, str] = {}
    for formal, actual in zip(template.arg_types, argument_types, strict=True):
        got = _match(_words(formal), _words(actual), template.params)
        if got is None:
            return None
        for name, value in got.items():
            if found.setdefault(name, value) != value:
                return None
    return found


def _match(formal: str, actual: str, params: tuple[str, ...]) -> dict[str, str] | None:
    mentioned = [p for p in params if re.search(rf"\b{re.escape(p)}\b", formal)]
    if not mentioned:
        return {}
    pieces = re.split(r"\b(" + "|".join(map(re.escape, mentioned)) + r")\b", formal)
    regex, seen = "", set()
    for k, piece in enumerate(pieces):
        if k % 2 == 0:
            regex += re.escape(piece)
        elif piece in seen:
            regex += f"(?P={piece})"
        else:
            seen.add(piece)
            regex += f"(?P<{piece}>.+?)"
    hit = re.fullmatch(regex, actual)
    if hit is None:
        return None
    return {name: _fold(value) for name, value in hit.groupdict().items()}


def _fold(value: str) -> str:
    """`2*2+1` stays as written except when it is plain integer arithmetic."""
    if re.fullmatch(r"[0-9+\-*/() ]+", value):
        try:
            return str(int(eval(value, {"__builtins__": {}})))  # noqa: S307 - digits only
        except (SyntaxError, ZeroDivisionError, ValueError):
            return value
    return value


def specialization_binding(call: ci.Cursor, template: Template) -> dict[str, str] | None:
    """The template arguments of a resolved call to a specialization."""
    ref = call.referenced
    if ref is None or ref.kind != CK.FUNCTION_DECL:
        return None
    count = ref.get_num_template_arguments()
    if count <= 0 or count != len(template.params):
        return None
    origin = ci.conf.lib.clang_getSpecializedCursorTemplate(ref)
    if origin is None or _key(origin) != template.key:
        return None
    found: dict[str, str] = {}
    for k, name in enumerate(template.params):
        kind = ref.get_template_argument_kind(k)
        kind = getattr(kind, "value", kind)  # an enumeration or its int, by bindings version
        if kind == ci.TemplateArgumentKind.TYPE.value:
            found[name] = ref.get_template_argument_type(k).spelling
        elif kind == ci.TemplateArgumentKind.INTEGRAL.value:
            found[name] = str(ref.get_template_argument_value(k))
        else:
            return None
    return found


def explicit_arguments(text: str) -> list[str]:
    """`f<R, float>(...)` -> ["R", "float"]: the explicit template arguments of a call."""
    head = text.split("(", 1)[0]
    if "<" not in head:
        return []
    inner = head[head.index("<") + 1 : head.rindex(">")] if ">" in head else ""
    parts, depth, current = [], 0, ""
    for char in inner:
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
            continue
        depth += (char == "<") - (char == ">")
        current += char
    return [p for p in [*parts, current.strip()] if p]


def instantiations(
    definitions: list[ci.Cursor], walks: dict[int, Walk]
) -> dict[tuple[str, int], tuple[Binding, ...]]:
    """Every binding of every function template that the program reaches."""
    templates = {describe(fn).key: (fn, describe(fn)) for fn in definitions}
    templates = {k: v for k, v in templates.items() if v[1].params}
    by_name: dict[str, list[Template]] = {}
    for _, info in templates.values():
        by_name.setdefault(info.name, []).append(info)
    found: dict[tuple[str, int], list[dict[str, str]]] = {k: [] for k in templates}
    caller_bindings: dict[int, list[dict[str, str]]] = {
        fn.hash: [{}] if describe(fn).key not in templates else found[describe(fn).key]
        for fn in definitions
    }
    changed = True
    while changed:
        changed = False
        for fn in definitions:
            for binding in list(caller_bindings[fn.hash]):
                for call in walks[fn.hash].calls:
                    for key, new in _bindings_of_call(call, binding, by_name):
                        if new not in found[key] and len(found[key]) < MAX_INSTANTIATIONS:
                            found[key].append(new)
                            changed = True
    return {
        key: tuple(tuple((p, b[p]) for p in templates[key][1].params) for b in bindings)
        for key, bindings in found.items()
    }


def _bindings_of_call(call, caller: dict[str, str], by_name: dict[str, list[Template]]):
    short = call.name.split("::")[-1]
    for template in by_name.get(short, []):
        binding = specialization_binding(call.cursor, template)
        if binding is None:
            binding = _deduced(call, caller, template)
        if binding is not None and set(binding) == set(template.params):
            yield template.key, binding


def _deduced(call, caller: dict[str, str], template: Template) -> dict[str, str] | None:
    explicit = explicit_arguments(call.callee_text)
    binding = {
        name: _fold(substitute(value, caller))
        for name, value in zip(template.params, explicit, strict=False)
    }
    types = [substitute(a.type.spelling, caller) for a in call.cursor.get_arguments()]
    if any("dependent type" in t for t in types):
        return binding if len(binding) == len(template.params) else None
    deduced = unify(
        Template(
            template.name,
            template.params,
            tuple(substitute(t, binding) for t in template.arg_types),
            template.key,
        ),
        types,
    )
    if deduced is None:
        return None
    return {**deduced, **binding}
