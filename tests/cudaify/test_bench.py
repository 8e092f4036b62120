"""`cudaify bench`: discovery, categories, reports and the strategy comparison's numbers."""

from __future__ import annotations

import csv
import dataclasses
import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from cudaify.backend.report import comparison, effective_speedup, geomean, markdown
from cudaify.bench import BenchRow, category_of, discover
from cudaify.cli import main

PARALLEL = """\
/* Name: scale
 * Category: elementwise
 */
#include <stdio.h>
void scale(int n, double *v) {
    for (int i = 0; i < n; i++) v[i] = 2.0 * v[i];
}
int main(void) {
    static double v[4096];
    for (int i = 0; i < 4096; i++) v[i] = i;
    scale(4096, v);
    printf("%.6e\\n", v[4095]);
    return 0;
}
"""

SEQUENTIAL = """\
#include <stdio.h>
int main(void) {
    long f = 1;
    for (int i = 1; i < 20; i++) f = f * i % 1000003;
    printf("%ld\\n", f);
    return 0;
}
"""


def row(strategy: str, verified: bool, speedup: float | None, program: str = "p") -> BenchRow:
    return BenchRow(
        program,
        "cat",
        strategy,
        "correct" if verified else "run",
        verified,
        "offload",
        1.0,
        0.5,
        0.1,
        speedup,
        speedup,
        None,
        2.0,
    )


def test_comparison_counts_unverified_programs_as_1x():
    rows = [
        row("mcgs", True, 16.0, "a"),
        row("mcgs", True, 4.0, "b"),
        row("mcgs", False, 99.0, "c"),
        row("rules", True, 0.5, "a"),
    ]
    assert effective_speedup(rows[2]) == 1.0
    assert geomean([16.0, 4.0, 1.0]) == 4.0
    text = comparison(rows)
    mcgs = next(line for line in text.splitlines() if line.startswith("| mcgs"))
    assert "| 3 | 67% | 67% | 4.00x | 7.00x | 2.0 |" in mcgs
    rules = next(line for line in text.splitlines() if line.startswith("| rules"))
    assert "| 1 | 100% | 0% | 0.50x | 0.50x |" in rules
    assert math.isnan(geomean([]))


def test_comparison_counts_model_steps_that_beat_rules():
    import dataclasses

    def modelled(speedup: float, program: str, steps: int = 1) -> BenchRow:
        return dataclasses.replace(row("mcgs", True, speedup, program), model_steps=steps)

    rows = [
        modelled(8.0, "a"),  # a model step, faster than rules' 4x: counted
        modelled(3.0, "b"),  # a model step, slower than rules' 4x
        modelled(2.0, "c", steps=0),  # faster than rules, but no model step
        dataclasses.replace(modelled(9.0, "d"), verified=False),  # not verified
        modelled(1.5, "e"),  # rules kept host code there: 1x
        row("rules", True, 4.0, "a"),
        row("rules", True, 4.0, "b"),
        row("rules", True, 1.0, "c"),
        row("rules", False, None, "e"),
    ]
    lines = comparison(rows).splitlines()
    assert lines[0].endswith("| with a model step | model step, faster than rules |")
    mcgs = next(line for line in lines if line.startswith("| mcgs"))
    assert mcgs.endswith("| 3 | 2 |")
    rules = next(line for line in lines if line.startswith("| rules"))
    assert rules.endswith("| 0 | - |")
    alone = comparison([modelled(8.0, "a")]).splitlines()[-1]
    assert alone.endswith("| 1 | - |")


def test_markdown_has_every_column():
    text = markdown([row("mcgs", True, 12.5)])
    header = text.splitlines()[0]
    for title in (
        "program",
        "category",
        "stage reached",
        "CPU time",
        "GPU region",
        "region speedup",
        "program speedup",
        "roofline",
        "search",
    ):
        assert title in header
    assert "| 12.5 |" in text


