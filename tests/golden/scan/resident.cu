/* ---- cudaify pattern includes ---- */
#include <string.h>
#include <math.h>
#include <type_traits>
#include <cub/device/device_scan.cuh> /* cudaify: CUB's device-wide scan */
/* cudaify: x -> cudaify_mul * x + cudaify_add; a scan composes such maps */
template <class CudaifyT>
struct cudaify_affine {
    CudaifyT cudaify_mul, cudaify_add;
};
struct cudaify_compose {
    template <class CudaifyT>
    __host__ __device__ cudaify_affine<CudaifyT>
    operator()(const cudaify_affine<CudaifyT> &first, const cudaify_affine<CudaifyT> &then) const
    {
        return {then.cudaify_mul * first.cudaify_mul,
                then.cudaify_mul * first.cudaify_add + then.cudaify_add};
    }
};
/* ---- cudaify scan in three passes ---- */
#include <cub/block/block_exchange.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
/* A scan of items CUB's single-pass device scan handles slowly (a struct, such as an affine
   map: its tile states are not one machine word), in passes over the items: each block
   composes its share of them (pass 1); each block then composes the shares' totals before
   its own (what was pass 2, one block scanning the totals: folded into pass 3 since
   2026-11-29, one launch fewer), scans its share again from there and stores every result
   (pass 3). Both passes read a tile's items while the tile before is composed.
   An item is `term(t)` for t in [0, n); a result goes to `store(t, value)`.
   `op` need only be associative: each thread composes contiguous items, in order.
   On an H200, 2^24 affine maps of doubles (events around the call, back to back): 213 us
   before 2026-11-29, 189 us with the tile read ahead, pass 2 folded in and blocks of 128
   threads held to 64 registers (8 blocks a multiprocessor). 2^24 affine maps of floats:
   114-121 us before, 114 us. Blocks of 256 threads: 199 us (doubles), 130 (floats); of
   512: 287 us. Without the register cap pass 3 takes 80 registers: 218 us. */
#define CUDAIFY_SCAN_THREADS 128
#define CUDAIFY_SCAN_BLOCKS 8 /* blocks a multiprocessor holds: 64 registers a thread */
/* Items a thread composes: 8 items narrower than CUDAIFY_SCAN_WIDE_BYTES (16), read
   striped (a warp reads neighbours) and exchanged through shared memory into each thread's
   run; 2 items of 16 bytes or more (an affine map of doubles), each thread reading its own
   run straight from the term (its neighbours' loads fill the same cache lines; the exchange
   of wide items is where pass 3's shared-memory bank conflicts were). On an H200, 2^24
   affine maps of doubles 0.252 -> 0.222 ms read straight; floats stay exchanged (0.112 ms;
   0.118 read straight). Two wide items a thread rather than 4 leave registers for more
   blocks: the three passes 229 -> 207 us by ncu (8 items: 287 us); with 128 threads and
   the tile read ahead, 4 items: 213 us by events. */
#ifndef CUDAIFY_SCAN_ITEMS
#define CUDAIFY_SCAN_ITEMS 8
#endif
#ifndef CUDAIFY_SCAN_WIDE_ITEMS
#define CUDAIFY_SCAN_WIDE_ITEMS 2
#endif
#ifndef CUDAIFY_SCAN_WIDE_BYTES
#define CUDAIFY_SCAN_WIDE_BYTES 16
#endif
template <class CudaifyS>
struct cudaify_scan_shape {
    static constexpr bool wide = sizeof(CudaifyS) >= CUDAIFY_SCAN_WIDE_BYTES;
    static constexpr int items = wide ? CUDAIFY_SCAN_WIDE_ITEMS : CUDAIFY_SCAN_ITEMS;
    static constexpr int tile = CUDAIFY_SCAN_THREADS * items;
};
/* blocks of passes 1 and 3, at most. (Capped by the blocks the GPU holds at once instead,
   2^24 doubles took as long on an H200: 0.25-0.27 ms. With 2 wide items a thread, 2^24
   affine maps of doubles by ncu: 512 shares 225 us, 1024 207, 2048 207, 4096 213, pass 2
   growing with them; with pass 2 folded in and 128 threads, by events: 768 shares 199 us,
   1024 189, 1536 197.) */
