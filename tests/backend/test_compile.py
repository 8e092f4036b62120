from __future__ import annotations

import time
from pathlib import Path

from cudaify.backend.cache import Cache
from cudaify.backend.compile import (
    compile_cuda,
    compile_many,
    compile_reference,
    preprocessor_flags,
)
from cudaify.backend.runner import run_binary

from . import programs

HOST_ONLY_CU = """#include <cstdio>
#include <vector>
int main() {
    std::vector<double> v(10, 1.5);
    double s = 0; for (double x : v) s += x;
    std::printf("sum %g VALUE %d\\n", s, VALUE);
    return 0;
}
"""


def test_reference_builds_and_runs(cache: Cache) -> None:
    build = compile_reference(programs.HELLO, "c", cache=cache)
    assert build.ok and build.binary is not None and not build.cached
    assert run_binary(build.binary, timeout=10).stdout == "hello 42 3.25\n"


def test_compile_error_keeps_the_diagnostics_with_the_users_file_name(cache: Cache) -> None:
    build = compile_reference(programs.SYNTAX_ERROR, "c", cache=cache, name="prog.c")
    assert not build.ok and build.binary is None
    assert "prog.c:4:5: error" in build.diagnostics and "error" in build.diagnostics
    assert "/tmp" not in build.diagnostics.splitlines()[0]


def test_second_compile_is_a_cache_hit_and_costs_nothing(cache: Cache) -> None:
    first = compile_reference(programs.HELLO, "c", cache=cache)
    started = time.perf_counter()
    second = compile_reference(programs.HELLO, "c", cache=cache)
    assert time.perf_counter() - started < 0.5
    assert second.cached and second.ok and second.binary == first.binary
    assert not first.cached


def test_cache_key_changes_with_flags(cache: Cache) -> None:
    source = '#include <stdio.h>\nint main(void){ printf("%d\\n", N); return 0; }\n'
    three = compile_reference(source, "c", ["-DN=3"], cache=cache)
    four = compile_reference(source, "c", ["-D", "N=4"], cache=cache)
    assert three.binary != four.binary
    assert run_binary(three.binary, timeout=10).stdout == "3\n"  # type: ignore[arg-type]
    assert run_binary(four.binary, timeout=10).stdout == "4\n"  # type: ignore[arg-type]


def test_compile_errors_are_cached_too(cache: Cache) -> None:
    compile_reference(programs.SYNTAX_ERROR, "c", cache=cache)
    again = compile_reference(programs.SYNTAX_ERROR, "c", cache=cache)
    assert again.cached and not again.ok and "error" in again.diagnostics


def test_user_header_next_to_the_input_is_found(cache: Cache, tmp_path: Path) -> None:
    (tmp_path / "size.h").write_text("#define SIZE 17\n")
    source = '#include <stdio.h>\n#include "size.h"\nint main(void){ printf("%d\\n", SIZE); }\n'
    build = compile_reference(source, "c", cache=cache, source_dir=tmp_path)
    assert build.ok, build.diagnostics
    assert run_binary(build.binary, timeout=10).stdout == "17\n"  # type: ignore[arg-type]


def test_preprocessor_flags_keep_only_what_matters(tmp_path: Path) -> None:
    flags = ["-Iinc", "-O2", "-D", "X=1", "-std=c99", "-Wall", "-isystem", "/abs", "-UY"]
    kept = preprocessor_flags(flags, keep_std=True, base=tmp_path)
    assert kept == [
        "-I",
        str(tmp_path / "inc"),
        "-D",
        "X=1",
        "-std=c99",
        "-isystem",
        "/abs",
        "-U",
        "Y",
    ]
    assert "-std=c99" not in preprocessor_flags(flags, keep_std=False, base=tmp_path)


