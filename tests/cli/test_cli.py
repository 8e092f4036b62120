"""The command line as a user meets it: bad inputs, exit codes, output files."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from cudaify import __version__
from cudaify.cli import main

SAXPY = """\
#include <stdio.h>
#include <stdlib.h>

void saxpy(int n, float a, const float *x, float *y) {
    for (int i = 0; i < n; i++)
        y[i] = a * x[i] + y[i];
}

int main(void) {
    int n = 1000;
    float *x = (float *)malloc(n * sizeof(float));
    float *y = (float *)malloc(n * sizeof(float));
    for (int i = 0; i < n; i++) { x[i] = i * 0.5f; y[i] = 1.0f; }
    saxpy(n, 2.0f, x, y);
    double s = 0;
    for (int i = 0; i < n; i++) s += y[i];
    printf("%.6e\\n", s);
    free(x); free(y);
    return 0;
}
"""

SEQUENTIAL_ONLY = """\
#include <stdio.h>
int main(void) {
    int f[40];
    f[0] = 0; f[1] = 1;
    for (int i = 2; i < 40; i++) f[i] = f[i - 1] + f[i - 2];
    printf("%d\\n", f[39]);
    return 0;
}
"""


def invoke(*args: str):
    runner = CliRunner()
    return runner.invoke(main, list(args), catch_exceptions=False)


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_version_and_help():
    result = invoke("--version")
    assert result.exit_code == 0 and __version__ in result.output
    result = invoke("--help")
    assert result.exit_code == 0
    assert "cudaify input.c -o out.cu" in result.output and "Exit codes" in result.output
    result = invoke("compile", "--help")
    assert "--trace" in result.output and "--strict" in result.output


@pytest.mark.parametrize(
    "make_input, message",
    [
        (lambda tmp: tmp / "missing.c", "no such file"),
        (lambda tmp: tmp, "is a directory"),
        (lambda tmp: write(tmp, "empty.c", "  \n"), "the file is empty"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, make_input, message):
    source = make_input(tmp_path)
    result = invoke(str(source), "-o", str(tmp_path / "out.cu"))
    assert result.exit_code == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and message in lines[0] and lines[0].startswith("cudaify: error:")
    assert not (tmp_path / "out.cu").exists()


def test_unreadable_input_exit_2(tmp_path, monkeypatch):
    source = write(tmp_path, "locked.c", SAXPY)
    real = Path.read_bytes

    def refuse(self):
        if self.name == "locked.c":
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", refuse)
    result = invoke(str(source), "-o", str(tmp_path / "out.cu"))
    assert result.exit_code == 2
    assert "cannot read (Permission denied)" in result.stderr


def test_syntax_error_gives_file_line_col_and_no_output(tmp_path):
    source = write(tmp_path, "broken.c", "int main(void) {\n    int x = 3\n    return x;\n}\n")
    out = tmp_path / "broken.cu"
    result = invoke(str(source), "-o", str(out))
    assert result.exit_code == 1
    assert f"{source}:2:14: error: expected ';'" in result.stderr
    assert not out.exists()


def test_implicit_function_declaration_is_an_error(tmp_path):
    source = write(tmp_path, "implicit.c", "int main(void) {\n    return twice(3);\n}\n")
    result = invoke(str(source), "-o", str(tmp_path / "o.cu"))
    assert result.exit_code == 1
    assert f"{source}:2:12: error: call to undeclared function 'twice'" in result.stderr


def test_output_in_missing_directory(tmp_path):
    source = write(tmp_path, "saxpy.c", SAXPY)
    result = invoke(str(source), "-o", str(tmp_path / "nowhere" / "out.cu"))
    assert result.exit_code == 2
    assert "does not exist" in result.stderr


def test_nothing_to_offload_writes_host_code_and_warns(tmp_path):
    source = write(tmp_path, "fib.c", SEQUENTIAL_ONLY)
    out = tmp_path / "fib.cu"
    result = invoke(str(source), "-o", str(out))
    assert result.exit_code == 0
    assert "warning: nothing could be offloaded" in result.stderr
    text = out.read_text()
    assert "Nothing was offloaded" in text and text.endswith(SEQUENTIAL_ONLY)
    strict = invoke(str(source), "-o", str(out), "--strict")
    assert strict.exit_code == 3


def test_interrupted_write_leaves_no_partial_file(tmp_path, monkeypatch):
    source = write(tmp_path, "saxpy.c", SAXPY)
    out = tmp_path / "saxpy.cu"
    real_replace = os.replace

    def interrupted(src, dst):  # Ctrl-C at the very moment the output is put in place
        if Path(dst) == out:
            raise KeyboardInterrupt
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", interrupted)
    result = CliRunner().invoke(main, [str(source), "-o", str(out)])
    assert result.exit_code == 130
    assert result.stderr.strip() == "cudaify: interrupted (SIGINT)"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["saxpy.c"]


def test_saxpy_offloads_and_traces(tmp_path):
    source = write(tmp_path, "saxpy.c", SAXPY)
    out, trace = tmp_path / "saxpy.cu", tmp_path / "trace.json"
    result = invoke(str(source), "-o", str(out), "--trace", str(trace))
    assert result.exit_code == 0, result.stderr
    code = out.read_text()
    assert "__global__" in code and "<<<" in code
    assert "void saxpy(int n, float a, const float *x, float *y)" in code
    # what precedes the offloaded function is unchanged, byte for byte; main's own loops
    # are a region too (schedule, tried first), its output lines stay
    assert SAXPY[: SAXPY.index("void saxpy")] in code
    assert code.rstrip().endswith('printf("%.6e\\n", s);\n    free(x); free(y);\n    return 0;\n}')
    data = json.loads(trace.read_text())
    assert data["input"] == str(source)
    assert [step["method"] for step in data["chosen"]] == ["schedule"]
    step = data["chosen"][0]
    assert step["applied_by"] == "rule" and step["before"] != step["after"]
    assert data["search"]["states"] >= 2


def test_quiet_prints_nothing_on_success(tmp_path):
    source = write(tmp_path, "saxpy.c", SAXPY)
    result = invoke(str(source), "-o", str(tmp_path / "s.cu"), "-q")
    assert result.exit_code == 0
    assert result.stderr == ""


def test_unknown_method_is_a_usage_error(tmp_path):
    source = write(tmp_path, "saxpy.c", SAXPY)
    result = invoke(str(source), "-o", str(tmp_path / "s.cu"), "--methods", "offload,teleport")
    assert result.exit_code == 2
    assert "unknown method 'teleport'" in result.stderr


def test_flags_come_from_a_compilation_database(tmp_path):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "scale.h").write_text("#define SCALE 2.0f\n")
    source = write(
        tmp_path, "m.c", '#include "scale.h"\n' + SAXPY.replace("2.0f, x, y", "SCALE, x, y")
    )
    database = [{"directory": str(tmp_path), "file": "m.c", "command": "cc -Iinc -O2 -c m.c"}]
    (tmp_path / "compile_commands.json").write_text(json.dumps(database))
    without = invoke(str(source), "-o", str(tmp_path / "a.cu"))
    assert without.exit_code == 1 and "'scale.h' file not found" in without.stderr
    result = invoke(str(source), "-o", str(tmp_path / "m.cu"), "-p", str(tmp_path))
    assert result.exit_code == 0, result.stderr
    assert "__global__" in (tmp_path / "m.cu").read_text()
