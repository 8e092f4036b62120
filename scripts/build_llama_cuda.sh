#!/usr/bin/env bash
# Build llama-cpp-python with its CUDA backend on an offline GPU node, so the local model runs
# on the GPU (`--gpu-layers -1`). Needs the CUDA toolkit (nvcc, cuBLAS), cmake, ninja and
# scikit-build-core there; the sdist travels with you.
#
#   scripts/build_llama_cuda.sh SDIST.tar.(gz|xz) OUTDIR [ARCH]
#
# ARCH defaults to the first GPU's compute capability (e.g. 90). The wheel lands in OUTDIR.
# Where the toolkit has no cuBLAS of its own, the one from pip's nvidia-cublas is used.
set -euo pipefail
sdist=$1
outdir=$2
arch=${3:-$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)}
work=$(mktemp -d)
tar xf "$sdist" -C "$work"
src=$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -1)

cuda_root=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")
extra=()
if ! find "$cuda_root" -name 'libcublas.so*' 2>/dev/null | grep -q .; then
    pip_cublas=$(python3 - <<'EOF'
import importlib.util, pathlib
spec = importlib.util.find_spec("nvidia")
for root in spec.submodule_search_locations if spec else []:
    for lib in pathlib.Path(root).rglob("libcublas.so*"):
        print(lib.parent.parent)
        raise SystemExit
EOF
)
    [ -n "$pip_cublas" ] || { echo "no cuBLAS found in $cuda_root or pip's nvidia packages" >&2; exit 1; }
    shim=$work/cublas
    mkdir -p "$shim/lib"
    for lib in "$pip_cublas"/lib/libcublas*.so.*; do
        base=$(basename "$lib")
        ln -sf "$lib" "$shim/lib/$base"
        ln -sf "$lib" "$shim/lib/${base%%.so.*}.so"
    done
    extra+=("-DCUDA_cublas_LIBRARY=$shim/lib/libcublas.so"
            "-DCUDA_cublasLt_LIBRARY=$shim/lib/libcublasLt.so"
            "-DCMAKE_CUDA_FLAGS=-I$pip_cublas/include"
            "-DCMAKE_CXX_FLAGS=-I$pip_cublas/include"
            "-DCMAKE_SHARED_LINKER_FLAGS=-Wl,-rpath,$pip_cublas/lib")
    echo "using pip's cuBLAS from $pip_cublas"
fi

export CMAKE_ARGS="-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=$arch -DGGML_CUDA_FA=off \
-DGGML_CUDA_NCCL=off -DLLAVA_BUILD=off ${extra[*]}"
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}
mkdir -p "$outdir"
python3 -m pip wheel --no-deps --no-build-isolation --no-index -w "$outdir" "$src"
rm -rf "$work"
