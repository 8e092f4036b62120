"""Language-model engines: a local GGUF model through llama-cpp-python, or any
OpenAI-compatible endpoint (vLLM, llama.cpp server, ollama). Both answer two questions:
`complete` (free text, from which one code block is extracted) and `choose` (a probability
per option, the prior the search puts on the next method).

How `choose` gets its probabilities
-----------------------------------
Local: the answer is constrained to the JSON `{"method": "<option>"}` by construction: the
prompt is followed by the forced prefix `{"method": "`, and each option's whole continuation
`<option>"}` is scored token by token under the model. The exact sequence log-probabilities,
divided by the temperature and renormalised over the options, are the distribution of the
constrained answer; options sharing a prefix (`shared_tiling`, `shared_reduction`) are told
apart correctly, which first-token logprobs cannot do.

Remote: servers differ in what they return, so the request asks for the JSON answer under a
json_schema `enum` of the options with `logprobs`/`top_logprobs`; the mass of each alternative
token at the first position of the method name goes to the options it begins (split evenly
between options sharing that token). A server that returns no logprobs yields a one-hot prior
on the option it chose.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import math
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from cudaify.core.errors import ModelError, ModelFailure

Message = dict[str, str]  # {"role": "system" | "user" | "assistant", "content": ...}
CHOICE_PREFIX = '{"method": "'
CHOICE_SUFFIX = '"}'
API_KEY_ENV = "CUDAIFY_LLM_API_KEY"
# Qwen2.5 (Coder) models are trained for 32k tokens; a focused edit needs a few thousand,
# the whole-program baselines on a large program more
DEFAULT_CONTEXT = 32768


@dataclass(frozen=True)
class Sampling:
    """Everything that changes an answer besides the model and the prompt; all of it goes
    into the cache key."""

    temperature: float = 0.2
    top_p: float = 0.95
    max_tokens: int = 2048
    seed: int = 0
    stop: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "stop": list(self.stop)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Sampling:
        return cls(**{**data, "stop": tuple(data.get("stop", ()))})


@dataclass(frozen=True)
class Completion:
    text: str
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    cached: bool = field(default=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "seconds": self.seconds,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any], cached: bool = False) -> Completion:
        return cls(
            text=str(data["text"]),
            prompt_tokens=int(data["prompt_tokens"]),
            completion_tokens=int(data["completion_tokens"]),
            seconds=float(data["seconds"]),
            cached=cached,
        )


# the openings of a refusal, told apart from other prose that is not the JSON asked for
_REFUSALS = ("i'm sorry", "i am sorry", "i can't", "i cannot", "sorry,", "as an ai")


class PromptTooLong(ModelError):
    """The prompt (with the answer's room) does not fit the model's context: this request
    can never be answered, but another, shorter one can."""


class Engine(Protocol):
    """`identity` names the model for cache keys: a GGUF file's sha256 or a remote model name."""

    identity: str

    def complete(self, messages: Sequence[Message], sampling: Sampling) -> Completion: ...

    def choose(
        self, messages: Sequence[Message], options: Sequence[str], sampling: Sampling
    ) -> dict[str, float]: ...


# The instant (time.monotonic) at which a generation must end: the command's time budget
# reaches into the model this way, not through Sampling, whose fields key the answer cache.
_STOP_AT: ContextVar[float | None] = ContextVar("cudaify_generation_stop_at", default=None)


@contextlib.contextmanager
def generation_deadline(stop_at: float | None) -> Iterator[None]:
    """Requests made inside end by `stop_at` (time.monotonic; None: no limit): a local
    generation stops there and fails as "budget", an endpoint's wait is cut to it. Inside
    another such deadline, the earlier of the two holds (a request given a share of the
    command's time cannot outlive the command's budget, nor the other way round)."""
    outer = _STOP_AT.get()
    if outer is not None and (stop_at is None or outer < stop_at):
        stop_at = outer
    token = _STOP_AT.set(stop_at)
    try:
        yield
    finally:
        _STOP_AT.reset(token)


# What a local model calls between tokens (and between batches of a prompt it reads): the
# pipeline's way of letting a timing have the GPU meanwhile (backend.gpulock's make_way).
_MAKE_WAY: ContextVar[Callable[[], object] | None] = ContextVar("cudaify_make_way", default=None)
MAKE_WAY_EVERY = 0.05  # seconds between two looks
# tokens of a prompt an option scoring reads between two looks at its deadline
SCORE_BATCH = 128


@contextlib.contextmanager
def generation_pauses(make_way: Callable[[], object] | None) -> Iterator[None]:
    """Local generations inside call `make_way` every MAKE_WAY_EVERY seconds or so, between
    two tokens: it may block while something else uses the GPU (a timing), then return."""
    token = _MAKE_WAY.set(make_way)
    try:
        yield
    finally:
        _MAKE_WAY.reset(token)


class _Pauses:
    """A stopping criterion that never stops: between tokens, at most every MAKE_WAY_EVERY
    seconds, it calls the make-way callback of `generation_pauses`."""

    def __init__(self, make_way: Callable[[], object]):
        self.make_way = make_way
        self.last = time.monotonic()

    def __call__(self, _input_ids: Any = None, _logits: Any = None) -> bool:
        now = time.monotonic()
        if now - self.last >= MAKE_WAY_EVERY:
            self.make_way()
            self.last = time.monotonic()
        return False


def _pauses() -> _Pauses | None:
    make_way = _MAKE_WAY.get()
    return None if make_way is None else _Pauses(make_way)


def generation_stop_at(where: str) -> float | None:
    """The generation deadline (None: none); one already passed is a failure."""
    stop_at = _STOP_AT.get()
    if stop_at is not None and time.monotonic() >= stop_at:
        raise _budget_spent(where)
    return stop_at


def _budget_spent(where: str) -> ModelFailure:
    return ModelFailure("budget", f"{where}: the time budget ran out before the answer was done")


def import_llama_cpp():
    """Import llama_cpp with passive OpenMP waiting. llama.cpp's OpenMP threads spin while
    idle, and on cores shared with nvcc and candidate runs the spinning starved generation
    (measured on 2 busy cores: 0.6 tok/s spinning, 8.8 tok/s passive). libgomp reads the
    variable once, when the library loads, so it must be set before the first import."""
    os.environ.setdefault("OMP_WAIT_POLICY", "passive")
    import llama_cpp

    return llama_cpp


def gpu_offload_supported() -> bool:
    """Whether the installed llama.cpp was built with a GPU backend (CUDA, Metal, ...)."""
    return bool(import_llama_cpp().llama_supports_gpu_offload())


def normalise(scores: Mapping[str, float], temperature: float) -> dict[str, float]:
    """Softmax of log-scores at a temperature; 0 means the model's own spread (T = 1), since
    a prior must keep every option possible and greedy picking is the caller's argmax."""
    scale = temperature if temperature > 0 else 1.0
    top = max(scores.values())
    weights = {name: math.exp((value - top) / scale) for name, value in scores.items()}
    total = sum(weights.values())
    return {name: weight / total for name, weight in weights.items()}


def _check_options(options: Sequence[str]) -> None:
    if not options:
        raise ValueError("choose() needs at least one option")
    if len(set(options)) != len(options):
        raise ValueError(f"choose() options repeat: {list(options)}")


class LocalEngine:
    """A GGUF model in this process. The chat template comes from the model file."""

    def __init__(
        self,
        model_path: str | Path,
        *,
        n_ctx: int = DEFAULT_CONTEXT,
        n_threads: int | None = None,
        n_gpu_layers: int = 0,
        identity: str | None = None,
    ):
        from cudaify.transforms.slm.models import file_sha256

        Llama = import_llama_cpp().Llama
        self.model_path = Path(model_path)
        self.gpu_requested = n_gpu_layers != 0
        self.gpu_offload = self.gpu_requested and gpu_offload_supported()
        # Without a GPU backend llama.cpp would ignore the layers anyway; saying so is the
        # caller's job (`gpu_note`), running on the CPU is still correct.
        threads = n_threads or max(1, (os.cpu_count() or 2) // 2)
        try:
            self.llm = Llama(
                model_path=str(self.model_path),
                n_ctx=n_ctx,
                n_threads=threads,
                n_gpu_layers=n_gpu_layers if self.gpu_offload else 0,
                verbose=False,
            )
        except (ValueError, RuntimeError) as exc:
            raise ModelError(f"{self.model_path}: cannot load the model: {exc}") from exc
        self.n_ctx = n_ctx
        self.identity = identity or f"gguf:{file_sha256(self.model_path)}"

    @property
    def gpu_note(self) -> str:
        if self.gpu_requested and not self.gpu_offload:
            return "--gpu-layers ignored: the installed llama-cpp-python has no GPU backend"
        return ""

    def complete(self, messages: Sequence[Message], sampling: Sampling) -> Completion:
        """The model's answer to the chat, formatted by the model's own template as
        llama.cpp's chat completion formats it, but generated through the plain completion
        (`create_chat_completion` takes no stopping criteria, and the generation deadline
        is one)."""
        started = time.perf_counter()
        stopped = self._stop_at_deadline()
        formatted = self._formatted(messages)
        pauses = _pauses()
        criteria = [
            *(formatted.stopping_criteria or []),
            *([stopped] if stopped else []),
            *([pauses] if pauses else []),
        ]
        ends = formatted.stop if isinstance(formatted.stop, list) else [formatted.stop]
        prompt = self.llm.tokenize(
            formatted.prompt.encode("utf-8"), add_bos=not formatted.added_special, special=True
        )
        try:
            if stopped is not None:
                self._read_prompt(prompt[:-1], stopped.stop_at, pauses)
            response = self.llm.create_completion(
                prompt=prompt,
                temperature=sampling.temperature,
                top_p=sampling.top_p,
                max_tokens=sampling.max_tokens,
                seed=sampling.seed,
                stop=[*sampling.stop, *(end for end in ends if end)],
                stopping_criteria=import_llama_cpp().StoppingCriteriaList(criteria),
            )
        except ValueError as exc:  # the prompt does not fit the context
            raise PromptTooLong(f"{self.model_path.name}: {exc}") from exc
        except MemoryError as exc:
            raise ModelFailure("oom", f"{self.model_path.name}: out of memory") from exc
        except RuntimeError as exc:  # llama_decode failed: a crash, often out of memory
            kind = "oom" if "memory" in str(exc).lower() else "crash"
            raise ModelFailure(kind, f"{self.model_path.name}: {exc}") from exc
        if stopped and stopped.fired:
            raise _budget_spent(self.model_path.name)
        _check_finish(response["choices"][0], self.model_path.name)  # type: ignore[index]
        usage = response["usage"]  # type: ignore[index]
        return Completion(
            text=response["choices"][0]["text"] or "",  # type: ignore[index]
            prompt_tokens=int(usage["prompt_tokens"]),
            completion_tokens=int(usage["completion_tokens"]),
            seconds=time.perf_counter() - started,
        )

    def choose(
        self, messages: Sequence[Message], options: Sequence[str], sampling: Sampling
    ) -> dict[str, float]:
        _check_options(options)
        stop_at = generation_stop_at(self.model_path.name)
        prefix = self.chat_prompt(messages) + CHOICE_PREFIX
        continuations = [prefix + option + CHOICE_SUFFIX for option in options]
        base, tails = self._split_tokens(prefix, continuations)
        try:
            scores = self._score(base, tails, stop_at)
        finally:
            self.llm.reset()
        return normalise(dict(zip(options, scores, strict=True)), sampling.temperature)

    def _stop_at_deadline(self) -> _Deadline | None:
        """A stopping criterion that ends the generation at the generation deadline."""
        stop_at = generation_stop_at(self.model_path.name)
        return None if stop_at is None else _Deadline(stop_at)

    def chat_prompt(self, messages: Sequence[Message]) -> str:
        """The model's own chat template applied to the messages, ready for the answer."""
        return self._formatted(messages).prompt

    def _formatted(self, messages: Sequence[Message]) -> Any:
        """The chat as llama.cpp formats it for a model whose metadata has a template: the
        prompt, the end-of-answer text and a criterion stopping at the end token."""
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        template = self.llm.metadata.get("tokenizer.chat_template")
        if not template:
            raise ModelError(f"{self.model_path.name} has no chat template in its metadata")
        formatter = Jinja2ChatFormatter(
            template=template,
            eos_token=self._token_text(self.llm.token_eos()),
            bos_token=self._token_text(self.llm.token_bos()),
            add_generation_prompt=True,
            stop_token_ids=[self.llm.token_eos()],
        )
        return formatter(messages=list(messages))  # type: ignore[arg-type]

    def _token_text(self, token: int) -> str:
        if token < 0:
            return ""
        return self.llm.detokenize([token], special=True).decode(errors="replace")

    def _tokens(self, text: str) -> list[int]:
        return self.llm.tokenize(text.encode(), add_bos=True, special=True)

    def _split_tokens(self, prefix: str, texts: list[str]) -> tuple[list[int], list[list[int]]]:
        """Tokenise each full answer on its own (a token may straddle the prefix end, e.g.
        `"shared`), then cut all of them at the longest token prefix they share with the
        prompt, so every option is scored under the same context."""
        full = [self._tokens(text) for text in texts]
        cut = min(_common_prefix(self._tokens(prefix), tokens) for tokens in full)
        if cut == 0:  # nothing shared to condition on: the scores would not be comparable
            raise ModelError(f"{self.model_path.name}: cannot score the options after the prompt")
        if cut + max(len(tokens) - cut for tokens in full) > self.n_ctx:
            raise ModelError(f"the choice prompt does not fit the context ({self.n_ctx} tokens)")
        return full[0][:cut], [tokens[cut:] for tokens in full]

    def _score(
        self, base: list[int], tails: list[list[int]], stop_at: float | None = None
    ) -> list[float]:
        """Each tail's log-probability after `base`. Reading the prompt is most of the
        time (on two CPU cores, 40 s for a program of 300 lines), so it goes a batch at a
        time and, like every option's scoring, ends as "budget" once `stop_at` passed."""
        self.llm.reset()
        pauses = _pauses()
        self._eval_in_batches(base, stop_at, pauses)
        start = self._logprobs()
        scores = []
        for tail in tails:
            self._in_time(stop_at, pauses)
            self.llm.n_tokens = len(base)  # eval() drops the KV cache past this point
            total, logprobs = 0.0, start
            for position, token in enumerate(tail):
                total += float(logprobs[token])
                if position + 1 < len(tail):
                    self.llm.eval([token])
                    logprobs = self._logprobs()
            scores.append(total)
        return scores

    def _read_prompt(self, tokens: list[int], stop_at: float, pauses: _Pauses | None) -> None:
        """`tokens` (a prompt less its last token) into the model's cache a batch at a time,
        ending as "budget" once `stop_at` passed: llama.cpp's completion reads its whole
        prompt in one call nothing stops (on two CPU cores a 13,600-token prompt took
        170 s, past the budget), and then reads only what its cache lacks. The part the
        cache already holds (a repair round extends its first conversation) is kept."""
        held = [int(token) for token in self.llm.input_ids[: self.llm.n_tokens]]
        self.llm.n_tokens = _common_prefix(held, tokens)  # eval() drops the cache past it
        self._eval_in_batches(tokens, stop_at, pauses)
        self._in_time(stop_at, pauses)

    def _eval_in_batches(
        self, tokens: list[int], stop_at: float | None, pauses: _Pauses | None
    ) -> None:
        """`tokens` past what the cache holds (`n_tokens`) read a batch at a time, ending
        as "budget" before a batch once `stop_at` passed."""
        # a batch of 128 tokens takes about 2.5 s on two CPU cores, 10 ms on an H200
        batch = max(1, min(SCORE_BATCH, int(getattr(self.llm, "n_batch", SCORE_BATCH))))
        for first in range(self.llm.n_tokens, len(tokens), batch):
            self._in_time(stop_at, pauses)
            self.llm.eval(tokens[first : first + batch])

    def _in_time(self, stop_at: float | None, pauses: _Pauses | None = None) -> None:
        if pauses is not None:
            pauses()
        if stop_at is not None and time.monotonic() >= stop_at:
            raise _budget_spent(self.model_path.name)

    def _logprobs(self):
        import numpy as np

        pointer = import_llama_cpp().llama_get_logits_ith(self.llm.ctx, -1)
        logits = np.ctypeslib.as_array(pointer, shape=(self.llm.n_vocab(),)).astype(np.float64)
        top = logits.max()
        return logits - top - math.log(np.exp(logits - top).sum())


def _common_prefix(first: Sequence[int], second: Sequence[int]) -> int:
    length = 0
    for left, right in zip(first, second, strict=False):
        if left != right:
            break
        length += 1
    return length


class _Deadline:
    """llama.cpp's stopping criterion for one generation: true (stop) from `stop_at` on,
    remembering that it fired."""

    def __init__(self, stop_at: float):
        self.stop_at = stop_at
        self.fired = False

    def __call__(self, _input_ids: Any, _logits: Any) -> bool:
        if time.monotonic() >= self.stop_at:
            self.fired = True
        return self.fired


class RemoteEngine:
    """Any OpenAI-compatible `/v1/chat/completions` endpoint. The API key is read from an
    environment variable (never a flag, so it stays out of shell history and traces)."""

    def __init__(
        self,
        url: str,
        model: str,
        *,
        api_key_env: str = API_KEY_ENV,
        timeout: float = 300.0,
    ):
        self.url = _endpoint(url)
        self.model = model
        self.api_key_env = api_key_env
        self.timeout = timeout
        self.identity = f"remote:{model}"

    def complete(self, messages: Sequence[Message], sampling: Sampling) -> Completion:
        started = time.perf_counter()
        response = self._post(self._body(messages, sampling))
        text = _message_text(response, self.url)
        _check_finish(response["choices"][0], self.url)
        usage = response.get("usage") or {}
        return Completion(
            text=text,
            prompt_tokens=int(usage.get("prompt_tokens", 0)),
            completion_tokens=int(usage.get("completion_tokens", 0)),
            seconds=time.perf_counter() - started,
        )

    def choose(
        self, messages: Sequence[Message], options: Sequence[str], sampling: Sampling
    ) -> dict[str, float]:
        _check_options(options)
        body = self._body(messages, Sampling(**{**asdict(sampling), "max_tokens": 64}))
        body["response_format"] = _choice_schema(options)
        body["logprobs"] = True
        body["top_logprobs"] = 20
        response = self._post(body)
        text = _message_text(response, self.url)
        chosen = _chosen_option(text, options, self.url)
        content = ((response["choices"][0].get("logprobs") or {}).get("content")) or []
        return remote_prior(text, content, options, chosen, sampling.temperature)

    def _body(self, messages: Sequence[Message], sampling: Sampling) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": list(messages),
            "temperature": sampling.temperature,
            "top_p": sampling.top_p,
            "max_tokens": sampling.max_tokens,
            "seed": sampling.seed,
        }
        if sampling.stop:
            body["stop"] = list(sampling.stop)
        return body

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.api_key_env)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        request = urllib.request.Request(
            self.url, data=json.dumps(body).encode(), headers=headers, method="POST"
        )
        try:
            stop_at = generation_stop_at(self.url)
            timeout = (
                self.timeout
                if stop_at is None
                else min(self.timeout, max(1e-3, stop_at - time.monotonic()))
            )
            with urllib.request.urlopen(request, timeout=timeout) as reply:
                return json.loads(reply.read().decode())
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode(errors="replace")[:300]
            hint = f" (is {self.api_key_env} set?)" if exc.code in (401, 403) else ""
            message = f"{self.url}: HTTP {exc.code} {exc.reason}{hint}: {detail}"
            raise ModelFailure("http", message) from exc
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, TimeoutError):
                raise self._timed_out() from exc
            message = f"{self.url}: cannot reach the model server: {exc.reason}"
            raise ModelFailure("unreachable", message) from exc
        except TimeoutError as exc:
            raise self._timed_out() from exc
        except json.JSONDecodeError as exc:
            raise ModelFailure("format", f"{self.url}: the answer is not JSON: {exc}") from exc
        except (http.client.HTTPException, OSError) as exc:  # a connection cut mid-answer
            message = f"{self.url}: the connection failed: {type(exc).__name__}: {exc}"
            raise ModelFailure("http", message) from exc

    def _timed_out(self) -> ModelFailure:
        stop_at = _STOP_AT.get()
        if stop_at is not None and time.monotonic() >= stop_at:
            return _budget_spent(self.url)  # the budget cut the wait, not the server
        return ModelFailure("timeout", f"{self.url}: no answer within {self.timeout:g} s")


