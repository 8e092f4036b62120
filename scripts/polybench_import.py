"""Import PolyBench/C 4.2.1 into the benchmark suite as the `polybench` category.

    python scripts/polybench_import.py [SOURCE] [--out benchmarks/polybench] [--measure]

SOURCE (default ../shared/polybench, next to the repository) holds PolyBench/C 4.2.1 as
single-file programs, `c/<kernel>.c`, each expanded for one dataset, and PolyBench's
LICENSE.txt. For every kernel this writes `<out>/pb_<kernel>.c` (`-` becomes `_`: the suite
already has a `linalg/syrk.c`, and stems must be unique) and copies LICENSE.txt beside them.

A generated program is the PolyBench program with
- the suite's header comment in front (Name, Category, Computes, Pattern, CPU time, Dataset),
  then PolyBench's own comment with its copyright notice;
- every dataset size literal replaced by a macro `PB_<PARAM>` (PolyBench's parameter name),
  defined in an `#ifdef BENCH_SMALL` block: the full build uses the dataset chosen in
  KERNELS, BENCH_SMALL PolyBench's SMALL dataset (unless KERNELS says otherwise);
- `#pragma GCC diagnostic ignored "-Wunknown-pragmas"`, since the kernels keep PolyBench's
  `#pragma scop` markers and the suite compiles with -Wall;
- the few edits outside the kernel listed in PATCHES.
The kernel function is PolyBench's byte for byte apart from the size literals: `generate`
checks it. The output depends only on SOURCE and this file, so the import can be redone and
compared (tests/benchmarks/test_polybench.py does).

The full-size dataset is a standard PolyBench one that runs 0.3-3 s on one core here (gcc -O3):
the suite asks for 0.2-5 s, and the margin absorbs noise and slower hosts. Where no standard
dataset does (the O(N^2) kernels run well under 0.3 s even at EXTRALARGE; some O(N^3) ones
jump from under 0.1 s at MEDIUM to over 5 s at LARGE), KERNELS gives explicit sizes derived
from a standard dataset and says why in the program's header; they also run under 5 s on the
Xeon host of the H100 test machine, which runs some of these programs up to 12 times slower
than the development machine's EPYC.

`--measure` builds every generated program with gcc -O3, runs it three times and prints the
median user time, for the CPU times recorded in KERNELS.
"""

from __future__ import annotations

import argparse
import re
import resource
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
DEFAULT_SOURCE = REPOSITORY.parent / "shared" / "polybench"
DEFAULT_OUT = REPOSITORY / "benchmarks" / "polybench"
DATASETS = ("MINI", "SMALL", "MEDIUM", "LARGE", "EXTRALARGE")
MEASURED = "gcc 12.2 -O3, one core; user time, median of 3 runs, 2026-11-24"


@dataclass(frozen=True)
class Sizes:
    """A kernel's size parameters and their values in PolyBench's five datasets
    (`<kernel>.h` of PolyBench/C 4.2.1), MINI first."""

    params: tuple[str, ...]
    values: tuple[tuple[int, ...], ...]

    def of(self, dataset: str) -> tuple[int, ...]:
        return self.values[DATASETS.index(dataset)]