#ifndef CUDAIFY_SCAN_SHARES
#define CUDAIFY_SCAN_SHARES 1024
#endif
template <class CudaifyS>
using cudaify_scan_exchange =
    cub::BlockExchange<CudaifyS, CUDAIFY_SCAN_THREADS, cudaify_scan_shape<CudaifyS>::items>;

/* The tile's items from `first` on (those before `end`, at most a tile), in two steps so
   that the next tile's reads can be in flight while this one is scanned:
   `cudaify_scan_fetch` reads them (for narrow items striped: this thread's are first + k *
   threads + threadIdx.x), `cudaify_scan_arrange` makes them blocked: this thread's are
   first + threadIdx.x * items + k. The places past `end` repeat the first item. */
template <class CudaifyS, class CudaifyTerm>
__device__ void cudaify_scan_fetch(const CudaifyTerm &term, long long first, long long end,
                                   CudaifyS (&items)[cudaify_scan_shape<CudaifyS>::items])
{
    typedef cudaify_scan_shape<CudaifyS> Shape;
    const long long count = end - first < Shape::tile ? end - first : Shape::tile;
    for (int k = 0; k < Shape::items; k++) {
        const long long at = Shape::wide ? (long long)threadIdx.x * Shape::items + k
                                         : (long long)k * CUDAIFY_SCAN_THREADS + threadIdx.x;
        items[k] = term(first + (at < count ? at : 0));
    }
}

template <class CudaifyS>
__device__ void cudaify_scan_arrange(CudaifyS (&items)[cudaify_scan_shape<CudaifyS>::items],
                                     typename cudaify_scan_exchange<CudaifyS>::TempStorage &storage)
{
    if (!cudaify_scan_shape<CudaifyS>::wide) {
        cudaify_scan_exchange<CudaifyS>(storage).StripedToBlocked(items, items);
        __syncthreads();
    }
}

/* The tile from `tile` on, read ahead into `ahead`, into `items` (blocked), the next
   tile's reads (those before `end`) started into `ahead` first: in flight while this tile
   is composed. */
template <class CudaifyS, class CudaifyTerm>
__device__ void cudaify_scan_advance(const CudaifyTerm &term, long long tile, long long end,
                                     CudaifyS (&items)[cudaify_scan_shape<CudaifyS>::items],
                                     CudaifyS (&ahead)[cudaify_scan_shape<CudaifyS>::items],
                                     typename cudaify_scan_exchange<CudaifyS>::TempStorage &storage)
{
    typedef cudaify_scan_shape<CudaifyS> Shape;
    for (int k = 0; k < Shape::items; k++)
        items[k] = ahead[k];
    if (tile + Shape::tile < end)
        cudaify_scan_fetch(term, tile + Shape::tile, end, ahead);
    cudaify_scan_arrange(items, storage);
}

/* Pass 1: the composition of block b's share of the items (those from b * share), into
   totals[b]. */
template <class CudaifyS, class CudaifyOp, class CudaifyTerm>
__global__ void __launch_bounds__(CUDAIFY_SCAN_THREADS, CUDAIFY_SCAN_BLOCKS)
cudaify_scan_shares(CudaifyTerm term, long long n, long long share, CudaifyOp op, CudaifyS *totals)
{
    typedef cub::BlockReduce<CudaifyS, CUDAIFY_SCAN_THREADS> Reduce;
    __shared__ union {
        typename cudaify_scan_exchange<CudaifyS>::TempStorage exchange;
        typename Reduce::TempStorage reduce;
    } storage;
    typedef cudaify_scan_shape<CudaifyS> Shape;
    const long long begin = blockIdx.x * share;
    const long long end = begin + share < n ? begin + share : n;
    CudaifyS total, items[Shape::items], ahead[Shape::items];
    if (begin < end)
        cudaify_scan_fetch(term, begin, end, ahead);
    for (long long tile = begin; tile < end; tile += Shape::tile) {
        const long long count = end - tile < Shape::tile ? end - tile : Shape::tile;
        cudaify_scan_advance(term, tile, end, items, ahead, storage.exchange);
        const long long mine = (long long)threadIdx.x * Shape::items;
        CudaifyS part = items[0];
        for (int k = 1; k < Shape::items; k++)
            if (mine + k < count)
                part = op(part, items[k]);
        /* the threads holding items are the first ones; BlockReduce keeps their order */
        const int holding = (int)((count + Shape::items - 1) / Shape::items);
        const CudaifyS block = Reduce(storage.reduce).Reduce(part, op, holding);
        if (threadIdx.x == 0)
            total = tile == begin ? block : op(total, block);
        __syncthreads();
    }
    if (threadIdx.x == 0 && begin < end)
        totals[blockIdx.x] = total;
}

