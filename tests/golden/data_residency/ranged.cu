/* Range-limited barriers: the host loops and element reads between launches touch only
   the elements they name, so the arrays they do not name stay on the device. relax()'s
   `changed` flag is a local whose address comes back every call: it keeps its copies. */
#include <stdio.h>
#include <stdlib.h>

#define N 4096
#define DEG 3

/* ---- cudaify runtime helpers ---- */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime.h>

/* Every CUDA call is checked: on failure, say where and why on stderr and exit non-zero.
   A cudaMalloc that runs out of memory is asked once more after the stream-ordered pool
   (below) gives back the freed buffers it keeps: they are free to the program, not to the
   driver. */
static int cudaify_give_back_pool(void);
#define CUDAIFY_CHECK(call)                                                              \
    do {                                                                                 \
        cudaError_t cudaify_status_ = (call);                                            \
        if (cudaify_status_ == cudaErrorMemoryAllocation &&                              \
            strncmp(#call, "cudaMalloc(", 11) == 0 && cudaify_give_back_pool())          \
            cudaify_status_ = (call);                                                    \
        if (cudaify_status_ != cudaSuccess) {                                            \
            fprintf(stderr, "%s:%d: CUDA error: %s\n", __FILE__, __LINE__,               \
                    cudaGetErrorString(cudaify_status_));                                \
            exit(EXIT_FAILURE);                                                          \
        }                                                                                \
    } while (0)

/* The CUDA context takes 0.2-0.4 s to create: a thread of its own creates it from the
   program's start, while main's host code runs, and the first CUDA call waits for it. The
   runtime is asked its device count first, on the main thread, so that its own exit handler
   is registered before the one that joins the thread: an exit while the context is being
   made waits for it instead of tearing the runtime down under it. */
#include <pthread.h>
static pthread_t cudaify_context_thread;
static int cudaify_context_started = 0;
static void *cudaify_make_context(void *unused)
{
    (void)unused;
    cudaFree(0); /* an error here (no device) surfaces at the program's first CUDA call */
    return NULL;
}
static void cudaify_join_context(void)
{
    if (cudaify_context_started)
        pthread_join(cudaify_context_thread, NULL);
}
__attribute__((constructor)) static void cudaify_start_context(void)
{
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0)
        return; /* no device: the program's first CUDA call says so */
    if (atexit(cudaify_join_context) == 0 &&
        pthread_create(&cudaify_context_thread, NULL, cudaify_make_context, NULL) == 0)
        cudaify_context_started = 1;
}

/* Device buffers that a call allocates and frees come from the device's memory pool, in
   stream order: a cudaFree waits for the whole device, and a function called in a loop
   would ask the driver for its buffers again on every call. The pool keeps what is freed
   (its release threshold raised to everything), so the next call's buffers of the same
   sizes are served from it. Allocations, frees, copies and launches all go to the legacy
   default stream, so they stay in program order. Devices without memory pools get
   cudaMalloc and cudaFree. The device is asked at the first allocation, not in the context
   thread: that needs no synchronisation with it, and a function loaded from a shared
   library (the region timing) asks the context current at its first call. */
#include <stdint.h>
static int cudaify_async_pool = -1; /* unknown until the first allocation */
static inline int cudaify_has_async_pool(void)
{
    if (cudaify_async_pool >= 0)
        return cudaify_async_pool;
    int device = 0, supported = 0;
    cudaMemPool_t pool;
    uint64_t keep = UINT64_MAX;
    cudaify_async_pool =
        cudaGetDevice(&device) == cudaSuccess &&
        cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, device) ==
            cudaSuccess &&
        supported && cudaDeviceGetDefaultMemPool(&pool, device) == cudaSuccess &&
        cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep) == cudaSuccess;
    if (!cudaify_async_pool)
        (void)cudaGetLastError(); /* the plain calls say what is wrong, if anything is */
    return cudaify_async_pool;
}
static inline cudaError_t cudaify_malloc(void **ptr, size_t bytes)
{
    if (bytes == 0 || !cudaify_has_async_pool())
        return cudaMalloc(ptr, bytes); /* 0 bytes: NULL, as cudaMalloc gives */
    cudaError_t status = cudaMallocAsync(ptr, bytes, 0);
    if (status != cudaErrorMemoryAllocation)
        return status;
    /* the pool may hold freed buffers of other sizes: give them back and ask once more */
    (void)cudaify_give_back_pool();
    return cudaMallocAsync(ptr, bytes, 0);
}
/* The pool's freed buffers back to the driver (once every free queued has run), after an
   allocation ran out of memory; 0 where no pool is in use, so there is nothing to retry. */
