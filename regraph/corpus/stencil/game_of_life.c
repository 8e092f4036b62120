/* game_of_life: Conway's Game of Life on a torus for a number of generations.
 * Pattern: 2-D integer stencil (8 neighbours, wrap-around) with a time loop and swap. */
#include <stdio.h>
#include <stdlib.h>

#define GW 512
#define GH 512
#define GENERATIONS 60

void life_step(int w, int h, const unsigned char *cur, unsigned char *next) {
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int alive = 0;
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++)
                    if (dx || dy)
                        alive += cur[((y + dy + h) % h) * w + (x + dx + w) % w];
            unsigned char me = cur[y * w + x];
            next[y * w + x] = (unsigned char)(alive == 3 || (me && alive == 2));
        }
}

int main(void) {
    unsigned char *a = malloc(GW * GH), *b = malloc(GW * GH);
    unsigned int s = 7u;
    for (int i = 0; i < GW * GH; i++) {
        s = s * 1103515245u + 12345u;
        a[i] = (unsigned char)(((s >> 16) & 7) < 3);
    }
    for (int g = 0; g < GENERATIONS; g++) {
        life_step(GW, GH, a, b);
        unsigned char *t = a;
        a = b;
        b = t;
    }
    long population = 0, moment = 0;
    for (int i = 0; i < GW * GH; i++) {
        population += a[i];
        moment += a[i] * (i % 1000);
    }
    printf("population %ld moment %ld\n", population, moment);
    free(a); free(b);
    return 0;
}