def test_bench_command_writes_reports(tmp_path):
    suite = tmp_path / "suite"
    (suite / "elementwise").mkdir(parents=True)
    (suite / "elementwise" / "scale.c").write_text(PARALLEL)
    (suite / "dependence").mkdir()
    (suite / "dependence" / "fact.c").write_text(SEQUENTIAL)
    assert [p.name for p in discover(suite)] == ["fact.c", "scale.c"]
    assert category_of(suite / "elementwise" / "scale.c") == "elementwise"
    assert category_of(suite / "dependence" / "fact.c") == "dependence"  # from the folder
    out = tmp_path / "results"
    result = CliRunner().invoke(main, ["bench", str(suite), "-o", str(out)])
    assert result.exit_code == 0, result.output + result.stderr
    rows = list(csv.DictReader((out / "results.csv").open()))
    stages = {r["program"]: r["stage"] for r in rows}
    assert stages["fact"] == "none"
    assert stages["scale"] in ("compile", "correct")  # "correct" where a GPU is present
    assert (out / "speedup.png").read_bytes()[:4] == b"\x89PNG"
    assert "| mcgs | 2 |" in (out / "results.md").read_text()


def test_wall_table_has_a_line_per_program_and_a_column_per_strategy(tmp_path):
    from cudaify.bench import wall_table, write_wall_csv

    rows = [
        dataclasses.replace(row("mcgs", True, 4.0, "a"), wall_seconds=12.25),
        dataclasses.replace(row("rules", True, 2.0, "a"), wall_seconds=3.0),
        dataclasses.replace(row("mcgs", False, None, "b"), wall_seconds=7.5),
    ]
    lines = wall_table(rows).splitlines()
    assert lines[0] == "| program | mcgs | rules |"
    assert lines[2] == "| a | 12.2 | 3.0 |"
    assert lines[3] == "| b | 7.5 | - |"
    assert lines[4] == "| total | 19.8 | 3.0 |"
    write_wall_csv(rows, tmp_path / "w.csv")
    assert list(csv.reader((tmp_path / "w.csv").open())) == [
        ["program", "mcgs", "rules"],
        ["a", "12.250", "3.000"],
        ["b", "7.500", ""],
    ]


def test_bench_options_reach_the_configuration_every_worker_gets(tmp_path, monkeypatch):
    from cudaify import bench

    seen = {}

    def fake_run_bench(programs, strategies, config, jobs=1, progress=None, keep=None):
        seen.update(config=config, strategies=strategies, jobs=jobs, keep=keep)
        return [
            dataclasses.replace(row(s, True, 2.0, p.stem), wall_seconds=1.5)
            for s in strategies
            for p in programs
        ]

    def fake_retime_rows(rows, programs, keep, config, runs, progress=None):
        seen.update(retimed=(keep, runs))
        return [dataclasses.replace(r, quiet_program_speedup=2.5) for r in rows]

    monkeypatch.setattr(bench, "run_bench", fake_run_bench)
    monkeypatch.setattr(bench, "retime_rows", fake_retime_rows)
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "scale.c").write_text(PARALLEL)
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    out = tmp_path / "out"
    args = ["bench", str(suite), "-o", str(out), "--strategies", "mcgs,rules,oneshot", "-j", "3"]
    args += ["--slm", "auto", "--model", str(model), "--gpu-layers", "99", "--max-slm-calls", "4"]
    args += ["--iterations", "7", "--seed", "11", "--slm-jobs", "1", "--runs", "3"]
    args += ["--rollout-depth", "0", "--retime", "4"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    # the written programs are kept in the output folder, and timed again there
    assert seen["keep"] == out / "programs" and seen["retimed"] == (out / "programs", 4)
    assert "program speedup, retimed" in result.stdout and "| 2.5 |" in result.stdout
    config = seen["config"]
    assert (config.model, config.gpu_layers, config.max_slm_calls) == (str(model), 99, 4)
    assert (config.iterations, config.seed, config.slm_jobs, config.runs) == (7, 11, 1, 3)
    assert config.rollout_depth == 0
    assert config.timing_session and not config.cache and seen["jobs"] == 3
    assert seen["strategies"] == ["mcgs", "rules", "oneshot"]
    # the wall-time table, on stdout and in the reports
    assert "| program | mcgs | rules | oneshot |" in result.stdout
    assert "| scale | 1.5 | 1.5 | 1.5 |" in result.stdout
    assert "## Wall time per program (s)" in (out / "results.md").read_text()
    assert (out / "wall_times.csv").read_text().splitlines()[1] == "scale,1.500,1.500,1.500"
    assert "wall_seconds" in (out / "results.csv").read_text().splitlines()[0]
    # each run its own reference timing, unless told to share one
    again = CliRunner().invoke(main, args)
    assert again.exit_code == 0 and seen["config"].timing_session != config.timing_session
    shared = CliRunner().invoke(main, [*args, "--timing-session", "h100-1"])
    assert shared.exit_code == 0 and seen["config"].timing_session == "h100-1"


def test_bench_refuses_unknown_and_model_only_strategies_up_front(tmp_path):
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "scale.c").write_text(PARALLEL)
    unknown = CliRunner().invoke(main, ["bench", str(suite), "--strategies", "mcgs,magic"])
    assert unknown.exit_code == 2 and "unknown strategy 'magic'" in unknown.output
    no_model = CliRunner().invoke(
        main, ["bench", str(suite), "--strategies", "cot", "--slm", "off"]
    )
    assert no_model.exit_code == 2 and "needs a language model" in no_model.output