static int cudaify_give_back_pool(void)
{
    if (cudaify_async_pool != 1)
        return 0;
    (void)cudaGetLastError(); /* the allocation's error */
    int device = 0;
    cudaMemPool_t pool;
    return cudaStreamSynchronize(0) == cudaSuccess && cudaGetDevice(&device) == cudaSuccess &&
           cudaDeviceGetDefaultMemPool(&pool, device) == cudaSuccess &&
           cudaMemPoolTrimTo(pool, 0) == cudaSuccess;
}
static inline cudaError_t cudaify_free(void *ptr)
{
    if (ptr == NULL)
        return cudaSuccess;
    return cudaify_has_async_pool() ? cudaFreeAsync(ptr, 0) : cudaFree(ptr);
}

/* Iterations of `for (v = first; v < bound; v += step)` (`<=` when inclusive; a negative
   step counts down with `>` / `>=`). */
static inline long long cudaify_trips(long long first, long long bound, long long step,
                                      int inclusive)
{
    long long span = step > 0 ? bound - first : first - bound;
    long long stride = step > 0 ? step : -step;
    if (inclusive) span += 1;
    return span > 0 ? (span + stride - 1) / stride : 0;
}

/* The iterations along one grid dimension that get a thread of their own beside `across`
   threads along the lower dimensions (1 for x). A grid of one thread per element costs the
   GPU a block scheduled per 256 elements: on a 14400 x 17600 array (990,000 blocks) that is
   more than the stores (1.47 ms against 0.63 ms on an H200), and a 1-D map over 2^26 floats
   runs 1.25x faster in 16,384 blocks than in 262,144. So a grid holds at most
   CUDAIFY_GRID_THREADS threads (2^22: 15 waves of a 132-processor H100 or H200, more on
   smaller GPUs), never fewer than one row, and the kernels' grid-stride loops cover the
   rest. */
#ifndef CUDAIFY_GRID_THREADS
#define CUDAIFY_GRID_THREADS (1LL << 22)
#endif
static inline long long cudaify_rows(long long trips, long long across)
{
    long long rows = CUDAIFY_GRID_THREADS / (across > 1 ? across : 1);
    if (rows < 1)
        rows = 1;
    return trips < rows ? trips : rows;
}

/* Blocks that give every iteration its own thread, capped at what the grid dimension
   holds (the kernels' grid-stride loops cover the rest). */
static inline unsigned int cudaify_blocks(long long trips, unsigned int threads,
                                          unsigned int most)
{
    long long blocks = (trips + threads - 1) / threads;
    return (unsigned int)(blocks < 1 ? 1 : (blocks > (long long)most ? most : blocks));
}

/* ---- cudaify data residency ---- */
/* A present table: inside a residency scope a host range mapped once stays on the device;
   later maps of a range it contains copy nothing, and the scope's end (or a host statement
   that touches memory) copies written ranges back. Outside a scope a map is a plain copy
   in and its unmap a copy back. Device buffers go back to a pool, so repeated calls do not
   allocate. All work is on the default stream, in order. */
typedef struct {
    const char *host;
    size_t bytes;
    char *device;
    size_t capacity;
    int dirty;
} cudaify_entry;