def test_nvcc_builds_host_code_with_user_defines_and_not_a_c_std(cache: Cache) -> None:
    build = compile_cuda(HOST_ONLY_CU, ["-DVALUE=5", "-std=c99"], "sm_80", cache=cache)
    assert build.ok, build.diagnostics
    assert "-std=c99" not in build.command and "-arch=sm_80" in build.command
    assert run_binary(build.binary, timeout=30).stdout == "sum 15 VALUE 5\n"  # type: ignore[arg-type]


def test_nvcc_compile_error_is_kept(cache: Cache) -> None:
    build = compile_cuda(
        "__global__ void k(float *x) { x[0] = y; }\nint main(){}\n", (), "sm_80", cache=cache
    )
    assert not build.ok
    assert "candidate.cu(1)" in build.diagnostics and 'identifier "y" is undefined' in (
        build.diagnostics
    )


def test_compile_many_returns_builds_in_order(cache: Cache) -> None:
    codes = [HOST_ONLY_CU, "int main( {", HOST_ONLY_CU.replace("sum", "total")]
    builds = compile_many(codes, ["-DVALUE=1"], "sm_80", cache=cache, workers=2)
    assert [b.ok for b in builds] == [True, False, True]
    assert run_binary(builds[2].binary, timeout=30).stdout.startswith("total 15")  # type: ignore[arg-type]


# -- a compiler that fails itself: said on the candidate, never cached ------------------


def _fake_nvcc(folder: Path, body: str) -> Path:
    """An `nvcc` first on PATH that counts its calls in `calls` and then runs `body`."""
    folder.mkdir(parents=True, exist_ok=True)
    fake = folder / "nvcc"
    fake.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = --version ]; then echo "fake nvcc"; exit 0; fi\n'
        f'echo x >> "{folder}/calls"\n'
        f"{body}\n"
    )
    fake.chmod(0o755)
    return folder


def _calls(folder: Path) -> int:
    calls = folder / "calls"
    return len(calls.read_text().splitlines()) if calls.exists() else 0


CUDA_OK = "int main() { return 0; }\n"


