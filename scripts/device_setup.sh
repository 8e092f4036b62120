#!/usr/bin/env bash
# On a GPU node with no package index: install cudaify and its wheels from a carried folder
# into a private site directory. Usage: source scripts/device_setup.sh WHEEL_DIR
# Then run the tests as `python3 -P -m pytest ...`: without -P, `-m` puts the repository
# root first on sys.path and `import cudaify` finds its cudaify/ folder, not the package
# (No module named 'cudaify.frontend').
set -e
wheels=${1:-.carry/wheels}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site "$wheels"/*.whl
# --upgrade: on a machine kept warm between calls, pip --target otherwise keeps the package
# it installed first and silently runs that older code
python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-cache-dir --upgrade \
    --target /tmp/site-cudaify .
export PYTHONPATH=/tmp/site-cudaify:/tmp/site${PYTHONPATH:+:$PYTHONPATH}
export PATH=/tmp/site-cudaify/bin:$PATH
set +e