def test_workers_get_the_configuration(tmp_path):
    """Run in worker processes: what they report comes from the configuration they got."""
    from cudaify.bench import run_bench
    from cudaify.core.config import Config

    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "fact.c").write_text(SEQUENTIAL)
    (suite / "scale.c").write_text(PARALLEL)
    config = Config(slm="off", cache=False, quiet=True, max_depth=1, strategy="mcgs")
    rows = run_bench(discover(suite), ["rules", "exhaustive"], config, jobs=2)
    assert [(r.strategy, r.program) for r in rows] == [
        ("rules", "fact"),
        ("rules", "scale"),
        ("exhaustive", "fact"),
        ("exhaustive", "scale"),
    ]
    scale = [r for r in rows if r.program == "scale"]
    # max_depth 1 reached the workers: one mapping method, nothing after it
    assert all(r.methods in ("offload", "schedule") for r in scale)
    assert all(r.wall_seconds >= r.search_seconds > 0 for r in scale)


def test_a_rows_note_puts_the_outcome_before_the_methods_that_did_not_apply():
    from cudaify.bench import note_of

    warnings = [
        "'scan' not applied: no scan loop outside main",
        "'wavefront' not applied: no 2-D nest with dependences",
        "the fastest verified GPU variant (scan) ran at 0.94x of the CPU; the output keeps "
        "the input as host code",
    ]
    note = note_of(warnings, limit=120)
    assert note.startswith("the fastest verified GPU variant (scan) ran at 0.94x")
    assert len(note) == 120 and "'scan' not applied" in note_of(warnings)


def test_a_comparison_is_submitted_program_by_program() -> None:
    """Rows come back strategy by strategy, but the work is started program by program, so
    that a run cut short holds every strategy of the programs it reached."""
    from cudaify.bench import submission_order
    from cudaify.core.config import Config

    config = Config()
    programs = [Path("a.c"), Path("b.c"), Path("c.c")]
    work = [(p, s, config) for s in ("mcgs", "greedy") for p in programs]
    started = [(work[i][0].name, work[i][1]) for i in submission_order(work)]
    assert started == [
        ("a.c", "mcgs"),
        ("a.c", "greedy"),
        ("b.c", "mcgs"),
        ("b.c", "greedy"),
        ("c.c", "mcgs"),
        ("c.c", "greedy"),
    ]


