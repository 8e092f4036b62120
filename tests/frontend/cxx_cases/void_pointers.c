/* void * converted implicitly to object and function pointers, as C allows. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int id;
    double weight;
} Item;

typedef int (*binary_op)(int, int);

static int add(int a, int b) { return a + b; }

static void *as_void(void *p) { return p; }

static Item *make_items(int n) {
    Item *items = malloc((size_t)n * sizeof *items); /* initialization */
    for (int i = 0; i < n; i++) {
        items[i].id = i;
        items[i].weight = 0.5 * i;
    }
    return items;
}

static double total(const Item *items, int n) {
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += items[i].weight * items[i].id;
    return sum;
}

static long *grow(long *old, int n) {
    return old ? realloc(old, n * sizeof(long)) : calloc(n, sizeof(long)); /* return */
}

int main(void) {
    int n = 6;
    Item *items = make_items(n);
    double *values;
    values = calloc(n, sizeof(double)); /* assignment */
    for (int i = 0; i < n; i++)
        values[i] = items[i].weight;
    const double *view = as_void(values); /* const-qualified target */
    long *counts = grow(NULL, 3);
    counts = grow(counts, 5);
    for (int i = 0; i < 5; i++)
        counts[i] = i * i;
    int (*matrix)[3] = malloc(2 * sizeof *matrix); /* pointer to array */
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            matrix[i][j] = i * 3 + j;
    void *opaque = (void *)add;
    binary_op op = as_void(opaque); /* function pointer */
    char *copy = memcpy(malloc(6), "hello", 6);
    printf("%.2f %.2f %ld %d %d %s\n", total(items, n), view[n - 1], counts[4], matrix[1][2],
           op(2, 3), copy);
    printf("%.2f\n", total(as_void(items), 2)); /* argument */
    free(copy);
    free(matrix);
    free(counts);
    free(values);
    free(items);
    return 0;
}
