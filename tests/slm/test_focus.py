"""Focused edits: the edge's target functions are cut out of the variant, the examples are
cut to what they change, the model's answer is spliced back with everything else
byte-identical, and an answer missing a target fails the structural check; all with
scripted completions (no model)."""

from pathlib import Path

from cudaify.core import Problem, Variant
from cudaify.core.config import Config
from cudaify.pipeline import search_graph
from cudaify.regraph.graph import Example
from cudaify.slm_edge_bench import Starts, classify
from cudaify.transforms import METHODS
from cudaify.transforms.slm import focus
from cudaify.transforms.slm.apply import EDIT_SAMPLING, edit
from cudaify.transforms.slm.engine import Completion
from cudaify.transforms.slm.extract import extract_code

VARIANT = """\
#include <stdio.h>
#include <cuda_runtime.h>

#define N 1024
typedef float real;
static int calls = 0;

static unsigned lcg_next(unsigned *state) {
    *state = *state * 1664525u + 1013904223u;
    return *state;
}

/* Loop nest 'i' of scale() (line 12) */
__global__ void scale_kernel(real *y, real a, long long trips_i) {
    for (long long t_i = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_i < trips_i;
         t_i += (long long)blockDim.x * gridDim.x) {
        int i = (int)t_i;
        y[i] = a * y[i];
    }
}

static void fill(real *y, int n) {
    unsigned s = 1;
    for (int i = 0; i < n; i++) y[i] = (real)(lcg_next(&s) % 100);
}

void scale(real *y, real a, int n) {
    real *d_y;
    cudaMalloc(&d_y, n * sizeof(real));
    cudaMemcpy(d_y, y, n * sizeof(real), cudaMemcpyHostToDevice);
    scale_kernel<<<(n + 255) / 256, 256>>>(d_y, a, n);
    cudaMemcpy(y, d_y, n * sizeof(real), cudaMemcpyDeviceToHost);
    cudaFree(d_y);
    calls++;
}

int main(void) {
    static real y[N];
    fill(y, N);
    scale(y, 2.0f, N);
    printf("%f\\n", y[7]);
    return 0;
}
"""

NEW_KERNEL = """\
__global__ void scale_kernel(real *y, real a, long long trips_i) {
    long long t_i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (t_i < trips_i) y[t_i] = a * y[t_i];
}"""
NEW_SCALE = """\
void scale(real *y, real a, int n) {
    real *d_y;
    cudaMalloc(&d_y, n * sizeof(real));
    cudaMemcpy(d_y, y, n * sizeof(real), cudaMemcpyHostToDevice);
    scale_kernel<<<cudaify_grid(n), 256>>>(d_y, a, n);
    cudaMemcpy(y, d_y, n * sizeof(real), cudaMemcpyDeviceToHost);
    cudaFree(d_y);
    calls++;
}"""
HELPER = "static unsigned cudaify_grid(int n) { return (unsigned)((n + 255) / 256); }"


def kernel_focus() -> focus.Focus:
    return focus.pick_targets(METHODS["launch_tuning"], Variant(code=VARIANT))


def test_a_kernel_method_cuts_the_kernel_and_its_host_wrapper():
    cut = kernel_focus()
    assert cut.targets == ("scale_kernel", "scale") and cut.how == "kernels"
    text = cut.target_text
    assert text.startswith("/* Loop nest 'i' of scale() (line 12) */\n__global__")  # comment kept
    assert "calls++;" in text and "cudaMemcpy(y, d_y" in text
    assert "lcg_next(&s)" not in text and "printf" not in text  # fill and main stay out
    context = cut.context_text()
    # the rest of the program, read-only: includes, macros, types, globals, signatures only
    for line in (
        "#include <cuda_runtime.h>",
        "#define N 1024",
        "typedef float real;",
        "static int calls = 0;",
        "static unsigned lcg_next(unsigned *state);",
        "static void fill(real *y, int n);",
        "int main(void);",
    ):
        assert line in context.splitlines(), line
    assert "1664525u" not in context and "scale_kernel" not in context