def _row_of_this_worker(item):
    """A stand-in for one bench job: which GPU and process it ran in."""
    import os
    import time

    from cudaify.bench import BenchRow

    time.sleep(0.2)  # keep the first worker busy, so that every worker gets work
    path, strategy, _config, _keep = item
    where = f"{os.getpid()}:{os.environ.get('CUDA_VISIBLE_DEVICES')}"
    return BenchRow(path.stem, "", strategy, "none", False, "-", *[None] * 6, 0.0, where)


def test_workers_are_spread_over_the_visible_gpus(monkeypatch):
    """Each worker process is pinned to one GPU, round robin, so every GPU of the machine
    gets work (and its own lock and timings)."""
    from cudaify import bench
    from cudaify.core.config import Config

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "4,6")
    monkeypatch.setattr(bench, "_run_one", _row_of_this_worker)
    programs = [Path(f"p{i}.c") for i in range(6)]
    rows = bench.run_bench(programs, ["rules"], Config(), jobs=2)
    placed = {tuple(row.note.split(":")) for row in rows}
    gpus_by_worker: dict[str, set[str]] = {}
    for pid, gpu in placed:
        gpus_by_worker.setdefault(pid, set()).add(gpu)
    assert all(len(g) == 1 for g in gpus_by_worker.values())  # a worker stays on its GPU
    assert set().union(*gpus_by_worker.values()) == {"4", "6"}


def test_one_visible_gpu_leaves_workers_unpinned(monkeypatch):
    from cudaify import bench

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2")
    assert bench.worker_gpus() == ["2"]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert bench.worker_gpus() == []


