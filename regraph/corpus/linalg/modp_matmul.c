/* modp_matmul: integer matrix product modulo a prime (exact arithmetic, as in
 * cryptography and number theory codes). Pattern: matmul on 64-bit integers, no rounding. */
#include <stdio.h>
#include <stdlib.h>

#define N 300
#define P 1000003ull

void matmul_mod(int n, const unsigned int *a, const unsigned int *b, unsigned int *c) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            unsigned long long acc = 0;
            for (int k = 0; k < n; k++)
                acc = (acc + (unsigned long long)a[i * n + k] * b[k * n + j]) % P;
            c[i * n + j] = (unsigned int)acc;
        }
}

int main(void) {
    unsigned int *a = malloc(sizeof(unsigned int) * N * N);
    unsigned int *b = malloc(sizeof(unsigned int) * N * N);
    unsigned int *c = malloc(sizeof(unsigned int) * N * N);
    for (int i = 0; i < N * N; i++) {
        a[i] = (unsigned int)((i * 7919ull) % P);
        b[i] = (unsigned int)((i * 104729ull + 3) % P);
    }
    matmul_mod(N, a, b, c);
    unsigned long long h = 0;
    for (int i = 0; i < N * N; i++)
        h = (h * 31 + c[i]) % 4294967311ull;
    printf("hash %llu c00 %u\n", h, c[0]);
    free(a); free(b); free(c);
    return 0;
}
