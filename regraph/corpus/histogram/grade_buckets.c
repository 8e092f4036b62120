/* grade_buckets: bucket exam scores (0..100) into ten grade bands, and count scores per
 * exact value. Pattern: two histograms (static arrays of known size) updated from one
 * pass (scatter with conflicts). */
#include <stdio.h>
#include <stdlib.h>

#define STUDENTS 4000000

static int bands[10], exact[101];

void grade_histograms(int n, const unsigned char *score) {
    for (int i = 0; i < n; i++) {
        int s = score[i];
        bands[s >= 100 ? 9 : s / 10]++;
        exact[s]++;
    }
}

int main(void) {
    unsigned char *score = malloc(STUDENTS);
    unsigned int st = 99u;
    for (int i = 0; i < STUDENTS; i++) {
        st = st * 22695477u + 1u;
        int a = (st >> 16) % 51, b = (st >> 4) % 51;
        score[i] = (unsigned char)(a + b);
    }
    grade_histograms(STUDENTS, score);
    for (int b = 0; b < 10; b++)
        printf("%d%c", bands[b], b == 9 ? '\n' : ' ');
    long long mode = 0;
    for (int v = 0; v <= 100; v++)
        if (exact[v] > exact[mode]) mode = v;
    printf("mode %lld count %d\n", mode, exact[mode]);
    free(score);
    return 0;
}
