"""Shared pytest settings: golden-file updates and loud skipping of GPU tests."""

from __future__ import annotations

import shutil

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden", action="store_true", help="rewrite golden outputs for review in the diff"
    )


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Every test session gets its own cache: a result cached by an earlier run of a
    broken build must never make a test pass."""
    import os

    os.environ["CUDAIFY_CACHE_DIR"] = str(tmp_path_factory.mktemp("cudaify-cache"))
    # A model installed on this machine must not turn every compile in the suite into
    # minutes of CPU inference; tests that use the SLM say so (--slm on, --replay).
    os.environ["CUDAIFY_SLM"] = "off"
    # Results must not depend on how loaded the machine is: no time budget (default 30 s)
    # unless a test sets one (tests/cli/test_time_budget.py, tests/cudaify/test_budget.py).
    os.environ["CUDAIFY_TIME_BUDGET"] = "0"
    # Nor on what earlier runs taught (a compile on a GPU, or one faked, records edge
    # statistics unless it is told not to): settings read from the environment learn
    # nothing, and `_private_user_data` keeps what a test's own Config(...) records.
    os.environ["CUDAIFY_LEARN_STATS"] = "0"
    from cudaify.transforms.slm.models import MODEL_DIR_ENV, model_dir

    # the user data folder is a test's own (below); the installed models stay where they are
    os.environ.setdefault(MODEL_DIR_ENV, str(model_dir()))


@pytest.fixture(autouse=True)
def _private_user_data(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each test starts with an empty user data folder: it neither reads this machine's
    learned graph and edge statistics nor leaves its own to the next test."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("user-data")))


@pytest.fixture(scope="module")
def gpus_hidden():
    """No GPU for this process, and for the processes it starts (a Ray cluster's workers),
    for a module whose results must be compile-only on any machine, as on CI."""
    import os

    from cudaify.backend import gpu

    before = os.environ.get("CUDA_VISIBLE_DEVICES")
    os.environ["CUDA_VISIBLE_DEVICES"] = ""  # the CUDA runtime and cudaify alike: no GPU
    gpu.forget_detected()
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("CUDA_VISIBLE_DEVICES", None)
        else:
            os.environ["CUDA_VISIBLE_DEVICES"] = before
        gpu.forget_detected()


def _gpu_present() -> bool:
    try:
        from cudaify.backend.gpu import gpu_available
    except ImportError:
        return shutil.which("nvidia-smi") is not None
    return gpu_available()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    gpu_tests = [item for item in items if "gpu" in item.keywords]
    if not gpu_tests or _gpu_present():
        return
    skip = pytest.mark.skip(reason="no NVIDIA GPU found: GPU test NOT run")
    for item in gpu_tests:
        item.add_marker(skip)


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:  # type: ignore[no-untyped-def]
    skipped = [
        report
        for report in terminalreporter.stats.get("skipped", [])
        if "GPU test NOT run" in str(report.longrepr)
    ]
    if skipped:
        terminalreporter.write_sep(
            "!", f"{len(skipped)} GPU tests were NOT run: no NVIDIA GPU on this machine", red=True
        )