def test_splice_replaces_only_the_targets_and_keeps_the_rest_byte_identical():
    cut = kernel_focus()
    echoed = "static unsigned lcg_next(unsigned *state);"  # a declaration from the context
    answer = f"```cuda\n{echoed}\n\n{HELPER}\n\n{NEW_KERNEL}\n\n{NEW_SCALE}\n```\nDone."
    spliced = focus.splice(cut, extract_code(answer).code)
    assert spliced.problems == () and spliced.code is not None
    code = spliced.code
    first = VARIANT.index("/* Loop nest")
    between = VARIANT[VARIANT.index("static void fill") - 2 : VARIANT.index("void scale(")]
    after = VARIANT[VARIANT.index("int main(void)") - 2 :]
    assert code.startswith(VARIANT[:first] + HELPER + "\n\n" + NEW_KERNEL)
    assert NEW_KERNEL + between + NEW_SCALE + after in code
    assert code.endswith(after)
    assert code.count("lcg_next(unsigned *state)") == 1  # the echoed declaration was dropped


def test_an_answer_missing_a_target_or_rewriting_another_function_is_refused():
    cut = kernel_focus()
    missing = focus.splice(cut, f"{NEW_KERNEL}\n")
    assert missing.code is None
    assert [p.kind for p in missing.problems] == ["structure"]
    assert "does not define 'scale'" in missing.problems[0].message
    rewritten_fill = "static void fill(real *y, int n) { for (int i = 0; i < n; i++) y[i] = 1; }"
    other = focus.splice(cut, f"{NEW_KERNEL}\n\n{rewritten_fill}\n\n{NEW_SCALE}\n")
    assert other.code is None
    assert "redefines 'fill'" in other.problems[0].message
    same_fill = VARIANT[VARIANT.index("static void fill") : VARIANT.index("void scale(")]
    echoed = focus.splice(cut, f"{NEW_KERNEL}\n\n{same_fill}\n\n{NEW_SCALE}\n")
    assert echoed.code is not None and echoed.code.count("static void fill") == 1


def test_a_class_keeps_its_semicolon_in_the_declarations():
    code = "class Lcg {\n  public:\n    int s;\n};\n\nint next(Lcg *g) { return ++g->s; }\n"
    cut = focus.Focus(code, ("next",), "test")
    assert cut.context_text() == "class Lcg {\n  public:\n    int s;\n};"


def test_examples_are_cut_to_the_functions_they_change():
    before = (
        "#include <stdio.h>\n\nstatic int sq(int v) { return v * v; }\n\n"
        "void add(float *a, int n) {\n    for (int i = 0; i < n; i++) a[i] += 1;\n}\n\n"
        'int main(void) { float a[4] = {0}; add(a, 4); printf("%d\\n", sq(2)); return 0; }\n'
    )
    after = (
        "#include <stdio.h>\n#include <cuda_runtime.h>\n\nstatic int sq(int v) { return v * v; }"
        "\n\n__global__ void add_kernel(float *a, int n) { a[threadIdx.x] += 1; }\n\n"
        "void add(float *a, int n) { add_kernel<<<1, n>>>(a, n); }\n\n"
        'int main(void) { float a[4] = {0}; add(a, 4); printf("%d\\n", sq(2)); return 0; }\n'
    )
    example = Example(program="p", before=before, after=after, detail="Moved the loop.")
    reduced = focus.reduce_example(example)
    assert reduced.names == ("add",)
    assert (
        reduced.before
        == "void add(float *a, int n) {\n    for (int i = 0; i < n; i++) a[i] += 1;\n}"
    )
    assert reduced.after.split("\n\n") == [
        "#include <cuda_runtime.h>",
        "__global__ void add_kernel(float *a, int n) { a[threadIdx.x] += 1; }",
        "void add(float *a, int n) { add_kernel<<<1, n>>>(a, n); }",
    ]
    assert reduced.detail == "Moved the loop."
    # what the code being edited already has is not shown again as new
    present = focus.reduce_example(example, present=VARIANT)
    assert "#include <cuda_runtime.h>" not in present.after
    assert present.after.startswith("__global__ void add_kernel")


class Scripted:
    """Answers each request with the next scripted answer and keeps what it was asked."""

    identity = "test:scripted"

    def __init__(self, *answers: str):
        self.answers = list(answers)
        self.requests: list[tuple[list, object]] = []

    def complete(self, messages, sampling):
        self.requests.append((list(messages), sampling))
        return Completion(self.answers.pop(0), prompt_tokens=10, completion_tokens=10, seconds=0.1)

    def choose(self, messages, options, sampling):
        raise AssertionError("not asked")


