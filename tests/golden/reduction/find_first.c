#include <stdio.h>
#include <stdlib.h>

/* the first index whose value passes a threshold, and the value there */
int first_above(int n, const double *a, double t, double *value) {
    int idx = -1;
    double v = 0.0;
    for (int i = 0; i < n; i++) {
        if (a[i] > t && a[i] * a[i] < 2.0 * t * t) {
            idx = i;
            v = a[i] * 10.0;
            break;
        }
    }
    *value = v;
    return idx;
}

/* the loop variable itself is the answer */
long position(long n, const int *keys, int key) {
    long i;
    for (i = 0; i < n; i++)
        if (keys[i] == key)
            break;
    return i;
}

int main(void) {
    int n = 6000;
    double *a = malloc(n * sizeof *a);
    int *keys = malloc(n * sizeof *keys);
    for (int i = 0; i < n; i++) {
        a[i] = (double)((i * 7919L) % 100003) / 1000.0;
        keys[i] = (int)((i * 104729L) % 65536);
    }
    double v;
    for (int r = 0; r < 4; r++) {
        int at = first_above(n, a, 99.2 + 0.2 * r, &v);
        printf("first above %d %.3f\n", at, v);
    }
    printf("never %d\n", first_above(n, a, 1e9, &v));
    printf("position %ld %ld %ld\n", position(n, keys, keys[4321]), position(n, keys, keys[n - 1]), position(n, keys, -5));
    free(a); free(keys);
    return 0;
}
