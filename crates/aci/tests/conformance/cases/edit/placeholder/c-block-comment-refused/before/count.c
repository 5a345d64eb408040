#include <stdio.h>

static int count(const char *s) {
    int n = 0;
    while (*s) {
        if (*s == ' ') n++;
        s++;
    }
    return n;
}