typedef struct {
    cudaify_entry *items;
    int count, room;
} cudaify_list;

static cudaify_list cudaify_present; /* mapped in the open scope */
static cudaify_list cudaify_retired; /* replaced by a larger range; released at the scope's end */
static cudaify_list cudaify_pool;    /* free device buffers */
static int cudaify_depth = 0;

#define CUDAIFY_POOLED 64

/* Pinned host memory where it pays: inside a scope, a host range of at least
   CUDAIFY_PIN_BYTES that is copied a second time (the host rewrote it, or reads it back
   again) is page-locked, so that its later copies run at the link's full speed instead
   of through a staging buffer. Registrations end when the host may free memory (a write
   barrier for all of memory, the scope's end). */
#define CUDAIFY_PIN_BYTES ((size_t)4 << 20)
static cudaify_list cudaify_copied; /* large ranges copied once in this scope */
static cudaify_list cudaify_pinned; /* registered ranges */

static void cudaify_push(cudaify_list *list, cudaify_entry entry)
{
    if (list->count == list->room) {
        int room = list->room ? 2 * list->room : 32;
        cudaify_entry *items =
            (cudaify_entry *)realloc(list->items, (size_t)room * sizeof(cudaify_entry));
        if (items == NULL) {
            fprintf(stderr, "cudaify: out of host memory for the present table\n");
            exit(EXIT_FAILURE);
        }
        list->items = items;
        list->room = room;
    }
    list->items[list->count++] = entry;
}

/* Whether an entry's host range and host bytes [low, high) share a byte. */
static int cudaify_meets(const cudaify_entry *entry, const char *low, const char *high)
{
    return entry->host < high && low < entry->host + entry->bytes;
}

static int cudaify_overlaps(const cudaify_list *list, const char *host, size_t bytes)
{
    for (int i = 0; i < list->count; i++)
        if (cudaify_meets(&list->items[i], host, host + bytes))
            return 1;
    return 0;
}

/* Host bytes [host, host + bytes) are about to be copied: the second copy of the same
   large range in a scope page-locks it first. A range whose pages another registration
   holds stays pageable. */
static void cudaify_copying(const char *host, size_t bytes)
{
    if (cudaify_depth == 0 || bytes < CUDAIFY_PIN_BYTES)
        return;
    if (cudaify_overlaps(&cudaify_pinned, host, bytes))
        return;
    for (int i = 0; i < cudaify_copied.count; i++) {
        if (cudaify_copied.items[i].host != host || cudaify_copied.items[i].bytes != bytes)
            continue;
        cudaify_copied.items[i] = cudaify_copied.items[--cudaify_copied.count];
        if (cudaHostRegister((void *)host, bytes, cudaHostRegisterDefault) == cudaSuccess) {
            cudaify_entry pinned = {host, bytes, NULL, 0, 0};
            cudaify_push(&cudaify_pinned, pinned);
        } else {
            (void)cudaGetLastError();
        }
        return;
    }
    cudaify_entry seen = {host, bytes, NULL, 0, 0};
    cudaify_push(&cudaify_copied, seen);
}

/* cudaify's own timing builds link a timing runtime: there the copies back and the
   unpinning that host statements ask for count as the program's GPU work, as the calls of
   its offloaded functions do (inside one they are counted already). Elsewhere these weak
   symbols are null and nothing is called. */
#ifdef __cplusplus
extern "C" void cudaify_timing_enter(void) __attribute__((weak));
extern "C" void cudaify_timing_leave(void) __attribute__((weak));
#else
void cudaify_timing_enter(void) __attribute__((weak));
void cudaify_timing_leave(void) __attribute__((weak));
#endif

