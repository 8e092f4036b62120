"""cudaify: sequential C/C++ in, verified CUDA out."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("cudaify")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0+unknown"
