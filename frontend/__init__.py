"""The frontend: parsing (libclang, tree-sitter) and analysis (islpy).

Loading order matters for one pairing: with a CUDA build of llama-cpp-python, loading a
model segfaults in a process that imported islpy first, and works when llama_cpp was
imported before it (seen on an H100 node, llama-cpp-python 0.3.36, islpy 2026.2.2). Every
islpy import in cudaify goes through this package, so it imports llama_cpp first whenever
the language model may be used (it is installed and CUDAIFY_SLM is not "off").
"""

import importlib.util
import os

if os.environ.get("CUDAIFY_SLM", "").lower() != "off" and importlib.util.find_spec("llama_cpp"):
    # llama.cpp's OpenMP threads must wait passively (see cudaify.transforms.slm.engine);
    # libgomp reads the setting when it loads, which is now.
    os.environ.setdefault("OMP_WAIT_POLICY", "passive")
    import llama_cpp  # noqa: F401