static void cudaify_unpin_all(void)
{
    if (cudaify_pinned.count > 0 && cudaify_timing_enter)
        cudaify_timing_enter();
    int pinned = cudaify_pinned.count;
    for (int i = 0; i < cudaify_pinned.count; i++)
        CUDAIFY_CHECK(cudaHostUnregister((void *)cudaify_pinned.items[i].host));
    cudaify_pinned.count = 0;
    cudaify_copied.count = 0;
    if (pinned > 0 && cudaify_timing_leave)
        cudaify_timing_leave();
}

/* Device bytes back to host bytes [host, host + bytes). */
static void cudaify_copy_back(const char *host, const char *device, size_t bytes)
{
    if (cudaify_timing_enter)
        cudaify_timing_enter();
    cudaify_copying(host, bytes);
    CUDAIFY_CHECK(cudaMemcpy((void *)host, device, bytes, cudaMemcpyDeviceToHost));
    if (cudaify_timing_leave)
        cudaify_timing_leave();
}

static char *cudaify_device_alloc(size_t bytes, size_t *capacity)
{
    int best = -1;
    for (int i = 0; i < cudaify_pool.count; i++) {
        size_t have = cudaify_pool.items[i].capacity;
        /* reuse a buffer at most twice the size asked for */
        if (have >= bytes && have / 2 <= bytes &&
            (best < 0 || have < cudaify_pool.items[best].capacity))
            best = i;
    }
    if (best >= 0) {
        cudaify_entry found = cudaify_pool.items[best];
        cudaify_pool.items[best] = cudaify_pool.items[--cudaify_pool.count];
        *capacity = found.capacity;
        return found.device;
    }
    void *device = NULL;
    size_t asked = bytes > 0 ? bytes : 1;
    if (cudaMalloc(&device, asked) != cudaSuccess) {
        (void)cudaGetLastError(); /* out of memory: give the pool back and try again */
        while (cudaify_pool.count > 0)
            CUDAIFY_CHECK(cudaFree(cudaify_pool.items[--cudaify_pool.count].device));
        CUDAIFY_CHECK(cudaMalloc(&device, asked));
    }
    *capacity = asked;
    return (char *)device;
}

static void cudaify_device_release(char *device, size_t capacity)
{
    if (cudaify_pool.count == CUDAIFY_POOLED) {
        CUDAIFY_CHECK(cudaFree(device));
        return;
    }
    cudaify_entry pooled = {NULL, 0, device, capacity, 0};
    cudaify_push(&cudaify_pool, pooled);
}

static void cudaify_release_copy(const cudaify_entry *entry)
{
    cudaify_device_release(entry->device - ((size_t)entry->host & 255u), entry->capacity);
}

/* Host memory is about to be read: copy written ranges back; device copies stay valid. */
static void cudaify_host_reads(void)
{
    for (int i = 0; i < cudaify_present.count; i++) {
        cudaify_entry *entry = &cudaify_present.items[i];
        if (entry->dirty)
            cudaify_copy_back(entry->host, entry->device, entry->bytes);
        entry->dirty = 0;
    }
}

/* The host is about to read bytes [ptr, ptr + bytes): copy back only the written bytes
   there. A range read whole is clean afterwards; one read in part stays written. */
static void cudaify_host_reads_at(const void *ptr, size_t bytes)
{
    const char *low = (const char *)ptr, *high = low + bytes;
    for (int i = 0; i < cudaify_present.count; i++) {
        cudaify_entry *entry = &cudaify_present.items[i];
        const char *from = entry->host > low ? entry->host : low;
        const char *to = entry->host + entry->bytes < high ? entry->host + entry->bytes : high;
        if (!entry->dirty || from >= to)
            continue;
        cudaify_copy_back(from, entry->device + (from - entry->host), (size_t)(to - from));
        if (from == entry->host && to == entry->host + entry->bytes)
            entry->dirty = 0;
    }
}

/* Bytes of `count` elements of `size` bytes; none when the count is not positive (a loop
   that runs no iteration touches nothing). */
static size_t cudaify_bytes(long long count, size_t size)
{
    return count > 0 ? (size_t)count * size : 0;
}

