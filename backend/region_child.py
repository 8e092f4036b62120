"""Runs in its own process (a faulting candidate takes only this process down): loads the
candidate's library with ctypes, calls its offloaded host function (copies, launches,
copies back) on random inputs at the program's sizes, and times the calls with CUDA
events and the host clock. pycuda retains the device's primary context, the one the
CUDA runtime inside the library uses, so its events on the legacy default stream bracket
the library's copies and kernels. Prints one JSON line: the first call (module loading,
first allocations) and the median of the steady calls after it."""

from __future__ import annotations

import ctypes
import json
import statistics
import sys
import time
from typing import Any

from differential_child import load_function  # same folder


def _say(record: dict) -> None:  # type: ignore[type-arg]
    print(json.dumps(record), flush=True)


def _arguments(np: Any, case: dict) -> tuple[list, list]:  # type: ignore[type-arg]
    """The call's arguments, and the arrays they point into (kept alive)."""
    rng = np.random.default_rng(case["seed"])
    keep, args = [], []
    for arg in case["args"]:
        if arg["kind"] == "array":
            dtype = np.dtype(getattr(ctypes, arg["ctype"]))
            length = max(1, arg["length"])
            if arg["integer"]:
                low, high = arg["range"]
                values = rng.integers(low, high, size=length).astype(dtype)
            else:
                values = rng.uniform(0.5, 1.5, size=length).astype(dtype)
            keep.append(values)
            args.append(ctypes.c_void_p(values.ctypes.data))
        else:
            args.append(getattr(ctypes, arg["ctype"])(arg["value"]))
    return args, keep


def _timed_call(cuda: Any, function: Any, args: list) -> tuple[float, float]:  # type: ignore[type-arg]
    """(host seconds, device seconds) of one call."""
    start, end = cuda.Event(), cuda.Event()
    began = time.perf_counter()
    start.record()
    function(*args)
    end.record()
    end.synchronize()
    return time.perf_counter() - began, start.time_till(end) / 1000.0


def main(spec_path: str) -> int:
    with open(spec_path) as handle:
        spec = json.load(handle)
    try:
        import numpy as np
        import pycuda.driver as cuda
    except ImportError as error:
        _say({"skip": f"pycuda cannot be imported ({error})"})
        return 0
    try:
        cuda.init()
        context = cuda.Device(0).retain_primary_context()
        context.push()
    except cuda.Error as error:
        _say({"skip": f"no GPU for pycuda ({error})"})
        return 0
    try:
        case = spec["case"]
        argtypes = [a["ctype"] if a["kind"] != "array" else "pointer" for a in case["args"]]
        function = load_function(spec["candidate"], spec["restype"], argtypes)
        args, _keep = _arguments(np, case)
        first = _timed_call(cuda, function, args)
        steady: list[tuple[float, float]] = []
        deadline = time.perf_counter() + spec["seconds"]
        while len(steady) < spec["calls"] and (len(steady) < 3 or time.perf_counter() < deadline):
            steady.append(_timed_call(cuda, function, args))
        _say(
            {
                "first": first[0],
                "first_device": first[1],
                "host": statistics.median(s[0] for s in steady),
                "device": statistics.median(s[1] for s in steady),
                "calls": len(steady),
            }
        )
        return 0
    finally:
        try:
            context.pop()
        except cuda.Error:
            pass  # a faulted context: the process ends anyway


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
