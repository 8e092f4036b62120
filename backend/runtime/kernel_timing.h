/* cudaify: kernel and transfer time inside the region, by CUDA events around every kernel
 * launch and every cudaMemcpy(Async), plus the bytes those copies move. Linked into a
 * CUDA timing build with the linker's `--wrap` of the launch and copy entry points, so
 * every launch and copy the program makes passes through here first. Events (not the
 * host clock) time the copies: a copy back waits for the kernels before it, and that
 * wait is compute time, not transfer time.
 * Kernel time is also added up per kernel function (keyed by what the launch names: the
 * function's address, or CUDA 13's kernel handle), with its launches, and written by
 * cudaify_kernel_report as `kernel <name> <launches> <seconds>` lines, the name as
 * cudaFuncGetName gives it (mangled for C++ linkage) or the key in hex where it cannot.
 * Active only when CUDAIFY_KERNEL_TIMING is set (one run of the measurement: the events
 * cost a few microseconds per launch) and only inside the timed region.
 * The same run records what each launch passed: its block shape and the raw bits of each
 * parameter of at most 8 bytes (cudaFuncGetParamInfo gives their places in `args`), and
 * for a parameter that holds a device pointer the bytes from it to its allocation's end
 * (cuMemGetAddressRange). The roofline counts a kernel's work from these where the text
 * does not give its sizes (a vector's size(), a size that changes between calls).
 * Written as `launch <name> <count> <bx> <by> <bz> <param>...` lines, a param as `-`
 * (not read), `<bits>` or `<bits>@<bytes>`; at most RECORDS distinct ones per kernel. */
#include <cuda.h>
#include <cuda_runtime.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <string>
#include <vector>

extern "C" int cudaify_timing_depth(void);
/* The runtime API call (explicit launches, some libraries). */
extern "C" cudaError_t __real_cudaLaunchKernel(const void *, dim3, dim3, void **, size_t,
                                               cudaStream_t);

