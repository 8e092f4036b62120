/* Designated initializers g++ rejects: out of order, nested, array designators. */
#include <stdio.h>
#include <stdlib.h>

struct point { int x; int y; };
struct shape { struct point origin; int sides[4]; const char *name; double *data; };
union value { int i; float f; };
enum { SLOT_A = 1, SLOT_B = 3 };

int main(void) {
    struct point p = {.y = 2, .x = 1};
    struct point q = {.x = 5, .y = 6}; /* in order: kept */
    struct shape s = {.name = "square", .origin.y = 7, .sides[2] = 9, .data = malloc(8)};
    int table[6] = {[4] = 40, [1] = 10, 11};
    int slots[5] = {[SLOT_B] = 3, [SLOT_A] = 1};
    struct point line[3] = {[2] = {.y = 9, .x = 8}, [0].y = 4};
    union value v = {.f = 1.5f};
    struct shape t = {.origin = {.y = 3}, .name = "t"};
    s.data[0] = 2.5;
    printf("%d %d %d %d\n", p.x, p.y, q.x, q.y);
    printf("%d %d %d %d %d %s %.1f\n", s.origin.x, s.origin.y, s.sides[0], s.sides[2], s.sides[3],
           s.name, s.data[0]);
    for (int i = 0; i < 6; i++)
        printf("%d ", table[i]);
    for (int i = 0; i < 5; i++)
        printf("%d ", slots[i]);
    printf("\n%d %d %d %d %d %d %.1f %d %s\n", line[0].x, line[0].y, line[1].x, line[2].x,
           line[2].y, t.origin.x, v.f, t.origin.y, t.name);
    free(s.data);
    return 0;
}
