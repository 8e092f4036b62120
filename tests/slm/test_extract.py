from cudaify.transforms.slm.extract import extract_code, fenced_blocks

KERNEL = "__global__ void k(float *x) { x[threadIdx.x] = 1.0f; }\nint main() { return 0; }"


def test_one_cuda_block_is_extracted_with_its_language():
    answer = f"Here is the program:\n\n```cuda\n{KERNEL}\n```\n\nI moved the loop."
    result = extract_code(answer)
    assert result.ok
    assert result.code == KERNEL + "\n"
    assert result.language == "cuda"


def test_untagged_c_and_cpp_blocks_are_accepted():
    for tag in ("", "c", "cpp", "C++"):
        result = extract_code(f"```{tag}\nint main() {{ return 0; }}\n```")
        assert result.code == "int main() { return 0; }\n", tag
        assert result.language == tag.lower()


def test_no_block_is_a_failure_with_a_reason():
    result = extract_code("I would move the loop into a kernel.")
    assert result.code is None
    assert result.reason == "the answer has no fenced code block"


def test_several_blocks_are_a_failure_naming_their_lines():
    answer = "```cuda\nint a;\n```\ntext\n```cuda\nint b;\n```\n"
    result = extract_code(answer)
    assert result.code is None
    assert "2 code blocks" in result.reason
    assert "line 3" in result.reason and "line 7" in result.reason


def test_a_block_in_another_language_also_counts_as_a_block():
    answer = "```bash\nnvcc x.cu\n```\n```cuda\nint main() {}\n```"
    assert "2 code blocks" in extract_code(answer).reason


def test_a_lone_block_in_another_language_is_refused():
    result = extract_code("```python\nprint(1)\n```")
    assert result.code is None
    assert "'python'" in result.reason


def test_an_unclosed_block_is_a_cut_off_answer():
    result = extract_code("```cuda\nint main() {\n    return 0;\n")
    assert result.code is None
    assert "not closed" in result.reason


def test_an_empty_block_is_refused():
    assert extract_code("```cuda\n\n```").reason == "the code block is empty"


def test_a_longer_fence_may_contain_a_shorter_one():
    body = 'const char *doc = "```";\n```\nint main() { return 0; }'
    result = extract_code(f"````cuda\n{body}\n````")
    assert result.code == body + "\n"


def test_inline_backticks_are_not_fences():
    answer = "Use `cudaMalloc` here.\n```cuda\nint main() { return 0; }\n```"
    assert len(fenced_blocks(answer)) == 1
    assert extract_code(answer).ok
