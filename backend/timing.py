"""Region timing by instrumentation.

A *timing build* renames each offloaded function's definition (`f` -> `cudaify_timed_f`)
and adds, right after it, a wrapper with the original header that reads a monotonic clock
around the call. Callers are untouched, so the reference (gcc) and the candidate (nvcc)
are timed at the same call sites. A depth counter in the runtime counts only the outermost
of nested or recursive calls. The runtime is its own translation unit
(runtime/timing_runtime.h); CUDA builds also link runtime/cuda_context.h, which creates
the CUDA context before main and reports its cost separately.

Definitions are found with tree-sitter (C, C++ or CUDA grammar): exact byte ranges even in
code that libclang cannot parse, such as a candidate .cu. Line numbers are preserved with
`#line` so compiler diagnostics still point at the user's lines."""

from __future__ import annotations

import functools
import importlib
import statistics
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path

import tree_sitter as ts

from cudaify.backend.compile import Unit
from cudaify.backend.runner import RunResult, run_binary
from cudaify.core import LaunchValues, Problem, Timing

TIMING_FILE_VARIABLE = "CUDAIFY_TIMING_FILE"
INNER_PREFIX = "cudaify_timed_"

_PRELUDE_C = (
    "void cudaify_timing_enter(void); void cudaify_timing_leave(void);\n"
    "void cudaify_timing_enter_fn(int); void cudaify_timing_leave_fn(int);\n"
)
_PRELUDE_CXX = (
    'extern "C" void cudaify_timing_enter(void);\n'
    'extern "C" void cudaify_timing_leave(void);\n'
    'extern "C" void cudaify_timing_enter_fn(int);\n'
    'extern "C" void cudaify_timing_leave_fn(int);\n'
    "struct cudaify_timing_scope {\n"
    "  int id;\n"
    "  cudaify_timing_scope(int i = -1) : id(i) {\n"
    "    if (id < 0) cudaify_timing_enter(); else cudaify_timing_enter_fn(id);\n"
    "  }\n"
    "  ~cudaify_timing_scope() {\n"
    "    if (id < 0) cudaify_timing_leave(); else cudaify_timing_leave_fn(id);\n"
    "  }\n"
    "};\n"
)
# Per-function accounting tells functions apart by a bit of a 64-bit set
MAX_PER_FUNCTION = 64
# Definitions can sit inside these; class bodies and function bodies are not searched.
_CONTAINERS = {
    "translation_unit",
    "declaration_list",
    "namespace_definition",
    "linkage_specification",
    "template_declaration",
    "preproc_if",
    "preproc_ifdef",
    "preproc_else",
    "preproc_elif",
    "preproc_elifdef",
}
_DEVICE_ONLY = {"__global__", "__device__"}


class InstrumentError(Exception):
    """An offloaded function cannot be wrapped (variadic, unnamed parameter, not found)."""


@dataclass(frozen=True)
class Definition:
    name: str
    start: int  # first byte of the definition (its `template <...>` included)
    name_start: int
    name_end: int
    body_start: int
    end: int
    params: tuple[str, ...]  # a function parameter pack's name ends in "..."
    returns_void: bool
    recursive: bool = False  # the body names the function itself
    # A function template's explicit template arguments for the call of the renamed
    # definition (`<R, T>`, `<float>` for a specialization); None for a plain function.
    template_args: str | None = None


@dataclass(frozen=True)
class Instrumented:
    code: str
    wrapped: tuple[str, ...]  # names wrapped (each once, overloads included)


_GRAMMARS = {"c": "tree_sitter_c", "c++": "tree_sitter_cpp", "cuda": "tree_sitter_cuda"}


@functools.cache
def _parser(language: str) -> ts.Parser:
    grammar = importlib.import_module(_GRAMMARS[language])
    return ts.Parser(ts.Language(grammar.language()))


