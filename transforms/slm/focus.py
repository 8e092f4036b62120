"""The part of a program an edge changes: the functions the method's rule would touch, cut
out of the variant by byte range, the declarations they use as read-only context, and the
splice of the model's replacement back into the variant, everything else byte-identical.

A small model copying a whole program back loses helpers, stops at its token limit and
runs past its context; asked for the two or three functions that change, it answers in a
few hundred tokens. The examples of an edge are reduced the same way: their before and
after codes cut down to the functions that differ."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from tree_sitter import Node

from cudaify.core import Problem, Variant
from cudaify.transforms import csource as cs
from cudaify.transforms import kernel_text as kt
from cudaify.transforms import prelude
from cudaify.transforms.base import Context, Method

# Top-level items that only declare (read-only context for the model).
_DECLARATIONS = {
    "preproc_include",
    "preproc_def",
    "preproc_function_def",
    "preproc_call",
    "type_definition",
    "declaration",
    "struct_specifier",
    "union_specifier",
    "enum_specifier",
    "class_specifier",
    "alias_declaration",
    "using_declaration",
    "namespace_alias_definition",
}


@dataclass(frozen=True)
class Item:
    """One top-level item of a translation unit. `start` includes the comments directly
    above a function (the offload's `/* Loop nest ... */` belongs to its kernel)."""

    kind: str  # "function" | the tree-sitter type of anything else
    name: str  # the function's name; "" for other items
    start: int
    end: int
    text: str
    node: Node

    @property
    def is_function(self) -> bool:
        return self.kind == "function"


def _function_of(node: Node, data: bytes) -> str | None:
    definition = cs.unwrap_template(node)
    if definition is None or definition.type != "function_definition":
        return None
    return cs.function_name(definition, data)


def items(code: str) -> list[Item]:
    """The top-level items of `code` in source order (comments fold into the function
    below them; other comments are not items)."""
    data = kt.encode(code)
    found: list[Item] = []
    pending: int | None = None  # start of the comments directly above the next item
    previous_end = 0
    for node in cs.parse(data).root_node.children:
        if node.type == "comment":
            between = data[previous_end : node.start_byte]
            if pending is None or between.count(b"\n") > 1:
                pending = node.start_byte
            previous_end = node.end_byte
            continue
        if node.type == ";" and found:  # `class A { ... };`: the `;` belongs to the class
            last = found[-1]
            text = _slice(data, last.start, node.end_byte)
            found[-1] = Item(last.kind, last.name, last.start, node.end_byte, text, last.node)
            previous_end = node.end_byte
            continue
        name = _function_of(node, data)
        glued = pending is not None and data[previous_end : node.start_byte].count(b"\n") <= 1
        start = pending if (name and glued and pending is not None) else node.start_byte
        kind = "function" if name else node.type
        found.append(
            Item(
                kind,
                name or "",
                start,
                node.end_byte,
                _slice(data, start, node.end_byte).rstrip(),
                node,
            )
        )
        pending, previous_end = None, node.end_byte
    return found


def _slice(data: bytes, start: int, end: int) -> str:
    return kt.decode(data[start:end])


def _normal(text: str) -> str:
    return " ".join(text.split())


def functions(code: str) -> dict[str, Item]:
    """Top-level function definitions by name (the last one of a name wins)."""
    return {item.name: item for item in items(code) if item.is_function}


def changed_functions(before: str, after: str) -> list[str]:
    """Functions of `before` whose definition `after` changes or drops, in source order."""
    then, now = functions(before), functions(after)
    return [
        name
        for name, item in then.items()
        if name not in now or _normal(now[name].text) != _normal(item.text)
    ]


def added_items(before: str, after: str) -> list[Item]:
    """Items of `after` that `before` does not have (new kernels, helpers, includes,
    globals), in source order."""
    then = functions(before)
    texts = {_normal(item.text) for item in items(before)}
    return [
        item
        for item in items(after)
        if (item.name not in then if item.is_function else _normal(item.text) not in texts)
    ]


@dataclass(frozen=True)
class Reduced:
    """An example cut to what changes: before = the changed functions (`names`), after =
    the new items and the changed functions as the example's `after` has them."""

    program: str
    before: str
    after: str
    detail: str
    names: tuple[str, ...] = ()
    context: str = ""  # the example's other declarations, shown as in the edge's own task


def reduce_example(example: object, present: str = "") -> Reduced:
    """The example (anything with program/before/after/detail) cut to its changed
    functions; new items that `present` (the code being edited) already has are left out,
    the model sees them among its declarations. Unchanged when no function differs (a
    change outside any function)."""
    before, after = example.before, example.after  # type: ignore[attr-defined]
    changed = changed_functions(before, after)
    detail = getattr(example, "detail", "")
    program = getattr(example, "program", "")
    if not changed:
        return Reduced(program, before, after, detail)
    then, now = functions(before), functions(after)
    have = functions(present)
    have_keys = {_key(item) for item in items(present)}
    new_parts = [
        item.text
        for item in added_items(before, after)
        if _normal(item.text).strip(";")
        and (item.name not in have if item.is_function else _key(item) not in have_keys)
    ]
    new_parts += [now[name].text for name in changed if name in now]
    old = "\n\n".join(then[name].text for name in changed)
    context = Focus(before, tuple(n for n in changed if n in then), "example").context_text()
    return Reduced(program, old, "\n\n".join(new_parts), detail, tuple(changed), context)


def _key(item: Item) -> str:
    """What makes two declarations the same for an example's reader: a macro by its name
    (an example may hold an older version of a runtime macro), anything else by its text."""
    if item.kind in ("preproc_def", "preproc_function_def"):
        name = item.node.child_by_field_name("name")
        if name is not None:
            return "#define " + kt.decode(name.text or b"")
    return _normal(item.text)


# -- cudaify's runtime, pasted before the edit -----------------------------------------------


@dataclass(frozen=True)
class Runtime:
    """The code an edge edits with the runtime blocks its examples' answers add pasted in
    (`blocks`, each followed by a newline, before the first function): the model is shown
    them as declarations and calls them, instead of reading them in every example's answer
    and copying them into its own (a first step's examples hold about 1100 tokens of
    runtime each)."""

    code: str
    blocks: tuple[str, ...] = ()

    def unused_dropped(self, spliced: Splice) -> Splice:
        """`spliced` without the pasted blocks nothing outside them names (repeated: a block
        another kept block calls stays)."""
        if spliced.code is None:
            return spliced
        code = spliced.code
        dropped = True
        while dropped:
            dropped = False
            for block in self.blocks:
                pasted = block + "\n"
                if pasted not in code:
                    continue
                rest = code.replace(pasted, "", 1)
                if not any(re.search(rf"\b{re.escape(name)}\b", rest) for name in _declared(block)):
                    code, dropped = rest, True
        return Splice(code, spliced.problems)


def with_runtime(code: str, examples: Sequence[object]) -> Runtime:
    """`code` with every runtime block (prelude.RUNTIME_FILES) that an example's answer adds
    and `code` lacks, by its marker line (the shipped examples may hold an older version;
    the current one is pasted), in the runtime's own order, before the first function."""
    blocks = []
    for name in prelude.RUNTIME_FILES:
        text = prelude.runtime_text(name)
        mark = prelude.marker(text)
        if mark in code:
            continue
        if any(
            mark in getattr(e, "after", "") and mark not in getattr(e, "before", "")
            for e in examples
        ):
            blocks.append(text)
    if not blocks:
        return Runtime(code)
    data = kt.encode(code)
    first = next((item.start for item in items(code) if item.is_function), len(data))
    pasted = "".join(block + "\n" for block in blocks)
    return Runtime(_slice(data, 0, first) + pasted + _slice(data, first, len(data)), tuple(blocks))


@functools.cache  # a runtime block, parsed once per process
def _declared(text: str) -> frozenset[str]:
    """The names the top-level items of `text` declare: functions, macros, variables, types."""
    names = set()
    for item in items(text):
        if item.is_function:
            names.add(item.name)
            continue
        node: Node | None = item.node
        while node is not None and node.type not in ("identifier", "type_identifier"):
            node = node.child_by_field_name("name") or node.child_by_field_name("declarator")
        if node is not None:
            names.add(kt.decode(node.text or b""))
    return frozenset(names)


# -- the target of an edge -------------------------------------------------------------------


@dataclass(frozen=True)
class Focus:
    """The functions an edge changes (`targets`, in source order) and the variant they are
    cut from; `how` says how they were picked (the rule's own change, or a fallback)."""

    code: str
    targets: tuple[str, ...]
    how: str

    @property
    def target_items(self) -> list[Item]:
        found = functions(self.code)
        return [found[name] for name in self.targets]

    @property
    def target_text(self) -> str:
        return "\n\n".join(item.text for item in self.target_items)

    def context_text(self) -> str:
        """What the target functions may use, read-only: includes, macros, types, globals
        and the signatures of the other functions (bodies left out)."""
        data = kt.encode(self.code)
        parts = []
        for item in items(self.code):
            if item.is_function:
                if item.name not in self.targets:
                    parts.append(_signature(item, data))
            elif item.kind in _DECLARATIONS or item.kind.startswith("preproc"):
                parts.append(item.text.strip())
        return "\n".join(part for part in parts if part)


def _signature(item: Item, data: bytes) -> str:
    node = item.node
    if node.type == "template_declaration":
        node = next(c for c in node.named_children if c.type == "function_definition")
    body = node.child_by_field_name("body")
    if body is None:
        return ""
    head = _slice(data, item.node.start_byte, body.start_byte).strip()
    return " ".join(head.split()) + ";"


def pick_targets(method: Method, variant: Variant, context: Context | None = None) -> Focus:
    """The functions the edge should change. Where the method's rule applies, the functions
    its own output changes (the rule knows which nest and which kernel); else the kernels
    and the host functions that launch them (a method on kernels), or the host functions
    holding a parallel loop (offload); as a last resort every function."""
    code = variant.code
    if context is not None:
        changed = _rule_targets(method, variant, context)
        if changed:
            return Focus(code, tuple(changed), "rule")
    defined = functions(code)
    data = kt.encode(code)
    kernels = [k.name for k in kt.kernels(data) if k.name in defined]
    if kernels:
        launchers = {
            _enclosing_function(launch.call, data)
            for launch in kt.launches(data)
            if launch.kernel in kernels
        }
        chosen = set(kernels) | {name for name in launchers if name in defined}
        return Focus(code, _in_order(code, chosen), "kernels")
    parallel = _parallel_functions(context) if context is not None else set()
    parallel &= set(defined)
    if parallel:
        return Focus(code, _in_order(code, parallel), "parallel loops")
    loops = {name for name, item in defined.items() if _has_loop(item.node)}
    return Focus(code, _in_order(code, loops or set(defined)), "loops")


# where a rule's refusal points: `file:line:col:`, "at line N"; and names it quotes
_AT_LOCATION = re.compile(r"[\w./+-]+:(\d+):\d+:|\bline (\d+)\b")
_QUOTED = re.compile(r"'([A-Za-z_]\w*)'")


def refused_targets(focus: Focus, reason: str, context: Context | None = None) -> Focus:
    """The focus of an edge whose rule refused with `reason`: the functions the reason
    points at, where it names any (the function holding a `file:line:col` or `line N`
    of the analysed program, a kernel or function it quotes, with the host functions
    that launch a quoted kernel), so the model sees the nest the rule could not handle;
    else `focus` as it was picked."""
    code = focus.code
    defined = functions(code)
    # lines count in the analysed program; its functions keep their names in the variant
    numbered = context.program.source if context is not None else code
    named = {name for name in _functions_at_lines(numbered, _lines(reason)) if name in defined}
    named |= {name for name in _QUOTED.findall(reason) if name in defined}
    if not named:
        return focus
    data = kt.encode(code)
    launchers = {
        _enclosing_function(launch.call, data)
        for launch in kt.launches(data)
        if launch.kernel in named
    }
    chosen = named | {name for name in launchers if name in defined}
    return Focus(code, _in_order(code, chosen), "refusal")


def _lines(reason: str) -> set[int]:
    return {int(a or b) for a, b in _AT_LOCATION.findall(reason)}


def _functions_at_lines(code: str, lines: set[int]) -> set[str]:
    if not lines:
        return set()
    data = kt.encode(code)
    found = set()
    for item in items(code):
        if not item.is_function:
            continue
        first = data.count(b"\n", 0, item.start) + 1
        last = data.count(b"\n", 0, item.end) + 1
        if any(first <= line <= last for line in lines):
            found.add(item.name)
    return found


def _rule_targets(method: Method, variant: Variant, context: Context) -> list[str]:
    try:
        produced = method.rule(variant, context).variant
    except Exception:  # noqa: BLE001 - a rule's bug only means the fallback picks
        return []
    if produced is None:
        return []
    return changed_functions(variant.code, produced.code)


def _parallel_functions(context: Context) -> set[str]:
    def any_parallel(loops: Sequence[object]) -> bool:
        return any(
            loop.parallel or any_parallel(loop.children)  # type: ignore[attr-defined]
            for loop in loops
        )

    return {fn.name for fn in context.program.functions if any_parallel(fn.loops)}


def _has_loop(node: Node) -> bool:
    return any(n.type in cs.LOOP_TYPES for n in cs.walk(node))


def _enclosing_function(node: Node, data: bytes) -> str | None:
    definition = cs.enclosing_function(node)
    return cs.function_name(definition, data) if definition is not None else None


def _in_order(code: str, names: set[str]) -> tuple[str, ...]:
    return tuple(item.name for item in items(code) if item.is_function and item.name in names)


# -- splicing the answer back ----------------------------------------------------------------


@dataclass(frozen=True)
class Splice:
    code: str | None
    problems: tuple[Problem, ...] = ()


def splice(focus: Focus, answer: str) -> Splice:
    """The variant with the answer's versions of the target functions at their own byte
    ranges, and the answer's new items (kernels, helpers, includes, globals) inserted
    before the first target; everything else byte-identical. Items the variant already
    has, verbatim up to whitespace, are dropped (the model echoed its context)."""
    data = kt.encode(focus.code)
    existing = functions(focus.code)
    known = {_normal(item.text) for item in items(focus.code)}
    known |= {_normal(_signature(item, data)) for item in existing.values()}
    replacements: dict[str, str] = {}
    inserted: list[str] = []
    problems: list[Problem] = []
    for item in items(answer):
        if item.is_function and item.name in focus.targets:
            replacements[item.name] = item.text
        elif item.is_function and item.name in existing:
            if _normal(item.text) != _normal(existing[item.name].text):
                problems.append(
                    Problem(
                        "structure",
                        f"the answer redefines '{item.name}', which is not one of the "
                        f"functions to change ({', '.join(focus.targets)})",
                    )
                )
        elif _normal(item.text) not in known:
            inserted.append(item.text)
    missing = [name for name in focus.targets if name not in replacements]
    if missing:
        problems.insert(
            0,
            Problem(
                "structure",
                "the answer does not define "
                + ", ".join(f"'{name}'" for name in missing)
                + "; give the complete new version of every function to change",
            ),
        )
    if problems:
        return Splice(None, tuple(problems))
    targets = sorted(focus.target_items, key=lambda item: item.start)
    out, cursor = [], 0
    for index, item in enumerate(targets):
        out.append(_slice(data, cursor, item.start))
        if index == 0 and inserted:
            out.append("\n\n".join(inserted) + "\n\n")
        out.append(replacements[item.name])
        cursor = item.end
    out.append(_slice(data, cursor, len(data)))
    return Splice("".join(out))


def estimate_tokens(text: str) -> int:
    """Roughly the tokens of code for a BPE tokenizer (about 3.5 characters each)."""
    return len(re.sub(r"[ \t]+", " ", text)) * 2 // 7 + 1