SIZES: dict[str, Sizes] = {
    "2mm": Sizes(
        ("NI", "NJ", "NK", "NL"),
        (
            (16, 18, 22, 24),
            (40, 50, 70, 80),
            (180, 190, 210, 220),
            (800, 900, 1100, 1200),
            (1600, 1800, 2200, 2400),
        ),
    ),
    "3mm": Sizes(
        ("NI", "NJ", "NK", "NL", "NM"),
        (
            (16, 18, 20, 22, 24),
            (40, 50, 60, 70, 80),
            (180, 190, 200, 210, 220),
            (800, 900, 1000, 1100, 1200),
            (1600, 1800, 2000, 2200, 2400),
        ),
    ),
    "adi": Sizes(("TSTEPS", "N"), ((20, 20), (40, 60), (100, 200), (500, 1000), (1000, 2000))),
    "atax": Sizes(("M", "N"), ((38, 42), (116, 124), (390, 410), (1900, 2100), (1800, 2200))),
    "bicg": Sizes(("M", "N"), ((38, 42), (116, 124), (390, 410), (1900, 2100), (1800, 2200))),
    "cholesky": Sizes(("N",), ((40,), (120,), (400,), (2000,), (4000,))),
    "correlation": Sizes(("M", "N"), ((28, 32), (80, 100), (240, 260), (1200, 1400), (2600, 3000))),
    "covariance": Sizes(("M", "N"), ((28, 32), (80, 100), (240, 260), (1200, 1400), (2600, 3000))),
    "deriche": Sizes(("W", "H"), ((64, 64), (192, 128), (720, 480), (4096, 2160), (7680, 4320))),
    "doitgen": Sizes(
        ("NQ", "NR", "NP"),
        ((8, 10, 12), (20, 25, 30), (40, 50, 60), (140, 150, 160), (220, 250, 270)),
    ),
    "durbin": Sizes(("N",), ((10,), (120,), (400,), (2000,), (4000,))),
    "fdtd-2d": Sizes(
        ("TMAX", "NX", "NY"),
        ((20, 20, 30), (40, 60, 80), (100, 200, 240), (500, 1000, 1200), (1000, 2000, 2600)),
    ),
    "floyd-warshall": Sizes(("N",), ((60,), (180,), (500,), (2800,), (5600,))),
    "gemm": Sizes(
        ("NI", "NJ", "NK"),
        ((20, 25, 30), (60, 70, 80), (200, 220, 240), (1000, 1100, 1200), (2000, 2300, 2600)),
    ),
    "gemver": Sizes(("N",), ((40,), (120,), (400,), (2000,), (4000,))),
    "gesummv": Sizes(("N",), ((30,), (90,), (250,), (1300,), (2800,))),
    "gramschmidt": Sizes(("M", "N"), ((20, 30), (60, 80), (200, 240), (1000, 1200), (2000, 2600))),
    "heat-3d": Sizes(("TSTEPS", "N"), ((20, 10), (40, 20), (100, 40), (500, 120), (1000, 200))),
    "jacobi-1d": Sizes(
        ("TSTEPS", "N"), ((20, 30), (40, 120), (100, 400), (500, 2000), (1000, 4000))
    ),
    "jacobi-2d": Sizes(
        ("TSTEPS", "N"), ((20, 30), (40, 90), (100, 250), (500, 1300), (1000, 2800))
    ),
    "lu": Sizes(("N",), ((40,), (120,), (400,), (2000,), (4000,))),
    "ludcmp": Sizes(("N",), ((40,), (120,), (400,), (2000,), (4000,))),
    "mvt": Sizes(("N",), ((40,), (120,), (400,), (2000,), (4000,))),
    "nussinov": Sizes(("N",), ((60,), (180,), (500,), (2500,), (5500,))),
    "seidel-2d": Sizes(
        ("TSTEPS", "N"), ((20, 40), (40, 120), (100, 400), (500, 2000), (1000, 4000))
    ),
    "symm": Sizes(("M", "N"), ((20, 30), (60, 80), (200, 240), (1000, 1200), (2000, 2600))),
    "syr2k": Sizes(("M", "N"), ((20, 30), (60, 80), (200, 240), (1000, 1200), (2000, 2600))),
    "syrk": Sizes(("M", "N"), ((20, 30), (60, 80), (200, 240), (1000, 1200), (2000, 2600))),
    "trisolv": Sizes(("N",), ((40,), (120,), (400,), (2000,), (4000,))),
    "trmm": Sizes(("M", "N"), ((20, 30), (60, 80), (200, 240), (1000, 1200), (2000, 2600))),
}


# A PolyBench dataset's name, or explicit sizes in `Sizes.params` order.
Dataset = str | tuple[int, ...]


@dataclass(frozen=True)
class Kernel:
    """What the suite's header says about one kernel, and the sizes it runs at.

    `full` is the dataset of the full-size build: a PolyBench dataset that runs 0.3-3 s on
    one core here, or explicit sizes where none does, `why` saying what the standard ones
    do. `small` is the -DBENCH_SMALL dataset, `small_why` the reason where it is not a
    standard one. `cpu_seconds` is measured with --measure on the generated program."""

    computes: str
    pattern: str
    full: Dataset
    cpu_seconds: float
    why: str = ""
    small: Dataset = "SMALL"
    small_why: str = ""


# PolyBench's gramschmidt data, A[i][j] = (i*j % M) / M * 100 + 10, has rank about M/2: its
# columns j and M-j are affinely related. Every PolyBench dataset has N > M/2, so most of Q and
# R are rounding noise, which a reordered (GPU, or -ffast-math) run does not reproduce: with
# -ffast-math the sum of Q goes from -0.52 to -1.12 at SMALL, from 9.3 to 77 at LARGE. With
# N <= M/2 the columns are independent (condition number 211 at M=60, N=30; 4.5e3 at M=1200,
# N=600) and the results are stable.
RANK_DEFICIENT = (
    "PolyBench's sizes all have N > M/2, which leaves A rank-deficient, so Q and R are mostly "
    "rounding noise that no reordered (GPU) run reproduces"
)