def test_the_readme_table_has_the_speedups_the_roofline_and_the_bound(tmp_path):
    import dataclasses as dc
    import importlib.util

    from cudaify.backend.report import readme_table, write_csv

    placed = dc.replace(
        row("mcgs", True, 12.5, "saxpy"),
        roofline_percent=81.4,
        bound="memory",
        kernel="saxpy_kernel: 81% of the memory roof (2.71 TB/s, fp32), 1 launch, 5 ms",
    )
    failed = dc.replace(row("mcgs", False, 3.0, "lcs"), roofline_percent=5.0, bound="memory")
    text = readme_table([placed, failed])
    header = text.splitlines()[0]
    for title in ("region speedup", "whole-program speedup", "roofline %", "bound"):
        assert title in header
    assert "| saxpy | cat | offload | 12.50x | 12.50x | 81% | memory | saxpy_kernel: 81%" in text
    assert "| lcs | cat | offload | - | - | - | - | - |" in text  # not verified: no figures
    # the script reads bench's results.csv back and writes the same table
    write_csv([placed, failed], tmp_path / "results.csv")
    spec = importlib.util.spec_from_file_location("roofline_table", "scripts/roofline_table.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert script.main([str(tmp_path), "--cache", str(tmp_path / "none")]) == 0
    written = (tmp_path / "roofline.md").read_text()
    assert readme_table([placed, failed]) in written
    assert "- memory-bound: 1 of 1 at or above 70%" in written
    # the geometric means: a program kept as host code counts 1x, by both readings
    assert "- whole program: geometric mean 3.54x over the 2" in written
    retimed = dc.replace(placed, quiet_program_speedup=0.81)
    write_csv([retimed, failed], tmp_path / "results.csv")
    assert script.main([str(tmp_path), "--cache", str(tmp_path / "none")]) == 0
    written = (tmp_path / "roofline.md").read_text()
    assert "| 12.50x | 0.81x | 81% |" in written
    assert (
        "- whole program, retimed: geometric mean 0.90x over the 2 (1 retimed, 1x for the "
        "others), 1 of them slower than gcc -O3"
    ) in written


def test_a_row_counts_the_model_in_the_written_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """run_one reads from the trace the model-applied steps of the written path, the
    model's seconds and its edits."""
    from types import SimpleNamespace

    from cudaify import bench, pipeline
    from cudaify.core.config import Config

    steps = [
        {"method": "offload", "applied_by": "rule", "stage": "correct"},
        {"method": "coalesce", "applied_by": "slm", "stage": "correct"},
    ]

    def edge(how: str, child: str | None, dead: str = "") -> dict[str, object]:
        return {"method": "coalesce", "how": how, "child": child, "dead": dead}

    graph = [  # the model answered three times: one verified, one compiled, one refused
        {"key": "s", "stage": "input", "edges": [edge("rule", "r"), edge("slm", "v")]},
        {"key": "r", "stage": "correct", "edges": [edge("slm", "c"), edge("slm", None, "x")]},
        {"key": "v", "stage": "correct", "edges": []},
        {"key": "c", "stage": "compile", "edges": []},
    ]
    search = {"seconds": 9.0, "slm_calls": 3, "graph": graph}
    trace = {"chosen": steps, "time": {"model": 4.25}, "search": search}
    done = SimpleNamespace(
        trace=trace,
        verified=True,
        offloaded=True,
        text="",
        methods=("offload", "coalesce"),
        region_speedup=3.0,
        warnings=(),
    )
    monkeypatch.setattr(pipeline, "compile_file", lambda *args, **kwargs: done)
    monkeypatch.setattr(pipeline, "written_roofline", lambda *args, **kwargs: None)
    source = tmp_path / "p.c"
    source.write_text(SEQUENTIAL)
    made = bench.run_one(source, "mcgs", Config(slm="off"))
    assert (made.model_steps, made.model_seconds, made.slm_calls) == (1, 4.25, 3)
    assert (made.model_compiled, made.model_verified) == (2, 1)
    line = next(x for x in comparison([made]).splitlines() if x.startswith("| mcgs"))
    assert "| 1 / 2 | 1 | - |" in line
    assert made.methods == "offload+coalesce" and made.verified


def test_a_written_variant_without_kernel_times_gets_them_after_the_compile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A search that used its whole budget writes its variant without the kernel timing:
    the bench measures the written program's kernels after the compile (the program and
    its text), and the row says so; a row whose compile timed them keeps its own."""
    from types import SimpleNamespace

    from cudaify import bench, pipeline
    from cudaify.core import KernelRoofline, Timing
    from cudaify.core.config import Config

    kernel = KernelRoofline(
        name="saxpy_kernel",
        launches=2,
        seconds=0.004,
        bytes=9.6e9,
        flops=8e8,
        precision="fp32",
        exact=True,
        bytes_per_second=2.4e12,
        flops_per_second=2e11,
        intensity=1 / 12,
        roof=2.4e12,
        percent=81.6,
        bound="memory",
    )
    measured = Timing(kernels=(kernel,), roofline_percent=81.6, bound="memory")
    asked: list[tuple[str, str]] = []

    def written_roofline(source: str, text: str, config: Config) -> Timing:
        asked.append((source, text))
        return measured

    monkeypatch.setattr(pipeline, "written_roofline", written_roofline)
    source = tmp_path / "saxpy.c"
    source.write_text(SEQUENTIAL)
    for kernels, expected in (([], 81.6), ([dataclasses.asdict(kernel)], 12.0)):
        candidate = {"kernels": kernels, "roofline_percent": 12.0} if kernels else {}
        trace = {"chosen": [], "timing": {"candidate": candidate, "roofline_percent": 12.0}}
        done = SimpleNamespace(
            trace=trace,
            verified=True,
            offloaded=True,
            text="// the written program",
            methods=("offload",),
            region_speedup=3.0,
            warnings=("the time budget (30 s) ran out",),
        )
        monkeypatch.setattr(pipeline, "compile_file", lambda *args, d=done, **kwargs: d)
        made = bench.run_one(source, "mcgs", Config(slm="off"))
        assert made.roofline_percent == expected
        assert made.kernel.startswith("saxpy_kernel: 82% of the memory roof")
    assert asked == [(str(source), "// the written program")]  # the first row only
    first = bench.run_one  # the note of a measured row says where its roofline came from
    monkeypatch.setattr(
        pipeline,
        "compile_file",
        lambda *args, **kwargs: SimpleNamespace(
            trace={"chosen": [], "timing": {}},
            verified=True,
            offloaded=True,
            text="x",
            methods=("offload",),
            region_speedup=3.0,
            warnings=(),
        ),
    )
    assert first(source, "mcgs", Config(slm="off")).note.startswith(
        "roofline measured after the compile"
    )


SLEEPS = """\
#include <stdio.h>
#include <time.h>
int main(void) {
    struct timespec pause = {0, %d * 1000000L};
    nanosleep(&pause, NULL);
    printf("%s\\n");
    return %d;
}
"""


def sleeping(folder: Path, name: str, millis: int, prints: str = "6.000000e+00", code: int = 0):
    """A program that sleeps `millis` ms, prints `prints` and exits with `code`; its source
    (a .c, or a .cu that nvcc builds as host code: it runs without a GPU)."""
    source = folder / name
    source.write_text(SLEEPS % (millis, prints, code))
    return source


def built(source: Path) -> Path:
    from cudaify.backend.compile import compile_reference

    build = compile_reference(source.read_text(), "c", name=source.name)
    assert build.ok and build.binary is not None, build.diagnostics
    return build.binary


def test_in_turns_times_each_binary_in_turns_and_says_why_it_cannot(tmp_path: Path) -> None:
    """`--retime`'s runs (and the compile's check of a close call): `runs` counted runs
    of each binary in turns after one uncounted run of each, the first outputs returned;
    a run that ends with another exit code than the first binary's, or crashes, gives the
    reason instead of times."""
    from cudaify.backend.runner import in_turns

    slow, fast = built(sleeping(tmp_path, "slow.c", 60)), built(sleeping(tmp_path, "fast.c", 5))
    timed = in_turns(slow, fast, 3)
    assert not isinstance(timed, str), timed
    first, second, outputs = timed
    assert len(first) == len(second) == 3
    assert min(first) >= 0.06 and max(second) < min(first)
    assert outputs == ("6.000000e+00\n", "6.000000e+00\n")
    cold = in_turns(slow, fast, 2, warm=False)  # binaries that just ran: every run counts
    assert not isinstance(cold, str) and len(cold[0]) == len(cold[1]) == 2
    failing = built(sleeping(tmp_path, "failing.c", 1, code=3))
    why = in_turns(slow, failing, 2)
    assert isinstance(why, str) and "the CUDA program" in why and "exit code 3" in why
    crashing = tmp_path / "crash.c"
    crashing.write_text("#include <signal.h>\nint main(void) { raise(SIGSEGV); return 0; }\n")
    why = in_turns(built(crashing), fast, 2)
    assert isinstance(why, str) and why.startswith("the reference: ") and "SIGSEGV" in why


def test_turns_end_by_the_deadline_they_are_given(tmp_path: Path) -> None:
    """A close call's turns take `left`, the seconds to the compile's deadline: no run
    starts once none are left, and a run is cut where they end (a 30 s compile's turns
    had run it to 32.5 s)."""
    import time

    from cudaify.backend.runner import in_turns

    slow, fast = built(sleeping(tmp_path, "slow.c", 400)), built(sleeping(tmp_path, "fast.c", 5))
    assert in_turns(slow, fast, 2, left=lambda: 0.0) == "no time left before the deadline"
    end = time.monotonic() + 0.15
    began = time.monotonic()
    why = in_turns(slow, fast, 2, warm=False, left=lambda: end - time.monotonic())
    assert isinstance(why, str) and why.startswith("the reference: "), why
    assert time.monotonic() - began < 0.35  # the 0.4 s run was cut at the deadline
    unlimited = in_turns(fast, fast, 1, warm=False, left=lambda: None)
    assert not isinstance(unlimited, str) and len(unlimited[0]) == 1


def test_retime_gives_the_rows_medians_and_keeps_a_reading_it_cannot_repeat(
    tmp_path: Path,
) -> None:
    """After the compiles, each kept program (OUTPUT/programs/STRATEGY/NAME.cu) is built
    by nvcc and timed again against gcc -O3's build of its input: the row gets both
    medians and their ratio; a program whose output differs from the reference's, or one
    not kept, keeps the compile's reading (the first says why in its note)."""
    from cudaify import bench
    from cudaify.core.config import Config

    programs, keep = tmp_path / "programs", tmp_path / "out" / "programs"
    programs.mkdir()
    inputs = [sleeping(programs, f"{name}.c", 80) for name in ("good", "wrong", "unkept")]
    (keep / "mcgs").mkdir(parents=True)
    sleeping(keep / "mcgs", "good.cu", 20)
    sleeping(keep / "mcgs", "wrong.cu", 20, prints="7.000000e+00")
    rows = [
        dataclasses.replace(row("mcgs", True, 1.5, program=path.stem), note="n") for path in inputs
    ]
    seen: list[str] = []
    done = bench.retime_rows(
        rows, inputs, keep, Config(slm="off"), 3, lambda r: seen.append(r.program)
    )
    good, wrong, unkept = done
    assert good.quiet_cpu_seconds is not None and good.quiet_gpu_seconds is not None
    assert good.quiet_cpu_seconds >= 0.08 and good.quiet_gpu_seconds < good.quiet_cpu_seconds
    assert good.quiet_program_speedup == pytest.approx(
        good.quiet_cpu_seconds / good.quiet_gpu_seconds
    )
    assert good.program_speedup == 1.5  # the compile's reading stays beside it
    assert wrong.quiet_program_speedup is None
    assert wrong.note.startswith("not retimed: its output differs from gcc -O3's")
    assert unkept == rows[2]
    assert seen == ["good", "wrong"]
    table = markdown(done)
    assert "program speedup, retimed" in table and "| - |" in table
    assert "retimed" not in markdown(rows)


