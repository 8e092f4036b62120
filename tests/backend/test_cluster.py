"""backend/cluster.py on a real Ray cluster started here (2 CPUs, shared by the module):
tasks and where they ran, errors raised as themselves, Ctrl-C cancelling remote work, a
worker killed during a bench losing no program, cache entries coming back to the caller,
and candidates verified on the cluster as they are in-process."""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from cudaify import bench
from cudaify.backend import cluster
from cudaify.backend.evaluate import Evaluator
from cudaify.core import Stage, Variant
from cudaify.core.config import Config
from cudaify.core.errors import InputError

ray = pytest.importorskip("ray", reason="ray is not installed (pip install 'cudaify[ray]')")

SCALE = """\
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

SHIFT = """\
#include <stdio.h>
void shift(int n, int *a, const int *b) {
    for (int i = 0; i < n; i++) a[i] = b[i] + 3;
}
int main(void) {
    static int a[2048], b[2048];
    for (int i = 0; i < 2048; i++) b[i] = i * 7 % 101;
    shift(2048, a, b);
    long sum = 0;
    for (int i = 0; i < 2048; i++) sum += a[i];
    printf("%ld\\n", sum);
    return 0;
}
"""


@pytest.fixture(scope="module")
def local_cluster(gpus_hidden):
    """One Ray cluster for the module (its start costs seconds), shut down after; no GPU
    here or in its workers (test_cluster_gpu.py has them). Functions of this module are
    sent to the workers by value: they cannot import a test module."""
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    ray.init(num_cpus=2, num_gpus=0, include_dashboard=False, log_to_driver=False)
    try:
        yield cluster.connect(None)
    finally:
        ray.shutdown()
        ray.cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


def fast(config_dir: Path) -> Config:
    """Rules only, one level deep, no time budget: a tiny program in a few seconds."""
    return Config(
        slm="off",
        strategy="rules",
        max_depth=1,
        time_budget=0,
        cache=False,
        cache_dir=str(config_dir),
    )


def raises_input_error(message: str) -> None:
    raise InputError(message)


class DiesOnce:
    """A bench task whose worker process is killed (SIGKILL, as the OOM killer or a lost
    node would) the first time it runs a program: a marker file in `folder` says it did."""

    def __init__(self, folder: Path):
        self.folder = folder

    def __call__(self, path: str, text: str, strategy: str, config: Config) -> bench.BenchRow:
        marker = self.folder / (Path(path).stem + ".killed")
        if not marker.exists():
            marker.write_text(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL)
        return bench.run_shipped(path, text, strategy, config)


def test_a_task_says_its_node_and_time(local_cluster):
    done = local_cluster.get(local_cluster.submit(math.factorial, 10))
    assert done.value == 3628800
    assert done.node == os.uname().nodename
    assert 0.0 <= done.seconds < 5.0
    assert local_cluster.cpus == 2 and local_cluster.gpus == 0 and local_cluster.nodes == 1
    assert local_cluster.gpu_share(4) == 0.0


def test_an_error_of_ours_comes_back_as_itself(local_cluster):
    with pytest.raises(InputError, match="no such program"):
        local_cluster.get(local_cluster.submit(raises_input_error, "no such program"))


def test_completed_hands_back_every_result_with_failures_as_values(local_cluster):
    refs = [local_cluster.submit(math.factorial, n) for n in (3, 4)]
    refs.append(local_cluster.submit(raises_input_error, "bad"))
    answers = dict(local_cluster.completed(refs))
    assert [answers[ref].value for ref in refs[:2]] == [6, 24]
    assert isinstance(answers[refs[2]], InputError)


def test_ctrl_c_cancels_the_remote_work(local_cluster):
    sleeper = local_cluster.submit(time.sleep, 60)
    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    began = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        list(local_cluster.completed([sleeper]))
    timer.cancel()
    with pytest.raises(ray.exceptions.TaskCancelledError):
        ray.get(sleeper, timeout=20)
    assert time.monotonic() - began < 1.0 + cluster.CANCEL_GRACE + 5.0


def test_a_killed_worker_loses_no_program(local_cluster, tmp_path):
    markers = tmp_path / "markers"
    markers.mkdir()
    programs = []
    for name, text in (("scale", SCALE), ("shift", SHIFT)):
        programs.append(tmp_path / f"{name}.c")
        programs[-1].write_text(text)
    config = fast(tmp_path / "cache")
    work = [(path, "rules", config) for path in programs]
    rows = bench.run_on_cluster(local_cluster, work, jobs=2, task=DiesOnce(markers))
    assert sorted(p.name for p in markers.iterdir()) == ["scale.killed", "shift.killed"]
    assert [row.program for row in rows] == ["scale", "shift"]
    for row in rows:
        assert row.stage == "compile", row.note
        assert row.methods != "-"
        assert row.node == os.uname().nodename


def test_bench_rows_equal_with_and_without_ray(local_cluster, tmp_path):
    path = tmp_path / "scale.c"
    path.write_text(SCALE)
    config = fast(tmp_path / "cache")
    alone = bench.run_bench([path], ["rules"], config)
    spread = bench.run_bench([path], ["rules"], config, cluster=local_cluster)
    keys = ("program", "category", "stage", "verified", "methods", "region_speedup")
    assert [[getattr(r, k) for k in keys] for r in spread] == [
        [getattr(r, k) for k in keys] for r in alone
    ]
    assert alone[0].stage == "compile" and alone[0].category == "elementwise"
    assert spread[0].node and not alone[0].node


def test_cache_entries_come_back_to_the_caller(local_cluster, tmp_path):
    from cudaify.pipeline import prepare

    source = tmp_path / "scale.c"
    source.write_text(SCALE)
    worker_side = fast(tmp_path / "worker-cache")
    program = prepare(str(source), worker_side)
    variant = offloaded(program, worker_side)
    job = cluster.Job(program, worker_side, False, [], None)
    done = local_cluster.get(local_cluster.submit(cluster.build_candidate, job, variant))
    answer = done.value
    assert answer.evaluation.stage == Stage.COMPILE
    kinds = {Path(entry.path).parts[0] for entry in answer.entries}
    assert "bin" in kinds
    caller = cluster.RecordingCache(tmp_path / "caller-cache")
    caller.add(answer.entries)
    # the caller's own build of the candidate is now a cache hit: nvcc does not run again
    build, _, _ = Evaluator(program, fast(caller.root), run_on_gpu=False).compile(variant)
    assert build.ok and build.cached


def test_recorded_entries_keep_their_bytes_and_mode(tmp_path):
    first = cluster.RecordingCache(tmp_path / "a")
    first.write_bytes("bin", "ab12", b"\x7fELF", executable=True)
    first.write_json("compile-notes", "ab12", {"diagnostics": ""})
    entries = first.entries(first.written)
    second = cluster.RecordingCache(tmp_path / "b")
    second.add(entries)
    copied = second.file("bin", "ab12")
    assert copied is not None and copied.read_bytes() == b"\x7fELF"
    assert os.access(copied, os.X_OK)
    assert second.read_json("compile-notes", "ab12") == {"diagnostics": ""}
    assert second.written == set()  # what was added is not what this side made


def test_remote_evaluator_screens_as_the_local_one(local_cluster, tmp_path):
    from cudaify.pipeline import prepare

    source = tmp_path / "shift.c"
    source.write_text(SHIFT)
    config = fast(tmp_path / "cache")
    program = prepare(str(source), config)
    variant = offloaded(program, config)
    local = Evaluator(program, config, run_on_gpu=False).screen(variant)
    remote_evaluator = cluster.RemoteEvaluator(local_cluster, program, config)
    remote_evaluator.prefetch([variant])
    remote = remote_evaluator.screen(variant)
    remote_evaluator.close()
    assert remote.stage == local.stage == Stage.COMPILE
    assert remote.problems == local.problems
    assert remote.ran_on_gpu is False
    assert remote.reference == local.reference  # the CPU profile travelled, not re-run


def test_close_stops_what_the_search_did_not_wait_for(local_cluster, tmp_path):
    """Candidates prefetched and never screened (a search that ended first) are cancelled by
    close; without a GPU a candidate's build task is also its screening task."""
    from cudaify.pipeline import Stages, prepare

    source = tmp_path / "shift.c"
    source.write_text(SHIFT)
    config = fast(tmp_path / "cache")
    program = prepare(str(source), config)
    stages = Stages(program, config)
    made = [stages.expand(Variant(code=program.source), m)[0] for m in ("offload", "schedule")]
    assert all(made)
    evaluator = cluster.RemoteEvaluator(local_cluster, program, config)
    evaluator.prefetch(made)
    assert evaluator.screen(made[0]).stage == Stage.COMPILE
    evaluator.close()
    evaluator.prefetch(made)  # closed: nothing more is started
    assert not evaluator._tasks


