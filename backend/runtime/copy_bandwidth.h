/* cudaify: the GPU's copy bandwidth, the roof of the roofline figure. A large
 * device-to-device cudaMemcpy reads and writes every byte once; its bytes read plus
 * written per second, median of several copies timed with events, is what a
 * memory-bound kernel can hope to reach. Prints `bytes_per_second <value>`. */
#include <algorithm>
#include <cstdio>
#include <cuda_runtime.h>

#define CHECK(call)                                                                      \
    do {                                                                                 \
        cudaError_t status_ = (call);                                                    \
        if (status_ != cudaSuccess) {                                                    \
            fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(status_));             \
            return 1;                                                                    \
        }                                                                                \
    } while (0)

int main() {
    const int copies = 7;
    size_t free_bytes = 0, total_bytes = 0;
    CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    /* Far past every cache (an H200's L2 is 60 MB), small enough for any GPU. */
    size_t bytes = std::min<size_t>((size_t)512 << 20, free_bytes / 4);
    void *from = nullptr, *to = nullptr;
    CHECK(cudaMalloc(&from, bytes));
    CHECK(cudaMalloc(&to, bytes));
    CHECK(cudaMemset(from, 1, bytes));
    CHECK(cudaMemcpy(to, from, bytes, cudaMemcpyDeviceToDevice)); /* warm-up */
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    float seconds[copies];
    for (int i = 0; i < copies; i++) {
        float milliseconds = 0.0f;
        CHECK(cudaEventRecord(start));
        CHECK(cudaMemcpy(to, from, bytes, cudaMemcpyDeviceToDevice));
        CHECK(cudaEventRecord(stop));
        CHECK(cudaEventSynchronize(stop));
        CHECK(cudaEventElapsedTime(&milliseconds, start, stop));
        seconds[i] = 1e-3f * milliseconds;
    }
    std::sort(seconds, seconds + copies);
    printf("bytes_per_second %.6e\n", 2.0 * (double)bytes / seconds[copies / 2]);
    return 0;
}
