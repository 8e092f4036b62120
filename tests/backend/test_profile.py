from __future__ import annotations

import pytest

from cudaify.backend.profile import parse_ncu_csv

# The shape of `ncu --csv --metrics ...`: the program's own output first, then one row per
# kernel launch and metric; numbers may carry thousands separators.
HEADER = (
    '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",'
    '"Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit",'
    '"Metric Value"'
)


def row(kernel: int, metric: str, value: str) -> str:
    launch = f'"{kernel}","1234","program","127.0.0.1","k{kernel}(float *)","1","7",'
    shape = '"(256, 1, 1)","(4096, 1, 1)","0","9.0","Command line profiler metrics",'
    return f'{launch}{shape}"{metric}","","{value}"'


DRAM = "dram__throughput.avg.pct_of_peak_sustained_elapsed"
TIME = "gpu__time_duration.sum"
OCCUPANCY = "sm__warps_active.avg.pct_of_peak_sustained_active"
THREADS = "smsp__thread_inst_executed_per_inst_executed.ratio"
REPORT = "\n".join(
    [
        "checksum 1.0",
        "==PROF== Disconnected from process 1234",
        HEADER,
        row(0, DRAM, "80.00"),
        row(0, TIME, "3,000"),
        row(0, OCCUPANCY, "50.00"),
        row(0, THREADS, "32"),
        row(1, DRAM, "20.00"),
        row(1, TIME, "1,000"),
        row(1, OCCUPANCY, "10.00"),
        row(1, THREADS, "16"),
    ]
)


def test_metrics_are_weighted_by_kernel_duration() -> None:
    found = dict(parse_ncu_csv(REPORT))
    assert found["kernel_seconds"] == pytest.approx(4e-6)
    assert found["kernels_profiled"] == 2
    assert found["dram_throughput_pct"] == pytest.approx(65.0)  # (80*3 + 20*1) / 4
    assert found["achieved_occupancy_pct"] == pytest.approx(40.0)
    assert found["warp_efficiency_pct"] == pytest.approx(87.5)  # (100*3 + 50*1) / 4


def test_a_report_without_kernels_is_empty() -> None:
    assert parse_ncu_csv("==PROF== No kernels were profiled.\n") == ()
