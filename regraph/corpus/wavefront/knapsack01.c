/* knapsack01: the 0/1 knapsack optimum by the classic table over items and capacities.
 * Pattern: DP where row i depends on row i-1 only (capacities in a row are parallel,
 * items are sequential). */
#include <stdio.h>
#include <stdlib.h>

#define ITEMS 600
#define CAPACITY 20000

void knapsack_rows(int items, int capacity, const int *weight, const int *value, int *table) {
    for (int c = 0; c <= capacity; c++)
        table[c] = 0;
    for (int i = 1; i <= items; i++) {
        const int *prev = table + (long)(i - 1) * (capacity + 1);
        int *row = table + (long)i * (capacity + 1);
        for (int c = 0; c <= capacity; c++) {
            int skip = prev[c];
            int take = c >= weight[i - 1] ? prev[c - weight[i - 1]] + value[i - 1] : 0;
            row[c] = take > skip ? take : skip;
        }
    }
}

int main(void) {
    int *weight = malloc(sizeof(int) * ITEMS), *value = malloc(sizeof(int) * ITEMS);
    for (int i = 0; i < ITEMS; i++) {
        weight[i] = 5 + (i * 37) % 120;
        value[i] = 10 + (i * 53) % 300;
    }
    int *table = malloc(sizeof(int) * (long)(ITEMS + 1) * (CAPACITY + 1));
    knapsack_rows(ITEMS, CAPACITY, weight, value, table);
    long check = 0;
    for (int c = 0; c <= CAPACITY; c += 1000)
        check += table[(long)ITEMS * (CAPACITY + 1) + c];
    printf("best value %d checksum %ld\n", table[(long)ITEMS * (CAPACITY + 1) + CAPACITY], check);
    free(weight); free(value); free(table);
    return 0;
}
