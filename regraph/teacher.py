"""The teacher: a larger model asked to optimize a sequential program step by step and to
return the trajectory as JSON; the same model judges relabeling. Any object with
`complete(messages, sampling)` answering a text (or something with a `.text`) will do:
`cudaify.transforms.slm.engine.RemoteEngine` for an OpenAI-compatible endpoint,
`LocalEngine` for a GGUF file, `RecordedTeacher` to replay canned answers (tests,
reproducible rebuilds)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from cudaify.core.errors import ModelError
from cudaify.regraph.trajectory import Trajectory, TrajectoryError, steps_from_json

Message = dict[str, str]


class TextModel(Protocol):
    def complete(self, messages: Sequence[Message], sampling: Any) -> Any: ...


def ask(model: TextModel, messages: Sequence[Message], max_tokens: int = 8192) -> str:
    from cudaify.transforms.slm.engine import Sampling

    answer = model.complete(list(messages), Sampling(temperature=0.0, max_tokens=max_tokens))
    return answer if isinstance(answer, str) else str(answer.text)


class RecordedTeacher:
    """Canned answers from a JSON-lines file: `{"answer": TEXT}` with an optional
    `"match": SUBSTRING` the last message must contain. Each answer is given once, in
    file order; asking for more than the file holds is an error, never a silent default."""

    def __init__(self, path: str | Path):
        self.path = str(path)
        self.answers: list[dict[str, str]] = []
        for number, line in enumerate(Path(path).read_text().splitlines(), 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                self.answers.append(
                    {"answer": str(entry["answer"]), "match": entry.get("match", "")}
                )
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                raise ModelError(f"{path}:{number}: not a recorded answer ({exc})") from exc

    def complete(self, messages: Sequence[Message], sampling: Any = None) -> str:
        prompt = messages[-1]["content"] if messages else ""
        for index, entry in enumerate(self.answers):
            if entry["match"] in prompt:
                return self.answers.pop(index)["answer"]
        raise ModelError(f"{self.path}: no recorded answer left for this prompt")


TEACHER_SYSTEM = (
    "You are an expert CUDA engineer. You turn sequential C/C++ programs into fast CUDA "
    "programs one optimization at a time. Every intermediate program must be complete, "
    "compile with nvcc, and print exactly what the original prints."
)


def teacher_prompt(program: str, code: str, methods: Sequence[str]) -> list[Message]:
    listing = ", ".join(methods)
    task = (
        f"Optimize the program `{program}` below for an NVIDIA GPU, step by step. Prefer these "
        f"methods: {listing} (another well-known method is fine when none fits). Keep every "
        "function's signature; offload the hot functions, keep main on the host.\n"
        "Answer with one ```json fenced block holding a list of steps, in order, each "
        '{"think": why this step, "method": its name, "detail": what changed, '
        '"code": the whole program after the step}.\n\n'
        f"```\n{code}\n```"
    )
    return [{"role": "system", "content": TEACHER_SYSTEM}, {"role": "user", "content": task}]


_FENCE = re.compile(r"```(?:json)?\s*\n(.*?)```", re.S)


def parse_answer(text: str) -> Any:
    """The JSON list in a teacher's answer: the fenced block, else the outermost brackets."""
    candidates = [m.group(1) for m in _FENCE.finditer(text)]
    first, last = text.find("["), text.rfind("]")
    if first >= 0 and last > first:
        candidates.append(text[first : last + 1])
    for candidate in candidates:
        try:
            data = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(data, list):
            return data
    raise TrajectoryError("$: the teacher's answer holds no JSON list of steps")


def teacher_trajectory(
    model: TextModel, program: str, code: str, methods: Sequence[str]
) -> Trajectory:
    """Ask the teacher for one trajectory of `program`; a malformed answer raises
    TrajectoryError naming the JSON path of the first problem."""
    text = ask(model, teacher_prompt(program, code, methods))
    steps = steps_from_json(parse_answer(text), "$")
    return Trajectory(program=program, code=code, steps=steps, source="teacher")