def find_definitions(source: bytes, language: str, names: Sequence[str]) -> list[Definition]:
    """Host function definitions named in `names`, in source order. `language`: c, c++, cuda."""
    tree = _parser(language).parse(source)
    wanted = set(names)
    found: list[Definition] = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "function_definition":
            definition = _definition(node, source, wanted)
            if definition is not None:
                found.append(definition)
        elif node.type in _CONTAINERS:
            stack.extend(node.named_children)
    return sorted(found, key=lambda d: d.start)


def _definition(node: ts.Node, source: bytes, wanted: set[str]) -> Definition | None:
    if any(child.type in _DEVICE_ONLY for child in node.children) and not any(
        child.type == "__host__" for child in node.children
    ):
        return None
    declarator = node.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator") or _first_named(declarator)
    if declarator is None:
        return None
    name_node = declarator.child_by_field_name("declarator")
    specialized = None  # `f<float>` of an explicit specialization
    if name_node is not None and name_node.type == "template_function":
        specialized = name_node.child_by_field_name("arguments")
        name_node = name_node.child_by_field_name("name")
    if name_node is None or name_node.type != "identifier":
        return None  # ns::f, operators, member functions: not offloaded host functions
    name = _text(name_node, source)
    body = node.child_by_field_name("body")
    if name not in wanted or body is None:
        return None
    outer = node.parent if node.parent and node.parent.type == "template_declaration" else node
    template_args = None
    if outer is not node:
        template_args = (
            _text(specialized, source)
            if specialized is not None
            else _template_arguments(outer.child_by_field_name("parameters"), source)
        )
    return_type = node.child_by_field_name("type")
    return Definition(
        name=name,
        start=outer.start_byte,
        name_start=name_node.start_byte,
        name_end=name_node.end_byte,
        body_start=body.start_byte,
        end=outer.end_byte,
        params=_parameter_names(declarator.child_by_field_name("parameters"), source, name),
        returns_void=(
            return_type is not None
            and _text(return_type, source) == "void"
            and declarator == node.child_by_field_name("declarator")
        ),
        recursive=_mentions(body, source, name),
        template_args=template_args,
    )


def _template_arguments(parameters: ts.Node | None, source: bytes) -> str:
    """The template's parameters as explicit arguments (`<int R, typename T>` -> `<R, T>`),
    so that the wrapper calls the renamed template with its own instantiation even where
    an argument cannot be deduced (`std::array<T, 2 * R + 1>`). The list stops before an
    unnamed parameter and after a pack: those that follow are deduced or defaulted, as in
    any call. `<>` still names the template rather than a plain overload."""
    names: list[str] = []
    for param in parameters.named_children if parameters is not None else []:
        if param.type == "comment":
            continue
        name = _template_parameter_name(param, source)
        if name is None:
            break
        pack = param.type.startswith("variadic_")
        names.append(name + ("..." if pack else ""))
        if pack:
            break
    return "<" + ", ".join(names) + ">"


def _template_parameter_name(param: ts.Node, source: bytes) -> str | None:
    if param.type in ("type_parameter_declaration", "variadic_type_parameter_declaration"):
        named = [c for c in param.named_children if c.type == "type_identifier"]
        return _text(named[0], source) if named else None
    if param.type == "optional_type_parameter_declaration":
        name = param.child_by_field_name("name")
        return _text(name, source) if name is not None else None
    if param.type == "template_template_parameter_declaration":
        inner = [c for c in param.named_children if c.type.endswith("type_parameter_declaration")]
        return _template_parameter_name(inner[-1], source) if inner else None
    return _declared_name(param.child_by_field_name("declarator"), source)


def _mentions(node: ts.Node, source: bytes, name: str) -> bool:
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "identifier" and _text(current, source) == name:
            return True
        stack.extend(current.named_children)
    return False


