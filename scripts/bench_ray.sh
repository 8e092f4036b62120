#!/usr/bin/env bash
# Issue 21's must-show numbers, measured on a GPU host with at least 2 GPUs (with one, the
# 2-GPU phase is skipped and said so):
#
#   inproc1  `cudaify bench` in-process, CUDA_VISIBLE_DEVICES limited to the first GPU
#   ray1     the same programs and flags with `--ray`, the same single GPU: its wall time
#            must be within 10% of inproc1's, with the same programs verified
#   inproc2  in-process over the first two GPUs (bench's own split), for reference
#   ray2     `--ray` over the first two GPUs: ray1's wall time over this must be >= 1.7
#
# A ray phase runs on a local cluster the script starts first (`ray start --head`, with the
# phase's GPUs) and stops after, as a user with a standing cluster would; its start is timed
# apart (the `cluster start` column). RAY_START=command instead lets `bench --ray` start and
# stop a cluster itself, inside the timed wall (about 5 s to start, 1 s to stop on an H200
# host when this script was written).
# Every phase starts with a cold cache of its own (no build of an earlier phase is reused)
# and runs JOBS programs at once per GPU (-j JOBS with one GPU, -j 2*JOBS with two).
# At the end a table: phase, GPUs, wall seconds, programs verified, and the ratios; then
# whether each phase verified the same programs with the same methods as inproc1.
#
# Usage: scripts/bench_ray.sh [inproc1|ray1|inproc2|ray2|report ...] (no phase: all, then
#        report). Settings (environment): PROGRAMS="name ..." (benchmark program names, as
#        --only takes them; default: 16 programs over every category), DIR=benchmarks,
#        JOBS=8, BUDGET=30 (--time-budget per program), OUT=build/bench-ray (results, one
#        folder per phase), CACHES=/tmp/bench-ray-caches, CUDAIFY and PYTHON (default:
#        .venv's, else cudaify and python3 on PATH), RAY_START=script|command, EXTRA="..."
#        (more bench flags for every phase).
# Needs the extra: pip install 'cudaify[ray]' (make install does it).
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=${OUT:-build/bench-ray}
DIR=${DIR:-benchmarks}
JOBS=${JOBS:-8}
BUDGET=${BUDGET:-30}
CACHES=${CACHES:-/tmp/bench-ray-caches}
EXTRA=${EXTRA:-}
RAY_START=${RAY_START:-script}
if [ -x .venv/bin/cudaify ]; then default_cudaify=$PWD/.venv/bin/cudaify; default_python=$PWD/.venv/bin/python
else default_cudaify=$(command -v cudaify || echo cudaify); default_python=python3; fi
CUDAIFY=${CUDAIFY:-$default_cudaify}
PYTHON=${PYTHON:-$default_python}
DEFAULT_PROGRAMS="saxpy_math black_scholes jacobi2d heat1d matmul matvec dot_norms byte_hist
gauss_seidel nbody_forces axpy_template pb_atax pb_jacobi_2d pb_gemm pb_gramschmidt pb_bicg"
PROGRAMS=${PROGRAMS:-$DEFAULT_PROGRAMS}
ONLY=$(echo $PROGRAMS | tr ' ' ',')
mkdir -p "$OUT" "$CACHES"
OUT=$(cd "$OUT" && pwd)

GPUS=$(nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null | wc -l || echo 0)
if [ "$GPUS" -lt 1 ]; then
    echo "bench_ray.sh: no NVIDIA GPU found: these numbers need one (two for the 2-GPU phases)" >&2
    exit 1
fi

now() { date +%s.%N; }

ray_cli() { "$PYTHON" -m ray.scripts.scripts "$@"; }

