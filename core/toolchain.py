"""The one door to subprocesses: gcc, g++, nvcc and candidate programs all run through
`run()`, with a time limit, capped output, a clean environment and a working directory."""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cudaify.core.errors import ToolchainError

OUTPUT_CAP = 16 * 1024 * 1024  # bytes kept of each stream; a longer stream is a failure
_SAFE_ENV = (
    "PATH",
    "HOME",
    "LANG",
    "LC_ALL",
    "TMPDIR",
    "CUDA_VISIBLE_DEVICES",
    "CUDA_HOME",
    "CUDA_PATH",
    "LD_LIBRARY_PATH",
    "NVIDIA_VISIBLE_DEVICES",
    "NVIDIA_DRIVER_CAPABILITIES",
)


@dataclass(frozen=True)
class Completed:
    argv: tuple[str, ...]
    returncode: int
    stdout: bytes
    stderr: bytes
    seconds: float
    timed_out: bool = False
    truncated: bool = False  # an output stream passed the cap

    @property
    def signal(self) -> int | None:
        return -self.returncode if self.returncode < 0 else None

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out and not self.truncated

    def text(self) -> str:
        return self.stdout.decode(errors="replace")

    def errors(self) -> str:
        return self.stderr.decode(errors="replace")


def clean_environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    """Only what a compiler or a CUDA program needs; no tokens, keys or proxies."""
    env = {key: os.environ[key] for key in _SAFE_ENV if key in os.environ}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env["LC_ALL"] = "C"
    env.update(extra or {})
    return env


def find_tool(name: str) -> str:
    path = shutil.which(name)
    if path is None and name == "nvcc":
        for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
            if root and (Path(root) / "bin" / "nvcc").is_file():
                return str(Path(root) / "bin" / "nvcc")
    if path is None:
        raise ToolchainError(f"'{name}' was not found on PATH; install it or add it to PATH")
    return path


def _limit_resources(memory_bytes: int | None, file_bytes: int | None) -> None:
    os.setsid()
    if memory_bytes:
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    if file_bytes:
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, file_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _drain(stream, sink: bytearray, cap: int, overflow: threading.Event) -> None:
    while True:
        chunk = stream.read1(65536)
        if not chunk:
            return
        room = cap - len(sink)
        if room > 0:
            sink.extend(chunk[:room])
        if len(chunk) > room:
            overflow.set()


def run(
    argv: list[str],
    *,
    cwd: str | Path | None = None,
    timeout: float = 60.0,
    stdin: bytes | None = None,
    env: dict[str, str] | None = None,
    output_cap: int = OUTPUT_CAP,
    memory_bytes: int | None = None,
    file_bytes: int | None = None,
    cancel: threading.Event | None = None,
) -> Completed:
    """Run a command to completion or until its time limit; never raises for the
    command's own failure. The whole process group is killed on timeout or overflow, and
    when `cancel` is set (the result then reads as timed out: it did not finish)."""
    started = time.perf_counter()
    try:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env if env is not None else clean_environment(),
            preexec_fn=lambda: _limit_resources(memory_bytes, file_bytes),
        )
    except OSError as exc:
        raise ToolchainError(f"cannot run {argv[0]}: {exc.strerror}") from exc
    out, err = bytearray(), bytearray()
    overflow = threading.Event()
    readers = [
        threading.Thread(target=_drain, args=(proc.stdout, out, output_cap, overflow), daemon=True),
        threading.Thread(target=_drain, args=(proc.stderr, err, output_cap, overflow), daemon=True),
    ]
    for reader in readers:
        reader.start()
    if stdin is not None and proc.stdin:
        try:
            proc.stdin.write(stdin)
            proc.stdin.close()
        except BrokenPipeError:
            pass
    timed_out = False
    deadline = started + timeout
    try:
        while proc.poll() is None:
            cancelled = cancel is not None and cancel.is_set()
            if overflow.is_set() or cancelled or time.perf_counter() > deadline:
                timed_out = not overflow.is_set()
                _kill_group(proc)
                break
            time.sleep(0.005)
    except BaseException:
        # Ctrl-C reaches only cudaify: the child runs in its own session, so end it here.
        _kill_group(proc)
        raise
    proc.wait()
    for reader in readers:
        reader.join(timeout=5)
    return Completed(
        argv=tuple(argv),
        returncode=proc.returncode,
        stdout=bytes(out),
        stderr=bytes(err),
        seconds=time.perf_counter() - started,
        timed_out=timed_out,
        truncated=overflow.is_set(),
    )


def run_helper(
    script: Path, spec: dict[str, Any], timeout: float
) -> tuple[list[dict[str, Any]], Completed]:
    """Run one of cudaify's own Python helper scripts (a child that loads a candidate and
    may crash with it) on `spec`, given as a JSON file: the JSON lines it printed, and how
    it ended. Not a candidate: it gets this interpreter's import path (pycuda, numpy),
    which the clean environment of candidate runs leaves out."""
    with tempfile.TemporaryDirectory(prefix="cudaify-helper-") as folder:
        spec_path = Path(folder) / "spec.json"
        spec_path.write_text(json.dumps(spec))
        path = os.pathsep.join(entry for entry in sys.path if entry)
        done = run(
            [sys.executable, str(script), str(spec_path)],
            cwd=folder,
            timeout=timeout,
            env=clean_environment({"PYTHONPATH": path}),
        )
    lines = [json.loads(line) for line in done.text().splitlines() if line.startswith("{")]
    return lines, done


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
