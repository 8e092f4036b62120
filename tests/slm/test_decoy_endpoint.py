"""A model that answers with decoys never gets a step (issue 19): an OpenAI-compatible
endpoint that answers every edit with code that only looks like the method was applied
(the functions it was given plus comments naming the method's constructs, a new kernel
full of them never launched, the same kernel launched beside the work it leaves alone, or
the functions unchanged) is refused by structure, for every method, on a machine without a
GPU: before nvcc, and so before anything could be run. Through `--llm-url`, end to end: no
model-applied step is named in the output's header or in the trace."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cudaify.cli import main
from cudaify.core import Variant
from cudaify.core.config import Config
from cudaify.frontend.facts import Program
from cudaify.pipeline import Stages
from cudaify.transforms import METHODS

from .httpserver import FakeServer, completion_reply

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"

# method -> (a golden input it applies to, the rules applied before it): one table for the
# postcondition tests and the decoy endpoint's (tests/golden/method_cases.json)
CASES = {
    method: (case["input"], tuple(case["after"]))
    for method, case in json.loads((GOLDEN / "method_cases.json").read_text()).items()
}

# what the old substring checks looked for, and every method's construct by name
MAGIC = (
    "<<< wave >>> cub::DeviceScan::InclusiveSum( atomicAdd( cudaify_add_at( "
    "cudaify_block_reduce #pragma unroll __shared__ __syncthreads() __restrict__ __ldg( "
    "__expf( __fmul_rn( gridDim.x*4) cudaify_scope_begin(); __launch_bounds__(256)"
)
KITCHEN_SINK = """\
__global__ void __launch_bounds__(256) cudaify_decoy(float *__restrict__ out,
                                                     const float *__restrict__ in, long long n)
{
    __shared__ float tile[256];
    tile[threadIdx.x] = __ldg(&in[threadIdx.x]);
    __syncthreads();
    float v = __shfl_down_sync(0xffffffffu, __expf(tile[threadIdx.y]), 16);
    for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < n;
         t += (long long)blockDim.x * gridDim.x * 4) {
#pragma unroll
        for (int k = 0; k < 4; k++)
            atomicAdd(&out[t + k], v);
    }
}

