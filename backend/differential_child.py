"""Runs in its own process (a crashing candidate takes only this process down): loads the
reference and candidate libraries, calls the function under test in each on the same
random inputs, compares every written array and the return value, prints one JSON line
per case. Standard library only, so it runs under any Python with a clean environment."""

from __future__ import annotations

import ctypes
import json
import math
import random
import sys

SYMBOL = "cudaify_diff_fn"


def load_function(path: str, restype: str | None, argtypes: list[str]):  # type: ignore[no-untyped-def]
    library = ctypes.CDLL(path)
    address = ctypes.c_void_p.in_dll(library, SYMBOL).value
    if address is None:
        raise SystemExit(f"{path}: {SYMBOL} is null")
    kind = ctypes.CFUNCTYPE(
        getattr(ctypes, restype) if restype else None,
        *(ctypes.c_void_p if t == "pointer" else getattr(ctypes, t) for t in argtypes),
    )
    return kind(address)


def input_values(arg: dict, rng: random.Random) -> list:  # type: ignore[type-arg]
    if arg["integer"]:
        low, high = arg["range"]
        return [rng.randrange(low, high) for _ in range(arg["length"])]
    return [rng.uniform(0.5, 1.5) for _ in range(arg["length"])]


def _close(expected: float, actual: float, rtol: float, atol: float) -> bool:
    if isinstance(expected, int) and isinstance(actual, int):
        return expected == actual
    if math.isnan(expected) or math.isnan(actual):
        return math.isnan(expected) and math.isnan(actual)  # synthetic inputs: same NaN is fine
    if math.isinf(expected) or math.isinf(actual):
        return expected == actual
    return abs(expected - actual) <= atol + rtol * abs(expected)


def call_function(function, case: dict, data: dict):  # type: ignore[no-untyped-def]
    arrays, args = {}, []
    for arg in case["args"]:
        if arg["kind"] == "array":
            kind = getattr(ctypes, arg["ctype"]) * max(1, arg["length"])
            arrays[arg["name"]] = kind(*data[arg["name"]])
            args.append(ctypes.cast(arrays[arg["name"]], ctypes.c_void_p))
        else:
            args.append(getattr(ctypes, arg["ctype"])(arg["value"]))
    result = function(*args)
    return result, arrays


def _run_case(reference, candidate, case: dict, rtol: float, atol: float) -> str | None:  # type: ignore[no-untyped-def]
    rng = random.Random(case["seed"])
    data = {a["name"]: input_values(a, rng) for a in case["args"] if a["kind"] == "array"}
    say({"calling": "reference"})
    want, want_arrays = call_function(reference, case, data)
    say({"calling": "candidate"})
    got, got_arrays = call_function(candidate, case, data)
    for arg in case["args"]:
        if arg["kind"] != "array" or not arg["compare"]:
            continue
        name = arg["name"]
        for index in range(arg["length"]):
            w, g = want_arrays[name][index], got_arrays[name][index]
            if not _close(w, g, rtol, atol):
                return f"{name}[{index}] is {g!r}, expected {w!r}"
    if case["returns"] and not _close(want, got, rtol, atol):
        return f"returned {got!r}, expected {want!r}"
    return None


def say(record: dict) -> None:  # type: ignore[type-arg]
    # Flushed at once: if the next call crashes this process, the parent knows who did it.
    print(json.dumps(record), flush=True)


def main(spec_path: str) -> int:
    with open(spec_path) as handle:
        spec = json.load(handle)
    argtypes = [a["ctype"] if a["kind"] != "array" else "pointer" for a in spec["cases"][0]["args"]]
    reference = load_function(spec["reference"], spec["restype"], argtypes)
    candidate = load_function(spec["candidate"], spec["restype"], argtypes)
    for number, case in enumerate(spec["cases"]):
        problem = _run_case(reference, candidate, case, spec["rtol"], spec["atol"])
        say({"case": number, "sizes": case["sizes"], "problem": problem})
        if problem:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