def _parameter_names(parameters: ts.Node | None, source: bytes, function: str) -> tuple[str, ...]:
    if parameters is None:
        return ()
    names = []
    for param in parameters.named_children:
        if param.type == "comment":
            continue
        if param.type == "variadic_parameter_declaration":  # a function parameter pack
            pack = _declared_name(param.child_by_field_name("declarator"), source)
            if pack is None:
                raise InstrumentError(f"'{function}': a parameter pack has no name")
            names.append(pack + "...")
            continue
        if param.type not in ("parameter_declaration", "optional_parameter_declaration"):
            raise InstrumentError(f"'{function}': cannot forward a {param.type.replace('_', ' ')}")
        declarator = param.child_by_field_name("declarator")
        if declarator is None and _text(param, source).strip() == "void":
            continue
        name = _declared_name(declarator, source)
        if name is None:
            raise InstrumentError(f"'{function}': a parameter has no name; cannot forward it")
        names.append(name)
    return tuple(names)


def _declared_name(node: ts.Node | None, source: bytes) -> str | None:
    while node is not None:
        if node.type == "identifier":
            return _text(node, source)
        node = node.child_by_field_name("declarator") or _first_named(node)
    return None


def _first_named(node: ts.Node) -> ts.Node | None:
    for child in node.named_children:
        if child.type not in ("parameter_list", "type_qualifier", "comment"):
            return child
    return None


def _text(node: ts.Node, source: bytes) -> str:
    return source[node.start_byte : node.end_byte].decode("utf-8", errors="surrogateescape")


def instrument(
    source: str, language: str, names: Sequence[str], per_function: bool = False
) -> Instrumented:
    """The timing build's source: every named definition renamed and wrapped. `language`
    is c, c++ or cuda. Raises InstrumentError when a name has no definition or cannot be
    wrapped exactly. `per_function`: each wrapper also names its function (its position
    in `names`), so one run times every subset of them (see `subset_time`)."""
    if per_function and len(names) > MAX_PER_FUNCTION:
        raise InstrumentError(f"more than {MAX_PER_FUNCTION} functions to time one by one")
    data = source.encode("utf-8", errors="surrogateescape")
    definitions = find_definitions(data, language, names)
    missing = sorted(set(names) - {d.name for d in definitions})
    if missing:
        raise InstrumentError("no definition of " + ", ".join(f"'{n}'" for n in missing))
    ids = {name: index for index, name in enumerate(names)} if per_function else {}
    for definition in reversed(definitions):
        data = _wrap(data, definition, language, ids.get(definition.name))
    prelude = _PRELUDE_C if language == "c" else _PRELUDE_CXX
    code = prelude + "#line 1\n" + data.decode("utf-8", errors="surrogateescape")
    return Instrumented(code=code, wrapped=tuple(dict.fromkeys(d.name for d in definitions)))


def _wrap(data: bytes, definition: Definition, language: str, ident: int | None) -> bytes:
    header = data[definition.start : definition.body_start].decode(
        "utf-8", errors="surrogateescape"
    )
    inner = INNER_PREFIX + definition.name
    body = _wrapper_body(inner, definition, language, ident)
    # The wrapper follows the closing brace; `#line` puts the rest of the file back on
    # its own line numbers.
    last_line = data.count(b"\n", 0, definition.end) + 1
    wrapper = f"\n{header}{body}\n#line {last_line}\n".encode("utf-8", errors="surrogateescape")
    head = data[definition.start : definition.name_start]
    if definition.recursive:
        # The renamed body calls the wrapper, defined after it: declare the wrapper first.
        first_line = data.count(b"\n", 0, definition.start) + 1
        forward = f"{header.rstrip()};\n#line {first_line}\n"
        head = forward.encode("utf-8", errors="surrogateescape") + head
    renamed = head + inner.encode() + data[definition.name_end : definition.end]
    return data[: definition.start] + renamed + wrapper + data[definition.end :]


def _wrapper_body(inner: str, definition: Definition, language: str, ident: int | None) -> str:
    if language == "c":
        call = f"{inner}({', '.join(definition.params)})"
        enter, leave = "cudaify_timing_enter()", "cudaify_timing_leave()"
        if ident is not None:
            enter, leave = f"cudaify_timing_enter_fn({ident})", f"cudaify_timing_leave_fn({ident})"
        if definition.returns_void:
            return f"{{ {enter}; {call}; {leave}; }}"
        return (
            f"{{ {enter}; __typeof__({call}) cudaify_result = {call}; "
            f"{leave}; return cudaify_result; }}"
        )
    # C++: perfect forwarding (no copies inside the region); a scope object stops the
    # clock after the return value is built, and `return f();` is fine for void too.
    forwarded = ", ".join(_forward(p) for p in definition.params)
    # A template calls the renamed template with its own arguments, so every instantiation
    # of the wrapper times the same instantiation of the original.
    called = inner + (definition.template_args or "")
    scope = "cudaify_scope" if ident is None else f"cudaify_scope({ident})"
    return f"{{ cudaify_timing_scope {scope}; return {called}({forwarded}); }}"