/* Pass 2 (folded into pass 3): the composition of the first `count` shares' totals
   (count > 0), in thread 0: each thread composes a run of them, in order. */
template <class CudaifyS, class CudaifyOp>
__device__ CudaifyS cudaify_scan_before(const CudaifyS *totals, long long count, CudaifyOp op,
                                        typename cub::BlockReduce<CudaifyS, CUDAIFY_SCAN_THREADS>::TempStorage &storage)
{
    const long long per = (count + CUDAIFY_SCAN_THREADS - 1) / CUDAIFY_SCAN_THREADS;
    const long long mine = (long long)threadIdx.x * per;
    CudaifyS part = totals[mine < count ? mine : 0];
    for (long long t = mine + 1; t < mine + per && t < count; t++)
        part = op(part, totals[t]);
    const int holding = (int)((count + per - 1) / per);
    return cub::BlockReduce<CudaifyS, CUDAIFY_SCAN_THREADS>(storage).Reduce(part, op, holding);
}

/* Pass 3: a block scans its share from the composition of every item before it (that of
   the shares' totals before it, from pass 1; with `totals` NULL, one block scans every
   item) and hands each result to `store`, striped. (Taking the shares last first, so that
   the last ones pass 1 read might come from the L2 cache, moved as many bytes from memory
   by ncu, 387 MB for 2^24 affine maps of doubles, and was not kept.) */
template <class CudaifyS, class CudaifyOp, class CudaifyTerm, class CudaifyStore>
__global__ void __launch_bounds__(CUDAIFY_SCAN_THREADS, CUDAIFY_SCAN_BLOCKS)
cudaify_scan_share(CudaifyTerm term, CudaifyStore store, long long n, long long share,
                   CudaifyOp op, const CudaifyS *totals)
{
    typedef cub::BlockScan<CudaifyS, CUDAIFY_SCAN_THREADS> Scan;
    __shared__ union {
        typename cudaify_scan_exchange<CudaifyS>::TempStorage exchange;
        typename Scan::TempStorage scan;
        typename cub::BlockReduce<CudaifyS, CUDAIFY_SCAN_THREADS>::TempStorage reduce;
    } storage;
    __shared__ CudaifyS carried; /* the composition of every item before this tile */
    typedef cudaify_scan_shape<CudaifyS> Shape;
    const long long begin = blockIdx.x * share;
    const long long end = begin + share < n ? begin + share : n;
    bool carrying = totals != NULL && blockIdx.x > 0;
    CudaifyS items[Shape::items], ahead[Shape::items];
    cudaify_scan_fetch(term, begin, end, ahead);
    if (carrying) {
        const CudaifyS before = cudaify_scan_before(totals, blockIdx.x, op, storage.reduce);
        if (threadIdx.x == 0)
            carried = before;
    }
    __syncthreads();
    for (long long tile = begin; tile < end; tile += Shape::tile) {
        const long long count = end - tile < Shape::tile ? end - tile : Shape::tile;
        cudaify_scan_advance(term, tile, end, items, ahead, storage.exchange);
        const long long mine = (long long)threadIdx.x * Shape::items;
        CudaifyS last = items[0]; /* this thread's last item (fixed indices: registers) */
        for (int k = 1; k < Shape::items; k++)
            if (mine + k < count) {
                items[k] = op(items[k - 1], items[k]);
                last = items[k];
            }
        CudaifyS earlier, aggregate; /* earlier: undefined in thread 0 */
        Scan(storage.scan).ExclusiveScan(last, earlier, op, aggregate);
        if (threadIdx.x > 0 || carrying) {
            const CudaifyS prefix = threadIdx.x == 0 ? carried
                                    : carrying       ? op(carried, earlier)
                                                     : earlier;
            for (int k = 0; k < Shape::items; k++)
                items[k] = op(prefix, items[k]);
        }
        __syncthreads();
        cudaify_scan_exchange<CudaifyS>(storage.exchange).BlockedToStriped(items, items);
        for (int k = 0; k < Shape::items; k++) {
            const int at = k * CUDAIFY_SCAN_THREADS + threadIdx.x;
            if (at < count)
                store(tile + at, items[k]);
        }
        if (threadIdx.x == 0)
            carried = carrying ? op(carried, aggregate) : aggregate;
        carrying = true;
        __syncthreads();
    }
}