def test_the_repair_prompt_carries_the_error_and_the_function_level_answer():
    first = f"```cuda\n{NEW_KERNEL}\n\n{NEW_SCALE}\n```\nI sized the grid."
    second = f"```cuda\n{HELPER}\n\n{NEW_KERNEL}\n\n{NEW_SCALE}\n```\nI added the helper."
    engine = Scripted(first, second)
    seen: list[str] = []

    def validate(code: str) -> list[Problem]:
        seen.append(code)
        if "static unsigned cudaify_grid" in code:
            return []
        return [Problem("compile", 'identifier "cudaify_grid" is undefined', line=30)]

    example = Example(program="p", before=VARIANT, after=VARIANT.replace("256>>>", "128>>>"))
    result = edit(engine, METHODS["launch_tuning"], Variant(code=VARIANT), [example], validate)
    assert result.problems == () and result.code == seen[-1]
    assert result.code.startswith(VARIANT[: VARIANT.index("/* Loop nest")] + HELPER)
    assert len(engine.requests) == 2
    asked, sampling = engine.requests[0]
    task = asked[-1]["content"]
    assert "Change only the functions `scale_kernel` and `scale`" in task
    assert "return 0;" not in task  # main's body is not in the prompt
    # the example cut to the one function it changes, its declarations not repeated
    assert "Change only the function `scale`:" in asked[1]["content"]
    assert "return 0;" not in asked[1]["content"] and "1664525u" not in asked[1]["content"]
    # its declarations come after the function, as in the edge's own task
    for turn in (asked[1]["content"], task):
        assert turn.index("Change only") < turn.index("static unsigned lcg_next(unsigned *state);")
    assert "int main" not in asked[2]["content"]  # the example cut to its changed function
    assert "128>>>" in asked[2]["content"]
    assert sampling.max_tokens < EDIT_SAMPLING.max_tokens  # sized to the target
    repair, _ = engine.requests[1]
    assert repair[:-2] == asked
    assert repair[-2] == {"role": "assistant", "content": first}
    request = repair[-1]["content"]
    assert '- compile: line 30: identifier "cudaify_grid" is undefined' in request
    assert "complete new version of the functions `scale_kernel` and `scale`" in request
    assert "return 0;" not in request


def test_a_failed_splice_counts_as_structure():
    engine = Scripted(f"```cuda\n{NEW_KERNEL}\n```", f"```cuda\n{NEW_KERNEL}\n```")
    result = edit(engine, METHODS["launch_tuning"], Variant(code=VARIANT), [], lambda code: [])
    assert result.code is None and len(engine.requests) == 2  # the repair round was tried
    assert classify(result, Variant(code=VARIANT))[0] == "structure"
    assert "does not define 'scale'" in classify(result, Variant(code=VARIANT))[1]


def test_with_the_program_the_rule_picks_the_function_it_changes(tmp_path: Path):
    source = tmp_path / "scale.c"
    source.write_text(
        "#include <stdio.h>\n\nstatic float half(float v) { return v * 0.5f; }\n\n"
        "static int twice(int v) { return 2 * v; }\n\n"
        "void scale(int n, float *y) {\n    for (int i = 0; i < n; i++) y[i] = half(y[i]);\n}\n\n"
        "int main(void) {\n    float y[64];\n    for (int i = 0; i < 64; i++) y[i] = i;\n"
        '    scale(twice(32), y);\n    printf("%f\\n", y[3]);\n    return 0;\n}\n'
    )
    starts = Starts(source, "scale", Config(runs=1), search_graph())
    cut = focus.pick_targets(METHODS["offload"], starts.sequential, starts.context)
    # the loop's function and the helper it calls on the GPU (made __device__), not the
    # helper only main calls, nor main
    assert cut.how == "rule" and cut.targets == ("half", "scale")
    assert "static int twice(int v);" in cut.context_text().splitlines()


