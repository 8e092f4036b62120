"""The structural check of a CUDA candidate, before anything compiles or runs it.

A candidate (from a rule or a language model) must parse, keep every function of the
input with its signature (callers and the timing instrumentation rely on them), make no
dangerous call the input did not make, stay a sane size, and pass its method's own
postcondition. Cheap checks first: a candidate that fails here costs no nvcc time."""

from __future__ import annotations

import re

from tree_sitter import Node, Tree

from cudaify.core import Problem, Variant
from cudaify.frontend.facts import Program
from cudaify.transforms import csource as cs
from cudaify.transforms import kernel_text as kt
from cudaify.transforms.base import Context, Method

MAX_GROWTH = 20  # a candidate may be this many times the input's size...
SIZE_SLACK = 200_000  # ...plus this many bytes (kernels, helpers, a runtime prelude)
MAX_REPORTED = 5  # syntax errors reported per candidate

# Calls that touch the world outside the program: processes, files, the network.
# A candidate may make one only when the input already does.
DANGEROUS_CALLS = frozenset(
    """system popen fork vfork clone execl execlp execle execv execvp execvpe execve fexecve
    posix_spawn posix_spawnp remove unlink unlinkat rmdir rename renameat renameat2 truncate
    ftruncate chmod fchmod chown fchown lchown link symlink mkdir mkfifo mknod creat open openat
    fopen freopen socket connect bind listen accept send sendto recv recvfrom kill killpg
    ptrace dlopen dlsym syscall setuid setgid chroot mount umount reboot""".split()
)

_QUALIFIERS = {"const", "volatile", "restrict", "__restrict__", "__restrict"}
_SPECIFIERS = _QUALIFIERS | {
    "static",
    "inline",
    "extern",
    "__inline",
    "__inline__",
    "__host__",
    "__device__",
    "__forceinline__",
    "__noinline__",
}
_WORD = re.compile(r"[A-Za-z_]\w*")
_BRACKETS = re.compile(r"\[[^\]]*\]")


def structural_problems(
    original: Program, code: str, method: Method | None = None, before: Variant | None = None
) -> list[Problem]:
    """Every structural reason `code` is not an acceptable candidate for `original`;
    empty when it may go on to compilation. `before` is the variant the method was
    applied to (the original program when not given)."""
    size = _size_problems(original, code)
    if size:
        return size  # no point parsing a runaway output
    data = code.encode("utf-8", errors="surrogateescape")
    original_data = original.source.encode("utf-8", errors="surrogateescape")
    tree, original_tree = cs.parse(data), cs.parse(original_data)
    problems = _syntax_problems(tree, data, original_tree, original_data)
    problems += _signature_problems(original, original_tree, original_data, tree, data)
    problems += _dangerous_calls(tree, data, original_tree, original_data)
    if method is not None:
        start = before if before is not None else Variant(code=original.source)
        problems += method.check(start, Variant(code=code), Context(program=original))
    return problems


def launch_problems(code: str) -> list[Problem]:
    """A whole program offered as a GPU variant must launch a kernel it defines: a
    `__global__` function called with `<<<...>>>` (templated or not). Otherwise it runs on
    the CPU alone, and verifying it would only time the host code again."""
    data = code.encode("utf-8", errors="surrogateescape")
    defined = {kernel.name for kernel in kt.kernels(data)}
    if any(launch.kernel.split("<", 1)[0].strip() in defined for launch in kt.launches(data)):
        return []
    what = "launches none of them" if defined else "defines no __global__ kernel"
    return [Problem("structure", f"the program runs nothing on the GPU: it {what}")]


def _size_problems(original: Program, code: str) -> list[Problem]:
    limit = MAX_GROWTH * len(original.source.encode()) + SIZE_SLACK
    size = len(code.encode("utf-8", errors="surrogateescape"))
    if size <= limit:
        return []
    return [Problem("size", f"the candidate is {size} bytes; at most {limit} are accepted")]


def _syntax_problems(
    tree: Tree, data: bytes, original: Tree, original_data: bytes
) -> list[Problem]:
    """ERROR and MISSING nodes, except those the input itself has (tree-sitter does not
    expand macros, so some valid inputs already read as errors)."""
    inherited = {_describe_node(n, original_data) for n in cs.problem_nodes(original)}
    problems = []
    for node in cs.problem_nodes(tree):
        described = _describe_node(node, data)
        if described in inherited:
            continue
        problems.append(Problem("parse", described, line=cs.line_of(node)))
        if len(problems) == MAX_REPORTED:
            break
    return problems


