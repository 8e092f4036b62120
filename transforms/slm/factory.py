"""One call from the command-line options to a ready engine: local or remote, behind the
completion cache, recording or replaying. The CLI passes its flags through unchanged."""

from __future__ import annotations

import os
from pathlib import Path

from cudaify.core.errors import ConfigError
from cudaify.transforms.slm import models
from cudaify.transforms.slm.cache import CachedEngine, CompletionCache, Recorder, Replay
from cudaify.transforms.slm.engine import (
    API_KEY_ENV,
    DEFAULT_CONTEXT,
    Engine,
    LocalEngine,
    RemoteEngine,
)


def model_identity(model: str | None = None, llm_model: str | None = None) -> str:
    """The cache identity a run with these options has, without loading anything: registry
    models are known by their pinned sha256, so a replay needs no model file."""
    if llm_model:
        return f"remote:{llm_model}"
    chosen = model or os.environ.get(models.MODEL_ENV) or models.DEFAULT_MODEL
    if chosen in models.REGISTRY:
        return f"gguf:{models.REGISTRY[chosen].sha256}"
    return f"gguf:{models.file_sha256(models.resolve(chosen))}"


def open_engine(
    *,
    model: str | None = None,
    llm_url: str | None = None,
    llm_model: str | None = None,
    api_key_env: str = API_KEY_ENV,
    gpu_layers: int = 0,
    threads: int | None = None,
    n_ctx: int = DEFAULT_CONTEXT,
    record: str | Path | None = None,
    replay: str | Path | None = None,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
    timeout: float = 120.0,
) -> CachedEngine:
    """`--replay`: answers only from the file, no model is loaded. `--llm-url`: a remote
    endpoint (`--llm-model` required). Otherwise the local GGUF of `--model`, $CUDAIFY_MODEL
    or the default, installed on first use."""
    if llm_url and not llm_model:
        raise ConfigError("--llm-url needs --llm-model (the model name the server expects)")
    if llm_model and not llm_url and not replay:
        raise ConfigError("--llm-model needs --llm-url (the OpenAI-compatible endpoint)")
    cache = CompletionCache(cache_dir) if use_cache else None
    recorder = Recorder(record) if record else None
    if replay:
        explicit = model or llm_model or os.environ.get(models.MODEL_ENV)
        identity = model_identity(model, llm_model) if explicit else None
        return CachedEngine(None, cache, recorder, Replay(replay), identity)
    engine: Engine
    if llm_url:
        engine = RemoteEngine(llm_url, str(llm_model), api_key_env=api_key_env, timeout=timeout)
    else:
        engine = LocalEngine(
            models.resolve(model), n_ctx=n_ctx, n_threads=threads, n_gpu_layers=gpu_layers
        )
    return CachedEngine(engine, cache, recorder)
