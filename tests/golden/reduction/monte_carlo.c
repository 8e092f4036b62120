#include <stdio.h>

/* a generator whose state the caller keeps: each sample draws from its own */
static unsigned int next_state(unsigned int *s) {
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

/* a coordinate in [0, 2^16) */
static unsigned int coordinate(unsigned int *s) {
    return next_state(s) >> 16;
}

long long count_inside(int samples, int draws) {
    long long inside = 0;
    for (int i = 0; i < samples; i++) {
        unsigned int s = 2654435761u * (unsigned int)(i + 1);
        int hits = 0;
        for (int k = 0; k < draws; k++) {
            unsigned long long x = coordinate(&s), y = coordinate(&s);
            hits += x * x + y * y < (1ull << 32); /* exact: integers */
        }
        inside += hits;
    }
    return inside;
}

int main(void) {
    int samples = 1 << 14, draws = 64;
    long long inside = count_inside(samples, draws);
    printf("%lld of %lld: pi ~ %.6f\n", inside, (long long)samples * draws,
           4.0 * (double)inside / ((double)samples * draws));
    return 0;
}
