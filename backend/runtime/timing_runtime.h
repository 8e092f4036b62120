/* cudaify timing runtime: linked into timing builds of the reference (gcc/g++) and of
 * candidates (nvcc). The instrumented program calls cudaify_timing_enter/leave around
 * each offloaded function; only the outermost call of a nest is counted. At exit the
 * totals go to the file named by CUDAIFY_TIMING_FILE. Valid C and C++; compiled as its
 * own translation unit so the program's macros and feature flags never meet it. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

static double cudaify_region_total, cudaify_region_start, cudaify_context_seconds;
static double cudaify_kernel_total = -1.0; /* negative: kernels were not timed */
static double cudaify_transfer_total = -1.0; /* negative: copies were not timed */
static double cudaify_transfer_bytes;
static long cudaify_region_calls;
static int cudaify_region_depth;

static double cudaify_now(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}

void cudaify_timing_enter(void) {
    if (cudaify_region_depth++ == 0) cudaify_region_start = cudaify_now();
}

/* Defined by the CUDA unit of a kernel-timing build; absent (null) everywhere else. */
__attribute__((weak)) double cudaify_kernel_flush(void);
__attribute__((weak)) double cudaify_transfer_flush(double *bytes);
/* Writes the per-kernel lines (`kernel <name> <launches> <seconds>`) of a kernel-timing run. */
__attribute__((weak)) void cudaify_kernel_report(FILE *out);

static void cudaify_add_transfers(void) {
    double bytes = 0.0, seconds;
    if (!cudaify_transfer_flush) return;
    seconds = cudaify_transfer_flush(&bytes);
    if (seconds < 0.0) return;
    cudaify_transfer_total = (cudaify_transfer_total < 0 ? 0.0 : cudaify_transfer_total) + seconds;
    cudaify_transfer_bytes += bytes;
}

/* Defined by the CUDA unit of a timing build: waits for the device. */
__attribute__((weak)) void cudaify_device_sync(void);

void cudaify_timing_leave(void) {
    if (--cudaify_region_depth == 0) {
        if (cudaify_device_sync) cudaify_device_sync();
        cudaify_region_total += cudaify_now() - cudaify_region_start;
        cudaify_region_calls++;
        if (cudaify_kernel_flush) {
            double seconds = cudaify_kernel_flush();
            if (seconds >= 0.0)
                cudaify_kernel_total = (cudaify_kernel_total < 0 ? 0.0 : cudaify_kernel_total) + seconds;
        }
        cudaify_add_transfers();
    }
}

/* Per-function accounting (the reference's timing build): each wrapped function has an id
 * below 64, and the time is added up per set of functions active at once, with the calls
 * entered per (set active before, function). From these the time and the outermost calls
 * of any subset of the functions follow, so one run times every region a candidate may
 * offload: a subset's time is that of every set that meets it. */
#define CUDAIFY_SETS 256
static unsigned long long cudaify_active, cudaify_set_masks[CUDAIFY_SETS];
static unsigned long long cudaify_entry_masks[CUDAIFY_SETS];
static double cudaify_set_seconds[CUDAIFY_SETS], cudaify_since;
static long cudaify_entry_calls[CUDAIFY_SETS];
static int cudaify_entry_ids[CUDAIFY_SETS], cudaify_fn_depth[64];
static int cudaify_set_count, cudaify_entry_count, cudaify_sets_overflow;

static void cudaify_account(double now) {
    int i;
    if (cudaify_active) {
        for (i = 0; i < cudaify_set_count && cudaify_set_masks[i] != cudaify_active; i++) {}
        if (i == cudaify_set_count) {
            if (i == CUDAIFY_SETS) { cudaify_sets_overflow = 1; cudaify_since = now; return; }
            cudaify_set_masks[cudaify_set_count++] = cudaify_active;
        }
        cudaify_set_seconds[i] += now - cudaify_since;
    }
    cudaify_since = now;
}

void cudaify_timing_enter_fn(int id) {
    int i;
    cudaify_account(cudaify_now());
    for (i = 0; i < cudaify_entry_count; i++)
        if (cudaify_entry_masks[i] == cudaify_active && cudaify_entry_ids[i] == id) break;
    if (i == cudaify_entry_count) {
        if (i == CUDAIFY_SETS) cudaify_sets_overflow = 1;
        else { cudaify_entry_masks[i] = cudaify_active; cudaify_entry_ids[i] = id; cudaify_entry_count++; }
    }
    if (i < CUDAIFY_SETS) cudaify_entry_calls[i]++;
    if (cudaify_fn_depth[id & 63]++ == 0) cudaify_active |= 1ULL << (id & 63);
    cudaify_timing_enter();
}

void cudaify_timing_leave_fn(int id) {
    cudaify_timing_leave();
    cudaify_account(cudaify_now());
    if (--cudaify_fn_depth[id & 63] == 0) cudaify_active &= ~(1ULL << (id & 63));
}

int cudaify_timing_depth(void) { return cudaify_region_depth; }

void cudaify_timing_context(double seconds) { cudaify_context_seconds = seconds; }

double cudaify_timing_clock(void) { return cudaify_now(); }

static void cudaify_timing_report(void) {
    const char *path = getenv("CUDAIFY_TIMING_FILE");
    FILE *out;
    if (path == NULL || *path == '\0') return;
    out = fopen(path, "w");
    if (out == NULL) return;
    fprintf(out, "region_seconds %.9f\ncalls %ld\ncontext_seconds %.9f\n",
            cudaify_region_total, cudaify_region_calls, cudaify_context_seconds);
    if (cudaify_kernel_total >= 0.0) fprintf(out, "kernel_seconds %.9f\n", cudaify_kernel_total);
    if (cudaify_transfer_total >= 0.0)
        fprintf(out, "transfer_seconds %.9f\ntransfer_bytes %.0f\n", cudaify_transfer_total,
                cudaify_transfer_bytes);
    if (cudaify_kernel_report) cudaify_kernel_report(out);
    if (!cudaify_sets_overflow) {
        int i;
        for (i = 0; i < cudaify_set_count; i++)
            fprintf(out, "set %llx %.9f\n", cudaify_set_masks[i], cudaify_set_seconds[i]);
        for (i = 0; i < cudaify_entry_count; i++)
            fprintf(out, "entry %llx %d %ld\n", cudaify_entry_masks[i], cudaify_entry_ids[i],
                    cudaify_entry_calls[i]);
    }
    fclose(out);
}

/* Registered before main, so it runs after the program's own exit handlers. */
__attribute__((constructor)) static void cudaify_timing_install(void) {
    atexit(cudaify_timing_report);
}

#ifdef __cplusplus
}
#endif