/* The scan of n items (n > 0); `totals` holds CUDAIFY_SCAN_SHARES values of CudaifyS. */
template <class CudaifyS, class CudaifyOp, class CudaifyTerm, class CudaifyStore>
void cudaify_scan(CudaifyTerm term, CudaifyStore store, long long n, CudaifyOp op,
                  CudaifyS *totals)
{
    const long long tile = cudaify_scan_shape<CudaifyS>::tile;
    const long long tiles = (n + tile - 1) / tile;
    const long long per_block = (tiles + CUDAIFY_SCAN_SHARES - 1) / CUDAIFY_SCAN_SHARES;
    const long long blocks = (tiles + per_block - 1) / per_block; /* none left empty */
    const long long share = per_block * tile;
    if (blocks <= 1) { /* one share: one block scans every tile */
        cudaify_scan_share<CudaifyS><<<1, CUDAIFY_SCAN_THREADS>>>(term, store, n, n, op,
                                                                  (const CudaifyS *)NULL);
    } else {
        cudaify_scan_shares<CudaifyS><<<(unsigned int)blocks, CUDAIFY_SCAN_THREADS>>>(
            term, n, share, op, totals);
        cudaify_scan_share<CudaifyS><<<(unsigned int)blocks, CUDAIFY_SCAN_THREADS>>>(
            term, store, n, share, op, (const CudaifyS *)totals);
    }
}

/* cudaify: the sum a seeded CUB scan adds with (libcu++'s: CUB tunes for it) */
#if __CUDACC_VER_MAJOR__ >= 12
#include <cuda/std/functional>
typedef ::cuda::std::plus<> cudaify_sum;
#else
struct cudaify_sum {
    template <class CudaifyT>
    __host__ __device__ CudaifyT operator()(const CudaifyT &a, const CudaifyT &b) const
    {
        return a + b;
    }
};
#endif

/* Scans called every round of a time loop: an inclusive accumulator scan whose result is
   the next round's input (the pointers swap), and a linear recurrence on the output's
   previous element, whose starting value x[0] the host sets once. After `scan`,
   `data_residency` keeps every array on the device across the rounds. */
#include <stdio.h>
#include <stdlib.h>

#define N 3000
#define ROUNDS 3

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

/* ---- cudaify pattern helpers ---- */

/* The type a name holds, without reference or const (host side of the reductions). */
template <class CudaifyT>
using cudaify_value_t =
    typename std::remove_cv<typename std::remove_reference<CudaifyT>::type>::type;
template <class CudaifyT>
__host__ __device__ CudaifyT &cudaify_declval();

/* The identities of min and max: the ends of an integer type's range, from its size and
   sign, and a floating type's infinities (libcu++'s numeric_limits cost a second of
   every nvcc build). */
template <class CudaifyT>
struct cudaify_limits {
    __host__ __device__ static CudaifyT highest()
    {
        return std::is_signed<CudaifyT>::value
                   ? (CudaifyT)((1ull << (sizeof(CudaifyT) * 8 - 1)) - 1)
                   : (CudaifyT)~(CudaifyT)0;
    }
    __host__ __device__ static CudaifyT lowest()
    {
        return std::is_signed<CudaifyT>::value ? (CudaifyT)(-highest() - 1) : (CudaifyT)0;
    }
};
template <>
struct cudaify_limits<float> {
    __host__ __device__ static float highest() { return HUGE_VALF; }
    __host__ __device__ static float lowest() { return -HUGE_VALF; }
};
template <>
struct cudaify_limits<double> {
    __host__ __device__ static double highest() { return HUGE_VAL; }
    __host__ __device__ static double lowest() { return -HUGE_VAL; }
};

