/* int converted implicitly to an enum type, as C allows. */
#include <stdio.h>

enum color { RED, GREEN, BLUE };
typedef enum { SMALL = 1, LARGE = 8 } size_class;

static const char *name(enum color c) {
    switch (c) {
    case RED: return "red";
    case GREEN: return "green";
    default: return "blue";
    }
}

static enum color next(enum color c) { return (c + 1) % 3; } /* return */

int main(void) {
    enum color c = 1; /* initialization */
    size_class s = SMALL;
    int total = 0;
    for (int i = 0; i < 7; i++) {
        c = next(c);
        total += c;
        s = i > 3 ? LARGE : 1; /* assignment from a conditional */
        total += s;
    }
    printf("%s %s %d %d\n", name(c), name(2), total, s); /* argument */
    return 0;
}
