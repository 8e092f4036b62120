"""Flags from compile_commands.json, read the way clang tools read it."""

from __future__ import annotations

import json

import pytest

from cudaify.core.errors import InputError
from cudaify.frontend.analyze import analyze
from cudaify.frontend.compdb import flags_for


def write_db(folder, entries) -> None:
    (folder / "compile_commands.json").write_text(json.dumps(entries))


def test_arguments_keep_parser_flags_and_drop_the_rest(tmp_path):
    build = tmp_path / "build"
    build.mkdir()
    source = tmp_path / "src" / "a.c"
    source.parent.mkdir()
    source.write_text("int main(void) { return 0; }\n")
    write_db(
        build,
        [
            {
                "directory": str(build),
                "file": "../src/a.c",
                "arguments": [
                    "/usr/bin/cc", "-c", "-O2", "-Wall", "-g", "-fPIC", "-Iinc", "-I", "../third",
                    "-isystem", "/opt/sys", "-DN=4", "-D", "M", "-UDEBUG", "-std=c99",
                    "-include", "cfg.h", "-MD", "-MF", "a.d", "-o", "a.o", "../src/a.c",
                ],
            }
        ],
    )  # fmt: skip
    assert flags_for(str(source), str(build)) == (
        "-I", str(build / "inc"), "-I", str(tmp_path / "third"), "-isystem", "/opt/sys",
        "-D", "N=4", "-D", "M", "-U", "DEBUG", "-std=c99", "-include", str(build / "cfg.h"),
    )  # fmt: skip


def test_command_string_is_shell_split_and_first_matching_entry_wins(tmp_path):
    source = tmp_path / "b.cpp"
    source.write_text("int main() { return 0; }\n")
    write_db(
        tmp_path,
        [
            {"directory": "/elsewhere", "file": "b.cpp", "command": "g++ -DWRONG -c b.cpp"},
            {
                "directory": str(tmp_path),
                "file": str(source),
                "command": "g++ -x c++ '-DMSG=\"hi there\"' -std=c++17 -c b.cpp -o b.o",
            },
            {"directory": str(tmp_path), "file": "b.cpp", "command": "g++ -DSECOND -c b.cpp"},
        ],
    )
    db = tmp_path / "compile_commands.json"
    assert flags_for(str(source), str(db)) == (
        "-x", "c++", "-D", 'MSG="hi there"', "-std=c++17",
    )  # fmt: skip


def test_missing_database_or_entry_is_an_input_error(tmp_path):
    source = tmp_path / "c.c"
    source.write_text("int x;\n")
    with pytest.raises(InputError, match="no such compilation database"):
        flags_for(str(source), str(tmp_path))
    write_db(tmp_path, [{"directory": str(tmp_path), "file": "other.c", "command": "cc other.c"}])
    with pytest.raises(InputError, match="no entry"):
        flags_for(str(source), str(tmp_path))
    (tmp_path / "compile_commands.json").write_text("[{")
    with pytest.raises(InputError, match=r"compile_commands.json:1:3"):
        flags_for(str(source), str(tmp_path))


def test_flags_from_the_database_reach_the_analysis(tmp_path):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "size.h").write_text("typedef float real;\n")
    source = tmp_path / "k.c"
    source.write_text(
        '#include "size.h"\nvoid scale(real *a) { for (int i = 0; i < LEN; i++) a[i] *= 2; }\n'
    )
    write_db(
        tmp_path,
        [{"directory": str(tmp_path), "file": "k.c", "command": "cc -Iinc -DLEN=64 -O3 -c k.c"}],
    )
    program = analyze(str(source), flags_for(str(source), str(tmp_path)))
    (loop,) = program.function("scale").loops
    assert loop.parallel and loop.upper == "LEN"
    (array,) = program.function("scale").arrays_for(loop)
    assert (array.name, array.elem_type, array.count) == ("a", "real", "64")