def _forward(param: str) -> str:
    name = param.removesuffix("...")
    expansion = "..." if name != param else ""
    return f"static_cast<decltype({name})&&>({name}){expansion}"


# Every kernel launch and cudaMemcpy of a CUDA timing build goes through kernel_timing.h.
CUDA_LINK_FLAGS = (
    "-Xlinker",
    "--wrap=cudaLaunchKernel,--wrap=__cudaLaunchKernel,--wrap=__cudaLaunchKernel_ptsz,"
    "--wrap=cudaMemcpy,--wrap=cudaMemcpy_ptds,--wrap=cudaMemcpyAsync,"
    "--wrap=cudaMemcpyAsync_ptsz",
)
KERNEL_TIMING_VARIABLE = "CUDAIFY_KERNEL_TIMING"
MODULE_LOADING_VARIABLE = "CUDA_MODULE_LOADING"


def runtime_units(cuda: bool) -> list[Unit]:
    """The extra translation units a timing build links (CUDA ones need CUDA_LINK_FLAGS)."""
    folder = resources.files("cudaify.backend") / "runtime"
    suffix = ".cu" if cuda else ".c"
    units = [Unit("cudaify_timing" + suffix, (folder / "timing_runtime.h").read_text())]
    if cuda:
        units.append(Unit("cudaify_context.cu", (folder / "cuda_context.h").read_text()))
        units.append(Unit("cudaify_kernels.cu", (folder / "kernel_timing.h").read_text()))
    return units


# A measurement takes about this long: a run this long is timed once (its run-to-run noise
# is a few percent, and more runs of a long program are what made a search take minutes:
# Gram-Schmidt's reference took 9 s a run), a shorter one as often as fits, up to `runs`.
LONG_RUN = 1.0


def runs_for(seconds: float | None, runs: int) -> int:
    """How many timed runs a program that runs `seconds` deserves: `runs` (the median's
    worth) for a short one, as many as fit in LONG_RUN seconds for a longer one, and one
    from LONG_RUN seconds up (0.4 s: 2 runs; 0.15 s: 5 of the default 5)."""
    if seconds is None or seconds <= 0:
        return max(1, runs)
    return max(1, min(runs, int(LONG_RUN / seconds)))


@dataclass(frozen=True)
class Sample:
    """One timed run."""

    run: RunResult
    region: float | None
    calls: int
    context: float | None
    kernel: float | None = None
    transfer: float | None = None
    transfer_bytes: float | None = None
    # a per-function build's: seconds per set of functions active at once (a bit mask of
    # their positions), and calls entered per (set active before, function position)
    sets: tuple[tuple[int, float], ...] = ()
    entries: tuple[tuple[int, int, int], ...] = ()
    # a kernel-timing run's: (name, launches, seconds) per kernel function
    kernels: tuple[tuple[str, int, float], ...] = ()
    # and the values its launches passed
    launches: tuple[LaunchValues, ...] = ()


def subset_time(
    sets: Sequence[tuple[int, float]],
    entries: Sequence[tuple[int, int, int]],
    positions: Sequence[int],
) -> tuple[float, int]:
    """From a per-function build's report: the region time and outermost calls of the
    functions at `positions` alone. The time is that of every set of active functions that
    meets them; a call is outermost when it enters one of them while none of them is active."""
    bits = sum(1 << p for p in set(positions))
    seconds = sum(s for mask, s in sets if mask & bits)
    calls = sum(n for mask, p, n in entries if not mask & bits and bits >> p & 1)
    return seconds, calls