def test_a_compiler_killed_by_a_signal_is_said_and_not_cached(
    cache: Cache, tmp_path: Path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    from cudaify.backend.compile import COMPILER_CRASH
    from cudaify.backend.evaluate import COMPILER_CRASHED, compile_problem

    fake = _fake_nvcc(tmp_path / "bin", "kill -SEGV $$")
    monkeypatch.setenv("PATH", f"{fake}:{__import__('os').environ['PATH']}")
    first = compile_cuda(CUDA_OK, cache=cache, arch="sm_90")
    assert not first.ok and first.diagnostics.startswith(COMPILER_CRASH)
    assert "killed by signal 11" in first.diagnostics
    assert "out of memory" not in first.diagnostics
    second = compile_cuda(CUDA_OK, cache=cache, arch="sm_90")
    assert not second.cached and _calls(fake) == 2  # compiled again, not remembered
    problem = compile_problem(first.diagnostics)
    assert problem.kind == COMPILER_CRASHED and problem.line is None


def test_a_compiler_stage_that_runs_out_of_memory_is_said_as_such(
    cache: Cache, tmp_path: Path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    fake = _fake_nvcc(
        tmp_path / "bin",
        "echo \"nvcc error   : 'cicc' died due to signal 9 (Kill signal)\" >&2; exit 1",
    )
    monkeypatch.setenv("PATH", f"{fake}:{__import__('os').environ['PATH']}")
    build = compile_cuda(CUDA_OK, cache=cache, arch="sm_90")
    assert not build.ok and "'cicc' died due to signal 9" in build.diagnostics
    assert "(out of memory?)" in build.diagnostics
    compile_cuda(CUDA_OK, cache=cache, arch="sm_90")
    assert _calls(fake) == 2
    # the real nvcc afterwards builds the same source: nothing of the crash was kept
    monkeypatch.undo()
    assert compile_cuda(CUDA_OK, cache=cache, arch="sm_90").ok


def test_a_source_that_quotes_a_crash_message_is_an_ordinary_error(cache: Cache) -> None:
    source = 'int main() { const char *m = "out of memory: Segmentation fault"; return m }\n'
    first = compile_cuda(source, cache=cache, arch="sm_90")
    assert not first.ok and "error" in first.diagnostics
    assert not first.diagnostics.startswith("the compiler crashed")
    assert compile_cuda(source, cache=cache, arch="sm_90").cached  # a fact about the source


def _counting_compiler(monkeypatch, pause: float):  # type: ignore[no-untyped-def]
    """toolchain.run replaced for support objects: writes unit.o, counts the compiles and
    the most that ran at once."""
    import threading

    from cudaify.backend import compile as compile_module
    from cudaify.core.toolchain import Completed

    seen = {"calls": 0, "running": 0, "most": 0}
    guard = threading.Lock()

    def fake_run(argv, cwd=None, timeout=None, **_):  # type: ignore[no-untyped-def]
        with guard:
            seen["calls"] += 1
            seen["running"] += 1
            seen["most"] = max(seen["most"], seen["running"])
        time.sleep(pause)
        (Path(cwd) / "unit.o").write_bytes(b"object of " + argv[-3].encode())
        with guard:
            seen["running"] -= 1
        return Completed(argv=tuple(argv), returncode=0, stdout=b"", stderr=b"", seconds=pause)

    monkeypatch.setattr(compile_module.toolchain, "run", fake_run)
    monkeypatch.setattr(compile_module.toolchain, "find_tool", lambda name: name)
    monkeypatch.setattr(compile_module, "tool_version", lambda tool: f"{tool} (test)")
    return seen


def test_builds_asking_for_a_support_object_at_once_wait_for_one_compile(
    monkeypatch, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    from concurrent.futures import ThreadPoolExecutor

    from cudaify.backend.compile import Unit, compile_object

    seen = _counting_compiler(monkeypatch, pause=0.2)
    cache = Cache(tmp_path / "cache")
    unit = Unit("runtime.cu", "int cudaify_runtime_marker;\n")
    with ThreadPoolExecutor(max_workers=6) as pool:
        paths = list(
            pool.map(lambda _: compile_object(unit, ["nvcc", "-O3"], "nvcc", cache), range(6))
        )
    assert seen["calls"] == 1
    assert len(set(paths)) == 1 and paths[0].read_bytes() == b"object of runtime.cu"


def test_support_objects_not_cached_compile_side_by_side(monkeypatch, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from cudaify.backend.compile import Unit, compile_objects

    seen = _counting_compiler(monkeypatch, pause=0.3)
    cache = Cache(tmp_path / "cache")
    units = [Unit(f"unit{n}.cu", f"int marker{n};\n") for n in range(3)]
    paths = compile_objects(units, ["nvcc", "-O3"], "nvcc", cache)
    assert seen["calls"] == 3 and seen["most"] == 3
    assert [p.read_bytes() for p in paths] == [f"object of unit{n}.cu".encode() for n in range(3)]
    from cudaify.backend import compile as compile_module

    def no_pool(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("a thread pool for objects already cached")

    monkeypatch.setattr(compile_module, "ThreadPoolExecutor", no_pool)
    again = compile_objects(units, ["nvcc", "-O3"], "nvcc", cache)
    assert seen["calls"] == 3 and again == paths  # cached: no compile, no pool, every build


def test_prepared_objects_are_there_for_the_first_build(monkeypatch, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from cudaify.backend.compile import Unit, compile_objects, prepare_objects

    seen = _counting_compiler(monkeypatch, pause=0.2)
    cache = Cache(tmp_path / "cache")
    units = [Unit("a.cu", "int a;\n"), Unit("b.cu", "int b;\n")]
    prepare_objects(units, ["nvcc", "-O3"], "nvcc", cache)
    paths = compile_objects(units, ["nvcc", "-O3"], "nvcc", cache)  # waits for those compiles
    assert seen["calls"] == 2 and all(p.is_file() for p in paths)
