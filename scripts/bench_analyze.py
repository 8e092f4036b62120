"""How long `cudaify analyze` takes on a large C file (the goal: 2,000 lines in under 2 s).

    python scripts/bench_analyze.py [FILE] [--lines 2000] [--runs 3] [--profile]

Without FILE, writes a program of about --lines lines made of the loop nests real
numeric code holds (stencils, matrix products, reductions, scans, histograms, triangular
and time-stepped nests, struct fields), each copy with its own names, and a main that
calls them all. Prints the median wall and CPU time of the analysis (parse included) and
the parse alone; CPU time is what to compare on a shared machine. `--profile` prints the
top of a cProfile of one run."""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path

from cudaify.frontend.analyze import analyze
from cudaify.frontend.parse import parse

HEADER = """#include <math.h>
#include <stdio.h>
#include <stdlib.h>

struct particle_K { float x, y, vx, vy; };
static double table_K[64][64];
"""

KERNELS = """
void stencil_K(int n, int m, const double *in, double *out) {
    for (int i = 1; i < n - 1; i++)
        for (int j = 1; j < m - 1; j++)
            out[i * m + j] = 0.25 * (in[(i - 1) * m + j] + in[(i + 1) * m + j]
                                     + in[i * m + j - 1] + in[i * m + j + 1]);
}

void matmul_K(int n, const float *a, const float *b, float *c) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            float s = 0.0f;
            for (int k = 0; k < n; k++)
                s += a[i * n + k] * b[k * n + j];
            c[i * n + j] = s;
        }
}

double dot_K(int n, const double *x, const double *y) {
    double s = 0.0;
    for (int i = 0; i < n; i++)
        s += x[i] * y[i];
    return s;
}

void scan_K(int n, const int *in, int *out) {
    out[0] = in[0];
    for (int i = 1; i < n; i++)
        out[i] = out[i - 1] + in[i];
}

void histogram_K(int n, const int *data, int *bins, int nbins) {
    for (int i = 0; i < nbins; i++)
        bins[i] = 0;
    for (int i = 0; i < n; i++)
        bins[data[i] % nbins]++;
}

void gauss_seidel_K(int n, double *a) {
    for (int t = 0; t < 10; t++)
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++)
                a[i * n + j] = 0.2 * (a[i * n + j] + a[(i - 1) * n + j] + a[(i + 1) * n + j]
                                      + a[i * n + j - 1] + a[i * n + j + 1]);
}

void lower_K(int n, const double *l, const double *x, double *y) {
    for (int i = 0; i < n; i++) {
        double s = 0.0;
        for (int j = 0; j <= i; j++)
            s += l[i * n + j] * x[j];
        y[i] = s;
    }
}

void particles_K(int n, struct particle_K *p, float dt) {
    for (int i = 0; i < n; i++) {
        p[i].x += p[i].vx * dt;
        p[i].y += p[i].vy * dt;
        if (p[i].x < 0.0f || p[i].x > 1.0f) p[i].vx = -p[i].vx;
        if (p[i].y < 0.0f || p[i].y > 1.0f) p[i].vy = -p[i].vy;
    }
}

float maxabs_K(int n, const float *v) {
    float m = 0.0f;
    for (int i = 0; i < n; i++) {
        float a = fabsf(v[i]);
        if (a > m) m = a;
    }
    return m;
}

void table_fill_K(void) {
    for (int i = 0; i < 64; i++)
        for (int j = 0; j < 64; j++)
            table_K[i][j] = sin(0.1 * i) * cos(0.1 * j);
}

int first_negative_K(int n, const double *v) {
    for (int i = 0; i < n; i++)
        if (v[i] < 0) return i;
    return -1;
}

void transpose_K(int n, int m, const double *a, double *b) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            b[j * n + i] = a[i * m + j];
}
"""

CALLS = """    stencil_K(N, N, bufd, bufd2);
    matmul_K(32, buff, buff2, buff3);
    total += dot_K(N * N, bufd, bufd2);
    scan_K(N, bufi, bufi2);
    histogram_K(N, bufi, bufi2, 16);
    gauss_seidel_K(N, bufd);
    lower_K(N, bufd, bufd2, bufd3);
    particles_K(N, parts_K, 0.01f);
    total += maxabs_K(N, buff);
    table_fill_K();
    total += first_negative_K(N, bufd);
    transpose_K(N, N, bufd, bufd2);
"""

MAIN = """
int main(void) {
    enum { N = 64 };
    static double bufd[N * N], bufd2[N * N], bufd3[N * N];
    static float buff[N * N], buff2[N * N], buff3[N * N];
    static int bufi[N * N], bufi2[N * N];
    double total = 0.0;
    for (int i = 0; i < N * N; i++) {
        bufd[i] = i % 7; bufd2[i] = i % 5; buff[i] = (float)(i % 3); buff2[i] = 1.0f;
        bufi[i] = i % 31;
    }
@DECLS@@CALLS@    printf("%f\\n", total);
    return 0;
}
"""


def synthetic(lines: int) -> str:
    """A C program of about `lines` lines: copies of KERNELS with their own names."""
    per_copy = (HEADER + KERNELS).count("\n") + CALLS.count("\n") + 1
    copies = max(1, lines // per_copy)
    parts, calls, decls = ["#include <math.h>\n#include <stdio.h>\n#include <stdlib.h>\n"], [], []
    for k in range(copies):
        suffix = f"_{k}"
        parts.append(HEADER.split("\n", 3)[3].replace("_K", suffix))
        parts.append(KERNELS.replace("_K", suffix))
        decls.append(f"    static struct particle{suffix} parts{suffix}[N];\n")
        calls.append(CALLS.replace("_K", suffix))
    main = MAIN.replace("@DECLS@", "".join(decls)).replace("@CALLS@", "".join(calls))
    return "".join(parts) + main


def measure(path: str, runs: int) -> None:
    walls, cpus, parses = [], [], []
    for _ in range(runs):
        wall, cpu = time.perf_counter(), time.process_time()
        parse(path)
        parses.append(time.process_time() - cpu)
        wall, cpu = time.perf_counter(), time.process_time()
        program = analyze(path)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    lines = Path(path).read_text().count("\n")
    loops = sum(len(top.walk()) for fn in program.functions for top in fn.loops)
    print(
        f"{path}: {lines} lines, {len(program.functions)} functions, {loops} loops; "
        f"analyze median {statistics.median(walls):.2f} s wall, "
        f"{statistics.median(cpus):.2f} s CPU (parse alone {statistics.median(parses):.2f} s CPU)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?")
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="cudaify-bench-") as temp:
        path = args.file
        if path is None:
            path = str(Path(temp) / "large.c")
            Path(path).write_text(synthetic(args.lines))
        measure(path, args.runs)
        if args.profile:
            profiler = cProfile.Profile()
            profiler.runcall(analyze, path)
            pstats.Stats(profiler).sort_stats("tottime").print_stats(25)
    return 0


if __name__ == "__main__":
    sys.exit(main())
