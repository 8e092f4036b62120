/* gray_scott: the Gray-Scott reaction-diffusion system, two species on a periodic 2-D
 * grid, explicit Euler. Pattern: coupled 2-D 5-point stencils in one kernel, time loop. */
#include <stdio.h>
#include <stdlib.h>

#define S 256
#define STEPS 200

void react_diffuse(int n, const float *u, const float *v, float *un, float *vn, float feed,
                   float kill) {
    for (int y = 0; y < n; y++)
        for (int x = 0; x < n; x++) {
            int c = y * n + x;
            int l = y * n + (x + n - 1) % n, r = y * n + (x + 1) % n;
            int up = ((y + n - 1) % n) * n + x, dn = ((y + 1) % n) * n + x;
            float lu = u[l] + u[r] + u[up] + u[dn] - 4.0f * u[c];
            float lv = v[l] + v[r] + v[up] + v[dn] - 4.0f * v[c];
            float uvv = u[c] * v[c] * v[c];
            un[c] = u[c] + 0.16f * lu - uvv + feed * (1.0f - u[c]);
            vn[c] = v[c] + 0.08f * lv + uvv - (feed + kill) * v[c];
        }
}

int main(void) {
    float *u = malloc(sizeof(float) * S * S), *v = malloc(sizeof(float) * S * S);
    float *un = malloc(sizeof(float) * S * S), *vn = malloc(sizeof(float) * S * S);
    for (int i = 0; i < S * S; i++) {
        int x = i % S, y = i / S;
        int centre = x > S / 2 - 10 && x < S / 2 + 10 && y > S / 2 - 10 && y < S / 2 + 10;
        u[i] = centre ? 0.5f : 1.0f;
        v[i] = centre ? 0.25f : 0.0f;
    }
    for (int t = 0; t < STEPS; t++) {
        react_diffuse(S, u, v, un, vn, 0.035f, 0.065f);
        float *t1 = u, *t2 = v;
        u = un;
        v = vn;
        un = t1;
        vn = t2;
    }
    double su = 0.0, sv = 0.0;
    for (int i = 0; i < S * S; i++) {
        su += u[i];
        sv += v[i];
    }
    printf("u %.6e v %.6e\n", su, sv);
    free(u); free(v); free(un); free(vn);
    return 0;
}
