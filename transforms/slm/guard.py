"""Model failures stay local to their edge. Every request to the model goes through one
`Guard`: a failed request (unreachable, HTTP error, timeout, an answer that is not what was
asked for, a crash) is counted by kind and handed back as a `ModelFailure`, which the caller
turns into a dead edge; the search goes on with the rules. A model that fails `limit`
requests in a row, or fails its very first one (a model that never answered is a wrong URL,
a server down or a broken file far more often than one bad answer), is switched off for the
rest of the run. With `strict`, any failure is an error that ends the run instead."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from cudaify.core.errors import ModelError, ModelFailure
from cudaify.transforms.slm.engine import Completion, Engine, Message, PromptTooLong, Sampling

log = logging.getLogger("cudaify")
T = TypeVar("T")


class ModelOff(ModelFailure):
    """The model was switched off earlier in this run: not asked again."""

    def __init__(self, why: str):
        super().__init__("off", f"the model is switched off ({why})")


class Guard:
    def __init__(self, limit: int = 5, strict: bool = False):
        self.limit = max(1, limit)
        self.strict = strict
        self.failures: Counter[str] = Counter()
        self.in_a_row = 0
        self.answered = 0
        self.off_reason = ""

    @property
    def on(self) -> bool:
        return not self.off_reason

    def ask(self, request: Callable[[], T]) -> T:
        """The model's answer to `request`, or a ModelFailure saying why there is none."""
        if self.off_reason:
            raise ModelOff(self.off_reason)
        try:
            answer = request()
        except PromptTooLong:
            raise  # this prompt cannot fit; the model itself is fine
        except ModelFailure as exc:
            if exc.kind == "budget":
                raise  # the command's time ran out, not the model
            raise self._failed(exc) from exc
        except MemoryError as exc:
            raise self._failed(ModelFailure("oom", "the model ran out of memory")) from exc
        except ModelError:
            raise  # a replay miss, a model that cannot load: the run's set-up is wrong
        except Exception as exc:  # noqa: BLE001 - a crash inside the model's library
            failure = ModelFailure("crash", f"the model failed: {type(exc).__name__}: {exc}")
            raise self._failed(failure) from exc
        self.answered += 1
        self.in_a_row = 0
        return answer

    def _failed(self, failure: ModelFailure) -> ModelError:
        self.failures[failure.kind] += 1
        self.in_a_row += 1
        if self.strict:
            return StrictModelError(failure)
        if not self.answered:
            self._switch_off(f"its first request failed: {failure.kind}", failure)
        elif self.in_a_row >= self.limit:
            self._switch_off(f"{self.in_a_row} failures in a row", failure)
        return failure

    def _switch_off(self, why: str, failure: ModelFailure) -> None:
        self.off_reason = why
        log.warning(
            "the language model is switched off for this run (%s: %s); the search goes on "
            "with the rules",
            why,
            failure,
        )

    def summary(self) -> str:
        """One line for the run's warnings, or "" when the model never failed."""
        total = sum(self.failures.values())
        if not total:
            return ""
        kinds = ", ".join(f"{kind} {count}" for kind, count in self.failures.most_common())
        plural = "s" if total > 1 else ""
        off = f"; switched off after {self.off_reason}" if self.off_reason else ""
        return f"the language model failed {total} request{plural} ({kinds}){off}"

    def to_json(self) -> dict[str, Any]:
        return {
            "answered": self.answered,
            "failures": dict(self.failures),
            "switched_off": self.off_reason or None,
        }


class StrictModelError(ModelError):
    """`--strict-model`: a model failure ends the run (exit 4, as a broken tool does). Not a
    ModelFailure, so that no edge takes it for its own."""

    def __init__(self, failure: ModelFailure):
        super().__init__(f"the language model failed ({failure.kind}): {failure}")


class Guarded:
    """An Engine whose every request goes through a Guard."""

    def __init__(self, engine: Engine, guard: Guard):
        self.engine = engine
        self.guard = guard
        self.identity = engine.identity

    def complete(self, messages: Sequence[Message], sampling: Sampling) -> Completion:
        return self.guard.ask(lambda: self.engine.complete(messages, sampling))

    def choose(
        self, messages: Sequence[Message], options: Sequence[str], sampling: Sampling
    ) -> dict[str, float]:
        return self.guard.ask(lambda: self.engine.choose(messages, options, sampling))
