/* count_primes: count the primes below a bound by trial division, and sum them.
 * Pattern: reduction over independent iterations of very uneven cost. */
#include <stdio.h>

#define LIMIT 300000

static int is_prime(int n) {
    if (n < 2) return 0;
    if (n % 2 == 0) return n == 2;
    for (int d = 3; d * d <= n; d += 2)
        if (n % d == 0) return 0;
    return 1;
}

long long prime_sum(int limit, int *count) {
    long long sum = 0;
    int c = 0;
    for (int n = 0; n < limit; n++) {
        if (is_prime(n)) {
            sum += n;
            c++;
        }
    }
    *count = c;
    return sum;
}

int main(void) {
    int count = 0;
    long long sum = prime_sum(LIMIT, &count);
    printf("primes below %d: %d, sum %lld\n", LIMIT, count, sum);
    return 0;
}