namespace {
struct Span {
    cudaEvent_t start, stop;
    const void *kernel; /* null for a copy */
};
/* One kernel function's totals; few per program, so a vector searched in order. */
struct PerKernel {
    const void *kernel;
    std::string name;
    long launches;
    double seconds;
};
/* These containers are never destroyed: the report reads them from an exit handler that
 * was registered before they were made, so it runs after their destructors would have
 * (a use after free that killed programs by SIGSEGV in their kernel-timing run). */
std::vector<PerKernel> &per_kernel() {
    static std::vector<PerKernel> *kernels = new std::vector<PerKernel>();
    return *kernels;
}
/* Resolved while CUDA is up (the report runs at exit, after the runtime's teardown). */
std::string kernel_name(const void *kernel) {
#if CUDART_VERSION >= 12030
    const char *name = nullptr;
    if (cudaFuncGetName(&name, kernel) == cudaSuccess && name != nullptr && *name != '\0') {
        std::string text(name);
        /* a symbol's characters only: a handle the call cannot resolve has been seen to
         * give stray bytes, which are no name */
        bool plain = text.size() < 4096;
        for (char c : text)
            plain = plain && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                              (c >= '0' && c <= '9') || c == '_' || c == '$' || c == '.');
        if (plain) return text;
    }
    cudaGetLastError(); /* a failed lookup must not look like the program's error */
#endif
    char hex[32];
    snprintf(hex, sizeof hex, "%p", kernel);
    return std::string(hex);
}
void add_kernel_time(const void *kernel, double seconds) {
    for (PerKernel &known : per_kernel())
        if (known.kernel == kernel) {
            known.launches++;
            known.seconds += seconds;
            return;
        }
    per_kernel().push_back(PerKernel{kernel, kernel_name(kernel), 1, seconds});
}
/* One distinct set of launch values of a kernel, and how many launches passed it. */
struct Record {
    unsigned int block[3];
    std::vector<unsigned long long> bits;
    std::vector<long long> extent; /* bytes to the allocation's end; -1: not a device pointer */
    std::vector<bool> read;
    long count;
};
struct Recorded {
    const void *kernel;
    std::string name;
    std::vector<Record> records;
};
const size_t RECORDS = 256;
const size_t MOST_PARAMETERS = 64;
std::vector<Recorded> &recorded() {
    static std::vector<Recorded> *kernels = new std::vector<Recorded>();
    return *kernels;
}
typedef CUresult (*AddressRange)(CUdeviceptr *, size_t *, CUdeviceptr);
AddressRange address_range() {
    static AddressRange found = [] {
        void *entry = nullptr;
        cudaDriverEntryPointQueryResult status;
        if (cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &entry, 12000,
                                             cudaEnableDefault, &status) != cudaSuccess ||
            status != cudaDriverEntryPointSuccess)
            entry = nullptr;
        cudaGetLastError();
        return (AddressRange)entry;
    }();
    return found;
}
/* The values one launch passes (see the header comment). */
Record launch_values(const void *kernel, dim3 block, void **args) {
    Record record{{block.x, block.y, block.z}, {}, {}, {}, 1};
    AddressRange range = address_range();
    for (size_t index = 0; args != nullptr && index < MOST_PARAMETERS; index++) {
        size_t offset = 0, size = 0;
        if (cudaFuncGetParamInfo(kernel, index, &offset, &size) != cudaSuccess) break;
        unsigned long long bits = 0;
        long long extent = -1;
        bool read = size > 0 && size <= sizeof bits && args[index] != nullptr;
        if (read) memcpy(&bits, args[index], size);
        CUdeviceptr base = 0;
        size_t bytes = 0;
        if (read && size == sizeof(void *) && bits != 0 && range != nullptr &&
            range(&base, &bytes, (CUdeviceptr)bits) == CUDA_SUCCESS && bits >= base &&
            bits - base <= bytes)
            extent = (long long)(base + bytes - bits);
        record.bits.push_back(bits);
        record.extent.push_back(extent);
        record.read.push_back(read);
    }
    cudaGetLastError(); /* the end of the parameters is an error the program must not see */
    return record;
}
void record_launch(const void *kernel, dim3 block, void **args) {
    /* the lookups below end in an error this clears: never where the program has one of
     * its own waiting for its cudaGetLastError (that launch is then not recorded, and its
     * kernel gets no count from the values) */
    if (cudaPeekAtLastError() != cudaSuccess) return;
    Record record = launch_values(kernel, block, args);
    Recorded *entry = nullptr;
    for (Recorded &known : recorded())
        if (known.kernel == kernel) entry = &known;
    if (entry == nullptr) {
        recorded().push_back(Recorded{kernel, kernel_name(kernel), {}});
        entry = &recorded().back();
    }
    for (Record &known : entry->records)
        if (memcmp(known.block, record.block, sizeof record.block) == 0 &&
            known.bits == record.bits && known.read == record.read) {
            known.count++;
            return;
        }
    if (entry->records.size() < RECORDS) entry->records.push_back(record);
}
std::vector<Span> &pending() {
    static std::vector<Span> *spans = new std::vector<Span>();
    return *spans;
}
std::vector<Span> &pending_copies() {
    static std::vector<Span> *spans = new std::vector<Span>();
    return *spans;
}
double &copied_bytes() {
    static double bytes = 0.0;
    return bytes;
}
bool enabled() {
    static const bool on = getenv("CUDAIFY_KERNEL_TIMING") != nullptr;
    return on;
}
/* The gate a kernel's events wait behind. Where the GPU is idle, an event recorded before a
 * launch fires at once, and the launch call's own few microseconds on the host fell inside
 * the kernel's span (a 24 us reduction read as 28-30 us in the program, against ncu's 24):
 * the stream first runs a one-thread kernel that waits until the host has queued the
 * launch and its events (a flag in page-locked memory the GPU reads), so the span starts
 * when the kernel is already queued, as nvbench's blocking kernel does. It waits at most
 * GATE_NANOSECONDS, so that a launch call that itself waits for the GPU cannot deadlock (the
 * span then holds that wait, as without the gate). Not for copies (a cudaMemcpy returns only
 * when done), nor for a stream being captured into a graph, nor under CUDA_LAUNCH_BLOCKING. */
const unsigned long long GATE_NANOSECONDS = 10000000ull;
__global__ void gate_kernel(const volatile unsigned int *open, unsigned int ticket,
                            unsigned long long limit) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    while ((int)(*open - ticket) < 0) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        if (now - start > limit) return;
#if __CUDA_ARCH__ >= 700
        __nanosleep(256);
#endif
    }
}
struct Gate {
    volatile unsigned int *open; /* page-locked, mapped: the host writes, the gate reads */
    unsigned int *device_open;
    unsigned int issued;
};
/* The gate, made at its first use; null where it cannot be (no mapped page-locked memory,
 * or CUDA_LAUNCH_BLOCKING). */