/* Host memory may be written or freed: copy written ranges back and forget every
   mapping, so that the next map copies the host's values again. */
static void cudaify_host_writes(void)
{
    cudaify_host_reads();
    for (int i = 0; i < cudaify_present.count; i++)
        cudaify_release_copy(&cudaify_present.items[i]);
    for (int i = 0; i < cudaify_retired.count; i++)
        cudaify_release_copy(&cudaify_retired.items[i]);
    cudaify_present.count = 0;
    cudaify_retired.count = 0;
    cudaify_unpin_all();
}

/* The host is about to write bytes [ptr, ptr + bytes): copy back and forget only the
   mappings that overlap them. */
static void cudaify_host_writes_at(const void *ptr, size_t bytes)
{
    const char *low = (const char *)ptr, *high = low + bytes;
    if (bytes == 0)
        return;
    for (int i = 0; i < cudaify_present.count;) {
        cudaify_entry entry = cudaify_present.items[i];
        if (!cudaify_meets(&entry, low, high)) {
            i++;
            continue;
        }
        if (entry.dirty)
            cudaify_copy_back(entry.host, entry.device, entry.bytes);
        cudaify_release_copy(&entry);
        cudaify_present.items[i] = cudaify_present.items[--cudaify_present.count];
    }
}

/* The host never reads the array at `host` again (it is only freed): its device copy is
   dropped without the copy back. */
static void cudaify_discard(const void *host)
{
    for (int i = 0; i < cudaify_present.count;) {
        cudaify_entry entry = cudaify_present.items[i];
        if (entry.host != (const char *)host) {
            i++;
            continue;
        }
        cudaify_release_copy(&entry);
        cudaify_present.items[i] = cudaify_present.items[--cudaify_present.count];
    }
}

static void cudaify_scope_begin(void) { cudaify_depth++; }

static void cudaify_scope_end(void)
{
    if (--cudaify_depth == 0)
        cudaify_host_writes();
}

/* A device buffer for host bytes [low, high), filled from them when `copy` is set (a
   launch that writes every byte of the range first needs no copy of the old values). */
static char *cudaify_copy_in(const char *low, const char *high, size_t *capacity, int copy)
{
    /* the copy sits at the host address's offset in a 256-byte line, so that every
       pointer into it (a union of ranges included) is aligned as its host twin is */
    size_t skew = (size_t)low & 255u;
    char *base = cudaify_device_alloc((size_t)(high - low) + skew, capacity);
    if (copy) {
        cudaify_copying(low, (size_t)(high - low));
        CUDAIFY_CHECK(cudaMemcpy(base + skew, low, (size_t)(high - low), cudaMemcpyHostToDevice));
    }
    return base + skew;
}

/* The device copy of host bytes [host, host + bytes). Written ranges are copied in too:
   the elements a kernel does not write keep their values when the range is copied back.
   `reads` 0 says the launch writes every byte of the range before reading any: a range
   not yet present then gets no copy. */
static void *cudaify_map(const void *host_ptr, size_t bytes, int reads, int writes)
{
    const char *host = (const char *)host_ptr, *end = host + bytes;
    size_t capacity = 0;
    if (cudaify_depth == 0)
        return cudaify_copy_in(host, end, &capacity, reads);
    for (int i = 0; i < cudaify_present.count; i++) {
        cudaify_entry *entry = &cudaify_present.items[i];
        if (entry->host <= host && end <= entry->host + entry->bytes) {
            entry->dirty |= writes;
            return entry->device + (host - entry->host);
        }
    }
    /* Mapped ranges that overlap this one lie in the same allocation: copy them back and
       map their union. The replaced buffers live until the scope ends, since an argument
       of the launch being prepared may point into one. */
    const char *low = host, *high = end;
    for (int i = 0; i < cudaify_present.count;) {
        cudaify_entry entry = cudaify_present.items[i];
        if (!cudaify_meets(&entry, host, end)) {
            i++;
            continue;
        }
        if (entry.dirty)
            cudaify_copy_back(entry.host, entry.device, entry.bytes);
        if (entry.host < low) low = entry.host;
        if (entry.host + entry.bytes > high) high = entry.host + entry.bytes;
        cudaify_push(&cudaify_retired, entry);
        cudaify_present.items[i] = cudaify_present.items[--cudaify_present.count];
    }
    cudaify_entry mapped = {low, (size_t)(high - low), NULL, 0, writes};
    /* a union with earlier ranges holds their bytes: those are copied in whatever `reads` */
    int copy = reads || low != host || high != end;
    mapped.device = cudaify_copy_in(low, high, &mapped.capacity, copy);
    cudaify_push(&cudaify_present, mapped);
    return mapped.device + (host - low);
}