@dataclass(frozen=True)
class TimingReport:
    fields: dict[str, float]
    sets: tuple[tuple[int, float], ...] = ()
    entries: tuple[tuple[int, int, int], ...] = ()
    kernels: tuple[tuple[str, int, float], ...] = ()
    launches: tuple[LaunchValues, ...] = ()


def read_timing_file(path: Path) -> TimingReport:
    """region_seconds, calls, context_seconds and (kernel-timing runs) kernel_seconds,
    transfer_seconds, transfer_bytes, the per-kernel lines (`kernel <name> <launches>
    <seconds>`) and the launches' values (`launch <name> <count> <bx> <by> <bz> <param>...`)
    from the runtime's report, and a per-function build's sets and entries; empty when the
    program left none."""
    try:
        # the file is the candidate's (untrusted) output: a kernel name CUDA handed back
        # as stray bytes must not stop the measurement (it then matches no kernel)
        lines = path.read_bytes().decode("utf-8", errors="replace").splitlines()
    except OSError:
        return TimingReport({})
    fields: dict[str, float] = {}
    sets: list[tuple[int, float]] = []
    entries: list[tuple[int, int, int]] = []
    kernels: list[tuple[str, int, float]] = []
    launches: list[LaunchValues] = []
    try:
        for line in lines:
            words = line.split()
            if words[0] == "kernel":
                kernels.append((words[1], int(words[2]), float(words[3])))
            elif words[0] == "launch":
                launches.append(_launch_values(words))
            elif words[0] == "set":
                sets.append((int(words[1], 16), float(words[2])))
            elif words[0] == "entry":
                entries.append((int(words[1], 16), int(words[2]), int(words[3])))
            else:
                fields[words[0]] = float(words[1])
    except (IndexError, ValueError):
        return TimingReport({})
    return TimingReport(fields, tuple(sets), tuple(entries), tuple(kernels), tuple(launches))


def _launch_values(words: list[str]) -> LaunchValues:
    """One `launch` line (ValueError where it is not one)."""
    if len(words) < 6:
        raise ValueError("a launch line needs a name, a count and a block shape")
    block = (int(words[3]), int(words[4]), int(words[5]))
    values: list[int | None] = []
    extents: list[int | None] = []
    for word in words[6:]:
        bits, _, extent = word.partition("@")
        values.append(None if bits == "-" else int(bits))
        extents.append(int(extent) if extent else None)
    return LaunchValues(words[1], int(words[2]), block, tuple(values), tuple(extents))


def timed_run(
    binary: Path,
    *,
    timeout: float,
    cuda: bool,
    kernels: bool = False,
    cancel: threading.Event | None = None,
) -> Sample:
    """One run of a timing build. `kernels` also times every kernel launched and every
    copy made inside the region (CUDA events; a few microseconds each, so not in the
    measured runs). Setting `cancel` kills the run."""
    with tempfile.TemporaryDirectory(prefix="cudaify-timing-") as folder:
        report = Path(folder) / "timing"
        env = {TIMING_FILE_VARIABLE: str(report)}
        if kernels:
            env[KERNEL_TIMING_VARIABLE] = "1"
            # CUDA loads a kernel's code at its first launch (lazy loading), between the
            # events that bracket it: a kernel launched once read twice its time (matmul's
            # 86 us kernel as 0.21 ms on an H100). This run only times kernels: its modules
            # load with the context, before the region.
            env[MODULE_LOADING_VARIABLE] = "EAGER"
        run = run_binary(binary, timeout=timeout, cuda=cuda, env=env, cancel=cancel)
        found = read_timing_file(report)
    fields = found.fields
    return Sample(
        run,
        fields.get("region_seconds"),
        int(fields.get("calls", 0)),
        fields.get("context_seconds") if cuda else None,
        fields.get("kernel_seconds"),
        fields.get("transfer_seconds"),
        fields.get("transfer_bytes"),
        found.sets,
        found.entries,
        found.kernels,
        found.launches,
    )