Gate *gate() {
    static Gate *made = [] () -> Gate * {
        const char *blocking = getenv("CUDA_LAUNCH_BLOCKING");
        if (blocking != nullptr && *blocking != '\0' && *blocking != '0') return nullptr;
        void *host = nullptr, *device = nullptr;
        if (cudaHostAlloc(&host, sizeof(unsigned int), cudaHostAllocMapped) != cudaSuccess ||
            cudaHostGetDevicePointer(&device, host, 0) != cudaSuccess) {
            cudaGetLastError(); /* ours: close_gate found none of the program's waiting */
            return nullptr;
        }
        *(volatile unsigned int *)host = 0u;
        return new Gate{(volatile unsigned int *)host, (unsigned int *)device, 0u};
    }();
    return made;
}
/* Queues the gate on `stream`; its ticket, or 0 where the launch goes ungated. */
unsigned int close_gate(cudaStream_t stream) {
    if (cudaPeekAtLastError() != cudaSuccess) return 0u; /* the program's error, not ours */
    cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(stream, &capturing) != cudaSuccess ||
        capturing != cudaStreamCaptureStatusNone) {
        cudaGetLastError();
        return 0u;
    }
    Gate *found = gate();
    if (found == nullptr) return 0u;
    unsigned int ticket = found->issued + 1u;
    if (ticket == 0u) ticket = 1u;
    unsigned int *open = found->device_open;
    unsigned long long limit = GATE_NANOSECONDS;
    void *args[] = {&open, &ticket, &limit};
    if (__real_cudaLaunchKernel((const void *)gate_kernel, dim3(1), dim3(1), args, 0, stream) !=
        cudaSuccess) {
        cudaGetLastError();
        return 0u;
    }
    found->issued = ticket;
    return ticket;
}
void open_gate(unsigned int ticket) {
    if (ticket != 0u) *gate()->open = ticket;
}
/* Events on the launch's stream around the launch itself (a kernel's behind the gate). */
template <typename Launch>
cudaError_t timed(cudaStream_t stream, Launch launch, std::vector<Span> &into = pending(),
                  const void *kernel = nullptr) {
    if (!enabled() || cudaify_timing_depth() == 0) return launch();
    Span span;
    span.kernel = kernel;
    cudaEventCreate(&span.start);
    cudaEventCreate(&span.stop);
    const unsigned int ticket = kernel != nullptr ? close_gate(stream) : 0u;
    cudaEventRecord(span.start, stream);
    cudaError_t result = launch();
    cudaEventRecord(span.stop, stream);
    open_gate(ticket);
    into.push_back(span);
    return result;
}
template <typename Copy>
cudaError_t copied(cudaStream_t stream, size_t count, Copy copy) {
    if (enabled() && cudaify_timing_depth() > 0) copied_bytes() += (double)count;
    return timed(stream, copy, pending_copies());
}
/* Seconds between each span's events (a kernel's also added to its own total); the
 * spans are destroyed and forgotten. */
double drain(std::vector<Span> &spans) {
    double total = 0.0;
    for (const Span &span : spans) {
        float milliseconds = 0.0f;
        if (cudaEventSynchronize(span.stop) == cudaSuccess &&
            cudaEventElapsedTime(&milliseconds, span.start, span.stop) == cudaSuccess) {
            total += 1e-3 * milliseconds;
            if (span.kernel != nullptr) add_kernel_time(span.kernel, 1e-3 * milliseconds);
        }
        cudaEventDestroy(span.start);
        cudaEventDestroy(span.stop);
    }
    spans.clear();
    return total;
}
}  // namespace

/* A launch's values, where kernels are being timed. */
static void note_launch(const void *kernel, dim3 block, void **args) {
    if (enabled() && cudaify_timing_depth() > 0) record_launch(kernel, block, args);
}
extern "C" cudaError_t __wrap_cudaLaunchKernel(const void *f, dim3 grid, dim3 block,
                                               void **args, size_t shared, cudaStream_t stream) {
    note_launch(f, block, args);
    return timed(stream, [&] { return __real_cudaLaunchKernel(f, grid, block, args, shared, stream); },
                 pending(), f);
}

#if CUDART_VERSION >= 13000
/* What <<<...>>> compiles to since CUDA 13 (see crt/host_runtime.h, __cudaLaunch). */
extern "C" cudaError_t __real___cudaLaunchKernel(cudaKernel_t, dim3, dim3, void **, size_t,
                                                 cudaStream_t);
