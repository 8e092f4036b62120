"""C-to-C++ rewriting: each case program must print the same when compiled by gcc as C and
by nvcc as CUDA (host code only, so it runs without a GPU), plus exact-text checks."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cudaify.core import toolchain
from cudaify.core.errors import SourceError
from cudaify.frontend.cxx_compat import to_cxx
from cudaify.frontend.edits import Edit, OverlappingEdits, apply_edits, shifted_offset
from cudaify.frontend.parse import parse

CASES = Path(__file__).parent / "cxx_cases"
CASE_FILES = sorted(CASES.glob("*.c"))


def _compile_and_run(argv: list[str], binary: Path, cwd: Path) -> str:
    built = toolchain.run(argv, cwd=cwd, timeout=300)
    assert built.ok, f"{' '.join(argv)} failed:\n{built.errors()}"
    ran = toolchain.run([str(binary)], cwd=cwd, timeout=30)
    assert ran.returncode == 0, ran.errors()
    return ran.text()


def _gcc_output(source: Path, tmp_path: Path) -> str:
    binary = tmp_path / "reference"
    argv = [toolchain.find_tool("gcc"), "-O2", "-std=gnu11", "-o", str(binary), str(source)]
    return _compile_and_run(argv, binary, tmp_path)


def _nvcc_output(cuda_text: str, tmp_path: Path) -> str:
    if shutil.which("nvcc") is None and not Path("/usr/local/cuda/bin/nvcc").exists():
        pytest.skip("NO NVCC FOUND: the C++ rewrite cannot be compiled here")
    unit = tmp_path / "rewritten.cu"
    unit.write_text(cuda_text)
    binary = tmp_path / "rewritten"
    argv = [toolchain.find_tool("nvcc"), "-x", "cu", "-O2", "-o", str(binary), str(unit)]
    return _compile_and_run(argv, binary, tmp_path)


def _rewrite(tmp_path: Path, source: str, name: str = "input.c"):
    path = tmp_path / name
    path.write_text(source)
    return to_cxx(parse(str(path)))


@pytest.mark.parametrize("case", CASE_FILES, ids=[c.stem for c in CASE_FILES])
def test_rewritten_case_prints_what_gcc_prints(case: Path, tmp_path: Path) -> None:
    result = to_cxx(parse(str(case)))
    assert result.edits, "each case holds something C++ rejects"
    assert result.notes == ()
    expected = _gcc_output(case, tmp_path)
    assert expected.strip()
    assert _nvcc_output(result.text, tmp_path) == expected


@pytest.mark.parametrize("case", CASE_FILES, ids=[c.stem for c in CASE_FILES])
def test_bytes_outside_the_edits_are_unchanged(case: Path) -> None:
    source = case.read_bytes()
    result = to_cxx(parse(str(case)))
    output = result.text.encode()
    position_in, position_out = 0, 0
    for edit in result.edits:
        gap = edit.start - position_in
        assert output[position_out : position_out + gap] == source[position_in : edit.start]
        position_out += gap + len(edit.text.encode())
        position_in = edit.end
    assert output[position_out:] == source[position_in:]


def test_malloc_result_gets_the_declared_type(tmp_path: Path) -> None:
    source = (
        "#include <stdlib.h>\n"
        "typedef struct { int x; } S;\n"
        "int main(void) { S *s = malloc(sizeof *s); int *p; p = calloc(4, 4);\n"
        "  free(p); free(s); return 0; }\n"
    )
    result = _rewrite(tmp_path, source)
    assert "S *s = (S *)malloc(sizeof *s);" in result.text
    assert "p = (int *)calloc(4, 4);" in result.text
    assert "free(p); free(s);" in result.text  # T * -> void * needs nothing
    assert [e.text for e in result.edits] == ["(S *)malloc(sizeof *s)", "(int *)calloc(4, 4)"]


def test_void_pointer_conditional_is_cast_as_a_whole(tmp_path: Path) -> None:
    source = "#include <stdlib.h>\ndouble *pick(double *a, int k) { return k ? a : malloc(8); }\n"
    result = _rewrite(tmp_path, source)
    assert "return (double *)(k ? a : malloc(8));" in result.text


def test_vla_parameter_becomes_flat_pointer_with_linear_subscripts(tmp_path: Path) -> None:
    source = (
        "void f(int n, int m, float a[restrict n][m]) {\n"
        "  for (int i = 0; i < n; i++) a[i][m - 1] = a[i][0];\n"
        "}\n"
        "void g(void) { float b[2][3]; f(2, 3, b); }\n"
    )
    result = _rewrite(tmp_path, source)
    assert result.text == (
        "void f(int n, int m, float *__restrict__ a) {\n"
        "  for (int i = 0; i < n; i++) a[(i) * (m) + (m - 1)] = a[(i) * (m) + (0)];\n"
        "}\n"
        "void g(void) { float b[2][3]; f(2, 3, (float *)b); }\n"
    )


def test_row_pointer_arithmetic_on_a_vla_parameter_is_left_with_a_note(tmp_path: Path) -> None:
    source = "double f(int n, double a[n][n]) {\n  return (*(a + 1))[0] + a[0][1];\n}\n"
    result = _rewrite(tmp_path, source)
    assert "a[(0) * (n) + (1)]" in result.text
    assert result.notes == (
        f"{tmp_path / 'input.c'}:2:13: 'a' used as a pointer to rows left as is: "
        "no flat equivalent",
    )


def test_vla_parameter_whose_dimension_changes_is_left_with_a_note(tmp_path: Path) -> None:
    source = "double f(int n, int m, double a[n][m]) {\n  m = m - 1;\n  return a[1][m];\n}\n"
    result = _rewrite(tmp_path, source)
    assert result.text == source
    assert result.notes == (
        f"{tmp_path / 'input.c'}:1:24: C99 variable-length array parameter 'a' left as is: "
        "the body changes 'm', one of its dimensions",
    )


def test_designators_become_positional_and_in_order_ones_stay(tmp_path: Path) -> None:
    source = (
        "struct P { int x; int y; int z; };\n"
        "struct P a = {.z = 3, .x = 1};\n"
        "struct P b = {.x = 1, .z = 3};\n"
        "int c[4] = {[2] = 7};\n"
    )
    result = _rewrite(tmp_path, source)
    assert result.text == (
        "struct P { int x; int y; int z; };\n"
        "struct P a = {1, {}, 3};\n"
        "struct P b = {.x = 1, .z = 3};\n"
        "int c[4] = {{}, {}, 7};\n"
    )


def test_keywords_are_renamed_with_fresh_names(tmp_path: Path) -> None:
    source = "int class_;\nint f(int class, int new) { return class + new + class_; }\n"
    result = _rewrite(tmp_path, source)
    assert result.renamed == {"class": "class_1", "new": "new_"}
    assert result.text == (
        "int class_;\nint f(int class_1, int new_) { return class_1 + new_ + class_; }\n"
    )


def test_keywords_declared_in_the_users_headers_are_reported(tmp_path: Path) -> None:
    (tmp_path / "shapes.h").write_text("struct node { int new; };\nint class(int);\n")
    result = _rewrite(tmp_path, '#include "shapes.h"\nint f(struct node *n) { return n->new; }\n')
    header = tmp_path / "shapes.h"
    assert result.renamed == {}  # the main file keeps matching the header
    assert result.notes == (
        f"{header}:1:19: 'new' is a C++ keyword: rename it in this header",
        f"{header}:2:5: 'class' is a C++ keyword: rename it in this header",
    )


def test_bool_from_stdbool_is_not_renamed(tmp_path: Path) -> None:
    source = "#include <stdbool.h>\nbool f(void) { bool b = true; return b; }\n"
    result = _rewrite(tmp_path, source)
    assert result.renamed == {}
    assert result.text == source


def test_keywords_typedefed_by_headers_are_not_renamed(tmp_path: Path) -> None:
    source = "#include <stddef.h>\nint f(void) { wchar_t w = 65; int new = w; return new; }\n"
    result = _rewrite(tmp_path, source)
    assert result.renamed == {"new": "new_"}
    assert "wchar_t w = 65; int new_ = w; return new_;" in result.text


def test_null_needs_no_cast_but_a_void_pointer_zero_does(tmp_path: Path) -> None:
    source = "#include <stddef.h>\nint *f(int k) { int *p = NULL; return k ? p : (void *)0; }\n"
    result = _rewrite(tmp_path, source)
    assert "int *p = NULL; return k ? p : (int *)((void *)0);" in result.text


def test_types_nested_in_a_struct_are_qualified_outside_it(tmp_path: Path) -> None:
    source = (
        "struct A { struct B { int x; } b; enum { ON, OFF } state; };\n"
        "struct B make(void) { struct B v = {OFF}; return v; }\n"
    )
    result = _rewrite(tmp_path, source)
    assert result.text.splitlines()[1] == (
        "struct A::B make(void) { struct A::B v = {A::OFF}; return v; }"
    )


def test_compound_literal_used_as_an_object_becomes_a_named_variable(tmp_path: Path) -> None:
    source = (
        "struct P { int x, y; };\n"
        "int g(struct P *p);\n"
        "int f(int k) {\n"
        "  int *v = (int[]){k, 2};\n"
        "  struct P byvalue = (struct P){1, 2};\n"
        "  if (k) return g(&(struct P){k, 1});\n"
        "  while (g(&(struct P){k, 0})) k--;\n"
        "  return g(&(struct P){.y = 3, .x = k}) + v[0] + byvalue.x;\n"
        "}\n"
    )
    result = _rewrite(tmp_path, source)
    lines = result.text.splitlines()
    assert lines[3] == "  int compound_literal_[] = {k, 2}; int *v = compound_literal_;"
    assert lines[4] == "  struct P byvalue = (struct P){1, 2};"  # a value: fine in C++
    hoisted_if = "struct P compound_literal_1 = {k, 1}; return g(&compound_literal_1);"
    assert lines[5] == "  if (k) { " + hoisted_if + " }"
    assert lines[6] == "  while (g(&(struct P){k, 0})) k--;"  # evaluated at every test
    hoisted = "struct P compound_literal_3 = {k, 3}; return g(&compound_literal_3)"
    assert lines[7] == "  " + hoisted + " + v[0] + byvalue.x;"
    assert len(result.notes) == 1 and ":7:13: " in result.notes[0]


def test_values_for_nameless_types_are_cast_with_decltype(tmp_path: Path) -> None:
    source = (
        "#include <stdlib.h>\n"
        "struct S { enum { ON, OFF } state; struct { int w; } *box; };\n"
        "void f(struct S *s) { s->state = 1; s->box = malloc(4); enum { LO, HI } v = 1; }\n"
    )
    result = _rewrite(tmp_path, source)
    assert result.text.splitlines()[2] == (
        "void f(struct S *s) { s->state = (decltype(s->state))1; "
        "s->box = (decltype(s->box))malloc(4); enum { LO, HI } v = (decltype(v))1; }"
    )


def test_int_to_enum_gets_a_cast_but_enumerators_do_not(tmp_path: Path) -> None:
    source = "enum E { A, B };\nenum E f(int k) { enum E e = A; e = k; return e; }\n"
    result = _rewrite(tmp_path, source)
    assert result.text == (
        "enum E { A, B };\nenum E f(int k) { enum E e = A; e = (enum E)k; return e; }\n"
    )


def test_knr_definition_and_unprototyped_declaration(tmp_path: Path) -> None:
    source = "int f();\nint f(a, p) int a; char *p; { return a + *p; }\n"
    result = _rewrite(tmp_path, source)
    assert result.text == "int f(int a, char *p);\nint f(int a, char *p) { return a + *p; }\n"


def test_cast_inside_a_macro_expansion_is_left_with_a_note(tmp_path: Path) -> None:
    source = (
        "#include <stdlib.h>\n"
        "#define GRAB(p, n) p = malloc(n)\n"
        "void f(void) { int *q; GRAB(q, 4); free(q); }\n"
    )
    result = _rewrite(tmp_path, source)
    assert result.text == source
    assert len(result.notes) == 1
    assert result.notes[0].startswith(f"{tmp_path / 'input.c'}:3:24: ")
    assert "macro" in result.notes[0]


def test_cxx_input_is_returned_unchanged(tmp_path: Path) -> None:
    source = "#include <cstdlib>\nint main() { int *p = (int *)std::malloc(4); std::free(p); }\n"
    result = _rewrite(tmp_path, source, name="input.cpp")
    assert result.text == source
    assert result.edits == ()
    assert result.renamed == {}


def test_implicit_function_declaration_is_a_source_error(tmp_path: Path) -> None:
    path = tmp_path / "implicit.c"
    path.write_text("int main(void) {\n  return helper(3);\n}\n")
    with pytest.raises(SourceError) as error:
        parse(str(path))
    assert error.value.diagnostics[0].startswith(f"{path}:2:10: error:")
    assert "helper" in error.value.diagnostics[0]


def test_apply_edits_keeps_other_bytes_and_sorts() -> None:
    source = b"int a = b;"
    edits = [Edit(8, 9, "(int)c", "second"), Edit(4, 5, "x", "first"), Edit(0, 0, "/**/", "i")]
    assert apply_edits(source, edits) == b"/**/int x = (int)c;"


def test_apply_edits_rejects_overlaps() -> None:
    with pytest.raises(OverlappingEdits):
        apply_edits(b"abcdef", [Edit(0, 3, "x", "one"), Edit(2, 4, "y", "two")])
    with pytest.raises(OverlappingEdits):
        apply_edits(b"abcdef", [Edit(1, 1, "x", "one"), Edit(1, 1, "y", "two")])
    assert apply_edits(b"abcdef", [Edit(1, 1, "x", "one"), Edit(1, 2, "y", "two")]) == b"axycdef"


def test_shifted_offset_follows_the_edits() -> None:
    edits = [Edit(4, 5, "xyz", "grow"), Edit(8, 8, "(int)", "insert")]
    source = b"int a = b;"
    result = apply_edits(source, edits)
    assert result == b"int xyz = (int)b;"
    assert result[shifted_offset(edits, 0) :].startswith(b"int")
    assert result[shifted_offset(edits, 6) :].startswith(b"= ")
    assert result[shifted_offset(edits, 8) :].startswith(b"(int)b")  # insertion goes before
    assert result[shifted_offset(edits, 9) :] == b";"
    assert shifted_offset(edits, 4) == 4  # the start of a replaced range


def test_offsets_of_declarations_map_into_the_rewritten_text(tmp_path: Path) -> None:
    source = "#include <stdlib.h>\nint main(void) { int *p = malloc(4); int new = 1; free(p);"
    source += " return new - 1; }\n"
    result = _rewrite(tmp_path, source)
    where = source.index("free(p)")
    assert result.text.encode()[result.offset(where) :].startswith(b"free(p)")


def test_a_macro_use_that_is_the_whole_expression_is_cast_around(tmp_path: Path) -> None:
    source = (
        "#include <stdlib.h>\n"
        "#define PICK(c, x) ((c) ? (x) : 0)\n"
        "int *f(int k) { return PICK(k, malloc(4)); }\n"
    )
    result = _rewrite(tmp_path, source)
    assert result.text.endswith("{ return (int *)(PICK(k, malloc(4))); }\n")
    assert result.notes == ()
