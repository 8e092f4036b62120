/* Edit distance with the first column set in the outer loop, before the inner loop:
   the nest is not perfectly nested, so wavefront distributes that statement first. */
#include <stdio.h>
#include <stdlib.h>

#define LA 150
#define LB 120

int edit_distance(const char *a, int la, const char *b, int lb, int *table)
{
    int w = lb + 1;
    for (int j = 0; j <= lb; j++)
        table[j] = j;
    for (int i = 1; i <= la; i++) {
        table[i * w] = i;
        for (int j = 1; j <= lb; j++) {
            int substitute = table[(i - 1) * w + j - 1] + (a[i - 1] != b[j - 1]);
            int remove = table[(i - 1) * w + j] + 1, insert = table[i * w + j - 1] + 1;
            int best = remove < insert ? remove : insert;
            table[i * w + j] = substitute < best ? substitute : best;
        }
    }
    return table[la * w + lb];
}

int main(void)
{
    static char a[LA], b[LB];
    int *table = (int *)malloc(sizeof(int) * (LA + 1) * (LB + 1));
    if (!table)
        return 1;
    unsigned int state = 7u;
    for (int i = 0; i < LA; i++) {
        state = state * 1664525u + 1013904223u;
        a[i] = "ACGT"[(state >> 20) & 3];
    }
    for (int j = 0; j < LB; j++) {
        state = state * 1664525u + 1013904223u;
        b[j] = (state >> 16) % 4 == 0 ? "ACGT"[(state >> 8) & 3] : a[(j * 5 / 4) % LA];
    }
    int d = edit_distance(a, LA, b, LB, table);
    long long checksum = 0;
    for (int k = 0; k < (LA + 1) * (LB + 1); k++)
        checksum += (long long)(k % 17 + 1) * table[k];
    printf("edit_distance=%d checksum=%lld\n", d, checksum);
    free(table);
    return 0;
}