def _offload_example_and_task():
    """An offload example recorded with an older runtime (its CUDAIFY_CHECK and first
    comment differ from today's) and the sequential program of a second edge."""
    from cudaify.transforms.base import Context
    from cudaify.transforms.offload import PRELUDE

    from .test_decoy_endpoint import GOLDEN, analysed

    program = analysed(GOLDEN / "offload" / "saxpy.c")
    context = Context(program)
    sequential = Variant(program.source)
    rule = METHODS["offload"].apply_rule(sequential, context).variant
    assert rule is not None and PRELUDE in rule.code
    older = PRELUDE.replace("exit(EXIT_FAILURE);", "abort();").replace(
        "Every CUDA call is checked", "Each CUDA call is checked"
    )
    example = Example(program="p", before=program.source, after=rule.code.replace(PRELUDE, older))
    return context, sequential, rule, example


def test_the_runtime_an_example_adds_is_pasted_in_once_and_kept_where_the_answer_calls_it():
    from cudaify.backend.compile import compile_cuda
    from cudaify.transforms.offload import PRELUDE

    context, sequential, rule, example = _offload_example_and_task()
    runtime = focus.with_runtime(sequential.code, [example])
    assert runtime.blocks == (PRELUDE,) and runtime.code.count(PRELUDE) == 1
    # the example's answer leaves the runtime out, older macro and functions included
    reduced = focus.reduce_example(example, runtime.code)
    assert "cudaify_malloc(void **ptr" not in reduced.after
    assert "#define CUDAIFY_CHECK" not in reduced.after and "abort();" not in reduced.after
    assert "__global__" in reduced.after and "cudaify_malloc(" in reduced.after
    # the model answers what the rule wrote, without the runtime: it is there once, compiles
    engine = Scripted(f"```cuda\n{reduced.after}\n```\nI moved the loop to a kernel.")
    result = edit(engine, METHODS["offload"], sequential, [example], lambda c: [], context=context)
    assert result.problems == () and result.code is not None
    assert result.code.count(PRELUDE) == 1 and result.code.count("cudaify runtime helpers") == 1
    asked, _ = engine.requests[0]
    assert (
        "static inline cudaError_t cudaify_malloc(void **ptr, size_t bytes);"
        in asked[-1]["content"]
    )  # the task's read-only declarations
    assert "cudaify_malloc(void **ptr" not in asked[2]["content"]  # nor in the shown answer
    assert "cudaify_malloc(void **ptr" not in asked[1]["content"]
    build = compile_cuda(result.code)
    assert build.ok, build.diagnostics
    # an answer that calls none of it: the runtime goes again, the rest as spliced
    plain = rule.code.replace(PRELUDE, "")
    kernel = focus.functions(plain)
    answer = "\n\n".join(
        kernel[name].text.replace("CUDAIFY_CHECK", "").replace("cudaify_", "cuda_")
        for name in kernel
        if name in focus.changed_functions(sequential.code, rule.code) or "kernel" in name
    )
    engine = Scripted(f"```cuda\n{answer}\n```\nDone.")
    result = edit(engine, METHODS["offload"], sequential, [example], lambda c: [], context=context)
    assert result.code is not None and "cudaify runtime helpers" not in result.code
    targets = focus.pick_targets(METHODS["offload"], sequential, context)
    assert result.code == focus.splice(targets, answer).code


def test_no_runtime_is_pasted_where_the_code_has_it_or_no_example_adds_it():
    _context, sequential, rule, example = _offload_example_and_task()
    assert focus.with_runtime(rule.code, [example]).code == rule.code  # already there
    same = Example(program="p", before=example.after, after=example.after)
    assert focus.with_runtime(sequential.code, [same]) == focus.Runtime(sequential.code)
    assert focus.with_runtime(sequential.code, []) == focus.Runtime(sequential.code)


def test_an_edit_without_examples_may_answer_up_to_the_ceiling():
    """With examples the budget follows the target and the largest example answer; with
    none, what the method adds is unknown and the ceiling holds (a budget sized to the
    target alone cut a compact answer at 512 tokens)."""
    from cudaify.transforms.slm.apply import MIN_ANSWER_TOKENS, answer_tokens

    cut = kernel_focus()
    assert answer_tokens(cut, [], 4096) == 4096
    small = focus.Reduced("p", "void f() {}", "void f() { g(); }", "")
    sized = answer_tokens(cut, [small], 4096)
    assert MIN_ANSWER_TOKENS <= sized < 4096
