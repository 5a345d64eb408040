    int n = 0;
    while (*s) {
        if (*s == ' ') n++;
        s++;
    }
    return n;