/* A launch is done with a mapped range: outside a scope, copy it back when the kernel
   wrote it and give the buffer back; inside one, the scope's end does that. */
static void cudaify_unmap(const void *host, void *device, size_t bytes, int writes)
{
    if (cudaify_depth > 0)
        return;
    if (writes)
        CUDAIFY_CHECK(cudaMemcpy((void *)host, device, bytes, cudaMemcpyDeviceToHost));
    cudaify_device_release((char *)device - ((size_t)host & 255u), bytes + ((size_t)host & 255u));
}

/* Loop nest 'v' of relax() (line 14): one thread per iteration. */
__global__ void relax_kernel(int *dist, int *adj, int level, long long trips_v, int *changed_flag, int changed_in)
{
    int changed = changed_in;
    for (long long t_v = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_v < trips_v;
         t_v += (long long)blockDim.x * gridDim.x) {
        int v = (int)t_v;
        if (dist[v] != level)
            continue;
        for (int k = DEG * v; k < DEG * v + DEG; k++) {
            int w = adj[k];
            if (dist[w] < 0) {
                dist[w] = level + 1;
                changed = 1;
            }
        }
    }
    if (changed != changed_in) *changed_flag = changed;
}

/* returns 1 when some node got the next level */
int relax(int n, const int *adj, int level, int *dist)
{
    int changed = 0;
    {
        /* cudaify: this loop nest runs on the GPU as relax_kernel */
        const long long trips_v = cudaify_trips(0, n, 1, 0);
        if (!(((level >= 0)))) {
            cudaify_host_writes();
            for (int v = 0; v < n; v++) {
                if (dist[v] != level)
                    continue;
                for (int k = DEG * v; k < DEG * v + DEG; k++) {
                    int w = adj[k];
                    if (dist[w] < 0) {
                        dist[w] = level + 1;
                        changed = 1;
                    }
                }
            }
        } else if (trips_v > 0) {
            int *d_dist = (int *)cudaify_map(dist, (size_t)(n) * sizeof(int), 1, 1);
            int *d_adj = (int *)cudaify_map(adj, (size_t)((3 * (long long)n)) * sizeof(int), 1, 0);
            int *d_changed_flag = NULL;
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_changed_flag, sizeof(int)));
            CUDAIFY_CHECK(cudaMemcpy(d_changed_flag, &changed, sizeof(int), cudaMemcpyHostToDevice));
            const dim3 block(256);
            const dim3 grid(cudaify_blocks(cudaify_rows(trips_v, 1), 256, 2147483647u));
            relax_kernel<<<grid, block>>>(d_dist, d_adj, level, trips_v, d_changed_flag, changed);
            CUDAIFY_CHECK(cudaGetLastError());
            CUDAIFY_CHECK(cudaMemcpy(&changed, d_changed_flag, sizeof(int), cudaMemcpyDeviceToHost));
            CUDAIFY_CHECK(cudaify_free(d_changed_flag));
            cudaify_unmap(dist, d_dist, (size_t)(n) * sizeof(int), 1);
            cudaify_unmap(adj, d_adj, (size_t)((3 * (long long)n)) * sizeof(int), 0);
        }
    }
    return changed;
}