def _endpoint(url: str) -> str:
    """Accept a server root, a `/v1` base or the full chat-completions address."""
    url = url.rstrip("/")
    if url.endswith("/chat/completions"):
        return url
    if url.endswith("/v1"):
        return url + "/chat/completions"
    return url + "/v1/chat/completions"


def _message_text(response: Mapping[str, Any], url: str) -> str:
    try:
        return response["choices"][0]["message"]["content"] or ""
    except (KeyError, IndexError, TypeError) as exc:
        message = f"{url}: the answer has no choices[0].message.content"
        raise ModelFailure("format", message) from exc


def _check_finish(choice: Mapping[str, Any], where: str) -> None:
    """An answer cut at max_tokens (an endless generation ends so) holds no whole program."""
    if isinstance(choice, Mapping) and choice.get("finish_reason") == "length":
        raise ModelFailure("truncated", f"{where}: the answer was cut at max_tokens")


def _choice_schema(options: Sequence[str]) -> dict[str, Any]:
    schema = {
        "type": "object",
        "properties": {"method": {"type": "string", "enum": list(options)}},
        "required": ["method"],
        "additionalProperties": False,
    }
    return {"type": "json_schema", "json_schema": {"name": "choice", "schema": schema}}


def _chosen_option(text: str, options: Sequence[str], url: str) -> str:
    try:
        chosen = json.loads(text)["method"]
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        refused = text.strip().lower().startswith(_REFUSALS)
        message = f"{url}: the choice is not JSON with a 'method': {text[:200]!r}"
        raise ModelFailure("refusal" if refused else "format", message) from exc
    if chosen not in options:
        message = f"{url}: the server chose {chosen!r}, not one of {list(options)}"
        raise ModelFailure("format", message)
    return chosen