KERNELS: dict[str, Kernel] = {
    "2mm": Kernel(
        "D = alpha * A * B * C + beta * D, as tmp = alpha * A * B, then D = beta * D + tmp * C",
        "two dependent matrix products: 2-D parallel nests with inner dot products",
        "LARGE",
        0.46,
    ),
    "3mm": Kernel(
        "G = (A * B) * (C * D): E = A * B, F = C * D, then G = E * F",
        "three matrix products, the third reading the first two's results",
        "LARGE",
        0.78,
    ),
    "adi": Kernel(
        "the 2-D heat equation by alternating-direction implicit steps",
        "time loop of column then row sweeps, each a tridiagonal forward and backward "
        "recurrence per line: parallel across lines, sequential along them",
        (100, 1000),
        1.14,
        why="LARGE's N with MEDIUM's TSTEPS: LARGE runs 5.9 s here, MEDIUM 0.03 s",
    ),
    "atax": Kernel(
        "y = A^T * (A * x)",
        "row-wise matrix-vector reduction, then a column-wise accumulation into y per row",
        (14400, 17600),
        0.37,
        why="EXTRALARGE x 8: EXTRALARGE runs under 0.01 s here",
    ),
    "bicg": Kernel(
        "the BiCG sub-kernel: s = A^T * r and q = A * p in one pass over A",
        "one nest with a row reduction (q) and a column accumulation (s)",
        (14400, 17600),
        0.52,
        why="EXTRALARGE x 8: EXTRALARGE runs under 0.01 s here",
    ),
    "cholesky": Kernel(
        "the Cholesky factorisation A = L * L^T of a positive definite matrix, in place",
        "triangular nest with inner dot products and sqrt; each row depends on the rows above",
        (1200,),
        1.01,
        why="LARGE runs 6.3 s here, MEDIUM 0.02 s",
    ),
    "correlation": Kernel(
        "the correlation matrix of M variables over N samples",
        "column means and standard deviations (reductions), normalisation, then a "
        "triangular symmetric matrix product",
        "LARGE",
        0.58,
    ),
    "covariance": Kernel(
        "the covariance matrix of M variables over N samples",
        "column means (reductions), centring, then a triangular symmetric matrix product",
        "LARGE",
        1.09,
    ),
    "deriche": Kernel(
        "Deriche's recursive edge-detection filter on a float image",
        "first-order IIR recurrences along rows (forward and backward), then along columns: "
        "parallel across lines, sequential along them; single precision",
        "EXTRALARGE",
        0.60,
    ),
    "doitgen": Kernel(
        "the multiresolution analysis kernel of MADNESS: A[r][q][:] = A[r][q][:] * C4",
        "batched vector-matrix products through a per-(r, q) temporary, written back in place",
        "EXTRALARGE",
        1.75,
    ),
    "durbin": Kernel(
        "the Levinson-Durbin solution of a Toeplitz system",
        "sequential outer loop; inner dot product and vector update of growing length",
        (30000,),
        0.30,
        why="EXTRALARGE x 7.5: EXTRALARGE runs under 0.01 s here; the recurrence amplifies "
        "rounding as N grows (at N=40000 a -ffast-math build differs by 1.4e-4)",
    ),
    "fdtd-2d": Kernel(
        "2-D finite-difference time-domain electromagnetics (Yee scheme)",
        "time loop of three 2-D stencil updates (ey, ex, hz), each reading the others",
        "LARGE",
        1.04,
    ),
    "floyd-warshall": Kernel(
        "all-pairs shortest paths (Floyd-Warshall) on a dense graph",
        "sequential k loop around a parallel 2-D min-plus update",
        (1400,),
        1.10,
        why="LARGE runs 9.4 s here, MEDIUM 0.05 s; N=1600 runs 5.8 s on the H100 host",
    ),
    "gemm": Kernel(
        "C = alpha * A * B + beta * C",
        "2-D parallel nest with inner dot product (i-k-j order), data reuse",
        (1500, 1650, 1800),
        1.18,
        why="LARGE x 1.5: LARGE runs 0.14 s here, EXTRALARGE 4.5 s",
    ),
    "gemver": Kernel(
        "A += u1 v1^T + u2 v2^T, x += beta A^T y + z, w += alpha A x",
        "rank-2 update, then a transposed and a plain matrix-vector product",
        (10000,),
        0.47,
        why="EXTRALARGE x 2.5: EXTRALARGE runs 0.05 s here",
    ),
    "gesummv": Kernel(
        "y = alpha * A * x + beta * B * x",
        "two matrix-vector products fused in one row reduction",
        (11200,),
        0.39,
        why="EXTRALARGE x 4: EXTRALARGE runs 0.01 s here",
    ),
    "gramschmidt": Kernel(
        "the QR factorisation of A by modified Gram-Schmidt",
        "sequential loop over columns: norm reduction, scaling, then projections of the "
        "remaining columns (reductions over rows)",
        (1200, 600),
        0.42,
        why=RANK_DEFICIENT,
        small=(60, 30),
        small_why=RANK_DEFICIENT,
    ),
    "heat-3d": Kernel(
        "the 3-D heat equation by explicit steps",
        "7-point 3-D stencil in a time loop, double buffering",
        "LARGE",
        1.82,
    ),
    "jacobi-1d": Kernel(
        "1-D Jacobi relaxation",
        "3-point 1-D stencil in a time loop, double buffering",
        (20000, 80000),
        0.52,
        why="EXTRALARGE x 20: EXTRALARGE runs under 0.01 s here",
    ),
    "jacobi-2d": Kernel(
        "2-D Jacobi relaxation",
        "5-point 2-D stencil in a time loop, double buffering",
        "LARGE",
        0.80,
    ),
    "lu": Kernel(
        "the LU factorisation of A without pivoting, in place",
        "triangular nests with inner dot products; each row depends on the rows above",
        (1200,),
        1.19,
        why="LARGE runs 7.3 s here, MEDIUM 0.03 s",
    ),
    "ludcmp": Kernel(
        "A x = b by LU factorisation, then forward and backward substitution",
        "LU's triangular nests, then two triangular solves (sequential rows, inner reductions)",
        (1200,),
        1.17,
        why="LARGE runs 7.2 s here, MEDIUM 0.02 s",
    ),
    "mvt": Kernel(
        "x1 += A * y1 and x2 += A^T * y2",
        "a row-wise and a column-wise matrix-vector product",
        (10000,),
        0.38,
        why="EXTRALARGE x 2.5: EXTRALARGE runs 0.04 s here",
    ),
    "nussinov": Kernel(
        "RNA secondary structure by Nussinov's dynamic programming",
        "triangular DP table filled bottom-up with max reductions: a wavefront",
        "LARGE",
        2.14,
    ),
    "seidel-2d": Kernel(
        "2-D Gauss-Seidel relaxation, 9-point, in place",
        "in-place stencil in a time loop: true dependences in i, j and t (wavefront)",
        (100, 2000),
        2.34,
        why="LARGE's N with MEDIUM's TSTEPS: LARGE runs 11.8 s here, MEDIUM 0.09 s",
    ),
    "symm": Kernel(
        "C = alpha * A * B + beta * C with A symmetric (lower triangle stored)",
        "triangular inner loop that both reduces into a scalar and updates rows above",
        "LARGE",
        0.71,
    ),
    "syr2k": Kernel(
        "the lower triangle of C = alpha * (A * B^T + B * A^T) + beta * C",
        "triangular nest (j <= i) with an inner reduction over k",
        "LARGE",
        0.58,
    ),
    "syrk": Kernel(
        "the lower triangle of C = alpha * A * A^T + beta * C",
        "triangular nest (j <= i) with an inner reduction over k",
        (1500, 1800),
        1.01,
        why="LARGE x 1.5: LARGE runs 0.21 s here, EXTRALARGE 3.7 s",
    ),
    "trisolv": Kernel(
        "x in L x = b by forward substitution (L lower triangular)",
        "sequential rows, each an inner reduction over the solved part",
        (24000,),
        0.39,
        why="EXTRALARGE x 6: EXTRALARGE runs under 0.01 s here",
    ),
    "trmm": Kernel(
        "B = alpha * A^T * B with A unit lower triangular, in place",
        "parallel over columns; each row reads the rows below, not yet overwritten",
        "LARGE",
        0.55,
    ),
}

