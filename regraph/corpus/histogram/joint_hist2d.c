/* joint_hist2d: 2-D joint histogram of pairs of intensities (as used by mutual
 * information), 64x64 bins. Pattern: histogram with a 2-D bin index and many bins. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define N 2500000
#define BINS 64

void joint_histogram(int n, const unsigned char *a, const unsigned char *b,
                     unsigned int *hist) {
    for (int i = 0; i < n; i++)
        hist[(a[i] >> 2) * BINS + (b[i] >> 2)]++;
}

double entropy(const unsigned int *hist, int bins, int n) {
    double h = 0.0;
    for (int k = 0; k < bins; k++)
        if (hist[k]) {
            double p = (double)hist[k] / n;
            h -= p * log(p);
        }
    return h;
}

int main(void) {
    unsigned char *a = malloc(N), *b = malloc(N);
    for (int i = 0; i < N; i++) {
        a[i] = (unsigned char)((i * 13 + (i >> 9)) & 255);
        b[i] = (unsigned char)((a[i] + (i % 61) * 3) & 255);
    }
    unsigned int *hist = calloc(BINS * BINS, sizeof(unsigned int));
    joint_histogram(N, a, b, hist);
    printf("joint entropy %.8f corner %u\n", entropy(hist, BINS * BINS, N), hist[0]);
    free(a); free(b); free(hist);
    return 0;
}
