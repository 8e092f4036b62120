"""Hardware feedback from Nsight Compute where it works: DRAM throughput, achieved
occupancy and warp execution efficiency of a candidate's kernels, weighted by each
kernel's duration, for the search to read from `Evaluation.hardware`.

`--clock-control none` keeps the GPU at its normal clocks, so the numbers describe the
run that was timed rather than a locked-clock replay. Only the first launches are
profiled: replaying every launch of a long time loop would cost minutes."""

from __future__ import annotations

import csv
import io
import os
import shutil
import tempfile
from collections import defaultdict
from pathlib import Path

from cudaify.core import toolchain

METRICS = {
    "dram__throughput.avg.pct_of_peak_sustained_elapsed": "dram_throughput_pct",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "achieved_occupancy_pct",
    "smsp__thread_inst_executed_per_inst_executed.ratio": "warp_efficiency_pct",
}
DURATION = "gpu__time_duration.sum"
LAUNCHES = 20


def find_ncu() -> str | None:
    found = shutil.which("ncu")
    for root in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if found is None and root and (Path(root) / "bin" / "ncu").is_file():
            found = str(Path(root) / "bin" / "ncu")
    return found


def parse_ncu_csv(text: str) -> tuple[tuple[str, float], ...]:
    """Duration-weighted means of the metrics over the profiled kernels, plus the summed
    kernel time in seconds. Empty when the report holds no kernel."""
    start = text.find('"ID"')
    if start < 0:
        return ()
    kernels: dict[str, dict[str, float]] = defaultdict(dict)
    for row in csv.DictReader(io.StringIO(text[start:])):
        name, value = row.get("Metric Name", ""), row.get("Metric Value", "")
        try:
            number = float(value.replace(",", ""))
        except ValueError:
            continue
        if name in METRICS or name == DURATION:
            kernels[row.get("ID", "")][name] = number
    measured = [k for k in kernels.values() if k.get(DURATION)]
    if not measured:
        return ()
    total = sum(k[DURATION] for k in measured)
    found = [("kernel_seconds", total * 1e-9), ("kernels_profiled", float(len(measured)))]
    for metric, label in METRICS.items():
        weighted = [(k[metric], k[DURATION]) for k in measured if metric in k]
        if weighted:
            mean = sum(v * d for v, d in weighted) / sum(d for _, d in weighted)
            # Threads per instruction, out of 32: report as a percentage like the others.
            found.append((label, mean * 100 / 32 if label == "warp_efficiency_pct" else mean))
    return tuple(found)


def hardware_counters(binary: Path, *, timeout: float) -> tuple[tuple[str, float], ...]:
    """Profile `binary`'s first kernel launches; empty where ncu is missing or refused
    (no permission for counters, no GPU)."""
    ncu = find_ncu()
    if ncu is None:
        return ()
    metrics = ",".join([*METRICS, DURATION])
    argv = [
        ncu,
        "--clock-control",
        "none",
        "--csv",
        "--metrics",
        metrics,
        "--launch-count",
        str(LAUNCHES),
        str(binary),
    ]
    with tempfile.TemporaryDirectory(prefix="cudaify-ncu-") as folder:
        environment = toolchain.clean_environment({"HOME": folder, "TMPDIR": folder})
        done = toolchain.run(argv, cwd=folder, timeout=timeout, env=environment)
    return parse_ncu_csv(done.text())