# Edits outside the kernel function, each (kernel, old, new, why); `old` must occur once.
PATCHES: tuple[tuple[str, str, str, str], ...] = (
    (
        "durbin",
        "void init_array (int n,\n   double r[PB_N])\n{\n  int i, j;\n",
        "void init_array (int n,\n   double r[PB_N])\n{\n  int i;\n",
        "PolyBench's init_array declares a j it never uses (gcc -Wall warns)",
    ),
)

LICENSE_LINE = (" * License: ../LICENSE.txt\n", " * License: LICENSE.txt (in this folder)\n")
INTEGER_LITERAL = re.compile(r"(?<![\w.])\d+(?![\w.])")


def program_name(kernel: str) -> str:
    return "pb_" + kernel.replace("-", "_")


def macro(param: str) -> str:
    return "PB_" + param


def source_dataset(text: str) -> str:
    found = re.search(r"\b([A-Z]+)_DATASET\b", text.splitlines()[0])
    if not found or found.group(1) not in DATASETS:
        raise ValueError("the first line does not name a PolyBench dataset")
    return found.group(1)


def source_group(text: str) -> str:
    """PolyBench's folder for the kernel, e.g. 'linear-algebra/blas'."""
    found = re.search(r"kernel '[\w-]+' \(([\w/-]+)\)", text.splitlines()[0])
    if not found:
        raise ValueError("the first line does not name the kernel's PolyBench folder")
    return found.group(1)