/* Loop nest 'i' of smooth() (line 30): one thread per iteration. */
__global__ void smooth_kernel(float *out, float *in, long long trips_i)
{
    for (long long t_i = blockIdx.x * (long long)blockDim.x + threadIdx.x; t_i < trips_i;
         t_i += (long long)blockDim.x * gridDim.x) {
        int i = (int)(1 + t_i);
        out[i] = 0.25f * in[i - 1] + 0.5f * in[i] + 0.25f * in[i + 1];
    }
}

void smooth(int n, const float *in, float *out)
{
    {
        /* cudaify: this loop nest runs on the GPU as smooth_kernel */
        const long long trips_i = cudaify_trips(1, n - 1, 1, 0);
        if (trips_i > 0) {
            float *d_out = (float *)cudaify_map(out + (1), (size_t)((n - 2)) * sizeof(float), 1, 1);
            float *d_in = (float *)cudaify_map(in, (size_t)(n) * sizeof(float), 1, 0);
            const dim3 block(256);
            const dim3 grid(cudaify_blocks(cudaify_rows(trips_i, 1), 256, 2147483647u));
            smooth_kernel<<<grid, block>>>(d_out - (1), d_in, trips_i);
            CUDAIFY_CHECK(cudaGetLastError());
            cudaify_unmap(out + (1), d_out, (size_t)((n - 2)) * sizeof(float), 1);
            cudaify_unmap(in, d_in, (size_t)(n) * sizeof(float), 0);
        }
    }
}

int main(void)
{
    int *adj = (int *)malloc(sizeof(int) * N * DEG);
    int *dist = (int *)malloc(sizeof(int) * N);
    float *x = (float *)malloc(sizeof(float) * N);
    float *y = (float *)malloc(sizeof(float) * N);
    if (!adj || !dist || !x || !y)
        return 1;
    unsigned int state = 7u;
    for (int e = 0; e < N * DEG; e++) {
        state = state * 1664525u + 1013904223u;
        adj[e] = (int)((state >> 8) % N);
    }
    for (int i = 0; i < N; i++)
        x[i] = y[i] = (float)(i % 17);
    cudaify_scope_begin();
    for (int s = 0; s < 3; s++) {
        cudaify_host_writes_at(dist, cudaify_bytes(N, sizeof(dist[0])));
        for (int v = 0; v < N; v++)
            dist[v] = -1;
        cudaify_host_writes_at(dist + (s * 101), cudaify_bytes(1, sizeof(dist[0])));
        dist[s * 101] = 0;
        int level = 0;
        while (relax(N, adj, level, dist))
            level++;
        long long per_level[16] = {0};
        cudaify_host_reads_at(dist, cudaify_bytes(N, sizeof(dist[0])));
        for (int v = 0; v < N; v++)
            if (dist[v] >= 0)
                per_level[dist[v] < 15 ? dist[v] : 15]++;
        smooth(N, x, y);
        smooth(N, y, x);
        double edge = 0.0;
        cudaify_host_reads_at(x + (1 - 1), cudaify_bytes((8 + 1) - 1, sizeof(x[0])));
        cudaify_host_reads_at(x + (1 + 1), cudaify_bytes((8 + 1) - 1, sizeof(x[0])));
        for (int i = 1; i <= 8; i++)
            edge += x[i - 1] + x[i + 1];
        cudaify_host_writes_at(x + (s + 1), cudaify_bytes(1, sizeof(x[0])));
        x[s + 1] = 1.0f;
        cudaify_host_reads_at(y + (N / 2), cudaify_bytes(1, sizeof(y[0])));
        printf("source %d: depth=%d level1=%lld edge=%.4f mid=%.4f\n", s, level, per_level[1], edge,
               (double)y[N / 2]);
    }
    cudaify_scope_end();
    free(adj);
    free(dist);
    free(x);
    free(y);
    return 0;
}