# one phase: NAME, the CUDA_VISIBLE_DEVICES to use, ray or inproc
phase() {
    local name=$1 visible=$2 how=$3
    local count; count=$(echo "$visible" | tr ',' '\n' | wc -l)
    if [ "$count" -gt "$GPUS" ]; then
        echo "== $name: skipped, it needs $count GPUs and this host has $GPUS" >&2
        rm -f "$OUT/$name.wall"
        return
    fi
    rm -rf "${CACHES:?}/$name" "$OUT/$name"
    local flags=() start=0
    if [ "$how" = ray ] && [ "$RAY_START" = script ]; then
        local began; began=$(now)
        CUDA_VISIBLE_DEVICES=$visible CUDAIFY_CACHE_DIR="$CACHES/$name" ray_cli start --head \
            --num-gpus "$count" --include-dashboard=false --disable-usage-stats \
            >"$OUT/$name.ray.log" 2>&1 || { echo "== $name: ray start failed: see $OUT/$name.ray.log" >&2; return 1; }
        start=$(awk -v a="$began" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
        flags=(--ray=auto)
    elif [ "$how" = ray ]; then
        flags=(--ray)
    fi
    echo "== $name: CUDA_VISIBLE_DEVICES=$visible, -j $((JOBS * count)) ${flags[*]}" >&2
    local began; began=$(now)
    local failed=0
    # shellcheck disable=SC2086
    CUDA_VISIBLE_DEVICES=$visible CUDAIFY_CACHE_DIR="$CACHES/$name" \
        "$CUDAIFY" bench "$DIR" --only "$ONLY" -j $((JOBS * count)) --time-budget "$BUDGET" \
        -o "$OUT/$name" $EXTRA "${flags[@]}" >"$OUT/$name.log" 2>&1 || failed=1
    local ended; ended=$(now)
    if [ "$how" = ray ] && [ "$RAY_START" = script ]; then ray_cli stop >>"$OUT/$name.ray.log" 2>&1 || true; fi
    [ "$failed" = 0 ] || { echo "== $name failed: see $OUT/$name.log" >&2; return 1; }
    awk -v a="$began" -v b="$ended" -v g="$count" -v s="$start" \
        'BEGIN { printf "%.1f %d %s\n", b - a, g, s }' >"$OUT/$name.wall"
}

report() {
    python3 - "$OUT" <<'EOF'
import csv, sys
from pathlib import Path

out = Path(sys.argv[1])
phases = ["inproc1", "ray1", "inproc2", "ray2"]
found = {}
for name in phases:
    wall, rows = out / f"{name}.wall", out / name / "results.csv"
    if wall.is_file() and rows.is_file():
        seconds, gpus, start = (wall.read_text().split() + ["0"])[:3]
        with rows.open() as handle:
            rows_read = list(csv.DictReader(handle))
        found[name] = (float(seconds), int(gpus), rows_read, float(start))
if not found:
    sys.exit("no phase has finished yet")
print("| phase | GPUs | wall (s) | cluster start (s) | verified | vs inproc1 | ray1 / this |")
print("|---|---|---|---|---|---|---|")
for name, (seconds, gpus, rows, start) in found.items():
    verified = sum(row["verified"] == "True" for row in rows)
    base = found.get("inproc1", (None,))[0]
    ray1 = found.get("ray1", (None,))[0]
    versus = f"{seconds / base:.2f}x" if base else "-"
    scaled = f"{ray1 / seconds:.2f}x" if ray1 else "-"
    started = f"{start:.1f}" if start else "-"
    print(f"| {name} | {gpus} | {seconds:.1f} | {started} | {verified}/{len(rows)} | {versus} | {scaled} |")

def verified(rows):
    return {(r["program"], r["strategy"]) for r in rows if r["verified"] == "True"}

def methods(rows):
    return {(r["program"], r["strategy"]): r["methods"] for r in rows}

# the same programs verified is the target; the winning methods may differ where the
# budget-bound search times variants within noise of each other (two in-process runs too)
if "inproc1" in found:
    expected = found["inproc1"][2]
    for name, (_, _, rows, _) in found.items():
        if name == "inproc1":
            continue
        lost = sorted(p for p, _ in verified(expected) - verified(rows))
        gained = sorted(p for p, _ in verified(rows) - verified(expected))
        same = "the same programs verified as inproc1" if not lost and not gained else (
            f"verified differently from inproc1: not {lost}, also {gained}")
        other = sorted(p for p, m in methods(rows).items() if methods(expected).get(p, m) != m)
        note = f" (other methods on {', '.join(p for p, _ in other)})" if other else ""
        print(f"{name}: {same}{note}")
if "inproc1" in found and "ray1" in found:
    ratio = found["ray1"][0] / found["inproc1"][0]
    print(f"ray1 within 10% of inproc1: {'yes' if ratio <= 1.10 else 'NO'} ({ratio:.2f}x)")
if "ray1" in found and "ray2" in found:
    speedup = found["ray1"][0] / found["ray2"][0]
    print(f"2 GPUs at least 1.7x faster than 1: {'yes' if speedup >= 1.7 else 'NO'} ({speedup:.2f}x)")
for name in found:
    md = (out / name / "results.md").read_text()
    if name.startswith("ray") and "## Time per node" in md:
        print(f"\n{name}, " + md[md.index("## Time per node") + 3 :].rstrip())
EOF
}

PHASES=${*:-inproc1 ray1 inproc2 ray2 report}
for p in $PHASES; do
    case $p in
        inproc1) phase inproc1 0 inproc ;;
        ray1) phase ray1 0 ray ;;
        inproc2) phase inproc2 0,1 inproc ;;
        ray2) phase ray2 0,1 ray ;;
        report) report ;;
        *) echo "unknown phase: $p" >&2; exit 2 ;;
    esac
done
