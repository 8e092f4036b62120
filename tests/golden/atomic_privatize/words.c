/* Word-length histogram over a char buffer passed at an offset (text + rep with
   NCHARS - rep characters): the extents come from the caller's allocations. */
#include <stdio.h>
#include <stdlib.h>

#define NCHARS 50000
#define MAXLEN 16

static int is_letter(char c) { return c >= 'a' && c <= 'z'; }

void word_histogram(const char *text, long n, long long *hist)
{
    for (int b = 0; b < MAXLEN; b++)
        hist[b] = 0;
    for (long i = 0; i < n; i++) {
        if (!is_letter(text[i]) || (i > 0 && is_letter(text[i - 1])))
            continue;
        long len = 0;
        while (i + len < n && is_letter(text[i + len]))
            len++;
        hist[len < MAXLEN ? len : MAXLEN - 1] += 1;
    }
}

int main(void)
{
    char *text = (char *)malloc(NCHARS);
    long long hist[MAXLEN];
    unsigned int state = 7u;
    for (long i = 0; i < NCHARS; i++) {
        state = state * 1664525u + 1013904223u;
        unsigned int r = state >> 16;
        text[i] = r % 5 == 0 ? ' ' : (char)('a' + r % 26);
    }
    for (int rep = 0; rep < 2; rep++) {
        word_histogram(text + rep, NCHARS - rep, hist);
        printf("%d: %lld %lld %lld\n", rep, hist[1], hist[4], hist[MAXLEN - 1]);
    }
    free(text);
    return 0;
}
