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
