/* The CUDA runtime API the generated host code calls, as both emulators provide it: memory
   is host memory, copies are memcpy, every call succeeds. */
typedef int cudaError_t;
enum { cudaSuccess = 0 };
enum cudaMemcpyKind { cudaMemcpyHostToHost, cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost, cudaMemcpyDeviceToDevice };
inline const char *cudaGetErrorString(cudaError_t) { return "emulated error"; }
inline cudaError_t cudaMalloc(void **p, size_t n) { *p = std::malloc(n ? n : 1); return 0; }
inline cudaError_t cudaFree(void *p) { std::free(p); return 0; }
inline cudaError_t cudaGetDeviceCount(int *count) { *count = 1; return 0; }
/* The runtime's stream-ordered pool (cudaify_malloc): an emulated device that has one. */
typedef void *cudaStream_t;
typedef void *cudaMemPool_t;
enum cudaDeviceAttr { cudaDevAttrMultiProcessorCount = 16, cudaDevAttrMemoryPoolsSupported = 115 };
/* the emulated device's multiprocessors (gemm_tiling sizes its tiles by them) */
#ifndef EMULATED_PROCESSORS
#define EMULATED_PROCESSORS 132
#endif
enum cudaMemPoolAttr { cudaMemPoolAttrReleaseThreshold = 4 };
enum { cudaErrorMemoryAllocation = 2 };
inline cudaError_t cudaGetDevice(int *device) { *device = 0; return 0; }
inline cudaError_t cudaDeviceGetAttribute(int *value, cudaDeviceAttr attribute, int)
{
    *value = attribute == cudaDevAttrMultiProcessorCount ? EMULATED_PROCESSORS : 1;
    return 0;
}
inline cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *pool, int) { *pool = nullptr; return 0; }
inline cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t, cudaMemPoolAttr, void *) { return 0; }
inline cudaError_t cudaMemPoolTrimTo(cudaMemPool_t, size_t) { return 0; }
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return 0; }
inline cudaError_t cudaMallocAsync(void **p, size_t n, cudaStream_t) { return cudaMalloc(p, n); }
inline cudaError_t cudaFreeAsync(void *p, cudaStream_t) { return cudaFree(p); }
inline cudaError_t cudaMemcpy(void *d, const void *s, size_t n, cudaMemcpyKind) { std::memcpy(d, s, n); return 0; }
enum { cudaHostRegisterDefault = 0 };
inline cudaError_t cudaHostRegister(void *, size_t, unsigned int) { return 0; }
inline cudaError_t cudaHostUnregister(void *) { return 0; }
inline cudaError_t cudaMemset(void *d, int v, size_t n) { std::memset(d, v, n); return 0; }
/* A __device__ variable is a host variable here: its symbol is the variable itself. */
template <class T> inline cudaError_t cudaMemcpyToSymbol(T &symbol, const void *src, size_t n, size_t offset = 0, int = 0)
{ std::memcpy(reinterpret_cast<char *>(&symbol) + offset, src, n); return 0; }
inline cudaError_t cudaGetLastError() { return 0; }
inline cudaError_t cudaDeviceSynchronize() { return 0; }
