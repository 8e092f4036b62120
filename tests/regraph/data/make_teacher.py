"""Writes teacher.jsonl: the recorded answer of a teacher for corpus/scale_add.c (three
steps: a kernel, an unrolled kernel, and a broken tiling step that must be rejected).
Run it again after editing the codes below."""

import json
from pathlib import Path

HERE = Path(__file__).parent
ORIGINAL = (HERE / "corpus" / "scale_add.c").read_text()
LOOP = """void scale_add(int n, const float *x, float *y, float a) {
    for (int i = 0; i < n; i++)
        y[i] = a * x[i] + y[i];
}"""

KERNEL = """__global__ void scale_add_kernel(int n, const float *x, float *y, float a) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}

void scale_add(int n, const float *x, float *y, float a) {
    float *dx, *dy;
    cudaMalloc((void **)&dx, n * sizeof(float));
    cudaMalloc((void **)&dy, n * sizeof(float));
    cudaMemcpy(dx, x, n * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(dy, y, n * sizeof(float), cudaMemcpyHostToDevice);
    scale_add_kernel<<<(n + 255) / 256, 256>>>(n, dx, dy, a);
    cudaMemcpy(y, dy, n * sizeof(float), cudaMemcpyDeviceToHost);
    cudaFree(dx);
    cudaFree(dy);
}"""

UNROLLED = KERNEL.replace(
    """    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];""",
    """    int first = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
#pragma unroll
    for (int k = 0; k < 4; k++)
        if (first + k < n)
            y[first + k] = a * x[first + k] + y[first + k];""",
).replace("(n + 255) / 256", "(n + 1023) / 1024")

BROKEN = UNROLLED.replace("int first", "__shared__ float tile[256]\n    int first")

steps = [
    {
        "think": "the loop has no carried dependence",
        "method": "Parallelize",
        "detail": "one thread per element",
        "code": ORIGINAL.replace(LOOP, KERNEL),
    },
    {
        "think": "each thread does too little work",
        "method": "loop unrolling",
        "detail": "four elements per thread, unrolled",
        "code": ORIGINAL.replace(LOOP, UNROLLED),
    },
    {
        "think": "stage x in shared memory",
        "method": "shared memory tiling",
        "detail": "tile of 256",
        "code": ORIGINAL.replace(LOOP, BROKEN),
    },
]
answer = "Here is the plan.\n```json\n" + json.dumps(steps, indent=1) + "\n```\n"
(HERE / "teacher.jsonl").write_text(json.dumps({"match": "scale_add", "answer": answer}) + "\n")