/* Reduction operators: the combination and its identity. */
struct cudaify_plus {
    template <class CudaifyT>
    __host__ __device__ CudaifyT operator()(CudaifyT a, CudaifyT b) const { return a + b; }
    template <class CudaifyT>
    __host__ __device__ static CudaifyT identity() { return CudaifyT(0); }
};
struct cudaify_times {
    template <class CudaifyT>
    __host__ __device__ CudaifyT operator()(CudaifyT a, CudaifyT b) const { return a * b; }
    template <class CudaifyT>
    __host__ __device__ static CudaifyT identity() { return CudaifyT(1); }
};
struct cudaify_minimum {
    template <class CudaifyT>
    __host__ __device__ CudaifyT operator()(CudaifyT a, CudaifyT b) const { return b < a ? b : a; }
    template <class CudaifyT>
    __host__ __device__ static CudaifyT identity()
    {
        return cudaify_limits<CudaifyT>::highest();
    }
};
struct cudaify_maximum {
    template <class CudaifyT>
    __host__ __device__ CudaifyT operator()(CudaifyT a, CudaifyT b) const { return b > a ? b : a; }
    template <class CudaifyT>
    __host__ __device__ static CudaifyT identity()
    {
        return cudaify_limits<CudaifyT>::lowest();
    }
};
struct cudaify_bit_and {
    template <class CudaifyT>
    __host__ __device__ CudaifyT operator()(CudaifyT a, CudaifyT b) const { return a & b; }
    template <class CudaifyT>
    __host__ __device__ static CudaifyT identity() { return (CudaifyT)~(CudaifyT)0; }
};
struct cudaify_bit_or {
    template <class CudaifyT>
    __host__ __device__ CudaifyT operator()(CudaifyT a, CudaifyT b) const { return a | b; }
    template <class CudaifyT>
    __host__ __device__ static CudaifyT identity() { return CudaifyT(0); }
};
struct cudaify_bit_xor {
    template <class CudaifyT>
    __host__ __device__ CudaifyT operator()(CudaifyT a, CudaifyT b) const { return a ^ b; }
    template <class CudaifyT>
    __host__ __device__ static CudaifyT identity() { return CudaifyT(0); }
};
struct cudaify_logical_and {
    template <class CudaifyT>
    __host__ __device__ CudaifyT operator()(CudaifyT a, CudaifyT b) const { return a && b; }
    template <class CudaifyT>
    __host__ __device__ static CudaifyT identity() { return CudaifyT(1); }
};
struct cudaify_logical_or {
    template <class CudaifyT>
    __host__ __device__ CudaifyT operator()(CudaifyT a, CudaifyT b) const { return a || b; }
    template <class CudaifyT>
    __host__ __device__ static CudaifyT identity() { return CudaifyT(0); }
};

/* __shfl_down_sync of any value of at most 8 bytes, through an integer of its size. */
template <class CudaifyT>
__device__ CudaifyT cudaify_shfl_down(CudaifyT value, int offset)
{
    static_assert(sizeof(CudaifyT) <= 8, "cudaify: reduction values are at most 8 bytes");
    CudaifyT out;
    if constexpr (sizeof(CudaifyT) <= 4) {
        int bits = 0;
        memcpy(&bits, &value, sizeof(CudaifyT));
        bits = __shfl_down_sync(0xffffffffu, bits, offset);
        memcpy(&out, &bits, sizeof(CudaifyT));
    } else {
        long long bits = 0;
        memcpy(&bits, &value, sizeof(CudaifyT));
        bits = __shfl_down_sync(0xffffffffu, bits, offset);
        memcpy(&out, &bits, sizeof(CudaifyT));
    }
    return out;
}

/* The block's combination of every thread's value, valid in thread 0. Every thread of
   the block calls it (blockDim.x is a multiple of 32). */
