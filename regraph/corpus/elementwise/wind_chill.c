/* wind_chill: the wind-chill temperature (the Canadian/US index, a power law in the wind
 * speed) for a field of air temperatures and wind speeds, and the frostbite-risk count.
 * Pattern: 1-D elementwise in single precision with powf per element (a fast-math
 * candidate: the intrinsic's error is far below the printed precision). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define N 3000000

void wind_chill(int n, const float *temp_c, const float *wind_kmh, float *chill) {
    for (int i = 0; i < n; i++) {
        float v = powf(wind_kmh[i], 0.16f);
        chill[i] = 13.12f + 0.6215f * temp_c[i] - 11.37f * v + 0.3965f * temp_c[i] * v;
    }
}

int main(void) {
    float *t = malloc(sizeof(float) * N), *w = malloc(sizeof(float) * N);
    float *chill = malloc(sizeof(float) * N);
    for (int i = 0; i < N; i++) {
        t[i] = -40.0f + (float)(i % 451) * 0.1f;
        w[i] = 5.0f + (float)((i * 7) % 551) * 0.1f;
    }
    wind_chill(N, t, w, chill);
    double total = 0.0;
    int risk = 0;
    for (int i = 0; i < N; i++) {
        total += chill[i];
        risk += chill[i] < -27.0f;
    }
    printf("mean chill %.5f risk %d\n", total / N, risk);
    free(t); free(w); free(chill);
    return 0;
}
