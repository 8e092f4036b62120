/* ---- cudaify warp helpers ---- */
/* A shuffle of any value of at most 8 bytes, through an integer of its size: `shuffle`
   is called with that integer and returns the other lane's. */
template <class CudaifyT, class CudaifyShuffle>
__device__ CudaifyT cudaify_shuffled(CudaifyT value, CudaifyShuffle shuffle)
{
    static_assert(sizeof(CudaifyT) <= 8, "cudaify: shuffled values are at most 8 bytes");
    typedef typename std::conditional<sizeof(CudaifyT) <= 4, int, long long>::type Bits;
    Bits bits = 0;
    CudaifyT out;
    memcpy(&bits, &value, sizeof(CudaifyT));
    bits = shuffle(bits);
    memcpy(&out, &bits, sizeof(CudaifyT));
    return out;
}
/* __shfl_xor_sync and __shfl_sync of such a value. */
template <class CudaifyT>
__device__ CudaifyT cudaify_shfl_xor(CudaifyT value, int mask)
{
    return cudaify_shuffled(
        value, [mask](auto bits) { return __shfl_xor_sync(0xffffffffu, bits, mask); });
}
template <class CudaifyT>
__device__ CudaifyT cudaify_shfl_from(CudaifyT value, int lane)
{
    return cudaify_shuffled(
        value, [lane](auto bits) { return __shfl_sync(0xffffffffu, bits, lane); });
}

/* The warp's combination of its lanes' values, the same in every lane (lane 0's: an
   operator that is not commutative on some values, a minimum meeting a NaN, still
   leaves one value). Every lane of the warp calls it. */
template <class CudaifyT, class CudaifyOp>
__device__ CudaifyT cudaify_warp_allreduce(CudaifyT value, CudaifyOp op)
{
    for (int mask = 16; mask > 0; mask /= 2)
        value = op(value, cudaify_shfl_xor(value, mask));
    return cudaify_shfl_from(value, 0);
}

/* Each lane's inclusive prefix of its lanes' values, in lane order (Hillis-Steele). Every
   lane of the warp calls it. */
template <class CudaifyT, class CudaifyOp>
__device__ CudaifyT cudaify_warp_inclusive_scan(CudaifyT value, CudaifyOp op)
{
    const int lane = threadIdx.x % 32;
    for (int distance = 1; distance < 32; distance *= 2) {
        const CudaifyT before = cudaify_shfl_from(value, lane >= distance ? lane - distance : lane);
        if (lane >= distance)
            value = op(before, value);
    }
    return value;
}