template <class CudaifyT, class CudaifyOp>
__device__ CudaifyT cudaify_block_reduce(CudaifyT value, CudaifyOp op)
{
    __shared__ CudaifyT warp_values[32];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    for (int offset = 16; offset > 0; offset /= 2)
        value = op(value, cudaify_shfl_down(value, offset));
    __syncthreads(); /* an earlier call may still read warp_values */
    if (lane == 0)
        warp_values[warp] = value;
    __syncthreads();
    if (warp == 0) {
        const int warps = (int)(blockDim.x / 32);
        value = lane < warps ? warp_values[lane] : CudaifyOp::template identity<CudaifyT>();
        for (int offset = 16; offset > 0; offset /= 2)
            value = op(value, cudaify_shfl_down(value, offset));
    }
    return value;
}

/* atomicAdd for every 4- and 8-byte arithmetic type: integers through the unsigned
   type of their size (two's complement sums are the same bits). */
template <class CudaifyT>
__device__ void cudaify_atomic_add(CudaifyT *address, CudaifyT value)
{
    if constexpr (std::is_integral<CudaifyT>::value && sizeof(CudaifyT) == 8)
        atomicAdd((unsigned long long *)address, (unsigned long long)value);
    else if constexpr (std::is_integral<CudaifyT>::value && sizeof(CudaifyT) == 4)
        atomicAdd((unsigned int *)address, (unsigned int)value);
    else
        atomicAdd(address, value);
}

/* Bytes of a block-private copy, rounded up so that the next one stays aligned. */
__host__ __device__ static inline size_t cudaify_aligned(size_t bytes)
{
    return (bytes + 15) / 16 * 16;
}

/* One irregular update `global[index] += value`: into the block's private copy when
   the index is below the privatized extent, else marked as outside the device copy
   (the host then runs the loop itself). */
template <class CudaifyT, class CudaifyV>
__device__ void cudaify_add_at(CudaifyT *global, CudaifyT *local, long long extent,
                               long long index, CudaifyV value, int *outside)
{
    if (index < 0 || index >= extent) {
        *outside = 1;
        return;
    }
    cudaify_atomic_add(local != NULL ? &local[index] : &global[index], (CudaifyT)value);
}
template <class CudaifyT, class CudaifyV>
__device__ void cudaify_subtract_at(CudaifyT *global, CudaifyT *local, long long extent,
                                    long long index, CudaifyV value, int *outside)
{
    const CudaifyT negated = (CudaifyT)((CudaifyT)0 - (CudaifyT)value);
    cudaify_add_at(global, local, extent, index, negated, outside);
}

void running(int n, const double *in, double *out)
{
    double acc = 0.0;
    {
        /* cudaify: this scan runs on the GPU: cub::DeviceScan::InclusiveScanInit */
        const long long trips_i = cudaify_trips(0, n, 1, 0);
        if (trips_i > 0) {
            double *d_in = NULL;
            double *d_out = NULL;
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_in, (size_t)(n) * sizeof(double)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_out, (size_t)(n) * sizeof(double)));
            CUDAIFY_CHECK(cudaMemcpy(d_in, in, (size_t)(n) * sizeof(double), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_out, out, (size_t)(n) * sizeof(double), cudaMemcpyHostToDevice));
            const double start = acc;
            /* CUB tells the temporary storage it needs (asked with no storage), then scans */
            size_t storage_bytes = 0;
            static void *storage = NULL;
            static size_t storage_capacity = 0;
            CUDAIFY_CHECK(cub::DeviceScan::InclusiveScanInit(nullptr, storage_bytes, d_in, d_out, cudaify_sum(), start, trips_i));
            if (storage_bytes > storage_capacity) {
                if (storage != NULL)
                    CUDAIFY_CHECK(cudaFree(storage));
                CUDAIFY_CHECK(cudaMalloc(&storage, storage_bytes));
                storage_capacity = storage_bytes;
            }
            CUDAIFY_CHECK(cub::DeviceScan::InclusiveScanInit(storage, storage_bytes, d_in, d_out, cudaify_sum(), start, trips_i));
            double total;
            CUDAIFY_CHECK(cudaMemcpy(&total, d_out + (trips_i - 1), sizeof(double), cudaMemcpyDeviceToHost));
            acc = total;
            CUDAIFY_CHECK(cudaMemcpy(out, d_out, (size_t)(n) * sizeof(double), cudaMemcpyDeviceToHost));
            CUDAIFY_CHECK(cudaify_free(d_in));
            CUDAIFY_CHECK(cudaify_free(d_out));
        }
    }
}

