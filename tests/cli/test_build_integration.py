"""What Makefiles rely on: dependency files, the result cache, `cudaify check`."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from cudaify.cli import main

HEADER = "#define SCALE 3.0f\n"
PROGRAM = """\
#include <stdio.h>
#include "scale.h"

void scale(int n, float *v) {
    for (int i = 0; i < n; i++)
        v[i] = v[i] * SCALE;
}

int main(void) {
    float v[64];
    for (int i = 0; i < 64; i++) v[i] = (float)i;
    scale(64, v);
    printf("%f %f\\n", v[1], v[63]);
    return 0;
}
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "scale.h").write_text(HEADER)
    (tmp_path / "prog.c").write_text(PROGRAM)
    return tmp_path


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


def test_dependency_file_lists_input_and_headers(project):
    out = project / "prog.cu"
    result = invoke(str(project / "prog.c"), "-o", str(out), "-MD")
    assert result.exit_code == 0, result.stderr
    rule = (project / "prog.d").read_text()
    target, _, deps = rule.partition(":")
    assert target == str(out)
    assert str(project / "prog.c") in deps and str(project / "scale.h") in deps
    assert "/stdio.h" in deps
    assert f"\n{project / 'scale.h'}:\n" in rule  # an empty rule per header, as with -MP


def test_unchanged_input_is_a_cache_hit_and_a_header_edit_is_not(project):
    out = project / "prog.cu"
    first = invoke(str(project / "prog.c"), "-o", str(out))
    assert first.exit_code == 0 and "from the result cache" not in first.stderr
    out.unlink()
    started = time.perf_counter()
    second = invoke(str(project / "prog.c"), "-o", str(out))
    assert time.perf_counter() - started < 1.0
    assert "from the result cache" in second.stderr and out.exists()
    (project / "scale.h").write_text("#define SCALE 4.0f\n")
    third = invoke(str(project / "prog.c"), "-o", str(out))
    assert "from the result cache" not in third.stderr
    assert "SCALE" in out.read_text()
    fourth = invoke(str(project / "prog.c"), "-o", str(out), "--no-cache")
    assert "from the result cache" not in fourth.stderr


def test_check_accepts_a_good_output_and_rejects_a_broken_one(project):
    out = project / "prog.cu"
    assert invoke(str(project / "prog.c"), "-o", str(out)).exit_code == 0
    good = invoke("check", str(project / "prog.c"), str(out))
    assert good.exit_code == 0, good.output
    assert "stage reached: compile" in good.output and "nothing was run" in good.output
    assert invoke("check", str(project / "prog.c"), str(out), "--strict").exit_code == 3
    broken = project / "broken.cu"
    broken.write_text(out.read_text().replace("__global__ void", "__global__ int", 1))
    bad = invoke("check", str(project / "prog.c"), str(broken))
    assert bad.exit_code == 3 and "compile" in bad.output


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_makefile_pattern_rule_rebuilds_only_when_needed(project):
    import os
    import subprocess
    import sys

    cudaify = Path(sys.executable).with_name("cudaify")
    (project / "Makefile").write_text(
        f"CUDAIFY := {cudaify}\n%.cu: %.c\n\t$(CUDAIFY) $< -o $@ -MD -q\n-include prog.d\n"
    )
    env = {**os.environ}

    def make() -> str:
        done = subprocess.run(
            ["make", "-C", str(project), "prog.cu"], capture_output=True, text=True, env=env
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    make()
    assert (project / "prog.cu").exists()
    assert "is up to date" in make()
    time.sleep(0.01)
    (project / "scale.h").write_text("#define SCALE 5.0f\n")
    os.utime(project / "scale.h")
    rebuilt = make()
    assert "cudaify" in rebuilt and "up to date" not in rebuilt
