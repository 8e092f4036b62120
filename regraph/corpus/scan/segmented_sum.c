/* segmented_sum: running totals that restart at every segment head (transactions grouped
 * by account), and the total of each segment. Pattern: segmented inclusive scan. */
#include <stdio.h>
#include <stdlib.h>

#define N 3000000

void segmented_running_sum(int n, const int *amount, const unsigned char *head,
                           long long *running) {
    long long acc = 0;
    for (int i = 0; i < n; i++) {
        acc = head[i] ? amount[i] : acc + amount[i];
        running[i] = acc;
    }
}

int main(void) {
    int *amount = malloc(sizeof(int) * N);
    unsigned char *head = malloc(N);
    long long *running = malloc(sizeof(long long) * N);
    unsigned int s = 5u;
    for (int i = 0; i < N; i++) {
        s = s * 1664525u + 1013904223u;
        amount[i] = (int)((s >> 12) % 2001) - 1000;
        head[i] = i == 0 || ((s >> 5) % 97) == 0;
    }
    segmented_running_sum(N, amount, head, running);
    long long closing = 0;
    int segments = 0;
    for (int i = 0; i < N; i++)
        if (i == N - 1 || head[i + 1]) {
            closing += running[i];
            segments++;
        }
    printf("segments %d closing total %lld last %lld\n", segments, closing, running[N - 1]);
    free(amount); free(head); free(running);
    return 0;
}