/* Scan loop 'i' of smooth() (line 22): its iteration t's map, the term of the scan. */
struct smooth_scan_terms {
    double *a;
    double *b;
    __device__ cudaify_affine<double> operator()(long long t_i_2) const
    {
        int i = (int)(1 + t_i_2);
        return cudaify_affine<double>{(double)(a[i]), (double)(b[i])};
    }
};

/* The starting value x[-1] mapped by the maps up to iteration t, stored as the loop stores it (x points at the first element the loop writes). */
struct smooth_scan_store {
    double *x;
    __device__ void operator()(long long t_i_2, const cudaify_affine<double> &sums_2) const
    {
        x[t_i_2] = (double)(sums_2.cudaify_mul * x[-1] + sums_2.cudaify_add);
    }
};

void smooth(int n, const double *a, const double *b, double *x)
{
    {
        /* cudaify: this scan runs on the GPU: cudaify_scan (two passes) */
        const long long trips_i_2 = cudaify_trips(1, n, 1, 0);
        if (trips_i_2 > 0) {
            double *d_a = NULL;
            double *d_b = NULL;
            double *d_x = NULL;
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_a, (size_t)((n - 1)) * sizeof(double)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_b, (size_t)((n - 1)) * sizeof(double)));
            CUDAIFY_CHECK(cudaify_malloc((void **)&d_x, (size_t)(n) * sizeof(double)));
            CUDAIFY_CHECK(cudaMemcpy(d_a, a + (1), (size_t)((n - 1)) * sizeof(double), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_b, b + (1), (size_t)((n - 1)) * sizeof(double), cudaMemcpyHostToDevice));
            CUDAIFY_CHECK(cudaMemcpy(d_x, x, (size_t)(n) * sizeof(double), cudaMemcpyHostToDevice));
            static cudaify_affine<double> *totals_2 = NULL; /* the shares' totals (runtime: scan_passes) */
            if (totals_2 == NULL)
                CUDAIFY_CHECK(cudaMalloc((void **)&totals_2, CUDAIFY_SCAN_SHARES * sizeof(*totals_2)));
            cudaify_scan<cudaify_affine<double>>(smooth_scan_terms{d_a - (1), d_b - (1)}, smooth_scan_store{d_x + 1}, trips_i_2, cudaify_compose(), totals_2);
            CUDAIFY_CHECK(cudaGetLastError());
            CUDAIFY_CHECK(cudaMemcpy(x, d_x, (size_t)(n) * sizeof(double), cudaMemcpyDeviceToHost));
            CUDAIFY_CHECK(cudaify_free(d_a));
            CUDAIFY_CHECK(cudaify_free(d_b));
            CUDAIFY_CHECK(cudaify_free(d_x));
        }
    }
}

int main(void)
{
    double *v = (double *)malloc(sizeof(double) * N);
    double *s = (double *)malloc(sizeof(double) * N);
    double *a = (double *)malloc(sizeof(double) * N);
    double *x = (double *)malloc(sizeof(double) * N);
    unsigned int state = 11u;
    for (int i = 0; i < N; i++) {
        state = state * 1664525u + 1013904223u;
        v[i] = (double)(state >> 8) / 16777216.0;
        a[i] = 0.5 + 0.4 * (double)(state >> 20) / 4096.0;
    }
    x[0] = 1.0;
    for (int r = 0; r < ROUNDS; r++) {
        running(N, v, s);
        double *t = v;
        v = s;
        s = t;
        smooth(N, a, v, x);
    }
    printf("v: %.6e %.6e %.6e\n", v[0], v[N / 2], v[N - 1]);
    printf("x: %.6e %.6e %.6e\n", x[1], x[N / 3], x[N - 1]);
    free(v);
    free(s);
    free(a);
    free(x);
    return 0;
}