def values(kernel: str, dataset: Dataset) -> tuple[int, ...]:
    return SIZES[kernel].of(dataset) if isinstance(dataset, str) else dataset


def replace_sizes(code: str, literals: dict[int, str]) -> str:
    """Every integer literal whose value is one of the source dataset's sizes becomes
    that size's macro (floats such as 65535.0f and names such as y_1 are left alone). A
    constant that merely equals a size would become the macro too: none of the 30 programs
    has one (every replacement was read), and set back to the source dataset each generated
    program prints exactly what PolyBench's does."""

    def swap(found: re.Match[str]) -> str:
        return literals.get(int(found.group()), found.group())

    return INTEGER_LITERAL.sub(swap, code)


def restore_sizes(code: str, literals: dict[int, str]) -> str:
    for value, name in literals.items():
        code = re.sub(rf"\b{name}\b", str(value), code)
    return code


def kernel_function(code: str, kernel: str) -> str:
    name = "kernel_" + kernel.replace("-", "_")
    found = re.search(rf"^void {name}\(.*?^}}\n", code, re.DOTALL | re.MULTILINE)
    if not found or "#pragma scop\n" not in found.group():
        raise ValueError(f"{kernel}: no function {name} with a '#pragma scop' region")
    return found.group()


def apply_patches(kernel: str, code: str) -> str:
    for target, old, new, _ in PATCHES:
        if target != kernel:
            continue
        if code.count(old) != 1:
            raise ValueError(f"{kernel}: patch target found {code.count(old)} times: {old!r}")
        code = code.replace(old, new)
    return code


def sizes_text(params: tuple[str, ...], values: tuple[int, ...]) -> str:
    return ", ".join(f"{p}={v}" for p, v in zip(params, values, strict=True))


def describe(kernel: str, dataset: Dataset, why: str) -> str:
    sizes = sizes_text(SIZES[kernel].params, values(kernel, dataset))
    if isinstance(dataset, str):
        return f"{dataset} ({sizes})"
    return f"{sizes}, not a standard PolyBench size: {why}"


def dataset_text(kernel: str) -> str:
    spec = KERNELS[kernel]
    full = describe(kernel, spec.full, spec.why)
    if spec.small_why and spec.small_why == spec.why:
        small = describe(kernel, spec.small, "as above")
    else:
        small = describe(kernel, spec.small, spec.small_why)
    return f"{full}; -DBENCH_SMALL: {small}"


def wrap(field: str, text: str, width: int = 92) -> list[str]:
    """` * Field: text`, continued on lines indented under the text."""
    lines, line = [], f" * {field}: "
    indent = " *" + " " * (len(line) - 2)
    for word in text.split():
        if len(line) + len(word) > width and not line.endswith(": "):
            lines.append(line.rstrip())
            line = indent
        line += word + " "
    lines.append(line.rstrip())
    return lines


def suite_header(kernel: str, group: str) -> str:
    spec = KERNELS[kernel]
    lines = ["/*", f" * Name: {program_name(kernel)}", " * Category: polybench"]
    lines += wrap("Computes", f"{spec.computes} (PolyBench/C 4.2.1 {group}/{kernel})")
    lines += wrap("Pattern", spec.pattern)
    lines += [f" * CPU time: {spec.cpu_seconds:.2f} s ({MEASURED})"]
    lines += wrap("Dataset", dataset_text(kernel))
    lines += wrap(
        "Source",
        "generated by scripts/polybench_import.py from PolyBench's program; do not edit by "
        "hand. The kernel function is PolyBench's, unchanged but for the dataset sizes, "
        "which are the PB_* macros below.",
    )
    return "\n".join(lines) + "\n */\n"


