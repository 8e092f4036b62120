"""RemoteEvaluator on a GPU host: a candidate built on a CPU worker, then run, compared and
timed on a GPU worker, verifies as it does in-process; its finalist timing runs there too,
and the builds come back into the caller's cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from cudaify.backend import cluster
from cudaify.backend.evaluate import Evaluator
from cudaify.core import Stage
from cudaify.core.config import Config

from .test_cluster import SHIFT, offloaded

ray = pytest.importorskip("ray", reason="ray is not installed (pip install 'cudaify[ray]')")
pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def gpu_cluster():
    ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False)
    try:
        connected = cluster.connect(None)
        assert connected.gpus >= 1
        yield connected
    finally:
        ray.shutdown()


def test_a_candidate_verifies_on_a_gpu_worker_as_in_process(gpu_cluster, tmp_path):
    from cudaify.pipeline import prepare

    source = tmp_path / "shift.c"
    source.write_text(SHIFT)
    config = Config(slm="off", time_budget=0, cache=False, cache_dir=str(tmp_path / "cache"))
    program = prepare(str(source), config)
    variant = offloaded(program, config)
    local = Evaluator(program, config).screen(variant)
    remote = cluster.RemoteEvaluator(gpu_cluster, program, config)
    assert remote.run_on_gpu
    screened = remote.screen(variant)
    assert local.stage == screened.stage == Stage.CORRECT
    assert screened.ran_on_gpu and screened.timing.wall is not None
    timed = remote.remeasure(variant, screened)
    assert timed.verified and timed.timing.wall is not None
    remote.close()
    bins = list(Path(config.cache_dir).glob("bin/*/*"))
    assert bins, "the candidate's build came back into the caller's cache"
