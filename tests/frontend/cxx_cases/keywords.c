/* C++ keywords and CUDA names used as ordinary C identifiers. */
#include <stdio.h>

#define TWICE(class) (2 * (class))

struct node { int new; struct node *this; };

static int min(int a, int b) { return a < b ? a : b; } /* collides with CUDA's min */

static int template(int class, int private) { return class * 10 + private; }

int main(void) {
    int new_ = 1; /* the obvious fresh name is taken */
    int new = 41 + new_;
    int delete = 3, typename = 4, bool = 5, this = 6, virtual = 7, operator = 8;
    struct node head = {new, 0};
    struct node tail = {1, &head};
    printf("%d %d %d\n", tail.this->new, template(delete, typename), TWICE(bool));
    printf("%d %d\n", this + virtual + operator, min(new, 2));
    return 0;
}
