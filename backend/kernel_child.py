"""Runs in its own process (a faulting kernel takes only this process and its CUDA context
down): loads the reference library with ctypes and the candidate's kernels from a cubin
with pycuda, runs both on the same random inputs, compares every written array, prints
one JSON line per case. pycuda is imported here only, so cudaify itself never needs it."""

from __future__ import annotations

import ctypes
import json
import random
import sys
from typing import Any

from differential_child import call_function, input_values, load_function, say  # same folder


def _dtype(np: Any, ctype: str) -> Any:
    return np.dtype(getattr(ctypes, ctype))


def _first_difference(
    np: Any, name: str, want: Any, got: Any, rtol: float, atol: float
) -> str | None:
    if np.issubdtype(want.dtype, np.floating):
        bad = ~np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    else:
        bad = want != got
    where = np.flatnonzero(bad)
    if where.size == 0:
        return None
    index = int(where[0])
    return f"{name}[{index}] is {got[index].item()!r}, expected {want[index].item()!r}"


def _launch_all(np: Any, cuda: Any, kernels: dict, case: dict, data: dict) -> dict:  # type: ignore[type-arg]
    arrays = {a["name"]: a for a in case["args"] if a["kind"] == "array"}
    device = {}
    for name, meta in arrays.items():
        host = np.array(data[name], dtype=_dtype(np, meta["ctype"]))
        device[name] = cuda.to_device(host) if host.size else cuda.mem_alloc(16)
    for launch in case["launches"]:
        kernel = kernels[launch["kernel"]]
        args = [
            device[a["name"]] if a["kind"] == "array" else _dtype(np, a["ctype"]).type(a["value"])
            for a in launch["args"]
        ]
        kernel(*args, grid=tuple(launch["grid"]), block=tuple(launch["block"]))
    cuda.Context.synchronize()
    results = {}
    for name, meta in arrays.items():
        if meta["compare"] and meta["length"]:
            out = np.empty(meta["length"], dtype=_dtype(np, meta["ctype"]))
            cuda.memcpy_dtoh(out, device[name])
            results[name] = out
    return results


def _run_case(
    np: Any, cuda: Any, reference: Any, kernels: dict, case: dict, spec: dict
) -> str | None:  # type: ignore[type-arg]
    rng = random.Random(case["seed"])
    data = {a["name"]: input_values(a, rng) for a in case["args"] if a["kind"] == "array"}
    say({"calling": "reference"})
    _, want_arrays = call_function(reference, case, data)
    say({"calling": "kernels"})
    try:
        got_arrays = _launch_all(np, cuda, kernels, case, data)
    except cuda.Error as error:
        return f"the kernels failed: {error}"
    for name, got in got_arrays.items():
        want = np.ctypeslib.as_array(want_arrays[name])[: got.size]
        problem = _first_difference(np, name, want, got, spec["rtol"], spec["atol"])
        if problem:
            return problem
    return None


def main(spec_path: str) -> int:
    with open(spec_path) as handle:
        spec = json.load(handle)
    try:
        import numpy as np
        import pycuda.driver as cuda
    except ImportError as error:
        say({"skip": f"pycuda cannot be imported ({error})"})
        return 0
    try:
        cuda.init()
        if cuda.Device.count() == 0:
            raise cuda.Error("no CUDA device")
        context = cuda.Device(0).make_context()
    except cuda.Error as error:
        say({"skip": f"no GPU for pycuda ({error})"})
        return 0
    try:
        return _run_cases(np, cuda, spec)
    finally:
        try:
            context.pop()
        except cuda.Error:
            pass  # a faulted context: the process ends anyway


def _load_kernels(cuda: Any, spec: dict) -> dict:  # type: ignore[type-arg]
    module = cuda.module_from_file(spec["cubin"])
    names = {launch["kernel"] for case in spec["cases"] for launch in case["launches"]}
    return {name: module.get_function(name) for name in names}


def _run_cases(np: Any, cuda: Any, spec: dict) -> int:  # type: ignore[type-arg]
    try:
        kernels = _load_kernels(cuda, spec)
    except cuda.Error as error:
        # A cubin for another architecture than this GPU's, say: not the candidate's fault.
        say({"skip": f"the kernels cannot be loaded ({error})"})
        return 0
    argtypes = [a["ctype"] if a["kind"] != "array" else "pointer" for a in spec["cases"][0]["args"]]
    reference = load_function(spec["reference"], spec["restype"], argtypes)
    for number, case in enumerate(spec["cases"]):
        problem = _run_case(np, cuda, reference, kernels, case, spec)
        say({"case": number, "sizes": case["sizes"], "problem": problem})
        if problem:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
