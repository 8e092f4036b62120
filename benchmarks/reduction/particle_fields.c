/*
 * Name: particle_fields
 * Category: reduction
 * Computes: moves an array of particle structs through a few drift steps and, after each,
 *           reduces several struct fields at once: total mass, mass-weighted center,
 *           total charge, kinetic energy and the largest speed.
 * Pattern: reduction (several reductions over fields of an array of structs) after a parallel loop
 * CPU time: 0.53 s (gcc -O3, one core; user time, median of 3 runs, 2026-11-22)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef BENCH_SMALL
#define N 10000
#define STEPS 4
#else
#define N (1 << 22)
#define STEPS 16
#endif

typedef struct {
    float x, y, z;
    float vx, vy, vz;
    float mass, charge;
} Particle;

typedef struct {
    double mass, cx, cy, cz, charge, kinetic;
    float max_speed;
} Totals;

static unsigned int lcg_next(unsigned int *state) {
    *state = *state * 1664525u + 1013904223u;
    return *state;
}

static float lcg_float(unsigned int *state) {
    return (float)(lcg_next(state) >> 8) * (1.0f / 16777216.0f);
}

static void init_particles(Particle *p, int n, unsigned int seed) {
    unsigned int s = seed;
    for (int i = 0; i < n; i++) {
        p[i].x = 1.0f + lcg_float(&s);
        p[i].y = 1.0f + lcg_float(&s);
        p[i].z = 1.0f + lcg_float(&s);
        p[i].vx = 0.5f + lcg_float(&s);
        p[i].vy = 0.5f + lcg_float(&s);
        p[i].vz = 0.5f + lcg_float(&s);
        p[i].mass = 0.1f + lcg_float(&s);
        p[i].charge = 0.2f + lcg_float(&s);
    }
}

void drift(Particle *p, int n, float dt) {
    for (int i = 0; i < n; i++) {
        p[i].x += dt * p[i].vx;
        p[i].y += dt * p[i].vy;
        p[i].z += dt * p[i].vz;
        p[i].vz *= 0.99f;
    }
}

Totals reduce_fields(const Particle *p, int n) {
    Totals t = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0f};
    for (int i = 0; i < n; i++) {
        float speed2 = p[i].vx * p[i].vx + p[i].vy * p[i].vy + p[i].vz * p[i].vz;
        t.mass += p[i].mass;
        t.cx += (double)p[i].mass * p[i].x;
        t.cy += (double)p[i].mass * p[i].y;
        t.cz += (double)p[i].mass * p[i].z;
        t.charge += p[i].charge;
        t.kinetic += 0.5 * p[i].mass * speed2;
        if (sqrtf(speed2) > t.max_speed)
            t.max_speed = sqrtf(speed2);
    }
    t.cx /= t.mass;
    t.cy /= t.mass;
    t.cz /= t.mass;
    return t;
}

int main(void) {
    Particle *p = (Particle *)malloc(sizeof(Particle) * N);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    init_particles(p, N, 2024u);
    for (int step = 0; step < STEPS; step++) {
        drift(p, N, 0.01f);
        Totals t = reduce_fields(p, N);
        if (step % 4 == 3)
            printf("step %d: mass=%.6e center=(%.6e %.6e %.6e) charge=%.6e kinetic=%.6e vmax=%.6e\n",
                   step, t.mass, t.cx, t.cy, t.cz, t.charge, t.kinetic, (double)t.max_speed);
    }
    free(p);
    return 0;
}
