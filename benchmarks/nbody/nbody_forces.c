/*
 * Name: nbody_forces
 * Category: nbody
 * Computes: a few leapfrog-style steps of a softened gravitational all-pairs n-body system
 *           (forces from every body on every body, then velocity and position updates);
 *           prints the kinetic energy and the summed positions after the steps.
 * Pattern: parallel outer loop over bodies with an inner reduction over all bodies (O(N^2), compute-bound)
 * CPU time: 1.69 s (gcc -O3, one core; user time, median of 3 runs, 2026-11-22)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef BENCH_SMALL
#define NBODIES 256
#define STEPS 2
#else
#define NBODIES 8192
#define STEPS 6
#endif

static unsigned int lcg_next(unsigned int *state) {
    *state = *state * 1664525u + 1013904223u;
    return *state;
}

static float lcg_float(unsigned int *state) {
    return (float)(lcg_next(state) >> 8) * (1.0f / 16777216.0f);
}

static void init_bodies(int n, float *pos, float *vel, float *mass, unsigned int seed) {
    unsigned int state = seed;
    for (int i = 0; i < n; i++) {
        for (int d = 0; d < 3; d++) {
            pos[3 * i + d] = 1.0f + lcg_float(&state);
            vel[3 * i + d] = 0.1f * lcg_float(&state);
        }
        mass[i] = 0.5f + lcg_float(&state);
    }
}

void compute_forces(int n, float softening, const float *pos, const float *mass, float *acc) {
    for (int i = 0; i < n; i++) {
        float ax = 0.0f, ay = 0.0f, az = 0.0f;
        for (int j = 0; j < n; j++) {
            float dx = pos[3 * j] - pos[3 * i];
            float dy = pos[3 * j + 1] - pos[3 * i + 1];
            float dz = pos[3 * j + 2] - pos[3 * i + 2];
            float dist2 = dx * dx + dy * dy + dz * dz + softening;
            float inv = 1.0f / sqrtf(dist2);
            float scale = mass[j] * inv * inv * inv;
            ax += dx * scale;
            ay += dy * scale;
            az += dz * scale;
        }
        acc[3 * i] = ax;
        acc[3 * i + 1] = ay;
        acc[3 * i + 2] = az;
    }
}

void integrate(int n, float dt, const float *acc, float *pos, float *vel) {
    for (int i = 0; i < 3 * n; i++) {
        vel[i] += dt * acc[i];
        pos[i] += dt * vel[i];
    }
}

int main(void) {
    float *pos = (float *)malloc(sizeof(float) * 3 * NBODIES);
    float *vel = (float *)malloc(sizeof(float) * 3 * NBODIES);
    float *acc = (float *)malloc(sizeof(float) * 3 * NBODIES);
    float *mass = (float *)malloc(sizeof(float) * NBODIES);
    if (!pos || !vel || !acc || !mass) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    init_bodies(NBODIES, pos, vel, mass, 4242u);
    for (int s = 0; s < STEPS; s++) {
        compute_forces(NBODIES, 0.01f, pos, mass, acc);
        integrate(NBODIES, 1e-5f, acc, pos, vel);
    }
    double kinetic = 0.0, px = 0.0, py = 0.0, pz = 0.0;
    for (int i = 0; i < NBODIES; i++) {
        double v2 = (double)vel[3 * i] * vel[3 * i] + (double)vel[3 * i + 1] * vel[3 * i + 1] +
                    (double)vel[3 * i + 2] * vel[3 * i + 2];
        kinetic += 0.5 * mass[i] * v2;
        px += pos[3 * i];
        py += pos[3 * i + 1];
        pz += pos[3 * i + 2];
    }
    printf("kinetic=%.6e\n", kinetic);
    printf("positions=(%.6e %.6e %.6e)\n", px, py, pz);
    free(pos);
    free(vel);
    free(acc);
    free(mass);
    return 0;
}
