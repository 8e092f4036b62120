/* homogeneous_points: project many 3-D points through a 4x4 homogeneous camera matrix
 * (rotation, translation, perspective) and divide by w, as a renderer's vertex stage does.
 * Pattern: independent points, each a constant 4x4 matrix-vector product (small
 * constant-trip loops, fully unrollable) and a divide. */
#include <stdio.h>
#include <stdlib.h>

#define POINTS 1500000

void project_points(int n, const float *m, const float *p, float *screen) {
    for (int i = 0; i < n; i++) {
        float h[4];
        for (int r = 0; r < 4; r++) {
            float acc = m[r * 4 + 3];
            for (int c = 0; c < 3; c++)
                acc += m[r * 4 + c] * p[i * 3 + c];
            h[r] = acc;
        }
        screen[i * 2] = h[0] / h[3];
        screen[i * 2 + 1] = h[1] / h[3];
    }
}

int main(void) {
    float m[16] = {0.9f, -0.1f, 0.2f,  0.5f, 0.1f, 0.95f, -0.05f, -0.2f,
                   0.0f, 0.1f,  0.99f, 3.0f, 0.0f, 0.0f,  0.25f,  4.0f};
    float *p = malloc(sizeof(float) * POINTS * 3), *screen = malloc(sizeof(float) * POINTS * 2);
    for (int i = 0; i < POINTS * 3; i++)
        p[i] = (float)((i * 31) % 401) * 0.01f - 2.0f;
    project_points(POINTS, m, p, screen);
    double sx = 0.0, sy = 0.0;
    for (int i = 0; i < POINTS; i++) {
        sx += screen[i * 2] * (1 + i % 3);
        sy += screen[i * 2 + 1] * (1 + i % 5);
    }
    printf("screen x %.6e y %.6e\n", sx, sy);
    free(p); free(screen);
    return 0;
}
