// particles_struct: particles (a struct with position and velocity) bouncing in a box
// under gravity with damping, integrated for many steps.
// Pattern: C++ struct array, independent per-particle update inside a time loop.
#include <cstdio>
#include <vector>

struct Particle {
    float x, y, vx, vy;
};

void integrate(std::vector<Particle> &ps, float dt, float gravity, float damping) {
    for (size_t i = 0; i < ps.size(); i++) {
        Particle &p = ps[i];
        p.vy -= gravity * dt;
        p.x += p.vx * dt;
        p.y += p.vy * dt;
        if (p.y < 0.0f) {
            p.y = -p.y;
            p.vy = -p.vy * damping;
        }
        if (p.x < 0.0f || p.x > 10.0f) {
            p.vx = -p.vx;
            p.x = p.x < 0.0f ? -p.x : 20.0f - p.x;
        }
    }
}

int main() {
    std::vector<Particle> ps(100000);
    for (size_t i = 0; i < ps.size(); i++) {
        ps[i].x = static_cast<float>(i % 100) * 0.1f;
        ps[i].y = 1.0f + static_cast<float>(i % 37) * 0.2f;
        ps[i].vx = static_cast<float>(static_cast<int>(i % 11) - 5) * 0.3f;
        ps[i].vy = 0.0f;
    }
    for (int step = 0; step < 200; step++)
        integrate(ps, 0.005f, 9.81f, 0.9f);
    double sx = 0.0, sy = 0.0;
    for (const Particle &p : ps) {
        sx += p.x;
        sy += p.y;
    }
    std::printf("mean position %.6f %.6f\n", sx / ps.size(), sy / ps.size());
    return 0;
}