extern "C" cudaError_t __wrap___cudaLaunchKernel(cudaKernel_t k, dim3 grid, dim3 block,
                                                 void **args, size_t shared, cudaStream_t stream) {
    note_launch((const void *)k, block, args);
    return timed(stream, [&] { return __real___cudaLaunchKernel(k, grid, block, args, shared, stream); },
                 pending(), (const void *)k);
}
extern "C" cudaError_t __real___cudaLaunchKernel_ptsz(cudaKernel_t, dim3, dim3, void **, size_t,
                                                      cudaStream_t);
extern "C" cudaError_t __wrap___cudaLaunchKernel_ptsz(cudaKernel_t k, dim3 grid, dim3 block,
                                                      void **args, size_t shared,
                                                      cudaStream_t stream) {
    note_launch((const void *)k, block, args);
    return timed(stream,
                 [&] { return __real___cudaLaunchKernel_ptsz(k, grid, block, args, shared, stream); },
                 pending(), (const void *)k);
}
#endif

/* Copies. The _ptds/_ptsz forms are what the calls compile to under
 * --default-stream per-thread; the plain ones use the legacy default stream. */
extern "C" cudaError_t __real_cudaMemcpy(void *, const void *, size_t, cudaMemcpyKind);
extern "C" cudaError_t __wrap_cudaMemcpy(void *dst, const void *src, size_t count,
                                         cudaMemcpyKind kind) {
    return copied(0, count, [&] { return __real_cudaMemcpy(dst, src, count, kind); });
}
extern "C" cudaError_t __real_cudaMemcpy_ptds(void *, const void *, size_t, cudaMemcpyKind);
extern "C" cudaError_t __wrap_cudaMemcpy_ptds(void *dst, const void *src, size_t count,
                                              cudaMemcpyKind kind) {
    return copied(cudaStreamPerThread, count,
                  [&] { return __real_cudaMemcpy_ptds(dst, src, count, kind); });
}
extern "C" cudaError_t __real_cudaMemcpyAsync(void *, const void *, size_t, cudaMemcpyKind,
                                              cudaStream_t);
extern "C" cudaError_t __wrap_cudaMemcpyAsync(void *dst, const void *src, size_t count,
                                              cudaMemcpyKind kind, cudaStream_t stream) {
    return copied(stream, count,
                  [&] { return __real_cudaMemcpyAsync(dst, src, count, kind, stream); });
}
extern "C" cudaError_t __real_cudaMemcpyAsync_ptsz(void *, const void *, size_t, cudaMemcpyKind,
                                                   cudaStream_t);
extern "C" cudaError_t __wrap_cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count,
                                                   cudaMemcpyKind kind, cudaStream_t stream) {
    return copied(stream, count,
                  [&] { return __real_cudaMemcpyAsync_ptsz(dst, src, count, kind, stream); });
}

/* Seconds of kernel time since the last flush; -1 when kernels are not being timed. */
extern "C" double cudaify_kernel_flush(void) {
    if (!enabled()) return -1.0;
    return drain(pending());
}

/* Seconds of copies since the last flush, and (in *bytes) what they moved; -1 when
 * transfers are not being timed. */
extern "C" double cudaify_transfer_flush(double *bytes) {
    *bytes = copied_bytes();
    copied_bytes() = 0.0;
    if (!enabled()) return -1.0;
    return drain(pending_copies());
}

/* Per kernel function: `kernel <name> <launches> <seconds>`, one line each, in the order
 * of their first launch; nothing when kernels were not timed. */
extern "C" void cudaify_kernel_report(FILE *out) {
    if (!enabled()) return;
    for (const PerKernel &known : per_kernel())
        fprintf(out, "kernel %s %ld %.9f\n", known.name.c_str(), known.launches, known.seconds);
    for (const Recorded &kernel : recorded())
        for (const Record &record : kernel.records) {
            fprintf(out, "launch %s %ld %u %u %u", kernel.name.c_str(), record.count,
                    record.block[0], record.block[1], record.block[2]);
            for (size_t i = 0; i < record.bits.size(); i++) {
                if (!record.read[i])
                    fprintf(out, " -");
                else if (record.extent[i] >= 0)
                    fprintf(out, " %llu@%lld", record.bits[i], record.extent[i]);
                else
                    fprintf(out, " %llu", record.bits[i]);
            }
            fprintf(out, "\n");
        }
}
