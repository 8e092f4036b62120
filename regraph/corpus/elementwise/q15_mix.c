/* q15_mix: fixed-point audio mixing: two Q15 channels scaled by Q15 gains, summed with
 * saturation to 16 bits. Pattern: 1-D elementwise integer arithmetic with branches. */
#include <stdio.h>
#include <stdlib.h>

#define N (1 << 21)

static short saturate(int x) {
    if (x > 32767) return 32767;
    if (x < -32768) return -32768;
    return (short)x;
}

void mix_q15(int n, const short *left, const short *right, short gain_l, short gain_r,
             short *out) {
    for (int i = 0; i < n; i++) {
        int acc = ((int)left[i] * gain_l + (int)right[i] * gain_r) >> 15;
        out[i] = saturate(acc * 2);
    }
}

int main(void) {
    short *left = malloc(sizeof(short) * N), *right = malloc(sizeof(short) * N);
    short *out = malloc(sizeof(short) * N);
    for (int i = 0; i < N; i++) {
        left[i] = (short)(((i * 37) % 65536) - 32768);
        right[i] = (short)(((i * 91 + 17) % 60000) - 30000);
    }
    mix_q15(N, left, right, 24576, 19661, out);
    long long total = 0;
    int clipped = 0;
    for (int i = 0; i < N; i++) {
        total += out[i];
        clipped += (out[i] == 32767 || out[i] == -32768);
    }
    printf("mix total %lld clipped %d\n", total, clipped);
    free(left); free(right); free(out);
    return 0;
}
