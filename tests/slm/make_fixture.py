"""Re-record tests/slm/data/replay_0.5b.jsonl with the real 0.5B model:
    .venv/bin/python -m tests.slm.make_fixture
The unit tests replay this file, so they need neither the model nor the network."""

from pathlib import Path

from cudaify.transforms.slm import models
from cudaify.transforms.slm.cache import CachedEngine, Recorder
from cudaify.transforms.slm.engine import LocalEngine, Sampling
from cudaify.transforms.slm.prompt import choice_prompt, edit_prompt

from .programs import CHOICES, OFFLOAD_INSTRUCTION, SAXPY

FIXTURE = Path(__file__).parent / "data" / "replay_0.5b.jsonl"


def main() -> None:
    FIXTURE.unlink(missing_ok=True)
    engine = LocalEngine(models.install("qwen2.5-coder-0.5b"), n_threads=2, n_ctx=4096)
    recorded = CachedEngine(engine, record=Recorder(FIXTURE))
    answer = recorded.complete(
        edit_prompt(OFFLOAD_INSTRUCTION, [], SAXPY), Sampling(max_tokens=768, seed=0)
    )
    print(answer)
    print(recorded.choose(choice_prompt(SAXPY, CHOICES), list(CHOICES), Sampling(seed=0)))


if __name__ == "__main__":
    main()
