/* C declarations C++ rejects: C11 keyword spellings, K&R definitions, `f()` without a
   prototype, a string filling its char array exactly, tentative definitions. */
#include <stdio.h>
#include <stdlib.h>

_Static_assert(sizeof(int) >= 4, "int is at least 32 bits");

int counter;
int counter = 5;
static _Alignas(16) double aligned[4];
struct tag { char code[3]; int value; };
static struct tag tags[2] = {{"abc", 1}, {.value = 2, .code = "xyz"}};
static char grid[2][4] = {"abcd", "ef"};

int combine();

int combine(a, b, scale)
int a, b;
double scale;
{
    return (int)((a + b) * scale);
}

static _Noreturn void stop(int code) {
    fflush(stdout);
    _Exit(code);
}

int main(void) {
    _Bool flag = 7;
    char code[3] = "abc";
    char tab[2] = "\t\n";
    aligned[1] = 2.5;
    printf("%d %d %c%c%c %d %d\n", flag, combine(2, 3, 1.5), code[0], code[1], code[2], tab[0],
           tab[1]);
    printf("%d %d %.1f %d\n", counter, (int)_Alignof(double), aligned[1],
           (int)((unsigned long)aligned % 16));
    printf("%.3s %d %.3s %d %.4s %s\n", tags[0].code, tags[0].value, tags[1].code,
           tags[1].value, grid[0], grid[1]);
    stop(0);
}