def test_bench_keeps_each_verified_program_it_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """run_one keeps a verified program it wrote as KEEP/STRATEGY/NAME.cu (what --retime
    times, and what a user reads); an unverified one is not kept. Every compile's trace is
    kept beside it, verified or not."""
    from types import SimpleNamespace

    from cudaify import bench, pipeline
    from cudaify.core.config import Config

    source = tmp_path / "scale.c"
    source.write_text(PARALLEL)
    keep = tmp_path / "programs"
    timed = {"name": "scale_kernel", "launches": 1, "seconds": 0.001}  # no roofline run after
    for verified in (False, True):
        done = SimpleNamespace(
            trace={
                "chosen": [],
                "timing": {"candidate": {"kernels": [timed]}},
                "verified": verified,
            },
            verified=verified,
            offloaded=True,
            text=f"// written, verified={verified}",
            methods=("offload",),
            region_speedup=3.0,
            warnings=(),
        )
        monkeypatch.setattr(pipeline, "compile_file", lambda *args, d=done, **kwargs: d)
        bench.run_one(source, "rules", Config(slm="off"), keep)
        kept = keep / "rules" / "scale.cu"
        assert kept.is_file() == verified
        trace = json.loads((keep / "rules" / "scale.trace.json").read_text())
        assert trace["verified"] == verified and trace["timing"]["candidate"]["kernels"] == [timed]
    assert kept.read_text() == "// written, verified=True"


def test_retime_is_refused_with_a_cluster(tmp_path: Path) -> None:
    folder = tmp_path / "b"
    folder.mkdir()
    (folder / "p.c").write_text(PARALLEL)
    result = CliRunner().invoke(
        main, ["bench", str(folder), "--retime", "3", "--ray", "-o", str(tmp_path / "o")]
    )
    assert result.exit_code == 2 and "--retime" in result.output, result.output