def size_block(kernel: str) -> str:
    spec = KERNELS[kernel]
    lines = ["#ifdef BENCH_SMALL", *defines(kernel, spec.small), "#else"]
    return "\n".join([*lines, *defines(kernel, spec.full), "#endif"]) + "\n"


def defines(kernel: str, dataset: Dataset) -> list[str]:
    """The size macros of one dataset, after a comment that names it."""
    name = (
        f"PolyBench's {dataset} dataset"
        if isinstance(dataset, str)
        else "not a standard size: see Dataset in the header"
    )
    params, sizes = SIZES[kernel].params, values(kernel, dataset)
    return [f"/* {name} */"] + [
        f"#define {macro(p)} {v}" for p, v in zip(params, sizes, strict=True)
    ]


PRAGMA_NOTE = (
    "/* The kernel keeps PolyBench's '#pragma scop' markers, which gcc -Wall reports. */\n"
    '#pragma GCC diagnostic ignored "-Wunknown-pragmas"\n'
)


def generate(kernel: str, source: str) -> str:
    """The suite's program for one PolyBench kernel, from PolyBench's single-file program."""
    sizes = SIZES[kernel]
    original = sizes.of(source_dataset(source))
    if len(set(original)) != len(original):
        raise ValueError(f"{kernel}: two sizes share a value, the literals are ambiguous")
    literals = {v: macro(p) for p, v in zip(sizes.params, original, strict=True)}
    end = source.index("*/\n") + 3
    notice, code = source[:end], source[end:]
    if notice.count(LICENSE_LINE[0]) != 1:
        raise ValueError(f"{kernel}: PolyBench's comment lacks {LICENSE_LINE[0]!r}")
    code = apply_patches(kernel, replace_sizes(code, literals))
    kernel_code = kernel_function(code, kernel)
    if restore_sizes(kernel_code, literals) != kernel_function(source, kernel):
        raise ValueError(f"{kernel}: the kernel changed beyond its size literals")
    return (
        suite_header(kernel, source_group(source))
        + notice.replace(*LICENSE_LINE)
        + size_block(kernel)
        + PRAGMA_NOTE
        + code
    )


def import_all(source: Path, out: Path) -> list[Path]:
    """Write every kernel's program and PolyBench's LICENSE.txt into `out`."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for kernel in KERNELS:
        text = (source / "c" / f"{kernel}.c").read_text()
        path = out / f"{program_name(kernel)}.c"
        path.write_text(generate(kernel, text))
        written.append(path)
    license_path = out / "LICENSE.txt"
    license_path.write_bytes((source / "LICENSE.txt").read_bytes())
    return [*written, license_path]


def user_seconds(argv: list[str], timeout: float) -> float:
    """CPU (user) time of one run of argv, which must succeed."""
    from cudaify.core.toolchain import run

    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    done = run(argv, timeout=timeout, output_cap=1 << 24)
    if not done.ok:
        raise RuntimeError(f"{argv[0]} failed: rc={done.returncode} {done.errors()[:200]}")
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - before


def measure(programs: list[Path], runs: int = 3) -> None:
    from cudaify.core.toolchain import find_tool, run

    with tempfile.TemporaryDirectory(prefix="polybench-") as work:
        for path in programs:
            exe = str(Path(work) / path.stem)
            built = run([find_tool("gcc"), "-O3", "-o", exe, str(path), "-lm"], timeout=120)
            if not built.ok:
                print(f"{path.stem}: does not compile: {built.errors()[:300]}")
                continue
            times = [user_seconds([exe], timeout=120) for _ in range(runs)]
            print(f"{path.stem}: {statistics.median(times):.2f} s  (runs: {times})", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("source", nargs="?", type=Path, default=DEFAULT_SOURCE)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--measure", action="store_true", help="time the generated programs")
    args = parser.parse_args(argv)
    if not (args.source / "c").is_dir():
        print(f"{args.source}: no c/ folder of PolyBench programs", file=sys.stderr)
        return 2
    written = import_all(args.source, args.out)
    print(f"wrote {len(written)} files to {args.out}")
    if args.measure:
        measure([p for p in written if p.suffix == ".c"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
