/* normalize3: normalise an array of 3-D vectors (x, y, z stored as a struct array) to unit
 * length, leaving zero vectors alone. Pattern: 1-D elementwise over an array of structs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define N 800000

typedef struct {
    float x, y, z;
} vec3;

void normalize_all(int n, vec3 *v) {
    for (int i = 0; i < n; i++) {
        float len = sqrtf(v[i].x * v[i].x + v[i].y * v[i].y + v[i].z * v[i].z);
        if (len > 0.0f) {
            v[i].x /= len;
            v[i].y /= len;
            v[i].z /= len;
        }
    }
}

int main(void) {
    vec3 *v = malloc(sizeof(vec3) * N);
    for (int i = 0; i < N; i++) {
        v[i].x = (float)((i % 13) - 6);
        v[i].y = (float)((i % 7) - 3) * 0.5f;
        v[i].z = (float)((i % 5) - 2) * 2.0f;
    }
    normalize_all(N, v);
    double sx = 0, sy = 0, sz = 0;
    for (int i = 0; i < N; i++) {
        sx += v[i].x;
        sy += v[i].y;
        sz += v[i].z;
    }
    printf("sums %.6f %.6f %.6f\n", sx, sy, sz);
    free(v);
    return 0;
}