def measure(
    binary: Path,
    *,
    runs: int = 5,
    timeout: float,
    cuda: bool,
    expected_exit: int | None = None,
    warm_up: bool = True,
    kernels: bool = False,
    first: Sample | None = None,
    hopeless: Callable[[Timing], bool] | None = None,
) -> tuple[Timing, Problem | None]:
    """Medians over `runs` timed runs after a warm-up run; with `kernels`, one more run
    that times the kernels and the copies. A run that fails (limit, signal, a different exit code)
    stops the measurement with a Problem. `first`: a sample already taken (the correctness
    run) that counts as the first of the `runs`; no warm-up is then run. `hopeless`: asked
    after each sample with the best medians the `runs` can still reach (see summarise);
    True ends the runs there (the medians are then those of the samples taken)."""
    samples, problem = timed_runs(
        binary,
        runs=runs,
        timeout=timeout,
        cuda=cuda,
        expected_exit=expected_exit,
        warm_up=warm_up,
        first=first,
        hopeless=hopeless,
    )
    if problem is not None:
        return Timing(), problem
    timing = summarise(samples)
    if not kernels:
        return timing, None
    return with_kernel_times(
        timing, binary, timeout=timeout, cuda=cuda, expected_exit=expected_exit
    )


def timed_runs(
    binary: Path,
    *,
    runs: int,
    timeout: float,
    cuda: bool,
    expected_exit: int | None = None,
    warm_up: bool = True,
    first: Sample | None = None,
    hopeless: Callable[[Timing], bool] | None = None,
) -> tuple[list[Sample], Problem | None]:
    """The samples `measure` summarises (see there)."""
    samples = [first] if first is not None else []
    warm_up = warm_up and first is None
    for index in range(max(0, runs - len(samples)) + (1 if warm_up else 0)):
        if samples and hopeless is not None and hopeless(summarise(samples, runs)):
            break
        sample, problem = _checked_run(binary, timeout, cuda, expected_exit, kernels=False)
        if problem is not None:
            return [], problem
        if index > 0 or not warm_up:
            samples.append(sample)
    return samples, None


def with_kernel_times(
    timing: Timing, binary: Path, *, timeout: float, cuda: bool, expected_exit: int | None = None
) -> tuple[Timing, Problem | None]:
    """`timing` with the kernel and copy times of one more, event-timed run."""
    sample, problem = _checked_run(binary, timeout, cuda, expected_exit, kernels=True)
    if problem is not None:
        return Timing(), problem
    # Kernel and copy times come from this one event-timed run; its own region is kept
    # beside them, since the median region of the other runs is not their whole.
    return (
        replace(
            timing,
            kernel=sample.kernel,
            transfer=sample.transfer,
            transfer_bytes=sample.transfer_bytes,
            profiled_region=sample.region,
            kernel_times=sample.kernels,
            launches=sample.launches,
        ),
        None,
    )


def _checked_run(
    binary: Path, timeout: float, cuda: bool, expected_exit: int | None, kernels: bool
) -> tuple[Sample, Problem | None]:
    sample = timed_run(binary, timeout=timeout, cuda=cuda, kernels=kernels)
    problem = sample.run.problem(timeout)
    if problem is None and expected_exit is not None and sample.run.exit_code != expected_exit:
        problem = Problem(
            "exit_code", f"timed run: exit code {sample.run.exit_code}, expected {expected_exit}"
        )
    return sample, problem


def summarise(samples: Sequence[Sample], runs: int = 0) -> Timing:
    """Medians over `samples`. With `runs` more than there are samples: the medians the
    `runs` would have at best, every run still to come taking no time at all (so a
    candidate whose best case is still behind cannot win, whatever its next runs read)."""
    instant = [0.0] * max(0, runs - len(samples))

    def median(values: list[float | None]) -> float | None:
        known = [v for v in values if v is not None]
        if len(known) != len(values) or not known:
            return None
        return statistics.median(known + instant)

    return Timing(
        wall=median([s.run.seconds for s in samples]),
        region=median([s.region if s.calls else None for s in samples]),
        context=median([s.context for s in samples]),
        runs=len(samples),
    )
