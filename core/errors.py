"""One exception type per kind of failure; the CLI maps them to exit codes in one place."""

from __future__ import annotations


class CudaifyError(Exception):
    """Base of every error cudaify reports to the user without a traceback."""

    exit_code = 1


class InputError(CudaifyError):
    """The input file or an option cannot be used at all (missing, unreadable, empty)."""

    exit_code = 2


class SourceError(CudaifyError):
    """The input does not compile: carries the compiler's diagnostics, file:line:col each."""

    exit_code = 1

    def __init__(self, diagnostics: list[str]):
        self.diagnostics = diagnostics
        super().__init__("\n".join(diagnostics))


class ToolchainError(CudaifyError):
    """A required tool (gcc, nvcc) is missing or failed for a reason outside the input."""

    exit_code = 4


class NotOffloadedError(CudaifyError):
    """`--strict`: no verified GPU variant was found (the output holds the host program)."""

    exit_code = 3


class ConfigError(CudaifyError):
    exit_code = 2


class ModelError(ToolchainError):
    """The language model cannot be installed, loaded, reached or replayed. A kind of
    toolchain failure: the model is a tool the run needs, outside the input."""


class ModelFailure(ModelError):
    """One request the model could not answer usably. Local to its edge: the search goes on
    without it (see transforms.slm.guard). `kind` names why, for the edge's reason and the
    run's summary: unreachable, http, timeout, format (not the JSON asked for), refusal,
    truncated (cut at max_tokens), crash or oom (a local model)."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


class Interrupted(KeyboardInterrupt):
    """SIGTERM, raised where the run is, as Ctrl-C raises KeyboardInterrupt: every cleanup
    on the way out runs (child processes killed, temporary files removed)."""

    def __init__(self, signal_number: int):
        super().__init__(signal_number)
        self.signal_number = signal_number
