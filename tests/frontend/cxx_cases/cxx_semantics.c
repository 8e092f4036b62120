/* Code C accepts and C++ rejects or reads differently: arithmetic on enums, pointer
   conversions between unrelated types or dropping const, jumps past initializations,
   the size of a character constant, designators inside a compound literal, types and
   enumerators declared inside a struct and used outside it, compound literals used as
   objects (their address taken, or arrays). */
#include <stdio.h>
#include <string.h>

enum day { MON, TUE, WED, THU, FRI };
struct pair { int left; int right; };
struct slot { enum day day; };
struct shape { struct corner { int x, y; } at; enum { ROUND, SHARP } kind; };
typedef struct { struct cell { int v; } first; } grid;

static int weekdays(void) {
    int total = 0;
    for (enum day d = MON; d <= FRI; d++)
        total += d;
    struct slot s = {WED};
    s.day += 1;
    enum day e = TUE;
    int before = e--;
    int after = ++e;
    return total * 100 + s.day * 10 + before + after;
}

static int bytes(const int *values) {
    int *writable = values;                 /* drops const: a warning in C */
    unsigned char *raw = writable;          /* unrelated pointer types */
    const char *text = "xyz";
    unsigned char *utext = text;
    return raw[0] + utext[2] + (int)sizeof('a') + (int)sizeof 'b';
}

static int jumps(int k) {
    if (k < 0)
        goto out;
    int doubled = k * 2;
    k += doubled;
    int steps[3] = {k, k + 1, k + 2};
    struct pair around = {steps[0], steps[2]};
    k = around.left + around.right - steps[1];
out:
    switch (k) {
    case 3:;
        int nine = 9;
        return nine + k;
    case 4:;
        const int limits[2] = {4, 40};
        k = limits[1];
        break;
    default:
        break;
    }
    return k;
}

static int *table = (int[]){7, 8, 9};

static int sum_pair(const struct pair *p) { return p->left + p->right; }

static int sum(const int *v, int n) {
    int s = 0;
    for (int i = 0; i < n; i++)
        s += v[i];
    return s;
}

int main(void) {
    int values[2] = {65, 66};
    int k = 4;
    int *squares = (int[]){1, k, k * k};
    printf("%d %d %d %d\n", sum_pair(&(struct pair){.right = k, .left = 1}), squares[2],
           sum((int[3]){k, k, 1}, 3), table[2]);
    struct pair p = (struct pair){.right = 2, .left = 1};
    printf("%d %d %d %d %d\n", weekdays(), bytes(values), jumps(1), jumps(-4), jumps(-1));
    printf("%d %d %d\n", p.left, p.right, (struct pair){.right = 7}.left);
    struct corner c = {3, 4};
    struct shape sh = {c, SHARP};
    struct cell cl = {5};
    grid g = {cl};
    printf("%d %d %d\n", sh.at.y, sh.kind == SHARP, g.first.v);
    return 0;
}