def offloaded(program, config: Config) -> Variant:
    """The program with its loop offloaded by the rule, as the search would make it."""
    from cudaify.pipeline import Stages

    child, reason = Stages(program, config).expand(Variant(code=program.source), "offload")
    assert child is not None, reason
    return child


WORKER_PATH = """
import sys
import ray
from cudaify.backend import cluster

joined = cluster.connect(cluster.LOCAL)
try:
    @ray.remote(num_cpus=0)
    def import_path():
        import sys
        return sys.path
    print("\\n".join(ray.get(import_path.remote())))
finally:
    joined.close()
"""


def test_a_driver_run_from_a_cudaify_checkout_does_not_hide_the_package_from_workers(tmp_path):
    """Ray puts the driver's working directory first on each worker's import path; from a
    source checkout, its `cudaify/` folder would be imported instead of the package (every
    task failed so on a GPU node set up from one). connect() starts Ray from the package's
    own folder instead."""
    checkout = tmp_path / "checkout"
    (checkout / "cudaify").mkdir(parents=True)
    (checkout / "cudaify" / "__init__.py").write_text("")
    script = tmp_path / "driver.py"
    script.write_text(WORKER_PATH)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    ran = subprocess.run(
        [sys.executable, str(script)],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert ran.returncode == 0, ran.stderr[-2000:]
    path = ran.stdout.splitlines()
    assert path and str(checkout) not in path