def _describe_node(node: Node, data: bytes) -> str:
    if node.is_missing:
        return f"missing '{node.type}'"
    snippet = " ".join(cs.text(node, data).split())[:60]
    return f"cannot parse '{snippet}'"


def _signature_problems(
    original: Program, original_tree: Tree, original_data: bytes, tree: Tree, data: bytes
) -> list[Problem]:
    """Every function of the input (and main) still defined, with the same signature.
    Overloads and members share names: each signature of a name must still be there."""
    before = cs.all_function_nodes(original_tree, original_data)
    after = cs.all_function_nodes(tree, data)
    names = list(dict.fromkeys(fn.name for fn in original.functions))
    if "main" in before and "main" not in names:
        names.append("main")
    problems = []
    for name in names:
        fn = original.function(name)
        where = f" (line {fn.line} of the input)" if fn is not None and fn.line else ""
        if name not in after:
            problems.append(Problem("signature", f"function '{name}'{where} is no longer defined"))
            continue
        kept = [_signature(node, data) for node in after[name]]
        for old in (_signature(node, original_data) for node in before.get(name, [])):
            if old in kept:
                kept.remove(old)
                continue
            found = ", ".join(_show(new) for new in kept) or "nothing"
            problems.append(
                Problem(
                    "signature",
                    f"function '{name}'{where} changed its signature from {_show(old)} to {found}",
                    line=cs.line_of(after[name][0]),
                )
            )
    return problems


Signature = tuple[str, tuple[str, ...]]


def _signature(definition: Node, data: bytes) -> Signature:
    """The return type and parameter types, spelled so that qualifiers, parameter names,
    array sizes and `T a[]` versus `T *a` do not count."""
    declarator = definition.child_by_field_name("declarator")
    function = cs.find_child(declarator, "function_declarator")
    head = data[definition.start_byte : function.start_byte if function else definition.end_byte]
    returns = _normalise_type(head.decode("utf-8", errors="surrogateescape"), name=None)
    params = []
    for param in cs.parameter_nodes(definition):
        names = (
            cs.declared_names(param, data, "param") if param.type == "parameter_declaration" else []
        )
        name = names[0].name if names else None
        params.append(_normalise_type(cs.text(param, data), name=name))
    if params == ["void"]:
        params = []  # `f(void)` and `f()` declare the same function in C++
    return returns, tuple(params)


def _normalise_type(spelled: str, name: str | None) -> str:
    spelled = _BRACKETS.sub("[]", spelled)
    words = [w for w in _WORD.findall(spelled) if w not in _SPECIFIERS and w != name]
    indirection = spelled.count("*") + spelled.count("[") + spelled.count("&")
    return " ".join(words) + "*" * indirection


def _show(signature: Signature) -> str:
    returns, params = signature
    return f"'{returns} ({', '.join(params)})'"


def _dangerous_calls(
    tree: Tree, data: bytes, original: Tree, original_data: bytes
) -> list[Problem]:
    allowed = {name for name, _ in _dangerous_names(original, original_data)}
    problems = []
    reported: set[str] = set()
    for name, line in _dangerous_names(tree, data):
        if name in allowed or name in reported:
            continue
        reported.add(name)
        problems.append(
            Problem("dangerous-call", f"'{name}' is used but the input never uses it", line=line)
        )
    return problems


def _dangerous_names(tree: Tree, data: bytes) -> list[tuple[str, int]]:
    """Dangerous names used as identifiers (called or not: a function pointer counts)
    or spelled in a macro body, which tree-sitter does not parse."""
    found = []
    for node in cs.walk(tree.root_node):
        if node.type == "identifier" and cs.text(node, data) in DANGEROUS_CALLS:
            found.append((cs.text(node, data), cs.line_of(node)))
        elif node.type == "preproc_arg":
            for word in _WORD.findall(cs.text(node, data)):
                if word in DANGEROUS_CALLS:
                    found.append((word, cs.line_of(node)))
        elif node.type in ("gnu_asm_expression", "asm_statement"):
            found.append(("asm", cs.line_of(node)))
    return found
