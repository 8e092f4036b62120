"""Small C programs that misbehave in one way each, for the backend's tests."""

HELLO = '#include <stdio.h>\nint main(void) { printf("hello 42 3.25\\n"); return 0; }\n'

EXIT_7 = '#include <stdio.h>\nint main(void) { printf("bye\\n"); return 7; }\n'

HANG = "int main(void) { volatile unsigned long n = 0; for (;;) n++; }\n"

SEGFAULT = """#include <stdio.h>
int main(void) {
    volatile int *p = (int *)0;
    printf("before\\n");
    fflush(stdout);
    return *p;
}
"""

FLOOD = """#include <stdio.h>
#include <string.h>
int main(void) {
    static char line[1024];
    memset(line, 'x', sizeof line - 1);
    for (long i = 0; i < 100L * 1024; i++) puts(line);  /* 100 MB */
    return 0;
}
"""

PRINT_ENV = """#include <stdio.h>
#include <stdlib.h>
int main(void) {
    const char *v = getenv("CUDAIFY_TEST_SECRET");
    printf("secret=%s\\n", v ? v : "(none)");
    return 0;
}
"""

WRITE_FILE = """#include <stdio.h>
int main(void) {
    FILE *f = fopen("scratch.txt", "w");
    if (!f) return 1;
    fputs("data\\n", f);
    fclose(f);
    printf("wrote\\n");
    return 0;
}
"""

SYNTAX_ERROR = """#include <stdio.h>
int main(void) {
    int x = 1
    printf("%d\\n", x);
    return 0;
}
"""
