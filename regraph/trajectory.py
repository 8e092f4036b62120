"""Trajectories: how one sequential program became fast CUDA, one method at a time.

A trajectory file (JSON) is
    {"program": NAME, "source": "curated" | "teacher" | "rule",
     "code": THE SEQUENTIAL PROGRAM  (or "input": a path relative to the file),
     "steps": [{"think": why, "method": name, "detail": what changed, "code": whole program
                after the step}, ...]}
The steps of a teacher's answer are the same list on its own."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TRAJECTORY_SOURCES = ("teacher", "rule", "curated")


class TrajectoryError(ValueError):
    """A trajectory does not follow the format; the message starts with the JSON path."""


@dataclass(frozen=True)
class TrajectoryStep:
    method: str
    code: str
    think: str = ""
    detail: str = ""

    def to_json(self) -> dict[str, str]:
        return {
            "think": self.think,
            "method": self.method,
            "detail": self.detail,
            "code": self.code,
        }


@dataclass(frozen=True)
class Trajectory:
    program: str
    code: str  # the sequential program the first step starts from
    steps: tuple[TrajectoryStep, ...]
    source: str = "curated"

    def to_json(self) -> dict[str, Any]:
        return {
            "program": self.program,
            "source": self.source,
            "code": self.code,
            "steps": [step.to_json() for step in self.steps],
        }


def _text(data: dict[str, Any], name: str, path: str, required: bool = True) -> str:
    if name not in data:
        if required:
            raise TrajectoryError(f"{path}.{name}: missing")
        return ""
    value = data[name]
    if not isinstance(value, str):
        raise TrajectoryError(f"{path}.{name}: expected str, found {type(value).__name__}")
    return value


def steps_from_json(data: Any, path: str) -> tuple[TrajectoryStep, ...]:
    if not isinstance(data, list):
        raise TrajectoryError(f"{path}: expected a list of steps, found {type(data).__name__}")
    steps = []
    for i, step in enumerate(data):
        where = f"{path}[{i}]"
        if not isinstance(step, dict):
            raise TrajectoryError(f"{where}: expected an object, found {type(step).__name__}")
        method = _text(step, "method", where)
        if not method.strip():
            raise TrajectoryError(f"{where}.method: empty")
        steps.append(
            TrajectoryStep(
                method=method,
                code=_text(step, "code", where),
                think=_text(step, "think", where, required=False),
                detail=_text(step, "detail", where, required=False),
            )
        )
    return tuple(steps)


def from_json(data: Any, base: Path | None = None) -> Trajectory:
    if not isinstance(data, dict):
        raise TrajectoryError(f"$: expected an object, found {type(data).__name__}")
    source = _text(data, "source", "$", required=False) or "curated"
    if source not in TRAJECTORY_SOURCES:
        raise TrajectoryError(f"$.source: {source!r} is not one of {TRAJECTORY_SOURCES}")
    if "code" in data or "input" not in data:
        code = _text(data, "code", "$")
    else:
        input_path = (base or Path(".")) / _text(data, "input", "$")
        try:
            code = input_path.read_text(encoding="utf-8")
        except OSError as exc:
            raise TrajectoryError(f"$.input: cannot read {input_path}: {exc.strerror}") from exc
    return Trajectory(
        program=_text(data, "program", "$"),
        code=code,
        steps=steps_from_json(data.get("steps"), "$.steps"),
        source=source,
    )


def load(path: str | Path) -> Trajectory:
    """Read a trajectory file; errors start with the file name and the JSON path."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return from_json(data, path.parent)
    except json.JSONDecodeError as exc:
        raise TrajectoryError(f"{path}: $: not JSON ({exc})") from exc
    except TrajectoryError as exc:
        raise TrajectoryError(f"{path}: {exc}") from exc


def save(trajectory: Trajectory, path: str | Path) -> None:
    Path(path).write_text(json.dumps(trajectory.to_json(), indent=1) + "\n", encoding="utf-8")
