"""The small language model: model store, engines, completion cache, prompts, extraction."""
