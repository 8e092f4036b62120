"""The one-prompt baselines (`oneshot`, `cot`): an answer counts as a GPU variant only
when it launches a kernel it defines."""

from __future__ import annotations

from cudaify.core import Problem, Variant
from cudaify.transforms.slm.apply import whole_program
from cudaify.transforms.slm.engine import Completion
from cudaify.transforms.structure import launch_problems

HOST = """#include <stdio.h>
void scale(int n, float *v) { for (int i = 0; i < n; i++) v[i] *= 2.0f; }
int main(void) { float v[8] = {1}; scale(8, v); printf("%f\\n", v[0]); return 0; }
"""
KERNEL = """#include <stdio.h>
__global__ void scale_kernel(int n, float *v) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] *= 2.0f;
}
"""
LAUNCHED = (
    KERNEL
    + """void scale(int n, float *v) {
    float *d; cudaMalloc(&d, n * sizeof(float));
    cudaMemcpy(d, v, n * sizeof(float), cudaMemcpyHostToDevice);
    scale_kernel<<<(n + 255) / 256, 256>>>(n, d);
    cudaMemcpy(v, d, n * sizeof(float), cudaMemcpyDeviceToHost); cudaFree(d);
}
int main(void) { float v[8] = {1}; scale(8, v); printf("%f\\n", v[0]); return 0; }
"""
)


def test_only_a_launched_kernel_makes_a_gpu_program():
    assert "defines no __global__ kernel" in launch_problems(HOST)[0].message
    unused = KERNEL + HOST.split("\n", 1)[1]
    assert "launches none of them" in launch_problems(unused)[0].message
    assert launch_problems(LAUNCHED) == []
    templated = LAUNCHED.replace("__global__ void", "template <typename T>\n__global__ void")
    templated = templated.replace("float *v) {\n    int i", "T *v) {\n    int i")
    templated = templated.replace("scale_kernel<<<", "scale_kernel<float><<<")
    assert "scale_kernel<float><<<" in templated and launch_problems(templated) == []


class Answers:
    identity = "test:answers"

    def __init__(self, *answers: str):
        self.answers = list(answers)
        self.asked = 0

    def complete(self, messages, sampling):
        self.asked += 1
        return Completion(self.answers.pop(0), prompt_tokens=10, completion_tokens=10, seconds=0.1)


def test_an_answer_that_keeps_the_host_code_is_refused_then_repaired():
    """On the H200 the 0.5B model's verified oneshot answers ran at 0.67-1.45x, host code's
    speed: an answer that launches nothing must not count as a GPU variant."""
    compiled: list[str] = []

    def validate(code: str) -> list[Problem]:
        compiled.append(code)
        return []

    refused = whole_program(
        Answers(f"```c\n{HOST}```", f"```c\n{HOST}```"), "oneshot", Variant(code=HOST), validate
    )
    assert refused.variant is None and "runs nothing on the GPU" in refused.reason
    engine = Answers(f"```c\n{HOST}```", f"```cuda\n{LAUNCHED}```")
    repaired = whole_program(engine, "cot", Variant(code=HOST), validate)
    assert engine.asked == 2 and repaired.variant is not None
    assert "scale_kernel<<<" in repaired.variant.code