def remote_prior(
    text: str,
    content: Sequence[Mapping[str, Any]],
    options: Sequence[str],
    chosen: str,
    temperature: float,
) -> dict[str, float]:
    """Probabilities from the top logprobs at the token where the method name begins (see
    the module note); one-hot on `chosen` where the server gave no usable logprobs."""
    start = text.find(chosen, text.find('"method"') + len('"method"'))
    offset = 0
    for entry in content:
        token = str(entry.get("token", ""))
        if offset + len(token) > start:
            masses = _first_token_masses(entry, start - offset, options)
            if masses:
                return normalise({k: math.log(v) for k, v in masses.items()}, temperature)
            break
        offset += len(token)
    return {option: float(option == chosen) for option in options}


def _first_token_masses(
    entry: Mapping[str, Any], cut: int, options: Sequence[str]
) -> dict[str, float]:
    alternatives = entry.get("top_logprobs") or [entry]
    masses = dict.fromkeys(options, 0.0)
    for alternative in alternatives:
        piece = str(alternative.get("token", ""))[cut:]
        matching = [option for option in options if piece and option.startswith(piece)]
        for option in matching:
            masses[option] += math.exp(float(alternative["logprob"])) / len(matching)
    total = sum(masses.values())
    if total <= 0:
        return {}
    # An option no listed token begins still gets a sliver, so the search can reach it.
    floor = 1e-3 * total
    return {option: max(mass, floor) for option, mass in masses.items()}