"""
DECOY_LAUNCH = "cudaify_decoy<<<1, 256>>>(nullptr, nullptr, 0);"
TARGETS = re.compile(
    r"Change only the functions? (?P<names>[^:]*):\n```\w*\n(?P<code>.*?)\n```", re.S
)


def commented(functions: str) -> str:
    return f"// {MAGIC}\n{functions}\n/* {MAGIC} */"


def unlaunched(functions: str) -> str:
    return KITCHEN_SINK + functions


def launched_beside(functions: str) -> str:
    """The kernel launched as the first statement of the first function to change."""
    body = functions.index("{", functions.index(")")) + 1
    return KITCHEN_SINK + functions[:body] + f"\n    {DECOY_LAUNCH}" + functions[body:]


def echoed(functions: str) -> str:
    return functions


DECOYS = (commented, unlaunched, launched_beside, echoed)


class DecoyServer(FakeServer):
    """Answers each method choice with the first option and each edit with `decoy` made
    from the functions it was asked to change (the repair round's too)."""

    def __init__(self, decoy: Callable[[str], str] | None = None) -> None:
        self.decoys = itertools.cycle([decoy] if decoy is not None else DECOYS)
        self.edits: list[str] = []  # the decoy each edit request got, by name
        super().__init__()

    @property
    def reply(self) -> dict[str, Any]:
        body = self.requests[-1]["body"] if self.requests else {}
        choice = (body.get("response_format") or {}).get("json_schema")
        if choice is not None:
            options = choice["schema"]["properties"]["method"]["enum"]
            return completion_reply(json.dumps({"method": options[0]}))
        asked = [m["content"] for m in body.get("messages", []) if m["role"] == "user"]
        # the last task in the conversation: earlier ones are the edge's examples
        found = [match for text in asked if (match := TARGETS.search(text))]
        if not found:
            return completion_reply("I cannot help with that.")
        decoy = next(self.decoys)
        self.edits.append(decoy.__name__)
        return completion_reply(f"```cuda\n{decoy(found[-1].group('code'))}\n```\n\nDone.")

    @reply.setter
    def reply(self, value: dict[str, Any]) -> None:
        pass  # FakeServer's fixed reply: this server makes its own


def analysed(path: Path) -> Program:
    """The program as the pipeline analyses it."""
    from cudaify.frontend.analyze import analyze
    from cudaify.frontend.cxx_compat import to_cxx
    from cudaify.frontend.parse import parse

    compat = to_cxx(parse(str(path), ())).text.encode("utf-8", "surrogateescape")
    return analyze(str(path), (), source=compat)


def model_config(url: str, tmp_path: Path) -> Config:
    return Config(
        slm="on",
        llm_url=url,
        llm_model="m",
        llm_timeout=60.0,
        model_failures=1000,  # every edge of this test must reach the model
        examples=0,
        cache_dir=str(tmp_path / "cache"),
        cache=False,
    )


def test_every_method_has_a_case() -> None:
    assert sorted(CASES) == sorted(METHODS)


@pytest.mark.parametrize("decoy", DECOYS, ids=[d.__name__ for d in DECOYS])
@pytest.mark.parametrize("method", sorted(CASES))
def test_a_decoy_edit_is_refused_by_structure(
    method: str, decoy: Callable[[str], str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUDAIFY_CACHE_DIR", str(tmp_path / "cache"))  # no earlier answers
    source, chain = CASES[method]
    program = analysed(GOLDEN / source)
    with DecoyServer(decoy) as server:
        stages = Stages(program, model_config(server.url, tmp_path))
        variant = Variant(program.source)
        for earlier in chain:
            variant, reason = stages.expand(variant, earlier)
            assert variant is not None, reason
        assert stages.expand(variant, method)[0] is not None, "the rule itself does not apply"
        child, reason = stages.expand(variant, method, "slm")
    assert server.edits == [decoy.__name__] * 2  # the answer and its repair
    assert child is None, f"a decoy became a {method} step"
    prefix = f"the SLM's {method} failed its checks: "
    assert reason.startswith(prefix), reason
    assert not reason[len(prefix) :].startswith(("compile:", "nvcc")), reason  # not nvcc


# inputs on which the search tries model edges of most methods (prefix.c: all but
# segmented; fp_exact is no model edge: only the rounding rescue applies it, by rule)
SEARCHED = {"saxpy": ROOT / "examples" / "saxpy.c", "prefix": GOLDEN / "scan" / "prefix.c"}


@pytest.mark.parametrize("name", sorted(SEARCHED))
def test_the_cli_names_no_model_step_when_the_model_only_answers_decoys(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`cudaify compile --llm-url` searching with a model that answers every edit with a
    decoy: the search asks it, refuses each answer by structure, and neither the header of
    the output nor the trace holds a model-applied step or a state one produced."""
    monkeypatch.setenv("CUDAIFY_CACHE_DIR", str(tmp_path / "cache"))
    out, trace = tmp_path / f"{name}.cu", tmp_path / "trace.json"
    # 16 iterations: with narrow_counters in the graph (one more child of schedule and of
    # its data_residency), 12 reached the model edges of 7 methods on saxpy, 16 of 12
    with DecoyServer() as server:
        result = CliRunner().invoke(
            main,
            [str(SEARCHED[name]), "-o", str(out), "--trace", str(trace)]
            + ["--iterations", "16", "--patience", "0", "--time-budget", "300", "--seed", "0"]
            + ["--no-cache", "--model-failures", "1000", "--slm", "on", "--llm-model", "m"]
            + ["--llm-url", server.url, "--llm-timeout", "60"],
        )
    assert result.exit_code == 0, result.stderr
    assert set(server.edits) == {d.__name__ for d in DECOYS}, server.edits
    header = out.read_text().split("*/", 1)[0]
    assert "Transformation sequence" in header
    assert "(slm)" not in header
    data = json.loads(trace.read_text())
    assert [step for step in data["chosen"] if step["applied_by"] == "slm"] == []
    edges = [edge for state in data["search"]["graph"] for edge in state["edges"]]
    tried = [edge for edge in edges if edge["how"] == "slm" and "dead" in edge]
    assert len({edge["method"] for edge in tried}) >= 10, tried
    for edge in tried:
        assert edge["child"] is None, edge
        prefix = f"the SLM's {edge['method']} failed its checks: "
        assert edge["dead"].startswith(prefix), edge
        assert not edge["dead"][len(prefix) :].startswith("compile:"), edge  # refused before nvcc
    assert all(edge["child"] is None for edge in edges if edge["how"] == "slm")
